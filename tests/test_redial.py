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

from p2p_nertz.protocol.identity import PeerId, fingerprint
from p2p_nertz.runtime.redial import Redialer, try_after
from p2p_nertz.runtime.zmqtrio import monitor_event, open_dealer, open_router

MEMBER = PeerId(bytes(32))
ENDPOINT = "tcp://10.77.0.2:5601"
SUSPECT, EVERY = 5.0, 1.0


class _Dealer:
    def __init__(self) -> None:
        self.redials: list[float] = []

    def redial(self, endpoint: str) -> None:
        assert endpoint == ENDPOINT
        self.redials.append(trio.current_time())


class _Scripted(Redialer):
    """Its tries are answered when ``answers(now)`` says so (at once), else time out."""

    def __init__(self, answers: Callable[[float], bool], silent_after: float = SUSPECT) -> None:
        super().__init__(silent_after, EVERY)
        self.answers = answers
        self.tries: list[float] = []

    async def _answered(self, endpoint: str) -> bool:
        began = trio.current_time()
        self.tries.append(began)
        if self.answers(began):
            await trio.sleep(0.001)
            return True
        await trio.sleep(self.every)
        return False


def run(
    answers: Callable[[float], bool],
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
    redialer.add(MEMBER, dealer, ENDPOINT)  # type: ignore[arg-type]
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
