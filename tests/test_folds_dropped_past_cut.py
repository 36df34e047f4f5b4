"""A member cut off that signs votes past its cut while the others vote it out: every view
of the same events ends the game on the same drops (docs/protocol.md §7.4, §9.2, §13 *a late
lift*).

Variants soak seed 5468 (``tests/test_sim_variants.py``) in its smallest shapes, built by hand
on :class:`Folds`. Seat X, cut off from the others, signs votes past its cut: against seat Y,
against every member still in, a vote it then withdraws. The others vote X out counting its
cut, Y's vote among them signed past what the others then count of Y's feed, and then vote Y
out there; then every vote on X and Y is withdrawn (both heard again). The held events have
two fixed points: X out at its cut, its votes past it deciding nothing, or Y out at the
others' count, X's vote on Y completing that drop and X a member. Before session 22 X's drop
was pinned (folding Y's drop again without Y's events past its cut kept X's vote on Y, past
X's own cut, and the folds alternated: a peer made final past both members as if they were
out while its final fold dropped no one). Since session 22 the fold takes, of the two, the
drop decided first (``folds.impose_cuts``), and a drop that rests on a later withdrawal is
final only once the member's own feed is held up to it, while the member is not voted gone
(``finality.lifted``): here X's drop rests on the withdrawals at the end and X, heard again,
is not voted gone.

Each case is folded as peers may hold it: every event (X's events past its cut came late,
through a peer that held them), none of X's events past its cut (the others, cut off from
it), and a part of them (its vote without its withdrawal). The view holding every event makes
each drop of its tentative fold final, and its final fold drops alike (``finality.settle`` and
``Folds.advance``, as the peer's ``Chains.advance`` does). Every other view either makes the
same drops final or waits for X's feed: it makes nothing final past what it holds of X, and
its final fold drops no member the view holding every event keeps. X is alive (its voters
withdrew), so its events reach every view, which then ends as the first.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from types import SimpleNamespace
from typing import cast

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN, Message
from p2p_nertz.protocol.finality import settle
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules
from tests.proof_helpers import proven

_S, _W = DropReason.SILENT, DropReason.WITHDRAW
_EVER = 1 << 40  # (a stable time past every event: everything is final)


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"past")


class _Table:
    """Events built in order: each member's next seq and a Lamport time that only grows;
    frontiers say what the author holds, no more of a member than its standing vote counts
    (§9.2), and none of seat ``cut_off``'s events past its cut once :meth:`cut_off_now` set
    it (nobody else holds them)."""

    def __init__(self, players: int, cut_off: int) -> None:
        self.players = players
        self.cut_off = cut_off
        self.cut = _EVER
        self.seqs = [1] * players
        self.lamport = 10
        self.voted: list[dict[int, int]] = [{} for _ in range(players)]
        self.events = [
            Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * players)) for s in range(players)
        ]
        self.past: list[Event] = []  # (seat cut_off's events past its cut)
        for s in range(players):
            self.filler(s)

    def cut_off_now(self) -> None:
        """Seat ``cut_off``'s events from here on reach nobody else."""
        self.cut = self.seqs[self.cut_off]

    def _frontier(self, seat: int) -> tuple[int, ...]:
        held = list(self.seqs)
        held[self.cut_off] = min(held[self.cut_off], self.cut)
        held[seat] = 0
        for target, count in self.voted[seat].items():
            held[target] = min(held[target], count)
        return tuple(held)

    def _emit(self, seat: int, target: int, count: int, reason: DropReason) -> Event:
        self.seqs[seat] += 1
        self.lamport += 1
        body = Drop(self._frontier(seat), target, count, reason)
        event = Event(seat, self.seqs[seat], self.lamport, KIND_DROP, body)
        self.events.append(event)
        if seat == self.cut_off and event.seq > self.cut:
            self.past.append(event)
        if reason is _W:
            self.voted[seat].pop(target, None)
        elif target != seat:
            self.voted[seat][target] = count
        return event

    def vote(self, seat: int, target: int, count: int | None = None) -> Event:
        """``seat`` votes ``target`` out for silence, counting ``count`` (all it holds)."""
        held = self._frontier(seat)[target]
        return self._emit(seat, target, held if count is None else count, _S)

    def withdraw(self, seat: int, target: int) -> Event:
        return self._emit(seat, target, 0, _W)

    def filler(self, seat: int) -> Event:
        """An event that only says what its author holds (a withdrawal of no vote)."""
        return self._emit(seat, seat, 0, _W)


