"""The lie fuzzer's lies whose path differs on real nodes (:mod:`p2p_nertz.testing.liar_nodes`).

Three real :class:`~p2p_nertz.runtime.node.PeerNode` on tcp://127.0.0.1 in one trio run, each
with its own log file; seat 2 is a :class:`~p2p_nertz.testing.liar_nodes.LiarNode`, its core
lying as the simulator's liar does (:mod:`p2p_nertz.sim.liars`). The lies here are those that
take another path on real nodes than in the simulator: made on the wire only (the node's log
keeps the honest event, its sockets carry the lie, and its answers to wants the lie again),
a flood of wants (the node's guard and outlets), and a beat lie (beats go straight to the
sockets, never to the log). Each game is judged as the fuzzer judges the simulator's
(:func:`~p2p_nertz.testing.liar_nodes.check`: the honest nodes end alike, nobody honest dropped
or refused, no freeze, the audit of every log file naming every proven lie and no honest
member), plus what the honest nodes must have made of this lie. Three players (at two, no
vote of the honest members shows), but for the last test: at two, the one left alone once the
liar is out on proof plays the round out and the game ends (docs/protocol.md §9.9, *alone in
the game*). ``scripts/scan_real_liars.py`` plays every lie. Each game 7-17 s of wall (load 35)
and under 2 s of CPU. The liar's lies wait for its core to be in play
(:class:`~p2p_nertz.testing.liar_nodes.PlayLiarNode`): on a loaded machine its first chance one
second in fell in the lobby (its commit), and the honest members, dealt another game of two,
played 40 to 120 s (session 41: a freeze at 120 s, the game still moving).

No load can drop an honest member here (session 42). A machine under load can stall a node's
own log sync for seconds (8 s at a load of 40 on 2 cores, session 41), a real silence, which
timers short enough to vote out a liar within seconds answer by voting out the honest member
stalled. So the timers are chosen by what the lie's proof needs: a lie proven (a fork, a time
below an ack) needs no timer, and the game runs with none that votes within it
(:data:`~p2p_nertz.testing.liar_nodes.NO_TIMED_VOTES`); the vote on no seat needs the honest
members' timer *withheld*, and only they have one
(:data:`~p2p_nertz.testing.liar_nodes.WITHHELD_ONLY`), so that the liar is the only member a
majority can vote out; a flood that must drop nobody keeps a LAN's timers (what it checks is
that its cost silences nobody for that long).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from p2p_nertz.audit import FindingKind
from p2p_nertz.logfile import LogWriter, Record, RecordKind
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.peer import Peer, PeerConfig
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules.game import Termination
from p2p_nertz.runtime.node import PeerNode, node_config
from p2p_nertz.sim.liars import Liar, Lie
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.liar_nodes import (
    LABEL,
    NO_TIMED_VOTES,
    WITHHELD_ONLY,
    PlayLiarNode,
    RealLiarRun,
    audit_logs,
    check,
    draw,
    play,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # (past ``play``'s bound, 240 s)

PLAYERS = 3
LIAR = 2
HONEST = (0, 1)

LAN = dataclasses.replace(node_config(suspect_after=2.0, drop_after=10.0), phase_timeout=20.0)
"""Timers of a LAN, not the fuzzer's quick ones, for the flood that must drop nobody: on a
loaded machine a node's own log sync can stall past the quick 3 s (in a worker thread, its two
companions running on), and the honest member left with it voted it out and abandoned it, an
honest drop for a silence the machine made, not the protocol (session 41: seat 1's sync held
8 s in play, ``seq_reuse``: "honest dropped: seat 0's final fold dropped seat 1"; a sync must
hold past 20 s here, ``drop_after`` of keeping heard then ``drop_after`` more)."""

FLOOD = dataclasses.replace(LAN, drop_after=600.0, phase_timeout=600.0)
"""The flood's timers: no silence vote or phase vote within the game's bound. The test asks
whether the protocol drops anyone for the flood (a proof, a refusal); the three nodes share
one process, and at a load of 12 workers on 2 cores the flood's own cost held it past LAN's
10 s (session 44's rehearsal: an honest member voted out for a silence the machine made)."""


def _play(
    tmp_path: Path,
    lie: Lie,
    *,
    liar_seed: int = 0,
    config: PeerConfig = NO_TIMED_VOTES,
    liar_config: PeerConfig | None = None,
    abandon: bool = True,
) -> RealLiarRun:
    """Game 0 (a short one: a Nerts call within seconds), seat 2 lying once, at its first
    chance in play one second in or later; every node's timers ``config`` (by default none
    that votes within the game: a lie proven needs none), the liar's ``liar_config`` if
    given."""
    identities, spec = bot_game(LABEL, PLAYERS, 0)
    liar = Liar(LIAR, lie, at=1.0, times=1, rate=1.0, seed=liar_seed)
    return trio.run(
        lambda: play(
            spec,
            identities,
            [liar],
            tmp_path,
            config=config,
            liar_config=liar_config,
            liar_node=PlayLiarNode,
            abandon=abandon,
        )
    )


STALL = 8.0
"""Seconds a stalled sync of a node's log takes: past every quick timer (a member kept heard
through a slow sync for ``drop_after``, 3 s, then silent for 3 s more; *withheld* after
``phase_timeout``, 6 s), as long as a loaded machine made one (a load of 40 on 2 cores,
session 41)."""


def _stalled(monkeypatch: pytest.MonkeyPatch, seat: int, when: Callable[[Peer], bool]) -> list[int]:
    """Make the first sync of ``seat``'s own events once ``when`` holds of its core take
    :data:`STALL` seconds more, in a worker thread: a disk that stalls, the node kept heard
    meanwhile as on any slow sync (:func:`~p2p_nertz.runtime.node.keep_heard`). The list
    returned gets the seat once that sync has begun."""
    stalled: list[int] = []
    write = PeerNode._write

    async def _write(node: PeerNode, records: list[Record]) -> None:
        peer, log = node._peer, node._log
        if stalled or peer is None or peer.seat != seat or not when(peer):
            return await write(node, records)
        if all(r.kind is RecordKind.RECEIVED_EVENT for r in records):
            return await write(node, records)  # (never synced)
        append = log._append

        def slow(writer: LogWriter, some: list[Record]) -> float:
            stalled.append(seat)  # (in the worker thread: the fault, a sync that takes long)
            time.sleep(STALL)
            return append(writer, some)

        log._append = slow  # type: ignore[method-assign,assignment]
        log.pace.beside = lambda now: True  # type: ignore[method-assign]
        try:
            await write(node, records)
        finally:
            del log._append, log.pace.beside

    monkeypatch.setattr(PeerNode, "_write", _write)
    return stalled


def _honest(run: RealLiarRun) -> list[Peer]:
    """The honest nodes' cores at the end."""
    peers = [run.peers[seat] for seat in HONEST]
    assert all(peers)
    return [p for p in peers if p is not None]


def _judged(run: RealLiarRun) -> set[FindingKind]:
    """What the audit accuses the liar of, once the game passed every check (its lie told in
    play: its deal made public, its ``ready``, is held by every honest node)."""
    report = audit_logs(run)
    problems, holding = check(run, report)
    assert problems == []
    assert holding == ()
    assert run.finished
    assert run.told[LIAR] >= 1
    assert all(any(e.kind is Kind.READY for e in p.events(LIAR)) for p in _honest(run))
    return {f.kind for f in report.errors if f.seat == LIAR}


@pytest.mark.parametrize("lie", [Lie.SEQ_SKIP, Lie.SEQ_REUSE])
def test_node_liars_a_seq_lied_on_the_wire_is_a_fork_the_honest_nodes_drop(
    tmp_path: Path, lie: Lie
) -> None:
    """The liar's log keeps its event under its own seq; its sockets send it under the next
    (``seq_skip``) or the last (``seq_reuse``): two events under one seq, both signed. Each
    honest node holds the pair, proves it, drops the liar; the audit names the fork."""
    run = _play(tmp_path, lie)
    accused = _judged(run)
    assert all(LIAR in peer.final.dropped for peer in _honest(run))
    assert FindingKind.EQUIVOCATION in accused


@pytest.mark.parametrize("stall", [None, "in the lobby", "once the liar is out"])
def test_node_liars_a_vote_on_no_seat_is_refused_and_its_author_voted_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stall: str | None
) -> None:
    """The liar's log keeps a vote on a member heard; its sockets send it (and its answers to
    the wants for it) as a vote on a seat past the roster. Every honest node refuses every copy
    as a malformed body, never takes the event, and votes the liar out for holding back its
    feed; the game ends without it. The honest members' timer *withheld* is the quick one,
    and they are the only voters (the liar's timers vote nobody out, and its votes past its
    lie never reach them), so a majority can vote out the liar alone; left two, neither bot
    abandons the other, whom a stall kept talking past ``phase_timeout`` (session 42: seat 1's
    sync stalled 8 s after the liar's drop, and seat 0 abandoned it). ``stall``: seat 1's sync
    stalls :data:`STALL` seconds at its first event (the liar's votes count there, before its
    lie: with the liar's quick timers its vote and seat 0's dropped seat 1), or once the
    liar is out in its final fold (the two left: seat 0 abandoned seat 1)."""
    whens: dict[str | None, Callable[[Peer], bool]] = {
        "in the lobby": lambda peer: True,
        "once the liar is out": lambda peer: LIAR in peer.final.dropped,
    }
    stalled = [] if stall is None else _stalled(monkeypatch, 1, whens[stall])
    run = _play(
        tmp_path,
        Lie.VOTE_NO_SEAT,
        config=WITHHELD_ONLY,
        liar_config=NO_TIMED_VOTES,
        abandon=False,
    )
    assert stalled == ([] if stall is None else [1])
    _judged(run)
    assert all(LIAR in peer.final.dropped for peer in _honest(run))
    assert all(run.refused[seat].get("bad_body", 0) >= 1 for seat in HONEST)


