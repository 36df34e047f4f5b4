"""A member heard that owes what it alone can give is told before the vote (session 39).

A member that keeps beating while the table waits for its phase event (its nonce, its
``ready``, its secret) or for its own events it announced is voted out *withheld* after
``phase_timeout`` (docs/protocol.md §9.2); until session 39 the table said nothing of it
before that vote: `protocol/unmet.py`'s :class:`Owing`, read by the peer's
:meth:`~p2p_nertz.protocol.peer.Peer.owing` from ``Membership``'s stall records and the
phase's wait, now is, once it has waited :data:`UNMET_AFTER` without progress, by the node's
teller (:class:`Owed`, then its end) and in the table's rows (docs/protocol.md §9.5, *Why a
table waits*). At three players the two honest members vote it out (told ``dropped``); at two
nobody can be dropped, and the row stays past the phase timer, on the page and the 80×24
screen. The teller tells one wait once however much of it is given meanwhile, and
``nertz node --json`` prints the notices (and those of a drop decided, not final) with the
fields docs/protocol.md §9.5 names. An honest game with loss tells nothing owing
(``tests/test_ui_table_waits.py``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from cli.lobby_cmd import _notice_printer, _Out
from cli.node_cmd import _node_printer, notice_line
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.finality import KNOWN
from p2p_nertz.protocol.peer import Peer, PeerConfig
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.protocol.unmet import (
    UNMET_AFTER,
    DropEnd,
    DropPending,
    DropWaits,
    FeedHeld,
    HeldBack,
    HeldEnd,
    Owed,
    OwedEnd,
    Owing,
    Unmet,
    UnmetEnd,
    UnmetTeller,
    VoteShort,
)
from p2p_nertz.rules import Rules
from p2p_nertz.ui.render import render
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import TableView, drop_words, owed_notice_words, owed_words
from p2p_nertz.web.model import view_json
from tests.peer_helpers import PeerNetwork
from tests.test_peer_leave import _NoReady, _NoSecret, _Withholder
from tests.test_peer_liars import _withhold
from tests.test_spectator import SPEC

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)

#: A phase timer well past the teller's while: the row is told, and for a while, before the vote.
TIMEOUT = 20.0


class _Watch:
    """The honest ``seats`` of ``net`` read as the node and the table read them, every tenth
    of a second of simulated time."""

    def __init__(self, net: PeerNetwork, seats: list[int]) -> None:
        self.net, self.seats = net, seats
        self.told: list[tuple[float, int, Owed]] = []
        self.views: dict[int, TableView] = {}
        self.rows: dict[int, set[str]] = {s: set() for s in seats}
        self._tellers = {s: UnmetTeller() for s in seats}
        names = tuple(m.name for m in net.spec.members)
        self._trackers = {s: Tracker(names, s) for s in seats}
        self._last = -1.0

    def __call__(self, until: bool) -> bool:
        now = self.net.now
        if now >= self._last + 0.1 or until:  # (and at the end)
            self._last = now
            for s in self.seats:
                peer = self.net.peers[s]
                self.told += [
                    (now, s, n) for n in self._tellers[s].tell(peer, now) if isinstance(n, Owed)
                ]
                view = self._trackers[s].view(peer, now=now)
                self.views[s] = view
                self.rows[s] |= set(view.waits)
        return until

    def of(self, seat: int) -> list[tuple[float, Owed]]:
        return [(t, n) for t, s, n in self.told if s == seat]


def _game(factory: type[Peer], players: int, seed: int) -> PeerNetwork:
    return PeerNetwork(
        players,
        seed=seed,
        rules=Rules(target=None, rounds=1),
        config=PeerConfig(phase_timeout=TIMEOUT),
        factories={players - 1: factory},
    )


#: the withholders of a phase event at three players, each with a seed it is told in
#: (tests/test_spectator_waits.py watches the same games)
WITHHOLDERS = [
    pytest.param(_Withholder, 1, Phase.NONCE, "nonce", id="nonce"),
    pytest.param(_NoReady, 2, Phase.PLAY, "ready", id="ready"),
    pytest.param(_NoSecret, 4, Phase.REVEAL, "secret", id="secret"),
]


@pytest.mark.parametrize(("factory", "seed", "phase", "noun"), WITHHOLDERS)
def test_owing_a_phase_event_is_told_before_the_vote_and_ended_dropped(
    factory: type[Peer], seed: int, phase: Phase, noun: str
) -> None:
    net = _game(factory, 3, seed)
    watch = _Watch(net, [0, 1])
    net.run(lambda n: watch(all(p.final.phase is Phase.OVER for p in n.peers[:2])), within=400)
    for seat in (0, 1):
        final = net.peers[seat].final
        assert 2 in final.dropped
        (told, told_at), (ended, _) = [(n, t) for t, n in watch.of(seat)]
        assert told.ended is None and told.owing.seat == 2
        event = told.owing.event
        assert event is not None and event.phase is phase and event.seat == 2
        # Told once it waited the while, before the vote (the phase's timer).
        assert told_at - told.owing.since >= UNMET_AFTER
        assert told_at < told.owing.since + TIMEOUT
        # (Dropped; or the game over at once, its one round scored without the member.)
        assert ended.ended in (OwedEnd.DROPPED, OwedEnd.OVER) and ended.owing == told.owing
        name = net.spec.members[2].name
        (row,) = owed_words([told.owing], lambda s: net.spec.members[s].name)
        assert row == f"the table waits on {name}, heard but not sending its {noun} of round 1"
        assert row in watch.rows[seat]  # (the table's row, as the node's line)
        assert watch.views[seat].waits == ()  # (dropped: nothing waits on it)


def test_owing_its_ready_at_two_players_stays_told_past_the_phase_timer() -> None:
    # Nobody can be dropped from two: past the phase timer the abandon is on offer, and the
    # row still says why the table waits.
    net = _game(_NoReady, 2, 2)
    watch = _Watch(net, [0])
    net.run(lambda n: watch(n.now > 2 * TIMEOUT and n.peers[0].final.phase is Phase.PLAY))
    ((told_at, told),) = watch.of(0)
    assert told.ended is None and told.owing.event is not None
    assert told.owing.event.phase is Phase.PLAY
    assert told.owing.since + UNMET_AFTER <= told_at < told.owing.since + TIMEOUT
    (row,) = owed_words([told.owing], lambda s: net.spec.members[s].name)
    view = watch.views[0]
    assert row in view.waits
    assert net.peers[0].abandon_answer(net.now).why is None  # (the abandon on offer)
    # The page lists it under the announcements; an 80×24 terminal shows it or its summary.
    assert view_json(view)["messages"][-len(view.waits) :] == list(view.waits)
    text = render(view, 80, 24).text()
    assert row in text or view.waits_line in text


@pytest.mark.parametrize(("players", "seed"), [(3, 6), (4, 7)])
def test_owing_its_own_events_announced_is_told_and_its_end(players: int, seed: int) -> None:
    # Its beats announce an event it never sends: finality waits on its feed (a stall record),
    # told; then its later events (its vote) come and wait on the one withheld: told held back
    # from then on (one row a member), the owing ended ``held``.
    net, liar, withheld = _withhold(players, seed)
    honest = [s for s in range(players) if s != liar.seat]
    watch = _Watch(net, honest)
    net.run(lambda n: watch(all(liar.seat in n.peers[s].final.dropped for s in honest)))
    for seat in honest:
        (told, ended) = [n for _, n in watch.of(seat)]
        assert told.ended is None and told.owing.seat == liar.seat
        assert told.owing.events == (withheld.seq, withheld.seq)
        assert ended.ended is OwedEnd.HELD and ended.owing == told.owing


def test_owing_told_once_while_a_part_is_given_and_ended_by_why() -> None:
    # The teller alone (a member's wait as the peer gives it): a wait of one kind since one
    # time is told once, however much of it is given meanwhile; given whole (a new record, a
    # new time), its end; silent, its end says so.
    state = GameState(SPEC)
    teller = UnmetTeller()
    first = Owing(1, 0.0, cover=((0, 5), (1, 7)))

    def told(
        now: float, *owing: Owing, silent: frozenset[int] = frozenset(), given: bool = False
    ) -> list[Any]:
        notices = teller.check(state, now, (), owing, silent, gave=lambda o: given)
        return [(n.owing, n.ended) for n in notices]

    assert told(UNMET_AFTER - 0.1, first) == []  # (not yet the while)
    assert told(UNMET_AFTER, first) == [(first, None)]
    part = Owing(1, 0.0, cover=((1, 7),))  # (its word on feed 0 came: the same wait)
    assert told(UNMET_AFTER + 1, part) == []
    renewed = Owing(1, UNMET_AFTER + 2, cover=((0, 9),))  # (all given: a new wait begins)
    assert told(UNMET_AFTER + 2, renewed, given=True) == [(first, OwedEnd.GIVEN)]
    assert told(2 * UNMET_AFTER + 2, renewed) == [(renewed, None)]
    assert told(2 * UNMET_AFTER + 3, silent=frozenset({1})) == [(renewed, OwedEnd.SILENT)]


def test_owing_a_phase_event_whose_wait_is_timed_anew_is_not_told_given() -> None:
    # The wait for a member's phase event runs since every member was last heard at once
    # (Membership.blame_from): another member's silence times it anew, the event still owed.
    # The teller ended the wait told by its new time alone, and its why was 'given' ("Cy sent
    # what the table waited for"): tests/test_node_owing.py's withheld ready, 1 run in 10 at
    # a load of 32-56 (session 43), Cy having sent nothing. The teller alone, here, told
    # whether Cy gave it as a peer's TableWaits.gave reads it: the held fold's ready.
    state = GameState(SPEC)
    teller = UnmetTeller()
    ready = Awaited.of(state, 1)  # (its join, here: the phase's wait of a fold at hand)
    first = Owing(1, 0.0, event=ready)

    def ended(now: float, *owing: Owing, silent: frozenset[int] = frozenset()) -> list[Any]:
        gave = lambda o: o.event is not None and o.event.held_in(state)  # noqa: E731
        told = teller.check(state, now, (), owing, silent, gave=gave)
        return [(n.ended, n.others) for n in told]

    assert ended(UNMET_AFTER, first) == [(None, ())]
    anew = Owing(1, UNMET_AFTER + 2, event=ready)  # (a third member was silent a while)
    assert ended(UNMET_AFTER + 2, anew) == [(OwedEnd.ANEW, ())]
    assert ended(2 * UNMET_AFTER + 2, anew) == [(None, ())]  # (told anew, the while past)
    # Another member silent now: the wait is not timed (no owing found), and its end names it.
    assert ended(2 * UNMET_AFTER + 3, silent=frozenset({2})) == [(OwedEnd.ANEW, (2,))]


def _owing_ends(
    told: Owing,
    state: GameState,
    *,
    given: bool,
    silent: frozenset[int] = frozenset(),
    held: tuple[HeldBack, ...] = (),
) -> tuple[OwedEnd | None, tuple[int, ...]]:
    """The end the teller tells of ``told`` once no owing is found (``given``: whether the
    member gave all it said)."""
    teller = UnmetTeller()
    assert [n.ended for n in teller.check(state, UNMET_AFTER, (), (told,))] == [None]
    (end,) = teller.check(state, UNMET_AFTER + 1, held, (), silent, gave=lambda o: given)
    return end.ended, end.others


def test_owing_each_end_is_told_only_when_true() -> None:
    # Every why a wait can end with, each in the one state where it is true (session 43):
    # given only when the member gave all it was told owing (its own events), whatever else
    # made the wait stop being timed.
    state = GameState(SPEC)
    ready = Owing(1, 0.0, event=Awaited.of(state, 1))  # (its join: the fold's phase)
    stall = Owing(1, 0.0, events=(4, 6), cover=((0, 5),))
    for told in (ready, stall):
        assert _owing_ends(told, state, given=True) == (OwedEnd.GIVEN, ())
        assert _owing_ends(told, state, given=False) == (OwedEnd.ANEW, ())
        others = frozenset({2})  # (another member silent: the waits count once it is heard)
        assert _owing_ends(told, state, given=False, silent=others) == (OwedEnd.ANEW, (2,))
        assert _owing_ends(told, state, given=True, silent=others) == (OwedEnd.GIVEN, ())
        silent = frozenset({1, 2})
        assert _owing_ends(told, state, given=False, silent=silent) == (OwedEnd.SILENT, ())
        held = (HeldBack(1, 3, ((1, 4, 6),)),)
        assert _owing_ends(told, state, given=False, held=held) == (OwedEnd.HELD, ())
        dropped = _dropped(state, 1)
        assert _owing_ends(told, dropped, given=False) == (OwedEnd.DROPPED, ())
    # A phase event of a phase the fold is not in (left behind), not given: passed.
    other = Owing(1, 0.0, event=Awaited(1, Phase.PLAY, b"", 1))
    assert _owing_ends(other, state, given=False) == (OwedEnd.PASSED, ())
    assert _owing_ends(other, state, given=True) == (OwedEnd.GIVEN, ())


def _dropped(state: GameState, seat: int) -> GameState:
    """``state`` with member ``seat`` dropped (as a fold that took its drop would be)."""
    copy = state.copy()
    copy.dropped = {**copy.dropped, seat: 0}
    return copy


@pytest.mark.parametrize("silence", [7.0, 40.0], ids=["past-suspicion", "past-drop"])
def test_owing_a_ready_timed_anew_by_a_silence_is_told_so_at_three(silence: float) -> None:
    # Cy withholds its ready; Bob falls silent for a while, then is heard again: Ann's wait on
    # Cy is not timed while Bob is silent (the waits count once every member is heard), and
    # starts anew after. Ann is told the wait timed anew, naming Bob, never that Cy sent it;
    # then Cy owing it anew, and its end, never 'given' either: the round ended in play
    # without it (Ann's or Bob's Nerts: 'passed'), or Cy dropped, or the game over.
    net = _game(_NoReady, 3, 2)
    watch = _Watch(net, [0])
    net.run(lambda n: watch(bool(watch.of(0))), within=200)
    net.silence(1)
    back = net.now + silence
    net.run(lambda n: watch(n.now >= back), within=200)
    net.silenced.discard(1)
    net.run(lambda n: watch(n.peers[0].final.phase is Phase.OVER), within=400)
    ends = [n.ended for _, n in watch.of(0)]
    assert OwedEnd.GIVEN not in ends, ends
    assert ends[-1] in (OwedEnd.PASSED, OwedEnd.DROPPED, OwedEnd.OVER), ends
    told, anew = watch.of(0)[0][1], watch.of(0)[1][1]
    assert told.ended is None and told.owing.seat == 2
    assert (anew.ended, anew.others) == (OwedEnd.ANEW, (1,)), anew
    assert anew.owing == told.owing
    name = lambda s: net.spec.members[s].name  # noqa: E731
    (words,) = owed_notice_words(anew, name)
    assert words == f"the table waits anew on {name(2)}, who still owes it: {name(1)} went silent"


def test_owing_and_a_drop_waiting_as_the_node_prints_them_in_json() -> None:
    # `nertz node --json`'s fields (docs/protocol.md §9.5), machine-read: the same notices as
    # the table's rows, in the same words.
    names = ["Ann", "Bob", "Cy"]
    owing = Owing(2, 0.0, (7, 9), ((0, 12),), ((1, 4, 5),), Awaited(1, Phase.PLAY, b"", 2))
    event, text, fields = notice_line(Owed(owing), names)
    assert event == "owing" and fields["words"] == text
    assert text == owed_words([owing], names.__getitem__)[0]
    assert (fields["seat"], fields["name"], fields["events"]) == (2, "Cy", {"first": 7, "last": 9})
    assert fields["cover"] == [{"seat": 0, "name": "Ann", "seq": 12}]
    assert fields["relays"] == [{"seat": 1, "name": "Bob", "first": 4, "last": 5}]
    assert fields["phase_event"] == {"round": 1, "phase": "play"}
    event, text, fields = notice_line(Owed(owing, OwedEnd.HELD), names)
    assert (event, fields["why"], fields["silent"]) == ("owing_over", "held", [])
    event, text, fields = notice_line(Owed(owing, OwedEnd.ANEW, (1,)), names)
    assert (event, fields["why"], fields["silent"]) == ("owing_over", "anew", [
        {"seat": 1, "name": "Bob"}
    ])  # fmt: skip
    assert text == "the table waits anew on Cy, who still owes it: Bob went silent"
    pending = DropPending(0, (1, 2))
    event, text, fields = notice_line(DropWaits(pending), names)
    assert event == "drop_waits" and text == drop_words([pending], names.__getitem__)[0]
    assert fields["on"] == {"kind": "word", "seat": 2, "name": "Cy", "by": 1, "by_name": "Bob"}
    event, _, fields = notice_line(DropWaits(DropPending(0, (KNOWN, 2)), DropEnd.FINAL), names)
    assert (event, fields["why"], fields["on"]["kind"]) == ("drop_waits_over", "final", "events")
    assert notice_line(DropWaits(DropPending(0, None)), names)[2]["on"] is None


_EVERY_NOTICE = [
    VoteShort(Unmet(1, (DropReason.SILENT,), (0,), 2, 3)),
    VoteShort(Unmet(1, (DropReason.SILENT,), (0,), 2, 3), UnmetEnd.DROPPED),
    FeedHeld(HeldBack(2, 9, ((0, 10, 12),))),
    FeedHeld(HeldBack(2, 9, ((0, 10, 12),)), HeldEnd.CAME),
    Owed(Owing(2, 0.0, (7, 9), ((0, 12),), ((1, 4, 5),), Awaited(1, Phase.PLAY, b"", 2))),
    Owed(Owing(2, 0.0, cover=((0, 5),)), OwedEnd.GIVEN),
    Owed(Owing(2, 0.0, event=Awaited(1, Phase.PLAY, b"", 2)), OwedEnd.ANEW, (1,)),
    DropWaits(DropPending(0, (1, 2))),
    DropWaits(DropPending(0, None), DropEnd.UNDONE),
]


@pytest.mark.parametrize("notice", _EVERY_NOTICE, ids=lambda n: type(n).__name__)
def test_every_notice_is_one_json_line_named_by_its_event(
    notice: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # The printers of `node` and of `host`/`join`/`bot`/`resume` put a notice's fields beside
    # its "event": a field of that name overwrote the event in `node --json` and raised in
    # the others' (`owing`'s phase event, session 39's rehearsal: a real LAN node ended with a
    # traceback). Every notice, both printers: one line, its event name kept.
    names = ["Ann", "Bob", "Cy"]
    event, text, fields = notice_line(notice, names)
    assert "event" not in fields
    _notice_printer(_Out(json_lines=True), names)(notice)
    _node_printer(argparse.Namespace(json=True, progress=False), names)(notice)
    _notice_printer(_Out(json_lines=False), names)(notice)
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["event"] for line in lines[:2]] == [event, event]
    assert lines[2] == text
