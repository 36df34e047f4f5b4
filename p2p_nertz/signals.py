"""The signals that stop a ``nertz`` process: how each is taken, read and said, in one home
for the command line (``cli/``) and the library's front ends (the browser table, its lobby).

Theory of operation. ``nertz`` (cli/main.py) answers SIGTERM as a Ctrl-C wherever nothing
of its own takes SIGTERM (:func:`term_as_ctrl_c`): its handler notes the SIGTERM
(:func:`note_terminated`) and raises SIGINT, for whatever answers SIGINT then (trio's
KeyboardInterrupt, or a command's own receiver). So a receiver that takes SIGINT may read a
SIGINT that was a SIGTERM: one that came while the receiver's SIGINT handler was set and its
SIGTERM handler not yet (trio sets them one after the other), or while SIGTERM was not the
receiver's at all. :func:`as_sent` reads it back as the SIGTERM it was, and every reader of a
receiver (the terminal's table and lobby, the browser's table, ``nertz watch``, ``nertz
node``) says the signal as sent through it, in words and in status (:func:`signal_status`):
session 37's ``play --web`` given SIGTERM as its page came up said "signal 2" and 130.

A process that goes from one screen to the next (the lobby to the table: ``nertz play``, at
the terminal or in the page) keeps one receiver across the hand-over (:func:`open_signals`),
so that a signal that comes between the two waits in it for the next reader, never trio's
KeyboardInterrupt raised into whichever task runs then; a reader that is done with the
receiver while a signal it read is for the next one gives it back (:meth:`Signals.give_back`).

A stopped process's words never wait for a reader (:func:`let_go_of_unread_streams`): once a
stopping signal is taken (noted, raised as a Ctrl-C, read by a receiver), standard output
and error that cannot take a write go to the null device, so that what the command says
as it goes (its "interrupted", a table's last words, the buffered lines Python flushes at
exit, a log record) never blocks it. Session 43: with both streams one full pipe nobody
read, every command signalled hung for ever writing "interrupted".

Nothing heavy is imported at the top (``nertz --help`` reads this): trio only where a
receiver is opened.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import stat
import threading
from collections.abc import AsyncIterator, Iterator
from types import FrameType
from typing import Any

__all__ = [
    "STOPPING",
    "Signals",
    "as_sent",
    "children_signalled",
    "held",
    "interrupted_status",
    "let_go_of_unread_streams",
    "note_terminated",
    "open_receiver",
    "open_signals",
    "receiver_or_none",
    "signal_status",
    "term_as_ctrl_c",
]

#: The signals that stop a command: Ctrl-C, and SIGTERM (``kill``, ``timeout``, a service
#: manager; SIGHUP is raised as one by cli/main.py).
STOPPING: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)

_TERMINATED: list[bool] = [False]  # (a SIGTERM noted by :func:`term_as_ctrl_c`'s handler)


def note_terminated(terminated: bool = True) -> None:
    """Note that a SIGTERM reached this process (:func:`term_as_ctrl_c`'s handler, which then
    raises it as a Ctrl-C); ``False``: none yet (as a command starts). A SIGTERM noted is
    the command's stop: its streams nobody reads are let go (:func:`let_go_of_unread_streams`)."""
    _TERMINATED[0] = terminated
    if terminated:
        let_go_of_unread_streams()


#: What poll(2) says of a stream nobody can write to now: its reader gone (a pipe's, a
#: socket's), or the terminal hung up.
_UNWRITABLE = select.POLLERR | select.POLLHUP | select.POLLNVAL


def let_go_of_unread_streams(fds: tuple[int, ...] = (1, 2)) -> list[int]:
    """Point each of ``fds`` (standard output and error) that cannot take a write now at the
    null device; return those let go.

    Called as a stopping signal is taken: from then on the command only says goodbye, and a
    goodbye written to a stream nobody reads (a pipe full and unread, a terminal that stopped
    reading, Ctrl-S) blocks the process for ever, whatever answered the signal (session 43:
    ``nertz replay``, ``play --bots``, every command, hung on their "interrupted"). A stream
    whose reader went (EPIPE) goes too: what is written after goes nowhere, quietly.

    Only what can block is looked at (a pipe, a socket, a terminal: a file or the null device
    never waits), and only what it says now (poll(2), no wait): a stream that can take a write
    keeps the goodbye, one that cannot loses nothing it would have shown. Python's buffered
    lines follow the descriptor: flushed at exit, they go where it points then.
    """
    gone: list[int] = []
    for fd in fds:
        try:
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
                continue
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            events = dict(poller.poll(0)).get(fd, 0)
            if events & select.POLLOUT and not events & _UNWRITABLE:
                continue
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except OSError:
            continue  # (closed, or no null device: nothing better to do than leave it)
        gone.append(fd)
    return gone


