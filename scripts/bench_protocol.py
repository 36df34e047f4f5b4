#!/usr/bin/env python3
"""Benchmark the peer protocol core.

1. **Throughput**: events processed per second by one peer core — decode, verify the
   signature, deliver, fold (resolve) — replaying every message of a recorded 4-player game
   into a fresh peer; reported as a ratio to the bare Ed25519 verify rate measured in the same
   run on messages of the same size (target: at least 0.5), and (issue 18) as a ratio to
   libsodium's bare verify rate (PyNaCl, the ``bench`` extra), the fastest Ed25519 verify
   available here: a reference that does not move when the project changes library.
2. **Finality delay** in the simulator on a fault-free network with a fixed one-way delay: the
   time from a claim being sent to it being final at every peer, in round trips (target: one
   round trip plus the ack coalescing window).
3. **Messages per claim** (issue 18) in fault-free simulated games at 2, 4 and 8 peers:
   messages delivered, signatures made and verifications (each peer verifies each distinct
   message it receives once) per claim. Deterministic: run it on two branches to compare.
4. **CPU per input of one peer, live** (issue 18, session 17): seat 0's inputs of those games
   (every message, tick and move, with its time) replayed into a fresh peer with a codec memo
   of its own, each followed by what the node asks after every input (the next deadline,
   whether the table is gone); the effects must be the very ones of the game. Its verifies
   are real: the figure less the verifies is the core's Python per input. Under
   ``valgrind --tool=callgrind`` the same replay counts instructions (the load does not move
   them): the way to compare two branches of the core on this machine. ``--opcodes TOP``
   counts the replay's Python opcodes instead, function by function (where the Python is).
   ``--merged`` counts what one input less saves (session 26): the same replay, and again
   with each two consecutive message inputs fed as one (``feed_many``, as the node feeds a
   burst) wherever the first of the two sent and logged nothing (so that every event of ours
   stays the game's, byte for byte); the opcodes saved per input merged away.

Medians over repeats; machines here are noisy, so the ratios are the figures to compare.

    python scripts/bench_protocol.py [--repeats 5] [--opcodes TOP] [--merged]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2p_nertz import build
from p2p_nertz.protocol import envelope
from p2p_nertz.protocol.envelope import EnvelopeCache, decode_message
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Record, Reserve, Send
from p2p_nertz.protocol.state import ClaimDecided
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, SimConfig, Simulation

TARGET_RATIO = 0.5


def record_game(players: int = 4, seed: int = 1) -> tuple[Simulation, list[bytes]]:
    """A fault-free game; every event any peer sent, in the order seat 0's log has them."""
    sim = Simulation(SimConfig(players=players, seed=seed, rules=Rules(target=None, rounds=1)))
    result = sim.run()
    # Every peer's log holds its own events and what it received: seat 0's is a full game.
    return sim, list(result.logs[0])


def verify_rate(samples: list[bytes], repeats: int) -> float:
    """Bare Ed25519 verifies per second over messages shaped like the game's."""
    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    signed = [(m, key.sign(m)) for m in samples]
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for message, signature in signed:
            public.verify(signature, message)
        rates.append(len(signed) / (time.perf_counter() - start))
    return statistics.median(rates)


def sodium_verify_rate(samples: list[bytes], repeats: int) -> float | None:
    """Bare libsodium (PyNaCl) Ed25519 verifies per second, or None without PyNaCl."""
    try:
        import nacl.signing
    except ImportError:
        return None
    key = nacl.signing.SigningKey.generate()
    public = key.verify_key
    signed = [(m, key.sign(m).signature) for m in samples]
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for message, signature in signed:
            public.verify(message, signature)
        rates.append(len(signed) / (time.perf_counter() - start))
    return statistics.median(rates)


def core_rate(sim: Simulation, log: list[bytes], repeats: int) -> tuple[float, int]:
    """Events per second through Peer.restore's receive path (the same as live feed)."""
    quiet = PeerConfig(ack_delay=1e9, beat_interval=1e9)  # no signing while measuring
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        # (A new peer has a new codec memo of its own: every signature is checked for real.)
        peer, _ = Peer.restore(sim.identities[0], sim.spec, log, 0.0, quiet)
        elapsed = time.perf_counter() - start
        rates.append(len(log) / elapsed)
        assert peer.held(0) > 0
    return statistics.median(rates), len(log)


