#!/usr/bin/env python3
"""Benchmark the transport: the trio adapter against zmq-anyio and fixed references (issue 18).

In one run, alternated (every round runs each implementation once, in a rotating order, so that
the load of a shared machine falls on all of them alike), medians of the rounds' medians:

* **idle round trip**: a DEALER sends a message the size of a claim envelope to an echoing
  ROUTER in another process (bare blocking pyzmq, the same for every client) and waits for the
  echo; one every 20 ms (game traffic is sparse: every hop wakes idle threads), and back to
  back (warm);
* **throughput**: one sending task and one receiving task push ``--messages`` messages through
  the same echo, as fast as the socket lets them (at most ``WINDOW`` in flight);

for these clients:

* ``pyzmq``: bare blocking pyzmq (the floor of a zmq round trip);
* ``trio+pyzmq``: bare pyzmq waited on by trio (``wait_readable`` on the zmq FD, then EVENTS):
  the least a trio program can do;
* ``trio sockets``: plain trio TCP streams to a blocking TCP echo (no zmq at all);
* ``zmqtrio``: :mod:`p2p_nertz.runtime.zmqtrio`, this tree's adapter;
* ``zmq-anyio``: zmq-anyio (``bench`` extra) through ``scripts/zmq_anyio_shim.py``;
* ``zmqtrio@FILE`` with ``--baseline FILE``: another version of the adapter, for A/B.

``--conformance`` also runs the adapter's conformance suite (``tests/test_zmqtrio.py``) against
both the adapter and zmq-anyio and prints each one's failures.

    python scripts/bench_transport.py [--rounds 7] [--pings 100] [--messages 20000]
                                      [--size 256] [--baseline FILE] [--conformance]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parent.parent
for path in (ROOT, SCRIPT.parent):  # run as a file: the project and the shim are importable
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import round_trips  # noqa: E402
from round_trips import PACED_GAP  # noqa: E402

WARMUP = 50
WINDOW = 200  # throughput: messages in flight at most (below every HWM)
NS_PER_US = 1000


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest-rank method, NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


# -- the echoes (child processes) ----------------------------------------------------------------
def child_zmq_echo(endpoint: str) -> int:
    """A blocking ROUTER that echoes every message until it receives ``STOP``."""
    return round_trips.zmq_echo(endpoint, hwm=100_000)


def child_tcp_echo(port: int, size: int) -> int:
    """A blocking TCP echo of fixed-size messages, one connection after another, on ``port``
    of 127.0.0.1 (0: a free one); prints the endpoint it bound first (``ports.say_bound``)."""
    from ports import say_bound

    server = socket.create_server(("127.0.0.1", port))
    say_bound(f"tcp://127.0.0.1:{server.getsockname()[1]}")
    while True:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                conn.sendall(data)
                if data.endswith(b"STOP"):
                    server.close()
                    return 0


# -- the clients ---------------------------------------------------------------------------------
def load_adapter(name: str) -> ModuleType:
    """The module behind an implementation name: the adapter, zmq-anyio's shim, or a file."""
    if name == "zmqtrio":
        from p2p_nertz.runtime import zmqtrio

        return zmqtrio
    if name == "zmq-anyio":
        import zmq_anyio_shim

        return zmq_anyio_shim
    path = Path(name.removeprefix("zmqtrio@"))
    spec = importlib.util.spec_from_file_location("zmqtrio_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def client(impl: str, endpoint: str, pings: int, messages: int, size: int) -> int:
    """Time ``pings`` idle and back-to-back round trips and ``messages`` of throughput with
    ``impl``; print the figures as JSON (ns per round trip, messages per second)."""
    import trio
    import zmq

    payload = os.urandom(size)
    figures: dict[str, Any] = {}
    if impl == "pyzmq":
        figures = _bare_pyzmq(endpoint, payload, pings, messages)
    elif impl == "trio sockets":
        figures = trio.run(_trio_sockets, endpoint, payload, pings, messages)
    elif impl == "trio+pyzmq":
        ctx = zmq.Context()
        try:
            figures = trio.run(_trio_pyzmq, ctx, endpoint, payload, pings, messages)
        finally:
            ctx.destroy(linger=0)
    else:
        adapter = load_adapter(impl)
        ctx = zmq.Context()
        try:
            figures = trio.run(_through_adapter, adapter, ctx, endpoint, payload, (pings, messages))
        finally:
            ctx.destroy(linger=0)
    print(json.dumps(figures), flush=True)
    return 0


def _bare_pyzmq(endpoint: str, payload: bytes, pings: int, messages: int) -> dict[str, Any]:
    import zmq

    ctx = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)

    def rtts(count: int, gap: float) -> list[int]:
        return round_trips.blocking(dealer, payload, count, gap)

    rtts(WARMUP, 0)
    figures: dict[str, Any] = {"warm": rtts(pings, 0), "idle": rtts(pings, PACED_GAP)}
    # Throughput: the same window as the others, in one thread (send while there is room in
    # the window, else receive).
    start = time.perf_counter()
    sent = received = 0
    while received < messages:
        if sent < messages and sent - received < WINDOW:
            dealer.send(payload)
            sent += 1
        else:
            dealer.recv()
            received += 1
    figures["throughput"] = messages / (time.perf_counter() - start)
    dealer.close()
    ctx.term()
    return figures