def signal_status(signum: int) -> int:
    """The exit status of a command stopped by signal ``signum``, whenever it came (at its
    start, in a lobby, in play): 128 + ``signum``, as a shell shows a process the signal
    ended; 130 for Ctrl-C, 143 for SIGTERM or the terminal closed (README, *Exit statuses*).

    >>> signal_status(signal.SIGINT), signal_status(signal.SIGTERM)
    (130, 143)
    """
    return 128 + signum


def interrupted_status() -> int:
    """The exit status of a command a KeyboardInterrupt stopped (``nertz``'s words:
    "interrupted"): that of the signal behind it (:func:`signal_status`), SIGTERM where
    ``nertz``'s handler noted one (it raises it, and a SIGHUP, as a Ctrl-C), else SIGINT. The
    same signal gives the same status whenever it comes: before a command's own receiver
    runs, or after (session 37: ``nertz watch`` exited 130 or 0 on SIGTERM depending on
    whether its receiver was running yet)."""
    return signal_status(signal.SIGTERM if _TERMINATED[0] else signal.SIGINT)


def as_sent(signum: int) -> int:
    """The signal a receiver got, as it was sent: a SIGINT that ``nertz``'s SIGTERM handler
    raised (:func:`term_as_ctrl_c`: a SIGTERM that came before the receiver took SIGTERM
    itself, then read by it) is that SIGTERM, in its words and status.

    >>> note_terminated(False); as_sent(signal.SIGINT) == signal.SIGINT
    True
    >>> note_terminated(); as_sent(signal.SIGINT) == signal.SIGTERM; note_terminated(False)
    True

    Reading a stopping signal is the command's stop: its streams nobody reads are let go
    (:func:`let_go_of_unread_streams`), before the receiver's reader says a word.
    """
    if signum in STOPPING:
        let_go_of_unread_streams()
    return signal.SIGTERM if signum == signal.SIGINT and _TERMINATED[0] else signum


def children_signalled() -> bool:
    """Whether the processes a command started got the signal that interrupts it: a Ctrl-C
    at the terminal goes to the whole foreground group, the children included, and they are
    leaving already; a SIGTERM (``kill``, ``timeout``, a service manager) goes to this
    process alone, and the command must stop its children itself, at once (issue: a
    ``nertz demo`` given SIGTERM waited 15 s for nodes that never heard of it)."""
    return not _TERMINATED[0]