def finality(players: int, delay: float, seed: int = 2) -> list[float]:
    """Claim send -> final at every peer, in round trips, for a fault-free game."""
    config = SimConfig(
        players=players,
        seed=seed,
        faults=Faults(delay=delay, jitter=0.0),
        record_effects=True,
    )
    result = Simulation(config).run()
    send_at: dict[tuple[int, int], float] = {}
    finals: dict[tuple[int, int], list[float]] = {}
    for now, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.to is None:
            message = decode_message(effect.data)
            if message.kind.name == "CLAIM":
                send_at[(message.lamport, seat)] = now
        elif isinstance(effect, ClaimDecided):
            claim = effect.resolution.claim
            finals.setdefault((claim.lamport, claim.seat), []).append(now)
    return [
        (max(times) - send_at[key]) / (2 * delay)
        for key, times in finals.items()
        if key in send_at and len(times) == players
    ]


@dataclass(frozen=True)
class Counts:
    """What a fault-free simulated game sent, per claim (deterministic: the clean figure)."""

    claims: int
    messages: float  #: messages delivered (one send to all members counts once per receiver)
    signs: float  #: messages signed (events, beats, acks, wants), each once
    verifies: float  #: distinct messages each peer received (a peer verifies each once)
    by_kind: dict[str, float]  #: messages delivered per claim, by kind


def message_counts(players: int, seed: int = 2, rounds: int = 2) -> Counts:
    """Messages, signatures and verifications per claim in a fault-free game of ``players``
    (1 ms one-way, some jitter), counted from the effects of the run. Old beats a peer
    dropped unverified (``Inbox.unverified``, protocol version 2) are taken off the verifies."""
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        faults=Faults(delay=0.001, jitter=0.0005),
        record_effects=True,
    )
    result = Simulation(config).run()
    peer_ids = result.spec.peer_ids
    signed: set[bytes] = set()
    received: set[tuple[int, bytes]] = set()
    claims: set[bytes] = set()
    delivered = 0
    by_kind: dict[str, int] = {}
    for _, seat, effect in result.effects:
        if not isinstance(effect, Send):
            continue
        message = decode_message(effect.data)
        if message.author == peer_ids[seat]:
            signed.add(effect.data)
        if message.kind.name == "CLAIM":
            claims.add(effect.data)
        targets = (
            [s for s in range(players) if s != seat]
            if effect.to is None
            else [peer_ids.index(effect.to)]
        )
        delivered += len(targets)
        kind = message.kind.name.lower()
        by_kind[kind] = by_kind.get(kind, 0) + len(targets)
        received.update((t, effect.data) for t in targets)
    skipped = sum(
        getattr(getattr(p, "_inbox", None), "unverified", 0) for p in result.peers if p is not None
    )
    n = max(1, len(claims))
    return Counts(
        claims=len(claims),
        messages=delivered / n,
        signs=len(signed) / n,
        verifies=(len(received) - skipped) / n,
        by_kind={k: v / n for k, v in sorted(by_kind.items())},
    )


@dataclass(frozen=True)
class AckFigures:
    """What fault-free simulated games sent per claim, and each claim's finality at its author
    and at every other member (issue 18, session 20: what the acks cost and buy)."""

    claims: int
    messages: float  #: sends delivered per claim (a relayed message counts once per receiver)
    bursts: float  #: the same, with what one peer relays to one member at one instant as one
    signs: float
    verifies: float
    acks: float  #: acks delivered per claim, its author's own sends
    relayed: float  #: messages delivered per claim by a peer that did not sign them
    author: list[float]  #: ms from a claim's send to its finality at its author
    others: list[float]  #: ms from a claim's send to its finality at each other member


