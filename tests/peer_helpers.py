"""An in-memory network of protocol cores for tests (the ``ConnectionPair`` of h11, for N peers).

:class:`PeerNetwork` wires N :class:`~p2p_nertz.protocol.peer.Peer` cores with queued delivery
(a fixed latency plus seeded jitter, so messages overtake each other), drives each seat with a
greedy bot, and runs on a simulated clock: no sockets, no sleeps, the same seed gives the same
run. Every input a peer is given is logged, so :meth:`PeerNetwork.clone` can rebuild an
identical, independent peer to attack in a test while the network itself stays untouched.

This is a small test harness, not the simulator (``p2p_nertz.sim``): no loss, no partitions
beyond :meth:`PeerNetwork.silence`, no crashes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from p2p_nertz.audit import LogSource
from p2p_nertz.bots import BotDriver
from p2p_nertz.bots.base import Pacing, Strategy
from p2p_nertz.bots.greedy import Greedy
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.logfile import Record as LogRecord
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Beat,
    Drop,
    DropReason,
    EventBody,
    encode_body,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.effects import Record
from p2p_nertz.protocol.envelope import Kind, decode_message, encode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Send
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules, Table
from p2p_nertz.sim.logfiles import log_file, log_records
from p2p_nertz.sim.network import SimResult

__all__ = [
    "PeerNetwork",
    "PuppetPeer",
    "Snapshot",
    "Wires",
    "beat_body",
    "beat_of",
    "forge",
    "restored",
    "sign",
    "snapshot",
]

_CHAIN: Any = object()  # forge(): chain the event to the author's held head

PeerFactory = Callable[[Identity, GameSpec, float, PeerConfig | None], Peer]
Input = tuple[str, float, Any]


class PeerNetwork:
    """N peers of one game, played by bots, with seeded queued delivery.

    Args:
        n: number of seats.
        seed: seeds the identities, the bots and the jitter.
        rules: the game's rules (default: a short game, ``Rules(target=10)``).
        latency: one-way delay of every message, in seconds (0 and no jitter: instant
            delivery, in the order sent).
        jitter: extra random delay in ``[0, jitter)`` per message (reordering).
        move_every: how often each bot is asked for a move.
        config: the peers' timers and limits.
        factories: per seat, how to build its peer (a cheating subclass, say).
        strategies: per seat, the bot (default :class:`Greedy`).
        deal: how the game is dealt (default: commit and reveal).
    """

    def __init__(
        self,
        n: int = 3,
        seed: int = 0,
        *,
        rules: Rules | None = None,
        latency: float = 0.01,
        jitter: float = 0.005,
        move_every: float = 0.3,
        config: PeerConfig | None = None,
        factories: dict[int, PeerFactory] | None = None,
        strategies: dict[int, Strategy] | None = None,
        deal: Deal = Deal.COMMIT,
    ) -> None:
        identities = [Identity.generate(derive_seed("peer-network", seed, i)) for i in range(n)]
        self.spec = GameSpec.create(
            [(ident.peer_id, f"p{i}") for i, ident in enumerate(identities)],
            rules or Rules(target=10),
            f"peer-network {seed}".encode(),
            deal=deal,
        )
        self.n = n
        self.identities = [identities[0]] * n
        for ident in identities:
            self.identities[self.spec.seat_of(ident.peer_id)] = ident
        self.config = config
        self.latency = latency
        self.jitter = jitter
        self.move_every = move_every
        self.rng = Rng(derive_seed("peer-network/jitter", seed))
        self.factories = factories or {}
        self.peers = [self._make(s) for s in range(n)]
        self.bots: list[Strategy] = [
            (strategies or {}).get(s) or Greedy(Rng(derive_seed("peer-network/bot", seed, s)))
            for s in range(n)
        ]
        # One driver per seat: the bot step the node and the simulator use (bots.BotDriver);
        # bots here play from their own deal on, as in the simulator.
        self.drivers = [BotDriver(bot, Pacing(10), wait_for_deals=False) for bot in self.bots]
        self.inputs: list[list[Input]] = [[] for _ in range(n)]
        self.effects: list[list[Effect]] = [[] for _ in range(n)]
        self.sent: dict[bytes, None] = {}  # every distinct message any peer sent, in order
        self.silenced: set[int] = set()
        self.now = 0.0
        self.steps = 0
        self._queue: list[tuple[float, int, str, int, Any]] = []
        self._counter = itertools.count()
        self._tick_at: list[float | None] = [None] * n
        for seat in range(n):
            self._input(seat, "start", None)
            self._push(self.move_every, "bot", seat, None)

    # -- building ----------------------------------------------------------------------------------
    def _make(self, seat: int) -> Peer:
        factory = self.factories.get(seat, Peer)
        return factory(self.identities[seat], self.spec, 0.0, self.config)

    def clone(self, seat: int, inputs: int | None = None) -> Peer:
        """A new, independent peer in exactly the state of ``seat``'s (its inputs replayed).

        With ``inputs``, only that many first inputs are replayed: the state ``seat`` had then.
        """
        peer = self._make(seat)
        for kind, now, arg in self.inputs[seat][:inputs]:
            _apply(peer, kind, now, arg)
        return peer

    @property
    def last_input_time(self) -> list[float]:
        """Per seat, the time of its latest input (feeding then fires no timer)."""
        return [inputs[-1][1] if inputs else 0.0 for inputs in self.inputs]

    # -- running -----------------------------------------------------------------------------------
    def _push(self, at: float, action: str, seat: int, arg: Any) -> None:
        heapq.heappush(self._queue, (at, next(self._counter), action, seat, arg))

    def _input(self, seat: int, kind: str, arg: Any) -> list[Effect]:
        effects = _apply(self.peers[seat], kind, self.now, arg)
        self.inputs[seat].append((kind, self.now, arg))
        self._handle(seat, effects)
        return effects

    def _handle(self, seat: int, effects: list[Effect]) -> None:
        self.effects[seat].extend(effects)
        for effect in effects:
            if isinstance(effect, Send):
                self.sent.setdefault(effect.data, None)
                self.send(seat, effect)
        deadline = self.peers[seat].next_deadline()
        if deadline is not None and self._tick_at[seat] != deadline:
            self._tick_at[seat] = deadline
            # A hair late: ``now - last >= interval`` can be false at exactly ``last + interval``.
            self._push(max(deadline, self.now) + 1e-6, "tick", seat, deadline)

    #: Pairs of seats that no longer hear each other (a partition between two members only).
    blocked: frozenset[frozenset[int]] = frozenset()

    def send(self, seat: int, effect: Send) -> None:
        """Queue ``effect`` (sent by ``seat``) for delivery (none between a pair in
        :attr:`blocked`)."""
        if seat in self.silenced:
            return
        for other in range(self.n):
            if other == seat or other in self.silenced:
                continue
            if frozenset((seat, other)) in self.blocked:
                continue
            if effect.to is not None and effect.to != self.spec.peer_ids[other]:
                continue
            delay = self.latency + self.jitter * self.rng.random()
            self._push(self.now + delay, "feed", other, effect.data)

    def play(self, seat: int, move: Move) -> list[Effect]:
        """Play ``move`` for ``seat`` now (its effects go out on the network).

        Raises:
            IllegalMoveError, LocalProtocolError: as :meth:`Peer.play` (nothing happened).
        """
        return self._input(seat, "play", move)

    def emit(self, seat: int, body: EventBody) -> list[Effect]:
        """Make ``seat`` (a :class:`PuppetPeer`) sign and send ``body`` now, legal or not."""
        return self._input(seat, "emit", body)

    def deliver(self, seat: int, data: bytes) -> list[Effect]:
        """Feed ``data`` to ``seat`` now (its effects go out on the network)."""
        return self._input(seat, "feed", data)

    def inject(self, seat: int, data: bytes, delay: float = 0.0) -> None:
        """Queue ``data`` for delivery to ``seat`` (after ``delay``), as if from the network."""
        self._push(self.now + delay, "feed", seat, data)

    def silence(self, seat: int) -> None:
        """Cut ``seat`` off: nothing it sends arrives, nothing is delivered to it."""
        self.silenced.add(seat)

    def step(self) -> bool:
        """Process one queued action; ``False`` when nothing is left."""
        if not self._queue:
            return False
        at, _, action, seat, arg = heapq.heappop(self._queue)
        self.now = max(self.now, at)
        self.steps += 1
        peer = self.peers[seat]
        if action == "feed":
            if seat not in self.silenced:
                self._input(seat, "feed", arg)
        elif action == "tick":
            if self._tick_at[seat] == arg:
                self._tick_at[seat] = None
                self._input(seat, "tick", None)
        elif action == "bot":
            self._bot(seat, peer)
            if peer.final.phase is not Phase.OVER:
                self._push(self.now + self.move_every, "bot", seat, None)
        return True

    def _bot(self, seat: int, peer: Peer) -> None:
        if seat in self.silenced:
            return
        driver = self.drivers[seat]
        if driver.strategy is not self.bots[seat]:  # (a test put in a bot of its own)
            driver = self.drivers[seat] = BotDriver(
                self.bots[seat], driver.pacing, wait_for_deals=False
            )
        move = driver.choose(peer)
        if move is None:
            return
        # A frozen pile or a race lost in the meantime: the bot tries again later.
        with contextlib.suppress(IllegalMoveError, LocalProtocolError):
            self._input(seat, "play", move)

    def run(
        self,
        until: Callable[[PeerNetwork], bool],
        max_steps: int = 200_000,
        within: float = 300.0,
    ) -> None:
        """Step until ``until(self)`` holds.

        Raises:
            AssertionError: the queue ran dry, or ``max_steps`` steps or ``within`` simulated
                seconds passed first (a game that stalls only keeps beating).
        """
        deadline = self.now + within
        for _ in range(max_steps):
            if until(self):
                return
            if self.now > deadline:
                raise AssertionError(f"no end within {within} s simulated ({self.steps} steps)")
            if not self.step():
                raise AssertionError(f"the network went quiet at {self.now:.3f} s")
        raise AssertionError(f"no end after {max_steps} steps ({self.now:.3f} s simulated)")

    def run_until_over(self, max_steps: int = 200_000, within: float = 300.0) -> None:
        """Run until every live peer's final phase is ``over``."""
        self.run(
            lambda net: all(
                p.final.phase is Phase.OVER
                for s, p in enumerate(net.peers)
                if s not in net.silenced
            ),
            max_steps,
            within,
        )

    # -- recorded traffic --------------------------------------------------------------------------
    def event_wires(self) -> list[bytes]:
        """Every event message sent during the run, in the order first sent."""
        return [w for w in self.sent if decode_message(w).kind.is_event]

    def beat_wires(self) -> list[bytes]:
        """Every beat, ack and want sent during the run, in the order first sent."""
        return [w for w in self.sent if not decode_message(w).kind.is_event]


