"""A spectator says why the table waits as a player does (session 40; docs/protocol.md §9.5).

Until session 40 ``nertz watch`` told the members held back and the votes short, but neither a
member heard that owes its phase event (its nonce, ``ready``, secret) nor a drop the held votes
decide that is not final: the spectator kept no clock of its members. It now times them on the
caller's clock (:meth:`Spectator.feed`'s ``now``: when each member was last heard, when the
final phase began, since when every member still in was heard) and answers with the players'
own rules (:func:`~p2p_nertz.protocol.table_waits.events_owed`,
:func:`~p2p_nertz.protocol.finality.drops_waiting`). Each test feeds a spectator what a
member's node pushes to it (every event it logs, every beat it sends to all) at the time it
is pushed, and reads it with the teller and the table as ``nertz watch`` does, beside the
players' own answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import pytest

from p2p_nertz.protocol.bodies import Join
from p2p_nertz.protocol.effects import Record
from p2p_nertz.protocol.finality import KNOWN
from p2p_nertz.protocol.peer import Effect, Peer, Send
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.protocol.state import Phase
from p2p_nertz.protocol.unmet import (
    UNMET_AFTER,
    DropEnd,
    DropPending,
    DropWaits,
    Owed,
    OwedEnd,
    UnmetTeller,
)
from p2p_nertz.sim.network import Crash, Faults, SimResult, Simulation
from p2p_nertz.ui.render import render
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import drop_words, owed_words
from tests.peer_helpers import PeerNetwork
from tests.test_peer_leave import _NoReady
from tests.test_spectator import SPEC, signed
from tests.test_ui_table_owing import TIMEOUT, WITHHOLDERS, _game
from tests.test_ui_table_waits import _frozen, _plain

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)

Notices = list[tuple[float, Owed | DropWaits]]


def _pushed(effects: Iterable[Effect]) -> list[bytes]:
    """What a member's node pushes to its watchers of ``effects``: every event it logs, and
    every message it sends to all (its beats and acks, its events)."""
    return [
        e.data for e in effects if isinstance(e, Record) or (isinstance(e, Send) and e.to is None)
    ]


class _Watcher:
    """A spectator fed at the time of each push, read by ``nertz watch``'s teller and table a
    tenth of a second apart at least."""

    def __init__(self, spec: object) -> None:
        assert spec is not None
        self.spectator = Spectator(spec)  # type: ignore[arg-type]
        self.teller = UnmetTeller()
        self.tracker = Tracker(tuple(m.name for m in self.spectator.spec.members), None)
        self.told: Notices = []
        self.rows: set[str] = set()
        self.waits: tuple[str, ...] = ()
        self._last = -1.0

    def feed(self, wires: Iterable[bytes], now: float) -> None:
        for wire in wires:
            self.spectator.feed(wire, now)
        self.read(now)

    def read(self, now: float, *, force: bool = False) -> None:
        if now < self._last + 0.1 and not force:
            return
        self._last = now
        for notice in self.teller.tell(self.spectator, now):
            if isinstance(notice, Owed | DropWaits):
                self.told.append((now, notice))
        view = self.tracker.view(self.spectator, now=now)
        self.waits = view.waits
        self.rows |= set(view.waits)
        text = render(view, 80, 24).text()
        assert all(row in text for row in view.waits) or view.waits_line in text


def _watched(net: PeerNetwork) -> _Watcher:
    """A watcher of every member of ``net``, fed as their nodes push."""
    watcher = _Watcher(net.spec)
    handle: Callable[[int, list[Effect]], None] = net._handle

    def handled(seat: int, effects: list[Effect]) -> None:
        handle(seat, effects)
        watcher.feed(_pushed(effects), net.now)

    net._handle = handled  # type: ignore[method-assign]
    return watcher


def _watched_run(sim: Simulation) -> tuple[_Watcher, SimResult]:
    """``sim`` played to its end, and a watcher fed what its members pushed, when they did."""
    sim.config = dataclasses.replace(sim.config, record_effects=True)
    result = sim.run()
    assert result.finished
    watcher = _Watcher(result.spec)
    for now, _, effect in result.effects:
        watcher.feed(_pushed([effect]), now)
    return watcher, result


@pytest.mark.parametrize(("factory", "seed", "phase", "noun"), WITHHOLDERS)
def test_spectator_waits_a_member_owing_its_phase_event_is_told_then_dropped(
    factory: type[Peer], seed: int, phase: Phase, noun: str
) -> None:
    net = _game(factory, 3, seed)
    watcher = _watched(net)
    net.run(lambda n: all(p.final.phase is Phase.OVER for p in n.peers[:2]), within=400)
    watcher.read(net.now, force=True)
    (told_at, told), (_, ended) = watcher.told
    assert isinstance(told, Owed) and isinstance(ended, Owed)
    assert told.ended is None and told.owing.seat == 2
    event = told.owing.event
    assert event is not None and (event.phase, event.seat, event.number) == (phase, 2, 1)
    # Told once it waited the while on the watcher's clock, before the players' vote.
    assert told.owing.since + UNMET_AFTER <= told_at < told.owing.since + TIMEOUT
    assert ended.ended in (OwedEnd.DROPPED, OwedEnd.OVER) and ended.owing == told.owing
    # In the players' words (the row a player's table shows).
    name = net.spec.members[2].name
    (row,) = owed_words([told.owing], lambda s: net.spec.members[s].name)
    assert row == f"the table waits on {name}, heard but not sending its {noun} of round 1"
    assert row in watcher.rows
    assert watcher.waits == ()  # (dropped: nothing waits on it)


def test_spectator_waits_a_ready_owed_at_two_players_stays_told() -> None:
    # Nobody can be dropped from two: past the phase timer the row stays, as the player's.
    net = _game(_NoReady, 2, 2)
    watcher = _watched(net)
    net.run(lambda n: n.now > 2 * TIMEOUT and n.peers[0].final.phase is Phase.PLAY)
    watcher.read(net.now, force=True)
    ((_, told),) = watcher.told
    assert isinstance(told, Owed) and told.ended is None
    (players,) = net.peers[0].owing(net.now)  # (the player's own answer: the same wait)
    assert told.owing.event == players.event and players.event is not None
    (row,) = owed_words([told.owing], lambda s: net.spec.members[s].name)
    assert row in watcher.waits


def test_spectator_waits_a_drop_decided_not_final_says_what_it_waits_on() -> None:
    # tests/test_ui_table_waits.py's five players: the three honest votes drop the crashed
    # member, and the liar's feed, held back, holds the stable time below the time that
    # decides it. The spectator, fed what the members push, tells it as they do, then final.
    sim, liar, victim = _frozen(5, 0, None)
    watcher, result = _watched_run(sim)
    watcher.read(result.effects[-1][0], force=True)
    pending = DropPending(victim, (KNOWN, liar))
    assert [n for _, n in watcher.told if isinstance(n, DropWaits)] == [
        DropWaits(pending),
        DropWaits(pending, DropEnd.FINAL),
    ]
    names = watcher.tracker.names
    (row,) = drop_words([pending], names.__getitem__)
    assert (
        row == f"{names[victim]}'s drop is decided, not final: it waits on {names[liar]}'s events"
    )
    assert row in watcher.rows
    assert victim in watcher.spectator.final.dropped


@pytest.mark.parametrize("players", [2, 3, 4])
def test_spectator_waits_loss_and_a_member_back_tell_nothing_owed(players: int) -> None:
    # Gaps that repair fills, a member back from a crash longer than the timers: the
    # spectator tells nobody owing and no drop waiting, and sees the game end.
    faults = Faults(loss=0.1, duplicate=0.05, reorder=0.1, jitter=0.02)
    faults = dataclasses.replace(faults, crashes=(Crash(players - 1, 3.0, 6.0),))
    sim = _plain(players, faults)
    watcher, _ = _watched_run(sim)
    assert watcher.told == []
    assert watcher.spectator.final.phase is Phase.OVER


def test_spectator_waits_untimed_input_times_nobody() -> None:
    # A log read has no clock: nobody silent, nobody owing (the members' events alone).
    spectator = Spectator(SPEC)
    spectator.feed(signed(0, 1, Join((0, 0)), None, 1))
    assert spectator.silent(100.0) == frozenset()
    assert spectator.owing(100.0) == ()
    # Timed: the member never heard counts as silent, and nobody is blamed meanwhile.
    spectator.feed(signed(1, 1, Join((1, 0)), None, 2), 3.0)
    assert spectator.silent(3.0 + spectator.suspect_after) == frozenset({0, 1})
    assert spectator.silent(3.0) == frozenset({0})
    assert spectator.owing(3.0) == ()
