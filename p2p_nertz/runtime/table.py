"""The trio side of a table: a :class:`~p2p_nertz.ui.controller.TableController` run against a
:class:`~p2p_nertz.runtime.node.PeerNode`, whatever the front end.

The controller is pure: it turns keys, drops and notices into requests (play a move, abandon,
leave, let the next round's ``ready`` go, quit). :class:`TableRunner` carries those out on the
node and hands failures back to the controller, redraws on every wake-up or every
:data:`REFRESH` seconds, and plays the node. The terminal table (``cli/table.py``) and the
browser table (:mod:`p2p_nertz.web.table`) add only how their person's input arrives.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import trio

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError, NertzError
from p2p_nertz.protocol.local import AbandonRefused, ClaimLost, MoveRefused
from p2p_nertz.ui import Abandon, Leave, PlayMove
from p2p_nertz.ui.controller import Quit, ReleaseReady, Request, TableController

if TYPE_CHECKING:
    from collections.abc import Mapping

    from p2p_nertz.protocol.identity import PeerId
    from p2p_nertz.protocol.peer import Effect, Peer
    from p2p_nertz.runtime.node import PeerNode

__all__ = ["REFRESH", "TableRunner"]

#: Seconds between redraws for the others' moves, when nothing else wakes the table.
REFRESH = 0.1


class TableRunner:
    """The trio tasks around one table's controller (see the module docstring).

    A subclass starts :meth:`play` and :meth:`screen` in :attr:`nursery`, with the tasks that
    read its person's input and pass it to the controller, then :meth:`carry_out`.
    """

    def __init__(self, node: PeerNode, table: TableController) -> None:
        self.node = node
        self.table = table
        self.peer: Peer | None = None
        self.wake = trio.Event()
        self.nursery: trio.Nursery | None = None

    def current(self) -> Peer | None:
        """The node's peer (``None`` before it started)."""
        try:
            return self.node.peer
        except RuntimeError:  # not started yet
            return None

    def on_notice(self, effect: Effect) -> None:
        """A notice of the node's peer (the node's ``on_notice``): told to the table."""
        self.table.notice(effect, self.node.peer.final, self.node.clock())
        self.wake.set()

    async def play(self, endpoints: Mapping[PeerId, str]) -> None:
        """Run the node; when it stops, the table says what follows."""
        try:
            self.peer = await self.node.run(endpoints)
        finally:
            requests = self.table.node_stopped(self.node.gone)
            self.wake.set()
        await self.carry_out(requests)

    async def screen(self) -> None:
        """Redraw on every wake-up, or every :data:`REFRESH` seconds."""
        while True:
            self.wake = trio.Event()
            await self.carry_out(self.table.tick(self.node.clock()))
            self.table.draw(self.current(), self.node.clock())
            with trio.move_on_after(REFRESH):
                await self.wake.wait()

    async def carry_out(self, requests: list[Request]) -> None:
        """Do what the controller asks of the node; hand failures back to it."""
        assert self.nursery is not None
        for request in requests:
            if isinstance(request, PlayMove):
                try:
                    await self.node.play(request.move)
                except (MoveRefused, ClaimLost) as exc:  # (the core's answer: the table words it)
                    self.table.refused(exc.answer)
                except IllegalMoveError as exc:  # (its reason: the table words it)
                    self.table.refused(exc)
                except LocalProtocolError as exc:
                    self.table.refused(str(exc))
            elif isinstance(request, Abandon):
                try:
                    await self.node.abandon()
                except AbandonRefused as exc:  # (the core's answer: the table words it)
                    self.table.abandon_refused(exc.answer)
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
        """Leave the game (or, before the node started, stop)."""
        self.wake.set()
        try:
            await self.node.leave()
        except RuntimeError:  # not started yet
            assert self.nursery is not None
            self.nursery.cancel_scope.cancel()

    async def release(self, number: int) -> None:
        """Let the node sign round ``number``'s ``ready``."""
        # (Not started: nothing to sign yet. Stopped meanwhile: nothing to sign any more.)
        with contextlib.suppress(RuntimeError, NertzError):
            await self.node.release_ready(number)
