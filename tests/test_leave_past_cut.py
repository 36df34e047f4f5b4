"""An honest member that leaves while cut off, before the votes (or the abandon) that remove
it in the order, past their count (docs/protocol.md §9.3, *A leave past the cut*; session 37).

Its clock is behind the others' (it hears nothing while cut off), so its ``leave`` comes
first in the total order; the others, holding its feed only up to what they count, make its
drop final without the leave, which never counts for them once read. Until session 37 the
audit of every log read the leave first, had the member out at it, and reached another game
than the peers' (the lie fuzzer's ``claim_after_leave`` after a readmission found it: readmit
seeds 297 and two-liar 56, ``tests/test_sim_liars_back.py``). Pure tests on a fake clock
(:class:`PeerNetwork`, every peer honest), the audit of their logs.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import pytest
from peer_helpers import PeerNetwork, log_sources

from p2p_nertz.audit import AuditReport, audit
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.peer import Peer, PeerConfig, Send
from p2p_nertz.protocol.state import GameState, Phase, leave_pending
from p2p_nertz.rules import Rules

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)


def _pending(peer: Peer) -> bool:
    return leave_pending(peer.final, peer.tentative, peer.seat)


def _send(net: PeerNetwork, seat: int, effects: list[object]) -> None:
    for effect in effects:
        if isinstance(effect, Send):
            net.send(seat, effect)


def _cut_off_and_leave(
    players: int, seed: int, check: Callable[[PeerNetwork], None] | None = None
) -> tuple[PeerNetwork, int]:
    """A game of ``players`` in play; the last seat is cut off from everyone and leaves half
    a second later; the others drop it for silence (at two, the other abandons it once it is
    silent for ``drop_after``); the network heals 8 s after the cut. Returns the network once
    every member still in has ended the game and the leaver holds every event of theirs.
    ``check``: called at every step from the leave on."""
    net = PeerNetwork(players, seed=seed, rules=Rules(target=None, rounds=2), config=QUICK)
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers) and n.now > 3.0)
    out = players - 1
    net.blocked = frozenset(frozenset((out, q)) for q in range(out))
    cut = net.now
    net.run(lambda n: n.now >= cut + 0.5)
    _send(net, out, net.peers[out].leave(net.now))

    def after(at: float) -> Callable[[PeerNetwork], bool]:
        def reached(n: PeerNetwork) -> bool:
            if check is not None:
                check(n)
            return n.now >= at

        return reached

    if players == 2:
        net.run(after(cut + QUICK.drop_after + 0.5))
        _send(net, 0, net.peers[0].abandon(net.now))
    net.run(after(cut + 8.0))
    net.blocked = frozenset()
    stayed = net.peers[:out]

    def settled(n: PeerNetwork) -> bool:
        if check is not None:
            check(n)
        done = all(p.final.phase is Phase.OVER for p in stayed)
        return done and all(
            len(n.peers[out].events(q)) == len(n.peers[q].events(q)) for q in range(out)
        )

    net.run(settled, within=200.0)
    return net, out


@dataclasses.dataclass(frozen=True)
class _Left:
    """One game of :func:`_cut_off_and_leave`, watched from the leave on for what the leaver's
    final fold takes, read at two points: where the members still in have ended the game
    (the audit's case; a fold is read there, as folds change in place) and where the leaver
    has too (its own final fold's case)."""

    out: int
    #: at the first point, of the members still in: their cuts of the leaver, the times of
    #: its removal, whether any has it left, their digests, their winners
    cuts: frozenset[int | None]
    removed_at: frozenset[int | None]
    any_left: bool
    digests: frozenset[str]
    winners: tuple[int, ...] | None
    #: the leaver's leave as seat 0 holds it, the audit of every log, the leaver's cut of
    #: itself and whether it had itself left (at the first point)
    leave: Message
    report: AuditReport
    leaver_cut: int | None
    leaver_left: bool
    #: the first step (from the leave on) at which the leaver's final fold took its leave,
    #: had it out alone, or held a violation, or why it never ended; ``None`` if none did
    leaver_wrong: str | None
    #: the leaver's view of its leave (provisional or not) at each step, from the leave on
    pending: frozenset[bool]
    #: at the second point: every final fold (the leaver's last), the leaver's view of its
    #: leave, its provisional
    finals: tuple[GameState, ...]
    pending_at_end: bool
    provisional: bool


@functools.cache
def _left(players: int, seed: int) -> _Left:
    """:func:`_cut_off_and_leave` played once for both tests of it below (session 43: each
    played the very game on its own): the steps are the same whatever is watched, and a
    wrong step is recorded, not raised, so that the audit's test reads its own point."""
    out = players - 1
    pending: set[bool] = set()
    wrong: list[str] = []

    def watch(n: PeerNetwork) -> None:
        final = n.peers[out].final
        if not wrong and (out in final.roster.left or final.left_alone is not None):
            wrong.append(f"at {n.now}: the leaver's final fold took its leave")
        if not wrong and final.violations:
            wrong.append(f"at {n.now}: {final.violations[:3]}")
        pending.add(_pending(n.peers[out]))  # (its view of its leave: provisional)

    net, _ = _cut_off_and_leave(players, seed, watch)
    stayed = [p.final for p in net.peers[:out]]
    result = stayed[0].game.result
    (leave,) = [m for m in net.peers[0].events(out) if m.kind is Kind.LEAVE]
    report = audit(log_sources(net))
    leaver = net.peers[out].final
    cuts = frozenset(f.dropped.get(out) for f in stayed)
    removed_at = frozenset(f.drop_at.get(out) for f in stayed)
    any_left = any(out in f.roster.left for f in stayed)
    digests = frozenset(f.digest() for f in stayed)
    leaver_cut, leaver_left = leaver.dropped.get(out), out in leaver.roster.left
    try:
        net.run(lambda n: n.peers[out].final.phase is Phase.OVER, within=200.0)
        unended = None
    except AssertionError as e:  # (the leaver's case, not the audit's: its test says so)
        unended = str(e)
    return _Left(
        out=out,
        leave=leave,
        report=report,
        leaver_wrong=wrong[0] if wrong else unended,
        pending=frozenset(pending),
        finals=tuple(p.final for p in net.peers),
        pending_at_end=_pending(net.peers[out]),
        provisional=net.peers[out].provisional,
        cuts=cuts,
        removed_at=removed_at,
        any_left=any_left,
        digests=digests,
        winners=None if result is None else result.winners,
        leaver_cut=leaver_cut,
        leaver_left=leaver_left,
    )


#: The games both tests read: two to five players, two seeds where a table size's first
#: (seed 0) is not the only one that showed a fault (the leaver's own fold at four, seed 1).
GAMES = [(2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1), (5, 0)]


@pytest.mark.parametrize(("players", "seed"), GAMES)
def test_leave_past_the_cut_the_audit_reaches_the_game_of_the_members_still_in(
    players: int, seed: int
) -> None:
    game = _left(players, seed)
    out, report = game.out, game.report
    (cut,) = game.cuts
    (removed_at,) = game.removed_at
    # (The case: the leave past the cut, before the votes or the abandon in the order.)
    assert cut is not None and removed_at is not None
    assert game.leave.seq > cut and game.leave.lamport < removed_at
    assert not game.any_left
    (digest,) = game.digests
    assert report.state is not None
    assert report.state.dropped[out] == cut and out not in report.state.roster.left
    assert report.digest == digest
    assert game.winners is not None and report.winners == game.winners
    # Every peer's own view too, the leaver's among them: it learned the drop from the votes.
    assert report.valid, report.violations
    assert game.leaver_cut == cut and not game.leaver_left


@pytest.mark.parametrize(("players", "seed"), GAMES)
def test_leave_past_the_cut_the_leaver_never_makes_final_what_the_others_cut(
    players: int, seed: int
) -> None:
    """The leaver's own final fold never takes its leave, nor its events before it past the
    votes' count, while it holds its feed and not the votes (or the abandon) that cut it
    there: it ends the game the others end (session 38; docs/protocol.md §7.4, §9.3 *A leave
    past the cut*). On main, at two players (seed 0) its final fold read the leave first and
    kept the leave's end once it held the abandon (the leaver forfeiting the game, where the
    one left had a tie shared); at four (seed 1) it made its own claims past the cut final
    and refused the others' moves on the lake they kept, round 1 never over for it."""
    game = _left(players, seed)
    out, stayed, leaver = game.out, game.finals[: game.out], game.finals[game.out]
    assert game.leaver_wrong is None, game.leaver_wrong
    (digest,) = {f.digest() for f in stayed}
    assert leaver.digest() == digest
    assert leaver.game.result == stayed[0].game.result
    assert leaver.dropped[out] == stayed[0].dropped[out]
    # Its leave was provisional while held alone, and is no longer once undone.
    assert game.pending == {True, False} and not game.pending_at_end
    assert not game.provisional


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("heal", [0.6, 2.0])
def test_leave_while_cut_off_shorter_than_a_drop_stands_and_the_leaver_sees_it_final(
    players: int, heal: float
) -> None:
    """A leave signed while cut off for less than ``drop_after`` (under ``suspect_after``,
    and past it): nobody votes, the leave stands in every fold, and the leaver's own final
    fold takes it once the others are heard holding it, never before, nor never (the bound
    on a leave not final yet waits for their cover, session 38)."""
    net = PeerNetwork(players, seed=3, rules=Rules(target=None, rounds=2), config=QUICK)
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers) and n.now > 3.0)
    out = players - 1
    net.blocked = frozenset(frozenset((out, q)) for q in range(out))
    cut = net.now
    net.run(lambda n: n.now >= cut + 0.3)
    _send(net, out, net.peers[out].leave(net.now))
    (leave,) = [m for m in net.peers[out].events(out) if m.kind is Kind.LEAVE]

    def unheard_leave_not_final(n: PeerNetwork) -> bool:
        # Nobody else holds the leave: the leaver's final fold does not take it, and its
        # view of it is provisional.
        assert out not in n.peers[out].final.roster.left and _pending(n.peers[out])
        return n.now >= cut + heal

    net.run(unheard_leave_not_final)
    net.blocked = frozenset()
    net.run(lambda n: all(p.final.phase is Phase.OVER for p in n.peers), within=300.0)
    finals = [p.final for p in net.peers]
    assert all(f.dropped[out] == leave.seq and out in f.roster.left for f in finals)
    assert len({f.digest() for f in finals}) == 1
    assert all(not f.violations for f in finals) and not _pending(net.peers[out])
    result = finals[0].game.result
    assert result is not None and out not in result.winners