def _apply(peer: Peer, kind: str, now: float, arg: Any) -> list[Effect]:
    if kind == "feed":
        return peer.feed(arg, now)
    if kind == "tick":
        return peer.tick(now)
    if kind == "play":
        assert isinstance(arg, Move)
        return peer.play(arg, now)
    if kind == "start":
        return peer.start(now)
    if kind == "emit":
        assert isinstance(peer, PuppetPeer)
        return peer.emit(arg, now)
    raise ValueError(kind)


class PuppetPeer(Peer):
    """A peer that signs whatever event body it is told to: a member gone rogue.

    (It calls the peer's private ``_emit``: only a test has a reason to sign an illegal event
    through the very core that keeps its feed, so that its own later events chain on it.)
    """

    def emit(self, body: EventBody, now: float) -> list[Effect]:
        """Sign, log, send and deliver ``body`` as this peer's next event; its frontier is set."""
        self._emit(body, now)
        return self._flush(now)


class Wires(list[bytes]):
    """A list of messages with a short repr (Hypothesis shows the arguments a test was given)."""

    def __repr__(self) -> str:
        return f"<{len(self)} messages>"


# -- signing events by hand (tests hold every member's identity) -----------------------------------
def sign(
    identity: Identity,
    spec: GameSpec,
    *,
    kind: Kind,
    body: Any,
    seq: int = 0,
    prev: bytes | None = None,
    lamport: int = 1,
    version: int | None = None,
) -> bytes:
    """Sign any message of ``spec``'s game by ``identity`` (``body`` in its msgpack form), in
    the game's protocol version unless ``version`` says another."""
    return encode_message(
        identity,
        game_id=spec.game_id,
        seq=seq,
        prev=prev,
        lamport=lamport,
        kind=kind,
        body=body,
        version=spec.wire_version if version is None else version,
    )


