"""Conformance tests of p2p_nertz.runtime.zmqtrio: real zmq sockets on tcp://127.0.0.1.

Every test binds ephemeral ports (never inproc://), synchronises on real messages or on
``trio.testing.wait_all_tasks_blocked`` (never on sleeps), and bounds its waits with
``trio.fail_after``; pytest-timeout is the last guard.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing
import zmq
import zmq.utils.monitor
from cli_helpers import held_port

from p2p_nertz.errors import TransportBrokenError, TransportClosedError
from p2p_nertz.runtime.zmqtrio import (
    DEFAULT_HWM,
    DEFAULT_MAX_MESSAGE_SIZE,
    AsyncSocket,
    create_socket,
    monitor_event,
    open_dealer,
    open_router,
    tcp_port,
)

if os.environ.get("NERTZ_ZMQTRIO_IMPL") == "zmq_anyio":
    # scripts/bench_transport.py runs this same suite against zmq-anyio through a shim with
    # the adapter's API (issue 18): the behaviours the runtime relies on, for both.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from zmq_anyio_shim import (  # type: ignore[no-redef]
        AsyncSocket,
        create_socket,
        open_dealer,
        open_router,
    )

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

WAIT = 10.0  # seconds: generous bound for a wait that normally takes milliseconds


@pytest.fixture
def ctx() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    """A fresh zmq context; terminating it also proves that every socket was closed."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    yield context
    context.term()


@pytest.fixture
def unused_tcp_endpoint() -> Iterator[str]:
    """An endpoint on 127.0.0.1 that nothing listens on, its port held bound for the test
    (``held_port``): a DEALER connects there and is refused, and a ROUTER the test opens
    later binds it; a port picked and let go could be another program's by then."""
    with held_port() as port:
        yield f"tcp://127.0.0.1:{port}"


async def hello(dealer: AsyncSocket, router: AsyncSocket, identity: bytes) -> None:
    """Send one message DEALER -> ROUTER so that the ROUTER knows the DEALER's routing id."""
    await dealer.send_multipart([b"hello"])
    assert await router.recv_multipart() == [identity, b"hello"]


def assert_no_lost_edges(*sockets: AsyncSocket) -> None:
    """Check that the safety timeout never had to rescue an operation on these sockets.

    Only for tests that keep their sockets busy: a socket that idles through many safety
    timeouts may, under heavy CPU contention, count a message that lands in the microseconds
    after a timeout's check (see ``SocketStatistics.lost_edges``).
    """
    for sock in sockets:
        assert sock.statistics().lost_edges == 0, sock


# -- round trips --------------------------------------------------------------------------------


async def test_round_trip_dealer_to_router_and_back(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with (
        open_router(ctx) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"alice") as dealer,
    ):
        with trio.fail_after(WAIT):
            await dealer.send_multipart([b"ping"])
            assert await router.recv_multipart() == [b"alice", b"ping"]
            await router.send_multipart([b"alice", b"pong"])
            assert await dealer.recv_multipart() == [b"pong"]
        assert_no_lost_edges(router, dealer)


async def test_round_trip_router_to_dealer_and_back(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with (
        open_router(ctx) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"bob") as dealer,
    ):
        with trio.fail_after(WAIT):
            await hello(dealer, router, b"bob")
            for i in range(100):
                await router.send_multipart([b"bob", b"ask %d" % i])
                assert await dealer.recv_multipart() == [b"ask %d" % i]
                await dealer.send_multipart([b"answer %d" % i])
                assert await router.recv_multipart() == [b"bob", b"answer %d" % i]
        assert_no_lost_edges(router, dealer)


