"""The terminal table: a person at the keyboard playing one peer of a game.

:func:`run_table` plays a :class:`~p2p_nertz.runtime.node.PeerNode` (with no bot) from a
:class:`~cli.terminal.Terminal` until the game is over and the player has read the standings,
or the player leaves. What the table does is the library's
:class:`~p2p_nertz.ui.controller.TableController`; this module only runs it under trio: it
feeds it keys, signals, notices and the time, carries out its requests on the node, and
repaints a few times a second for the others' moves.

Ctrl-C (or SIGTERM) leaves the game cleanly — a signed ``leave`` the others see — and a second
one stops at once.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from cli.args import EXIT_FAILED, expected_errors
from cli.terminal import Terminal, TerminalFront, open_curses
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError, NertzError
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.ui import Abandon, Leave, PlayMove
from p2p_nertz.ui.controller import Quit, ReleaseReady, Request, TableController

__all__ = ["Outcome", "make_node", "run_in_terminal", "run_table", "summary"]

_REFRESH = 0.1  # seconds between redraws for the others' moves (when nothing else wakes us)


@dataclass
class Outcome:
    """How :func:`run_table` ended.

    Attributes:
        peer: the peer (``None`` if the node never started).
        left: the player left the game (a key, or a signal).
        signal: the signal that ended it, if one did.
    """

    peer: Peer | None = None
    left: bool = False
    signal: int | None = None
    errors: list[BaseException] = field(default_factory=list)


async def run_table(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    terminal: Terminal,
    symbols: bool = True,
    signals: bool = True,
    hint: str | None = None,
) -> Outcome:
    """Play ``node`` from ``terminal`` until the game is over and read, or the player leaves.

    The node must have no bot strategy; this runs it (:meth:`PeerNode.run`), so do not.

    Args:
        node: the player's node, bound or not.
        endpoints: every other member's endpoint.
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).
        signals: leave on SIGINT/SIGTERM (only possible on the main thread).
        hint: a first message on the table (how to change the bots' speed, say).

    Returns:
        How it ended.
    """
    spec = node.spec
    table = TableController(
        tuple(m.name for m in spec.members),
        spec.seat_of(node.identity.peer_id),
        TerminalFront(terminal, symbols=symbols),
        symbols=symbols,
        hint=hint,
    )
    runner = _Runner(node, table)
    node.add_listener(runner.on_notice)
    async with trio.open_nursery() as nursery:
        runner.nursery = nursery
        nursery.start_soon(runner.play, endpoints)
        nursery.start_soon(runner.keyboard, terminal)
        nursery.start_soon(runner.screen)
        if signals:
            nursery.start_soon(runner.watch_signals, terminal)
    outcome = Outcome(runner.peer, table.left, table.signal)
    if outcome.peer is None:
        with contextlib.suppress(RuntimeError):
            outcome.peer = node.peer
    return outcome


class _Runner:
    """The trio tasks of :func:`run_table` around its controller."""

    def __init__(self, node: PeerNode, table: TableController) -> None:
        self.node = node
        self.table = table
        self.peer: Peer | None = None
        self.wake = trio.Event()
        self.nursery: trio.Nursery | None = None

    def _peer(self) -> Peer | None:
        try:
            return self.node.peer
        except RuntimeError:  # not started yet
            return None

    def on_notice(self, effect: Effect) -> None:
        self.table.notice(effect, self.node.peer.final, self.node.clock())
        self.wake.set()

    async def play(self, endpoints: Mapping[PeerId, str]) -> None:
        try:
            self.peer = await self.node.run(endpoints)
        finally:
            requests = self.table.node_stopped()
            self.wake.set()
        await self.carry_out(requests)

    async def keyboard(self, terminal: Terminal) -> None:
        while True:
            await terminal.wait_input()
            for key in terminal.read_keys():
                await self.carry_out(self.table.press(key, self._peer(), self.node.clock()))
            self.wake.set()

    async def screen(self) -> None:
        while True:
            self.wake = trio.Event()
            await self.carry_out(self.table.tick(self.node.clock()))
            self.table.draw(self._peer(), self.node.clock())
            with trio.move_on_after(_REFRESH):
                await self.wake.wait()

    async def watch_signals(self, terminal: Terminal) -> None:
        wanted = [signal.SIGINT, signal.SIGTERM, signal.SIGWINCH]
        with trio.open_signal_receiver(*wanted) as received:
            async for signum in received:
                if signum == signal.SIGWINCH:
                    terminal.resized()
                else:
                    await self.carry_out(self.table.signal_received(signum))
                self.wake.set()

    async def carry_out(self, requests: list[Request]) -> None:
        """Do what the controller asks of the node; hand failures back to it."""
        assert self.nursery is not None
        for request in requests:
            if isinstance(request, PlayMove):
                try:
                    await self.node.play(request.move)
                except (IllegalMoveError, LocalProtocolError) as exc:
                    self.table.refused(str(exc))
            elif isinstance(request, Abandon):
                try:
                    await self.node.abandon()
                except LocalProtocolError as exc:
                    self.table.abandon_refused(str(exc))
                else:
                    self.table.abandoned()
            elif isinstance(request, Leave):
                self.nursery.start_soon(self.leave)
            elif isinstance(request, ReleaseReady):
                self.nursery.start_soon(self.release, request.number)
            elif isinstance(request, Quit):
                self.nursery.cancel_scope.cancel()

    async def leave(self) -> None:
        self.wake.set()
        try:
            await self.node.leave()
        except RuntimeError:  # not started yet
            assert self.nursery is not None
            self.nursery.cancel_scope.cancel()

    async def release(self, number: int) -> None:
        # (Not started: nothing to sign yet. Stopped meanwhile: nothing to sign any more.)
        with contextlib.suppress(RuntimeError, NertzError):
            await self.node.release_ready(number)


def make_node(
    identity: Identity,
    spec: GameSpec,
    log: Path,
    bind: str,
    watchers: list[str],
    *,
    config: PeerConfig,
) -> PeerNode:
    """The person's node (no bot), bound; its next round waits while the board is read.

    Raises:
        NertzError: its address cannot be bound (the message names it).
    """
    node = PeerNode(
        identity,
        spec,
        log,
        bind=bind,
        strategy=None,
        watchers=watchers,
        config=config,
        hold_ready=True,  # the next round waits while the player reads the board (run_table)
    )
    try:
        node.bind()
    except NertzError as exc:
        raise NertzError(str(exc)) from None  # (it names the address)
    return node


def run_in_terminal(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    colour: bool,
    symbols: bool,
    hint: str | None = None,
) -> Outcome:
    """Play ``node`` at the curses table until the game is over and read, or left; the
    runtime's expected failures are returned in :attr:`Outcome.errors`."""
    with open_curses(colour=colour) as terminal:
        try:
            return trio.run(_table_main, node, endpoints, terminal, symbols, hint)
        except BaseExceptionGroup as group:
            errors = expected_errors(group)
            return Outcome(errors=errors)


async def _table_main(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    terminal: Terminal,
    symbols: bool,
    hint: str | None,
) -> Outcome:
    return await run_table(node, endpoints, terminal=terminal, symbols=symbols, hint=hint)


def summary(outcome: Outcome, node: PeerNode, where: Path) -> int:
    """Print how the game went (after curses gave the terminal back); the exit status."""
    if outcome.errors:
        print(f"nertz play: error: {outcome.errors[0]}", file=sys.stderr)
        return EXIT_FAILED
    peer = outcome.peer
    if peer is None:
        print("nertz play: stopped before the game started", file=sys.stderr)
        return EXIT_FAILED
    final = peer.final
    names = [m.name for m in peer.spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
    print(f"after {len(final.game.history)} round(s): {totals}")
    result = final.game.result
    if result is not None:
        print("winner(s): " + ", ".join(names[w] for w in result.winners))
    print(f"signed log: {node.log_path}  (game files in {where})")
    if outcome.signal is not None:
        print(f"nertz play: left the game on signal {outcome.signal}", file=sys.stderr)
        return 128 + outcome.signal
    if outcome.left:
        print("nertz play: you left the game", file=sys.stderr)
        return 0
    return 0 if final.phase is Phase.OVER else EXIT_FAILED