def ack_figures(
    players: int, peer: PeerConfig, seeds: tuple[int, ...] = (2, 3, 4, 5, 6, 7)
) -> AckFigures:
    """Fault-free 2-round games of ``players`` (1 ms one-way, 0.5 ms jitter), one per seed,
    summed: messages, signatures, verifies and acks per claim, and every claim's finality at
    its author and at the others (deterministic: run it on two branches to compare)."""
    sends = bursts = acks = relayed = claims = skipped = 0
    signed_count = 0
    verified = 0
    author: list[float] = []
    others: list[float] = []
    for seed in seeds:
        config = SimConfig(
            players=players,
            seed=seed,
            rules=Rules(target=None, rounds=2),
            faults=Faults(delay=0.001, jitter=0.0005),
            record_effects=True,
            peer=peer,
        )
        result = Simulation(config).run()
        peer_ids = result.spec.peer_ids
        signed: set[bytes] = set()
        received: set[tuple[int, bytes]] = set()
        instants: set[tuple[float, int, int]] = set()
        sent_at: dict[tuple[int, int], float] = {}
        for now, seat, effect in result.effects:
            if isinstance(effect, ClaimDecided):
                claim = effect.resolution.claim
                start = sent_at.get((claim.lamport, claim.seat))
                if start is not None:
                    (author if seat == claim.seat else others).append((now - start) * 1e3)
                continue
            if not isinstance(effect, Send):
                continue
            message = decode_message(effect.data)
            own = message.author == peer_ids[seat]
            targets = (
                [s for s in range(players) if s != seat]
                if effect.to is None
                else [peer_ids.index(effect.to)]
            )
            sends += len(targets)
            received.update((t, effect.data) for t in targets)
            if own:
                signed.add(effect.data)
                bursts += len(targets)
                if message.kind.name == "ACK":
                    acks += len(targets)
                if message.kind.name == "CLAIM" and effect.to is None:
                    sent_at[(message.lamport, seat)] = now
                    claims += 1
            else:
                relayed += len(targets)
                for t in targets:
                    if (now, seat, t) not in instants:
                        instants.add((now, seat, t))
                        bursts += 1
        signed_count += len(signed)
        verified += len(received)
        skipped += sum(
            getattr(getattr(p, "_inbox", None), "unverified", 0)
            for p in result.peers
            if p is not None
        )
    n = max(1, claims)
    return AckFigures(
        claims=claims,
        messages=sends / n,
        bursts=bursts / n,
        signs=signed_count / n,
        verifies=(verified - skipped) / n,
        acks=acks / n,
        relayed=relayed / n,
        author=sorted(author),
        others=sorted(others),
    )


def _median_p99(values: list[float]) -> str:
    if not values:
        return "-"
    p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
    return f"{statistics.median(values):5.2f}/{p99:5.2f}"


def print_acks(node: PeerConfig) -> None:
    """Issue 18, session 20: the ack window's values, on the simulator's timers and on the
    runtime's (``node``), per claim at 2, 4 and 8 peers (docs/latency.md, "Session 20")."""
    print("acks per claim, fault-free simulated games (deterministic; 1 ms one-way, 6 seeds):")
    print("  finality in ms, median/p99, from the claim's send; msgs: sends delivered")
    print(
        f"  {'timers':<22}{'peers':>5}{'claims':>7}{'msgs':>8}{'bursts':>8}{'acks':>7}"
        f"{'relayed':>8}{'signs':>7}{'verifies':>9}  {'at author':>11}  {'at others':>11}"
    )
    rows = [(f"ack window {d * 1e3:g} ms", PeerConfig(ack_delay=d)) for d in ACK_WINDOWS]
    rows.append(("runtime's (NODE_CONFIG)", node))
    for name, config in rows:
        for players in (2, 4, 8):
            f = ack_figures(players, config)
            print(
                f"  {name:<22}{players:>5}{f.claims:>7}{f.messages:8.2f}{f.bursts:8.2f}"
                f"{f.acks:7.2f}{f.relayed:8.2f}{f.signs:7.2f}{f.verifies:9.2f}  "
                f"{_median_p99(f.author):>11}  {_median_p99(f.others):>11}",
                flush=True,
            )


#: The ack windows :func:`print_acks` tries (seconds).
ACK_WINDOWS = (0.0, 0.0005, 0.001, 0.002, 0.005)


#: What the simulator asks of a peer (its inputs), recorded by :func:`recorded_inputs`.
INPUTS = ("start", "feed", "tick", "play", "release_ready", "leave", "abandon")


