"""When a silent member's DEALER is dialled again (:mod:`p2p_nertz.runtime.redial`).

The tries of the member's address are scripted here (a :class:`Redialer` whose tries answer
from a rule of the time) and time is trio's ``MockClock``: these tests pin the decisions. The
real tries, over a real lab's failed link, are ``tests/test_lan_cut_return.py``'s and
``scripts/bench_cut_return.py``'s; a DEALER re-dialled on real sockets is the last test's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
import trio
import trio.testing
import zmq

from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.runtime.gate import ZAP_ENDPOINT, client_keys, server_keys, zap_user_id
from p2p_nertz.runtime.redial import REFUSED, Redialer, Refused, try_after
from p2p_nertz.runtime.zmqtrio import create_socket, monitor_event, open_dealer, open_router

MEMBER = PeerId(bytes(32))
ENDPOINT = "tcp://10.77.0.2:5601"
SUSPECT, EVERY = 5.0, 1.0


class _Dealer:
    def __init__(self) -> None:
        self.redials: list[float] = []
        self.ids: list[bytes | None] = []

    def redial(self, endpoint: str, routing_id: bytes | None = None) -> None:
        assert endpoint == ENDPOINT
        self.redials.append(trio.current_time())
        self.ids.append(routing_id)


class _Scripted(Redialer):
    """Its tries are answered when ``answers(now)`` says so (at once), else time out."""

    def __init__(self, answers: Callable[[float], object], silent_after: float = SUSPECT) -> None:
        super().__init__(silent_after, EVERY)
        self.answers = answers
        self.tries: list[float] = []

    async def _answered(self, endpoint: str) -> bool | Refused:
        began = trio.current_time()
        self.tries.append(began)
        answer = self.answers(began)
        if answer is REFUSED:  # (at once, then the rest of the try's time, as a real one)
            await trio.sleep(self.every)
            return REFUSED
        if answer:
            await trio.sleep(0.001)
            return True
        await trio.sleep(self.every)
        return False


def run(
    answers: Callable[[float], object],
    heard: Callable[[float], bool],
    stop: float = 0.0,
    silent_after: float = SUSPECT,
) -> _Scripted:
    """Sixty seconds of a member heard every 0.5 s whenever ``heard(now)``, our DEALER to it
    looked after by a scripted redialer trying it after ``silent_after`` of silence; the
    redialer, with the DEALER's re-dials. ``stop``: our own process stands still that long at
    12 s (the clock jumps)."""
    redialer = _Scripted(answers, silent_after)
    dealer = _Dealer()
    ids = iter(range(1, 100))
    redialer.add(MEMBER, dealer, ENDPOINT, lambda: b"N#%d" % next(ids))  # type: ignore[arg-type]
    clock = trio.testing.MockClock(autojump_threshold=0)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            redialer.start(nursery)
            while trio.current_time() < 60.0:
                if heard(trio.current_time()):
                    redialer.heard(MEMBER)
                if stop and trio.current_time() == 12.0:
                    clock.jump(stop)
                await trio.sleep(0.5)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
    redialer.times = dealer.redials  # type: ignore[attr-defined]
    redialer.ids = dealer.ids  # type: ignore[attr-defined]
    assert redialer.redials(MEMBER) == len(dealer.redials)
    return redialer


def test_a_member_silent_then_answering_is_redialled_once_a_silence(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A cut from 10 s to 20 s; heard again from 30 s; a second cut from 40 s, over at 50 s.
    def cut(t: float) -> bool:
        return not (10 <= t < 20 or 40 <= t < 50)

    with caplog.at_level(logging.INFO, logger="p2p_nertz.runtime.redial"):
        redialer = run(answers=cut, heard=lambda t: t < 10 or 30 <= t < 40)
    first, second = redialer.times  # type: ignore[attr-defined]
    # Each said, naming the member and how long it was silent (`nertz -v`).
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"re-dialled {fingerprint(MEMBER)} at {ENDPOINT}: its address answers (last heard"
        f" {last:.1f} s ago)"
        for last in (first - 9.5, second - 39.5)
    ]
    assert 20 <= first <= 20 + EVERY + 0.1  # the first try after the link is back
    assert 50 <= second <= 50 + EVERY + 0.1
    # Tried from the suspect timer on, once a period, none while it was heard.
    assert redialer.tries[0] >= 10 + SUSPECT - 0.5
    assert not [t for t in redialer.tries if 30 <= t < 40 + SUSPECT - 0.5]


def test_a_cut_shorter_than_the_suspect_timer_is_tried_as_soon_as_a_longer_one() -> None:
    # A node's timers: a cut of 2.5 s (10 to 12.5 s), under the suspect timer of 5 s, after
    # which TCP's next retransmission comes 1.5 s late. Tried from 1.5 s of silence, the
    # DEALER is re-dialled by the first try after the link is back; from the suspect timer on
    # (session 33), the silence (4.5 s) never lasted long enough for a try.
    def cut(t: float) -> bool:
        return not 10 <= t < 12.5

    def heard(t: float) -> bool:
        return not 10 <= t < 14

    assert try_after(SUSPECT) < 12.5 - 10 < SUSPECT
    early = run(answers=cut, heard=heard, silent_after=try_after(SUSPECT))
    (redial,) = early.times  # type: ignore[attr-defined]
    assert 12.5 <= redial <= 12.5 + EVERY + 0.1
    assert run(answers=cut, heard=heard).times == []  # type: ignore[attr-defined]


def test_heard_again_through_its_own_new_connection_still_redials_ours() -> None:
    # The member's own tries re-dialled its DEALER first: we hear it at 20.5 s, while ours
    # still waits on TCP's backoff; our try, answered, re-dials ours all the same.
    redialer = run(answers=lambda t: not 10 <= t < 20.4, heard=lambda t: not 10 <= t < 20.5)
    (redial,) = redialer.times  # type: ignore[attr-defined]
    assert 20.4 <= redial <= 20.4 + EVERY + 0.1


def test_a_slow_link_heard_late_is_left_alone() -> None:
    # Every packet late: silent for 7 s at the delay's onset, then heard, late, again; the
    # member's address never answers within a try (its SYN's round trip is the link's).
    redialer = run(answers=lambda t: t < 10, heard=lambda t: not 10 <= t < 17)
    assert redialer.times == []  # type: ignore[attr-defined]
    assert redialer.tries and max(redialer.tries) < 17 + EVERY + 0.1  # one try after, no more


def test_a_restarted_member_is_left_to_zmqs_own_reconnect() -> None:
    # Its process gone at 10 s, its port refused until it is back at 14 s: zmq's reconnect,
    # refused as promptly, finds it within a second; a re-dial would only give up what the
    # DEALER held for it. After the
    # restart the link is cut from 30 s to 33 s: an unanswered try, then an answer, re-dial.
    def answers(t: float) -> object:
        return REFUSED if 10 <= t < 14 else not 30 <= t < 33

    redialer = run(
        answers=answers, heard=lambda t: not 10 <= t < 15 and not 30 <= t < 34, silent_after=1.5
    )
    (redial,) = redialer.times  # type: ignore[attr-defined]
    assert 33 <= redial <= 33 + EVERY + 0.1
    assert [t for t in redialer.tries if 10 <= t < 15]  # (tried, refused)
    # A try unanswered in the silence, before its refusals or after (its host starting again,
    # a cut): zmq's own SYNs may wait on TCP's timer; re-dialled once it answers.
    for unanswered, refused in ((13, 10), (10, 13)):
        redialer = run(
            answers=lambda t, u=unanswered: (
                t < 10 or t >= 16 or (False if u <= t < u + 3 else REFUSED)
            ),
            heard=lambda t: not 10 <= t < 17,
            silent_after=1.5,
        )
        assert len(redialer.tries) > 4 and redialer.redials(MEMBER) == 1, refused


def test_each_redial_is_under_a_routing_id_of_its_own() -> None:
    redialer = run(answers=lambda t: not 10 <= t < 20, heard=lambda t: not 10 <= t < 21
                   and not 30 <= t < 41, silent_after=1.5)  # fmt: skip
    assert redialer.ids == [b"N#1", b"N#2"]  # type: ignore[attr-defined]


def test_a_member_never_heard_is_not_tried() -> None:
    redialer = run(answers=lambda t: True, heard=lambda t: False)
    assert redialer.tries == [] and redialer.times == []  # type: ignore[attr-defined]


def test_our_own_stop_is_not_the_members_silence() -> None:
    # Our process stands still from 12 s to 32 s (SIGSTOP, a stalled machine); woken, it reads
    # what waited for it a second later. The member was never silent: no try, no re-dial.
    redialer = run(answers=lambda t: True, heard=lambda t: not 12 <= t < 33, stop=20.0)
    assert redialer.tries == [] and redialer.times == []  # type: ignore[attr-defined]


def test_a_redialled_dealer_goes_on_over_a_new_connection() -> None:
    async def main() -> None:
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            async with open_router(ctx) as router:
                accepted = router._sock.get_monitor_socket(zmq.EVENT_ACCEPTED)
                endpoint = router.endpoints[0]
                async with open_dealer(ctx, endpoint, identity=b"bob") as dealer:
                    with trio.fail_after(10):
                        await dealer.send_multipart([b"before"])
                        assert await router.recv_multipart() == [b"bob", b"before"]
                        dealer.redial(endpoint)
                        await dealer.send_multipart([b"after"])
                        assert await router.recv_multipart() == [b"bob", b"after"]
                    assert dealer.endpoints == (endpoint,)
                connections = 0
                while connections < 2 and accepted.poll(10_000):
                    kind, _ = monitor_event(accepted.recv_multipart())
                    connections += kind == zmq.EVENT_ACCEPTED
                accepted.close(linger=0)
                assert connections == 2  # the first, and the new one
        finally:
            ctx.destroy(linger=0)

    trio.run(main)


def test_a_redial_racing_the_old_connections_handshake_never_leaves_the_link_silent() -> None:
    """The old connection's handshake, begun before the re-dial, may end at the member's
    ROUTER after the new one's: libzmq's ``disconnect`` is asynchronous, and the member's ZAP
    handler answers in any order. Here its answers are held and given new one first. Under one
    routing id the old connection then took the id over (``ROUTER_HANDOVER``) and closed: the
    new one wrote into a pipe the ROUTER had ended, unheard until its heartbeat gave up, a drop
    timer later (session 34: a restarted member heard nobody for 15 s). Re-dialled under an id
    of its own, the new connection is the member's to hear at once."""
    ann, bob = Identity.generate(b"a" * 32), Identity.generate(b"b" * 32)
    own = server_keys(ann)

    async def main() -> None:
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        zap = ctx.socket(zmq.ROUTER)  # (the member's ZAP handler, answering when told)
        try:
            zap.bind(ZAP_ENDPOINT)
            router = create_socket(ctx, zmq.ROUTER, curve=server_keys(bob))
            async with router:
                endpoint = router.bind("tcp://127.0.0.1:0")
                dealer = create_socket(
                    ctx, zmq.DEALER, identity=b"N-old", heartbeat=True,
                    heartbeat_timeout_ms=600_000, curve=client_keys(own, bob.peer_id),
                )  # fmt: skip
                async with dealer:
                    dealer.connect(endpoint)
                    held = [_zap_request(zap)]  # the old connection's, held
                    dealer.redial(endpoint, b"N-new")
                    held.append(_zap_request(zap))
                    for route, _, version, request_id, *_ in reversed(held):
                        zap.send_multipart([route, b"", version, request_id, b"200", b"OK",
                                            zap_user_id(ann.peer_id), b""])  # fmt: skip
                    with trio.fail_after(60):  # (heard at once; unheard, for ten minutes)
                        await dealer.send_multipart([b"after"])
                        frames = await router.recv_multipart()
                    assert frames[:2] == [b"N-new", b"after"], frames
        finally:
            zap.close(linger=0)
            ctx.destroy(linger=0)

    trio.run(main)


def _zap_request(zap: zmq.Socket[bytes]) -> list[bytes]:
    assert zap.poll(60_000), "no ZAP request"
    return zap.recv_multipart()


def test_a_try_tells_a_refused_port_from_an_answered_one() -> None:
    """A port bound and not listening (a member's process gone, the port not yet taken again)
    refuses at once; one listening answers. (A try lasts ``every``, refused or not: 2 s, a
    bound no loaded machine's loopback round trip comes near.)"""

    async def main() -> None:
        redialer = Redialer(1.5, every=2.0)
        with trio.socket.socket() as closed, trio.socket.socket() as open_:
            await closed.bind(("127.0.0.1", 0))
            await open_.bind(("127.0.0.1", 0))
            open_.listen()
            for sock, answer in ((closed, REFUSED), (open_, True)):
                port = sock.getsockname()[1]
                assert await redialer._answered(f"tcp://127.0.0.1:{port}") is answer

    trio.run(main)
