"""A fork that goes on on both branches (session 41's ``brink_branch``, ``scripts/soak.py
--liars --lie brink_branch``): the liar signs an event again at the brink and sends it to
some members, then every later event to them on that branch, each at the brink past the
branch's last, so that those members hold versions past the fork that the others know
nothing of (docs/protocol.md §13, *a leap named by some honest members only*; the leap
bound's corners themselves are pinned in ``tests/test_clock_leaps.py``).

Scans (3-5 players, seeds 0-99): one game fails, seed 1 at four players, and not for the
leap bound: the same game fails with every branch event timed as an honest author times it
(one tick past what it names). With ``--back readmit`` (3-5 players, 0-23) one more, seed 8
at three, with no event refused as a leap. Both mended in session 41 (§9.4): a proof whose
versions name two prevs is voted on where the branches part (*a vote on proof above the
fork*), and a fork of a member asking back is probed though it is still dropped here.
Session 42: seed 29 at three, watched, the watcher holding the liar's losing branch ended on
another state than the members; it now follows the chain the drop keeps as a peer does.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.sim.invariants import settled, watcher_ends
from p2p_nertz.sim.liar_games import _Simulation, game, simulate
from p2p_nertz.sim.liars import EDGE_LIES, LIES, MORE_LIES, Lie
from p2p_nertz.sim.network import pushed

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def test_brink_branch_is_an_edge_lie_no_soak_seed_draws_but_by_name() -> None:
    # (In no other list: every seed of the other mixes keeps its lie.)
    assert Lie.BRINK_BRANCH in EDGE_LIES
    assert Lie.BRINK_BRANCH not in LIES and Lie.BRINK_BRANCH not in MORE_LIES
    _, liars = game(1, players=(4, 4), lies=(Lie.BRINK_BRANCH,))
    assert [x.lie for x in liars] == [Lie.BRINK_BRANCH]


def test_brink_branch_an_honest_vote_above_the_fork_is_not_refused() -> None:
    # Seed 1, four players (~1.5 CPU-s): liar seat 3 forks at its seq 8 and sends seat 0
    # alone its branch (8 and 9, each at the brink). Seat 0 gets the other version of seq 9
    # first. Before session 41's mend it voted on proof at 9, counting to 8 and quoting its
    # branch's 8, while seat 1 voted on the fork at 8 quoting the other 8: the audit refused
    # seat 0's honest vote (quoting another id of seat 3's event 8 than the event counted)
    # and parted from the peers' state. Now the two 9s, naming two prevs, show the branches
    # parted below: seat 0 probes 8 and votes on the fork there (docs/protocol.md §9.4).
    config, liars = game(1, players=(4, 4), lies=(Lie.BRINK_BRANCH,))
    run = simulate(config, liars)
    assert run.result.violations == []


def test_brink_branch_beside_a_readmission_ends_and_drops_no_honest_member() -> None:
    # Seed 8, three players, the liar (seat 2) lying from its readmission on (``soak.py
    # --liars --lie brink_branch --back readmit``; ~1 CPU-s, ~7 when it fails): seat 2
    # forks at 28 and sends honest seat 1 alone its branch (28, and its rejoin request 29
    # at the brink). Seat 1 refuses seat 0's events naming the other 29 (timed below its
    # copy) and probes 29; before session 41's mend that probe was dropped, seat 2 being
    # still dropped in seat 1's final fold (its readmission waits on those very events)
    # and voted out by seat 1: seat 0's final fold dropped honest seat 1 and the game never
    # ended. A member asking back is probed as one in (docs/protocol.md §9.4).
    config, liars = game(8, players=(3, 3), lies=(Lie.BRINK_BRANCH,), back="readmit")
    run = simulate(config, liars)
    assert run.result.violations == []


@functools.cache
def _watched_seed_29() -> tuple[list[str], list[str], list[tuple[int, bytes]], _Simulation]:
    """Seed 29 at three players (``soak.py --liars --lie brink_branch``, ~2 CPU-s), watched:
    the live watcher's violations, the honest ends, every push (pushing seat, wire) and the
    simulation."""
    config, liars = game(29, players=(3, 3), lies=(Lie.BRINK_BRANCH,))
    sim = _Simulation(dataclasses.replace(config, record_effects=True), liars, watch=True)
    result = sim.run()
    ends = [final.digest() for final in settled(result)]
    live = sim.watched_end(result)  # (the nodes' linger played: its pushes recorded too)
    pushes = [(seat, wire) for _, seat, e in result.effects if (wire := pushed(e)) is not None]
    return live, ends, pushes, sim


def test_brink_branch_a_watcher_follows_the_chain_the_drop_keeps() -> None:
    # Liar seat 2 forks at its seq 33 and sends its branch (33 and 34, at the brink) to the
    # watcher among others; honest seats 0 and 1 hold the other one and drop the liar at 34
    # keeping theirs. The watcher holds the liar's branch first. Before session 42 it kept
    # it, folded it up to the cut and ended on other totals than the members; it now
    # follows the kept chain as a peer does (``chains.follow_chains``), from the versions
    # pushed to it, and ends where the honest members end (docs/protocol.md §13).
    live, _, _, sim = _watched_seed_29()
    liar, honest = sim.peers[2], sim.peers[0]
    assert liar is not None and honest is not None and sim.watcher is not None
    theirs, ours = [[m.id for m in p.events(2)] for p in (honest, liar)]
    assert theirs[:32] == ours[:32] and theirs[32] != ours[32]  # (what the seed is for)
    assert honest.final.dropped == {2: 34}
    assert live == []
    assert [m.id for m in sim.watcher.events(2)] == theirs


def test_brink_branch_a_watcher_fed_late_follows_the_chain_the_drop_keeps() -> None:
    # A watcher that comes after the game gets each member's pushes at once, one member's
    # after another's (a DEALER's queue flushed on connect): the same game, its pushes fed
    # member by member, the liar's first, so that the watcher holds the liar's branch whole
    # before it sees the other (before session 42 that ended on other totals too).
    _, ends, pushes, sim = _watched_seed_29()
    watcher = Spectator(sim.spec)
    for q in (2, 0, 1):
        for seat, wire in pushes:
            if seat == q:
                watcher.feed(wire)
    assert watcher_ends(watcher.final, ends) == []


def test_brink_branch_the_audit_judges_the_branch_read_as_other_versions_by_its_own_links() -> None:
    # Seed 24, three players (``soak.py --liars --lie brink_branch --players 2-5``; ~1 CPU-s):
    # liar seat 0's branch is read by the audit as the other versions of a fork, and honest
    # events name its links by id. Since session 42 such a version's time counts once judged
    # by what it names (``feeds.fetched_time``); a first draft of the audit's reading took
    # the branch's previous link by seq (the version delivered, far below) and named two
    # honest events ``clock_jump``, which every member took: each link is read by the id
    # its frontier names.
    config, liars = game(24, players=(2, 5), lies=(Lie.BRINK_BRANCH,))
    assert config.players == 3 and [x.seat for x in liars] == [0]
    run = simulate(config, liars)
    assert run.result.violations == []
