"""The lobby screen of ``nertz play`` on the network: the tables heard on the LAN and given
ones, a hosted table or a seat at one, and bots added from the screen.

:class:`LobbyApp` runs the lobby's tasks (keys, screen, signals, discovery, the guest's seat)
until a game is fixed; what the screen shows and what a key does are the library's
(:mod:`p2p_nertz.ui.lobby`).
"""

from __future__ import annotations

import argparse
import math
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import trio

from cli.args import PortHold, deal_from, liveness_argv
from cli.bots import LobbyBot, spawn_lobby_bot, stop_processes, watch_bots
from cli.terminal import TERMINAL_SIGNALS, Terminal
from p2p_nertz.bots import STRATEGIES
from p2p_nertz.errors import NertzError
from p2p_nertz.lobby.messages import TableView
from p2p_nertz.lobby.state import HostLobby, LobbyError, Session, waiting_for
from p2p_nertz.protocol.identity import Identity, fingerprint
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyGuest, LobbyHost, Offer, discover, route_address
from p2p_nertz.signals import Signals
from p2p_nertz.ui.keys import Status
from p2p_nertz.ui.lobby import (
    AddBot,
    AtTable,
    CreateTable,
    JoinTable,
    LeaveTable,
    Listing,
    LobbyAction,
    LobbyKeys,
    LobbyView,
    Quit,
    RemoveSeat,
    SeatLine,
    SetReady,
    StartGame,
    loopback_words,
    no_guest_words,
    press_lobby,
    render_lobby,
)

__all__ = ["LobbyApp", "Started"]

_OFFER_STALE = 4.0  # seconds without a beacon after which a LAN table leaves the list


_LOBBY_REFRESH = 0.25  # seconds between redraws of the lobby when nothing else wakes it


_CLOSE_FLUSH = 0.3  # seconds a closed table keeps serving, so the guests hear the bye


_JOIN_TIMEOUT = 10.0  # seconds to wait for a table's first answer


@dataclass
class Started:
    """The game the lobby fixed, and the table we host (it keeps serving late guests)."""

    session: Session
    hosting: LobbyHost | None