def _folds(spec: GameSpec, events: Sequence[Event]) -> Folds:
    folds = Folds(GameState(spec))
    for event in sorted(proven(spec, events), key=lambda e: e.key):
        assert folds.add(event, 0) == []
    return folds


def _times(spec: GameSpec, events: Sequence[Event]) -> list[list[SimpleNamespace]]:
    """Each member's feed of ``events``, as their times alone (all ``settle`` reads)."""
    feeds: list[list[SimpleNamespace]] = [[] for _ in range(spec.seats)]
    for event in sorted(events, key=lambda e: (e.seat, e.seq)):
        feeds[event.seat].append(SimpleNamespace(lamport=event.lamport))
    return feeds


def _capped(spec: GameSpec, events: Sequence[Event]) -> Folds:
    """:func:`_folds`, the final fold given the tentative fold's caps (as Chains.advance
    does)."""
    folds = _folds(spec, events)
    folds.final.vote_caps = dict(folds.tentative.vote_caps)
    return folds


def _drops(spec: GameSpec, events: Sequence[Event]) -> dict[int, int]:
    """The drops of the tentative fold holding ``events``, checked against the final fold
    once every event is final: the members settle excludes, the caps and the final fold's
    drops all come from the one fixed point. No wait on a member's own feed (``settle``
    without ``known``): for the other files' cases, whose views hold every feed."""
    return _final_drops(spec, events, _times(spec, events))


def _final_drops(
    spec: GameSpec, events: Sequence[Event], feeds: list[list[SimpleNamespace]]
) -> dict[int, int]:
    """:func:`_drops`, the feeds held being ``feeds`` (their times alone)."""
    folds = _capped(spec, events)
    tentative = folds.tentative
    final = folds.final
    held = cast(Sequence[Sequence[Message]], feeds)  # (settle reads their times alone)
    excluded, stable = settle(final, tentative, held, lambda _ex, _floor=None: _EVER, 0)
    assert stable == _EVER
    folds.advance(stable, excluded, tentative.gaps)
    assert final.dropped == tentative.dropped, "the final fold drops otherwise"
    assert excluded == tentative.dropped
    return dict(sorted(tentative.dropped.items()))


def _settled(spec: GameSpec, table: _Table, events: Sequence[Event]) -> tuple[Folds, int]:
    """The view holding ``events``, advanced to the stable time ``settle`` reaches: every
    member's feed is known held up to its last event here, or past every time where the view
    holds all of it (the member's beats announce its head); the stable time is the lowest of
    those of the members still in (one feed term per member, no pair terms: every view here
    holds what the others announce)."""
    folds = _capped(spec, events)
    tentative = folds.tentative
    final = folds.final
    feeds = _times(spec, events)
    lengths = [sum(e.seat == s for e in table.events) for s in range(spec.seats)]
    known = [_EVER if len(feed) == lengths[s] else feed[-1].lamport for s, feed in enumerate(feeds)]

    def bound(excluded: Collection[int], _floor: int | None = None) -> int:
        return min((known[q] for q in range(spec.seats) if q not in excluded), default=_EVER)

    held = cast(Sequence[Sequence[Message]], feeds)  # (settle reads their times alone)
    excluded, stable = settle(final, tentative, held, bound, 0, known=known)
    folds.advance(stable, excluded, tentative.gaps)
    return folds, stable


def _ends_alike(spec: GameSpec, table: _Table, views: Sequence[Sequence[Event]]) -> None:
    """The first view (every event) makes its drops final; each other view makes the same
    drops final, or waits for X's feed: it makes nothing final from X's first event it lacks
    on, and its final fold drops no member the first keeps (nor at another cut)."""
    whole, stable = _settled(spec, table, views[0])
    drops = whole.tentative.dropped
    assert stable == _EVER, "the view holding every event waits"
    assert whole.final.dropped == drops, "the final fold drops otherwise"
    x, y, _, earlier = _ROLES[spec.seats]
    assert drops in (_x_out(spec.seats), {y: _y_count(table), **{q: 2 for q in earlier}})
    for events in views[1:]:
        folds, stable = _settled(spec, table, events)
        if stable == _EVER:
            assert folds.tentative.dropped == folds.final.dropped == drops
            continue
        lacking = min(e.lamport for e in table.past if e not in events)
        assert stable < lacking, "a view made final past an event of X it lacks"
        assert x not in folds.final.dropped
        assert folds.final.dropped.items() <= drops.items()