def test_node_liars_a_flood_of_wants_drops_nobody(tmp_path: Path) -> None:
    """Twenty wants of random ranges to every member at every input for 200 inputs: the
    honest nodes answer what they can, the game ends alike and nobody is dropped. (Timers of
    a LAN, not the fuzzer's quick ones: the three nodes share one process, and on a loaded
    machine the flood's cost alone held it past a 3 s drop timer, a liar voted out for a
    silence the test made, not the protocol.)"""
    run = _play(tmp_path, Lie.WANT_FLOOD, config=FLOOD)
    _judged(run)
    assert not any(peer.final.dropped for peer in _honest(run))


def test_node_liars_a_beat_timed_ahead_is_a_lie_about_time_the_honest_nodes_prove(
    tmp_path: Path,
) -> None:
    """A beat timed 2.4e9 ahead of the liar's clock (under the jump limit, so taken): beats
    go to the sockets, never to the log. The liar's next event, timed below it, is a lie
    about time (docs/protocol.md §9.4): every honest node proves it, logs the proof and drops
    the liar; the audit of the logs names its clock."""
    run = _play(tmp_path, Lie.BEAT_LAMPORT, liar_seed=4)  # (draw: up, 2,439,533,664)
    accused = _judged(run)
    assert all(LIAR in peer.final.dropped for peer in _honest(run))
    assert FindingKind.CLOCK_BELOW_ACK in accused


