"""Round trips through a ZeroMQ echo, timed: the echo and the ping loops that
``bench_lan.py``'s floor and ``bench_transport.py``'s clients share. Each loop sends a
payload, waits for its echo and returns the round trips in ns (``time.perf_counter_ns``),
with ``gap`` seconds between two (0: back to back). zmq and trio are imported where used:
the benches' child processes import only what they run."""

from __future__ import annotations

import time
from typing import Any

#: seconds between two round trips of a paced run (game traffic is sparse: every hop wakes
#: idle threads)
PACED_GAP = 0.02


def zmq_echo(endpoint: str, hwm: int | None = None) -> int:
    """A blocking ROUTER bound to ``endpoint`` (with ``hwm`` as both high-water marks, if
    given) that prints the endpoint it bound once bound (``ports.say_bound``: port 0 takes a
    free one), then echoes every message until it receives ``STOP``."""
    import zmq
    from ports import say_bound, zmq_bound

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    if hwm is not None:
        router.setsockopt(zmq.SNDHWM, hwm)
        router.setsockopt(zmq.RCVHWM, hwm)
    router.bind(endpoint)
    say_bound(zmq_bound(router))
    while True:
        frames = router.recv_multipart()
        router.send_multipart(frames)
        if frames[-1] == b"STOP":
            break
    router.close()
    ctx.term()
    return 0


def blocking(dealer: Any, payload: bytes, count: int, gap: float) -> list[int]:
    """``count`` round trips on a blocking pyzmq DEALER (the floor of a zmq round trip)."""
    out = []
    for _ in range(count):
        start = time.perf_counter_ns()
        dealer.send(payload)
        dealer.recv()
        out.append(time.perf_counter_ns() - start)
        if gap:
            time.sleep(gap)
    return out


async def wait_recv(dealer: Any, fd: int) -> bytes:
    """The next message of a pyzmq socket, waited for by trio on its FD ``fd`` (then EVENTS):
    the least a trio program can do (no safety timeout, no second task)."""
    import trio
    import zmq

    while not dealer.getsockopt(zmq.EVENTS) & zmq.POLLIN:
        await trio.lowlevel.wait_readable(fd)
    data: bytes = dealer.recv(zmq.NOBLOCK)
    return data


async def trio_pyzmq(dealer: Any, payload: bytes, count: int, gap: float) -> list[int]:
    """``count`` round trips on a bare pyzmq DEALER waited on by trio (:func:`wait_recv`)."""
    import trio
    import zmq

    fd = dealer.getsockopt(zmq.FD)
    out = []
    for _ in range(count):
        start = time.perf_counter_ns()
        dealer.send(payload, zmq.NOBLOCK)
        await wait_recv(dealer, fd)
        out.append(time.perf_counter_ns() - start)
        if gap:
            await trio.sleep(gap)
    return out


async def adapter(dealer: Any, payload: bytes, count: int, gap: float) -> list[int]:
    """``count`` round trips on an adapter's DEALER (``open_dealer`` of zmqtrio or a twin)."""
    import trio

    out = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await dealer.send_multipart([payload])
        await dealer.recv_multipart()
        out.append(time.perf_counter_ns() - start)
        if gap:
            await trio.sleep(gap)
    return out
