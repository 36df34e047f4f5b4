"""A member woken from a sleep votes out for silence no member it hears once it has read what
waited for it, and still votes out, in bounded time, a member that is gone (docs/protocol.md
§9.2 *a member woken from a sleep*, :mod:`p2p_nertz.protocol.listening`).

The simulator hands a waker what was sent to it one message at a time, as a node reads its
socket a burst at a time; each is an input, and the silence scan after the first one ran with
the waker's clock past every member's timer: it voted out every member it had not read yet
(and withdrew each vote as that member's messages came in). Seat 0 sleeps from 3 s, with the
quick timers (suspect after 1 s, vote after 3 s): for 2 s (shorter than the vote's timer) or
6 s (longer: the others vote it out meanwhile), at two, three and four players.
"""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork, signed_votes

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, run
from p2p_nertz.sim.network import Crash, Freeze

ASLEEP_AT = 3.0
SHORT, LONG = 2.0, 6.0  # (either side of QUICK_TIMERS.drop_after, 3 s)


def _game(players: int, length: float, dead: int | None = None) -> SimResult:
    """Seed 1, one round: seat 0 asleep from ``ASLEEP_AT`` for ``length``; ``dead``: that
    seat dies at the same time, for good."""
    crashes = () if dead is None else (Crash(dead, ASLEEP_AT, restart_after=None),)
    return run(
        SimConfig(
            players=players,
            seed=1,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            faults=Faults(freezes=(Freeze(0, ASLEEP_AT, length),), crashes=crashes),
            record_effects=True,
            max_time=200.0,
        )
    )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_sleep_shorter_than_the_timer_costs_nobody_a_vote(players: int) -> None:
    result = _game(players, SHORT)
    assert result.finished and result.violations == [] and result.freezes == 1
    assert signed_votes(result) == []
    for peer in result.peers:
        assert peer is not None and not peer.final.dropped


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_member_asleep_long_is_voted_out_and_votes_out_nobody_it_hears(players: int) -> None:
    result = _game(players, LONG)
    assert result.finished and result.violations == []
    votes = signed_votes(result)
    wake = ASLEEP_AT + LONG
    # The others vote the sleeper out for silence while it sleeps ...
    silent = [(at, by) for at, by, on, why in votes if on == 0 and why is DropReason.SILENT]
    assert {by for _, by in silent} == set(range(1, players))
    assert all(ASLEEP_AT < at < wake for at, _ in silent)
    # ... and the waker, which hears every one of them, votes none of them out.
    assert [(by, on, why) for _, by, on, why in votes if by == 0 and why is DropReason.SILENT] == []


@pytest.mark.parametrize("players", [3, 4])
def test_a_member_dead_for_good_is_voted_out_by_the_waker_once_it_has_listened(
    players: int,
) -> None:
    """The last seat dies as seat 0 falls asleep: the others' votes on it are one short of a
    majority (they vote the sleeper out too), so its drop waits for the waker's vote, cast
    ``suspect_after`` after it woke (the bound: its own timer ran out long before)."""
    dead = players - 1
    result = _game(players, LONG, dead=dead)
    assert result.finished and result.violations == []
    wake = ASLEEP_AT + LONG
    mine = [(at, on, why) for at, by, on, why in signed_votes(result) if by == 0]
    assert mine == [(wake + QUICK_TIMERS.suspect_after, dead, DropReason.SILENT)]
    for peer in result.peers:
        if peer is not None:
            assert set(peer.final.dropped) == {dead}


def test_a_member_woken_past_the_drop_timer_abandons_nobody_before_it_has_listened() -> None:
    """At two, the one left abandons a member gone for ``drop_after`` (§9.3). A node whose own
    disk held it for longer (a sync of seconds, session 29) abandoned its live partner on
    waking: its timer ticked before its receive task read what the partner had sent meanwhile.
    The abandon waits as a silence vote does (``silence_vote_at``), and still comes once the
    waker has listened and the partner is still unheard."""
    net = PeerNetwork(2, 1, rules=Rules(target=None, rounds=1), config=QUICK_TIMERS)
    net.run(lambda net: all(p.final.phase is Phase.PLAY for p in net.peers))
    waker, other = net.peers[0], 1
    assert waker.abandon_answer(net.now).why is not None  # (heard just now)
    wake = net.now + 3 * QUICK_TIMERS.drop_after  # (nothing read meanwhile)
    waker.tick(wake)
    why = waker.abandon_answer(wake).why
    assert why is not None and f"(seat {other})" in why, why
    listened = wake + QUICK_TIMERS.suspect_after
    waker.tick(wake + QUICK_TIMERS.suspect_after / 2)  # (listening: an input within the gap)
    waker.tick(listened)
    assert waker.abandon_answer(listened).why is None  # still unheard: gone, abandoned