@pytest.mark.parametrize("stall", [False, True])
def test_node_liars_the_one_left_by_a_vote_on_proof_at_two_ends_the_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stall: bool
) -> None:
    """The real scan's seed 81 (``scripts/scan_real_liars.py --only 81``): two nodes, seat 0
    lying about time in a beat. Seat 1 proves it and votes it out, which at two players drops
    it; the liar's later beats, timed below its lie, are old news, so seat 1 hears nobody
    still in. Until session 33 it stopped there, the table gone (exit 3, the round
    unscored); now it plays the round out alone, the liar forfeiting it, and the game is over
    in its final fold (docs/protocol.md §9.9, *alone in the game*), as in the simulator. No
    timer votes or abandons within the game (the proof needs none): with the fuzzer's quick
    ones, seat 1's sync stalled 8 s on a loaded machine was seat 0's to abandon (session 42).
    ``stall``: seat 1's sync stalls :data:`STALL` seconds at its first move, before the lie."""

    def moved(peer: Peer) -> bool:
        return any(e.kind is Kind.MOVE for e in peer.events(1))

    stalled = _stalled(monkeypatch, 1, moved) if stall else []
    spec, identities, liars = draw(81)
    assert (spec.seats, liars[0].seat, liars[0].lie) == (2, 0, Lie.BEAT_LAMPORT)
    run = trio.run(lambda: play(spec, identities, liars, tmp_path, config=NO_TIMED_VOTES))
    assert stalled == ([1] if stall else [])
    report = audit_logs(run)
    problems, holding = check(run, report)
    assert (problems, holding) == ([], ())
    assert run.finished and run.gone[1] is None
    peer = run.peers[1]
    assert peer is not None and peer.final.dropped.keys() == {0}
    assert peer.final.phase is Phase.OVER and not peer.provisional
    result = peer.final.game.result
    assert result is not None and result.winners == (1,)
    assert FindingKind.CLOCK_BELOW_ACK in {f.kind for f in report.errors if f.seat == 0}


def test_node_liars_a_shuffle_deal_of_two_that_loses_a_member_on_proof_ends_the_game(
    tmp_path: Path,
) -> None:
    """Seed 81's two nodes dealt by the dealerless shuffle, seat 0 forking at once
    (``seq_reuse``: its next event under the seq of its join). Seat 1 proves it and votes
    it out, which at two drops it before the deal is over: nobody deals alone, so the game
    ends there, the round void (docs/shuffle.md §8.4), and the one left is never told the
    table is gone (docs/protocol.md §9.9). Its fold had gone on to a deal without seat 0's
    key, and its node raised (``KeyError``) signing its stage. (No timer votes within the
    game: the proof needs none.)"""
    identities, spec = bot_game(LABEL, 2, 81, deal=Deal.SHUFFLE)
    liar = Liar(0, Lie.SEQ_REUSE, at=0.0, times=1, rate=1.0, seed=81)
    run = trio.run(lambda: play(spec, identities, [liar], tmp_path, config=NO_TIMED_VOTES))
    report = audit_logs(run)
    problems, holding = check(run, report)
    assert (problems, holding) == ([], ())
    assert run.finished and run.gone[1] is None and run.raised == []
    peer = run.peers[1]
    assert peer is not None and peer.final.dropped.keys() == {0}
    assert peer.final.phase is Phase.OVER and not peer.provisional
    result = peer.final.game.result
    assert result is not None and result.termination is Termination.ABANDONED
    assert report.digest == peer.final.digest()
