"""A deterministic, seeded network of peer cores played by bots, with faults.

Theory of operation
-------------------
Time is simulated (seconds, float). A heap of timed happenings drives everything: a message
arriving at a peer, a peer's timer, a bot's next move, a crash, a restart. Each peer is a real
:class:`~p2p_nertz.protocol.peer.Peer` with a real identity and real signatures; the bytes it
asks to send go through the network model:

* per-link delay with jitter, and extra delay for a fraction of messages (reordering);
* loss and duplication, each with its probability;
* partitions: during a window, messages between different groups are lost;
* crashes: a peer dies at an instant (possibly between writing an event to its log and sending
  it) and restarts later from its log, as :meth:`Peer.restore` would after ``kill -9``; or it
  never comes back, and the others must drop it;
* freezes: a peer stops for a while (``SIGSTOP``, a laptop asleep) and runs nothing; what is
  sent to it waits, and arrives all at once when it wakes, its clock having jumped;
* a scripted schedule (:class:`Schedule`, :mod:`p2p_nertz.sim.schedules`): a message it
  names waits at its receiver, re-tried every :data:`HOLD_STEP`, as a network that delays
  that one message would (a test builds a race that random faults meet rarely or never).

Every random choice comes from one :class:`~p2p_nertz.rng.Rng` seeded by the run's seed, in a
fixed order, so a seed replays exactly: :func:`run` twice gives the same logs, byte for byte.
After the run, :mod:`p2p_nertz.sim.invariants` checks DESIGN.md §8.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.bots import BotDriver, Pacing, make_strategy
from p2p_nertz.protocol.bodies import Play, encode_body, held_ids
from p2p_nertz.protocol.debts import DEBT_NOTE
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    decode_message,
    encode_message,
    looks_like_beat,
)
from p2p_nertz.protocol.feeds import ChainCode
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import (
    Effect,
    Elsewhere,
    Note,
    Peer,
    PeerConfig,
    Record,
    Recovered,
    Rejected,
    Reserve,
    Send,
    TableGone,
)
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules
from p2p_nertz.sim.cheats import DeckCheat, VoteFlapper, install
from p2p_nertz.sim.twins import Twin, Twins

if TYPE_CHECKING:
    from p2p_nertz.audit import AuditReport

#: How long a message a :class:`Schedule` holds waits before it is offered again (seconds).
HOLD_STEP = 0.005


class Schedule(Protocol):
    """A scripted network schedule: which messages wait a little longer at their receiver."""

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        """Whether ``data``, arriving at ``seat`` at ``now``, waits :data:`HOLD_STEP` more. A
        schedule bounds every wait it makes (an asynchronous network delays, it does not lose
        for good: a message held for ever would stall any protocol)."""
        ...


__all__ = [
    "Crash",
    "Equivocation",
    "Faults",
    "Freeze",
    "Partition",
    "QUICK_TIMERS",
    "SimConfig",
    "HOLD_STEP",
    "Schedule",
    "SimResult",
    "Simulation",
    "pushed",
    "run",
]


@dataclass(frozen=True, slots=True)
class Partition:
    """Between ``start`` and ``end``, only peers in the same group hear each other."""

    start: float
    end: float
    groups: tuple[frozenset[int], ...]

    def separates(self, a: int, b: int, now: float) -> bool:
        """Whether a message from ``a`` to ``b`` sent at ``now`` is cut."""
        if not self.start <= now < self.end:
            return False
        return not any(a in g and b in g for g in self.groups)


@dataclass(frozen=True, slots=True)
class Crash:
    """Seat ``seat`` dies at ``at``; it restarts from its log ``restart_after`` later, or never
    (``None``). ``cut_effects``: die in the middle of a step, after this many of its effects.

    ``lose_own``: the disk loses the end of the log, from the ``lose_own``-th last of the
    seat's own events on (everything logged after it goes too): events it signed and sent,
    which only the others now hold. The peer restarts in recovery (docs/protocol.md §9.6),
    as ``nertz resume`` does after cutting a torn or damaged tail.
    """

    seat: int
    at: float
    restart_after: float | None = 1.0
    cut_effects: int | None = None
    lose_own: int = 0
    #: the log lost whole: the seat starts again as a new process with an empty log (``nertz
    #: node`` run again), knowing nothing of what it signed (docs/protocol.md §9.6, *two
    #: processes of one player*)
    lose_log: bool = False
    #: the log replaced by a copy of it taken at this time (an older backup restored), then
    #: resumed as it is: it looks whole, so no recovery (``nertz resume`` without
    #: ``--recover``); what was logged after the copy, own events among them, is lost and
    #: nothing in the log says so (docs/protocol.md §9.6)
    backup: float | None = None


@dataclass(frozen=True, slots=True)
class Freeze:
    """Seat ``seat`` stops at ``at`` for ``duration`` seconds (``SIGSTOP``, a laptop asleep):
    it runs nothing meanwhile, and the messages sent to it wait and arrive, in order, when it
    wakes (its sockets kept them)."""

    seat: int
    at: float
    duration: float


@dataclass(frozen=True, slots=True)
class Equivocation:
    """A cheater: at ``at``, seat ``seat`` signs a second event under its next seq (a Nerts
    call) and sends it to the peers in ``to`` only, while its real event goes to everyone."""

    seat: int
    at: float
    to: frozenset[int]


@dataclass(frozen=True, slots=True)
class Faults:
    """The network and process faults of a run."""

    delay: float = 0.005
    jitter: float = 0.002
    reorder: float = 0.0
    loss: float = 0.0
    duplicate: float = 0.0
    partitions: tuple[Partition, ...] = ()
    crashes: tuple[Crash, ...] = ()
    equivocations: tuple[Equivocation, ...] = ()
    freezes: tuple[Freeze, ...] = ()
    #: members that lie in a shuffle game's deal, or flap their votes (:mod:`p2p_nertz.sim.cheats`)
    deck_cheats: tuple[DeckCheat | VoteFlapper, ...] = ()
    #: the log's sync: a message a peer sends after a record of the same input leaves this
    #: much later (one sent before it, as a shuffle game's ``deck_reveal``, does not wait)
    sync: float = 0.0
    #: links ``(sender, receiver)`` on which every ``deck_reveal`` the sender signs is lost
    #: (a share beat lost for good on one link; a relay's, signed by another, goes through)
    lost_reveals: frozenset[tuple[int, int]] = frozenset()
    #: second processes of a seat's key on another machine (:mod:`p2p_nertz.sim.twins`)
    twins: tuple[Twin, ...] = ()

    @property
    def cheaters(self) -> frozenset[int]:
        """Seats that break the protocol on purpose (not held to the honest invariants)."""
        return frozenset(e.seat for e in self.equivocations) | {c.seat for c in self.deck_cheats}

    @classmethod
    def random(
        cls,
        rng: Rng,
        players: int,
        *,
        horizon: float = 60.0,
        cheats: bool = True,
        long: float | None = None,
    ) -> Faults:
        """A random mix of faults, for soaks: what happens is decided by ``rng``.

        ``cheats``: with three players or more, sometimes a member equivocates (signs a second
        event under its next seq for some peers only, and goes on with its real chain).

        ``long``: the peers' ``drop_after``, to add faults of every length around it: often a
        partition, a freeze (a peer asleep) or a crash whose length is drawn from a fifth to
        four times ``drop_after``, and crashes never restarted. Those are the faults that make
        members drop, abandon and rejoin; the short mix (``None``, partitions of 0.2–3.2 s and
        restarts within 2 s) never reaches the liveness timers. The short draws come first,
        so a seed's short faults are the same either way.
        """
        partitions, crashes, cheaters = _short_faults(rng, players, horizon, cheats)
        delay = 0.001 + rng.random() * 0.02
        jitter = rng.random() * 0.01
        reorder = rng.random() * 0.2
        loss = rng.random() * 0.1
        duplicate = rng.random() * 0.1
        freezes: list[Freeze] = []
        if long is not None and players >= 2:
            _add_long_faults(
                rng,
                players,
                horizon=horizon,
                long=long,
                partitions=partitions,
                crashes=crashes,
                freezes=freezes,
            )
        return cls(
            delay=delay,
            jitter=jitter,
            reorder=reorder,
            loss=loss,
            duplicate=duplicate,
            partitions=tuple(partitions),
            crashes=tuple(crashes),
            equivocations=tuple(cheaters),
            freezes=tuple(freezes),
        )

    @property
    def count(self) -> int:
        """How many partition, crash, freeze and cheating faults are scheduled."""
        return (
            len(self.partitions)
            + len(self.crashes)
            + len(self.equivocations)
            + len(self.freezes)
            + len(self.deck_cheats)
        )


def _split(rng: Rng, players: int) -> tuple[frozenset[int], ...]:
    """Two random non-empty groups of seats."""
    seats = list(range(players))
    rng.shuffle(seats)
    split = 1 + rng.below(players - 1) if players > 1 else 1
    return (frozenset(seats[:split]), frozenset(seats[split:]))


def _short_faults(
    rng: Rng, players: int, horizon: float, cheats: bool
) -> tuple[list[Partition], list[Crash], list[Equivocation]]:
    """The short mix of :meth:`Faults.random`, drawn first: a partition of 0.2–3.2 s, a crash
    restarted within 2 s, and (``cheats``, three players or more) an equivocation."""
    partitions = []
    crashes = []
    if players >= 2 and rng.random() < 0.5:
        start = rng.random() * horizon
        groups = _split(rng, players)
        partitions.append(Partition(start, start + 0.2 + rng.random() * 3.0, groups))
    if rng.random() < 0.5:
        crashes.append(
            Crash(
                rng.below(players),
                rng.random() * horizon,
                0.1 + rng.random() * 2.0,
                rng.below(4) if rng.random() < 0.5 else None,
            )
        )
    cheaters: list[Equivocation] = []
    if cheats and players >= 3 and rng.random() < 0.2:
        seat = rng.below(players)
        others = [s for s in range(players) if s != seat]
        rng.shuffle(others)
        cheaters.append(
            Equivocation(seat, rng.random() * horizon, frozenset(others[: 1 + rng.below(2)]))
        )
    return partitions, crashes, cheaters


def _add_long_faults(
    rng: Rng,
    players: int,
    *,
    horizon: float,
    long: float,
    partitions: list[Partition],
    crashes: list[Crash],
    freezes: list[Freeze],
) -> None:
    """Add the long faults of :meth:`Faults.random` (``long``: the peers' ``drop_after``) to
    the short ones drawn before them: at least one fault of every game reaches past the
    liveness timers or near them."""
    short = len(crashes)
    kind = rng.below(3)
    for k in range(3):
        if k != kind and rng.random() >= 0.3:
            continue
        at = rng.random() * horizon
        length = long * (0.2 + rng.random() * 3.8)
        if k == 0:
            groups = _split(rng, players)
            partitions.append(Partition(at, at + length, groups))
        elif k == 1:
            freezes.append(Freeze(rng.below(players), at, length))
        else:
            never = rng.random() < 0.3
            crashes.append(Crash(rng.below(players), at, None if never else length))
    # Sometimes a restart finds the end of its log lost (a disk that did not keep what it
    # acknowledged): the peer takes its own events back from the others (§9.6). Not with a
    # member gone for good: with nobody to vote it out but the recovering peer, which signs
    # nothing until it is back, the table waits (protocol §13).
    if rng.random() < 0.2 and all(c.restart_after is not None for c in crashes):
        index = short + rng.below(len(crashes) - short) if len(crashes) > short else -1
        if index >= 0:
            crash = crashes[index]
            crashes[index] = dataclasses.replace(crash, cut_effects=None, lose_own=1 + rng.below(3))


@dataclass(frozen=True, slots=True)
class SimConfig:
    """One run: the players, the rules, the seed, the faults and the limits."""

    players: int = 3
    rules: Rules = field(default_factory=lambda: Rules(target=None, rounds=1))
    seed: int = 0
    faults: Faults = field(default_factory=Faults)
    strategy: str = "greedy"
    speed: int = 10
    peer: PeerConfig = field(default_factory=PeerConfig)
    max_time: float = 600.0
    record_effects: bool = False  #: keep every effect with its time and seat (benchmarks)
    #: a bot left alone with one silent member abandons the game (DESIGN.md §6)
    abandon: bool = True
    #: how the decks are dealt (a shuffle game: docs/shuffle.md §10)
    deal: Deal = Deal.COMMIT

    @classmethod
    def soak(
        cls,
        seed: int,
        *,
        players: tuple[int, int] = (2, 5),
        rounds: int = 0,
        cheats: bool = True,
        long: bool = True,
        peer: PeerConfig | None = None,
        rules: Callable[[int, int], Rules] | None = None,
    ) -> SimConfig:
        """The seeded game ``scripts/soak.py`` plays for ``seed`` (one home, so that a test can
        replay a soak seed): a table size in ``players`` and 1 to 3 rounds (``rounds`` fixes
        them) drawn from the seed, ``Faults.random`` with faults of every length around the
        timers (``long``), and the peers on :data:`QUICK_TIMERS` unless ``peer`` says
        otherwise. ``rules(players, rounds)`` chooses other rules than a fixed number of
        rounds."""
        timers = peer if peer is not None else QUICK_TIMERS
        rng = Rng(seed)
        low, high = players
        seats = low + rng.below(high - low + 1)
        rounds = rounds or 1 + Rng(seed + 2_000_003).below(3)
        faults = Faults.random(
            rng,
            seats,
            horizon=15.0 * rounds,
            cheats=cheats,
            long=timers.drop_after if long else None,
        )
        return cls(
            players=seats,
            seed=seed,
            faults=faults,
            rules=rules(seats, rounds) if rules else Rules(target=None, rounds=rounds),
            peer=timers,
            max_time=400.0 * rounds + 8 * timers.drop_after,
        )


#: Short liveness timers, so that faults several times ``drop_after`` take seconds of
#: simulated time to play (the soak's default).
QUICK_TIMERS = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)


@dataclass(slots=True)
class SimResult:
    """What a run did, and what the invariant checks found."""

    config: SimConfig
    logs: list[list[bytes]]
    peers: list[Peer | None]
    identities: list[Identity]
    spec: GameSpec
    time: float = 0.0
    sent: int = 0
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    crashes: int = 0
    rejected: int = 0
    #: (seat, author seat, seq, id) of each event a peer refused as a leap (``clock_jump``):
    #: the fuzzer of liars holds the audit to the same verdict where the refusal stands, the
    #: event not taken later (session 43; ``liar_games.standing_leaps``, session 44)
    jumps: set[tuple[int, int, int | None, bytes | None]] = field(default_factory=set)
    freezes: int = 0
    finished: bool = False
    violations: list[str] = field(default_factory=list)
    effects: list[tuple[float, int, Effect]] = field(default_factory=list)
    #: Per seat, the notes its log holds besides the events (a proof of cheating): (how many
    #: of its ``logs`` entries come before the note, the note). The logs stay a list of wire
    #: messages (what :meth:`Peer.restore` reads back); ``sim.logfiles`` puts both together.
    notes: list[list[tuple[int, Note]]] = field(default_factory=list)
    #: per restart that lost the end of a log (``Crash.lose_own``): the seat and the own
    #: events it lost (wire bytes, in seq order)
    lost_own: list[tuple[int, tuple[bytes, ...]]] = field(default_factory=list)
    #: The processes that stopped on learning that their key signed past their head elsewhere
    #: (:class:`~p2p_nertz.protocol.peer.Elsewhere`): (time, seat, that seq).
    elsewhere: list[tuple[float, int, int]] = field(default_factory=list)
    #: When a peer's runtime would stop waiting, the table gone (:meth:`Peer.table_gone`,
    #: docs/protocol.md §9.9): (time, seat, answer), the first time each process of a seat
    #: meets it. The simulator notes it and lets the peer run on (a partition may heal).
    gone: list[tuple[float, int, TableGone]] = field(default_factory=list)
    #: The audit of every log that the invariant checks ran (:func:`run`), for tests and tools.
    audit: AuditReport | None = field(default=None, compare=False, repr=False)
    #: The codec memo the run's peers shared: whoever reads the logs afterwards in the same
    #: process (the invariant checks) finds every message parsed and verified already.
    envelopes: EnvelopeCache = field(default_factory=EnvelopeCache, compare=False, repr=False)

    def log_digest(self) -> str:
        """SHA-256 over every peer's log, notes included, in seat order (determinism
        checks)."""
        h = hashlib.sha256()
        for seat, log in enumerate(self.logs):
            for record in log:
                h.update(len(record).to_bytes(4, "big") + record)
            for at, note in self.notes[seat] if seat < len(self.notes) else ():
                name = note.name.encode()
                h.update(b"n" + at.to_bytes(4, "big") + bytes([len(name)]) + name + note.data)
            h.update(b"|")
        return h.hexdigest()


class Simulation:
    """A run in progress (see the module docstring). Use :func:`run` for the common case."""

    def __init__(self, config: SimConfig, schedule: Schedule | None = None) -> None:
        self.config = config
        self.schedule = schedule
        self.rng = Rng(derive_seed(b"sim", config.seed))
        self.share_rng = Rng(derive_seed(b"sim share beats", config.seed))
        n = config.players
        self.identities = [
            Identity.generate(derive_seed(b"sim-identity", config.seed, seat)) for seat in range(n)
        ]
        spec = GameSpec.create(
            [(i.peer_id, f"bot{seat + 1}") for seat, i in enumerate(self.identities)],
            config.rules,
            derive_seed(b"sim-game", config.seed)[:16],
            deal=config.deal,
        )
        self.spec = spec
        self.identities = spec.in_seat_order(self.identities)
        # One codec memo for every peer of the run: what one peer parsed and verified, the
        # others need not (each would get the same answer; a real process has its own).
        self.envelopes = EnvelopeCache()
        self.forgers: set[int] = set()  # the seats that signed a fork of their feed (_equivocate)
        self.peers: list[Peer | None] = [
            Peer(i, spec, 0.0, config.peer, envelopes=self.envelopes) for i in self.identities
        ]
        for seat, peer in enumerate(self.peers):
            self._cheat(seat, peer)
        self.logs: list[list[bytes]] = [[] for _ in range(n)]
        self.reserved = [0] * n  # each seat's durable clock reservation (a note in its log)
        # Each seat's log says it began a recovery and has not finished it (a note in the
        # log, as the runtime writes): a restart then recovers again.
        self.recovering = [False] * n
        pacing = Pacing(config.speed)
        self.bots = [
            BotDriver(
                make_strategy(config.strategy, self.rng.fork(seat)), pacing, wait_for_deals=False
            )
            for seat in range(n)
        ]
        self.queue: list[tuple[float, int, int, int, bytes]] = []
        self._crash_plan: dict[tuple[int, float], Crash] = {}  # (:meth:`run`'s, by seat, time)
        self.counter = 0
        self.generation = [0] * n  # a restart invalidates what was queued for the old process
        self.tick_at: list[float | None] = [None] * n
        self.down_until: list[float | None] = [None] * n
        self.frozen_until: list[float | None] = [None] * n
        self.result = SimResult(
            config, self.logs, self.peers, self.identities, spec, envelopes=self.envelopes
        )
        self.notes: list[list[tuple[int, Note]]] = [[] for _ in range(n)]
        self.result.notes = self.notes
        self.gone_noted = [False] * n  # this process of the seat met the table gone already
        # Per seat, a copy of its log taken for ``Crash.backup``: its events, notes, reserve.
        self.backups: dict[int, tuple[list[bytes], list[tuple[int, Note]], int]] = {}
        self.twins = Twins(self, config.faults.twins)  # (second processes of a key: twins.py)
        self._cheaters_of: Faults | None = None  # (_cheaters: the faults its answer is of)
        self._cheaters_are: frozenset[int] = frozenset()

    # kinds of happenings
    MESSAGE, TICK, BOT, CRASH, RESTART, EQUIVOCATE, FREEZE, WAKE, TWIN, BACKUP = range(10)

    def _push(self, at: float, kind: int, seat: int, data: bytes = b"") -> None:
        self.counter += 1
        heapq.heappush(self.queue, (at, self.counter, kind, seat, data))

    def _schedule_tick(self, seat: int, now: float) -> None:
        peer = self.peers[seat]
        if peer is None:
            return
        deadline = peer.next_deadline()
        if deadline is None:
            return
        deadline = max(deadline, now)
        current = self.tick_at[seat]
        if current is None or deadline < current or current < now:
            self.tick_at[seat] = deadline
            self._push(deadline, self.TICK, seat, self.generation[seat].to_bytes(4, "big"))

    def _apply(self, seat: int, effects: list[Effect], now: float, cut: int | None = None) -> bool:
        """Carry out a peer's effects; ``cut``: the process dies after that many. Returns
        whether the peer is still alive."""
        faults = self.config.faults
        record = self.config.record_effects
        synced = 0.0  # (the sync a send waits for: a record came before it in this input)
        for index, effect in enumerate(effects):
            if cut is not None and index >= cut:
                return False
            if record:
                self.result.effects.append((now, seat, effect))
            if isinstance(effect, Record):
                self.logs[seat].append(effect.data)
                synced = faults.sync
            elif isinstance(effect, Note):
                self._note(seat, effect)
            elif isinstance(effect, Reserve):
                self.reserved[seat] = max(self.reserved[seat], effect.clock)
            elif isinstance(effect, Recovered):
                self._note(seat, Note.recovered(effect))  # (as the runtime writes it)
            elif isinstance(effect, Send):
                self.result.sent += 1
                # (a share beat's faults from a stream of their own: a seed's other draws,
                # and so the shape of its game, are those it had before the beats)
                share_kind = _share_beat(effect.data)
                rng = self.share_rng if share_kind is not None else self.rng
                targets = (
                    [self.spec.seat_of(effect.to)]
                    if effect.to is not None
                    else range(len(self.peers))
                )
                for other in targets:
                    if other == seat:
                        continue
                    if any(p.separates(seat, other, now) for p in faults.partitions) or (
                        share_kind is Kind.DECK_REVEAL and (seat, other) in faults.lost_reveals
                    ):
                        self.result.lost += 1
                        continue
                    if rng.random() < faults.loss:
                        self.result.lost += 1
                        continue
                    copies = 2 if rng.random() < faults.duplicate else 1
                    self.result.duplicated += copies - 1
                    for _ in range(copies):
                        delay = synced + faults.delay + faults.jitter * (2 * rng.random() - 1)
                        if rng.random() < faults.reorder:
                            delay += rng.random() * 5 * faults.delay
                        self._push(now + max(delay, 0.0), self.MESSAGE, other, effect.data)
                        if faults.twins:
                            self.twins.copy(seat, other, effect.data, now + max(delay, 0.0), now)
            elif isinstance(effect, Rejected):
                self.result.rejected += 1
                if effect.reason == ChainCode.CLOCK_JUMP and effect.author is not None:
                    author = self.spec.seat_of(effect.author)
                    self.result.jumps.add((seat, author, effect.seq, effect.event_id))
            elif isinstance(effect, Elsewhere):
                # The process stops, as a node does, having signed nothing more.
                self.result.elsewhere.append((now, seat, effect.seq))
                self.peers[seat] = None
                self.generation[seat] += 1
                self.tick_at[seat] = None
                self.down_until[seat] = float("inf")
                return False
        self._schedule_tick(seat, now)
        return True

    def _note(self, seat: int, note: Note) -> None:
        """Write ``note`` in ``seat``'s log after what it holds, as the runtime does; a recovery
        note says whether a restart from the log recovers (the latest of them, as the runtime
        reads its log: ``nodelog.recovery_unfinished``)."""
        self.notes[seat].append((len(self.logs[seat]), note))
        self.recovering[seat] = self._recovers(note, self.recovering[seat])

    @staticmethod
    def _recovers(note: Note, before: bool) -> bool:
        """Whether a restart recovers once ``note`` is in the log (``before``: until then)."""
        return (
            note.name == RECOVERING_NOTE
            if note.name in (RECOVERING_NOTE, RECOVERED_NOTE)
            else before
        )

    def _crash(self, seat: int, now: float, crash: Crash) -> None:
        self.peers[seat] = None
        self.frozen_until[seat] = None  # (kill -9 ends a stopped process too)
        self.generation[seat] += 1
        self.tick_at[seat] = None
        self.result.crashes += 1
        if crash.restart_after is not None:
            self.down_until[seat] = now + crash.restart_after
            data = crash.lose_own.to_bytes(4, "big")
            data += b"\1" if crash.lose_log else b"\2" if crash.backup is not None else b""
            self._push(now + crash.restart_after, self.RESTART, seat, data)
        else:
            self.down_until[seat] = float("inf")

    def _lose_own(self, seat: int, count: int) -> None:
        """Cut ``seat``'s log before its ``count``-th last own event (disk damage)."""
        log = self.logs[seat]
        own = self.identities[seat].peer_id
        mine = [i for i, wire in enumerate(log) if _author(wire, self.envelopes) == own]
        if count <= 0 or not mine:
            return
        cut = mine[-min(count, len(mine))]
        lost = tuple(log[i] for i in mine if i >= cut)
        del log[cut:]
        # (The notes written after the cut went with it.)
        self.notes[seat] = [(at, note) for at, note in self.notes[seat] if at <= cut]
        self.result.lost_own.append((seat, lost))

    def run(
        self,
        until: Callable[[Simulation], bool] | None = None,
        *,
        past_over: bool = False,
        linger: float = 0.0,
    ) -> SimResult:
        """Play until every live peer's game is over (or ``until`` says so, or time runs out);
        ``past_over``: only ``until`` or the time ends it (the faults planned after the game's
        end happen: a copy of a log restored and resumed once the game is over). ``linger``:
        play on that many seconds past that end, as a node keeps answering once done
        (:data:`~p2p_nertz.defaults.LINGER`): its acks of the last events, which a member
        alone at the end needs from nobody, reach the others and a watcher then (session 40).
        The result's ``time`` and ``finished`` are the end's; ``effects`` hold the linger's."""
        crash_plan = self._crash_plan = self._start()
        now, stop = 0.0, None
        while self.queue:
            now, _, kind, seat, data = heapq.heappop(self.queue)
            if now > self.config.max_time:
                break
            self._happen(kind, seat, data, now, crash_plan)
            over = not past_over and kind != self.TICK and self._done(now)
            if over or (until is not None and until(self)):
                stop = now + linger if linger > 0 else None
                break
        self.result.time = now
        self.result.finished = self._done(now)
        if stop is not None:
            self.play_on(stop)
        return self.result

    def play_on(self, stop: float) -> None:
        """After :meth:`run`, play what happens up to ``stop`` (a linger, as ``run``'s, once
        whatever read the run's end has read it: the liar fuzzer's watcher, session 41)."""
        while self.queue and self.queue[0][0] <= stop:
            at, _, kind, seat, data = heapq.heappop(self.queue)
            self._happen(kind, seat, data, at, self._crash_plan)

    def _start(self) -> dict[tuple[int, float], Crash]:
        """Start every peer and its bot, schedule the faults; return the crashes planned, by
        seat and time (a crash "mid-step" is taken out when it strikes)."""
        faults = self.config.faults
        for seat, peer in enumerate(self.peers):
            assert peer is not None
            self._apply(seat, peer.start(0.0), 0.0)
            self._push(self.bots[seat].delay(self.rng), self.BOT, seat)
        for crash in faults.crashes:
            self._push(crash.at, self.CRASH, crash.seat, b"")
            if crash.backup is not None:
                self._push(crash.backup, self.BACKUP, crash.seat)
        for index, cheat in enumerate(faults.equivocations):
            self._push(cheat.at, self.EQUIVOCATE, cheat.seat, index.to_bytes(4, "big"))
        for index, freeze in enumerate(faults.freezes):
            self._push(freeze.at, self.FREEZE, freeze.seat, index.to_bytes(4, "big"))
        self.twins.start()
        return {(c.seat, c.at): c for c in faults.crashes}

    def _happen(
        self,
        kind: int,
        seat: int,
        data: bytes,
        now: float,
        crash_plan: dict[tuple[int, float], Crash],
    ) -> None:
        """Carry out one happening of the queue."""
        faults = self.config.faults
        peer = self.peers[seat]
        frozen = self.frozen_until[seat]
        if frozen is not None and peer is not None and kind in (self.MESSAGE, self.BOT):
            # Asleep: what is sent to it waits in its sockets, in order; it plays nothing.
            if kind == self.MESSAGE:
                self._push(frozen, kind, seat, data)
            else:
                self._push(frozen + self.bots[seat].delay(self.rng), kind, seat)
            return
        if kind == self.MESSAGE:
            if self.schedule is not None and self.schedule.holds(self, seat, data, now):
                self._push(now + HOLD_STEP, kind, seat, data)
                return
            if peer is not None:
                self.result.delivered += 1
                self._apply(seat, peer.feed(data, now), now)
        elif kind == self.TICK:
            # Only the latest scheduled tick of the live process counts (none while it
            # sleeps: it ticks when it wakes).
            if (
                peer is not None
                and frozen is None
                and int.from_bytes(data, "big") == self.generation[seat]
                and self.tick_at[seat] == now
            ):
                self.tick_at[seat] = None
                self._apply(seat, peer.tick(now), now)
                if not self.gone_noted[seat]:
                    gone = peer.table_gone(now)
                    if gone is not None:
                        self.gone_noted[seat] = True
                        self.result.gone.append((now, seat, gone))
                        for note in gone.notes:  # (what the node writes as it stops)
                            self._note(seat, note)
        elif kind == self.BOT:
            if peer is not None:
                self._bot(seat, peer, now, crash_plan)
            self._push(now + self.bots[seat].delay(self.rng), self.BOT, seat)
        elif kind == self.CRASH:
            planned = crash_plan.get((seat, now))
            if peer is not None and planned is not None and planned.cut_effects is None:
                self._crash(seat, now, planned)
        elif kind == self.FREEZE:
            if peer is not None and frozen is None:
                self._freeze(seat, faults.freezes[int.from_bytes(data, "big")], now)
        elif kind == self.WAKE:
            if frozen is not None and frozen <= now:
                self._wake(seat, now)
        elif kind == self.EQUIVOCATE:
            if peer is not None:
                cheat = faults.equivocations[int.from_bytes(data, "big")]
                self._equivocate(peer, cheat, now)
        elif kind == self.TWIN:
            self.twins.happen(data, now)
        elif kind == self.BACKUP:  # (a copy of the log as it is now: Crash.backup)
            self.backups[seat] = (
                list(self.logs[seat]),
                list(self.notes[seat]),
                self.reserved[seat],
            )
        elif kind == self.RESTART:
            if data[4:] == b"\1":
                self._start_again(seat, now)
            else:
                if data[4:] == b"\2":
                    self._restore_backup(seat)
                self._restart(seat, int.from_bytes(data[:4], "big"), now)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        """Make a shuffle cheater's core cheat (on start, and again on each restart); a seat that
        forked its feed knows it again (``_equivocate``)."""
        if peer is not None and seat in self.forgers:
            peer._author.forger = True
        for cheat in self.config.faults.deck_cheats:
            if cheat.seat == seat and peer is not None:
                install(peer, cheat, restarted=restarted)

    def _freeze(self, seat: int, freeze: Freeze, now: float) -> None:
        self.frozen_until[seat] = now + freeze.duration
        self.result.freezes += 1
        self._push(now + freeze.duration, self.WAKE, seat)

    def _wake(self, seat: int, now: float) -> None:
        self.frozen_until[seat] = None
        # The messages that waited arrive first (queued before this tick).
        self.tick_at[seat] = None
        self._push(now, self.TICK, seat, self.generation[seat].to_bytes(4, "big"))
        self.tick_at[seat] = now

    def _restart(self, seat: int, lose: int, now: float) -> None:
        """Restart ``seat`` from its log, after the disk lost ``lose`` of its own events."""
        self.down_until[seat] = None
        self._lose_own(seat, lose)
        if lose:  # (the runtime's note in place of the cut tail: logfile.store's cut_note)
            self._note(seat, Note.recovering())
        restored, effects = Peer.restore(
            self.identities[seat],
            self.spec,
            list(self.logs[seat]),
            now,
            self.config.peer,
            reserved=self.reserved[seat],
            recover=self.recovering[seat],
            envelopes=self.envelopes,
            # (Before it reads its log back: a cheater restarted acts on it as a cheater.)
            prepare=lambda peer: self._cheat(seat, peer, restarted=True),
            debts=[note.data for _, note in self.notes[seat] if note.name == DEBT_NOTE],
        )
        self.peers[seat] = restored
        self.generation[seat] += 1
        self.gone_noted[seat] = False
        self._apply(seat, effects, now)

    def _restore_backup(self, seat: int) -> None:
        """Put back ``seat``'s log as its copy holds it (``Crash.backup``)."""
        wires, notes, reserved = self.backups.pop(seat, ([], [], 0))
        own = self.identities[seat].peer_id
        lost = [w for w in self.logs[seat][len(wires) :] if _author(w, self.envelopes) == own]
        if lost:
            self.result.lost_own.append((seat, tuple(lost)))
        self.logs[seat][:] = wires
        self.notes[seat] = notes
        self.reserved[seat] = reserved
        self.recovering[seat] = False
        for _, note in notes:
            self.recovering[seat] = self._recovers(note, self.recovering[seat])

    def _start_again(self, seat: int, now: float) -> None:
        """Start ``seat`` again as a new process whose log was lost whole (``Crash.lose_log``)."""
        self.down_until[seat] = None
        self.logs[seat].clear()
        self.notes[seat].clear()
        self.reserved[seat] = 0
        self.recovering[seat] = False
        peer = Peer(
            self.identities[seat], self.spec, now, self.config.peer, envelopes=self.envelopes
        )
        self._cheat(seat, peer)
        self.peers[seat] = peer
        self.generation[seat] += 1
        self.gone_noted[seat] = False
        self._apply(seat, peer.start(now), now)

    def _bot(
        self, seat: int, peer: Peer, now: float, crash_plan: dict[tuple[int, float], Crash]
    ) -> None:
        bot = self.bots[seat]
        if self.config.abandon:
            # Alone with a member that may have gone (silent, or talking but stalled): the core
            # says whether it takes an abandon now, as for the runtime's bots.
            abandoned = bot.abandon(peer, now)
            if abandoned is not None:
                self._apply(seat, abandoned, now)
                return
        move = bot.choose(peer)
        if move is None:
            return
        effects = bot.play(peer, move, now)
        if effects is None:
            return
        # A crash scheduled "mid-step" strikes during the next move after its time.
        for (crash_seat, at), crash in list(crash_plan.items()):
            if crash_seat == seat and crash.cut_effects is not None and at <= now:
                del crash_plan[(crash_seat, at)]
                self._apply(seat, effects, now, cut=crash.cut_effects)
                self._crash(seat, now, crash)
                return
        self._apply(seat, effects, now)

    def _equivocate(self, peer: Peer, cheat: Equivocation, now: float) -> None:
        """Sign a call under the peer's next seq and send it to some peers only."""
        state = peer.tentative
        feed = peer.events(peer.seat)
        if not feed or state.phase is not Phase.PLAY:
            return
        feeds = [peer.events(q) for q in range(len(self.peers))]
        frontier = tuple(len(f) for f in feeds)
        call = Play(
            frontier, state.round.number, Move.call(), frontier_ids=held_ids(feeds, frontier)
        )
        wire = encode_message(
            peer.identity,
            game_id=self.spec.game_id,
            seq=len(feed) + 1,
            prev=feed[-1].id,
            lamport=peer.clock + 2,  # not what the honest peer would sign next
            kind=Kind.NERTS,
            body=encode_body(call),
            version=self.spec.wire_version,
        )
        # (Its core knows its feed's other version is its own doing: it neither doubts what
        # the others hold of its feed nor stops on that version, recovery.Doubt.)
        peer._author.forger = True
        self.forgers.add(peer.seat)
        for other in sorted(cheat.to):
            if other != peer.seat:
                self._push(now + self.config.faults.delay, self.MESSAGE, other, wire)

    def _done(self, now: float) -> bool:
        # (Asked after most happenings: the test that fails all game long comes first.)
        live = [p for p in self.peers if p is not None]
        cheaters = self._cheaters()
        active = [p for p in live if p.seat not in p.final.dropped and p.seat not in cheaters]
        if not active or not all(p.final.phase is Phase.OVER and not p.provisional for p in active):
            return False
        if any(d is not None and d != float("inf") for d in self.down_until):
            return False  # someone is due back
        if any(f is not None for f in self.frozen_until):
            return False  # someone is asleep
        if any(p.recovering and not p.recovery_hopeless(now) for p in live):
            # Someone is taking its own events back (its log must end up holding them), and
            # may yet sign again: its runtime stops only once that is hopeless (§9.6).
            return False
        return all(self._quiet(p) for p in active)

    def _cheaters(self) -> frozenset[int]:
        """The run's cheaters (:attr:`Faults.cheaters`), worked out once per faults."""
        faults = self.config.faults
        if self._cheaters_of is not faults:
            self._cheaters_of, self._cheaters_are = faults, faults.cheaters
        return self._cheaters_are

    def _quiet(self, peer: Peer) -> bool:
        """Whether every live honest peer holds every event this one holds (nothing left in
        flight)."""
        cheaters = self._cheaters()
        return all(
            other.held(s) >= peer.held(s)
            for other in self.peers
            for s in range(len(self.peers))
            if other is not None
            and other.seat not in cheaters
            and s not in other.final.dropped
            and s not in cheaters
        )


