"""The adapter's receive safety net (zmqtrio rule 5), on real zmq sockets on tcp://127.0.0.1.

A receive that watches the FD waits without a cancel scope; a watchdog task, one per trio run,
bounds it (issue 18, docs/latency.md session 27). These tests look inside the adapter (its zmq
socket, its watchdog's task), so they are not part of the conformance suite that
``scripts/bench_transport.py --conformance`` runs against other implementations
(``tests/test_zmqtrio.py``). Virtual time (trio's ``MockClock``) stands in for the seconds of
the net; every wait on real sockets is on a state (``wait_all_tasks_blocked``, EVENTS), bounded
by real time or by pytest-timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import trio
import trio.testing
import zmq

from p2p_nertz.runtime.zmqtrio import (
    RECEIVE_SAFETY_TIMEOUT,
    WATCHDOG_NAME,
    AsyncSocket,
    SocketStatistics,
    create_socket,
    open_router,
)

pytestmark = pytest.mark.timeout(60)

WAIT = 10.0  # real seconds: generous bound for a wait that normally takes milliseconds


class Steps(trio.abc.Instrument):
    """Counts the steps of the tasks by name (a step: a task woken and run)."""

    def __init__(self) -> None:
        self.steps: dict[str, int] = {}

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps[task.name] = self.steps.get(task.name, 0) + 1

    def of(self, name: str) -> int:
        return self.steps.get(name, 0)


@pytest.fixture
def context() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    yield ctx
    ctx.term()


def raw_dealer(ctx: zmq.Context[zmq.Socket[bytes]], router: AsyncSocket) -> zmq.Socket[bytes]:
    """A plain pyzmq DEALER (no heartbeats: nothing but our messages reaches the ROUTER)."""
    dealer: zmq.Socket[bytes] = ctx.socket(zmq.DEALER)
    dealer.set(zmq.LINGER, 0)
    dealer.set(zmq.ROUTING_ID, b"raw")
    dealer.connect(router.endpoints[0])
    return dealer


def take_the_edge_away(router: AsyncSocket) -> None:
    """Wait (in real time, without a checkpoint) until a message waits on ``router``, reading
    EVENTS behind the adapter's back: the commands that would have made the FD readable are
    processed here, so the task watching the FD is never told (a lost edge, rule 5)."""
    raw = router._sock
    give_up = time.monotonic() + WAIT
    while not raw.get(zmq.EVENTS) & zmq.POLLIN:
        assert time.monotonic() < give_up, "the message never reached the ROUTER"
    while router._fd_pending():  # (any command behind it, too)
        raw.get(zmq.EVENTS)


def test_a_receive_whose_edge_was_lost_is_rescued_by_the_watchdog(
    context: zmq.Context[zmq.Socket[bytes]],
) -> None:
    # Virtual time stands still (rate 0) unless the test jumps it: the watchdog looks at a
    # receive that has waited a whole period, so after one jump it has not looked, after two
    # it has, found the message and woken the receive.
    clock = trio.testing.MockClock()

    async def lose_an_edge() -> tuple[list[list[bytes]], list[SocketStatistics]]:
        got: list[list[bytes]] = []
        seen: list[SocketStatistics] = []
        async with open_router(context) as router:
            dealer = raw_dealer(context, router)
            try:
                dealer.send(b"hello")
                got.append(await router.recv_multipart())  # (connected: its pipe attached)

                async def receive() -> None:
                    got.append(await router.recv_multipart())

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(receive)
                    await trio.testing.wait_all_tasks_blocked()
                    assert router.statistics().fd_watched
                    dealer.send(b"lost")
                    take_the_edge_away(router)
                    for _ in range(2):
                        clock.jump(RECEIVE_SAFETY_TIMEOUT)
                        await trio.testing.wait_all_tasks_blocked()
                        seen.append(router.statistics())
            finally:
                dealer.close(linger=0)
        return got, seen

    got, (after_one, after_two) = trio.run(lose_an_edge, clock=clock)
    assert got == [[b"raw", b"hello"], [b"raw", b"lost"]]
    assert (after_one.safety_timeouts, after_one.lost_edges) == (0, 0)
    assert after_one.receiving  # not woken by the first period
    assert (after_two.safety_timeouts, after_two.lost_edges) == (1, 1)
    assert not after_two.receiving  # the look woke it, and it took the message


def test_an_idle_receive_is_looked_at_but_not_woken(
    context: zmq.Context[zmq.Socket[bytes]],
) -> None:
    # The watchdog looks at a waiting receive about once a period, in its own task: the
    # receiving task itself runs once to start waiting and once when its caller gives up
    # (main's adapter woke it every second, when its scope's deadline came). Once nothing
    # waits, the watchdog's task ends.
    steps = Steps()

    async def idle() -> tuple[SocketStatistics, int, int]:
        async with open_router(context) as router:

            async def receive() -> None:
                with trio.move_on_after(10.5):
                    await router.recv_multipart()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive, name="the receive")
            stats = router.statistics()
            watchdog_steps = steps.of(WATCHDOG_NAME)
            await trio.sleep(10.0)  # nothing waits
            return stats, watchdog_steps, steps.of(WATCHDOG_NAME) - watchdog_steps

    stats, watchdog_steps, watchdog_steps_after = trio.run(
        idle, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[steps]
    )
    assert steps.of("the receive") == 2
    assert 9 <= stats.safety_timeouts <= 10  # a look a second from the second second on
    assert stats.lost_edges == 0
    assert watchdog_steps <= 12  # its start, a step a second, its end
    assert watchdog_steps_after <= 1


def test_a_socket_receives_in_one_trio_run_after_another(
    context: zmq.Context[zmq.Socket[bytes]],
) -> None:
    # Each run has a watchdog of its own (a run's tasks end with it): a socket made outside
    # them waits, and is bounded, in each.
    async def receive_one(router: AsyncSocket, dealer: zmq.Socket[bytes], n: int) -> list[bytes]:
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                got: list[list[bytes]] = []

                async def receive() -> None:
                    got.append(await router.recv_multipart())

                nursery.start_soon(receive)
                await trio.testing.wait_all_tasks_blocked()
                assert router.statistics().fd_watched
                dealer.send(b"%d" % n)
        return got[0]

    router = create_socket(context, zmq.ROUTER)
    router.bind("tcp://127.0.0.1:0")
    dealer = raw_dealer(context, router)
    try:
        for n in range(3):
            assert trio.run(receive_one, router, dealer, n) == [b"raw", b"%d" % n]
        assert router.statistics().lost_edges == 0
    finally:
        dealer.close(linger=0)
        router.close()