async def test_open_router_reports_bound_endpoint_and_port(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    async with open_router(ctx, "tcp://127.0.0.1:*") as router:
        (endpoint,) = router.endpoints
        assert endpoint.startswith("tcp://127.0.0.1:")
        assert router.port == tcp_port(endpoint) > 0
        assert router.kind == "ROUTER"
        assert endpoint in repr(router)


async def test_multipart_frames_preserved(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    frames = [b"", b"x", bytes(range(256)), b"\x00" * 65536, b"", *(b"f%d" % i for i in range(10))]
    async with (
        open_router(ctx) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"carol") as dealer,
    ):
        with trio.fail_after(WAIT):
            await dealer.send_multipart(frames)
            assert await router.recv_multipart() == [b"carol", *frames]
            await router.send_multipart([b"carol", *frames])
            assert await dealer.recv_multipart() == frames


async def test_try_send_and_try_recv_never_wait(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with (
        open_router(ctx) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"dan") as dealer,
    ):
        assert router.try_recv_multipart() is None
        assert dealer.try_send_multipart([b"now"])
        with trio.fail_after(WAIT):
            assert await router.recv_multipart() == [b"dan", b"now"]
        assert router.try_recv_multipart() is None


# -- load ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("hwm", [DEFAULT_HWM, 16])
async def test_burst_both_directions_at_once_does_not_stall(
    ctx: zmq.Context[zmq.Socket[bytes]], hwm: int
) -> None:
    count = 10_000
    identity = b"eve"
    async with (
        open_router(ctx, hwm=hwm) as router,
        open_dealer(ctx, router.endpoints[0], identity=identity, hwm=hwm) as dealer,
    ):
        with trio.fail_after(WAIT):
            await hello(dealer, router, identity)
        at_router: list[int] = []
        at_dealer: list[int] = []

        async def router_sends() -> None:
            for i in range(count):
                await router.send_multipart([identity, b"r%d" % i])

        async def dealer_sends() -> None:
            for i in range(count):
                await dealer.send_multipart([b"d%d" % i])

        async def router_receives() -> None:
            for _ in range(count):
                sender, body = await router.recv_multipart()
                assert sender == identity
                at_router.append(int(body[1:]))

        async def dealer_receives() -> None:
            for _ in range(count):
                (body,) = await dealer.recv_multipart()
                at_dealer.append(int(body[1:]))

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(router_receives)
                nursery.start_soon(dealer_receives)
                nursery.start_soon(router_sends)
                nursery.start_soon(dealer_sends)
        assert at_router == list(range(count))
        assert at_dealer == list(range(count))
        assert_no_lost_edges(router, dealer)


async def test_many_dealers_one_router(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    dealers_count, per_dealer = 20, 50
    async with open_router(ctx) as router:
        endpoint = router.endpoints[0]
        received: dict[bytes, list[bytes]] = {}

        async def echo() -> None:
            for _ in range(dealers_count * per_dealer):
                sender, body = await router.recv_multipart()
                await router.send_multipart([sender, body])

        async def dealer_task(n: int) -> None:
            identity = b"peer-%02d" % n
            async with open_dealer(ctx, endpoint, identity=identity) as dealer:
                sent = [b"%s #%d" % (identity, i) for i in range(per_dealer)]
                for body in sent:
                    await dealer.send_multipart([body])
                received[identity] = [(await dealer.recv_multipart())[0] for _ in sent]
                assert received[identity] == sent

        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(echo)
                for n in range(dealers_count):
                    nursery.start_soon(dealer_task, n)
        assert len(received) == dealers_count


# -- backpressure -------------------------------------------------------------------------------


async def test_dealer_before_router_queues_then_waits_then_delivers(
    ctx: zmq.Context[zmq.Socket[bytes]], unused_tcp_endpoint: str
) -> None:
    endpoint = unused_tcp_endpoint
    async with open_dealer(ctx, endpoint, identity=b"early", hwm=4) as dealer:
        queued = 0
        while dealer.try_send_multipart([b"%d" % queued]):  # nobody listens: fills the pipe
            queued += 1
            assert queued < 1000, "a DEALER with no peer must stop at its HWM, not drop"
        assert queued >= 1

        blocked_send_done = trio.Event()

        async def blocked_send() -> None:
            await dealer.send_multipart([b"%d" % queued])
            blocked_send_done.set()

        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(blocked_send)
                await trio.testing.wait_all_tasks_blocked()
                assert dealer.statistics().sending  # waiting at the HWM, not dropping
                async with open_router(ctx, endpoint) as router:
                    got = [(await router.recv_multipart())[1] for _ in range(queued + 1)]
                    await blocked_send_done.wait()
        assert got == [b"%d" % i for i in range(queued + 1)]


@pytest.mark.parametrize("receiver_waiting", [False, True])
async def test_router_send_to_slow_peer_waits_without_spinning(
    ctx: zmq.Context[zmq.Socket[bytes]], receiver_waiting: bool
) -> None:
    # Another peer keeps ROUTER_MANDATORY's POLLOUT set while the slow peer's pipe is full: the
    # sender must then wait for the FD, not retry in a loop (which would keep a task runnable
    # forever, so wait_all_tasks_blocked would never return) -- also while a receiving task
    # waits on the same socket and every refresh shows POLLOUT.
    count, payload = 400, b"p" * 65536
    async with (
        open_router(ctx, hwm=4) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"slow", hwm=4) as slow,
        open_dealer(ctx, router.endpoints[0], identity=b"idle", hwm=4) as idle,
    ):
        with trio.fail_after(WAIT):
            await hello(slow, router, b"slow")
            await hello(idle, router, b"idle")
            async with trio.open_nursery() as nursery:

                async def flood() -> None:
                    for i in range(count):
                        await router.send_multipart([b"slow", b"%d" % i, payload])

                if receiver_waiting:
                    nursery.start_soon(router.recv_multipart)
                nursery.start_soon(flood)
                await trio.testing.wait_all_tasks_blocked()
                assert router.statistics().sending  # kernel buffers and pipes are full
                for i in range(count):
                    assert (await slow.recv_multipart())[0] == b"%d" % i
                if receiver_waiting:
                    await idle.send_multipart([b"done"])
        assert idle.try_recv_multipart() is None
        # With a receiver waiting, a lost edge is possible by design (zmqtrio, rule 5).
        assert_no_lost_edges(slow, *([] if receiver_waiting else [router]))


async def test_parked_sender_takes_over_fd_when_receiver_leaves(
    ctx: zmq.Context[zmq.Socket[bytes]], unused_tcp_endpoint: str
) -> None:
    # The receiver watches the FD while the sender, blocked at the HWM, is parked behind it.
    # Then the receiver goes away (cancelled): the sender must take the FD over, or the room
    # that appears once a ROUTER drains the queue would go unnoticed until the safety timeout.
    endpoint = unused_tcp_endpoint  # nothing listens yet, so nothing moves: a static state
    async with open_dealer(ctx, endpoint, identity=b"duplex", hwm=2) as dealer:
        queued = 0
        while dealer.try_send_multipart([b"%d" % queued]):
            queued += 1
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                receiver_scope = trio.CancelScope()

                async def receive() -> None:
                    with receiver_scope:
                        await dealer.recv_multipart()

                nursery.start_soon(receive)
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(dealer.send_multipart, [b"%d" % queued])
                await trio.testing.wait_all_tasks_blocked()
                stats = dealer.statistics()
                assert stats.sending and stats.receiving and stats.fd_watched
                receiver_scope.cancel()
                await trio.testing.wait_all_tasks_blocked()
                stats = dealer.statistics()
                assert not stats.receiving
                assert stats.sending and stats.fd_watched  # the sender took the FD over
                async with open_router(ctx, endpoint) as router:
                    for i in range(queued + 1):
                        assert await router.recv_multipart() == [b"duplex", b"%d" % i]


async def test_router_send_to_unknown_routing_id_raises_broken(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    async with open_router(ctx) as router:
        with pytest.raises(TransportBrokenError, match="routing id"):
            await router.send_multipart([b"nobody", b"hi"])
        with pytest.raises(TransportBrokenError):
            router.try_send_multipart([b"nobody", b"hi"])


# -- ownership ----------------------------------------------------------------------------------


async def test_second_receiver_raises_busy(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with open_router(ctx) as router:
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(router.recv_multipart)
                await trio.testing.wait_all_tasks_blocked()
                assert router.statistics().receiving
                with pytest.raises(trio.BusyResourceError):
                    await router.recv_multipart()
                with pytest.raises(trio.BusyResourceError):
                    router.try_recv_multipart()
                nursery.cancel_scope.cancel()
        assert not router.statistics().receiving


async def test_second_sender_raises_busy(
    ctx: zmq.Context[zmq.Socket[bytes]], unused_tcp_endpoint: str
) -> None:
    async with open_dealer(ctx, unused_tcp_endpoint, hwm=1) as dealer:
        while dealer.try_send_multipart([b"fill"]):
            pass
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(dealer.send_multipart, [b"waits"])
                await trio.testing.wait_all_tasks_blocked()
                with pytest.raises(trio.BusyResourceError):
                    await dealer.send_multipart([b"second"])
                with pytest.raises(trio.BusyResourceError):
                    dealer.try_send_multipart([b"second"])
                nursery.cancel_scope.cancel()


async def test_cancelled_recv_consumes_nothing(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with (
        open_router(ctx) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"fay") as dealer,
    ):
        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(router.recv_multipart)
                await trio.testing.wait_all_tasks_blocked()
                nursery.cancel_scope.cancel()
            await dealer.send_multipart([b"kept"])
            assert await router.recv_multipart() == [b"fay", b"kept"]


# -- closing ------------------------------------------------------------------------------------


async def test_aclose_wakes_waiting_receiver(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with open_router(ctx) as router:
        outcome: list[BaseException] = []

        async def receive() -> None:
            try:
                await router.recv_multipart()
            except TransportClosedError as exc:
                outcome.append(exc)

        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive)
                await trio.testing.wait_all_tasks_blocked()
                await router.aclose()
        assert len(outcome) == 1
        assert router.closed


async def test_aclose_wakes_sender_and_receiver_waiting_together(
    ctx: zmq.Context[zmq.Socket[bytes]], unused_tcp_endpoint: str
) -> None:
    # One task watches the FD, the other is parked: closing must wake both.
    async with open_dealer(ctx, unused_tcp_endpoint, hwm=1) as dealer:
        while dealer.try_send_multipart([b"fill"]):
            pass
        closed_errors: list[str] = []

        async def expect_closed(what: str) -> None:
            with pytest.raises(TransportClosedError):
                if what == "send":
                    await dealer.send_multipart([b"never"])
                else:
                    await dealer.recv_multipart()
            closed_errors.append(what)

        with trio.fail_after(WAIT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(expect_closed, "send")
                nursery.start_soon(expect_closed, "recv")
                await trio.testing.wait_all_tasks_blocked()
                stats = dealer.statistics()
                assert stats.sending and stats.receiving
                await dealer.aclose()
        assert sorted(closed_errors) == ["recv", "send"]


async def test_use_after_close_raises_closed(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with open_router(ctx) as router:
        pass
    assert router.closed
    assert "closed" in repr(router)
    with pytest.raises(TransportClosedError):
        await router.recv_multipart()
    with pytest.raises(TransportClosedError):
        await router.send_multipart([b"x", b"y"])
    with pytest.raises(TransportClosedError):
        router.try_recv_multipart()
    with pytest.raises(TransportClosedError):
        router.try_send_multipart([b"x", b"y"])
    with pytest.raises(TransportClosedError):
        router.bind("tcp://127.0.0.1:0")
    with pytest.raises(TransportClosedError):
        router.connect("tcp://127.0.0.1:1")
    await router.aclose()  # idempotent
    router.close()


# -- reconnection -------------------------------------------------------------------------------


async def test_router_restarted_on_same_port_still_delivers(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    first_ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        async with open_router(first_ctx) as first:
            endpoint = first.endpoints[0]
            async with open_dealer(ctx, endpoint, identity=b"gus") as dealer:
                with trio.fail_after(WAIT):
                    await hello(dealer, first, b"gus")
                    await first.aclose()
                    # term() returns once zmq has really closed the listening socket.
                    await trio.to_thread.run_sync(first_ctx.term)
                    async with open_router(ctx, endpoint) as second:
                        # Probes sent before the DEALER notices the dead connection may be lost
                        # with it: resend until one arrives (a real message, not a sleep).
                        probe = 0
                        while True:
                            await dealer.send_multipart([b"probe %d" % probe])
                            with trio.move_on_after(0.2):
                                sender, body = await second.recv_multipart()
                                break
                            probe += 1
                        assert sender == b"gus"
                        assert body.startswith(b"probe ")
                        await second.send_multipart([b"gus", b"welcome back"])
                        assert await dealer.recv_multipart() == [b"welcome back"]
    finally:
        if not first_ctx.closed:
            first_ctx.term()


async def test_router_handover_gives_routing_id_to_new_connection(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    async with open_router(ctx) as router:
        endpoint = router.endpoints[0]
        async with open_dealer(ctx, endpoint, identity=b"hal") as old:
            with trio.fail_after(WAIT):
                await hello(old, router, b"hal")
                # The peer restarts while its old connection still looks alive to the ROUTER.
                async with open_dealer(ctx, endpoint, identity=b"hal") as new:
                    await new.send_multipart([b"i am back"])
                    assert await router.recv_multipart() == [b"hal", b"i am back"]
                    await router.send_multipart([b"hal", b"to the new one"])
                    assert await new.recv_multipart() == [b"to the new one"]
            assert old.try_recv_multipart() is None


# -- size bound ---------------------------------------------------------------------------------


def wait_for_event(monitor: zmq.Socket[bytes], wanted: int) -> None:
    """Block (in a worker thread) until the monitor reports ``wanted`` (or fail after WAIT)."""
    deadline = WAIT * 1000
    while monitor.poll(deadline):
        if zmq.utils.monitor.parse_monitor_message(monitor.recv_multipart())["event"] == wanted:
            return
    raise AssertionError(f"no zmq event {wanted} within {WAIT} s")


async def test_a_frame_above_the_bound_is_never_delivered_and_its_sender_is_cut_off(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    bound = 4096
    async with open_router(ctx, max_message_size=bound) as router:
        assert router._sock.get(zmq.MAXMSGSIZE) == bound
        # The monitor is a blocking PAIR read in a worker thread: no FD waiting on inproc.
        monitor = router._sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        try:
            async with open_dealer(ctx, router.endpoints[0], identity=b"big") as dealer:
                with trio.fail_after(WAIT):
                    await dealer.send_multipart([b"x" * bound])  # the largest allowed
                    assert await router.recv_multipart() == [b"big", b"x" * bound]
                    await dealer.send_multipart([b"y" * (64 * bound)])
                    await trio.to_thread.run_sync(wait_for_event, monitor, zmq.EVENT_DISCONNECTED)
                # zmq cut the connection on reading the frame's length: nothing was delivered.
                assert router.try_recv_multipart() is None
            async with open_dealer(ctx, router.endpoints[0], identity=b"next") as honest:
                with trio.fail_after(WAIT):
                    await hello(honest, router, b"next")  # the ROUTER serves the others still
        finally:
            router._sock.disable_monitor()
            monitor.close(linger=0)


def monitor_frames(monitor: zmq.Socket[bytes], last: int) -> list[list[bytes]]:
    """Block (in a worker thread) for the monitor's messages up to event ``last`` (pyzmq's
    reading of each, the reference) or fail after WAIT."""
    seen: list[list[bytes]] = []
    while monitor.poll(WAIT * 1000):
        seen.append(monitor.recv_multipart())
        if zmq.utils.monitor.parse_monitor_message(seen[-1])["event"] == last:
            return seen
    raise AssertionError(f"no zmq event {last} within {WAIT} s: {seen}")


async def test_monitor_event_reads_libzmq_events_as_pyzmq_does(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    # The mesh and the spectator's port read their monitors with monitor_event, not pyzmq's
    # parser (whose module imports asyncio, a tenth of a node's start): the same reading.
    async with open_router(ctx) as router:
        monitor = router._sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        try:
            async with open_dealer(ctx, router.endpoints[0], identity=b"mon") as dealer:
                with trio.fail_after(WAIT):
                    await hello(dealer, router, b"mon")
            with trio.fail_after(WAIT):
                frames = await trio.to_thread.run_sync(
                    monitor_frames, monitor, zmq.EVENT_DISCONNECTED
                )
        finally:
            router._sock.disable_monitor()
            monitor.close(linger=0)
    read = [monitor_event(f) for f in frames]
    reference = [zmq.utils.monitor.parse_monitor_message(f) for f in frames]
    assert read == [(int(r["event"]), int(r["value"])) for r in reference]
    assert {zmq.EVENT_ACCEPTED, zmq.EVENT_DISCONNECTED} <= {event for event, _ in read}
    for wrong in ([], [b"\x00" * 6], [b"\x00" * 5, b"tcp://x"], [b"\x00" * 6, b"e", b"more"]):
        with pytest.raises(ValueError, match="not a monitor event"):
            monitor_event(wrong)


async def test_every_socket_is_bounded_by_default(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    for kind in (zmq.ROUTER, zmq.DEALER):
        sock = create_socket(ctx, kind)
        try:
            assert sock._sock.get(zmq.MAXMSGSIZE) == DEFAULT_MAX_MESSAGE_SIZE
        finally:
            sock.close()
    with pytest.raises(ValueError, match="max_message_size"):
        create_socket(ctx, zmq.ROUTER, max_message_size=0)
    router = create_socket(ctx, zmq.ROUTER, recv_hwm=7, max_message_size=100)
    try:
        assert router._sock.get(zmq.RCVHWM) == 7
        assert router._sock.get(zmq.SNDHWM) == DEFAULT_HWM
        assert router._sock.get(zmq.MAXMSGSIZE) == 100
    finally:
        router.close()
    with pytest.raises(ValueError, match="hwm"):
        create_socket(ctx, zmq.ROUTER, recv_hwm=0)


# -- validation ---------------------------------------------------------------------------------


async def test_inproc_refused(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    with pytest.raises(ValueError, match="inproc"):
        async with open_router(ctx, "inproc://nope"):
            pass
    with pytest.raises(ValueError, match="inproc"):
        async with open_dealer(ctx, "inproc://nope"):
            pass


@pytest.mark.parametrize("identity", [b"", b"\x00peer", b"x" * 256])
async def test_bad_routing_id_refused(ctx: zmq.Context[zmq.Socket[bytes]], identity: bytes) -> None:
    with pytest.raises(ValueError, match="routing id"):
        create_socket(ctx, zmq.DEALER, identity=identity)


async def test_bad_socket_type_and_hwm_refused(
    ctx: zmq.Context[zmq.Socket[bytes]], unused_tcp_endpoint: str
) -> None:
    with pytest.raises(ValueError, match="ROUTER"):
        create_socket(ctx, zmq.PUB)
    with pytest.raises(ValueError, match="hwm"):
        create_socket(ctx, zmq.ROUTER, hwm=0)
    async with open_dealer(ctx, unused_tcp_endpoint) as dealer:
        with pytest.raises(ValueError, match="frame"):
            await dealer.send_multipart([])


async def test_bind_failure_raises_broken(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    async with open_router(ctx) as router:
        with pytest.raises(TransportBrokenError, match="bind"):
            async with open_router(ctx, router.endpoints[0]):
                pass


# -- wake-ups -----------------------------------------------------------------------------------


def test_idle_receiver_is_not_woken_by_the_safety_net_many_times_a_second() -> None:
    # A ROUTER waiting for a message that does not come (the peer's socket between two
    # messages) used to wake every 50 ms (issue 18). Virtual time (trio's autojump clock) lets
    # 3 s of idling pass at once; a wait on a real FD counts as blocked for the clock.
    async def idle_for_three_seconds() -> tuple[int, int]:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            async with open_router(context) as router:
                with trio.move_on_after(3.0):
                    await router.recv_multipart()
                stats = router.statistics()
                return stats.safety_timeouts, stats.lost_edges
        finally:
            context.term()

    timeouts, lost = trio.run(
        idle_for_three_seconds, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    assert timeouts <= 3  # at most one a second
    assert lost == 0


async def test_message_after_an_idle_wait_is_received_at_once(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    # The receive attempt reads EVENTS first and then waits without a second look at the FD
    # (rule 2): the message that arrives during the wait must wake it (no lost edge).
    async with (
        open_router(ctx, hwm=1) as router,
        open_dealer(ctx, router.endpoints[0], identity=b"ida") as dealer,
    ):
        with trio.fail_after(WAIT):
            await hello(dealer, router, b"ida")
            got: list[list[bytes]] = []

            async def receive() -> None:
                got.append(await router.recv_multipart())

            for i in range(50):
                got.clear()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(receive)
                    await trio.testing.wait_all_tasks_blocked()
                    assert router.statistics().fd_watched
                    await dealer.send_multipart([b"%d" % i])
                assert got == [[b"ida", b"%d" % i]]
        assert_no_lost_edges(router, dealer)