def term_as_ctrl_c() -> signal._HANDLER | None:
    """Make SIGTERM do what Ctrl-C does wherever a command does not take SIGTERM itself (the
    nodes, the tables and ``nertz watch`` do, leaving cleanly); return the handler it
    replaced (``None``: not replaced, off the main thread).

    Without this a SIGTERM (``kill``, ``timeout``, a service manager) ends the process at once:
    ``nertz demo`` and ``nertz host --bots`` leave their bot processes running behind them.
    As Ctrl-C, the command stops them first. The signal is noted (:func:`note_terminated`:
    :func:`as_sent` and :func:`interrupted_status` say it as the SIGTERM it was) and raised
    again as SIGINT, for the SIGINT handler in force (trio's while trio runs, which raises at
    a safe point; a receiver's); if SIGINT is ignored (a command started in the background),
    SIGTERM is not ignored too: it raises KeyboardInterrupt as Python's SIGINT handler does.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    note_terminated(False)

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        note_terminated()  # (the children got no signal: a command stops them at once)
        if not callable(signal.getsignal(signal.SIGINT)):
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)  # (handled as a Ctrl-C: by trio's handler in trio)

    return signal.signal(signal.SIGTERM, as_ctrl_c)


class Signals:
    """A receiver of signals held across a hand-over (:func:`open_signals`): each signal read
    as it was sent (:func:`as_sent`), one reader at a time, and a signal given back read
    first by the next.

    >>> import trio
    >>> async def main():
    ...     with open_signals(signal.SIGINT) as signals:
    ...         signals.give_back(signal.SIGTERM)  # (as a lobby done with it would)
    ...         return await signals.receive()
    >>> trio.run(main) == signal.SIGTERM
    True
    """

    def __init__(self, received: AsyncIterator[int]) -> None:
        self._received = received
        self._back: list[int] = []

    def give_back(self, signum: int) -> None:
        """Leave ``signum`` (as sent) for the next reader: a reader read it, and is done
        before it could answer it (a lobby whose game started meanwhile)."""
        self._back.append(signum)

    async def receive(self) -> int:
        """The next signal, as it was sent (one given back first)."""
        import trio

        if self._back:
            await trio.lowlevel.checkpoint()
            return self._back.pop(0)
        return as_sent(await self._received.__anext__())

    def __aiter__(self) -> Signals:
        return self

    async def __anext__(self) -> int:
        return await self.receive()


@contextlib.contextmanager
def held(signums: tuple[int, ...] = STOPPING) -> Iterator[None]:
    """``signums`` held while the body runs, each that came raised again as it ends (to
    whatever takes it then): for a step a signal must not cut in two. A zmq socket is made
    before its context knows it, and a Ctrl-C's KeyboardInterrupt between the two left one
    no close reached: the context's term waited for it for ever as the command ended (the
    program hung; session 39). Held in Python's handlers alone (the main thread's: a
    signal's handler runs there), where Python's handler or another callable takes the
    signal: one ignored or at its default stays so."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)

    before = {s: signal.getsignal(s) for s in signums}
    taken = [s for s, h in before.items() if callable(h)]
    for s in taken:
        signal.signal(s, note)
    try:
        yield
    finally:
        for s in taken:
            signal.signal(s, before[s])
        for s in dict.fromkeys(came):
            signal.raise_signal(s)


@contextlib.contextmanager
def open_signals(*signums: int) -> Iterator[Signals]:
    """Receive ``signums`` (on the main thread, inside trio) until the block ends: trio's
    ``open_signal_receiver`` (:func:`open_receiver`), read through :class:`Signals`. A signal
    still unread when the block ends goes to the handler in force after it (trio's), as
    trio's receiver does."""
    with open_receiver(*signums) as received:
        yield Signals(received)


@contextlib.contextmanager
def open_receiver(*signums: int) -> Iterator[AsyncIterator[int]]:
    """trio's ``open_signal_receiver`` of ``signums``, whose stopping signals let go of the
    streams nobody reads as they come (:func:`let_go_of_unread_streams`), in the handler.

    Not only when the receiver is read: a trio program blocked writing to such a stream (a
    node's ``--json`` line to a full pipe) is blocked on trio's own thread, and the reader of
    the receiver never runs until the write ends. The signal interrupts the write, the
    handler lets the stream go, and the write, taken up again, goes to the null device: the
    reader then answers the signal as ever (session 44: a node blocked so never left).
    """
    import trio

    with trio.open_signal_receiver(*signums) as received, _letting_go(signums):
        yield received


@contextlib.contextmanager
def _letting_go(signums: tuple[int, ...]) -> Iterator[None]:
    """Each stopping one of ``signums`` whose handler is a callable (the receiver's) lets go
    of the unread streams before that handler runs, until the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wrapped = {}
    for signum in dict.fromkeys(s for s in signums if s in STOPPING):
        before = signal.getsignal(signum)
        if callable(before):

            def first_let_go(num: int, frame: FrameType | None, then: Any = before) -> None:
                let_go_of_unread_streams()
                then(num, frame)

            signal.signal(signum, first_let_go)
            wrapped[signum] = (first_let_go, before)
    try:
        yield
    finally:
        for signum, (ours, before) in wrapped.items():
            if signal.getsignal(signum) is ours:  # (else another took it since: theirs stays)
                signal.signal(signum, before)


def receiver_or_none(
    signals: bool | Signals, *more: int
) -> contextlib.AbstractContextManager[Signals | None]:
    """The signals a screen reads: ``signals`` itself, a receiver held by its caller across a
    hand-over; for ``True`` a new one (the main thread's) of SIGINT, SIGTERM and ``more``
    (a terminal's resizes); none for ``False``."""
    if isinstance(signals, Signals):
        return contextlib.nullcontext(signals)
    if not signals:
        return contextlib.nullcontext()
    return open_signals(*STOPPING, *more)
