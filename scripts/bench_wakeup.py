#!/usr/bin/env python3
"""The trio thread's work per message received outside the core, against a bare trio loop.

Issue 18 (docs/latency.md, session 26): on a live peer nearly every message arrives on its
own (1.2-1.3 messages a receive turn at 4 peers), so whatever the receive loop does per turn
(the wake-up, the adapter's wait and reads, the lock) is paid per message. This measures that
part alone, without the core, on real sockets shaped as the mesh's: a ROUTER made by
:func:`~p2p_nertz.runtime.zmqtrio.create_socket` with a member's CURVE keys (its receives end
with the connection's ZAP User-Id, as the node's), fed over tcp://127.0.0.1 by a plain pyzmq
DEALER in another thread that sends one message every ``--interval`` ms (so that each
message wakes the receiver, as on a live table).

* **the adapter**: the node's receive loop without the core (``PeerNode._receive_loop``:
  ``recv_multipart``, ``try_recv_multipart`` until none, the node's lock taken and given
  back);
* **the reference**, in the same run, alternated with it round by round: a bare trio loop on
  the same kind of socket, what any trio program must do per message (read ``EVENTS``; when
  no message waits, ``trio.lowlevel.wait_readable`` on the FD; the frames read without
  blocking, the User-Id read).

It prints, for each, the Python opcodes per message on the trio thread by where they run
(trio, the adapter, pyzmq and ``enum``, the loop itself), counted over ``--counted`` traced
rounds first (the load does not move a count, but it moves how many messages wait at a
wake-up: the turns per message are printed beside), then the trio thread's CPU per message
over ``--rounds`` untraced rounds (``time.thread_time``, the median of the rounds), and the
CPU's ratio to the reference's. The sender's
thread is not counted. ``--baseline FILE`` runs another ``zmqtrio.py`` (e.g. main's) as a
third loop, alternated with the two, for an A/B in one run.

    python scripts/bench_wakeup.py [--rounds 7] [--messages 300] [--interval 5]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType, ModuleType
from typing import Any, NoReturn

import trio
import zmq

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime import zmqtrio
from p2p_nertz.runtime.gate import Gate, client_keys, server_keys
from p2p_nertz.runtime.mesh import ROUTER_HWM, routing_id

NS_PER_US = 1000
WARM = 20  # messages taken before counting (connection, first wake-ups)
ROUND_TIMEOUT = 20.0  # seconds a round may take beyond its sends (a lost message: an error)


@dataclass
class Figures:
    """One loop's figures over the rounds."""

    cpu_us: list[float] = field(default_factory=list)  # each round's CPU per message
    opcodes: collections.Counter[str] = field(default_factory=collections.Counter)
    counted: int = 0  # messages under the opcode count
    turns: int = 0  # receive turns under the opcode count (a turn may take several)


def _where(filename: str, adapter_file: str) -> str:
    """Which part a Python function belongs to, by its file."""
    if filename == adapter_file:
        return "adapter"
    if f"{os.sep}trio{os.sep}" in filename or f"{os.sep}outcome{os.sep}" in filename:
        return "trio"
    if f"{os.sep}zmq{os.sep}" in filename or filename.endswith(f"{os.sep}enum.py"):
        return "pyzmq, enum"
    if filename.startswith("<attrs generated"):
        return "trio"  # (attrs classes: trio's cancel scopes, its waiters)
    return "the loop, the rest"


class Pair:
    """A CURVE ROUTER made by ``adapter.create_socket`` with the mesh's options, a DEALER
    in this context as a member's, and the gate admitting the DEALER's key."""

    def __init__(self, adapter: ModuleType) -> None:
        me, other = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)
        self.ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.gate = Gate(self.ctx, [other.peer_id])
        self.gate.start()
        self.router: Any = adapter.create_socket(
            self.ctx, zmq.ROUTER, recv_hwm=ROUTER_HWM, curve=server_keys(me)
        )
        self.router.bind("tcp://127.0.0.1:0")
        self.dealer = self.ctx.socket(zmq.DEALER)
        self.dealer.set(zmq.LINGER, 0)
        self.dealer.set(zmq.ROUTING_ID, routing_id(other.peer_id))
        client_keys(server_keys(other), me.peer_id).apply(self.dealer)
        self.dealer.connect(self.router.endpoints[0])

    def close(self) -> None:
        self.dealer.close(linger=0)
        self.router.close()
        self.gate.close()
        self.ctx.term()


def _send_paced(
    dealer: zmq.Socket[bytes], count: int, interval: float, size: int, warmed: threading.Event
) -> None:
    """Send :data:`WARM` messages, wait until the receiver has them all (``warmed``), then
    ``count`` more, one every ``interval`` seconds (the sender's own thread)."""
    body = b"c" * size
    for _ in range(WARM):
        dealer.send(body)
    if not warmed.wait(ROUND_TIMEOUT):
        return  # (the receiver failed: its round's timeout says so)
    due = time.perf_counter()
    for _ in range(count):
        dealer.send(body)
        due += interval
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)


async def _adapter_loop(router: Any, count: int, on_turn: Callable[[int], None]) -> None:
    """The node's receive loop, the core left out (``PeerNode._receive_loop``)."""
    lock = trio.Lock()
    got = 0
    while got < count:
        batch = [await router.recv_multipart()]
        while (more := router.try_recv_multipart()) is not None:
            batch.append(more)
        try:
            lock.acquire_nowait()  # (the node's _acquire: its recv was the checkpoint)
        except trio.WouldBlock:
            await lock.acquire()
        lock.release()
        got += len(batch)
        on_turn(got)