def pushed(effect: Effect) -> bytes | None:
    """What a member's node pushes its watchers of one of its core's effects (``runtime.mesh``:
    ``--watcher``): every event it logs, and every message it sends to all (its beats and
    acks, its events); ``None`` for the rest."""
    if isinstance(effect, Record) or (isinstance(effect, Send) and effect.to is None):
        return effect.data
    return None


def _author(wire: bytes, cache: EnvelopeCache) -> bytes | None:
    """The author of a logged message (``None`` if it does not decode)."""
    try:
        return bytes(decode_message(wire, cache=cache).author)
    except InvalidMessageError:
        return None


def run(config: SimConfig, schedule: Schedule | None = None) -> SimResult:
    """Run a simulation (with a scripted ``schedule``, if given) and check the invariants; the
    result lists any violation."""
    from p2p_nertz.sim.invariants import check

    result = Simulation(config, schedule).run()
    result.violations = check(result)
    return result


def _share_beat(data: bytes) -> Kind | None:
    """The kind of ``data``, a message a simulated peer sends, if it is a share beat
    (``deck_reveal`` or ``deck_want``; read from its bytes, unverified: the sim's own peers
    signed it); else ``None``."""
    if not looks_like_beat(data):
        return None
    kind = msgpack.unpackb(msgpack.unpackb(data)[0])[6]
    return Kind(kind) if kind in _SHARE_KINDS else None


_SHARE_KINDS = frozenset({Kind.DECK_REVEAL.value, Kind.DECK_WANT.value})
