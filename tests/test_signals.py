"""``p2p_nertz.signals``: a signal is read and said as it was sent, and one receiver holds a
signal across a hand-over (the lobby to the table) for the next reader.

Real signals in this process, each raised at the moment the test picks
(``signal.raise_signal`` runs the Python handler before it returns), never sent by chance:
``nertz``'s SIGTERM handler (``term_as_ctrl_c``, which notes the SIGTERM and raises SIGINT)
with a receiver half open (its SIGINT handler set, its SIGTERM handler not yet: trio sets
them one after the other), or of SIGINT alone; a Ctrl-C with nothing noted; a signal that
comes while no task reads the held receiver.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import trio

from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.signals import (
    as_sent,
    children_signalled,
    interrupted_status,
    note_terminated,
    open_signals,
    signal_status,
    term_as_ctrl_c,
)
from p2p_nertz.testing.games import bot_game
from p2p_nertz.web.table import run_web_table

pytestmark = pytest.mark.timeout(120)

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


@pytest.fixture
def nertz_handler() -> Iterator[Handler]:
    """``nertz``'s SIGTERM handler installed (as cli/main.py does), and the one it replaced
    given back after the test, nothing noted."""
    before = term_as_ctrl_c()
    try:
        yield signal.getsignal(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, before)
        note_terminated(False)


class HalfOpen:
    """Once armed (:meth:`arm`), a SIGTERM raised at the moment the next receiver has set its
    SIGINT handler and not yet its SIGTERM one (still ``nertz``'s): the window trio leaves
    between the two. :attr:`fired` says whether that moment came (else the test proves
    nothing, and fails)."""

    def __init__(self, nertz_handler: Handler) -> None:
        self.nertz_handler = nertz_handler
        self.armed = False
        self.fired = False
        self.real = signal.signal

    def arm(self) -> None:
        """(After ``trio.run`` set its own SIGINT handler: the receiver's is the next.)"""
        self.armed = True

    def set_then_term(self, signum: int, handler: Handler) -> Handler:
        old = self.real(signum, handler)  # type: ignore[arg-type]
        half_open = signum == signal.SIGINT and callable(handler) and handler is not old
        nertz_s = signal.getsignal(signal.SIGTERM) is self.nertz_handler
        if self.armed and not self.fired and half_open and nertz_s:
            self.fired = True
            signal.raise_signal(signal.SIGTERM)
        return old


@pytest.fixture
def term_when_half_open(
    monkeypatch: pytest.MonkeyPatch, nertz_handler: Handler
) -> Iterator[HalfOpen]:
    half_open = HalfOpen(nertz_handler)
    monkeypatch.setattr(signal, "signal", half_open.set_then_term)
    yield half_open
    monkeypatch.undo()


def test_signals_a_sigterm_as_a_receiver_opens_is_read_as_the_sigterm(
    term_when_half_open: HalfOpen,
) -> None:
    async def first() -> int:
        term_when_half_open.arm()
        with open_signals(signal.SIGINT, signal.SIGTERM) as received:
            return await received.receive()

    got = trio.run(first)
    assert term_when_half_open.fired, "never SIGINT the receiver's, SIGTERM not: nothing tested"
    assert got == signal.SIGTERM
    assert signal_status(got) == 143 == interrupted_status()
    assert not children_signalled()  # (a SIGTERM: the command stops its children itself)


def test_signals_a_bare_receiver_reads_that_sigterm_as_sigint_and_as_sent_says_it(
    term_when_half_open: HalfOpen,
) -> None:
    # (What every reader of a receiver met before its words went through as_sent: session
    # 37's "signal 2" and 130 for a SIGTERM.)
    async def first() -> int:
        term_when_half_open.arm()
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for signum in received:
                return signum
        raise AssertionError("no signal")

    raw = trio.run(first)
    assert term_when_half_open.fired
    assert raw == signal.SIGINT
    assert as_sent(raw) == signal.SIGTERM


def test_signals_a_sigterm_while_only_sigint_is_the_receiver_s_is_read_as_the_sigterm(
    nertz_handler: Handler,
) -> None:
    async def first() -> int:
        with open_signals(signal.SIGINT) as received:
            assert signal.getsignal(signal.SIGTERM) is nertz_handler
            signal.raise_signal(signal.SIGTERM)
            return await received.receive()

    assert trio.run(first) == signal.SIGTERM


def test_signals_a_ctrl_c_is_read_as_a_ctrl_c(nertz_handler: Handler) -> None:
    async def first() -> int:
        with open_signals(signal.SIGINT, signal.SIGTERM) as received:
            signal.raise_signal(signal.SIGINT)
            return await received.receive()

    assert trio.run(first) == signal.SIGINT
    assert interrupted_status() == 130 and children_signalled()


def test_signals_one_between_two_readers_waits_for_the_second(nertz_handler: Handler) -> None:
    """A hand-over: the first reader (a lobby) is cancelled while it waits, a SIGTERM comes
    while nobody reads, and the next reader (a table) reads it. Then a Ctrl-C a reader read
    and gave back (its game fixed as it came) is the next reader's first."""

    async def hand_over() -> list[int]:
        read: list[int] = []
        with open_signals(signal.SIGINT, signal.SIGTERM) as received:
            with trio.CancelScope() as lobby:
                lobby.cancel()
                await received.receive()  # (cancelled: the lobby is done, nothing read)
            assert lobby.cancelled_caught
            signal.raise_signal(signal.SIGTERM)  # (the hand-over: no reader)
            await trio.lowlevel.checkpoint()
            read.append(await received.receive())  # (the table)
            signal.raise_signal(signal.SIGINT)
            received.give_back(await received.receive())
            read.append(await received.receive())
        return read

    assert trio.run(hand_over) == [signal.SIGTERM, signal.SIGINT]


def test_signals_give_back_is_read_before_what_the_receiver_holds() -> None:
    async def order() -> list[int]:
        with open_signals(signal.SIGINT, signal.SIGUSR1) as received:
            signal.raise_signal(signal.SIGUSR1)
            received.give_back(signal.SIGTERM)
            return [await received.receive(), await received.receive()]

    assert trio.run(order) == [signal.SIGTERM, signal.SIGUSR1]


@pytest.mark.slow
def test_signals_the_web_table_leaves_on_a_sigterm_held_from_before_it(
    tmp_path: Path, nertz_handler: Handler
) -> None:
    """The browser's table given the lobby's receiver, a SIGTERM already in it as ``nertz``'s
    handler raises it (a SIGINT: the receiver half open, here of SIGINT alone): it reads it
    first and leaves, said as SIGTERM (session 37's web table said "signal 2"). A real node
    and page server on 127.0.0.1; the other member never answers."""
    identities, spec = bot_game(b"test-signals-web", 2, 1)
    node = PeerNode(identities[0], spec, tmp_path / "you.log", bind="tcp://127.0.0.1:0")
    node.bind()
    nobody: dict[PeerId, str] = {identities[1].peer_id: "tcp://127.0.0.1:9"}

    async def table() -> int | None:
        with trio.fail_after(90), open_signals(signal.SIGINT) as held:
            assert signal.getsignal(signal.SIGTERM) is nertz_handler
            signal.raise_signal(signal.SIGTERM)
            done = await run_web_table(node, nobody, on_url=lambda url: None, signals=held)
        return done.signal

    assert trio.run(table) == signal.SIGTERM
