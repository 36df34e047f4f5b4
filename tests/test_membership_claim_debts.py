"""A member owes the events of any feed it announced holding past ours (docs/protocol.md §9.2,
*a claim on a silent member's feed*; liars seed 3185).

Member R's beat announces holding more of member Q's feed than this peer holds. §7.1 then caps
Q's term at its last event held here (R may hold an event Q timed low and gave R alone). An
honest R relays what it holds and answers a want within a round trip; a lying one leaves the
cap standing for as long as Q signs nothing, with no timer running. So R owes those events,
tracked as its own head is (:meth:`Membership.stalls`' record, :meth:`Membership.relieved`),
and is voted out *withheld* after ``phase_timeout`` if they never come: the events held one
scan before the timer, no vote; one scan after, a vote, withdrawn once they come. A feed
proven to fork or out of the game is owed by nobody (an honest R may hold the other version).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest

from p2p_nertz.protocol.bodies import Beat
from p2p_nertz.protocol.debts import DEBT_NOTE, Debts, claimed_past, owed_relays, unsigned_claims
from p2p_nertz.protocol.effects import Note, Send
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.state import GameState
from tests.test_folds_dropped_past_cut import _spec

_TIMERS = SilenceTimers(suspect_after=1.0, drop_after=5.0, phase_timeout=2.0, max_watch=64)


class _View:
    """Seat 0's view of an ``n``-player game, every feed 5 events long and covered by all;
    seat 1 announces holding ``claim`` of each feed."""

    def __init__(self, n: int, claim: tuple[int, ...]) -> None:
        spec = _spec(n)
        self.final = GameState(spec)
        self.tentative = GameState(spec)
        self.membership = Membership(0, n, 0.0, _TIMERS)
        self.feeds: list[list[Message | None]] = [[None] * 5 for _ in range(n)]
        claimed = [(5,) * n for _ in range(n)]
        claimed[1] = claim
        self.finality = cast(
            Finality,
            SimpleNamespace(announced=[(0, 0)] * n, claimed=claimed, held_by=[(5,) * n] * n),
        )
        self.folds = cast(Folds, SimpleNamespace(final=self.final, tentative=self.tentative))

    def grow(self, q: int, count: int) -> None:
        """This peer now holds ``count`` of ``q``'s feed (and every member covers it)."""
        self.feeds[q] += [None] * (count - len(self.feeds[q]))
        n = len(self.feeds)
        lengths = tuple(len(f) for f in self.feeds)
        self.finality.held_by = [lengths] * n
        self.finality.claimed = [tuple(map(max, c, lengths)) for c in self.finality.claimed]

    def scan(self, now: float) -> list[int]:
        """One stall scan at ``now`` (every member heard then); the votes it casts."""
        membership = self.membership
        for q in range(len(self.feeds)):
            membership.heard_from(q, now)
        feeds = cast(Sequence[Sequence[Message]], self.feeds)
        voted = []
        for q in membership.stalls(now, self.final, lambda: self.tentative, feeds, self.finality):
            membership.vote(q, len(self.feeds[q]), out=False)
            membership.proven_seats.add(q)  # (as Author.liveness does)
            voted.append(q)
        return voted

    def relieved(self) -> list[int]:
        feeds = cast(Sequence[Sequence[Message]], self.feeds)
        return self.membership.relieved(self.final, self.folds, feeds, self.finality)


# (4 players: seat 1 claims seat 2's feed past ours; 2 players: seat 1 claims our own, as
# when we were restored from an old copy of our log and it holds our later events.)
_CASES = [(4, (5, 5, 7, 5), 2), (2, (7, 5), 0)]
_IDS = ["4-players-a-third-feed", "2-players-our-own-feed"]


@pytest.mark.parametrize(("n", "claim", "q"), _CASES, ids=_IDS)
def test_claim_the_events_given_before_the_timer_cast_no_vote(
    n: int, claim: tuple[int, ...], q: int
) -> None:
    view = _View(n, claim)
    assert view.scan(0.0) == []
    assert view.membership.stall[1][3][q] == 7  # (what it owes of that feed)
    view.grow(q, 7)  # an honest member's answer, late but inside the timer
    assert view.scan(1.9) == []
    assert view.scan(2.5) == []
    assert view.scan(5.0) == []
    assert view.membership.voted == {}