def forge(
    peer: Peer,
    identity: Identity,
    body: EventBody | Any,
    *,
    kind: Kind | None = None,
    seq: int | None = None,
    prev: bytes | None = _CHAIN,
    lamport: int | None = None,
    frontier: Iterable[int] | None = None,
    frontier_ids: tuple[bytes, ...] | None = None,
) -> bytes:
    """The next event of ``identity``'s feed as ``peer`` holds it, signed by that member.

    By default it chains (``seq`` = held + 1, ``prev`` = the held head), its frontier is
    everything ``peer`` holds, and its Lamport time is one above every event in that frontier:
    a message the member could have sent. Keyword arguments break one property at a time.
    ``body`` is a typed event body (its frontier is replaced) or a raw msgpack value (used as
    is, with ``kind`` required).
    """
    spec = peer.spec
    author = spec.seat_of(identity.peer_id)
    feed = peer.events(author)
    held = (
        tuple(frontier) if frontier is not None else tuple(peer.held(s) for s in range(spec.seats))
    )
    if seq is None:
        seq = len(feed) + 1
    if prev is _CHAIN:
        if seq == 1:
            prev = None
        elif seq - 2 < len(feed):
            prev = feed[seq - 2].id
        else:  # beyond the held feed: a head we cannot know
            prev = hashlib.sha256(b"unknown head %d" % (seq - 1)).digest()
    if lamport is None:
        # Above everything in its frontier, above the clock its last beat announced (an event
        # below it is a provable lie), and above what the peer already holds as final.
        lamport = 1 + max(
            (peer.events(s)[h - 1].lamport for s, h in enumerate(held) if 0 < h <= peer.held(s)),
            default=0,
        )
        lamport = max(lamport, peer._inbox.beat_clock[author] + 1, peer.stable + 1)
    if not dataclasses.is_dataclass(body):
        assert kind is not None, "a raw body needs its kind"
        raw: Any = body
    else:
        if frontier is None:
            held = tuple(seq - 1 if s == author else h for s, h in enumerate(held))
        kind = kind or kind_of(body)
        if frontier_ids is None:
            # The ids of the events named, as ``peer`` holds them (past what it holds: ids
            # nobody holds, of events it has not seen).
            frontier_ids = tuple(
                b""
                if not h
                else peer.events(s)[h - 1].id[:ID_PREFIX]
                if h <= peer.held(s)
                else hashlib.sha256(b"unseen %d %d" % (s, h)).digest()[:ID_PREFIX]
                for s, h in enumerate(held)
            )
        raw = encode_body(dataclasses.replace(body, frontier=held, frontier_ids=frontier_ids))
    return sign(identity, spec, kind=kind, body=raw, seq=seq, prev=prev, lamport=lamport)


