"""Strangers and a member's impostor flood a node of a real game (issue 14 §2): it plays on.

Three greedy bots play one round over tcp://127.0.0.1 in one trio process while attackers'
real zmq DEALERs flood the first of them: a stranger with a CURVE key of its own (refused at
the handshake by the node's ZAP handler, :mod:`p2p_nertz.runtime.gate`), and a DEALER holding
a member's key under a routing id that is not that member's (admitted, its frames dropped by
the guard). The tests synchronise on the game (the nodes
finishing) and on zmq's own monitor events, never on sleeps; they assert behaviour (what was
delivered, verified, logged), never timings or CPU (``scripts/bench_flood.py`` measures those).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio
import zmq
import zmq.utils.monitor
from sodium_helpers import signature_checks

from p2p_nertz.protocol.envelope import Kind, encode_message
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, Peer, Rejected
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.gate import client_keys, server_keys
from p2p_nertz.runtime.guard import OUTSIDER, OVER_BUDGET, SUMMARY_INTERVAL
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket
from tests.test_node import GAME_TIMEOUT, check_agreement, make_game, make_node

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(150)]

STRANGER = Identity.generate(derive_seed(b"test-flood-stranger"))


async def play_while(
    nodes: list[PeerNode],
    endpoints: dict[PeerId, str],
    attack: Callable[[], Awaitable[None]],
    game_over: Callable[[], None] = lambda: None,
) -> list[Peer]:
    """Run the game with ``attack`` running beside it until every node is done, then call
    ``game_over`` and cancel the attack; return the peers."""
    peers: list[Peer | None] = [None] * len(nodes)

    async def play(seat: int) -> None:
        peers[seat] = await nodes[seat].run(endpoints)

    with trio.fail_after(GAME_TIMEOUT):
        async with trio.open_nursery() as outer:
            outer.start_soon(attack)
            async with trio.open_nursery() as game:
                for seat in range(len(nodes)):
                    game.start_soon(play, seat)
            game_over()
            outer.cancel_scope.cancel()
    finished = [p for p in peers if p is not None]
    assert len(finished) == len(nodes)
    return finished


def attacker(ctx: zmq.Context[zmq.Socket[bytes]], holder: Identity, node: Identity) -> AsyncSocket:
    """A DEALER with ``holder``'s CURVE keys towards ``node``, under a routing id that is no
    member's."""
    keys = client_keys(server_keys(holder), node.peer_id)
    return create_socket(ctx, zmq.DEALER, identity=b"stranger", curve=keys)


def wait_for(monitor: zmq.Socket[bytes], event: int, times: int, stop: Callable[[], bool]) -> int:
    """Wait (in a thread) until ``monitor`` has reported ``event`` ``times`` times or ``stop()``;
    return how many times it did."""
    seen = 0
    while seen < times and not stop():
        if monitor.poll(100):  # (looks at ``stop`` between polls: the game may end first)
            seen += (
                zmq.utils.monitor.parse_monitor_message(monitor.recv_multipart())["event"] == event
            )
    return seen


def flood_messages(member: Identity, game_id: bytes) -> list[bytes]:
    """What a stranger can send: a beat in a member's name with a forged signature, a message
    signed by its own key (not in the roster), and bytes that are no message at all."""
    beat = encode_message(
        member, game_id=game_id, seq=0, prev=None, lamport=5, kind=Kind.BEAT, body=[]
    )
    forged = beat[:-1] + bytes([beat[-1] ^ 1])  # the same beat, the signature broken
    own = encode_message(
        STRANGER, game_id=game_id, seq=0, prev=None, lamport=5, kind=Kind.BEAT, body=[]
    )
    return [forged, own, b"\x92garbage"]