async def _bare_loop(router: Any, count: int, on_turn: Callable[[int], None]) -> None:
    """What a trio program must do per message on the same socket: EVENTS, the FD's wait,
    the frames read without blocking, the User-Id."""
    sock = router._sock  # (the zmq socket under the adapter: the same options and keys)
    fd = sock.get(zmq.FD)
    pollin, noblock = int(zmq.POLLIN), int(zmq.NOBLOCK)
    got = 0
    while got < count:
        if not sock.get(zmq.EVENTS) & pollin:
            await trio.lowlevel.wait_readable(fd)
            continue
        batch = []
        while sock.get(zmq.EVENTS) & pollin:
            frames = [sock.recv(noblock, copy=False)]
            while frames[-1].more:
                frames.append(sock.recv(noblock, copy=False))
            batch.append([*(f.bytes for f in frames), frames[-1].get("User-Id").encode()])
        got += len(batch)
        on_turn(got)


Loop = Callable[[Any, int, Callable[[int], None]], Any]


def one_round(
    adapter: ModuleType, loop: Loop, args: argparse.Namespace, fig: Figures, *, counting: bool
) -> None:
    """One run of ``loop`` over a fresh pair: its opcodes by where they run if ``counting``
    (traced, so its CPU is not kept), else its CPU per message."""
    pair = Pair(adapter)
    count = WARM + args.messages
    warmed = threading.Event()  # the receiver has taken the WARM messages: the count begins
    sender = threading.Thread(
        target=_send_paced,
        args=(pair.dealer, args.messages, args.interval / 1e3, args.size, warmed),
    )
    adapter_file = adapter.__file__
    opcodes: collections.Counter[Any] = collections.Counter()
    state = {"began": 0.0, "from": 0, "turns": 0}

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            opcodes[frame.f_code.co_filename] += 1
        return trace

    def on_turn(got: int) -> None:
        if got == WARM and not state["from"]:  # (no counted message is sent before this)
            state["from"], state["began"] = got, time.thread_time()
            if counting:
                sys.settrace(trace)
            warmed.set()
        elif state["from"]:
            state["turns"] += 1

    async def main() -> None:
        sender.start()
        try:
            with trio.fail_after(ROUND_TIMEOUT + count * args.interval / 1e3):
                await loop(pair.router, count, on_turn)
        finally:
            sys.settrace(None)

    try:
        trio.run(main)
        cpu = time.thread_time() - state["began"]
    finally:
        sender.join()
        pair.close()
    n = count - state["from"]
    if counting:
        for filename, c in opcodes.items():
            fig.opcodes[_where(filename, adapter_file)] += c
        fig.counted += n
        fig.turns += state["turns"]
    else:
        fig.cpu_us.append(cpu / n * 1e6)


def load_adapter(path: str) -> ModuleType:
    """Another ``zmqtrio.py`` (e.g. main's), imported under a name of its own."""
    spec = importlib.util.spec_from_file_location("zmqtrio_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"bench_wakeup: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def report(figures: dict[str, Figures], reference: str) -> None:
    """Print each loop's opcodes and CPU per message, and its ratio to ``reference``."""
    parts = ["trio", "adapter", "pyzmq, enum", "the loop, the rest"]
    print(
        f"  {'loop':<22}{'turns/msg':>10}{'opcodes/msg':>12}"
        + "".join(f"{p:>20}" for p in parts)
        + f"{'CPU µs/msg':>12}{'rounds':>16}{'× ref CPU':>11}"
    )
    ref = statistics.median(figures[reference].cpu_us)
    for name, fig in figures.items():
        n = max(1, fig.counted)
        cpu = statistics.median(fig.cpu_us)
        spread = f"{min(fig.cpu_us):.1f}-{max(fig.cpu_us):.1f}"
        print(
            f"  {name:<22}{fig.turns / n:10.2f}{sum(fig.opcodes.values()) / n:12,.0f}"
            + "".join(f"{fig.opcodes[p] / n:20,.0f}" for p in parts)
            + f"{cpu:12.1f}{spread:>16}{cpu / ref:10.2f}×"
        )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"bench_wakeup: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternated rounds (default 7)")
    parser.add_argument("--messages", type=int, default=300, help="messages a round")
    parser.add_argument("--interval", type=float, default=5.0, help="ms between messages")
    parser.add_argument("--size", type=int, default=236, help="bytes a message (a claim's)")
    parser.add_argument(
        "--counted", type=int, default=2, help="rounds traced for the opcodes first (default 2)"
    )
    parser.add_argument("--baseline", help="another zmqtrio.py to run as a third loop")
    args = parser.parse_args(argv)
    if min(args.rounds, args.counted, args.messages, args.size) < 1 or args.interval < 0:
        parser.error(
            "--rounds, --counted, --messages and --size must be positive, --interval not negative"
        )
    loops: dict[str, tuple[ModuleType, Loop]] = {
        "bare trio + pyzmq": (zmqtrio, _bare_loop),
        "the adapter": (zmqtrio, _adapter_loop),
    }
    if args.baseline:
        loops["the adapter, baseline"] = (load_adapter(args.baseline), _adapter_loop)
    figures = {name: Figures() for name in loops}
    print(
        f"load average {os.getloadavg()[0]:.2f} at the start; {args.counted} rounds traced for "
        f"the opcodes, then {args.rounds} for the CPU, each of {args.messages} messages of "
        f"{args.size} B, one every {args.interval:g} ms, the loops alternated (the order "
        "reversed every other round)"
    )
    for r in range(-args.counted, args.rounds):
        order = list(loops) if r % 2 == 0 else list(reversed(loops))
        for name in order:
            adapter, loop = loops[name]
            one_round(adapter, loop, args, figures[name], counting=r < 0)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print("per message received, on the trio thread (the sender's thread not counted):")
    report(figures, "bare trio + pyzmq")
    return 0


if __name__ == "__main__":
    sys.exit(main())