def _views(table: _Table, *, part: int | None = None) -> list[list[Event]]:
    """Every event; none of the cut off member's past its cut; the first ``part`` of them."""
    past = {(e.seat, e.seq) for e in table.past}
    views = [table.events, [e for e in table.events if (e.seat, e.seq) not in past]]
    if part is not None:
        late = {(e.seat, e.seq) for e in table.past[part:]}
        views.append([e for e in table.events if (e.seat, e.seq) not in late])
    return views


#: By table size: seat X (cut off at 2), seat Y, the other voters, and the members out before
#: the shape begins (voted out for silence by X, Y and the other voters: a smaller roster).
_ROLES: dict[int, tuple[int, int, tuple[int, ...], tuple[int, ...]]] = {
    3: (2, 1, (0,), ()),
    4: (3, 1, (0, 2), ()),
    5: (3, 1, (0, 2), (4,)),
}


def _shape(players: int, *, several: bool = False, withdrawn: bool = False) -> _Table:
    """Seat X, cut off at 2, votes seat Y out (and, ``several``, every other member still in;
    and withdraws the one on Y, ``withdrawn``); Y and the other voters vote X out at 2, Y after
    an event the others' later votes do not count; the other voters vote Y out counting 2;
    then every vote on X and Y is withdrawn (both heard again: standing, those votes would cap
    X's and Y's votes past 2, and the folds would settle without them)."""
    x, y, voters, earlier = _ROLES[players]
    table = _Table(players, cut_off=x)
    for seat in earlier:
        for voter in (x, y, *voters):
            table.vote(voter, seat)
    table.cut_off_now()
    table.vote(x, y)  # (past X's cut)
    if several:
        for seat in voters:
            table.vote(x, seat)
    if withdrawn:
        table.withdraw(x, y)
    table.filler(y)  # (an event of Y's the others' votes on it do not count)
    count = table.seqs[y]
    for voter in (*voters[:1], y, *voters[1:]):
        table.vote(voter, x)
    for voter in voters:
        table.vote(voter, y, count)
    for voter in (y, *voters):
        table.withdraw(voter, x)
    for voter in voters:
        table.withdraw(voter, y)
    return table


def _x_out(players: int) -> dict[int, int]:
    """X out at its cut, the members out before at theirs, Y in."""
    x, _, _, earlier = _ROLES[players]
    cut = 2 + len(earlier)
    return {x: cut, **{seat: 2 for seat in earlier}}


def _y_count(table: _Table) -> int:
    """The count the other voters' votes on Y name: Y's cut in the other fixed point."""
    _, y, voters, _ = _ROLES[table.players]
    return next(
        e.body.last_seq
        for e in table.events
        if e.seat == voters[0] and isinstance(e.body, Drop) and e.body.seat == y
    )


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_a_cut_off_members_vote_past_its_cut_every_view_ends_alike(
    players: int,
) -> None:
    """X votes Y out past its cut: the view holding that vote and the view without it end on
    the same drops (the second waits for X's feed). (Before session 21, at 4 and 5 players,
    the view holding X's vote dropped Y in its tentative fold and no one in its final fold:
    the folds alternated.)"""
    spec = _spec(players)
    table = _shape(players)
    _ends_alike(spec, table, _views(table))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_a_cut_off_members_withdrawn_vote_past_its_cut_every_view_ends_alike(
    players: int,
) -> None:
    """X votes Y out past its cut and withdraws the vote: a peer holding both, one holding
    the vote alone (the withdrawal still on its way), and one holding neither end on the same
    drops."""
    spec = _spec(players)
    table = _shape(players, withdrawn=True)
    _ends_alike(spec, table, _views(table, part=1))


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("withdrawn", [False, True])
def test_folds_a_cut_off_members_votes_on_several_members_every_view_ends_alike(
    players: int, withdrawn: bool
) -> None:
    """X votes out every member still in past its cut (and withdraws the vote on Y): each
    part of those votes a peer may hold ends on the same drops as all of them."""
    spec = _spec(players)
    table = _shape(players, several=True, withdrawn=withdrawn)
    for part in range(1, len(table.past)):
        _ends_alike(spec, table, _views(table, part=part))