async def _trio_pyzmq(
    ctx: Any, endpoint: str, payload: bytes, pings: int, messages: int
) -> dict[str, Any]:
    import zmq

    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    fd = dealer.getsockopt(zmq.FD)

    async def rtts(count: int, gap: float) -> list[int]:
        return await round_trips.trio_pyzmq(dealer, payload, count, gap)

    await rtts(WARMUP, 0)
    figures: dict[str, Any] = {"warm": await rtts(pings, 0), "idle": await rtts(pings, PACED_GAP)}
    start = time.perf_counter()
    sent = received = 0
    while received < messages:  # one task: it owns the FD (no second watcher possible)
        if sent < messages and sent - received < WINDOW:
            dealer.send(payload, zmq.NOBLOCK)
            sent += 1
        else:
            await round_trips.wait_recv(dealer, fd)
            received += 1
    figures["throughput"] = messages / (time.perf_counter() - start)
    dealer.close()
    return figures


async def _trio_sockets(endpoint: str, payload: bytes, pings: int, messages: int) -> dict[str, Any]:
    import trio

    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    stream = await trio.open_tcp_stream(host, int(port))
    stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    size = len(payload)

    async def receive(count: int) -> None:
        wanted = count * size
        while wanted:
            data = await stream.receive_some(min(wanted, 65536))
            wanted -= len(data)

    async def rtts(count: int, gap: float) -> list[int]:
        out = []
        for _ in range(count):
            start = time.perf_counter_ns()
            await stream.send_all(payload)
            await receive(1)
            out.append(time.perf_counter_ns() - start)
            if gap:
                await trio.sleep(gap)
        return out

    await rtts(WARMUP, 0)
    figures: dict[str, Any] = {"warm": await rtts(pings, 0), "idle": await rtts(pings, PACED_GAP)}
    window = trio.Semaphore(WINDOW)
    start = time.perf_counter()

    async def sender() -> None:
        for _ in range(messages):
            await window.acquire()
            await stream.send_all(payload)

    async def receiver() -> None:
        # A stream has no message boundaries: count whole messages in what arrives.
        pending = messages * size
        done = 0
        while pending:
            pending -= len(await stream.receive_some(min(pending, 65536)))
            whole = (messages * size - pending) // size
            for _ in range(whole - done):
                window.release()
            done = whole

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sender)
        nursery.start_soon(receiver)
    figures["throughput"] = messages / (time.perf_counter() - start)
    await stream.send_all(b"STOP")
    await stream.aclose()
    return figures


async def _through_adapter(
    adapter: ModuleType, ctx: Any, endpoint: str, payload: bytes, counts: tuple[int, int]
) -> dict[str, Any]:
    pings, messages = counts
    import trio

    async with adapter.open_dealer(ctx, endpoint) as dealer:

        async def rtts(count: int, gap: float) -> list[int]:
            return await round_trips.adapter(dealer, payload, count, gap)

        await rtts(WARMUP, 0)
        figures: dict[str, Any] = {
            "warm": await rtts(pings, 0),
            "idle": await rtts(pings, PACED_GAP),
        }
        window = trio.Semaphore(WINDOW)
        start = time.perf_counter()

        async def sender() -> None:
            for _ in range(messages):
                await window.acquire()
                await dealer.send_multipart([payload])

        async def receiver() -> None:
            for _ in range(messages):
                await dealer.recv_multipart()
                window.release()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            nursery.start_soon(receiver)
        figures["throughput"] = messages / (time.perf_counter() - start)
        return figures


# -- the driver ----------------------------------------------------------------------------------
def _python() -> list[str]:
    return [sys.executable, str(SCRIPT)]


