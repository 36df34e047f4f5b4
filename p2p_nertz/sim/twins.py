"""A player's key in a second process on another machine, in the simulator: a *twin*.

Theory of operation
-------------------
A :class:`Twin` is a second process of one seat's key, started mid-game with an empty log (the
key run on a second machine, or ``nertz node`` started again elsewhere; docs/protocol.md §9.6,
*two processes of one player*). The seat's first process plays on. The twin reaches every other
member (its ``--peer`` addresses were given), but the others send to the seat's endpoint, the
first process's: the twin hears only the members in ``hears``, and everyone once ``deaf_for``
has passed (``None``: never; a partition of it that heals).

:class:`Twins` runs them beside the :class:`~p2p_nertz.sim.network.Simulation`: a twin is a
real :class:`~p2p_nertz.protocol.peer.Peer` of the seat's identity, ticked at its deadlines,
whose sends the simulation carries (fixed delay, no loss: no draw of the run's random stream,
so the rest of a seed's game is as it was until the twin's messages arrive), whose records
and notes make its own log (:attr:`Twins.logs`, :attr:`Twins.notes`: the notes a node writes,
the ``recovering`` one as it stops among them), and that stops as a node would: on
:class:`~p2p_nertz.protocol.peer.Elsewhere`, or when its table is gone
(:meth:`Peer.table_gone`). Left alone with a member it takes for gone, it abandons as the
runtime's bots do (:meth:`BotDriver.abandon`), if the run's bots abandon.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.bots import BotDriver, Pacing, make_strategy
from p2p_nertz.protocol.debts import DEBT_NOTE
from p2p_nertz.protocol.peer import Effect, Elsewhere, Note, Peer, Record, Send
from p2p_nertz.rng import Rng, derive_seed

if TYPE_CHECKING:
    from p2p_nertz.sim.network import Simulation

__all__ = ["Twin", "TwinEnd", "Twins"]


@dataclass(frozen=True, slots=True)
class Twin:
    """A second process of ``seat``'s key started at ``at`` with an empty log (the module
    docstring): it hears the members in ``hears``, and everyone from ``deaf_for`` after it
    started (``None``: never)."""

    seat: int
    at: float
    deaf_for: float | None = None
    hears: frozenset[int] = frozenset()
    #: resumed from a copy of the seat's log as it is at ``at`` (``nertz resume`` of a copy on
    #: a second machine; docs/protocol.md §9.6, *two copies resumed at once*), not started
    #: with an empty log
    resume: bool = False
    #: its bot plays (at the run's pace, from a stream of its own), as a resumed node's does
    plays: bool = False

    def hears_from(self, sender: int, now: float) -> bool:
        """Whether a message ``sender`` sends to the seat at ``now`` reaches the twin too."""
        healed = self.deaf_for is not None and now >= self.at + self.deaf_for
        return healed or sender in self.hears


@dataclass(frozen=True, slots=True)
class TwinEnd:
    """How twin ``index`` stopped, at ``at``: ``"elsewhere"`` (its key signed past its head
    elsewhere: ``detail`` the seq) or ``"gone"`` (its table gone: ``detail`` the reason)."""

    index: int
    at: float
    how: str
    detail: str


_START, _TICK, _MESSAGE, _BOT = b"s", b"t", b"m", b"b"


class Twins:
    """The twins of a run (the module docstring); ``sim`` carries their messages."""

    def __init__(self, sim: Simulation, twins: tuple[Twin, ...]) -> None:
        self.sim = sim
        self.twins = twins
        self.peers: list[Peer | None] = [None] * len(twins)
        self.logs: list[list[bytes]] = [[] for _ in twins]  # each twin's own log, as written
        #: each twin's notes, as :attr:`SimResult.notes` holds a seat's (``sim.logfiles``)
        self.notes: list[list[tuple[int, Note]]] = [[] for _ in twins]
        self.ends: list[TwinEnd] = []
        self._tick_at: list[float | None] = [None] * len(twins)
        self._bots: list[BotDriver | None] = [None] * len(twins)
        self._rngs: list[Rng | None] = [None] * len(twins)

    def start(self) -> None:
        """Schedule each twin's start."""
        for index, twin in enumerate(self.twins):
            self._push(twin.at, _START, index)

    def _push(self, at: float, what: bytes, index: int, data: bytes = b"") -> None:
        sim = self.sim
        sim._push(at, sim.TWIN, self.twins[index].seat, what + index.to_bytes(2, "big") + data)

    def copy(self, sender: int, to: int, data: bytes, at: float, now: float) -> None:
        """A message ``sender`` sent at ``now`` to seat ``to``, arriving there at ``at``: to a
        twin of that seat too, if it hears ``sender`` now."""
        for index, twin in enumerate(self.twins):
            if twin.seat == to and self.peers[index] is not None and twin.hears_from(sender, now):
                self._push(at, _MESSAGE, index, data)

    def happen(self, data: bytes, now: float) -> None:
        """Carry out one happening of a twin (its start, a tick, a message arriving)."""
        what, index, payload = data[:1], int.from_bytes(data[1:3], "big"), data[3:]
        if what == _START:
            self._begin(index, now)
            return
        peer = self.peers[index]
        if peer is None:
            return
        if what == _MESSAGE:
            self._apply(index, peer.feed(payload, now), now)
        elif what == _BOT:
            self._play(index, peer, now)
        elif self._tick_at[index] == now:
            self._tick_at[index] = None
            self._apply(index, peer.tick(now), now)
            if self.peers[index] is not None and self.sim.config.abandon:
                abandoned = BotDriver.abandon(peer, now)
                if abandoned is not None:
                    self._apply(index, abandoned, now)
            gone = peer.table_gone(now) if self.peers[index] is not None else None
            if gone is not None:
                self.notes[index].extend((len(self.logs[index]), n) for n in gone.notes)
                self._end(index, now, "gone", gone.reason.value)

    def _begin(self, index: int, now: float) -> None:
        """Start twin ``index``: a new process, or one resumed from a copy of its seat's log."""
        twin = self.twins[index]
        sim = self.sim
        seat = twin.seat
        if twin.resume:
            records = list(sim.logs[seat])
            self.logs[index] = list(records)
            self.notes[index] = list(sim.notes[seat])  # (a copy of the file holds its notes)
            new, effects = Peer.restore(
                sim.identities[seat],
                sim.spec,
                records,
                now,
                sim.config.peer,
                reserved=sim.reserved[seat],
                envelopes=sim.envelopes,
                debts=[note.data for _, note in self.notes[index] if note.name == DEBT_NOTE],
            )
        else:
            new = Peer(
                sim.identities[seat], sim.spec, now, sim.config.peer, envelopes=sim.envelopes
            )
            effects = new.start(now)
        self.peers[index] = new
        if twin.plays:
            rng = Rng(derive_seed(sim.config.seed, f"twin {index}"))
            self._rngs[index] = rng
            self._bots[index] = BotDriver(
                make_strategy(sim.config.strategy, rng.fork(seat)),
                Pacing(sim.config.speed),
                wait_for_deals=False,
            )
            self._next_look(index, now)
        self._apply(index, effects, now)

    def _next_look(self, index: int, now: float) -> None:
        bot, rng = self._bots[index], self._rngs[index]
        assert bot is not None and rng is not None
        self._push(now + bot.delay(rng), _BOT, index)

    def _play(self, index: int, peer: Peer, now: float) -> None:
        """Twin ``index``'s bot looks at its table, and plays what it chooses (as the run's)."""
        bot = self._bots[index]
        if bot is None:
            return
        move = bot.choose(peer)
        effects = bot.play(peer, move, now) if move is not None else None
        if effects is not None:
            self._apply(index, effects, now)
        if self.peers[index] is not None:
            self._next_look(index, now)

    def _end(self, index: int, now: float, how: str, detail: str) -> None:
        self.peers[index] = None
        self._tick_at[index] = None
        self.ends.append(TwinEnd(index, now, how, detail))

    def _apply(self, index: int, effects: list[Effect], now: float) -> None:
        """Carry out a twin's effects: its records to its log, its sends to every member but
        its own seat (whose endpoint it does not know as a peer's), its stop."""
        sim = self.sim
        seat = self.twins[index].seat
        delay = sim.config.faults.delay
        for effect in effects:
            if isinstance(effect, Record):
                self.logs[index].append(effect.data)
            elif isinstance(effect, Note):
                self.notes[index].append((len(self.logs[index]), effect))
            elif isinstance(effect, Send):
                targets = (
                    range(len(sim.peers)) if effect.to is None else [sim.spec.seat_of(effect.to)]
                )
                for other in targets:
                    if other != seat:
                        sim._push(now + delay, sim.MESSAGE, other, effect.data)
            elif isinstance(effect, Elsewhere):
                self._end(index, now, "elsewhere", str(effect.seq))
                return
        peer = self.peers[index]
        deadline = peer.next_deadline() if peer is not None else None
        if deadline is not None:
            deadline = max(deadline, now)
            current = self._tick_at[index]
            if current is None or deadline < current or current < now:
                self._tick_at[index] = deadline
                self._push(deadline, _TICK, index)