def restored(result: SimResult, seat: int) -> Peer:
    """Seat ``seat`` of a simulated game restored from its log as the run ended (its identity,
    the game, its records, the run's last time and the peers' config)."""
    peer, _ = Peer.restore(
        result.identities[seat], result.spec, list(result.logs[seat]), result.time,
        result.config.peer,
    )  # fmt: skip
    return peer


def signed_drops(result: SimResult) -> list[tuple[float, int, Drop]]:
    """Every drop event signed in a simulated game (``record_effects=True``): (when, by whom,
    the body), in order."""
    drops = []
    for now, seat, effect in result.effects:
        if isinstance(effect, Record) and effect.own:
            message = decode_message(effect.data)
            if message.kind is Kind.DROP:
                body = parse_body(message.kind, message.body, result.spec.seats)
                assert isinstance(body, Drop)
                drops.append((now, seat, body))
    return drops


def signed_votes(result: SimResult) -> list[tuple[float, int, int, DropReason]]:
    """Every drop event signed in a simulated game: (when, by whom, on whom, why), in order."""
    return [(now, seat, body.seat, body.reason) for now, seat, body in signed_drops(result)]


def beat_body(peer: Peer, seat: int) -> list[Any]:
    """The body of a beat of ``seat`` announcing its feed as ``peer`` holds it, and holding
    everything ``peer`` holds (msgpack form)."""
    feeds = [peer.events(q) for q in range(peer.spec.seats)]
    beat = Beat(
        head_seq=len(feeds[seat]),
        head_id=feeds[seat][-1].id if feeds[seat] else None,
        held=tuple(len(f) for f in feeds),
        held_ids=tuple(f[-1].id[:ID_PREFIX] if f else b"" for f in feeds),
    )
    return encode_body(beat)


