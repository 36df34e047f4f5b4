"""The lobby screen as values: what is shown, how it is laid out, and what each key does.

Pure like the table (:mod:`p2p_nertz.ui.render`, :mod:`p2p_nertz.ui.keys`): the front end
(``cli/lobby_app.py``) builds a :class:`LobbyView` from what the network told it, paints
:func:`render_lobby` of it, and feeds every key to :func:`press_lobby`, which returns the next
:class:`LobbyKeys` and the :data:`LobbyAction` s to carry out (create a table, join one, toggle
ready, add a bot, start, leave, quit). Nothing here raises on a key: a key that does nothing
now says why in the status line.

Layout (80×24 and larger; the tables list and the messages use any extra rows):

===========  ==================================================================================
header       ``p2p-nertz lobby``, your name and fingerprint, where beacons are heard
tables       the tables heard on the LAN and the ``--peer`` ones: number, host name (and
             the deal, where it is not the default), fingerprint, seats taken/capacity,
             address, how it was found; ``>`` marks the selected one
your table   every seat: number, name, fingerprint, host, ready or not, you
rules        draw, work piles, target or rounds, bonus, penalties, variants
messages     who came, who left, what the host said
status       what the last key did, or why it did nothing
keys         the keys that work now
===========  ==================================================================================

Keys (names as the front end reports them; ``UP``/``DOWN`` are the arrow keys):

* browsing: ``1``–``9`` or ``UP``/``DOWN`` select a table, ``ENTER`` joins it, ``c`` creates
  a table (you host it), ``q`` quits, ``?`` help;
* at a table: ``r`` toggles ready (a guest; the host is always ready), ``b`` adds a bot —
  then ``t`` (or ``LEFT``/``RIGHT``) chooses the strategy, ``+``/``-`` or ``1``–``9``, ``0``
  the speed, ``ENTER`` adds it, ``ESC`` cancels —, ``s`` starts the game (the host, once
  everybody is ready), ``x`` then a seat number ``1``–``7`` removes that guest (the host; the
  key is refused for the rest of this table), ``l`` leaves the table, ``q`` quits.

>>> ctx = LobbyContext(listings=2)
>>> keys, actions = press_lobby(LobbyKeys(), "2", ctx)
>>> keys.cursor, actions
(1, [])
>>> press_lobby(keys, "ENTER", ctx)[1]
[JoinTable(index=1)]
>>> press_lobby(LobbyKeys(), "s", ctx)[0].status
'not at a table: ENTER joins the selected one, c creates one'
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace

from p2p_nertz.defaults import TABLE_BOT_SPEED
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.ui.keys import ENTER, ESC, Status, no_key_words
from p2p_nertz.ui.screen import Row, Screen, Span, Style

__all__ = [
    "LOBBY_HELP",
    "AddBot",
    "AtTable",
    "CreateTable",
    "JoinTable",
    "LeaveTable",
    "Listing",
    "LobbyAction",
    "LobbyContext",
    "LobbyKeys",
    "LobbyView",
    "Quit",
    "RemoveSeat",
    "SeatLine",
    "SetReady",
    "StartGame",
    "loopback_words",
    "no_guest_words",
    "press_lobby",
    "render_lobby",
    "rules_text",
]

UP = "UP"
DOWN = "DOWN"
LEFT = "LEFT"
RIGHT = "RIGHT"

#: The lobby's keys, as its help screen lists them (the README shows the same table).
LOBBY_HELP: tuple[tuple[str, str], ...] = (
    ("1-9  or  ↑ ↓", "select a table in the list"),
    ("Enter", "join the selected table (you sit down not ready)"),
    ("c", "create a table: you host it (with --discover it is announced on the LAN)"),
    ("r", "at a table: ready / not ready (the host is always ready)"),
    ("b", "add a bot: t or ← → strategy, + - or 1-9 0 speed, Enter adds, Esc cancels"),
    ("s", "start the game (the host, once everybody is ready)"),
    ("x  then 1-7", "remove that guest (the host; refused for the rest of this table)"),
    ("l", "leave the table (the host closes it)"),
    ("q  or  Ctrl-C", "quit (leaving the table)"),
    ("?  or  h", "this help (any key closes it)"),
)


# -- what is shown -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Listing:
    """A table one could join.

    Attributes:
        where: its lobby's address, ``IPv4:port``.
        name: the host's name (``None``: not known yet — a ``--peer`` table not asked yet).
        fingerprint: the host's fingerprint, if known.
        taken: seats taken, if known.
        capacity: seats in all, if known.
        found: how it was found: ``"LAN"`` (a beacon) or ``"--peer"``.
        deal: how its game will be dealt, as its beacon or its ``table`` says (a ``--peer``
            table not asked yet: the default); the list names a deal that is not the default.
    """

    where: str
    name: str | None = None
    fingerprint: str | None = None
    taken: int | None = None
    capacity: int | None = None
    found: str = "LAN"
    deal: Deal = Deal.COMMIT


@dataclass(frozen=True, slots=True)
class SeatLine:
    """One seat at the table you are at."""

    name: str
    fingerprint: str
    ready: bool
    host: bool = False
    you: bool = False


@dataclass(frozen=True, slots=True)
class AtTable:
    """The table you are at.

    Attributes:
        where: its lobby's address.
        seats: the host first, then the guests in the order they came.
        rules: the rules the game will have (``None``: the host has not shown them yet).
        deal: how the game will be dealt (shown among the rules' variants).
        capacity: most players (0: not known yet).
        hosting: you are the host.
        blocker: why the game cannot start now, what it waits for (``None``: it can; a guest
            then waits for the host to start it).
    """

    where: str
    seats: tuple[SeatLine, ...] = ()
    rules: Rules | None = None
    capacity: int = 0
    hosting: bool = False
    blocker: str | None = None
    deal: Deal = Deal.COMMIT

    @property
    def ready(self) -> bool:
        """Whether you are ready."""
        return any(s.ready for s in self.seats if s.you)


@dataclass(frozen=True, slots=True)
class LobbyKeys:
    """The keyboard's state in the lobby.

    Attributes:
        cursor: the selected table (index in the list).
        picking: the bot picker is open.
        removing: ``x`` was pressed: the next digit names the seat to remove.
        strategy: the picker's strategy (index into the strategies).
        speed: the picker's speed, 1 to 10.
        help: the help screen is up.
        line: the status line (:class:`~p2p_nertz.ui.keys.Status`: set whole; whether it
            refuses is said by what made it, :meth:`~p2p_nertz.ui.keys.Status.refusing`).
    """

    cursor: int = 0
    picking: bool = False
    removing: bool = False
    strategy: int = 0
    speed: int = TABLE_BOT_SPEED  # (why: p2p_nertz/defaults.py)
    help: bool = False
    line: Status = field(default_factory=Status)

    @property
    def status(self) -> str:
        """The status line's words."""
        return self.line.words


@dataclass(frozen=True, slots=True)
class LobbyView:
    """Everything the lobby screen shows.

    Attributes:
        name: your name.
        fingerprint: your fingerprint.
        listings: the tables one could join.
        table: the table you are at, if any.
        keys: the keyboard's state (selection, picker, help, status).
        strategies: the bot strategies the picker offers.
        discovering: the broadcast address beacons are heard on (``None``: discovery off).
        messages: the newest news, oldest first.
    """

    name: str
    fingerprint: str
    listings: tuple[Listing, ...] = ()
    table: AtTable | None = None
    keys: LobbyKeys = LobbyKeys()
    strategies: tuple[str, ...] = ("greedy",)
    discovering: str | None = None
    messages: tuple[str, ...] = ()

    def news(self) -> tuple[str, ...]:
        """The announcements to show above the status line: those the status line does not
        already say. What a key did is said on both (the news keeps it once the status line
        moves on), and the screen showed it twice, the two one above the other, or apart
        with a seat's news between them ("at Ann's table …: r when ready").

        >>> LobbyView(name="Dee", fingerprint="f", messages=("joining…", "at Ann's table",
        ...     "Cy sat down"), keys=LobbyKeys(line=Status("at Ann's table"))).news()
        ('joining…', 'Cy sat down')
        """
        status = self.keys.status
        return tuple(m for m in self.messages if m != status)

    def context(self) -> LobbyContext:
        """What :func:`press_lobby` needs to know of this view."""
        table = self.table
        return LobbyContext(
            listings=len(self.listings),
            at_table=table is not None,
            hosting=table is not None and table.hosting,
            ready=table is not None and table.ready,
            blocker=None if table is None else table.blocker,
            strategies=self.strategies,
            seats=0 if table is None else len(table.seats),
        )


# -- what keys do --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CreateTable:
    """Open a table and host it."""


@dataclass(frozen=True, slots=True)
class JoinTable:
    """Sit down at the table at this index of the list."""

    index: int


@dataclass(frozen=True, slots=True)
class SetReady:
    """Say you are (not) ready."""

    ready: bool


@dataclass(frozen=True, slots=True)
class AddBot:
    """Start a bot peer on this machine that joins the table."""

    strategy: str
    speed: int


@dataclass(frozen=True, slots=True)
class StartGame:
    """Start the game (the host)."""


@dataclass(frozen=True, slots=True)
class RemoveSeat:
    """Remove the guest in this seat (numbered as shown, from 0: the host is 0) from the table."""

    seat: int


@dataclass(frozen=True, slots=True)
class LeaveTable:
    """Leave the table (the host closes it)."""


@dataclass(frozen=True, slots=True)
class Quit:
    """Leave the lobby and the program."""


LobbyAction = (
    CreateTable | JoinTable | SetReady | AddBot | StartGame | RemoveSeat | LeaveTable | Quit
)


@dataclass(frozen=True, slots=True)
class LobbyContext:
    """What the keys need to know: how many tables, whether you are at one, hosting, ready."""

    listings: int = 0
    at_table: bool = False
    hosting: bool = False
    ready: bool = False
    blocker: str | None = None
    strategies: tuple[str, ...] = ("greedy",)
    seats: int = 0


def press_lobby(
    keys: LobbyKeys, key: str, ctx: LobbyContext
) -> tuple[LobbyKeys, list[LobbyAction]]:
    """Handle one key in the lobby (see the module docstring); never raises."""
    if keys.help:
        return replace(keys, help=False, line=Status()), []
    if keys.picking:
        return _picker(keys, key, ctx)
    if keys.removing:
        return _removing(keys, key, ctx)
    k = key.lower() if len(key) == 1 else key
    if k in ("?", "h"):
        return replace(keys, help=True), []
    if k == "q":
        return replace(keys, line=Status("leaving the lobby…")), [Quit()]
    if k == ESC:
        return replace(keys, line=Status()), []
    if ctx.at_table:
        return _at_table(keys, k, ctx)
    return _browsing(keys, k, ctx)


def _browsing(keys: LobbyKeys, k: str, ctx: LobbyContext) -> tuple[LobbyKeys, list[LobbyAction]]:
    cursor = min(keys.cursor, max(ctx.listings - 1, 0))
    if k in (UP, DOWN):
        if not ctx.listings:
            return replace(keys, line=Status.refusing("no table to select yet: c creates one")), []
        step = -1 if k == UP else 1
        return replace(keys, cursor=(cursor + step) % ctx.listings, line=Status()), []
    if k.isdigit() and k != "0":
        n = int(k)
        if n > ctx.listings:
            return replace(keys, line=Status.refusing(f"no table {n} in the list")), []
        return replace(keys, cursor=n - 1, line=Status()), []
    if k == ENTER:
        if not ctx.listings:
            return replace(keys, line=Status.refusing("no table to join yet: c creates one")), []
        return replace(keys, cursor=cursor, line=Status("joining…")), [JoinTable(cursor)]
    if k == "c":
        return replace(keys, line=Status("opening a table…")), [CreateTable()]
    if k in ("r", "b", "s", "l"):
        return replace(
            keys,
            line=Status.refusing("not at a table: ENTER joins the selected one, c creates one"),
        ), []
    return replace(keys, line=_unknown(k)), []


def _at_table(keys: LobbyKeys, k: str, ctx: LobbyContext) -> tuple[LobbyKeys, list[LobbyAction]]:
    if k == "r":
        if ctx.hosting:
            return replace(
                keys, line=Status.refusing("the host is always ready: s starts the game")
            ), []
        ready = not ctx.ready
        return replace(keys, line=Status("ready" if ready else "not ready")), [SetReady(ready)]
    if k == "b":
        return replace(keys, picking=True, line=Status()), []
    if k == "s":
        if not ctx.hosting:
            return replace(
                keys, line=Status.refusing("only the host starts the game: r says you are ready")
            ), []
        if ctx.blocker is not None:
            return replace(keys, line=Status.refusing(f"cannot start: {ctx.blocker}")), []
        return replace(keys, line=Status("starting…")), [StartGame()]
    if k == "x":
        if not ctx.hosting:
            return replace(
                keys, line=Status.refusing("only the host removes a guest: l leaves the table")
            ), []
        if ctx.seats < 2:
            return replace(keys, line=Status.refusing("no guest to remove")), []
        return replace(
            keys, removing=True, line=Status(f"remove which guest? 1-{ctx.seats - 1}")
        ), []
    if k == "l":
        return replace(keys, line=Status("left the table")), [LeaveTable()]
    if k in ("c", ENTER, UP, DOWN) or k.isdigit():
        return replace(keys, line=Status.refusing("you are at a table: l leaves it first")), []
    return replace(keys, line=_unknown(k)), []


def _picker(keys: LobbyKeys, key: str, ctx: LobbyContext) -> tuple[LobbyKeys, list[LobbyAction]]:
    k = key.lower() if len(key) == 1 else key
    n = max(len(ctx.strategies), 1)
    if k in ("t", "\t", RIGHT, " "):
        return replace(keys, strategy=(keys.strategy + 1) % n), []
    if k == LEFT:
        return replace(keys, strategy=(keys.strategy - 1) % n), []
    if k in ("+", "="):
        return replace(keys, speed=min(keys.speed + 1, 10)), []
    if k in ("-", "_"):
        return replace(keys, speed=max(keys.speed - 1, 1)), []
    if k.isdigit():
        return replace(keys, speed=int(k) or 10), []
    if k in (ESC, "b"):
        return replace(keys, picking=False, line=Status("no bot added")), []
    if k == ENTER:
        if not ctx.strategies:
            return replace(keys, picking=False, line=Status.refusing("no bot strategy known")), []
        strategy = ctx.strategies[keys.strategy % n]
        return (
            replace(
                keys, picking=False, line=Status(f"adding a {strategy} bot at speed {keys.speed}…")
            ),
            [AddBot(strategy, keys.speed)],
        )
    if k == "q":
        return replace(keys, picking=False, line=Status("leaving the lobby…")), [Quit()]
    return replace(
        keys, line=Status("t strategy · + - or 1-9 0 speed · Enter adds · Esc cancels")
    ), []


def _removing(keys: LobbyKeys, key: str, ctx: LobbyContext) -> tuple[LobbyKeys, list[LobbyAction]]:
    done = replace(keys, removing=False)
    if key.isdigit() and 1 <= int(key) < ctx.seats:
        return replace(done, line=Status(f"removing the guest in seat {key}…")), [
            RemoveSeat(int(key))
        ]
    if key.isdigit():
        return replace(done, line=Status.refusing(no_guest_words(int(key), ctx.seats))), []
    return replace(done, line=Status("no guest removed")), []


def loopback_words(command: str, where: str) -> str | None:
    """What a host is told of a table at ``where`` (``IPv4:port``) hosted on the loopback by
    ``nertz COMMAND`` (``host``, ``play``), or ``None``: it is elsewhere. A newcomer read
    "others join with --peer 127.0.0.1:N" and would give that to a friend across the room.

    >>> loopback_words("host", "127.0.0.1:4000")
    '(127.0.0.1: this machine only; for the LAN: nertz host --address YOUR-LAN-IP)'
    >>> loopback_words("play", "192.168.1.20:4000") is None
    True
    """
    address = ipaddress.ip_address(where.rsplit(":", 1)[0])
    if not address.is_loopback:
        return None
    return f"({address}: this machine only; for the LAN: nertz {command} --address YOUR-LAN-IP)"


def no_guest_words(seat: int, seats: int) -> str:
    """Why the host cannot remove seat ``seat`` of a table of ``seats`` (the lobby's ``x``
    key, the plain lobby's ``remove``): seat 0 is the host (a newcomer read "no guest in
    seat 0" of their own seat), and which seats are guests.

    >>> no_guest_words(0, 3)
    'seat 0 is you, the host: the guests are in seats 1-2'
    >>> no_guest_words(5, 2)
    'no guest in seat 5: the guest is in seat 1'
    """
    if seats > 2:
        guests = f"the guests are in seats 1-{seats - 1}"
    else:
        guests = "the guest is in seat 1" if seats == 2 else "no guest has sat down"
    return f"{'seat 0 is you, the host' if seat == 0 else f'no guest in seat {seat}'}: {guests}"


def _unknown(k: str) -> Status:
    return Status.refusing(no_key_words(k)) if len(k) == 1 and k.isprintable() else Status()


# -- the screen ----------------------------------------------------------------------------------
def rules_text(rules: Rules, deal: Deal = Deal.COMMIT) -> list[str]:
    """The rules in words, as two short lines; a deal that is not the default (a game option,
    not a rule: docs/lobby.md §3) is said among the variants.

    >>> rules_text(Rules())
    ['draw 3 · 4 work piles · to 100 points · Nerts bonus 0', 'Nerts card −2 · false call −5 · variants: none']
    >>> rules_text(Rules(rounds=2, target=None, rotate_alone=True, jokers=1))[0]
    'draw 3 · 4 work piles · exactly 2 rounds · Nerts bonus 0'
    >>> rules_text(Rules(pairs=True), Deal.SHUFFLE)[1]
    'Nerts card −2 · false call −5 · variants: pairs, shuffle deal'
    """  # noqa: E501
    goal = f"to {rules.target} points" if rules.target is not None else ""
    if rules.rounds is not None:
        goal = f"exactly {rules.rounds} round{'s' if rules.rounds != 1 else ''}"
        if rules.target is not None:
            goal += f" or to {rules.target}"
    variants = []
    if rules.rotate_alone:
        variants.append("rotate alone")
    if rules.pairs:
        variants.append("pairs")
    if rules.jokers:
        variants.append(f"{rules.jokers} joker{'s' if rules.jokers > 1 else ''}")
    if rules.turn_based:
        variants.append("turn-based")
    if deal is not Deal.COMMIT:
        variants.append(f"{deal} deal")
    return [
        f"draw {rules.draw} · {rules.work_piles} work piles · {goal} · "
        f"Nerts bonus {rules.nerts_bonus}",
        f"Nerts card −{rules.nerts_card_penalty} · false call −{rules.false_call_penalty} · "
        f"variants: {', '.join(variants) or 'none'}",
    ]


def render_lobby(view: LobbyView, width: int = 80, height: int = 24) -> Screen:
    """Lay the lobby out on a ``width`` × ``height`` screen (see the module docstring)."""
    return _LobbyPainter(view, width).screen(height)


_HINT_BROWSE = "1-9 ↑↓ select · Enter join · c create a table · ? help · q quit"
_HINT_GUEST = "r ready · b add a bot · l leave the table · ? help · q quit"
_HINT_HOST = "s start · b add a bot · x remove a guest · l close the table · ? help · q quit"
_HINT_PICK = "t ← → strategy · + - 1-9 0 speed · Enter add · Esc cancel"


class _LobbyPainter:
    def __init__(self, view: LobbyView, width: int) -> None:
        self.view = view
        self.width = width

    def row(self) -> Row:
        return Row(self.width)

    def rule(self, title: str) -> tuple[Span, ...]:
        row = self.row()
        row.add("─ ", Style.DIM).add(title, Style.BOLD).add(" ", Style.DIM)
        return row.pad_to(self.width, "─", Style.DIM).spans()

    def screen(self, height: int) -> Screen:
        top = [self.header()]
        bottom = [self.status(), self.hint()]
        room = height - len(top) - len(bottom)
        body = self.help() if self.view.keys.help else self.body(room)
        body = body[:room]
        body += [()] * (room - len(body))
        return Screen(self.width, height, tuple(top + body + bottom))

    def header(self) -> tuple[Span, ...]:
        view = self.view
        row = self.row().add("p2p-nertz lobby", Style.BOLD)
        if view.discovering is not None:
            row.add(f"  listening on {view.discovering}", Style.DIM)
        right = f"you: {view.name} ({view.fingerprint})   ? help"
        row.pad_to(max(len(row) + 1, self.width - len(right)))
        return row.add(right, Style.DIM).spans()

    def status(self) -> tuple[Span, ...]:
        text = self.view.keys.status
        row = self.row()
        if text:
            row.add(text, Style.BAD if self.view.keys.line.refused else Style.WARN)
        return row.spans()

    def hint(self) -> tuple[Span, ...]:
        view = self.view
        if view.keys.picking:
            text = _HINT_PICK
        elif view.table is None:
            text = _HINT_BROWSE
        elif view.table.hosting:
            text = _HINT_HOST
        else:
            text = _HINT_GUEST
        return self.row().add(text, Style.DIM).spans()

    def body(self, room: int) -> list[tuple[Span, ...]]:
        view = self.view
        table = view.table
        mine: list[tuple[Span, ...]] = []
        if table is not None:
            mine = self.table(table)
        if view.keys.picking:
            mine += [self.picker()]
        fixed = len(mine) + 1  # + the tables rule
        listing_room = max(1, min(len(view.listings) or 1, room - fixed - 2))
        rows = [self.rule("tables"), *self.listings(listing_room), *mine]
        rows += self.messages(room - len(rows))
        return rows

    def listings(self, room: int) -> list[tuple[Span, ...]]:
        view = self.view
        if not view.listings:
            where = (
                f"no table heard on {view.discovering} yet"
                if view.discovering is not None
                else "no table known: --peer HOST:PORT, --discover BROADCAST"
            )
            return [self.row().add(f"  {where} · c creates one", Style.DIM).spans()]
        at = None if view.table is None else view.table.where  # shown in the "good" style
        cursor = min(view.keys.cursor, len(view.listings) - 1)
        first = max(0, min(cursor - room + 1, len(view.listings) - room))
        rows = []
        for i in range(first, min(first + room, len(view.listings))):
            item = view.listings[i]
            selected = i == cursor and view.table is None
            row = self.row()
            row.add(" > " if selected else "   ", Style.SELECTED if selected else Style.PLAIN)
            row.add(f"{i + 1}", Style.KEY).add("  ")
            if item.name is None:
                row.add("(not asked yet: Enter joins)", Style.DIM)
            else:
                # A deal that is not the default is named, as `nertz games` names it: the
                # host's name gives way to it where both do not fit.
                deal = "" if item.deal is Deal.COMMIT else f" · {item.deal}"
                row.add(
                    f"{item.name}'s table"[: 24 - len(deal)],
                    Style.BOLD if selected else Style.PLAIN,
                )
                if deal:
                    row.add(deal, Style.WARN)
            row.pad_to(30)
            row.add(item.fingerprint or "", Style.DIM)
            row.pad_to(51)
            if item.taken is not None and item.capacity is not None:
                full = item.taken >= item.capacity
                row.add(f"{item.taken}/{item.capacity}", Style.BAD if full else Style.GOOD)
            row.pad_to(57)
            row.add(item.where, Style.PLAIN)
            row.pad_to(max(len(row) + 1, self.width - len(item.found) - 1))
            row.add(item.found, Style.GOOD if item.where == at else Style.DIM)
            rows.append(row.spans())
        return rows

    def table(self, table: AtTable) -> list[tuple[Span, ...]]:
        host = next((s.name for s in table.seats if s.host), "?")
        role = "you host" if table.hosting else f"host: {host}"
        title = f"your table at {table.where} · {role}"
        if table.capacity:
            title += f" · {len(table.seats)}/{table.capacity} seated"
        rows = [self.rule(title)]
        for n, seat in enumerate(table.seats):  # from 0, as the game table counts
            row = self.row()
            row.add(f"  {n}  ", Style.DIM)
            row.add(seat.name[:20], Style.BOLD if seat.you else Style.PLAIN)
            row.pad_to(27)
            row.add(seat.fingerprint, Style.DIM)
            row.pad_to(48)
            row.add("host" if seat.host else "", Style.KEY)
            row.pad_to(54)
            row.add(
                "ready" if seat.ready else "not ready", Style.GOOD if seat.ready else Style.WARN
            )
            if seat.you:
                row.pad_to(66).add("← you", Style.BOLD)
            rows.append(row.spans())
        if not table.seats:
            rows.append(self.row().add("  waiting for the host to answer…", Style.DIM).spans())
        rows.append(self.rule("rules"))
        if table.rules is None:
            rows.append(self.row().add("  not shown yet", Style.DIM).spans())
        else:
            lines = rules_text(table.rules, table.deal)
            rows += [self.row().add("  " + line).spans() for line in lines]
        if table.blocker is not None:
            rows.append(self.row().add(f"  {table.blocker}", Style.WARN).spans())
        elif table.hosting:
            rows.append(self.row().add("  everybody is ready: s starts", Style.GOOD).spans())
        elif table.seats:
            rows.append(
                self.row()
                .add(f"  everybody is ready: waiting for {host} to start", Style.GOOD)
                .spans()
            )
        return rows

    def picker(self) -> tuple[Span, ...]:
        view = self.view
        keys = view.keys
        row = self.row().add("  add a bot: ", Style.BOLD)
        for i, name in enumerate(view.strategies):
            chosen = i == keys.strategy % max(len(view.strategies), 1)
            row.add(f"[{name}]" if chosen else f" {name} ", Style.SELECTED if chosen else Style.DIM)
            row.add(" ")
        row.add(" speed ", Style.DIM).add(f"{keys.speed}", Style.SELECTED).add("/10", Style.DIM)
        return row.spans()

    def messages(self, room: int) -> list[tuple[Span, ...]]:
        if room <= 0:
            return []
        shown = self.view.news()[-room:]
        rows = [self.row().add("» ", Style.DIM).add(m, Style.WARN).spans() for m in shown]
        blanks: list[tuple[Span, ...]] = [()] * (room - len(rows))
        return blanks + rows

    def help(self) -> list[tuple[Span, ...]]:
        rows = [self.rule("lobby keys")]
        for key, what in LOBBY_HELP:
            rows.append(self.row().add(f"  {key}", Style.KEY).pad_to(18).add(what).spans())
        rows.append(())
        rows.append(
            self.row()
            .add(
                "  compare fingerprints by voice before you play: a name can be copied, ", Style.DIM
            )
            .spans()
        )
        rows.append(self.row().add("  a key cannot.", Style.DIM).spans())
        return rows
