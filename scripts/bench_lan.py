#!/usr/bin/env python3
"""Benchmark claims on a LAN: delivery and finality on real sockets, against bare pyzmq and Pyre.

Issue #4. In one run:

1. **The floor**: the bare pyzmq DEALER→ROUTER round trip (blocking sockets, an echoing ROUTER in
   another process), with a payload the size of a claim envelope, back to back (the floor of
   the ratios) and one every 20 ms (game traffic is sparse: idle wake-ups cost more); on
   loopback and across the lab's bridge; and the same through the trio adapter (``zmqtrio``).
2. **Our claims**: greedy bots play one round at full speed (``speed=10``; ``--speed`` for
   another pace), one process per peer (real sockets on 127.0.0.1, real logs with fsync,
   real signatures), for 2, 4 and 8 peers.
   For every claim: *delivery* = sent (handed to the DEALERs, after its durable log write) →
   verified and delivered at every other peer; *finality* = sent → final (Lamport ≤
   ``Peer.stable``) at every peer, the author included. ``time.perf_counter_ns``
   (CLOCK_MONOTONIC, shared by every process and network namespace of the machine) stamps
   the events; each process writes its stamps to a JSON file. The same games run again inside
   a network-namespace lab (peers at 10.77.0.x, explicit endpoints) for a fair comparison
   with Pyre. A full run adds 4 peers with the peer core's default 2 ms ack window (the
   runtime acks each burst at once), and 4 peers with logs on tmpfs, to separate the
   product's choices and the disk from the protocol's cost.
3. **Pyre** (``zeromq-pyre`` 0.3.4, Zyre's Python port; the ``bench`` extra): the same number
   of nodes, **only inside the lab's namespaces** (it discovers peers by UDP broadcast; each
   node checks that its only interface is the lab's before starting), SHOUT a payload of the
   claim's size to one group, 20 a second each; delivery = shout → received at every other node.

Also printed: messages received per second per peer, peak RSS and CPU share per peer process,
the backlog trend (held events not final + received events waiting for their causal past +
sends queued, sampled every 250 ms, first quarter of play against the last), and where a
claim's time goes (log append, synced and as awaited, hand-off to the first and the last
DEALER, ROUTER arrival, lock wait, verify and deliver, delivery at the first receiver), and
on the receive side how many claims found the receive loop already waiting when they were
sent and the verify and deliver as the trio thread's CPU beside the clock's time, and the
receive loop's bursts in play (messages fed a receive turn and an input to the core, inputs a
turn: a burst's events, then its beats; docs/latency.md, session 26).
With ``--tasks``, each game's CPU in play by trio task (receive, bot, timer, the sampler), by
the scheduler outside the tasks' steps and by zmq's I/O thread: an instrument in every peer.
With ``--kinds``, the messages sent, signatures made and signatures verified per final claim
by kind (the claim, the other moves, the other events, acks, beats, wants), from each
process's counters (each counted message's payload unpacked once more: a few µs, charged to
the CPU per claim of that run).
Verdicts per target at the end, printed, not enforced.
With ``--deal shuffle`` (issue 19) it plays only loopback games of the dealerless shuffle, at 2,
3 and 4 peers unless ``--peers`` says otherwise (``--tmpfs``: each again with the logs on
tmpfs), and prints for each a **turn-up** (a move or claim that turns cards up sent -> every
member's share of each card delivered at the mover, and at every peer) beside a claim's
finality in the same game, where a turn-up's time goes (the move out, the share made, its log
write, back), and the share work's CPU per position opened per peer (thread time); the floor
is the paced round trip. The default output is unchanged.
With 2 cores, 8 peer processes share 2 CPUs with everything else on the machine: latencies at
8 peers include run-queue waits (the load average at the start is printed).

    python scripts/bench_lan.py [--quick] [--peers 2,4,8] [--no-lab] [--no-loopback]
                                [--no-pyre] [--inproc] [--seconds S] [--nice N] [--tasks]
                                [--kinds]
    python scripts/bench_lan.py --deal shuffle [--peers 2,3,4] [--tmpfs] [--seconds S]

A full run takes about 5 minutes (6 with ``--inproc``: every peer count again with all peers
in one process); ``--quick`` plays a few seconds per configuration instead of a whole round.
The lab needs root and iproute2; Pyre needs ``pip install -e '.[bench]'``; each is skipped,
with the reason printed, when missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import os
import resource
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import trio

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
# Run as a file, the project is importable without installing; an installed package is used
# as it is (a compiled build, README "Install", would otherwise be shadowed by this tree's
# sources: session 43). The report says which build the parent and every peer ran, and where
# from.
if str(ROOT) not in sys.path and importlib.util.find_spec("p2p_nertz") is None:
    sys.path.insert(0, str(ROOT))

import round_trips  # noqa: E402
from ports import introduce, read_bound, read_peers, say_bound, zmq_bound  # noqa: E402
from round_trips import PACED_GAP  # noqa: E402

from cli.bots import FREE_PORT  # noqa: E402
from p2p_nertz import build  # noqa: E402
from p2p_nertz.errors import NertzError  # noqa: E402
from p2p_nertz.protocol.feeds import Source  # noqa: E402
from p2p_nertz.protocol.peer import PeerConfig  # noqa: E402
from p2p_nertz.runtime.node import NODE_CONFIG  # noqa: E402
from p2p_nertz.testing.said import lines  # noqa: E402

NS_PER_US = 1000
GROUP = "nertz-bench"
LAB_PORT = 5555  # every namespace has its own port space
SAMPLE_INTERVAL = 0.25  # seconds between samples (their CPU is the benchmark's, not the peers')
RSS_TARGET_MB = 80.0
DEFAULT_ACK_DELAY = NODE_CONFIG.ack_delay  # the runtime's ack window (none: acks per burst)
CORE_ACK_DELAY = PeerConfig().ack_delay  # the peer core's default window (the simulator's)
MESSAGE_GAP = 0.002  # seconds between messages when timing a sparse message's CPU
CPU_TARGET = 1.5  # CPU per final claim at 4 peers, at most this × its floor (issue 18)
PYRE_INTERVAL = 0.05  # seconds between two shouts of one Pyre node (±25 %)
PYRE_DISCOVERY = 8.0  # seconds the Pyre nodes get to find each other (beacons once a second)
FALLBACK_SIZE = 200  # claim envelope bytes, if no game measured one
INCOMPLETE_TAIL_NS = 2_000_000_000  # claims sent this close to a stop may not have completed
CHILD_GRACE = 30.0  # seconds a child may run past its planned stop before it is killed


# -- small helpers -----------------------------------------------------------------------------
def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def median(values: Sequence[float]) -> float:
    """The median, or NaN for no values."""
    return statistics.median(values) if values else float("nan")


def p99(values: Sequence[float]) -> float:
    """The 99th percentile, or NaN for no values."""
    return pct(values, 0.99) if values else float("nan")


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def core_build() -> str:
    """The core this process runs: interpreted or compiled (p2p_nertz/build.py), and the
    folder it was imported from (an installed build, or a tree's sources)."""
    return f"{build.describe()} from {Path(build.__file__).resolve().parent}"


def peers_build_line(games: Sequence[GameFigures]) -> str:
    """The core the peers of ``games`` ran, as they reported it, beside this process's."""
    ours = core_build()
    theirs = sorted({b for g in games for b in g.builds})
    if theirs == [ours]:
        return f"the core {ours}, in this process and every peer"
    said = "; ".join(theirs) or "no peer reported"
    return f"the core {ours} in this process; the peers': {said} (NOT the same)"


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pyre_available() -> str | None:
    """Why Pyre cannot be used here, or ``None``."""
    if importlib.util.find_spec("pyre") is None:
        return "zeromq-pyre is not installed (pip install -e '.[bench]')"
    return None


def lab_unavailable() -> str | None:
    """Why no network-namespace lab can be made here, or ``None``."""
    from p2p_nertz.testing.netns import unavailable

    return unavailable()


# == children ==================================================================================
# Every measured party runs in a process of its own, started as ``bench_lan.py _ROLE ...``.


# -- the floor: blocking pyzmq ping-pong (the echo: round_trips.zmq_echo) ----------------------
def child_ping(endpoint: str, count: int, paced: int, size: int) -> int:
    """A DEALER that times round trips of ``size`` bytes to the echo: ``count`` back to back and
    ``paced`` one every :data:`PACED_GAP` seconds, with blocking pyzmq and then through the trio
    adapter (and, paced, bare pyzmq waited on by trio); prints the lists of RTTs (ns) as JSON,
    then stops the echo."""
    import trio
    import zmq

    from p2p_nertz.runtime.zmqtrio import open_dealer

    payload = os.urandom(size)
    warmup = 100
    ctx = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)

    async def through_trio() -> tuple[list[int], list[int]]:
        async with open_dealer(ctx, endpoint) as adapter:
            await round_trips.adapter(adapter, payload, warmup, 0)
            return (
                await round_trips.adapter(adapter, payload, count // 4, 0),
                await round_trips.adapter(adapter, payload, paced, PACED_GAP),
            )

    # The bare trio loop (round_trips.trio_pyzmq) waits on the blocking DEALER's own FD, to
    # tell trio's wake-up from the adapter's cost.
    round_trips.blocking(dealer, payload, warmup, 0)
    figures = {
        "bare": round_trips.blocking(dealer, payload, count, 0),
        "bare paced": round_trips.blocking(dealer, payload, paced, PACED_GAP),
    }
    trio.run(round_trips.trio_pyzmq, dealer, payload, warmup, 0)
    figures["bare trio"] = trio.run(round_trips.trio_pyzmq, dealer, payload, count // 4, 0)
    figures["bare trio paced"] = trio.run(round_trips.trio_pyzmq, dealer, payload, paced, PACED_GAP)
    figures["trio"], figures["trio paced"] = trio.run(through_trio)
    dealer.send(b"STOP")
    dealer.recv()
    dealer.close()
    ctx.term()
    print(json.dumps(figures), flush=True)
    return 0


def child_sink(endpoint: str, count: int) -> int:
    """A blocking ROUTER that receives ``count`` messages; prints the CPU seconds (every thread
    of the process) from the first message to the last."""
    import zmq

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.setsockopt(zmq.RCVHWM, 0)
    router.bind(endpoint)
    say_bound(zmq_bound(router))
    router.recv_multipart()
    start = cpu_seconds()
    for _ in range(count - 1):
        router.recv_multipart()
    print(json.dumps(cpu_seconds() - start), flush=True)
    router.close()
    ctx.term()
    return 0


def child_source(endpoint: str, count: int, size: int, gap: float) -> int:
    """A blocking DEALER that sends ``count`` messages of ``size`` bytes, one every ``gap``
    seconds (0: back to back); prints its CPU seconds for them (every thread)."""
    import zmq

    ctx = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, -1)  # deliver everything before term()
    dealer.setsockopt(zmq.SNDHWM, 0)
    dealer.connect(endpoint)
    payload = os.urandom(size)
    dealer.send(payload)  # the first one waits for the connection
    time.sleep(0.2)
    start = cpu_seconds()
    for _ in range(count - 1):
        dealer.send(payload)
        if gap:
            time.sleep(gap)
    used = cpu_seconds() - start
    dealer.close()
    ctx.term()
    print(json.dumps(used), flush=True)
    return 0


def message_cost_us(count: int, size: int, gap: float) -> float:
    """CPU µs of one bare pyzmq message, sent and received (both processes, every thread)."""
    sink = subprocess.Popen(
        [*_python(), "_sink", FREE_PORT, str(count)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert sink.stdout is not None
        endpoint = read_bound(sink)
        argv = [*_python(), "_source", endpoint, str(count), str(size), str(gap)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"source failed: {done.stderr.strip()}")
        sent = json.loads(done.stdout)
        # (Its count, once it read them all: bounded as the source's run, a hang's bound.)
        said = next(lines(sink, "the sink", 300), None)
        if said is None:
            raise RuntimeError(f"the sink ended without its count (exit {sink.poll()})")
        received = json.loads(said)
    finally:
        _wait_all([sink], 10)
    return float(sent + received) / (count - 1) * 1e6


def sodium_cost_us(size: int, repeats: int = 2000) -> tuple[float, float] | None:
    """Median libsodium (PyNaCl) Ed25519 sign and verify times (µs), or None without PyNaCl."""
    try:
        import nacl.signing
    except ImportError:
        return None
    key = nacl.signing.SigningKey.generate()
    public = key.verify_key
    message = os.urandom(size)
    signature = key.sign(message).signature
    signs, verifies = [], []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        key.sign(message)
        signs.append(time.perf_counter_ns() - start)
        start = time.perf_counter_ns()
        public.verify(message, signature)
        verifies.append(time.perf_counter_ns() - start)
    return median(signs) / NS_PER_US, median(verifies) / NS_PER_US


# -- our peers: PeerNode with probes -----------------------------------------------------------
def _instrumented_classes() -> tuple[type[Any], type[Any]]:
    """A :class:`Peer` subclass that stamps claims delivered and made final, and a
    :class:`PeerNode` subclass that builds it and stamps our claims as they are sent.

    PeerNode has no hook for these, so the script subclasses both, extending (never replacing)
    ``Peer.feed_many`` and the private ``Peer._receive``, ``Delivery.deliver`` (of the
    peer's receive path, which delivers its own events too),
    ``Peer._advance_final``, ``PeerNode._make_peer``, ``PeerNode._send``,
    ``PeerNode._receive_loop`` and ``PeerNode._outlet`` (given socket wrappers that stamp
    arrivals and hand-offs); nothing in the product changes.
    """
    from p2p_nertz.logfile.format import RecordKind
    from p2p_nertz.protocol.envelope import Kind
    from p2p_nertz.protocol.peer import Peer, Send
    from p2p_nertz.protocol.spec import Deal
    from p2p_nertz.runtime.node import PeerNode

    class ProbedPeer(Peer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.delivered: dict[tuple[int, int], int] = {}
            self.final_at: dict[tuple[int, int], int] = {}
            self.played: dict[int, int] = {}  # our claim seq -> stamped when signed
            self.own_claims: dict[bytes, int] = {}  # wire -> seq, until it is sent
            self.claim_sizes: list[int] = []
            self.received = 0
            self.wires_in: set[bytes] = set()  # CRYPTO_BY_WIRE: the messages verified
            # The receive loop's bursts: its turns that fed the core, its inputs
            # (feed_many calls: a turn feeds its events, then its beats, as two), messages.
            self.bursts = [0, 0, 0]
            self.fed_since_router = False  # a feed since the loop last read the ROUTER
            self.arrived = 0  # when the burst being fed arrived at the ROUTER
            self.woke = 0  # when trio's loop last came out of its I/O wait before that
            self.locked = 0  # when its feeding took the node's lock
            self.locked_cpu = 0  # the trio thread's CPU time then (thread_time_ns)
            self.called = 0  # when the receive loop last began to wait for a burst
            self.arrivals: dict[tuple[int, int], tuple[int, int]] = {}
            self._waiting: dict[tuple[int, int], int] = {}  # claim -> lamport, until final
            # The return leg. At a receiver: another's claim delivered here -> [the core's
            # feed returned (its fold, finality, our answer signed), its trio thread CPU from
            # the lock, our next message handed to the mesh (the answer: an ack or an event)].
            self.answers: dict[tuple[int, int], list[int]] = {}
            self.unanswered: list[tuple[int, int]] = []
            self.answered: list[list[int]] = []  # answers sent, until the loop waits again
            # At the author: our claim -> (the input that made it final: its burst's arrival
            # at the ROUTER, the lock taken, its CPU up to the final stamp), if a receive.
            self.final_input: dict[tuple[int, int], tuple[int, int, int, int]] = {}
            # --deal shuffle: our moves and claims that turned cards up, and when each
            # (deck, position) had every other member's share delivered here in its
            # deck_shares (known_at), or taken from its deck_reveal beat or its deck_shares,
            # whichever came first (known_any_at, docs/shuffle.md §10.14).
            self.move_wires: dict[bytes, int] = {}  # our move's or claim's wire -> seq
            self.turned: dict[int, list[tuple[int, int]]] = {}  # our move's seq -> positions
            self.known_at: dict[tuple[int, int], int] = {}
            self.known_any_at: dict[tuple[int, int], int] = {}
            self._share_authors: dict[tuple[int, int], set[int]] = {}
            self._any_authors: dict[tuple[int, int], set[int]] = {}
            # (deck, position, maker) -> when its share first came here in a deck_reveal
            self.reveal_at: dict[tuple[int, int, int], int] = {}
            self.moves_in: dict[tuple[int, int], int] = {}  # the others' moves, delivered
            self.shares_at: dict[tuple[int, int], int] = {}  # (author, seq) delivered here
            self.shares_where: dict[int, list[tuple[int, int]]] = {}  # our shares' positions
            self.share_wires: dict[bytes, int] = {}  # our shares' wires -> seq, until sent
            # Every event, ours and the others', is delivered by the receive path's deliver.
            deliver = self._delivery.deliver

            def probed(seat: int, message: Any, body: Any, now: float, *, source: Source) -> None:
                deck = self.tentative.round.deck if self._shuffle else None
                count = len(deck.turned) if deck is not None else 0
                deliver(seat, message, body, now, source=source)
                self._delivered(seat, message)
                if self._shuffle:
                    self._turnup_probe(seat, message, body)
                    if seat == self.seat and message.kind in (Kind.MOVE, Kind.CLAIM):
                        self._turned_by(message.seq, count)

            self._delivery.deliver = probed
            self._shuffle = self.spec.deal is Deal.SHUFFLE
            self.input_began: tuple[str, float] | None = None  # (INPUT_CPU's key, thread time)
            # Every deck_reveal taken (a share beat of another member, or a relay's).
            take_reveal = self._delivery._receive_reveal

            def heard(seat: int, message: Any, body: Any, now: float, recovery: Any) -> Any:
                self._reveal_probe(body)
                return take_reveal(seat, message, body, now, recovery)

            self._delivery._receive_reveal = heard

        def _turned_by(self, seq: int, count: int) -> None:
            """Our move or claim ``seq`` just folded: the positions of our deck it turned up
            (those the held fold added past ``count``; deck d is member d's, every seat a
            member here)."""
            deck = self.tentative.round.deck
            if deck is None:
                return
            ours = [w for w in deck.turned[count:] if w[0] == self.seat]
            if ours:
                self.turned[seq] = ours

        def _reveal_probe(self, body: Any) -> None:
            stamp = time.perf_counter_ns()
            for share in body.shares:
                if share.seat == share.of_seat:
                    self.reveal_at.setdefault((share.deck, share.position, share.seat), stamp)
                    self._any_share((share.deck, share.position), share.seat, stamp)

        def _any_share(self, where: tuple[int, int], maker: int, stamp: int) -> None:
            if maker == self.seat:
                return
            makers = self._any_authors.setdefault(where, set())
            makers.add(maker)
            if len(makers) == self.spec.seats - 1 and where not in self.known_any_at:
                self.known_any_at[where] = stamp

        def _turnup_probe(self, seat: int, message: Any, body: Any) -> None:
            kind = message.kind
            stamp = time.perf_counter_ns()
            if kind in (Kind.MOVE, Kind.CLAIM):
                if seat == self.seat:
                    self.move_wires[message.wire] = message.seq
                else:
                    self.moves_in[(seat, message.seq)] = stamp
                return
            if kind is not Kind.DECK_SHARES:
                return
            where = [(share.deck, share.position) for share in body.message.shares]
            self.shares_at[(seat, message.seq)] = stamp
            if seat == self.seat:
                self.share_wires[message.wire] = message.seq
                self.shares_where[message.seq] = where
                return  # (our own share: we made it, it is not waited for)
            others = self.spec.seats - 1
            for w in where:
                authors = self._share_authors.setdefault(w, set())
                authors.add(seat)
                if len(authors) == others and w not in self.known_at:
                    self.known_at[w] = stamp
                self._any_share(w, seat, stamp)

        def feed_many(self, messages: Iterable[bytes], now: float) -> list[Any]:
            burst = list(messages)
            self.bursts[0] += not self.fed_since_router
            self.bursts[1] += 1
            self.bursts[2] += len(burst)
            self.fed_since_router = True
            messages = burst
            self.locked = time.perf_counter_ns()  # the receive loop holds the node's lock
            self.locked_cpu = time.thread_time_ns()
            self.input_began = ("recv", time.thread_time())
            effects = super().feed_many(messages, now)
            if self.unanswered:
                done = time.perf_counter_ns()
                cpu = time.thread_time_ns() - self.locked_cpu
                for key in self.unanswered:
                    self.answers[key] = [done, cpu, 0, 0]
            return effects

        def play(self, move: Any, now: float) -> list[Any]:
            self.input_began = ("own", time.thread_time())
            try:
                return super().play(move, now)
            except BaseException:
                self.input_began = None  # refused (a race lost): no effects to apply
                raise

        def _receive(self, data: bytes, now: float, **options: Any) -> None:
            self.received += 1
            if not CRYPTO_BY_WIRE[0]:
                super()._receive(data, now, **options)
                return
            unverified = self._inbox.unverified
            super()._receive(data, now, **options)
            if self._inbox.unverified == unverified and data not in self.wires_in:
                self.wires_in.add(data)  # (verified once: a copy again is the envelope cache's)
                CRYPTO_CALLS["verify"] += 1

        def _delivered(self, seat: int, message: Any) -> None:
            if message.kind is Kind.CLAIM:
                stamp = time.perf_counter_ns()
                key = (seat, message.seq)
                self.delivered[key] = stamp
                if seat != self.seat:
                    cpu = time.thread_time_ns() - self.locked_cpu  # (after the stamp above)
                    self.arrivals[key] = (self.arrived, self.locked, self.called, cpu, self.woke)
                    self.unanswered.append(key)
                self._waiting[key] = message.lamport
                if seat == self.seat:
                    self.played[message.seq] = stamp
                    self.own_claims[message.wire] = message.seq
                    self.claim_sizes.append(len(message.wire))

        def _advance_final(self) -> None:
            before = self.stable
            super()._advance_final()
            if self.stable > before and self._waiting:
                stamp = time.perf_counter_ns()
                receiving = self.input_began is not None and self.input_began[0] == "recv"
                for key, lamport in list(self._waiting.items()):
                    if lamport <= self.stable:
                        self.final_at[key] = stamp
                        del self._waiting[key]
                        if receiving and key[0] == self.seat:
                            cpu = time.thread_time_ns() - self.locked_cpu
                            self.final_input[key] = (self.arrived, self.locked, cpu, self.woke)

    class StampedRouter:
        """The ROUTER as the receive loop sees it: stamps when each burst starts to arrive (the
        loop takes one message waiting, then the rest without waiting, then the lock)."""

        def __init__(self, router: Any, peer: ProbedPeer) -> None:
            self._router = router
            self._peer = peer

        async def recv_multipart(self) -> list[bytes]:
            self._peer.fed_since_router = False
            self._peer.called = time.perf_counter_ns()  # the loop waits from here
            for answer in self._peer.answered:  # (the receiver's work after its answer)
                answer[3] = self._peer.called
            self._peer.answered.clear()
            frames: list[bytes] = await self._router.recv_multipart()
            self._peer.arrived = time.perf_counter_ns()
            self._peer.woke = IO_WAKE[0]
            return frames

        def try_recv_multipart(self) -> list[bytes] | None:
            self._peer.fed_since_router = False
            more: list[bytes] | None = self._router.try_recv_multipart()
            return more

    class StampedDealer:
        """A DEALER as its outlet sees it: stamps when each of our claims is handed to zmq."""

        def __init__(self, dealer: Any, node: ProbedNode) -> None:
            self._dealer = dealer
            self._node = node

        def _stamp(self, frames: Sequence[bytes]) -> None:
            seq = self._node.claim_wires.get(frames[0])
            if seq is not None:
                self._node.handed[seq].append(time.perf_counter_ns())

        def try_send_multipart(self, frames: Sequence[bytes]) -> bool:
            start = time.perf_counter_ns()
            sent: bool = self._dealer.try_send_multipart(frames)
            if sent:
                seq = self._node.claim_wires.get(frames[0])
                if seq is not None:
                    self._node.handed[seq].append(start)
            return sent

        async def send_multipart(self, frames: Sequence[bytes]) -> None:
            # AsyncSocket.send_multipart tries zmq at once and yields only after it: stamp
            # before (the stamp after would include the wait for the next turn of the loop).
            self._stamp(frames)
            await self._dealer.send_multipart(frames)

    class ProbedNode(PeerNode):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.sent_at: dict[int, int] = {}
            self.move_sent: dict[int, int] = {}  # --deal shuffle: our move's seq -> sent
            self.shares_sent: dict[int, int] = {}  # and our deck_shares' seq -> sent
            self.claim_wires: dict[bytes, int] = {}  # our claims' wires -> seq
            self.handed: dict[int, list[int]] = {}  # seq -> when each DEALER took it
            self.messages_out = 0
            self.wires_out: set[bytes] = set()  # CRYPTO_BY_WIRE: the messages sent
            self.kinds_out: dict[str, int] | None = None  # --kinds: messages sent, by group
            self.write_io: list[int] = []  # ns in LogWriter.append_many (encode, write, fsync)
            self.write_total: list[int] = []  # ns awaiting it (+ thread hand-offs, GIL)
            self.router_socket: Any = None  # the sockets, for their statistics
            self.dealer_sockets: list[Any] = []
            if self._bot is not None:
                strategy = self._bot.strategy
                decide = strategy.decide

                def thinking(table: Any, seat: int) -> Any:
                    began = time.thread_time()
                    try:
                        return decide(table, seat)
                    finally:
                        BOT_CPU[0] += time.thread_time() - began

                strategy.decide = thinking  # type: ignore[method-assign]
                choose = self._bot.choose

                def looking(peer: Any) -> Any:
                    began = time.thread_time()
                    try:
                        return choose(peer)
                    finally:
                        INPUT_CPU["look"] += time.thread_time() - began

                self._bot.choose = looking  # type: ignore[method-assign]

        def lost_edges(self) -> tuple[int, int]:
            """Waits rescued by the adapter's safety timeout: on the ROUTER, on the DEALERs."""
            router = self.router_socket
            return (
                0 if router is None else router.statistics().lost_edges,
                sum(d.statistics().lost_edges for d in self.dealer_sockets),
            )

        def _outlet(self, dealer: Any) -> Any:
            self.dealer_sockets.append(dealer)
            stamped: Any = StampedDealer(dealer, self)  # duck-types the AsyncSocket calls used
            return super()._outlet(stamped)

        def _make_peer(self, recovery: Any) -> list[Any]:
            events = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
            if any(r.kind in events for r in recovery.records):
                raise RuntimeError("the benchmark needs fresh logs")
            now = self._clock()
            self._peer = ProbedPeer(self.identity, self.spec, now, self._config)
            return self._peer.start(now)

        def _time_appends(self) -> None:
            """Time the log's appends from now on (a fresh log exists once its first write,
            the join's, created it: that one is not an append)."""
            writer = self._log.writer
            assert writer is not None
            append_many = writer.append_many

            def timed_append_many(records: Any, *, sync: bool = True) -> None:
                # Synced appends are our own events and clock notes; the others are not synced.
                start = time.perf_counter_ns()
                try:
                    append_many(records, sync=sync)
                finally:
                    if sync:
                        self.write_io.append(time.perf_counter_ns() - start)

            writer.append_many = timed_append_many  # type: ignore[method-assign]

        async def _write(self, records: Any) -> None:
            start = time.perf_counter_ns()
            await super()._write(records)
            self.write_total.append(time.perf_counter_ns() - start)
            if len(self.write_total) == 1:
                self._time_appends()  # (after the first write, which created the log)

        async def _apply(self, effects: Any) -> None:
            await super()._apply(effects)  # (no schedule point inside: NodeLog.write waits not)
            peer = self._peer
            if isinstance(peer, ProbedPeer) and peer.input_began is not None:
                kind, began = peer.input_began
                INPUT_CPU[kind] += time.thread_time() - began
                peer.input_began = None

        async def _receive_loop(self, router: Any) -> None:
            self.router_socket = router
            peer = self._peer
            assert isinstance(peer, ProbedPeer)
            stamped: Any = StampedRouter(router, peer)  # duck-types the AsyncSocket calls used
            await super()._receive_loop(stamped)

        def _send(self, effect: Send) -> None:
            peer = self._peer
            assert isinstance(peer, ProbedPeer)
            moved = peer.move_wires.pop(effect.data, None)
            if moved is not None:
                self.move_sent[moved] = time.perf_counter_ns()
            shared = peer.share_wires.pop(effect.data, None)
            if shared is not None:
                self.shares_sent[shared] = time.perf_counter_ns()
            if peer.unanswered:  # our first message since another's claim was delivered
                stamp = time.perf_counter_ns()
                for key in peer.unanswered:
                    answer = peer.answers.get(key)
                    if answer is not None:
                        answer[2] = stamp
                        peer.answered.append(answer)
                peer.unanswered.clear()
            seq = peer.own_claims.pop(effect.data, None)
            if seq is not None:
                self.sent_at[seq] = time.perf_counter_ns()
                self.claim_wires[effect.data] = seq
                self.handed[seq] = []
            count = len(self._mesh.outlets) if effect.to is None else 1
            self.messages_out += count
            if CRYPTO_BY_WIRE[0] and effect.data not in self.wires_out:
                self.wires_out.add(effect.data)
                if wire_author(effect.data) == self.identity.peer_id:  # (not a relay's)
                    CRYPTO_CALLS["sign"] += 1
            if self.kinds_out is not None:
                group = wire_group(effect.data)
                self.kinds_out[group] = self.kinds_out.get(group, 0) + count
            super()._send(effect)

    return ProbedPeer, ProbedNode


def make_game(n: int, seed: int, deal: str = "commit") -> tuple[list[Any], Any]:
    """Identities in seat order and the spec of a one-round game of ``n`` bots."""
    from p2p_nertz.protocol.spec import Deal
    from p2p_nertz.testing.games import bot_game

    return bot_game(b"bench-lan", n, seed, deal=Deal(deal))


SAMPLER_CPU = [0.0]
"""CPU seconds this process's samplers spent taking their samples (:func:`run_seats`): the
benchmark's own work, taken out of the peers' CPU per claim."""

BOT_CPU = [0.0]
"""CPU seconds (this thread's) the bots of this process spent thinking: their strategy's
``decide`` (:func:`_instrumented_classes`), which a person's peer does not run. The rest of a
bot's move (reading the held view, signing, folding, the log write, the sends) is the core's
and the runtime's work for a move, which a person's peer pays for each of its moves too."""

INPUT_CPU = {"recv": 0.0, "own": 0.0, "look": 0.0}
"""CPU seconds (this thread's) of this process's peers' inputs, each from its call into the
core to the end of the node's handling of its effects (the log write, the sends): ``recv`` the
receive loop's (``Peer.feed_many``: a burst of messages, verified, delivered, folded, acked),
``own`` the bot's moves (``Peer.play``: signed, folded, logged, sent), ``look`` the bot's look
at the table before each (``BotDriver.choose``: the held view read, and the thinking,
:data:`BOT_CPU`). The per-message costs of the paper figure (:func:`_print_paper_cpu`)."""

SHARE_CPU = [0.0]
"""--deal shuffle: CPU seconds (this thread's) the peers of this process spent in the share
work of the round (:func:`time_share_work`)."""

CRYPTO_CALLS = {"sign": 0, "verify": 0}
"""Ed25519 signatures made and checked by the peers of this process (see :func:`count_crypto`)."""

CRYPTO_BY_WIRE = [False]
"""The core is compiled: its calls to sign and verify are direct, never through the wrappers of
:func:`count_crypto`, so the probed peers count them by the wires instead (session 43)."""

KIND_GROUPS = ("claim", "move", "other events", "ack", "beat", "want")
"""``--kinds``: how messages are grouped, in the order printed."""

CRYPTO_KINDS: dict[str, dict[str, int]] = {"sign": {}, "verify": {}}
"""``--kinds``: the signatures of :data:`CRYPTO_CALLS`, by :data:`KIND_GROUPS`."""


def kind_group(payload: bytes) -> str:
    """The :data:`KIND_GROUPS` entry of an envelope's payload (its msgpack 8-array)."""
    import msgpack  # type: ignore[import-untyped]

    from p2p_nertz.protocol.envelope import Kind

    kind = Kind(msgpack.unpackb(payload)[6])
    if kind is Kind.CLAIM:
        return "claim"
    if kind is Kind.MOVE:
        return "move"
    if kind.is_event:
        return "other events"
    return kind.name.lower()


def wire_author(wire: bytes) -> bytes:
    """The author's peer id of a whole message (``[payload, signature]``)."""
    import msgpack

    author: bytes = msgpack.unpackb(msgpack.unpackb(wire)[0])[2]
    return author


def wire_group(wire: bytes) -> str:
    """:func:`kind_group` of a whole message (``[payload, signature]``)."""
    import msgpack

    return kind_group(msgpack.unpackb(wire)[0])


def crypto_compiled() -> bool:
    """Whether the build compiles the modules whose sign and verify :func:`count_crypto` wraps."""
    compiled = set(build.compiled_modules())
    return bool({"p2p_nertz.protocol.envelope", "p2p_nertz.protocol.identity"} & compiled)


def count_crypto(kinds: bool = False) -> None:
    """Count every Ed25519 sign and verify of the peer core in :data:`CRYPTO_CALLS` (and with
    ``kinds``, by kind in :data:`CRYPTO_KINDS`).

    Wraps ``Identity.sign`` and the ``verify`` the envelope calls (about 0.1 µs each, against
    40–300 µs for the operation; a few µs more with ``kinds``); nothing else changes. On a
    build that compiles them (p2p_nertz/build.py), a compiled caller calls them directly: the
    peers count instead a signature for each distinct message of theirs handed to the mesh,
    and a verify for each distinct message received that was not an old beat dropped
    unverified (:data:`CRYPTO_BY_WIRE`; not by kind).
    """
    from p2p_nertz.protocol import envelope, identity

    if crypto_compiled():
        CRYPTO_BY_WIRE[0] = True
        return

    sign, verify = identity.Identity.sign, envelope.verify
    skip = len(envelope.SIGNATURE_DOMAIN)

    def counted_sign(self: Any, data: bytes) -> bytes:
        CRYPTO_CALLS["sign"] += 1
        if kinds:
            by_kind = CRYPTO_KINDS["sign"]
            group = kind_group(data[skip:])
            by_kind[group] = by_kind.get(group, 0) + 1
        return sign(self, data)

    def counted_verify(peer_id: bytes, signature: bytes, data: bytes) -> bool:
        CRYPTO_CALLS["verify"] += 1
        if kinds:
            by_kind = CRYPTO_KINDS["verify"]
            group = kind_group(data[skip:])
            by_kind[group] = by_kind.get(group, 0) + 1
        return verify(peer_id, signature, data)

    identity.Identity.sign = counted_sign  # type: ignore[method-assign]
    envelope.verify = counted_verify


def time_share_work() -> None:
    """Add the thread CPU of a shuffle game's share work to :data:`SHARE_CPU`: the shares a
    peer owes found and made (``Duties._sharable``, ``_shares``), positions turned up and the
    others' shares checked and taken, cards opened (``DeckRound.turn_up``, ``take_shares``);
    outermost calls only. As ``scripts/bench_turnup.py`` counts it, with the deck layer's
    caches on: each process checks a share once, whichever of its folds takes it first."""
    from p2p_nertz.protocol.duties import Duties
    from p2p_nertz.protocol.shuffle import DeckRound

    depth = [0]

    def wrap(owner: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            began = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    SHARE_CPU[0] += time.thread_time() - began

        setattr(owner, name, timed)

    for owner, name in (
        (Duties, "_sharable"),
        (Duties, "_shares"),
        (DeckRound, "turn_up"),
        (DeckRound, "take_shares"),
    ):
        wrap(owner, name)


IO_WAKE = [0]
"""When trio's loop last came out of its I/O wait (``perf_counter_ns``), in a peer process."""


class IoWake(trio.abc.Instrument):
    """Stamps :data:`IO_WAKE`: a message's arrival at the ROUTER is split into its way to the
    trio thread (zmq's threads, the kernel, the thread's wake-up) and trio's and the adapter's
    part after it (docs/latency.md, session 27)."""

    def after_io_wait(self, timeout: float) -> None:
        IO_WAKE[0] = time.perf_counter_ns()


class TaskCpu(IoWake):
    """A trio instrument (``--tasks``): the CPU (thread time) of the trio thread by task, while
    :attr:`on` (the sampler sets it during play), and the process's CPU over the same time, so
    that what runs outside any task's step (the scheduler: epoll, deadlines, rescheduling) and
    in other threads (zmq's I/O thread) can be told apart. Two ``thread_time`` calls a step."""

    def __init__(self) -> None:
        self.on = False
        self.tasks: dict[str, float] = {}
        self.steps: dict[str, int] = {}
        self.thread = 0.0  # the trio thread's CPU while on
        self.process = 0.0  # the process's (every thread), while on
        self._step = 0.0
        self._since = (0.0, 0.0)

    def switch(self, on: bool) -> None:
        """Start (or stop) counting."""
        if on != self.on:
            now = (time.thread_time(), cpu_seconds())
            if on:
                self._since = now
            else:
                self.thread += now[0] - self._since[0]
                self.process += now[1] - self._since[1]
            self.on = on

    def before_task_step(self, task: Any) -> None:
        self._step = time.thread_time()

    def after_task_step(self, task: Any) -> None:
        if self.on:
            name = task.name.rsplit(".", 1)[-1]
            self.tasks[name] = self.tasks.get(name, 0.0) + time.thread_time() - self._step
            self.steps[name] = self.steps.get(name, 0) + 1

    def figures(self) -> dict[str, Any]:
        """What was counted, as JSON."""
        self.switch(False)
        return {
            "tasks": self.tasks,
            "steps": self.steps,
            "thread": self.thread,
            "process": self.process,
        }


async def run_seats(
    cfg: Mapping[str, Any], seats: Sequence[int], task_cpu: TaskCpu | None = None
) -> list[dict[str, Any]]:
    """Run the nodes of ``seats`` in this trio process until the game ends or ``seconds`` pass;
    return each node's probes."""
    import trio

    _, node_class = _instrumented_classes()
    n = cfg["n"]
    identities, spec = make_game(n, cfg["seed"], cfg.get("deal", "commit"))
    config = dataclasses.replace(NODE_CONFIG, ack_delay=cfg["ack_delay"])
    logdir = Path(cfg["logdir"])
    logdir.mkdir(parents=True, exist_ok=True)
    nodes = [
        node_class(
            identities[s],
            spec,
            logdir / f"peer{s}.log",
            bind=FREE_PORT if cfg["endpoints"] is None else cfg["endpoints"][s],
            strategy="greedy",
            speed=cfg["speed"],
            config=config,
            linger=1.0,
            grace=5.0,
        )
        for s in seats
    ]
    # No endpoints given (loopback): each node binds port 0; a process of one seat says its
    # port and hears the others' (scripts/ports.py), one of every seat knows them all.
    bound = {s: node.bind() for s, node in zip(seats, nodes, strict=True)}
    if cfg["endpoints"] is None and len(seats) < n:
        say_bound(bound[seats[0]])
        bound.update(await trio.to_thread.run_sync(read_peers, n))
    endpoint_list = cfg["endpoints"] or [bound[s] for s in range(n)]
    endpoints = {spec.peer_ids[s]: endpoint_list[s] for s in range(n)}
    if cfg.get("kinds"):
        for node in nodes:
            node.kinds_out = {}
    samples: list[list[tuple[Any, ...]]] = [[] for _ in seats]
    finished = [False] * len(seats)

    async def sample(i: int) -> None:
        node = nodes[i]
        while True:
            await trio.sleep(SAMPLE_INTERVAL)
            peer = node._peer
            if peer is None:
                continue
            began = time.thread_time()
            if task_cpu is not None:
                task_cpu.switch(peer.final.phase.value == "play")
            queued = sum(o.backlog for o in node._mesh.outlets.values())
            samples[i].append(
                (
                    time.perf_counter_ns(),
                    peer.final.phase.value,
                    len(peer._folds.nonfinal),  # held events not final yet, every author
                    sum(len(p) for p in peer._store.pending),  # received, waiting for their past
                    len(peer.player.pending_claims()),  # our claims in the air
                    queued,  # messages waiting for a DEALER
                    peer.received,
                    node.messages_out,
                    peer.held(peer.seat),  # our own events: the bot's moves and the rest
                    cpu_seconds(),  # this process's, every thread (zmq's I/O thread too)
                    CRYPTO_CALLS["sign"],  # this process's signatures made so far
                    CRYPTO_CALLS["verify"],  # and verified
                    SAMPLER_CPU[0],  # this process's CPU taking samples so far (not the peers')
                    None  # --kinds: messages sent, signed and verified so far, by group
                    if node.kinds_out is None
                    else {
                        "sent": dict(node.kinds_out),
                        **{k: dict(v) for k, v in CRYPTO_KINDS.items()},
                    },
                    BOT_CPU[0],  # this process's bots' thinking so far (strategy.decide)
                    INPUT_CPU["recv"],  # and its peers' inputs so far, by kind
                    INPUT_CPU["own"],
                    INPUT_CPU["look"],
                    list(getattr(peer, "bursts", ())),  # receive turns, inputs, messages fed
                )
            )
            SAMPLER_CPU[0] += time.thread_time() - began

    async def play(i: int) -> None:
        await nodes[i].run(endpoints)
        finished[i] = True

    started = time.perf_counter_ns()
    cpu_start = cpu_seconds()
    budget = max(1.0, cfg["seconds"])
    with trio.move_on_after(budget):
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as players:
                for i in range(len(seats)):
                    players.start_soon(play, i)
                    nursery.start_soon(sample, i)
            nursery.cancel_scope.cancel()
    ended = time.perf_counter_ns()
    cpu_share = (cpu_seconds() - cpu_start) / max(1e-9, (ended - started) / 1e9) / len(seats)
    results = []
    for i, (seat, node) in enumerate(zip(seats, nodes, strict=True)):
        peer = node._peer
        results.append(
            {
                "seat": seat,
                "started": started,
                "ended": ended,
                "finished": finished[i],
                "phase": None if peer is None else peer.final.phase.value,
                "sent": node.sent_at,
                "handed": node.handed,
                "played": {} if peer is None else peer.played,
                "delivered": [] if peer is None else [[*k, v] for k, v in peer.delivered.items()],
                "arrivals": [] if peer is None else [[*k, *v] for k, v in peer.arrivals.items()],
                "final": [] if peer is None else [[*k, v] for k, v in peer.final_at.items()],
                "answers": [] if peer is None else [[*k, *v] for k, v in peer.answers.items()],
                "final_input": []
                if peer is None
                else [[*k, *v] for k, v in peer.final_input.items()],
                "claim_sizes": [] if peer is None else peer.claim_sizes,
                "samples": samples[i],
                "dropped": node.dropped,
                "lost_edges": node.lost_edges(),
                "write_io": node.write_io,
                "write_total": node.write_total,
                "rss_mb": peak_rss_mb(),
                "cpu": cpu_share,
                "pid": os.getpid(),
                "task_cpu": None if task_cpu is None else task_cpu.figures(),
                "build": core_build(),
            }
        )
        if peer is not None and peer.spec.deal.value == "shuffle":
            results[-1].update(
                move_sent=node.move_sent,
                turned={seq: [list(w) for w in ws] for seq, ws in peer.turned.items()},
                known=[[*w, t] for w, t in peer.known_at.items()],
                known_any=[[*w, t] for w, t in peer.known_any_at.items()],
                reveal_at=[[*k, t] for k, t in peer.reveal_at.items()],
                moves_in=[[*k, t] for k, t in peer.moves_in.items()],
                shares_at=[[*k, t] for k, t in peer.shares_at.items()],
                shares_where={q: [list(w) for w in ws] for q, ws in peer.shares_where.items()},
                shares_sent=node.shares_sent,
                share_cpu=SHARE_CPU[0] / len(seats),
                wants=[peer._chains.wants.asked, peer._chains.wants.answered],
            )
    return results


def child_node(config_path: str, seats_arg: str, out_path: str) -> int:
    """Run the nodes of the seats ``"0,1,..."`` in this process; write their probes as JSON."""
    import trio

    cfg = json.loads(Path(config_path).read_text())
    seats = [int(s) for s in seats_arg.split(",")]
    count_crypto(bool(cfg.get("kinds")))
    if cfg.get("deal") == "shuffle":
        time_share_work()
    task_cpu = TaskCpu() if cfg.get("tasks") else None
    results = trio.run(
        run_seats, cfg, seats, task_cpu, instruments=[IoWake() if task_cpu is None else task_cpu]
    )
    Path(out_path).write_text(json.dumps(results))
    return 0


# -- Pyre: SHOUT to one group, inside a lab namespace only ------------------------------------
def _check_inside_lab() -> str | None:
    """Why this process must not run Pyre here, or ``None`` (only lo and one 10.77.0.x)."""
    from ipaddress import ip_interface

    from pyre import zhelper  # type: ignore[import-untyped]

    from p2p_nertz.testing.netns import SUBNET

    lab = ip_interface(SUBNET).network
    found = []
    for iface in zhelper.get_ifaddrs():
        for name, data in iface.items():
            inet = data.get(socket.AF_INET) or {}
            addr, mask = inet.get("addr"), inet.get("netmask")
            if not addr or not mask:
                continue
            interface = ip_interface(f"{addr}/{mask}")
            if interface.is_loopback:
                continue
            if interface.network != lab:
                return f"interface {name} ({interface}) is not the lab's: refusing to broadcast"
            found.append(name)
    if not found:
        return "no lab interface: Pyre would fall back to multicast on loopback"
    return None


def child_pyre(config_path: str, index: int, out_path: str) -> int:
    """One Pyre node, only inside a lab namespace; exits the process when done.

    Pyre's actor threads are not daemons and may outlive ``stop()`` (or a failure), so the
    process ends with :func:`os._exit` once the results are written or the failure printed.
    """
    problem = _check_inside_lab()
    if problem is not None:
        print(f"bench_lan: {problem}", file=sys.stderr)
        return 2
    code = 0
    try:
        _pyre_session(json.loads(Path(config_path).read_text()), index, Path(out_path))
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _pyre_session(cfg: Mapping[str, Any], index: int, out_path: Path) -> None:
    """Join the group; once every other node is in it, SHOUT stamped payloads for a while, then
    a last ``seq = 0`` shout saying how many were sent; record every shout received until each
    other node's last one is in (Zyre keeps each sender's order)."""
    import random

    import zmq
    from pyre import Pyre

    n, size = cfg["n"], cfg["size"]
    node = Pyre(f"bench{index}")
    # Pyre 0.3.4's set_port() sends an int frame, which pyzmq refuses (TypeError), and its
    # set_interval() is ignored: the defaults stand (beacons on UDP 5670, one a second).
    node.start()
    node.join(GROUP)
    poller = zmq.Poller()
    poller.register(node.socket(), zmq.POLLIN)
    received: list[tuple[int, int, int, int]] = []  # sender, seq, sent_ns, received_ns
    finished: set[int] = set()  # senders whose last shout arrived
    header = struct.Struct(">IIQ")
    padding = b"\0" * max(0, size - header.size)
    cpu_start = cpu_seconds()
    wall_start = time.perf_counter_ns()

    def pump(timeout_ms: float) -> None:
        while dict(poller.poll(round(timeout_ms))):
            frames = node.recv()
            stamp = time.perf_counter_ns()
            if frames[0] == b"SHOUT" and len(frames) >= 5:
                sender, seq, sent = header.unpack_from(frames[4])
                if seq == 0:
                    finished.add(sender)
                else:
                    received.append((sender, seq, sent, stamp))
            timeout_ms = 0

    deadline = time.monotonic() + cfg["discovery_timeout"]
    while len(node.peers_by_group(GROUP)) < n - 1:
        if time.monotonic() > deadline:
            found = len(node.peers_by_group(GROUP))
            raise RuntimeError(f"pyre node {index} found {found} of {n - 1} others")
        pump(20)
    # A SHOUT goes to the members the sender knows, and each receiver has the sender's HELLO
    # before its first SHOUT (one connection, in order): nothing is lost by starting now.
    rng = random.Random(index)
    interval = cfg["interval"]
    sent = 0
    now = time.perf_counter_ns()
    next_at = now + rng.uniform(0, interval) * 1e9
    end_ns = now + int(cfg["duration"] * 1e9)
    while True:
        now = time.perf_counter_ns()
        if now >= end_ns:
            break
        if now >= next_at:
            sent += 1
            node.shout(GROUP, header.pack(index, sent, time.perf_counter_ns()) + padding)
            next_at += rng.uniform(0.75, 1.25) * interval * 1e9
            continue
        pump(max(0.0, (next_at - now) / 1e6))
    node.shout(GROUP, header.pack(index, 0, sent) + padding)
    deadline = time.monotonic() + cfg["settle"]
    while len(finished) < n - 1 and time.monotonic() < deadline:
        pump(20)
    cpu = (cpu_seconds() - cpu_start) / max(1e-9, (time.perf_counter_ns() - wall_start) / 1e9)
    result = {
        "index": index,
        "sent": sent,
        "received": received,
        "rss_mb": peak_rss_mb(),
        "cpu": cpu,
        "seconds": cfg["duration"],
    }
    out_path.write_text(json.dumps(result))


# == the parent: orchestration ==================================================================
@dataclass
class GameFigures:
    """What one game (one peer count, one placement, one ack window) measured."""

    peers: int
    where: str  # "loopback", "lab" or "inproc"
    ack_delay: float
    tmpfs: bool = False  # the logs were on tmpfs (fsync costs nothing)
    builds: list[str] = field(default_factory=list)  # the core its peers ran (core_build)
    delivery_us: list[float] = field(default_factory=list)
    finality_us: list[float] = field(default_factory=list)
    log_write_us: list[float] = field(default_factory=list)  # signed -> handed to the DEALERs
    handoff_us: list[float] = field(default_factory=list)  # sent -> the first DEALER took it
    handoff_last_us: list[float] = field(default_factory=list)  # sent -> the last DEALER took it
    first_us: list[float] = field(default_factory=list)  # sent -> delivered at the first receiver
    write_io_us: list[float] = field(default_factory=list)  # synced log appends
    write_total_us: list[float] = field(default_factory=list)  # the same, as awaited
    transit_us: list[float] = field(default_factory=list)  # sent -> at the receiver's ROUTER
    wake_us: list[float] = field(default_factory=list)  # sent -> the receiver's loop woke for it
    lock_wait_us: list[float] = field(default_factory=list)  # arrived -> node lock taken
    feed_us: list[float] = field(default_factory=list)  # lock taken -> verified, delivered
    feed_cpu_us: list[float] = field(default_factory=list)  # the same, the trio thread's CPU
    waiting: list[bool] = field(default_factory=list)  # the receive loop waited before the send
    # The return leg, per claim (docs/latency.md, session 27), at the receivers: delivered ->
    # the core's feed returned (the fold, finality, the answer signed), its CPU from the lock,
    # -> the answer handed to the mesh; at the author, of the input that made the claim final:
    # the last receiver's answer handed -> its burst at the author's ROUTER, -> the lock taken,
    # -> final (verify, take the ack, finality, the fold), its CPU from the lock.
    back_us: dict[str, list[float]] = field(default_factory=dict)
    # In play, every peer summed: the receive loop's turns that fed the core, the inputs it
    # fed (a turn feeds its events, then its beats: two), and the messages fed.
    bursts: tuple[int, int, int] | None = None
    incomplete: int = 0
    msgs_per_s: float = float("nan")  # messages received per peer per second during play
    rss_mb: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU share of each peer over its run
    backlog: str = "-"
    backlog_grows: bool | None = None
    early_late_us: tuple[float, float] = (float("nan"), float("nan"))
    moves_per_s: float = float("nan")  # events signed per peer per second in play (the bot)
    play_seconds: float = 0.0
    claim_size: int = 0
    finished: bool = False
    dropped: int = 0
    claims_per_s: float = float("nan")  # claims made final at every peer, all authors
    cpu_per_claim_us: float = float("nan")  # CPU of every peer process, per final claim
    sampler_per_claim_us: float = float("nan")  # the benchmark's sampler's, left out of it
    thinking_per_claim_us: float = float("nan")  # the bots' strategy (in it; BOT_CPU)
    # the peers' inputs per final claim (INPUT_CPU): received bursts, own moves, looks
    inputs_per_claim_us: tuple[float, ...] = (float("nan"),) * 3
    task_cpu: dict[str, float] = field(default_factory=dict)  # --tasks: CPU s in play, by part
    task_steps: dict[str, int] = field(default_factory=dict)  # --tasks: steps in play, by task
    signs_per_claim: float = float("nan")
    verifies_per_claim: float = float("nan")
    msgs_per_claim: float = float("nan")  # messages sent (one per DEALER), per final claim
    # --deal shuffle: per position a move or claim turned up, sent -> every member's share
    # delivered at the mover, and at every peer; the share work's CPU per position per peer
    turnup_us: list[float] = field(default_factory=list)
    turnup_all_us: list[float] = field(default_factory=list)
    # the same, each other member's share counted from the first of its deck_reveal beat and
    # its deck_shares event to come (docs/shuffle.md §10.14); the two above count the events
    turnup_any_us: list[float] = field(default_factory=list)
    turnup_any_all_us: list[float] = field(default_factory=list)
    share_wants: tuple[int, int] = (0, 0)  # shares asked for in deck_wants, and sent back
    share_cpu_us: list[float] = field(default_factory=list)
    turnup_stages_us: dict[str, list[float]] = field(default_factory=dict)
    # --kinds: per final claim, by KIND_GROUPS: {"sent"|"sign"|"verify": {group: count}}
    kinds_per_claim: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The row's name in the table."""
        name = {"loopback": "loopback", "lab": "lab", "inproc": "1 proc"}[self.where]
        if self.ack_delay != DEFAULT_ACK_DELAY:
            name += f" ack={self.ack_delay * 1000:g}"
        return name + " tmpfs" if self.tmpfs else name


@dataclass
class PyreFigures:
    """What one Pyre run measured."""

    peers: int
    delivery_us: list[float] = field(default_factory=list)
    incomplete: int = 0
    msgs_per_s: float = float("nan")
    rss_mb: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _python() -> list[str]:
    return [sys.executable, str(SCRIPT)]


def _wait_all(procs: Iterable[subprocess.Popen[Any]], timeout: float) -> list[int | None]:
    deadline = time.monotonic() + timeout
    codes: list[int | None] = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=max(0.1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            codes.append(None)
    return codes


def measure_floors(count: int, paced: int, size: int, *, lab: Any = None) -> dict[str, list[float]]:
    """Round trips (µs) of ``size`` bytes DEALER→ROUTER→DEALER (see :func:`child_ping`): on
    loopback, or with the ROUTER on lab host 1 and the DEALER on lab host 0."""
    if lab is None:
        echo = subprocess.Popen([*_python(), "_echo", FREE_PORT], stdout=subprocess.PIPE, text=True)
    else:
        bind = f"tcp://{lab.address(1)}:{LAB_PORT + 1}"
        echo = lab.popen(1, [*_python(), "_echo", bind], stdout=subprocess.PIPE, text=True)
    try:
        endpoint = read_bound(echo)
        argv = [*_python(), "_ping", endpoint, str(count), str(paced), str(size)]
        if lab is None:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        else:
            done = lab.run(0, argv, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"ping failed: {done.stderr.strip()}")
        figures = json.loads(done.stdout)
    finally:
        _wait_all([echo], 5)
    return {name: [ns / NS_PER_US for ns in rtts] for name, rtts in figures.items()}


def crypto_in_use() -> str:
    """The Ed25519 library behind ``p2p_nertz.protocol.identity``: libsodium or OpenSSL."""
    from p2p_nertz.protocol import identity

    names = {
        getattr(v, "__module__", None) or getattr(v, "__name__", "")
        for v in vars(identity).values()
    }
    return "libsodium" if any(str(n).startswith("nacl") for n in names) else "OpenSSL"


def crypto_cost_us(size: int, repeats: int = 2000) -> tuple[float, float]:
    """Median Ed25519 sign and verify times (µs) of a ``size``-byte message."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    public = key.public_key()
    message = os.urandom(size)
    signature = key.sign(message)
    signs, verifies = [], []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        key.sign(message)
        signs.append(time.perf_counter_ns() - start)
        start = time.perf_counter_ns()
        public.verify(signature, message)
        verifies.append(time.perf_counter_ns() - start)
    return median(signs) / NS_PER_US, median(verifies) / NS_PER_US


def run_game(
    n: int,
    *,
    seconds: float,
    ack_delay: float,
    seed: int,
    where: str,
    workdir: Path,
    lab: Any = None,
    logs: Path | None = None,
    tasks: bool = False,
    deal: str = "commit",
    kinds: bool = False,
    speed: int = 10,
) -> GameFigures:
    """Play one game of ``n`` bots at ``speed`` (10: full speed): one process per peer on loopback
    (``where="loopback"``) or per lab host (``"lab"``), or all peers in one process
    (``"inproc"``); stop after ``seconds`` if the round has not ended by then. The peers' logs
    go to ``logs`` (a directory on tmpfs: no disk under fsync), or beside the results."""
    tag = f"{where}-{n}-{round(ack_delay * 1e6)}" + ("-tmpfs" if logs else "")
    logdir = workdir / tag
    logdir.mkdir()
    # On loopback the peers bind port 0 and are introduced (scripts/ports.py); a lab's
    # namespaces each have their own ports, nothing else in them.
    endpoints = [f"tcp://{lab.address(s)}:{LAB_PORT}" for s in range(n)] if where == "lab" else None
    cfg = {
        "n": n,
        "seed": seed,
        "endpoints": endpoints,
        "ack_delay": ack_delay,
        "speed": speed,
        "tasks": tasks,
        "deal": deal,
        "kinds": kinds,
        # Each process's game, from when it is up (its imports done, its sockets bound): on a
        # loaded machine the imports alone took the 5 s of a test's game (no play at all).
        "seconds": seconds,
        "logdir": str(logdir if logs is None else logs / tag),
    }
    cfg_path = logdir / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    jobs = [",".join(str(s) for s in range(n))] if where == "inproc" else [str(s) for s in range(n)]
    outs: list[Path] = []
    procs: list[subprocess.Popen[Any]] = []
    said: list[Path] = []  # (loopback: each peer's output, its bound endpoint first)
    for i, seats in enumerate(jobs):
        out = logdir / f"out{i}.json"
        outs.append(out)
        argv = [*_python(), "_node", str(cfg_path), seats, str(out)]
        if where == "loopback":
            said.append(logdir / f"stdout{i}.txt")
            with said[-1].open("wb") as stdout:
                procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=stdout))
        else:
            procs.append(lab.popen(i, argv) if where == "lab" else subprocess.Popen(argv))
    figures = GameFigures(peers=n, where=where, ack_delay=ack_delay, tmpfs=logs is not None)
    if said:
        try:
            introduce(make_game(n, seed, deal)[1], procs, said)
        except NertzError as exc:
            for proc in procs:
                proc.kill()
                proc.wait()
            figures.notes.append(f"the game did not start: {exc}")
            return figures
    codes = _wait_all(procs, seconds + CHILD_GRACE)
    results: list[dict[str, Any]] = []
    for out, code in zip(outs, codes, strict=True):
        if code != 0 or not out.exists():
            figures.notes.append(f"a peer process failed (exit {code})")
            continue
        results.extend(json.loads(out.read_text()))
    if len(results) != n:
        figures.notes.append(f"only {len(results)} of {n} peers reported")
        return figures
    summarise_game(figures, results)
    if deal == "shuffle":
        summarise_turnups(figures, results)
    return figures


def summarise_turnups(figures: GameFigures, results: list[dict[str, Any]]) -> None:
    """A shuffle game's turn-ups: for each position a move or claim turned up, its mover's
    send (after the durable log write, as a claim's) -> every other member's share of it held
    at the mover (its card known there), and at every peer: counted by the others'
    ``deck_shares`` events alone, and by the first of each one's ``deck_reveal`` beat and its
    event; the share work's CPU per position opened, per peer (every position, the deal's
    face-up cards too)."""
    for key, mover, everyone in (
        ("known", figures.turnup_us, figures.turnup_all_us),
        ("known_any", figures.turnup_any_us, figures.turnup_any_all_us),
    ):
        known = {r["seat"]: {(d, p): t for d, p, t in r[key]} for r in results}
        for r in results:
            for seq_text, where in r["turned"].items():
                sent = r["move_sent"].get(seq_text)
                if sent is None:
                    continue
                for d, p in where:
                    stamps = [known[s].get((d, p)) for s in known]
                    at_mover = known[r["seat"]].get((d, p))
                    if at_mover is not None:
                        mover.append((at_mover - sent) / NS_PER_US)
                    if all(t is not None for t in stamps):
                        everyone.append((max(stamps) - sent) / NS_PER_US)  # type: ignore[type-var]
    for r in results:
        if r["known"]:
            figures.share_cpu_us.append(r["share_cpu"] / len(r["known"]) * 1e6)
    figures.share_wants = (sum(r["wants"][0] for r in results), sum(r["wants"][1] for r in results))
    _turnup_stages(figures, results)


def _turnup_stages(figures: GameFigures, results: list[dict[str, Any]]) -> None:
    """Where a turn-up's time goes, per move and other member: the move out (sent ->
    delivered there), its share made (-> its ``deck_shares`` signed and delivered there), the
    log write (-> sent), and back (-> delivered at the mover); and the four together (the
    medians of the parts need not add up to it); and by the beat, sent -> its ``deck_reveal``
    taken at the mover (no log write on its path)."""
    by_seat = {r["seat"]: r for r in results}
    moves_in = {s: {(a, q): t for a, q, t in r["moves_in"]} for s, r in by_seat.items()}
    shares_at = {s: {(a, q): t for a, q, t in r["shares_at"]} for s, r in by_seat.items()}
    share_of: dict[int, dict[tuple[int, int], str]] = {}  # responder -> position -> its seq
    for s, r in by_seat.items():
        mine = share_of.setdefault(s, {})
        for seq_text, where in r["shares_where"].items():
            for d, p in where:
                mine.setdefault((d, p), seq_text)
    stages: dict[str, list[float]] = {
        "out": [],
        "make": [],
        "write": [],
        "back": [],
        "total": [],
        "beat": [],
    }
    reveals = {s: {(d, p, q): t for d, p, q, t in r["reveal_at"]} for s, r in by_seat.items()}
    for m, r in by_seat.items():
        for seq_text, where in r["turned"].items():
            sent = r["move_sent"].get(seq_text)
            if sent is None:
                continue
            for s in by_seat:
                if s == m:
                    continue
                beat = reveals[m].get((*where[0], s))
                if beat is not None:
                    stages["beat"].append((beat - sent) / NS_PER_US)
                share_seq = share_of[s].get(tuple(where[0]))  # type: ignore[arg-type]
                got = moves_in[s].get((m, int(seq_text)))
                if share_seq is None or got is None:
                    continue
                signed = shares_at[s].get((s, int(share_seq)))
                out = by_seat[s]["shares_sent"].get(share_seq)
                back = shares_at[m].get((s, int(share_seq)))
                if signed is None or out is None or back is None:
                    continue
                stages["out"].append((got - sent) / NS_PER_US)
                stages["make"].append((signed - got) / NS_PER_US)
                stages["write"].append((out - signed) / NS_PER_US)
                stages["back"].append((back - out) / NS_PER_US)
                stages["total"].append((back - sent) / NS_PER_US)
    figures.turnup_stages_us = stages


def summarise_game(figures: GameFigures, results: list[dict[str, Any]]) -> None:
    """Claim delivery and finality times, rates, memory and backlog from every peer's probes."""
    by_seat = {r["seat"]: r for r in results}
    figures.builds = sorted({r["build"] for r in results})
    delivered = {s: {(a, q): t for a, q, t in r["delivered"]} for s, r in by_seat.items()}
    arrivals = {s: {(a, q): tuple(v) for a, q, *v in r["arrivals"]} for s, r in by_seat.items()}
    final = {s: {(a, q): t for a, q, t in r["final"]} for s, r in by_seat.items()}
    answers = {s: {(a, q): v for a, q, *v in r["answers"]} for s, r in by_seat.items()}
    final_input = {s: {(a, q): v for a, q, *v in r["final_input"]} for s, r in by_seat.items()}
    end = min(r["ended"] for r in results)
    timed: list[tuple[int, float, float]] = []  # sent_ns, delivery µs, finality µs
    for author, r in by_seat.items():
        for seq_text, sent in r["sent"].items():
            key = (author, int(seq_text))
            others = [delivered[s].get(key) for s in by_seat if s != author]
            finals = [final[s].get(key) for s in by_seat]
            got = [t for t in others if t is not None]
            done = [t for t in finals if t is not None]
            if len(got) < len(others) or len(done) < len(finals):
                if sent < end - INCOMPLETE_TAIL_NS:
                    figures.incomplete += 1
                continue
            timed.append((sent, (max(got) - sent) / NS_PER_US, (max(done) - sent) / NS_PER_US))
            played = r["played"].get(seq_text)
            if played is not None:
                figures.log_write_us.append((sent - played) / NS_PER_US)
            figures.first_us.append((min(got) - sent) / NS_PER_US)
            handed = sorted(r["handed"].get(seq_text, []))
            if handed:
                figures.handoff_us.append((handed[0] - sent) / NS_PER_US)
                figures.handoff_last_us.append((handed[-1] - sent) / NS_PER_US)
            for s in by_seat:
                stamps = arrivals[s].get(key)
                if s != author and stamps is not None:
                    arrived, locked, called, cpu, woke = stamps
                    figures.transit_us.append((arrived - sent) / NS_PER_US)
                    if sent < woke <= arrived:
                        figures.wake_us.append((woke - sent) / NS_PER_US)
                    figures.waiting.append(called < sent)
                    figures.feed_cpu_us.append(cpu / NS_PER_US)
                    figures.lock_wait_us.append((locked - arrived) / NS_PER_US)
                    figures.feed_us.append((delivered[s][key] - locked) / NS_PER_US)
            made_final = final_input[author].get(key)
            if made_final is not None:
                _return_leg(figures, key, delivered, answers, (*made_final, final[author][key]))
    timed.sort()
    figures.delivery_us = [d for _, d, _ in timed]
    figures.finality_us = [f for _, _, f in timed]
    sizes = [size for r in results for size in r["claim_sizes"]]
    figures.claim_size = round(median(sizes)) if sizes else 0
    figures.rss_mb = [r["rss_mb"] for r in results]
    figures.cpu = [r["cpu"] for r in results]
    figures.finished = all(r["finished"] for r in results)
    figures.dropped = sum(r["dropped"] for r in results)
    figures.write_io_us = [ns / NS_PER_US for r in results for ns in r["write_io"]]
    figures.write_total_us = [ns / NS_PER_US for r in results for ns in r["write_total"]]
    lost = [sum(r["lost_edges"][i] for r in results) for i in (0, 1)]
    if any(lost):
        figures.notes.append(f"zmqtrio safety net rescued {lost[0]} ROUTER, {lost[1]} DEALER waits")
    if not figures.finished:
        figures.notes.append("stopped at the time limit before the round ended")
    # Messages received per peer per second, and the backlog, over the play phase.
    rates, moves, play_seconds, firsts, lasts = [], [], [], [], []
    peak = 0
    bursts = [0, 0, 0]
    for r in results:
        play = [s for s in r["samples"] if s[1] == "play"]
        if len(play) < 4:
            continue
        if len(play[-1]) > 18 and len(play[-1][18]) == 3:
            for i in range(3):
                bursts[i] += play[-1][18][i] - play[0][18][i]
        seconds = (play[-1][0] - play[0][0]) / 1e9
        play_seconds.append(seconds)
        if seconds > 0:
            rates.append((play[-1][6] - play[0][6]) / seconds)
            moves.append((play[-1][8] - play[0][8]) / seconds)
        # The backlog: held events not final yet + received ones waiting for their causal past
        # + messages queued for the DEALERs.
        series = [s[2] + s[3] + s[5] for s in play]
        quarter = max(1, len(series) // 4)
        firsts.append(statistics.fmean(series[:quarter]))
        lasts.append(statistics.fmean(series[-quarter:]))
        peak = max(peak, *series)
    if bursts[0]:
        figures.bursts = (bursts[0], bursts[1], bursts[2])
    figures.play_seconds = median(play_seconds) if play_seconds else 0.0
    figures.msgs_per_s = median(rates) if rates else float("nan")
    figures.moves_per_s = median(moves) if moves else float("nan")
    k = max(1, len(timed) // 4)
    figures.early_late_us = (median(figures.finality_us[:k]), median(figures.finality_us[-k:]))
    _cpu_per_claim(figures, results, [sent for sent, _, _ in timed])
    _task_cpu(figures, results)
    if firsts:
        # Growing: some peer holds, at the end of play, more than twice what it held at the
        # start (and more than a few events): it is falling behind.
        grows = any(b > 2 * a + 3 for a, b in zip(firsts, lasts, strict=True))
        figures.backlog_grows = grows
        figures.backlog = (
            f"{statistics.fmean(firsts):.1f}→{statistics.fmean(lasts):.1f} max {peak}"
            f" ({'GROWS' if grows else 'flat'})"
        )


def _return_leg(
    figures: GameFigures,
    key: tuple[int, int],
    delivered: Mapping[int, Mapping[tuple[int, int], int]],
    answers: Mapping[int, Mapping[tuple[int, int], list[int]]],
    made_final: tuple[int, ...],
) -> None:
    """The claim ``key``'s way back to its author (``GameFigures.back_us``), where every
    receiver's answer and the author's final input (``made_final``: its burst's arrival, the
    lock, its CPU, trio's loop out of its I/O wait, the final stamp) were stamped."""
    author = key[0]
    got = [(delivered[s][key], answers[s].get(key)) for s in delivered if s != author]
    if any(a is None or not a[2] for _, a in got):
        return
    back = figures.back_us
    for at, (done, cpu, handed, waits) in ((d, a) for d, a in got if a is not None):
        back.setdefault("fold", []).append((done - at) / NS_PER_US)
        back.setdefault("fold_cpu", []).append(cpu / NS_PER_US)
        back.setdefault("answer", []).append((handed - done) / NS_PER_US)
        if waits:
            back.setdefault("after", []).append((waits - handed) / NS_PER_US)
    last = max(a[2] for _, a in got if a is not None)
    arrived, locked, cpu, woke, final_at = made_final
    back.setdefault("transit", []).append((arrived - last) / NS_PER_US)
    if last < woke <= arrived:
        back.setdefault("wake", []).append((woke - last) / NS_PER_US)
    back.setdefault("lock", []).append((locked - arrived) / NS_PER_US)
    back.setdefault("final", []).append((final_at - locked) / NS_PER_US)
    back.setdefault("final_cpu", []).append(cpu / NS_PER_US)


def _task_cpu(figures: GameFigures, results: list[dict[str, Any]]) -> None:
    """``--tasks``: the play phase's CPU of every peer process, summed, by task; what the trio
    thread ran outside the tasks' steps; and the process's other threads."""
    seen: set[Any] = set()
    parts: dict[str, float] = {}
    for r in results:
        counted = r.get("task_cpu")
        if counted is None or r.get("pid") in seen:
            continue
        seen.add(r.get("pid"))
        for name, seconds in counted["tasks"].items():
            parts[name] = parts.get(name, 0.0) + seconds
        for name, steps in counted["steps"].items():
            figures.task_steps[name] = figures.task_steps.get(name, 0) + steps
        in_tasks = sum(counted["tasks"].values())
        parts["(scheduler: outside any task)"] = (
            parts.get("(scheduler: outside any task)", 0.0) + counted["thread"] - in_tasks
        )
        parts["(other threads: zmq I/O)"] = (
            parts.get("(other threads: zmq I/O)", 0.0) + counted["process"] - counted["thread"]
        )
    figures.task_cpu = parts


def _cpu_per_claim(figures: GameFigures, results: list[dict[str, Any]], sent: list[int]) -> None:
    """CPU, signatures, verifies and messages per final claim, over the play phase.

    Each process's CPU (every thread: zmq's I/O thread too; less what its samplers spent
    taking samples, :data:`SAMPLER_CPU`, the benchmark's own work), signs and verifies are
    rates over its own play samples, summed over the processes; claims are those sent inside
    the window that every process was in play and final at every peer, as a rate over that
    window.
    """
    per_process: dict[Any, dict[str, Any]] = {}
    for r in results:
        per_process.setdefault(r.get("pid"), r)
    cpu = signs = verifies = msgs = sampled = thought = 0.0
    inputs = [0.0, 0.0, 0.0]  # INPUT_CPU's recv, own, look
    kinds: dict[str, dict[str, float]] = {}
    starts, ends = [], []
    for r in results:
        play = [s for s in r["samples"] if s[1] == "play" and len(s) > 12]
        if len(play) < 4:
            return
        seconds = (play[-1][0] - play[0][0]) / 1e9
        msgs += (play[-1][7] - play[0][7]) / seconds
        starts.append(play[0][0])
        ends.append(play[-1][0])
        if per_process.get(r.get("pid")) is r:
            sampler = play[-1][12] - play[0][12]  # the benchmark's own, not the peers'
            cpu += (play[-1][9] - play[0][9] - sampler) / seconds
            sampled += sampler / seconds
            if len(play[-1]) > 17:
                thought += (play[-1][14] - play[0][14]) / seconds
                for i in range(3):
                    inputs[i] += (play[-1][15 + i] - play[0][15 + i]) / seconds
            signs += (play[-1][10] - play[0][10]) / seconds
            verifies += (play[-1][11] - play[0][11]) / seconds
        if len(play[-1]) > 13 and play[-1][13] is not None:
            first, last = play[0][13], play[-1][13]
            counted = (
                ("sent", "sign", "verify") if per_process.get(r.get("pid")) is r else ("sent",)
            )
            for what in counted:
                into = kinds.setdefault(what, {})
                for group, count in last[what].items():
                    rate = (count - first[what].get(group, 0)) / seconds
                    into[group] = into.get(group, 0.0) + rate
    begin, end = max(starts), min(ends)
    claims = sum(1 for t in sent if begin <= t <= end)
    if end <= begin or not claims:
        return
    rate = claims / ((end - begin) / 1e9)
    figures.claims_per_s = rate
    figures.cpu_per_claim_us = cpu / rate * 1e6
    figures.sampler_per_claim_us = sampled / rate * 1e6
    figures.thinking_per_claim_us = thought / rate * 1e6
    figures.inputs_per_claim_us = tuple(x / rate * 1e6 for x in inputs)
    figures.signs_per_claim = signs / rate
    figures.verifies_per_claim = verifies / rate
    figures.msgs_per_claim = msgs / rate
    figures.kinds_per_claim = {
        what: {group: count / rate for group, count in by_group.items()}
        for what, by_group in kinds.items()
    }


def run_pyre(
    n: int, *, lab: Any, size: int, seconds: float, interval: float, workdir: Path
) -> PyreFigures:
    """``n`` Pyre nodes on lab hosts 0..n-1 SHOUT ``size``-byte payloads to one group, each
    every ``interval`` seconds (±25 %) for ``seconds``."""
    figures = PyreFigures(peers=n)
    tag = workdir / f"pyre-{n}"
    tag.mkdir()
    discovery = PYRE_DISCOVERY
    cfg = {
        "n": n,
        "size": size,
        "interval": interval,
        "duration": seconds,
        "settle": discovery,  # the last node to find the others starts this much later at most
        "discovery_timeout": discovery,
    }
    cfg_path = tag / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    outs = [tag / f"node{i}.json" for i in range(n)]
    errs = [tag / f"node{i}.err" for i in range(n)]
    procs = []
    for i, (out, err) in enumerate(zip(outs, errs, strict=True)):
        with err.open("w") as stderr:
            argv = [*_python(), "_pyre", str(cfg_path), str(i), str(out)]
            procs.append(lab.popen(i, argv, stderr=stderr))
    codes = _wait_all(procs, 2 * discovery + seconds + CHILD_GRACE)
    results = []
    for out, err, code in zip(outs, errs, codes, strict=True):
        if code != 0 or not out.exists():
            lines = err.read_text().strip().splitlines()
            figures.notes.append(f"a Pyre node failed (exit {code}): {lines[-1] if lines else ''}")
            continue
        results.append(json.loads(out.read_text()))
    if not results:
        return figures
    arrivals: dict[tuple[int, int], list[int]] = {}
    sent_at: dict[tuple[int, int], int] = {}
    for r in results:
        for sender, seq, sent, got in r["received"]:
            arrivals.setdefault((sender, seq), []).append(got)
            sent_at[(sender, seq)] = sent
    for r in results:
        for seq in range(1, r["sent"] + 1):
            key = (r["index"], seq)
            got = arrivals.get(key, [])
            if len(got) < n - 1:
                figures.incomplete += 1
                continue
            figures.delivery_us.append((max(got) - sent_at[key]) / NS_PER_US)
    figures.msgs_per_s = median([len(r["received"]) / seconds for r in results])
    figures.rss_mb = [r["rss_mb"] for r in results]
    figures.cpu = [r["cpu"] for r in results]
    return figures


# -- printing -----------------------------------------------------------------------------------
def _us(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:,.0f}"


def _ratio(value: float, floor: float) -> str:
    return "-" if math.isnan(value) or math.isnan(floor) else f"{value / floor:.1f}×"


@dataclass
class Report:
    """Every figure of the run, for the table and the verdicts."""

    size: int
    sign_us: float
    verify_us: float
    floors: dict[str, list[float]]  # "lo bare", "lo bare paced", "lo trio", ..., "lab bare", ...
    games: list[GameFigures]
    pyre: dict[int, PyreFigures]
    skipped: list[str]
    load: tuple[float, float, float]
    sodium: tuple[float, float] | None = None  # libsodium (PyNaCl) sign, verify µs
    message_us: tuple[float, float] = (float("nan"), float("nan"))  # bare pyzmq CPU/message:
    # back to back, and one every MESSAGE_GAP seconds
    in_use: str = "OpenSSL"  # the Ed25519 library the peers sign and verify with


def print_report(rep: Report) -> None:
    """The table, then a verdict per target."""
    fl = {name: median(rtts) for name, rtts in rep.floors.items()}
    f_lo = fl["lo bare"]
    f_lab = fl.get("lab bare", float("nan"))
    print()
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    print(
        f"machine: {os.cpu_count()} CPUs, load average at start {rep.load[0]:.2f} "
        f"(other work on the machine inflates every figure below); niceness {nice}"
    )
    print(peers_build_line(rep.games))
    print(
        f"claim envelope: {rep.size} bytes; Ed25519 sign {rep.sign_us:.0f} µs, "
        f"verify {rep.verify_us:.0f} µs (medians, in this run)"
    )
    print("floor = bare pyzmq DEALER→ROUTER round trip (µs, median / p99):")
    gap = f"one every {PACED_GAP * 1000:.0f} ms"
    places = {"lo": "loopback", "lab": "lab bridge (two namespaces)"}
    kinds = {
        "bare": "back to back",
        "bare paced": gap,
        "bare trio": "bare pyzmq waited on by trio, back to back",
        "bare trio paced": f"bare pyzmq waited on by trio, {gap}",
        "trio": "through the trio adapter, back to back",
        "trio paced": f"through the trio adapter, {gap}",
    }
    names = {
        f"{p} {k}": f"{place}, {what}" for p, place in places.items() for k, what in kinds.items()
    }
    for name, rtts in rep.floors.items():
        print(f"  {names[name]:<66} {fl[name]:>7,.0f} / {p99(rtts):>7,.0f}")
    print()
    head = (
        f"{'where':<21}{'peers':>5} {'floor':>6} {'deliv med':>10}{'p99':>10}{'×floor':>8}"
        f" {'final med':>10}{'p99':>11}{'×floor':>8} {'Pyre med':>9}{'p99':>9}"
        f" {'msg/s':>6} {'RSS MB':>7} {'CPU':>5}  backlog (first→last quarter, max)"
    )
    print(head)
    print("-" * len(head))
    for g in rep.games:
        floor = f_lab if g.where == "lab" else f_lo
        pyre = rep.pyre.get(g.peers) if g.where == "lab" else None
        pyre_med = median(pyre.delivery_us) if pyre else float("nan")
        pyre_p99 = p99(pyre.delivery_us) if pyre else float("nan")
        rss = max(g.rss_mb) if g.rss_mb else float("nan")
        cpu = f"{median(g.cpu) * 100:.0f}%" if g.cpu else "-"
        print(
            f"{g.label:<21}{g.peers:>5} {_us(floor):>6} {_us(median(g.delivery_us)):>10}"
            f"{_us(p99(g.delivery_us)):>10}{_ratio(median(g.delivery_us), floor):>8}"
            f" {_us(median(g.finality_us)):>10}{_us(p99(g.finality_us)):>11}"
            f"{_ratio(median(g.finality_us), floor):>8} {_us(pyre_med):>9}{_us(pyre_p99):>9}"
            f" {g.msgs_per_s:>6.0f} {rss:>7.1f} {cpu:>5}  {g.backlog}"
        )
    print()
    print(
        "µs; deliv: claim sent (after its log write) → verified and delivered at every other "
        "peer; final: sent → final at every peer;"
    )
    print(
        "msg/s: messages received per peer per second in play; RSS: largest peak of one peer "
        "process ('1 proc': all peers); CPU: median share of one core per peer"
    )
    for g in rep.games:
        extra = "; ".join(g.notes)
        early, late = g.early_late_us
        print(
            f"  {g.label} {g.peers}: {len(g.finality_us)} claims, {g.play_seconds:.0f} s of play, "
            f"{g.incomplete} incomplete, {g.dropped} dropped, {g.moves_per_s:.1f} moves/s per "
            f"bot; median µs: log append {_us(median(g.write_io_us))} synced, "
            f"{_us(median(g.write_total_us))} awaited; claim signed → sent "
            f"{_us(median(g.log_write_us))}, to zmq {_us(median(g.handoff_us))} (last DEALER "
            f"{_us(median(g.handoff_last_us))}), at ROUTER {_us(median(g.transit_us))} (trio's "
            f"loop out of its I/O wait {_us(median(g.wake_us))}), lock wait "
            f"{_us(median(g.lock_wait_us))}, verify+deliver {_us(median(g.feed_us))}, delivered "
            f"at the first receiver {_us(median(g.first_us))}; finality "
            f"early/late {_us(early)}/{_us(late)}" + (f"; {extra}" if extra else "")
        )
        if g.waiting:
            print(
                f"    receive side: the receive loop was waiting when the claim was sent for "
                f"{sum(g.waiting)} of {len(g.waiting)} arrivals; verify+deliver median "
                f"{_us(median(g.feed_us))} µs on the clock, {_us(median(g.feed_cpu_us))} µs of "
                "the trio thread's CPU (the two equal: it ran slowly, it was not preempted)"
            )
        if g.back_us.get("transit"):
            b = {part: _us(median(values)) for part, values in g.back_us.items()}
            print(
                f"    return leg ({len(g.back_us['transit'])} claims): at the receiver, delivered "
                f"→ the core's feed done (fold, finality, answer signed) {b['fold']} "
                f"({b['fold_cpu']} of CPU from the lock), → answer to the mesh {b['answer']} "
                f"(→ its receive loop waiting again {b.get('after', '-')}); answer → at the "
                f"author's ROUTER {b['transit']} (trio's loop out of its I/O wait "
                f"{b.get('wake', '-')}), lock wait {b['lock']}, → final {b['final']} "
                f"({b['final_cpu']} of CPU from the lock)"
            )
        if g.bursts is not None:
            turns, inputs, fed = g.bursts
            print(
                f"    bursts in play: {fed:,} messages fed in {turns:,} receive turns, "
                f"{fed / turns:.2f} a turn, {fed / inputs:.2f} an input to the core "
                f"({inputs / turns:.2f} inputs a turn: its events, then its beats)"
            )
    for n, p in sorted(rep.pyre.items()):
        extra = "; ".join(p.notes)
        rss = max(p.rss_mb) if p.rss_mb else float("nan")
        print(
            f"  pyre {n}: {len(p.delivery_us)} shouts timed, {p.incomplete} incomplete, "
            f"{p.msgs_per_s:.0f} msg/s received per node, peak RSS {rss:.1f} MB, CPU "
            f"{median(p.cpu) * 100:.0f}%" + (f"; {extra}" if extra else "")
        )
    for reason in rep.skipped:
        print(f"  skipped: {reason}")
    print()
    print_cpu(rep)
    print_kinds(rep)
    print_tasks(rep)
    print()
    print_paper(rep, fl)
    print()
    print_verdicts(rep, fl)


def _crypto_used(rep: Report) -> tuple[float, float]:
    """Sign and verify µs of the library the peers use, measured in this run."""
    if rep.in_use == "libsodium" and rep.sodium is not None:
        return rep.sodium
    return rep.sign_us, rep.verify_us


def claim_floor(rep: Report, g: GameFigures) -> float:
    """The CPU floor of one final claim (µs): its signs and verifies at libsodium speed, and
    its messages at the CPU of a sparse bare pyzmq message (sent and received)."""
    if rep.sodium is None:
        return float("nan")
    sign, verify = rep.sodium
    return (
        g.signs_per_claim * sign
        + g.verifies_per_claim * verify
        + g.msgs_per_claim * rep.message_us[1]
    )


def print_cpu(rep: Report) -> None:
    """CPU per final claim, summed over every peer process, next to its floor."""
    if rep.sodium is None:
        print("CPU per claim: no floor (PyNaCl is not installed: pip install -e '.[bench]')")
        sodium = "-"
    else:
        sodium = f"sign {rep.sodium[0]:.0f} µs, verify {rep.sodium[1]:.0f} µs"
    back, sparse = rep.message_us
    print(
        f"CPU per final claim, every peer process summed (less the benchmark's sampler),"
        f" over the play phase (µs); floor ="
        f" signs × libsodium sign + verifies × libsodium verify + messages × bare pyzmq CPU"
        f" per message; measured in this run: libsodium {sodium}; bare pyzmq send+receive"
        f" {sparse:.0f} µs of CPU per message one every {MESSAGE_GAP * 1000:g} ms"
        f" ({back:.0f} back to back); the peers sign with {rep.in_use}"
    )
    if crypto_compiled():
        print(
            "  (the core compiled: signs and verifies counted by the peers' distinct messages"
            " sent and verified, not by the calls: count_crypto)"
        )
    head = (
        f"  {'where':<21}{'peers':>5}{'claims/s':>9}{'CPU/claim':>10}{'signs':>7}"
        f"{'verifies':>9}{'msgs':>7}{'floor':>8}{'×floor':>8}{'thinking':>9}{'person':>8}"
        f"{'×floor':>8}  floor: crypto + messages; sampler (left out)"
    )
    print(head)
    for g in rep.games:
        if math.isnan(g.cpu_per_claim_us):
            continue
        floor = claim_floor(rep, g)
        crypto = floor - g.msgs_per_claim * sparse
        person = g.cpu_per_claim_us - g.thinking_per_claim_us
        print(
            f"  {g.label:<21}{g.peers:>5}{g.claims_per_s:>9.1f}{g.cpu_per_claim_us:>10,.0f}"
            f"{g.signs_per_claim:>7.1f}{g.verifies_per_claim:>9.1f}{g.msgs_per_claim:>7.1f}"
            f"{_us(floor):>8}{_ratio(g.cpu_per_claim_us, floor):>8}"
            f"{_us(g.thinking_per_claim_us):>9}{_us(person):>8}{_ratio(person, floor):>8}"
            f"  {_us(crypto)} + {_us(g.msgs_per_claim * sparse)}; {_us(g.sampler_per_claim_us)}"
        )
    print(
        "  thinking: the bots' strategy (choosing a move), in CPU/claim; person: CPU/claim less"
        " it, what peers played by people would spend (every move still read, signed, folded,"
        " logged and sent)"
    )


def print_kinds(rep: Report) -> None:
    """``--kinds``: messages sent, signatures made and verified per final claim, by kind."""
    games = [g for g in rep.games if g.kinds_per_claim]
    if not games:
        return
    print(
        "per final claim by kind (--kinds; every peer process summed, over the play phase):"
        " messages sent (one per DEALER) / signed / verified"
        + (
            " (the core compiled: signed and verified not counted by kind)"
            if crypto_compiled()
            else ""
        )
    )
    print(f"  {'where':<21}{'peers':>5}" + "".join(f"{k:>20}" for k in KIND_GROUPS))
    for g in games:
        cells = []
        for group in KIND_GROUPS:
            sent, signed, verified = (
                g.kinds_per_claim.get(what, {}).get(group, 0.0)
                for what in ("sent", "sign", "verify")
            )
            cells.append(f"{sent:.2f}/{signed:.2f}/{verified:.2f}")
        print(f"  {g.label:<21}{g.peers:>5}" + "".join(f"{c:>20}" for c in cells))


def print_tasks(rep: Report) -> None:
    """``--tasks``: where each game's CPU went during play, as shares and per final claim."""
    for g in rep.games:
        total = sum(g.task_cpu.values())
        if not total:
            continue
        print(
            f"CPU in play by task, {g.label}, {g.peers} peers (every peer process summed;"
            " task steps per message received):"
        )
        received = g.msgs_per_s * g.peers * g.play_seconds  # (about: rates over play)
        for name, seconds in sorted(g.task_cpu.items(), key=lambda kv: -kv[1]):
            # (The sampler's row is its whole task step, its wake-up too: only its body is
            # left out of the CPU per claim.)
            per_claim = (g.cpu_per_claim_us + g.sampler_per_claim_us) * seconds / total
            steps = g.task_steps.get(name)
            per_message = "" if steps is None or not received else f"{steps / received:8.2f}"
            print(
                f"  {name:<34}{100 * seconds / total:6.1f}%  {_us(per_claim):>8} µs per claim"
                f"{per_message}"
            )


def print_paper(rep: Report, floors: Mapping[str, float]) -> None:
    """Finality and delivery on a LAN with a core per peer, from this run's measured costs.

    With a core per peer nothing waits for a CPU: a claim crosses the network once (half a
    round trip), every receiver takes it in (t + V: our node's work on a received message
    besides its verify, measured at the receivers as "verify+deliver" minus a verify of the
    library in use, plus a verify at libsodium speed), signs its ack (S), the acks cross back,
    and the slowest peer (the author) takes in the n − 1 acks one after the other (an ack
    costs no more than a claim). So delivery = RTT/2 + t + V and finality = RTT + S + n·(t + V).
    The round trip is the bare pyzmq one across the lab's bridge, one every 20 ms (a claim on
    a LAN table wakes idle peers). The log write before a claim is sent is outside both (the
    clocks start at the send), and printed beside them.
    """
    rtt_name = "lab bare paced" if "lab bare paced" in floors else "lo bare paced"
    rtt = floors[rtt_name]
    sign, verify = rep.sodium if rep.sodium is not None else _crypto_used(rep)
    lib = "libsodium" if rep.sodium is not None else rep.in_use
    _, used_verify = _crypto_used(rep)
    where = "the lab bridge" if rtt_name.startswith("lab") else "loopback"
    print(
        f"paper figure, a LAN with a core per peer: RTT {rtt:.0f} µs (bare pyzmq across {where},"
        f" one every {PACED_GAP * 1000:.0f} ms), {lib} sign {sign:.0f} / verify {verify:.0f} µs,"
        f" t = a receiver's work per message besides its verify ({rep.in_use}"
        f" {used_verify:.0f} µs in this run), measured"
    )
    for g in rep.games:
        if g.where != "loopback" or g.ack_delay != DEFAULT_ACK_DELAY or g.tmpfs:
            continue
        if not g.feed_us:
            continue
        t = max(0.0, median(g.feed_us) - used_verify)
        delivery = rtt / 2 + t + verify
        finality = rtt + sign + g.peers * (t + verify)
        print(
            f"  {g.peers} peers: t = {t:.0f} µs; delivery {delivery:,.0f} µs, finality"
            f" {finality:,.0f} µs (measured here on {os.cpu_count()} shared cores:"
            f" {_us(median(g.delivery_us))} and {_us(median(g.finality_us))}); log write before"
            f" the send {_us(median(g.write_io_us))} µs"
        )
        _print_paper_cpu(rep, g)


def _print_paper_cpu(rep: Report, g: GameFigures) -> None:
    """CPU per final claim of peers played by people, a core per peer, from this run's
    measured costs per input: every peer's received bursts (verified, delivered, folded,
    acked, logged: their thread's CPU from the call into the core to the last send), its own
    moves (signed, folded, logged, sent), its looks at the table before each less the bots'
    thinking (a person's screen reads the same view), and each message's bare pyzmq send and
    receive (both ends, every thread). Left out: trio's turns and wake-ups between inputs,
    zmq's I/O thread beyond a bare message's, the benchmark's sampler, and the bots' thinking.
    The figure measured less that thinking is printed beside, and the floor."""
    if math.isnan(g.cpu_per_claim_us) or math.isnan(g.inputs_per_claim_us[0]):
        return
    floor = claim_floor(rep, g)
    recv, own, look = g.inputs_per_claim_us
    bare = g.msgs_per_claim * rep.message_us[1]
    paper = recv + own + look - g.thinking_per_claim_us + bare
    person = g.cpu_per_claim_us - g.thinking_per_claim_us
    print(
        f"    CPU per final claim, peers played by people (every peer summed, each about"
        f" 1/{g.peers}): received {_us(recv)} + own moves {_us(own)} + looks"
        f" {_us(look - g.thinking_per_claim_us)} + {g.msgs_per_claim:.1f} bare messages"
        f" {_us(bare)} = {_us(paper)} µs, {_ratio(paper, floor)} the floor {_us(floor)} (measured"
        f" here less the bots' thinking: {_us(person)} µs, {_ratio(person, floor)})"
    )


def print_verdicts(rep: Report, floors: Mapping[str, float]) -> None:
    """One line per target of issue #4."""
    f_lo = floors["lo bare"]

    def game(where: str, n: int, ack: float = DEFAULT_ACK_DELAY) -> GameFigures | None:
        found = [
            g
            for g in rep.games
            if (g.where, g.peers, g.ack_delay, g.tmpfs) == (where, n, ack, False)
        ]
        return found[0] if found and found[0].finality_us else None

    print("verdicts:")
    # 1. Our claim delivery beats Pyre's unsigned SHOUT delivery (in the lab, same peer counts).
    pairs = [(g, rep.pyre[g.peers]) for g in rep.games if g.where == "lab" and g.peers in rep.pyre]
    pairs = [(g, p) for g, p in pairs if g.delivery_us and p.delivery_us]
    if pairs:
        met = all(median(g.delivery_us) < median(p.delivery_us) for g, p in pairs)
        detail = ", ".join(
            f"{g.peers} peers {median(g.delivery_us):,.0f} vs {median(p.delivery_us):,.0f}"
            for g, p in pairs
        )
        print(
            f"  [{'MET' if met else 'MISSED'}] claim delivery beats Pyre SHOUT delivery "
            f"(lab, medians, µs): {detail}"
        )
    else:
        print("  [n/a] claim delivery vs Pyre: Pyre did not run (see skipped)")
    # 2. Median finality at 4 peers <= 3 x floor + signing/verify cost.
    # The critical path signs twice (the claim, one ack) and verifies n + 1 times (the author
    # checks its own claim, a receiver the claim, the last peer to finish n - 1 acks).
    crypto = 2 * rep.sign_us + 5 * rep.verify_us
    bound = 3 * f_lo + crypto
    for ack in sorted({g.ack_delay for g in rep.games}, reverse=True):
        g4 = game("loopback", 4, ack)
        if g4 is None:
            continue
        fin = median(g4.finality_us)
        print(
            f"  [{'MET' if fin <= bound else 'MISSED'}] median finality at 4 peers (loopback, "
            f"ack_delay {ack * 1000:g} ms) {fin:,.0f} µs <= 3 × floor {f_lo:.0f} + crypto "
            f"{crypto:.0f} (2 signs + 5 verifies) = {bound:,.0f} µs"
        )
    # What the machine allows: the bound above counts only the crypto on the critical path, as
    # if each peer had a core of its own (a real LAN). Here the peers share the machine's cores,
    # and one claim costs n signs (the claim, n - 1 acks) and n + (n - 1)^2 verifies (the claim
    # everywhere, the author included; each ack at every other peer), in whatever order.
    cores = os.cpu_count() or 1
    n = 4
    total = n * rep.sign_us + (n + (n - 1) ** 2) * rep.verify_us
    print(
        f"  [info] on {cores} shared cores, the crypto of one claim at {n} peers alone takes "
        f"{total:,.0f} µs of CPU ({n} signs + {n + (n - 1) ** 2} verifies), so finality "
        f">= 3 × floor + {total:,.0f} / {min(cores, n)} = "
        f"{3 * f_lo + total / min(cores, n):,.0f} µs here, before any other work"
    )
    # 3. 8 peers at full speed keep up: no growing backlog.
    g8 = game("loopback", 8)
    if g8 is not None and g8.backlog_grows is not None:
        span = "a whole round" if g8.finished else f"{g8.play_seconds:.0f} s of play"
        early, late = g8.early_late_us
        pace = [g.moves_per_s for g in rep.games if g.where == "loopback" and g.peers == 2]
        versus = f" (2 peers: {pace[0]:.1f})" if pace else ""
        print(
            f"  [{'MISSED' if g8.backlog_grows else 'MET'}] 8 peers at full speed keep up over "
            f"{span}: backlog {g8.backlog}; finality early/late quarter {early:,.0f}/"
            f"{late:,.0f} µs; {g8.dropped} sends dropped; {g8.moves_per_s:.1f} moves/s per "
            f"bot{versus}"
        )
    # Issue 18's targets, each against a reference measured in this run.
    g4 = game("loopback", 4)
    if g4 is not None and not math.isnan(g4.cpu_per_claim_us) and rep.sodium is not None:
        floor = claim_floor(rep, g4)
        ratio = g4.cpu_per_claim_us / floor
        print(
            f"  [{'MET' if ratio <= CPU_TARGET else 'MISSED'}] CPU per final claim at 4 peers"
            f" {g4.cpu_per_claim_us:,.0f} µs <= {CPU_TARGET} × floor {floor:,.0f} µs"
            f" ({ratio:.1f}×; {g4.signs_per_claim:.1f} signs, {g4.verifies_per_claim:.1f}"
            f" verifies, {g4.msgs_per_claim:.1f} messages per claim)"
        )
    g2 = game("loopback", 2)
    rtt = floors.get("lo bare trio paced", float("nan"))
    if g2 is not None:
        sign, verify = rep.sodium if rep.sodium is not None else _crypto_used(rep)
        bound = 2 * (rtt + 2 * sign + 2 * verify)
        fin = median(g2.finality_us)
        print(
            f"  [{'MET' if fin <= bound else 'MISSED'}] median finality at 2 peers (loopback)"
            f" {fin:,.0f} µs <= 2 × (bare trio+pyzmq round trip one every"
            f" {PACED_GAP * 1000:.0f} ms {rtt:.0f} + 2 signs + 2 verifies"
            f" {2 * sign + 2 * verify:.0f}) = {bound:,.0f} µs"
        )
    for n, factor in ((2, 1.1), (8, 3.0)):
        lab_game = game("lab", n)
        shout = rep.pyre.get(n)
        if lab_game is None or shout is None or not shout.delivery_us:
            print(f"  [n/a] delivery at {n} peers within {factor}× Pyre's: no lab or no Pyre run")
            continue
        ours, theirs = median(lab_game.delivery_us), median(shout.delivery_us)
        print(
            f"  [{'MET' if ours <= factor * theirs else 'MISSED'}] median delivery at {n} peers"
            f" (lab) {ours:,.0f} µs <= {factor} × Pyre's SHOUT {theirs:,.0f} µs"
            f" ({ours / theirs:.2f}×)"
        )
    # 4. Peak memory per peer process.
    rss = [max(g.rss_mb) for g in rep.games if g.rss_mb and g.where != "inproc"]
    if rss:
        worst = max(rss)
        print(
            f"  [{'MET' if worst < RSS_TARGET_MB else 'MISSED'}] peak RSS per peer process "
            f"{worst:.1f} MB < {RSS_TARGET_MB:.0f} MB"
        )


# -- main ---------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr, exit status 2 (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"bench_lan: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (or, with a ``_role`` first argument, one of its child processes)."""
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    args_list = list(sys.argv[1:] if argv is None else argv)
    roles: dict[str, Callable[[list[str]], int]] = {
        "_echo": lambda a: round_trips.zmq_echo(a[0]),
        "_ping": lambda a: child_ping(a[0], int(a[1]), int(a[2]), int(a[3])),
        "_sink": lambda a: child_sink(a[0], int(a[1])),
        "_source": lambda a: child_source(a[0], int(a[1]), int(a[2]), float(a[3])),
        "_node": lambda a: child_node(a[0], a[1], a[2]),
        "_pyre": lambda a: child_pyre(a[0], int(a[1]), a[2]),
    }
    if args_list and args_list[0] in roles:
        return roles[args_list[0]](args_list[1:])
    parser = _Parser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds per configuration")
    parser.add_argument(
        "--peers", default=None, help="peer counts (default 2,4,8; 2,3,4 with --deal shuffle)"
    )
    parser.add_argument(
        "--tmpfs",
        action="store_true",
        help="with --deal shuffle: each game again with the logs on tmpfs (no disk in fsync)",
    )
    parser.add_argument(
        "--deal",
        choices=("commit", "shuffle"),
        default="commit",
        help="shuffle: loopback games of the dealerless shuffle; print each turn-up (move sent "
        "-> every share at the mover, at every peer) beside a claim's finality in the same "
        "games, and the share work's CPU per turn-up per peer (no lab, Pyre or extra games)",
    )
    parser.add_argument("--no-lab", action="store_true", help="loopback only (no namespaces)")
    parser.add_argument(
        "--no-loopback", action="store_true", help="no games on loopback (floors still measured)"
    )
    parser.add_argument("--no-pyre", action="store_true", help="skip the Pyre comparison")
    parser.add_argument(
        "--inproc",
        action="store_true",
        help="also run each peer count with every peer in one process",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="cap on each game (default: 6 with --quick, else 120: a whole round)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the bots' and keys' seed")
    parser.add_argument(
        "--speed",
        type=int,
        default=10,
        choices=range(1, 11),
        metavar="1..10",
        help="the bots' pace (default 10, a quick person's: about 4 moves a second; 5 is 2): at"
        " a slower pace the costs that run by the clock, not by the moves, weigh more a claim",
    )
    parser.add_argument(
        "--tasks",
        action="store_true",
        help="also print each game's CPU in play by trio task (an instrument in every peer)",
    )
    parser.add_argument(
        "--kinds",
        action="store_true",
        help="also print messages, signatures and verifies per final claim by kind",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run this and every child process at this niceness (negative, as root: ahead of "
        "other work on a shared machine; every party measured gets the same)",
    )
    args = parser.parse_args(args_list)
    if args.peers is None:
        args.peers = "2,3,4" if args.deal == "shuffle" else "2,4,8"
    try:
        peer_counts = sorted({int(p) for p in args.peers.split(",")})
    except ValueError:
        peer_counts = []
    if not peer_counts or any(not 2 <= p <= 16 for p in peer_counts):
        parser.error(f"--peers wants counts from 2 to 16, like 2,4,8; not {args.peers!r}")
    if args.seconds is not None and args.seconds <= 0:
        parser.error("--seconds must be positive")
    seconds = args.seconds if args.seconds is not None else (6.0 if args.quick else 120.0)
    floor_count = 400 if args.quick else 10000
    paced_count = 10 if args.quick else 200
    pyre_seconds = 2.0 if args.quick else 10.0

    skipped: list[str] = []
    why_lab = "--no-lab" if args.no_lab else lab_unavailable()
    why_pyre = "--no-pyre" if args.no_pyre else pyre_available()
    if why_lab:
        skipped.append(f"lab games and lab floor: {why_lab}")
        why_pyre = why_pyre or f"Pyre runs only inside the lab's namespaces ({why_lab})"
    if why_pyre:
        skipped.append(f"Pyre: {why_pyre}")
    if args.nice:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, args.nice)  # children inherit it
        except OSError as exc:
            parser.error(f"--nice {args.nice}: {exc.strerror}")
    load = os.getloadavg()
    started = time.monotonic()
    if args.deal == "shuffle":
        return run_shuffle(
            peer_counts, seconds, args.seed, floor_count, paced_count, tmpfs=args.tmpfs
        )

    def game(
        n: int, where: str, ack: float = DEFAULT_ACK_DELAY, lab: Any = None, tmpfs: bool = False
    ) -> GameFigures:
        extra = f" (ack_delay {ack * 1000:g} ms)" if ack != DEFAULT_ACK_DELAY else ""
        extra += " (logs on tmpfs)" if tmpfs else ""
        print(f"{where} game, {n} peers{extra} ...", flush=True)
        return run_game(
            n,
            seconds=seconds,
            ack_delay=ack,
            seed=args.seed,
            where=where,
            workdir=workdir,
            lab=lab,
            logs=Path(shm) if tmpfs else None,
            tasks=args.tasks,
            kinds=args.kinds,
            speed=args.speed,
        )

    shm_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with (
        tempfile.TemporaryDirectory(prefix="bench-lan-") as tmp,
        tempfile.TemporaryDirectory(prefix="bench-lan-", dir=shm_root) as shm,
    ):
        workdir = Path(tmp)
        games = [] if args.no_loopback else [game(n, "loopback") for n in peer_counts]
        if 4 in peer_counts and not args.quick and not args.no_loopback:
            # The peer core's default ack window, for comparison with the runtime's; and the
            # logs on tmpfs, to separate the disk from the protocol's cost on this machine.
            games.append(game(4, "loopback", ack=CORE_ACK_DELAY))
            if shm_root is not None:
                games.append(game(4, "loopback", tmpfs=True))
        if args.inproc:
            games.extend(game(n, "inproc") for n in peer_counts)
        size = next((g.claim_size for g in games if g.claim_size), 0) or FALLBACK_SIZE
        sign_us, verify_us = crypto_cost_us(size)
        sodium = sodium_cost_us(size)
        print("bare pyzmq CPU per message ...", flush=True)
        message_us = (
            message_cost_us(4000 if args.quick else 20000, size, 0.0),
            message_cost_us(200 if args.quick else 1000, size, MESSAGE_GAP),
        )
        print("floors on loopback ...", flush=True)
        floors = {f"lo {k}": v for k, v in measure_floors(floor_count, paced_count, size).items()}
        pyre: dict[int, PyreFigures] = {}
        if not why_lab:
            from p2p_nertz.testing.netns import Lab

            with Lab(max(peer_counts)) as lab:
                print("floors across the lab bridge ...", flush=True)
                lab_floors = measure_floors(floor_count, paced_count, size, lab=lab)
                floors.update({f"lab {k}": v for k, v in lab_floors.items()})
                for n in peer_counts:
                    games.append(game(n, "lab", lab=lab))
                    if not why_pyre:
                        print(f"Pyre in the lab, {n} nodes ...", flush=True)
                        pyre[n] = run_pyre(
                            n,
                            lab=lab,
                            size=size,
                            seconds=pyre_seconds,
                            interval=PYRE_INTERVAL,
                            workdir=workdir,
                        )
        print(f"(ran {time.monotonic() - started:.0f} s)")
        report = Report(size, sign_us, verify_us, floors, games, pyre, skipped, load)
        report.sodium, report.message_us, report.in_use = sodium, message_us, crypto_in_use()
        print_report(report)
    return 0


def run_shuffle(
    peer_counts: Sequence[int],
    seconds: float,
    seed: int,
    floor_count: int,
    paced_count: int,
    *,
    tmpfs: bool = False,
) -> int:
    """``--deal shuffle``: one loopback game per peer count (and one with the logs on tmpfs,
    ``tmpfs``), and the turn-up table."""
    load = os.getloadavg()
    games: list[GameFigures] = []
    shm_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with (
        tempfile.TemporaryDirectory(prefix="bench-lan-") as tmp,
        tempfile.TemporaryDirectory(prefix="bench-lan-", dir=shm_root) as shm,
    ):
        for n in peer_counts:
            for logs in [None, Path(shm)] if tmpfs else [None]:
                where = " (logs on tmpfs)" if logs else ""
                print(f"loopback shuffle game, {n} peers{where} ...", flush=True)
                games.append(
                    run_game(
                        n,
                        seconds=seconds,
                        ack_delay=DEFAULT_ACK_DELAY,
                        seed=seed,
                        where="loopback",
                        workdir=Path(tmp),
                        logs=logs,
                        deal="shuffle",
                    )
                )
    size = next((g.claim_size for g in games if g.claim_size), 0) or FALLBACK_SIZE
    print("floors on loopback ...", flush=True)
    floors = measure_floors(floor_count, paced_count, size)
    print_turnups(games, median(floors["bare paced"]), median(floors["trio paced"]), load)
    return 0


def print_turnups(
    games: Sequence[GameFigures], rtt_us: float, trio_us: float, load: Sequence[float]
) -> None:
    """The turn-up table of ``--deal shuffle`` (medians and p99 in ms; ratios to the median
    of a claim's finality in the same game): each other member's share counted from the first
    of its ``deck_reveal`` beat and its ``deck_shares`` event (``beat|event``), and from the
    events alone (``event``)."""
    print(f"\nload average at the start: {' '.join(f'{x:.2f}' for x in load)}")
    print(peers_build_line(games))
    print(
        f"round trip on loopback, one every {PACED_GAP * 1000:g} ms: bare pyzmq"
        f" {rtt_us / 1000:.3f} ms, through the trio adapter {trio_us / 1000:.3f} ms"
    )
    print(
        "turn-up: a move or claim that turns cards up is sent (after its log write) -> every"
        " other member's share of a card it turned is held at the mover (@mover) / at every"
        " peer (@all), each share from the first of its deck_reveal beat and its deck_shares"
        " event (beat|event), or from the event alone (event); claim: sent -> final at every"
        " peer. ms; CPU: the share work of one peer per position opened (thread time)"
    )
    print(
        " peers  logs   turn-ups  beat|event @mover med  p99  @all med  event @mover med"
        "  claims  final med   p99  beat|event/claim  event/claim  CPU/turn-up/peer  done"
    )
    for g in games:
        if not (g.turnup_any_us or g.turnup_us) or not g.finality_us:
            print(f"{g.peers:6d}  (no turn-up or no claim measured) {'; '.join(g.notes)}")
            continue
        claim = median(g.finality_us)
        nan = [float("nan")]
        any_ = median(g.turnup_any_us or nan)
        any_all = median(g.turnup_any_all_us or nan)
        event = median(g.turnup_us or nan)
        ratio = any_ / claim
        print(
            f"{g.peers:6d}  {'tmpfs' if g.tmpfs else 'disk ':5s}  {len(g.turnup_any_us):8d}"
            f"  {any_ / 1000:21.2f}  {p99(g.turnup_any_us or nan) / 1000:4.1f}"
            f"  {any_all / 1000:8.2f}  {event / 1000:16.2f}"
            f"  {len(g.finality_us):6d}  {claim / 1000:9.2f}  {p99(g.finality_us) / 1000:5.1f}"
            f"  {ratio:16.2f}  {event / claim:11.2f}"
            f"  {median(g.share_cpu_us or nan) / 1000:13.2f} ms"
            f"  {'yes' if g.finished else 'no'}"
            + ("  (target < 2: met)" if ratio < 2 else "  (target < 2: NOT met)")
        )
        stages = g.turnup_stages_us
        if stages and stages.get("beat"):
            print(
                f"        by the beat (median, ms, over {len(stages['beat'])} move x member):"
                f" sent -> the other's deck_reveal at the mover {median(stages['beat']) / 1000:.2f}"
            )
        if stages and stages.get("out"):
            print(
                "        by the event (medians, ms, over {} move x member): move out {:.2f},"
                " share made {:.2f}, log write {:.2f}, back {:.2f}; the four together"
                " {:.2f}".format(
                    len(stages["out"]), *(median(stages[k]) / 1000 for k in list(stages)[:5])
                )
            )
        asked, answered = g.share_wants
        print(
            f"        deck_want: {asked} shares asked for (a share beat late past want_after, or"
            f" lost), {answered} sent back in answers"
        )
        for note in g.notes:
            print(f"        note: {note}")


if __name__ == "__main__":
    sys.exit(main())
