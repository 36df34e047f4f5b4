"""A table that waits says why, always (session 38; docs/protocol.md §9.5, *Why a table waits*).

Each way a simulated table stops for good is driven here, and every honest member still running
is read as the front ends read it (the tracker's view, at its inputs, with the node's teller):
at the end, the table waiting, its rows say on whom it waits and for what. A frontier lie
beside a member crashed for good at three and four players (§13, session 37's frozen games)
waited with only the votes short said, not that the liar's own vote was held back with its
feed: the table now names the liar and the events its feed waits for (``protocol/unmet.py``'s
:class:`HeldBack`), and the node tells it once and its end once (:class:`FeedHeld`). The other
waits (no majority here, two members) are driven too, so that the class is checked whole (two
liars at four, votes short with every member heard: ``tests/test_ui_unmet.py``); a game whose
member comes back, and games with loss, tell nothing held back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from p2p_nertz.protocol.bodies import Join, Leave
from p2p_nertz.protocol.finality import KNOWN
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.reach import OutOfReach
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.protocol.unmet import (
    UNMET_AFTER,
    DropEnd,
    DropPending,
    DropWaits,
    FeedHeld,
    HeldBack,
    HeldEnd,
    Owed,
    UnmetTeller,
    VoteShort,
)
from p2p_nertz.rules import Rules
from p2p_nertz.sim.liar_games import _Simulation as LiarSimulation
from p2p_nertz.sim.liar_games import game
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Faults, Partition, SimConfig, Simulation
from p2p_nertz.ui.render import render
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import TableView, drop_words, held_words, reach_words, waits_summary
from p2p_nertz.web.model import view_json
from tests.test_spectator import SPEC, signed, wire_id

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)

Told = list[tuple[float, int, VoteShort | FeedHeld | Owed | DropWaits]]


class _Watched:
    """The views and the notices of ``seats`` of ``sim``, read at their inputs as the front
    ends and the node read them (a tenth of a second apart at least)."""

    def __init__(self, sim: Simulation, seats: list[int]) -> None:
        self.told: Told = []
        self.views: dict[int, TableView] = {}
        self.reach: dict[int, list[Any]] = {s: [] for s in seats}
        trackers: dict[int, Tracker] = {}
        tellers = {s: UnmetTeller() for s in seats}
        last: dict[int, float] = {}
        apply: Callable[..., bool] = sim._apply

        def watched(s: int, effects: list, now: float, cut: int | None = None) -> bool:  # type: ignore[type-arg]
            done = apply(s, effects, now, cut)
            peer: Peer | None = sim.peers[s]
            if s not in tellers or peer is None:
                return done
            tracker = trackers.setdefault(s, Tracker(tuple(m.name for m in peer.spec.members), s))
            tracker.take(effects, peer.final, now)
            if now < last.get(s, -1.0) + 0.1:
                return done
            last[s] = now
            self.views[s] = tracker.view(peer, now=now)
            for notice in tellers[s].tell(peer, now):
                self.told.append((now, s, notice))
            return done

        sim._apply = watched  # type: ignore[method-assign]

    def held(self, seat: int) -> list[FeedHeld]:
        return [n for _, s, n in self.told if s == seat and isinstance(n, FeedHeld)]


def _frozen(players: int, seed: int, restart_after: float | None) -> tuple[Simulation, int, int]:
    """``tests/test_sim_frozen_crash.py``'s game: one ``frontier_ahead`` liar, the first honest
    seat crashed a second after the liar starts (for good, or back ``restart_after`` later)."""
    config, liars = game(seed, players=(players, players), lies=(Lie.FRONTIER_AHEAD,))
    (liar,) = liars
    victim = next(s for s in range(players) if s != liar.seat)
    crash = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=restart_after)
    faults = dataclasses.replace(config.faults, crashes=(crash,))
    return LiarSimulation(dataclasses.replace(config, faults=faults), liars), liar.seat, victim


def _shown(view: TableView) -> None:
    """The waits are the last rows of the page's messages, and on an 80×24 terminal either
    every row or their one-row summary."""
    assert view_json(view)["messages"][-len(view.waits) :] == list(view.waits)
    text = render(view, 80, 24).text()
    assert all(row in text for row in view.waits) or view.waits_line in text


@pytest.mark.parametrize(("players", "seed"), [(3, 0), (4, 0), (4, 2)])
def test_ui_waits_a_frontier_liar_beside_a_member_gone_is_named(players: int, seed: int) -> None:
    sim, liar, victim = _frozen(players, seed, None)
    honest = [s for s in range(players) if s not in (liar, victim)]
    watched = _Watched(sim, honest)
    result = sim.run()
    assert not result.finished  # (no honest majority running: the table waits, §9.3)
    for seat in honest:
        # Told once, not ended: the liar's events wait for events never sent (the crashed
        # member's it named, or its own before them).
        (told,) = watched.held(seat)
        assert told.ended is None and told.held.seat == liar
        assert {feed for feed, _, _ in told.held.waits} <= {liar, victim}
        # The votes on the crashed member stand short (the liar's held back with its feed).
        short = [n for _, s, n in watched.told if s == seat and isinstance(n, VoteShort)]
        assert [(n.unmet.seat, n.ended) for n in short] == [(victim, None)]
        assert set(short[0].unmet.voters) == set(honest)
        # The table says both: the votes, then on whom they wait, in the node's words too.
        view = watched.views[seat]
        names = ["you" if s == seat else name for s, name in enumerate(view.names)]
        (row,) = held_words([told.held], names.__getitem__)
        assert view.waits[-1] == row
        assert row.startswith(f"the table waits on {view.names[liar]}: its events ")
        assert any(r.startswith(f"{view.names[victim]} voted out by ") for r in view.waits)
        _shown(view)


@pytest.mark.parametrize("restart_after", [5.0, 10.0])
def test_ui_waits_a_liar_held_back_then_voted_out_is_told_dropped(restart_after: float) -> None:
    # The crashed member back (shorter and longer than phase_timeout): three honest running
    # of four vote the liar out withheld, and the table waits on its events no more.
    sim, liar, victim = _frozen(4, 0, restart_after)
    honest = [s for s in range(4) if s not in (liar, victim)]
    watched = _Watched(sim, honest)
    assert sim.run().finished
    for seat in honest:
        assert [(n.held.seat, n.ended) for n in watched.held(seat)] == [
            (liar, None),
            (liar, HeldEnd.DROPPED),
        ]
        assert watched.views[seat].waits == ()


def test_ui_waits_a_drop_decided_not_final_says_what_it_waits_on() -> None:
    # Five players: the three honest votes drop the crashed member (a majority of five), but
    # the drop is final only once the stable time passes the vote that decided it, and the
    # liar's feed, held back, holds that time (session 37's rule): the drop is told on its
    # own (session 39), naming the liar's events, until it is final with the liar's own drop.
    sim, liar, victim = _frozen(5, 0, None)
    honest = [s for s in range(5) if s not in (liar, victim)]
    watched = _Watched(sim, honest)
    assert sim.run().finished
    pending = DropPending(victim, (KNOWN, liar))
    for seat in honest:
        told = [(t, n) for t, s, n in watched.told if s == seat and isinstance(n, DropWaits)]
        assert [n for _, n in told] == [DropWaits(pending), DropWaits(pending, DropEnd.FINAL)]
        names = watched.views[seat].names
        (row,) = drop_words([pending], names.__getitem__)
        assert (
            row
            == f"{names[victim]}'s drop is decided, not final: it waits on {names[liar]}'s events"
        )
        assert victim in sim.peers[seat].final.dropped


def _plain(players: int, faults: Faults, seed: int = 4, max_time: float = 120.0) -> Simulation:
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=2),
        faults=faults,
        peer=QUICK_TIMERS,
        abandon=False,
        max_time=max_time,
    )
    return Simulation(config)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ui_waits_loss_and_a_member_back_hold_nobody_back(players: int) -> None:
    # Gaps that repair fills, a member back from a crash longer than the timers: nothing told
    # held back, and every game ends.
    faults = Faults(loss=0.1, duplicate=0.05, reorder=0.1, jitter=0.02)
    faults = dataclasses.replace(faults, crashes=(Crash(players - 1, 3.0, 6.0),))
    sim = _plain(players, faults)
    watched = _Watched(sim, list(range(players - 1)))
    assert sim.run().finished
    assert [n for _, _, n in watched.told if isinstance(n, FeedHeld)] == []
    assert [n for _, _, n in watched.told if isinstance(n, Owed)] == []  # (nor owing: s. 39)


def test_ui_waits_a_split_table_says_half_is_out_of_reach() -> None:
    # Two and two, apart for good: nobody can be dropped on either side (no majority here).
    split = Partition(3.0, float("inf"), (frozenset({0, 1}), frozenset({2, 3})))
    sim = _plain(4, Faults(partitions=(split,)), max_time=40.0)
    watched = _Watched(sim, [0, 1, 2, 3])
    assert not sim.run().finished
    for seat in range(4):
        view = watched.views[seat]
        across = [view.names[s] for s in range(4) if (s < 2) != (seat < 2)]
        said = reach_words(OutOfReach((0, 1), 4), across.__getitem__)
        assert all(row in view.messages for row in said)


def test_ui_waits_two_members_one_gone_say_nobody_can_be_dropped() -> None:
    # Two members, one crashed for good: its vote is its target's own, which never comes.
    sim = _plain(2, Faults(crashes=(Crash(1, 3.0, None),)), max_time=40.0)
    watched = _Watched(sim, [0])
    sim.run()
    view = watched.views[0]
    assert view.waits[-1] == "nobody can be dropped from two: wait for them, or end the game"
    assert watched.held(0) == []  # (a member silent is not held back: nothing of it waits)
    _shown(view)


def test_ui_waits_held_back_in_one_row_where_names_are_long() -> None:
    held = (HeldBack(2, 15, ((0, 13, 15),)),)
    long = [f"a-rather-long-name-{s}" for s in range(3)]
    row = held_words(held, long.__getitem__)[0]
    assert len(row) > 78  # (the terminal's summary is asked for)
    line = waits_summary((), held, long.__getitem__)
    assert line == "the table waits on a-rather-long-name-2: held back"


def test_ui_waits_a_spectator_names_a_member_held_back_and_its_end() -> None:
    # The spectator answers from what members pushed it: seat 1's join names seat 0's, not
    # pushed; told once it stood the while (on the watcher's clock), gone once it comes.
    spectator = Spectator(SPEC)
    spectator.feed(signed(1, 1, Join((1, 0)), None, 2))
    assert spectator.held_back() == (HeldBack(1, 0, ((0, 1, 1),)),)
    tracker = Tracker(tuple(m.name for m in SPEC.members), None)
    assert tracker.view(spectator, now=10.0).waits == ()  # (not yet: the while)
    waits = tracker.view(spectator, now=10.0 + UNMET_AFTER).waits
    one, zero = SPEC.members[1].name, SPEC.members[0].name  # (the spec orders the seats)
    assert waits == (f"the table waits on {one}: its events name {zero}'s #1, which never came",)
    spectator.feed(signed(0, 1, Join((0, 0)), None, 1))
    assert spectator.held_back() == ()
    assert tracker.view(spectator, now=20.0).waits == ()


def test_ui_waits_a_gap_in_a_members_own_feed_is_named() -> None:
    spectator = Spectator(SPEC)
    join = signed(0, 1, Join((0, 0)), None, 1)
    spectator.feed(signed(0, 2, Leave((1, 0)), wire_id(join), 3))  # (its first not pushed)
    assert spectator.held_back() == (HeldBack(0, 0, ((0, 1, 1),)),)
    assert held_words(spectator.held_back(), ["Ann", "Bob"].__getitem__) == (
        "the table waits on Ann: its events #1 never came",
    )