def one_run(impl: str, pings: int, messages: int, size: int) -> dict[str, Any]:
    """One client run of ``impl`` against a fresh echo process."""
    from ports import read_bound

    from cli.bots import FREE_PORT

    # The echo binds port 0 and says the port it got (scripts/ports.py).
    if impl == "trio sockets":
        echo_argv = [*_python(), "_tcpecho", "0", str(size)]
    else:
        echo_argv = [*_python(), "_echo", FREE_PORT]
    echo = subprocess.Popen(echo_argv, stdout=subprocess.PIPE, text=True)
    try:
        endpoint = read_bound(echo)
        done = subprocess.run(
            [*_python(), "_client", impl, endpoint, str(pings), str(messages), str(size)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{impl} failed: {done.stderr.strip()[-2000:]}")
        figures: dict[str, Any] = json.loads(done.stdout)
        if impl != "trio sockets":
            _stop_zmq_echo(endpoint)
    finally:
        try:
            echo.wait(5)
        except subprocess.TimeoutExpired:
            echo.kill()
            echo.wait()
    return figures


def _stop_zmq_echo(endpoint: str) -> None:
    import zmq

    ctx = zmq.Context()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoint)
    dealer.send(b"STOP")
    dealer.poll(5000)
    dealer.close()
    ctx.term()


def conformance(impl: str) -> tuple[int, list[str]]:
    """Run tests/test_zmqtrio.py against ``impl``: (passed, names of the failed tests)."""
    env = dict(os.environ, NERTZ_ZMQTRIO_IMPL="zmq_anyio" if impl == "zmq-anyio" else "")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-rf",
         "--timeout", "30", str(ROOT / "tests" / "test_zmqtrio.py")],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200, check=False,
    )  # fmt: skip
    failed = [
        line.split("::", 1)[1].split(" ")[0]
        for line in done.stdout.splitlines()
        if line.startswith(("FAILED", "ERROR"))
    ]
    passed = 0
    for word in done.stdout.split():
        if word.isdigit():
            passed = int(word)
        if word.startswith("passed"):
            break
    return passed, failed


def report(rows: dict[str, list[dict[str, Any]]]) -> None:
    """Print medians of the rounds' medians (µs) and throughput, with ratios to the floors."""

    def med_of_meds(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(statistics.median(r[key]) for r in runs) / NS_PER_US

    def pooled_p99(runs: list[dict[str, Any]], key: str) -> float:
        return percentile([v for r in runs for v in r[key]], 0.99) / NS_PER_US

    floor_idle = med_of_meds(rows["pyzmq"], "idle")
    floor_warm = med_of_meds(rows["pyzmq"], "warm")
    print(
        f"{'client':<30}{'idle RTT µs':>12}{'p99':>8}{'× pyzmq':>9}"
        f"{'warm RTT µs':>13}{'p99':>8}{'× pyzmq':>9}{'msgs/s':>10}"
    )
    for impl, runs in rows.items():
        idle, warm = med_of_meds(runs, "idle"), med_of_meds(runs, "warm")
        rate = statistics.median(r["throughput"] for r in runs)
        print(
            f"{impl:<30}{idle:>12.0f}{pooled_p99(runs, 'idle'):>8.0f}{idle / floor_idle:>9.2f}"
            f"{warm:>13.0f}{pooled_p99(runs, 'warm'):>8.0f}{warm / floor_warm:>9.2f}"
            f"{rate:>10,.0f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, run the alternated rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternated rounds (default 7)")
    parser.add_argument("--pings", type=int, default=100, help="round trips per round and kind")
    parser.add_argument("--messages", type=int, default=20_000, help="throughput messages")
    parser.add_argument("--size", type=int, default=256, help="payload bytes (a claim's size)")
    parser.add_argument("--baseline", action="append", default=[], help="another zmqtrio.py")
    parser.add_argument("--only", help="comma-separated clients to run (default: all)")
    parser.add_argument("--conformance", action="store_true", help="also run the suite")
    args = parser.parse_args(argv)
    impls = ["pyzmq", "trio+pyzmq", "trio sockets", "zmqtrio"]
    impls += [f"zmqtrio@{path}" for path in args.baseline]
    if importlib.util.find_spec("zmq_anyio") is not None:
        impls.append("zmq-anyio")
    else:
        print("zmq-anyio: not installed (pip install -e '.[bench]'), skipped")
    if args.only:
        wanted = args.only.split(",")
        impls = [i for i in impls if i in wanted or i == "pyzmq"]
    print(
        f"transport, {args.size}-byte messages to an echo in another process; {args.rounds}"
        f" alternated rounds of {args.pings} idle (one per {PACED_GAP * 1000:.0f} ms) and"
        f" {args.pings} warm round trips and {args.messages:,} messages of throughput each;"
        f" medians of the rounds' medians; load average {os.getloadavg()[0]:.2f} at the start"
    )
    rows: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
    for round_ in range(args.rounds):
        order = impls[round_ % len(impls) :] + impls[: round_ % len(impls)]
        for impl in order:
            rows[impl].append(one_run(impl, args.pings, args.messages, args.size))
        print(f"  round {round_ + 1}/{args.rounds} done", flush=True)
    report(rows)
    if args.conformance:
        print("conformance suite (tests/test_zmqtrio.py):")
        for impl in ("zmqtrio", "zmq-anyio"):
            if impl not in impls:
                continue
            passed, failed = conformance(impl)
            print(f"  {impl}: {passed} passed, {len(failed)} failed {' '.join(failed)}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


CHILDREN: dict[str, Callable[..., int]] = {
    "_echo": child_zmq_echo,
    "_tcpecho": lambda port, size: child_tcp_echo(int(port), int(size)),
    "_client": lambda impl, endpoint, pings, messages, size: client(
        impl, endpoint, int(pings), int(messages), int(size)
    ),
}

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in CHILDREN:
        sys.exit(CHILDREN[sys.argv[1]](*sys.argv[2:]))
    sys.exit(main())
