"""The terminal table: a person at the keyboard playing one peer of a game.

:func:`run_table` plays a :class:`~p2p_nertz.runtime.node.PeerNode` (with no bot) from a
:class:`~cli.terminal.Terminal` until the game is over and the player has read the standings,
or the player leaves. What the table does is the library's
:class:`~p2p_nertz.ui.controller.TableController`; this module only runs it under trio: it
feeds it keys, signals, notices and the time, carries out its requests on the node, and
repaints a few times a second for the others' moves.

Ctrl-C (or SIGTERM, or SIGHUP: cli/main.py raises it as SIGTERM) leaves the game cleanly — a
signed ``leave`` the others see — and a second one stops at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from cli.args import EXIT_FAILED, error_text, expected_errors, gone_status
from cli.ended import LEAVE_PENDING, pending_leave
from cli.places import on_its_own_line, self_command
from cli.terminal import TERMINAL_SIGNALS, Terminal, TerminalFront, open_curses
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Peer, PeerConfig, TableGone
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.runtime.table import TableRunner
from p2p_nertz.runtime.watchport import WatcherAddress
from p2p_nertz.signals import STOPPING, Signals, receiver_or_none, signal_status
from p2p_nertz.ui.controller import TableController
from p2p_nertz.words import counted, plural

__all__ = ["Outcome", "make_node", "run_in_terminal", "run_table", "summary"]


@dataclass
class Outcome:
    """How :func:`run_table` ended.

    Attributes:
        peer: the peer (``None`` if the node never started).
        left: the player left the game (a key, or a signal).
        signal: the signal that ended it, if one did.
        gone: why the node stopped waiting, if the table is gone (:attr:`PeerNode.gone`).
        log: the player's signed log, for what the command says once the table is gone.
    """

    peer: Peer | None = None
    left: bool = False
    signal: int | None = None
    errors: list[BaseException] = field(default_factory=list)
    gone: TableGone | None = None
    log: Path | None = None


async def run_table(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    terminal: Terminal,
    symbols: bool = True,
    signals: bool | Signals = True,
    hint: str | None = None,
) -> Outcome:
    """Play ``node`` from ``terminal`` until the game is over and read, or the player leaves.

    The node must have no bot strategy; this runs it (:meth:`PeerNode.run`), so do not.

    Args:
        node: the player's node, bound or not.
        endpoints: every other member's endpoint.
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).
        signals: leave on SIGINT/SIGTERM (only possible on the main thread); or the receiver
            to read them (and the terminal's resizes) from, held by the caller across a
            hand-over (the lobby's: :func:`p2p_nertz.signals.open_signals`).
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
    # (Taken before the table's tasks start: one that comes meanwhile waits in it.)
    with receiver_or_none(signals, *TERMINAL_SIGNALS) as received:
        async with trio.open_nursery() as nursery:
            runner.nursery = nursery
            nursery.start_soon(runner.play, endpoints)
            nursery.start_soon(runner.keyboard, terminal)
            nursery.start_soon(runner.screen)
            if received is not None:
                nursery.start_soon(runner.watch_signals, terminal, received)
    outcome = Outcome(runner.peer, table.left, table.signal, gone=node.gone)
    if outcome.peer is None:
        with contextlib.suppress(RuntimeError):
            outcome.peer = node.peer
    return outcome


class _Runner(TableRunner):
    """The trio tasks of :func:`run_table` around its controller: the shared ones
    (:class:`~p2p_nertz.runtime.table.TableRunner`), and the keyboard and the terminal's
    signals."""

    async def keyboard(self, terminal: Terminal) -> None:
        while True:
            await terminal.wait_input()
            for key in terminal.read_keys():
                await self.carry_out(self.table.press(key, self.current(), self.node.clock()))
            self.wake.set()

    async def watch_signals(self, terminal: Terminal, received: Signals) -> None:
        """Leave at a SIGINT or SIGTERM, said as sent (:func:`p2p_nertz.signals.as_sent`);
        redraw at a resize."""
        async for signum in received:
            if signum in TERMINAL_SIGNALS:
                terminal.resized()
            elif signum in STOPPING:
                await self.carry_out(self.table.signal_received(signum))
            self.wake.set()


def make_node(
    identity: Identity,
    spec: GameSpec,
    log: Path,
    bind: str,
    watchers: list[WatcherAddress],
    *,
    config: PeerConfig,
    fresh: bool = False,
    first_waits: bool = False,
) -> PeerNode:
    """The person's node (no bot), bound; its next round waits while the board is read.
    ``fresh``: a game this command made, or the lobby it sat at (``PeerConfig.fresh``).
    ``first_waits``: its first round waits too, for the person's page to be there
    (``nertz play --web``: ``p2p_nertz.web.table.run_web_table``'s ``first_deal``).

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
        config=dataclasses.replace(config, fresh=fresh),
        hold_ready=0 if first_waits else 1,  # the next round waits while the board is read
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


def summary(outcome: Outcome, node: PeerNode, where: Path, *, game_dir: bool = False) -> int:
    """Print how the game went (after curses gave the terminal back), and how to audit and
    replay it; the exit status. ``game_dir``: ``where`` holds this game's logs alone (``play
    --bots``: the bots' too, so the audit is of them all), not a directory of many games."""
    if outcome.errors:
        print(f"nertz play: error: {error_text(outcome.errors[0])}", file=sys.stderr)
        return EXIT_FAILED
    peer = outcome.peer
    if peer is None:
        print("nertz play: stopped before the game started", file=sys.stderr)
        return EXIT_FAILED if outcome.signal is None else signal_status(outcome.signal)
    final = peer.final
    names = [m.name for m in peer.spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
    print(f"after {counted(len(final.game.history), 'round')}: {totals}")
    result = final.game.result
    if result is not None:
        who = ", ".join(names[w] for w in result.winners)
        print(f"{plural(len(result.winners), 'winner')}: {who}")
    print(on_its_own_line("your signed log", str(node.log_path)))
    print(on_its_own_line("the game's files" if game_dir else "the logs' directory", str(where)))
    print(checking_words(node.log_path, where if game_dir else None))
    if outcome.signal is not None:
        print(f"nertz play: left the game on signal {outcome.signal}", file=sys.stderr)
        return signal_status(outcome.signal)
    if outcome.left:
        if pending_leave(peer):
            print(LEAVE_PENDING)
        print("nertz play: you left the game", file=sys.stderr)
        return 0
    if outcome.gone is not None:
        print(f"nertz play: {outcome.gone.why}; the table stopped waiting", file=sys.stderr)
        return gone_status(outcome.gone)
    return 0 if final.phase is Phase.OVER else EXIT_FAILED


def checking_words(log: Path, game_dir: Path | None) -> str:
    """How to audit and replay the game just played, as ``nertz demo`` says it: a newcomer
    who played ``nertz play --bots 2`` read the README's ``nertz audit
    nertz-logs/demo-*/p*.log``, of a game they had not played, and was told nothing of their
    own. ``game_dir``: a directory of this game's logs alone (the bots' too), audited whole;
    else the player's own log (a lobby's log directory holds every game)."""
    nertz = self_command()
    own = shlex.quote(str(log))
    logs = own if game_dir is None else f"{shlex.quote(str(game_dir))}/*.log"  # (the shell's glob)
    audit = on_its_own_line("audit it", f"{nertz} audit {logs}")
    return f"{audit}\n{on_its_own_line('replay it', f'{nertz} replay {own}')}"