async def test_a_node_flooded_by_a_stranger_and_an_impostor_plays_on_verifies_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="p2p_nertz.node")
    identities, spec = make_game(21)
    forged, own, garbage = flood_messages(identities[1], spec.game_id)
    # Every signature check of the process is noted: those of the flood must never happen.
    checks = signature_checks(monkeypatch)
    nodes = [make_node(i, spec, tmp_path / f"peer{seat}.log") for seat, i in enumerate(identities)]
    endpoints = {i.peer_id: node.bind() for i, node in zip(identities, nodes, strict=True)}
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    impostor = attacker(ctx, identities[1], identities[0])  # member 1's key, not its id
    stranger = attacker(ctx, STRANGER, identities[0])  # a key of its own
    monitor = stranger._sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    sent = refused = 0
    stop = False

    def game_over() -> None:
        nonlocal stop
        stop = True

    async def watch_stranger() -> None:
        nonlocal refused
        refused = await trio.to_thread.run_sync(
            wait_for, monitor, zmq.EVENT_HANDSHAKE_FAILED_AUTH, 2, lambda: stop
        )

    async def flood() -> None:
        nonlocal sent
        endpoint = endpoints[identities[0].peer_id]
        impostor.connect(endpoint)
        stranger.connect(endpoint)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_stranger)
            for message in itertools.cycle([forged, own, garbage]):
                stranger.try_send_multipart([message])  # (queued on its side: never taken)
                await impostor.send_multipart([message])
                sent += 1
                if sent % 25 == 0:
                    await trio.sleep(0.005)  # pacing only: the bots keep a share of the CPU

    started = trio.current_time()
    try:
        peers = await play_while(nodes, endpoints, flood, game_over)
    finally:
        stranger._sock.disable_monitor()
        monitor.close(linger=0)
        impostor.close()
        stranger.close()
        ctx.term()
    elapsed = trio.current_time() - started
    check_agreement(peers)
    assert sent >= 100
    assert checks  # (the members' own were)
    verified = [
        key for key, signature in checks if STRANGER.peer_id == key or signature == forged[-64:]
    ]
    assert verified == []  # not one of their signatures was checked
    # The stranger was refused at the handshake, each time it tried: nothing of it came in.
    gate = nodes[0]._mesh.gate
    assert gate is not None and refused >= 1 and gate.refused >= refused
    # Honest members lost nothing to the budget, flooded or not.
    assert all(node.guard.counts[OVER_BUDGET] == 0 for node in nodes)
    # The log: a line for the first refusal, then one summary per interval at most.
    lines = [r for r in caplog.records if r.name == "p2p_nertz.node" and "refused" in r.message]
    assert 1 <= len(lines) <= 2 * (elapsed // SUMMARY_INTERVAL + 1)
    # The impostor's flood did arrive, and was counted: each frame it sent and no other.
    assert 100 <= nodes[0].guard.counts[OUTSIDER] <= sent


async def test_frames_above_the_limit_are_cut_off_by_zmq_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    identities, spec = make_game(22)
    refusals: list[Rejected] = []

    def on_notice(effect: Effect) -> None:
        if isinstance(effect, Rejected):
            refusals.append(effect)

    nodes = [
        make_node(i, spec, tmp_path / f"peer{seat}.log", on_notice=on_notice if seat == 0 else None)
        for seat, i in enumerate(identities)
    ]
    endpoints = {i.peer_id: node.bind() for i, node in zip(identities, nodes, strict=True)}
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    # A member's key, so that the handshake succeeds and the size alone cuts it off. (Were a
    # frame delivered, the node's guard would count it: a routing id not the key's member's.)
    big_sender = attacker(ctx, identities[1], identities[0])
    monitor = big_sender._sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    cut_off = 0

    stop = False

    def game_over() -> None:
        nonlocal stop
        stop = True

    async def wait_cut_off() -> None:
        nonlocal cut_off
        cut_off = await trio.to_thread.run_sync(
            wait_for, monitor, zmq.EVENT_DISCONNECTED, 3, lambda: stop
        )

    big = b"\x92" + bytes(1 << 20)  # 1 MiB (the bench sends 256 MiB frames)

    async def flood() -> None:
        big_sender.connect(endpoints[identities[0].peer_id])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_cut_off)
            for _ in range(20):  # queued on the attacker's side; sent as it reconnects
                await big_sender.send_multipart([big])

    try:
        peers = await play_while(nodes, endpoints, flood, game_over)
    finally:
        big_sender._sock.disable_monitor()
        monitor.close(linger=0)
        big_sender.close()
        ctx.term()
    check_agreement(peers)
    assert not [r for r in refusals if r.reason == "oversize"]  # nothing of it got through
    assert cut_off >= 3  # zmq dropped the attacker's connection, again and again
    assert nodes[0].guard.counts[OUTSIDER] == 0