@pytest.mark.parametrize(("n", "claim", "q"), _CASES, ids=_IDS)
def test_claim_the_events_given_after_the_timer_a_vote_then_its_withdrawal(
    n: int, claim: tuple[int, ...], q: int
) -> None:
    view = _View(n, claim)
    assert view.scan(0.0) == []
    assert view.scan(1.9) == []
    assert view.scan(2.1) == [1]
    assert view.relieved() == []  # (nothing given yet)
    view.grow(q, 6)
    assert view.relieved() == []  # (not all it owed)
    view.grow(q, 7)
    assert view.relieved() == [1]  # late, not withheld: withdrawn
    assert view.membership.voted == {}


def test_claim_never_given_is_a_vote_withheld_that_stands() -> None:
    view = _View(4, (5, 5, 7, 5))
    view.scan(0.0)
    assert view.scan(2.5) == [1]
    assert view.relieved() == []
    assert view.scan(10.0) == []  # (one vote a member)
    assert view.membership.voted == {1: 5}


@pytest.mark.parametrize("how", ["forked", "dropped"])
def test_claim_on_a_feed_forked_or_out_of_the_game_is_owed_by_nobody(how: str) -> None:
    view = _View(4, (5, 5, 7, 5))
    if how == "forked":
        view.membership.proof.forked_at[2] = 3  # (an honest member may hold the other version)
    else:
        view.final.dropped = {2: 5}
    assert view.scan(0.0) == []
    assert 1 not in view.membership.stall
    assert view.scan(2.5) == []


def test_claim_excused_after_the_vote_withdraws_it() -> None:
    view = _View(4, (5, 5, 7, 5))
    view.scan(0.0)
    assert view.scan(2.5) == [1]
    view.membership.proof.forked_at[2] = 6  # the claimed events were the fork's other version
    assert view.relieved() == [1]


def _beat(held: tuple[int, ...], ids: tuple[bytes, ...]) -> Beat:
    return Beat(held[1], ids[1], held, ids)


def _message(wire: bytes) -> Message:
    return cast(Message, SimpleNamespace(wire=wire))


def test_claim_rule_reads_counts_and_ids_alike_for_the_peer_and_the_audit() -> None:
    ids = (b"a" * 8, b"b" * 8, b"c" * 8)
    beat = _beat((5, 5, 7), ids)
    assert claimed_past(1, beat, [5, 5, 5]) == [(2, 7)]
    assert claimed_past(1, beat, [5, 5, 5], excused={2}) == []
    assert claimed_past(1, beat, [5, 5, 7]) == []
    assert owed_relays(1, beat.held, [5, 5, 5], ()) == (0, 0, 7)
    assert owed_relays(1, beat.held, [5, 5, 5], {2}) == (0, 0, 0)

    def prefix(q: int, h: int) -> bytes:
        return ids[q] if (q, h) != (2, 7) else b"x" * 16

    assert unsigned_claims(1, beat, [5, 5, 5], prefix) == [(2, 7)]  # past what any log holds
    assert unsigned_claims(1, beat, [5, 5, 9], prefix) == [(2, 7)]  # another event at 7
    assert unsigned_claims(1, beat, [5, 5, 9], lambda q, h: ids[q]) == []  # the event signed
    assert unsigned_claims(1, beat, [5, 5, 9], prefix, excused={2}) == []


def test_claim_beat_is_relayed_with_the_vote_and_noted_once() -> None:
    out: set[int] = set()
    debts = Debts(lambda: out)
    beat = _beat((5, 5, 7), (b"a" * 8, b"b" * 8, b"c" * 8))
    lying = _message(b"lying beat")
    feeds = [[None] * 5 for _ in range(3)]
    assert debts.note_claims(1, lying, beat, feeds) == [(2, 7)]
    assert debts.note_claims(1, _message(b"again"), beat, feeds) == []  # (not past the kept)
    votes = {1: (0.0, 0, (0, 0, 0), (0, 0, 7))}
    held = cast(Sequence[Sequence[Message]], feeds)
    assert debts.relayed(votes, held) == [Note(DEBT_NOTE, b"lying beat"), Send(b"lying beat")]
    assert debts.relayed(votes, held) == [Send(b"lying beat")]  # (at each scan; noted once)
    feeds[2] += [None, None]  # the events came: nothing owed, nothing relayed
    assert debts.relayed(votes, held) == []
    out.add(2)
    assert debts.note_claims(1, lying, _beat((5, 5, 9), beat.held_ids), feeds) == []