class LobbyApp:
    """The lobby screen on the network: discovery, a hosted table or a seat at one, bots.

    It runs in its own nursery (keys, screen, signals, discovery, the guest's seat) inside the
    caller's ``outer`` nursery, where a hosted table serves: when the game starts the lobby's
    nursery ends and :meth:`run` returns the game, while the hosted table goes on answering.
    """

    def __init__(
        self,
        args: argparse.Namespace,
        identity: Identity,
        name: str,
        rules: Rules,
        *,
        address: str,
        peers: list[tuple[str, int]],
        log_dir: Path,
        terminal: Terminal,
    ) -> None:
        self.args = args
        self.identity = identity
        self.name = name
        self.rules = rules
        self.address = address
        self.peers = peers
        self.log_dir = log_dir
        self.terminal = terminal
        self.strategies = tuple(sorted(STRATEGIES))
        self.keys = LobbyKeys()
        self.messages: list[str] = []
        self.offers: dict[str, tuple[Offer, float]] = {}
        self.seen: dict[str, TableView] = {}
        self.host: LobbyHost | None = None
        self.host_scope: trio.CancelScope | None = None
        self.guest: LobbyGuest | None = None
        self.guest_scope: trio.CancelScope | None = None
        self.where: str | None = None
        self.started: Started | None = None
        self.signal: int | None = None  # (the SIGINT or SIGTERM that made it quit, if one did)
        self.lobby_bots: list[LobbyBot] = []
        self.bot_names: set[str] = set()
        self.wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._outer: trio.Nursery | None = None
        self._host_log = 0
        self._game_port: PortHold | None = None  # the port our game endpoint at a table names

    @property
    def bots(self) -> list[subprocess.Popen[bytes]]:
        """The processes of the bots this lobby started (and has not stopped)."""
        return [bot.proc for bot in self.lobby_bots]

    # -- what the screen shows -----------------------------------------------------------------
    def listings(self) -> list[Listing]:
        out = []
        own = None if self.host is None else self.host.table.lobby_id
        for where, (offer, _) in self.offers.items():
            b = offer.beacon
            if b.lobby_id != own:
                out.append(
                    Listing(where, b.name, b.fingerprint, b.taken, b.capacity, "LAN", b.deal)
                )
        for host, port in self.peers:
            where = f"{host}:{port}"
            if where in self.offers:
                continue
            seen = self.seen.get(where)
            if seen is None or not seen.seats:
                out.append(Listing(where, found="--peer"))
            else:
                first = seen.seats[0]
                out.append(
                    Listing(
                        where,
                        first.name,
                        fingerprint(first.peer_id),
                        len(seen.seats),
                        seen.capacity,
                        "--peer",
                        seen.deal,
                    )
                )
        return out

    def at_table(self) -> AtTable | None:
        if self.where is None:
            return None
        me = self.identity.peer_id
        if self.host is not None:
            table = self.host.table
            seats, capacity = table.seats, table.capacity
            rules: Rules | None = table.rules
            deal = table.deal
            blocker = table.why_not_start()
            if blocker is None or blocker.startswith("waiting for"):
                # What it waits for in full (seats too), not only the first blocker.
                blocker = waiting_for(seats, table.rules)
            if blocker is not None and len(seats) < 2:
                blocker += " (b adds a bot)"
        else:
            view = None if self.guest is None else self.guest.table
            if view is None:
                return AtTable(self.where)
            seats, capacity, deal = view.seats, view.capacity, view.deal
            try:
                rules = Rules.from_dict(view.rules)
            except NertzError:
                rules = None
            blocker = None if rules is None else waiting_for(seats, rules)
        lines = tuple(
            SeatLine(s.name, fingerprint(s.peer_id), s.ready, host=i == 0, you=s.peer_id == me)
            for i, s in enumerate(seats)
        )
        return AtTable(self.where, lines, rules, capacity, self.host is not None, blocker, deal)

    def view(self) -> LobbyView:
        listings = tuple(self.listings())
        return LobbyView(
            self.name,
            self.identity.fingerprint,
            listings,
            self.at_table(),
            self.keys,
            self.strategies,
            self.args.discover,
            tuple(self.messages[-8:]),
        )

    def say(self, text: str, *, status: bool = False, refused: bool = False) -> None:
        """Announce ``text``; ``status``: on the status line too (``refused``: as why
        something asked was not done, drawn as bad news)."""
        self.messages.append(text)
        if status:
            self.keys = replace(self.keys, line=Status(text, refused=refused))
        self.poke()

    def poke(self) -> None:
        self.wake.set()

    # -- the tasks -----------------------------------------------------------------------------
    async def run(
        self,
        outer: trio.Nursery,
        signals: Signals,
        serve: Callable[[], Awaitable[object]] | None = None,
    ) -> Started | None:
        """Show the lobby until a game starts (returned) or the player quits (``None``);
        ``serve`` (the page's, whose address it says) once the lobby reads ``signals``.

        ``signals``: the receiver (of SIGINT, SIGTERM and
        :data:`~cli.terminal.TERMINAL_SIGNALS`) the caller holds from before the lobby to
        after the table, so that one that comes between them waits for the table, never
        trio's KeyboardInterrupt (session 38); one that comes once the game is fixed is left
        in it for the table."""
        self._outer = outer
        if self.args.discover is None and not self.peers:
            self.say("no --peer and no --discover: c creates a table here", status=True)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._signals, signals)
            if serve is not None:
                await serve()
            nursery.start_soon(self._keyboard)
            nursery.start_soon(self._screen)
            nursery.start_soon(watch_bots, self.lobby_bots, self._bot_stopped)
            if self.args.discover is not None:
                nursery.start_soon(self._discover)
        self._hold_game_port(None)  # the game's node binds it next (or nobody does)
        return self.started

    def _hold_game_port(self, address: str | None) -> int:
        """Hold a free port of ``address`` for our game endpoint at a new table (``None``:
        only let go the one held); its number (0 for none)."""
        if self._game_port is not None:
            self._game_port.release()
            self._game_port = None
        if address is None:
            return 0
        self._game_port = PortHold(address)
        return self._game_port.port

    def _begin(self, started: Started) -> None:
        self.started = started
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    async def _keyboard(self) -> None:
        while True:
            await self.terminal.wait_input()
            for key in self.terminal.read_keys():
                if key == "RESIZE":
                    continue
                if key == "CTRL-C":
                    await self._do(Quit())
                    return
                self.keys, actions = press_lobby(self.keys, key, self.view().context())
                for action in actions:
                    await self._do(action)
            self.poke()

    async def _screen(self) -> None:
        while True:
            self.wake = trio.Event()
            now = trio.current_time()
            for where, (_, heard) in list(self.offers.items()):
                if now - heard > _OFFER_STALE:
                    del self.offers[where]
            view = self.view()
            show = getattr(self.terminal, "show_lobby", None)
            if show is not None:  # a page draws the view itself (p2p_nertz.web.terminal)
                show(view)
            else:
                width, height = self.terminal.size()
                self.terminal.paint(render_lobby(view, width, height))
            with trio.move_on_after(_LOBBY_REFRESH):
                await self.wake.wait()

    async def _signals(self, received: Signals) -> None:
        async for signum in received:
            if signum in TERMINAL_SIGNALS:
                self.terminal.resized()
                self.poke()
                continue
            if self.started is not None:
                # The game was fixed as it came (this task not yet cancelled): the
                # table's to answer, as a leave (not a lobby's quit, its bots stopped).
                received.give_back(signum)
                return
            self.signal = signum  # (as sent: p2p_nertz.signals.as_sent)
            await self._do(Quit())
            return

    def _bot_stopped(self, bot: LobbyBot, said: str) -> None:
        """A bot this lobby started stopped before the game (it gave up, was refused,
        crashed): said with its last error line; its name is free again."""
        self.bot_names.discard(bot.name)
        self.say(f"{bot.name} stopped: {said}", status=True)

    async def _discover(self) -> None:
        def on_offer(offer: Offer) -> None:
            where = f"{offer.address}:{offer.beacon.port}"
            if where not in self.offers:
                self.poke()
            self.offers[where] = (offer, trio.current_time())

        try:
            await discover(
                self.args.discover,
                port=self.args.beacon_port,
                timeout=math.inf,
                on_offer=on_offer,
            )
        except NertzError as exc:
            self.say(f"error: {exc}", status=True, refused=True)

    # -- the actions ---------------------------------------------------------------------------
    async def _do(self, action: LobbyAction) -> None:
        try:
            if isinstance(action, CreateTable):
                await self._create()
            elif isinstance(action, JoinTable):
                self._join(action.index)
            elif isinstance(action, SetReady):
                if self.guest is not None:
                    self.guest.set_ready(action.ready)
            elif isinstance(action, AddBot):
                self._add_bot(action.strategy, action.speed)
            elif isinstance(action, StartGame):
                self._start()
            elif isinstance(action, RemoveSeat):
                self._remove(action.seat)
            elif isinstance(action, LeaveTable):
                self._leave()
            elif isinstance(action, Quit):
                self._leave()
                self.stop_bots()
                assert self._nursery is not None
                self._nursery.cancel_scope.cancel()
        except (NertzError, OSError) as exc:
            self.say(f"error: {exc}", status=True, refused=True)
        self.poke()

    async def _create(self) -> None:
        host = LobbyHost(
            self.identity,
            self.name,
            self.rules,
            address=self.address,
            game_port=self._hold_game_port(self.address),
            broadcast=self.args.discover,
            beacon_port=self.args.beacon_port,
            on_change=self._table_changed,
            deal=deal_from(self.args),
        )
        assert self._outer is not None
        endpoint: str = await self._outer.start(self._serve, host)
        self.host = host
        self.where = endpoint.removeprefix("tcp://")
        told = f" (announced on {self.args.discover})" if self.args.discover else ""
        self.say(f"you host a table at {self.where}{told}: others join with --peer {self.where}")
        if (only := loopback_words("play", self.where)) is not None:
            self.say(only)
        self.keys = replace(self.keys, line=Status("your table is open: b adds a bot, s starts"))

    async def _serve(self, host: LobbyHost, *, task_status: trio.TaskStatus[str]) -> None:
        with trio.CancelScope() as scope:
            self.host_scope = scope
            await host.serve(task_status=task_status)

    def _table_changed(self, table: HostLobby) -> None:
        while self._host_log < len(table.log):
            self.messages.append(table.log[self._host_log])
            self._host_log += 1
        self.poke()

    def _join(self, index: int) -> None:
        listings = self.listings()
        if not 0 <= index < len(listings):
            self.say("that table is gone", status=True, refused=True)
            return
        item = listings[index]
        host_ip = item.where.rpartition(":")[0]
        offer = self.offers.get(item.where)
        kwargs: dict[str, Any] = {}
        if offer is not None:
            kwargs = {"host": offer[0].beacon.host, "lobby_id": offer[0].beacon.lobby_id}
        address = route_address(host_ip) if self.args.address is None else self.address
        game_endpoint = f"tcp://{address}:{self._hold_game_port(address)}"
        where = item.where

        resets = [0]

        def on_table(view: TableView) -> None:
            self._seats_news(self.seen.get(where), view)
            self.seen[where] = view
            if guest.state.resets > resets[0]:  # docs/lobby.md §5: a ready is for one table
                resets[0] = guest.state.resets
                self.say("the table changed: you are not ready any more (r when ready)")
            self.poke()

        guest = LobbyGuest(
            self.identity,
            self.name,
            game_endpoint,
            f"tcp://{where}",
            ready=False,
            timeout=_JOIN_TIMEOUT,
            on_table=on_table,
            **kwargs,
        )
        self.guest = guest
        self.where = where
        self.say(f"joining the table at {where}…")
        assert self._nursery is not None
        self._nursery.start_soon(self._sit, guest)

    def _seats_news(self, before: TableView | None, after: TableView) -> None:
        if before is None:
            host = after.seats[0] if after.seats else None
            if host is not None:
                text = f"at {host.name}'s table ({fingerprint(host.peer_id)}): r when ready"
                self.say(text, status=True)
            return
        old = {s.peer_id: s for s in before.seats}
        new = {s.peer_id: s for s in after.seats}
        for pid, seat in new.items():
            if pid not in old:
                self.say(f"{seat.name} ({fingerprint(pid)}) sat down")
            elif old[pid].ready != seat.ready and pid != self.identity.peer_id:
                self.say(f"{seat.name} is {'ready' if seat.ready else 'not ready'}")
        for pid, seat in old.items():
            if pid not in new:
                self.say(f"{seat.name} ({fingerprint(pid)}) left")

    async def _sit(self, guest: LobbyGuest) -> None:
        with trio.CancelScope() as scope:
            self.guest_scope = scope
            try:
                session = await guest.run()
            except LobbyError as exc:
                if self.guest is guest:
                    self.guest = None
                    self.where = None
                    self.say(str(exc), status=True, refused=True)
                return
        if session is not None and self.guest is guest:
            self._begin(Started(session, None))

    def _start(self) -> None:
        if self.host is None:
            return
        try:
            session = self.host.start()
        except LobbyError as exc:
            self.say(str(exc), status=True, refused=True)
            return
        self._begin(Started(session, self.host))

    def _remove(self, seat: int) -> None:
        if self.host is None:
            return
        seats = self.host.table.seats
        if not 1 <= seat < len(seats):
            self.say(no_guest_words(seat, len(seats)), status=True, refused=True)
            return
        who = seats[seat]
        try:
            self.host.remove(who.peer_id)
        except LobbyError as exc:
            self.say(str(exc), status=True, refused=True)
            return
        self.say(f"removed {who.name} ({fingerprint(who.peer_id)}) from the table", status=True)

    def _leave(self) -> None:
        if self.host is not None:
            self.host.close("the host closed the table")
            scope = self.host_scope
            if scope is not None:
                scope.deadline = trio.current_time() + _CLOSE_FLUSH
            self.host = None
            self.host_scope = None
            self.stop_bots()
        if self.guest is not None:
            self.guest.leave("left the table")
            self.guest = None
            self.stop_bots()
        self.where = None

    def _add_bot(self, strategy: str, speed: int) -> None:
        if self.where is None:
            return
        taken = set(self.bot_names)
        table = self.at_table()
        if table is not None:
            taken |= {s.name for s in table.seats}
        name = next(f"{strategy}{n}" for n in range(1, 100) if f"{strategy}{n}" not in taken)
        self.bot_names.add(name)
        bot = spawn_lobby_bot(
            self.where,
            name,
            Identity.generate(),
            strategy=strategy,
            speed=speed,
            log_dir=self.log_dir,
            options=liveness_argv(self.args),
            err=self.log_dir / f"{name}.err",
            own_session=True,  # Ctrl-C at this terminal is for the player, not the bots
        )
        self.lobby_bots.append(bot)
        self.say(f"started a {strategy} bot at speed {speed}: {name}", status=True)

    def stop_bots(self) -> None:
        stop_processes(self.bots)
        self.lobby_bots.clear()