def recorded_inputs(
    players: int, seed: int = 2, rounds: int = 2, peer: PeerConfig | None = None
) -> tuple[Simulation, list[tuple[str, tuple[object, ...]]], list[list[Effect]]]:
    """Seat 0's inputs of :func:`message_counts`' game, in order, and what each returned
    (``peer``: the peers' configuration, the core's default if ``None``)."""
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        faults=Faults(delay=0.001, jitter=0.0005),
        peer=peer if peer is not None else PeerConfig(),
    )
    sim = Simulation(config)
    peer = sim.peers[0]
    assert peer is not None
    inputs: list[tuple[str, tuple[object, ...]]] = []
    returned: list[list[Effect]] = []
    # The simulator reads its peers from this list: seat 0's is wrapped for the run, not
    # patched (a compiled Peer's methods cannot be replaced: p2p_nertz/build.py).
    sim.peers[0] = _Recorder(peer, inputs, returned)  # type: ignore[assignment]
    try:
        sim.run()
    finally:
        sim.peers[0] = peer
    return sim, inputs, returned


class _Recorder:
    """A peer as the simulator sees it, noting each of its :data:`INPUTS` and what it
    returned; every other attribute is the peer's own."""

    def __init__(
        self,
        peer: Peer,
        inputs: list[tuple[str, tuple[object, ...]]],
        returned: list[list[Effect]],
    ) -> None:
        self._peer = peer
        self._inputs = inputs
        self._returned = returned

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._peer, name)
        if name not in INPUTS:
            return value

        def recorded(*args: object) -> object:
            self._inputs.append((name, args))
            effects = value(*args)
            self._returned.append(effects)
            return effects

        return recorded


def replay(
    sim: Simulation, inputs: list[tuple[str, tuple[object, ...]]]
) -> tuple[float, list[list[Effect]]]:
    """Seat 0's inputs fed to a fresh peer as the node feeds them: its CPU time (seconds) and
    what each input returned."""
    peer = Peer(sim.identities[0], sim.spec, 0.0, sim.config.peer, envelopes=EnvelopeCache())
    returned = []
    start = time.process_time()
    for name, args in inputs:
        returned.append(getattr(peer, name)(*args))
        peer.next_deadline()  # (what PeerNode._apply and its end check ask after each input)
        peer.table_gone(args[-1])  # type: ignore[arg-type]
    return time.process_time() - start, returned


def opcodes(
    sim: Simulation, inputs: list[tuple[str, tuple[object, ...]]]
) -> tuple[int, Counter[str], Counter[str]]:
    """The Python opcodes :func:`replay` runs (a trace hook counts each one, under the
    function running it): the total, each function's own, and how many times each function
    was called (deterministic too: e.g. how many reads of the tentative fold made one,
    ``Folds._cut_unheld``, docs/latency.md session 20). The count does not move with the load
    and names the function; it does not weigh a call into C (``min``, ``zip``, a hash), so a
    change that trades Python steps for C calls is judged by instructions (callgrind) or CPU,
    not by this (docs/latency.md, session 18)."""
    counts: Counter[CodeType] = Counter()
    calls: Counter[CodeType] = Counter()

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts[frame.f_code] += 1
        elif event == "call":
            calls[frame.f_code] += 1
        return trace

    replay(sim, inputs)  # (warm: the first run makes what is made once)
    sys.settrace(trace)
    try:
        replay(sim, inputs)
    finally:
        sys.settrace(None)
    named: Counter[str] = Counter()
    called: Counter[str] = Counter()
    for code in counts.keys() | calls.keys():
        where = code.co_filename.rsplit("p2p_nertz/", 1)[-1]
        name = f"{where}:{code.co_firstlineno} {code.co_qualname}"
        named[name] += counts[code]
        called[name] += calls[code]
    return sum(counts.values()), named, called


def merged_inputs(
    inputs: list[tuple[str, tuple[object, ...]]], returned: list[list[Effect]]
) -> list[tuple[str, tuple[object, ...]]]:
    """``inputs`` with each two consecutive messages fed as one input (``feed_many``, at the
    second's time) wherever the first returned no effect to send or log: our events, and
    every clock we send, stay the game's, so the rest of the game replays as it was."""
    merged: list[tuple[str, tuple[object, ...]]] = []
    i = 0
    while i < len(inputs):
        name, args = inputs[i]
        quiet = not any(isinstance(e, (Send, Record, Reserve)) for e in returned[i])
        if name == "feed" and quiet and i + 1 < len(inputs) and inputs[i + 1][0] == "feed":
            later = inputs[i + 1][1]
            merged.append(("feed_many", ([args[0], later[0]], later[1])))
            i += 2
        else:
            merged.append((name, args))
            i += 1
    return merged