def beat_of(peer: Peer, identity: Identity, lamport: int, kind: Kind = Kind.BEAT) -> bytes:
    """A beat by the member ``identity`` with :func:`beat_body`, at Lamport time ``lamport``."""
    seat = peer.spec.seat_of(identity.peer_id)
    return sign(identity, peer.spec, kind=kind, body=beat_body(peer, seat), lamport=lamport)


# -- what a test compares --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Everything of a peer's state a hostile message must not change."""

    final: str
    tentative: str
    held: tuple[int, ...]
    lake: str
    tableaux: tuple[Any, ...]
    violations: tuple[Any, ...]
    clock: int
    stable: int
    pending_claims: tuple[Any, ...]


def snapshot(peer: Peer) -> Snapshot:
    """The state of ``peer`` that :class:`Snapshot` lists."""
    view = peer.view
    return Snapshot(
        final=peer.final.digest(),
        tentative=peer.tentative.digest(),
        held=tuple(peer.held(s) for s in range(peer.spec.seats)),
        lake=str(view.lake) if view is not None else "",
        tableaux=view.tableaux if view is not None else (),
        violations=peer.tentative.violations,
        clock=peer.clock,
        stable=peer.stable,
        pending_claims=tuple(peer.player.pending_claims()),
    )


class Paused(Strategy):
    """A bot that does nothing: the test plays every move."""

    def choose(self, table: Table, seat: int) -> Move | None:
        return None


def log_of(net: PeerNetwork, seat: int) -> list[LogRecord]:
    """``seat``'s log of the game ``net`` played: every event its peer holds, in the order of
    their Lamport times (an order in which each could have been delivered)."""
    peer, spec = net.peers[seat], net.spec
    held = sorted(
        (m for s in range(net.n) for m in peer.events(s)),
        key=lambda m: (m.lamport, spec.seat_of(m.author), m.seq),
    )
    return log_records(spec, seat, [m.wire for m in held])


def log_sources(net: PeerNetwork) -> list[LogSource]:
    """Every seat's log of the game ``net`` played, as the audit and the replay read files."""
    return [
        LogSource.from_bytes(f"p{seat}.log", log_file(net.spec, seat, log_of(net, seat)))
        for seat in range(net.n)
    ]