def claim_path(
    sim: Simulation, inputs: list[tuple[str, tuple[object, ...]]]
) -> dict[str, tuple[int, float, float, float]]:
    """The Python opcodes of seat 0's feeds of the others' claims and acks, on the way to a
    claim's finality (docs/latency.md, sessions 21 and 23): for each of the two kinds, how many
    feeds, the opcodes per feed before the receive path delivers the event
    (``Delivery.deliver``; an ack delivers no event of its own), before our ack of it is
    signed (``Outbox.sign_beat``; the whole feed if it signs none), and in all. Replayed as
    :func:`replay` does, after one replay to warm it; deterministic."""
    kinds = [
        decode_message(args[0]).kind.name if name == "feed" else ""  # type: ignore[arg-type]
        for name, args in inputs
    ]
    counts: dict[str, list[int]] = {"CLAIM": [0, 0, 0, 0], "ACK": [0, 0, 0, 0]}
    # the kind's counts, whether not delivered yet, whether our ack is not signed yet
    current: list[Any] = [None, True, True]

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            current[0][3] += 1
            current[0][1] += current[1]
            current[0][2] += current[2]
        elif event == "call":
            name = frame.f_code.co_qualname
            if name == "Delivery.deliver":
                current[1] = False
            elif name == "Outbox.sign_beat":
                current[2] = False
        return trace

    replay(sim, inputs)  # (warm)
    peer = Peer(sim.identities[0], sim.spec, 0.0, sim.config.peer, envelopes=EnvelopeCache())
    for (name, args), kind in zip(inputs, kinds, strict=True):
        traced = kind in counts
        if traced:
            current[:] = [counts[kind], True, True]
            counts[kind][0] += 1
            sys.settrace(trace)
        try:
            getattr(peer, name)(*args)
        finally:
            sys.settrace(None)
        peer.next_deadline()
        peer.table_gone(args[-1])  # type: ignore[arg-type]
    return {
        k: (n, before / max(1, n), acked / max(1, n), total / max(1, n))
        for k, (n, before, acked, total) in counts.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--opcodes",
        type=int,
        metavar="TOP",
        help="only count the Python opcodes per input of seat 0's replayed inputs at 2, 4 "
        "and 8 peers, and print the TOP functions by their own count",
    )
    parser.add_argument(
        "--acks",
        action="store_true",
        help="only print the acks' figures: messages, signatures, verifies and acks per claim "
        "and finality at the author and at the others, per ack window, at 2, 4 and 8 peers",
    )
    parser.add_argument(
        "--claim-path",
        action="store_true",
        help="only count the Python opcodes of seat 0's feeds of the others' claims (before "
        "and after the claim's delivery) and acks, at 2, 4 and 8 peers",
    )
    parser.add_argument(
        "--merged",
        action="store_true",
        help="only count the Python opcodes that feeding two messages as one input saves, "
        "seat 0's inputs replayed at 2, 4 and 8 peers",
    )
    args = parser.parse_args()
    if args.merged:
        print("Python opcodes of seat 0's inputs replayed, and with message pairs as one input:")
        for players in (2, 4, 8):
            sim, inputs, returned = recorded_inputs(players)
            merged = merged_inputs(inputs, returned)
            fewer = len(inputs) - len(merged)
            alone, together = opcodes(sim, inputs)[0], opcodes(sim, merged)[0]
            print(
                f"  {players} peers: {alone / len(inputs):,.0f} per input over {len(inputs)} "
                f"inputs; {fewer} pairs fed as one: {(alone - together) / fewer:,.0f} opcodes "
                f"saved per input merged away ({(alone - together) / alone:.1%} of the replay)"
            )
        return 0
    if args.claim_path:
        print("Python opcodes per feed of seat 0, its inputs replayed (deterministic):")
        for name, config in (
            ("the core's ack window (2 ms)", None),
            ("the runtime's: acks at once", PeerConfig(ack_delay=0.0)),
        ):
            print(f" {name}:")
            for players in (2, 4, 8):
                sim, inputs, _ = recorded_inputs(players, peer=config)
                path = claim_path(sim, inputs)
                (claims, before, acked, total), (acks, _, _, ack_total) = (
                    path["CLAIM"],
                    path["ACK"],
                )
                print(
                    f"  {players} peers: a claim's feed {before:7.1f} before its delivery, "
                    f"{acked:7.1f} before its ack, {total:7.1f} in all ({claims} feeds); "
                    f"an ack's {ack_total:7.1f} ({acks} feeds)"
                )
        return 0
    if args.acks:
        from p2p_nertz.runtime.node import NODE_CONFIG

        print_acks(NODE_CONFIG)
        return 0
    if args.opcodes is not None:
        for players in (2, 4, 8):
            sim, inputs, _ = recorded_inputs(players)
            total, named, called = opcodes(sim, inputs)
            n = len(inputs)
            print(f"{players} peers: {total / n:,.1f} Python opcodes per input ({n} inputs)")
            print("  opcodes per input (the function's own), calls in the replay, function")
            for name, count in named.most_common(args.opcodes):
                print(f"  {count / n:8.1f} {called[name]:7,d}  {name}")
            # The tentative fold: its reads that made it (the others shared the final fold
            # or were made already), and the copies of the final fold.
            for name in ("Folds._cut_unheld", "GameState.copy", "GameState.apply"):
                made = sum(c for k, c in called.items() if k.endswith(" " + name))
                print(f"  calls of {name}: {made:,d}")
        return 0

    print(f"the core: {build.describe()} (p2p_nertz/build.py)")
    sim, log = record_game()
    events = [decode_message(w) for w in log]
    samples = [envelope.SIGNATURE_DOMAIN + m.payload for m in events]
    v_rate = verify_rate(samples, args.repeats)
    c_rate, n = core_rate(sim, log, args.repeats)
    ratio = c_rate / v_rate
    print(f"bare Ed25519 verifies/s:                 {v_rate:10,.0f}")
    print(f"peer core events/s (decode+verify+fold): {c_rate:10,.0f}   ({n} events of a game)")
    print(f"ratio core / verify:                     {ratio:10.2f}   (target >= {TARGET_RATIO})")
    sodium = sodium_verify_rate(samples, args.repeats)
    if sodium is None:
        print("libsodium verifies/s: PyNaCl is not installed (pip install -e '.[bench]')")
    else:
        print(f"libsodium (PyNaCl) bare verifies/s:      {sodium:10,.0f}")
        print(f"ratio core / libsodium verify:           {c_rate / sodium:10.2f}")

    delay = 0.005
    ack = PeerConfig().ack_delay / (2 * delay)
    ok = ratio >= TARGET_RATIO
    for players in (2, 4, 8):
        rtts = sorted(finality(players, delay))
        median = statistics.median(rtts)
        p99 = rtts[min(len(rtts) - 1, int(0.99 * len(rtts)))]
        print(
            f"finality, {players} peers: median {median:.2f} RTT, p99 {p99:.2f} RTT "
            f"over {len(rtts)} claims (target <= 1 + {ack:.2f} ack window)"
        )
        ok = ok and median <= 1 + ack + 1e-9
    print("per claim, fault-free simulated games (deterministic; 1 ms one-way):")
    for players in (2, 4, 8):
        c = message_counts(players)
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in c.by_kind.items())
        print(
            f"  {players} peers: {c.messages:6.2f} messages, {c.signs:5.2f} signs, "
            f"{c.verifies:6.2f} verifies per claim over {c.claims} claims ({kinds})"
        )
    print("CPU per input of seat 0, its inputs replayed into a fresh peer (least of the repeats):")
    for players in (2, 4, 8):
        sim, inputs, returned = recorded_inputs(players)
        runs = [replay(sim, inputs) for _ in range(args.repeats)]
        if any(effects != returned for _, effects in runs):
            print(f"  {players} peers: THE REPLAY DIFFERS from the game")
            ok = False
            continue
        feeds = sum(1 for name, _ in inputs if name == "feed")
        best = min(cpu for cpu, _ in runs)
        print(
            f"  {players} peers: {best / len(inputs) * 1e6:6.1f} µs per input over {len(inputs)} "
            f"inputs ({feeds} messages, each verified)"
        )
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
