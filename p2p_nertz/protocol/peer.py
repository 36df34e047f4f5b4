"""The peer: a sans-I/O protocol core that turns bytes and time into state and bytes.

Theory of operation
-------------------
A :class:`Peer` is used like h11: the runtime gives it what happened — bytes received
(:meth:`Peer.feed`), a move of the local player (:meth:`Peer.play`), the passing of time
(:meth:`Peer.tick`) — each with the current time ``now`` (seconds, any origin), and gets back a
list of **effects**: :class:`Record` (append to the durable log *before* anything after it is
sent), :class:`Send` (bytes to one peer or to all), and notices for the UI. It never reads a
clock, never touches a socket, never raises on anything a peer sent.

Feeds and causal delivery.
    Each author's events form a hash chain (seq from 1, ``prev`` = previous id). An event is
    *delivered* once the author's previous event is, its ``prev`` matches, and every event in its
    *frontier* (the seqs it says it holds of every feed) is held here; its Lamport time must
    exceed theirs. Anything early waits; gaps are repaired by asking any peer (``want``), since
    every event is signed and anyone may relay it.

Finality (stability).
    ``known[Q]``: every event of Q with Lamport time up to it is held here (Q announced a head with
    that clock, in an event or a beat, and the feed is held up to that head). ``cover[R]``: R
    has announced holding every event held here up to that time. Events up to
    ``min(known) ∧ min(cover)`` are **final**: nobody can still send an earlier one, and every
    member already holds them. A claim is final about one round trip after it is sent: every
    peer answers events with a coalesced ``ack`` beat at once (tableau moves only while a claim
    in the air waits for them; a peer's own claim announces the moves it had not acked).

Two folds.
    The *final* :class:`~p2p_nertz.protocol.state.GameState` takes final events in total order
    and is never rolled back; the peer acts on it (commit, reveal, ready, result) and reports
    its notices (a claim kept or lost, a round scored). The *tentative* fold adds every held
    event on top: it is what the player sees and plays on, recomputed from the final one when an
    event arrives out of order. The local player's claims freeze their source pile until they
    are final, so a lost race can always put the card back (and no slide-under counts on a
    pile such a claim emptied).

Faults.
    A member silent for ``suspect_after`` is suspected; past ``drop_after`` the peer signs a
    ``drop`` vote with the last seq it holds (and the ids of its last events there), and stops
    announcing that feed beyond it; a member that withholds what a phase waits for is voted out
    after ``phase_timeout``. A strict majority of votes drops the member, with a cut and a kept
    chain (docs/protocol.md §9.2); its events after the cut never count, and a peer holding
    another chain of it switches to the kept one. A voter that hears the member again
    withdraws a vote for silence. Being heard is not enough: a member that keeps talking while
    what finality needs of it alone (its feed up to the head it announced, its cover of the
    events held here) sees no progress for ``phase_timeout`` is voted out too (*withheld*,
    which stands). Two different signed events with one author and seq, or a beat and an event
    of one author whose clocks contradict each other (found in either order: the beats that a
    later event could contradict are kept, ``_watch``), are proof of cheating: the proof goes
    to the log first (a :class:`Note`), both messages are relayed once, and the author is
    voted out. With two members left, :meth:`Peer.abandon` ends the
    game without the one gone; a dropped member that comes back asks to rejoin, and a member
    still in the game readmits it at the next round. Before sending past a clock it has not
    reserved, the peer asks for a durable :class:`Reserve`, so a restart never times a message
    below one sent before the crash. Known gaps are listed in docs/protocol.md §13.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from operator import gt

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    VOTE_WINDOW,
    Beat,
    Commit,
    Drop,
    DropReason,
    EventBody,
    Join,
    Leave,
    Play,
    Ready,
    Result,
    Reveal,
    RevealWhat,
    Want,
    encode_body,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    Message,
    RejectReason,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.evidence import PROOF_NOTE, encode_proof
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Phase
from p2p_nertz.rules import Card, Move, MoveKind, Pile, Table, Tableau, shuffled_deck

__all__ = [
    "Effect",
    "Equivocation",
    "Note",
    "PROOF_NOTE",
    "Peer",
    "PeerConfig",
    "Record",
    "Recovered",
    "Rejected",
    "Reserve",
    "Send",
    "Suspected",
]


# -- effects ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Send:
    """Send ``data`` to one member (``to``) or to every other member (``to is None``)."""

    data: bytes
    to: PeerId | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """Append ``data`` (a wire message) to the durable log; ``own``: one of our events.

    The runtime must make it durable before performing any :class:`Send` after it.
    """

    data: bytes
    own: bool


@dataclass(frozen=True, slots=True)
class Reserve:
    """Make durable that our Lamport clock may reach ``clock`` (a note in the log), before
    any :class:`Send` after it: a restart starts its clock there, so no message it sends can
    be timed below one it sent before the crash (beats are not logged)."""

    clock: int


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message was refused and changed nothing (the reason is a short code)."""

    reason: str
    detail: str
    author: PeerId | None = None


@dataclass(frozen=True, slots=True)
class Suspected:
    """A member has been silent too long (``suspected``), or is heard again (``False``)."""

    seat: int
    suspected: bool


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Proof of cheating: two different signed events by one author with one seq."""

    seat: int
    seq: int
    first: bytes
    second: bytes


@dataclass(frozen=True, slots=True)
class Note:
    """Append the note ``name`` holding ``data`` to the log (never sent): evidence for an audit.

    The runtime writes it in order with the :class:`Record` effects around it. The one note the
    core makes is :data:`PROOF_NOTE`: ``data`` is ``msgpack [wire_a, wire_b]``, two complete
    signed messages exactly as received, that together prove their author cheated: two events
    of one seq (an equivocation), or a beat or ack (``wire_a``) and an event (``wire_b``) whose
    clocks contradict each other (a lie about time, docs/protocol.md §9.4).
    """

    name: str
    data: bytes

    @classmethod
    def proof(cls, wire_a: bytes, wire_b: bytes) -> Note:
        """The ``proof`` note of two signed messages.

        >>> Note.proof(b"a", b"b").data
        b'\\x92\\xc4\\x01a\\xc4\\x01b'
        """
        return cls(PROOF_NOTE, encode_proof(wire_a, wire_b))


@dataclass(frozen=True, slots=True)
class Recovered:
    """A peer restored in recovery (:meth:`Peer.restore` with ``recover``) may sign again.

    Every member still in the game announced what it holds of our feed, and we hold at least
    that much: events ``first + 1 .. head`` were taken back from the others (none if
    ``head == first``), announced by the seats in ``holders`` (docs/protocol.md §9.6).
    """

    first: int
    head: int
    holders: tuple[int, ...]


Effect = (
    Send | Record | Reserve | Note | Rejected | Suspected | Equivocation | Recovered | st.Notice
)


#: Phases that wait for an event from every member (play: for every seat's ``ready``).
_WAITING_PHASES = (Phase.PLAY, Phase.COMMIT, Phase.NONCE, Phase.REVEAL, Phase.RESULT)
# (A tuple: ``in`` compares identities in C, where a set would hash the member in Python.)
# Our events whose finality the others wait on: they announce the moves we hold unacked.
_ANNOUNCING = frozenset({Kind.CLAIM, Kind.STUCK, Kind.NERTS})

# Members read for every event (Python 3.11 reads ``Kind.MOVE`` through
# EnumType.__getattr__, about ten times the cost of a global).
_JOIN = Kind.JOIN
_DROP = Kind.DROP
_MOVE = Kind.MOVE
_CLAIM = Kind.CLAIM

_NOT_EVENTS = (Beat, Want)  # (``Beat | Want`` would build a union object per event)

# Terms of Peer._bounds other than a pair of members (whose seats are >= 0).
_KNOWN = -1
_VOTED = -2

#: The furthest ahead of ours a message's Lamport time may be (far beyond honest drift).
MAX_CLOCK_JUMP = 1 << 32


@dataclass(frozen=True, slots=True)
class PeerConfig:
    """Timers and limits of a peer (seconds and counts).

    Attributes:
        ack_delay: acks for received events are coalesced over this window.
        beat_interval: an idle peer beats this often.
        suspect_after: silence before a member is suspected.
        drop_after: silence before this peer votes to drop a member (Zyre uses 5 s / 30 s).
        want_interval: least time between two gap requests for one feed.
        want_delay: how long a gap that another member's beat reveals may stay open before
            it is asked for. The events are usually on their way from their author: a beat
            relayed by a third peer can overtake them, and asking at once would fetch them
            twice. ``0``: ask at once.
        max_pending: events held per author ahead of its delivered feed.
        max_want: events sent back for one gap request.
        clock_reserve: Lamport ticks reserved by each durable clock note.
        phase_timeout: how long a phase that waits on every member (commit, nonce, the
            ``ready`` of play, reveal, result) may wait before the members holding it up are
            voted out.
        rejoin: a peer that learns it was dropped (not for cheating) asks to rejoin at the
            next round (DESIGN.md §6).
    """

    ack_delay: float = 0.002
    beat_interval: float = 0.25
    suspect_after: float = 5.0
    drop_after: float = 30.0
    want_interval: float = 0.05
    want_delay: float = 0.0
    max_pending: int = 4096
    max_want: int = 64
    clock_reserve: int = 1000
    phase_timeout: float = 60.0
    rejoin: bool = True


class Peer:
    """One player's (or a spectator-less bot's) protocol core. See the module docstring.

    Args:
        identity: this peer's key.
        spec: the game agreed in the lobby; this peer must be in its roster.
        now: the current time.
        config: timers and limits.
        envelopes: the codec's memo of messages parsed and verified (one may be shared by the
            peers of one process, as the simulator's are); ``None``: a new one of its own.

    Raises:
        LocalProtocolError: this identity is not in the roster.
    """

    def __init__(
        self,
        identity: Identity,
        spec: GameSpec,
        now: float,
        config: PeerConfig | None = None,
        *,
        envelopes: EnvelopeCache | None = None,
    ) -> None:
        try:
            self.seat = spec.seat_of(identity.peer_id)
        except KeyError:
            raise LocalProtocolError("this identity is not in the game's roster") from None
        self.identity = identity
        self.spec = spec
        self.config = config or PeerConfig()
        self.game_id = spec.game_id
        self._envelopes = envelopes if envelopes is not None else EnvelopeCache()
        #: The last round whose ``ready`` this peer signs by itself (``None``: every round).
        #: A person's table holds the next round's ``ready`` while the player reads the board
        #: of the last one, then lets it go (:meth:`release_ready`). Nothing on the wire
        #: changes: the ``ready`` only comes later, well within ``phase_timeout``.
        self.ready_through: int | None = None
        n = spec.seats
        self._n = n
        self._roster = frozenset(spec.peer_ids)
        self._seat_of = {pid: s for s, pid in enumerate(spec.peer_ids)}
        self._private = identity.to_bytes()
        # Feeds: delivered messages and events per seat, in seq order.
        self._feeds: list[list[Message]] = [[] for _ in range(n)]
        # seat -> seq -> (message, body, from our log): events waiting for their turn
        self._pending: list[dict[int, tuple[Message, EventBody, bool]]] = [{} for _ in range(n)]
        self._redrain = False  # a cap or a truncation may let waiting events through
        self.clock = 0
        self._known = [0] * n  # every event of seat Q with lamport <= known[Q] is held
        self._announced: list[tuple[int, int]] = [(0, 0)] * n  # Q's latest (lamport, head)
        self._held_by: list[tuple[int, ...]] = [(0,) * n for _ in range(n)]  # R's held, verified
        # What R's beats said it holds beyond what we held then: feed -> (count, id prefix),
        # credited to R once we hold that far and the ids match (see _take_beat).
        self._uncredited: list[dict[int, tuple[int, bytes]]] = [{} for _ in range(n)]
        # A member's latest beat that announced a head of its own feed not held here yet:
        # its cover is credited once that feed is (_take_beat).
        self._early: list[tuple[int, Beat] | None] = [None] * n
        self._claimed: list[tuple[int, ...]] = [(0,) * n for _ in range(n)]  # R's held, as said
        self._claimed_most = [0] * n  # the most of Q's feed any other member said it holds
        # The term that held finality back at the last call of _bounds: (seat, Q) for what
        # seat is known to hold of Q's feed, or (_KNOWN, Q), or (_VOTED, Q).
        self._holder: tuple[int, int] | None = None
        self._heard = [now] * n
        self._beat_clock = [0] * n  # the latest beat-class Lamport time seen from each member
        # Per member, the beats that a later event of its could contradict (§9.4): (head seq,
        # Lamport time, beat) for heads at or above what we hold of its feed, each beat kept
        # only if no other kept one has a lower head and a time as high (it would catch every
        # lie this one catches), so heads and times both increase along the list.
        self._watch: list[list[tuple[int, int, Message]]] = [[] for _ in range(n)]
        # Members that keep talking while finality waits for them (§9.2): seat -> (since,
        # the seq of its feed we wait to hold, what of each feed we wait for it to cover).
        self._stall: dict[int, tuple[float, int, tuple[int, ...]]] = {}
        self._stall_scan_at = now
        self._proven: set[tuple[int, int]] = set()  # (seat, seq) of equivocations proven
        self._proven_seats: set[int] = set()  # seats we voted out on proof (never withdrawn)
        self._forked_at: dict[int, int] = {}  # seat -> the first seq it is proven to have forked
        # seat -> the most of its feed an event's frontier may need here (a forked feed: below
        # the fork; a dropped one: up to its cut): dependents never wait for the rest
        self._dep_cap: dict[int, int] = {}
        # seat -> {seq: id or id prefix}: the chain of a dropped member that counts (§9.4)
        self._required: dict[int, dict[int, bytes]] = {}
        self._kept_seen: dict[int, tuple[int, bytes]] = {}  # the kept chain _required follows
        self._probe_at = [0.0] * n  # when we may next ask everyone for a fork's proof
        self._unproven: dict[int, int] = {}  # seat -> fork seq others voted on, unproven here
        self._rejoin_seen: dict[int, dict[int, bytes]] = {}  # readmitted chains followed
        self._proofs: dict[tuple[int, int], bytes] = {}  # (seat, seq) -> the other version
        # (seat, seq) -> (beat, event): a lie about time, relayed with the event when asked
        self._lie_proofs: dict[tuple[int, int], tuple[bytes, bytes]] = {}
        self._rejoin_requests: dict[int, int] = {}  # seat -> seq of its latest rejoin request
        self._sponsored: set[tuple[int, int]] = set()  # (seat, request seq) we readmitted
        self._readmissions: set[tuple[int, int]] = set()  # (seat, time) final here, handled
        self._reserved = 0  # the clock is durably reserved up to here (see _reserve)
        self._announced_held = [0] * n  # the most of each feed we ever said we hold
        self._phase_key: tuple[Phase, int] = (Phase.JOINING, 0)
        self._phase_since = now  # when the final fold entered its current phase
        # Since when every other member still in has been heard within ``suspect_after``
        # (None: one is silent now). Nobody is blamed for withholding before then (_blame_from).
        self._all_heard_since: float | None = now
        self._suspected: set[int] = set()
        self._voted: dict[int, int] = {}  # seat -> seq we voted to drop it at (frozen there)
        self.stable = 0
        self._dirty = True  # something finality depends on changed since the last advance
        self._votes_held = False  # a drop vote was delivered: check for exclusions
        self._final = GameState(spec, seat=self.seat, secrets=self._secret)
        self._nonfinal: list[Event] = []
        self._nonfinal_keys: list[tuple[int, int, int]] = []
        self._tentative: GameState | None = self._final.copy()
        self._ack_due: float | None = None
        self._unacked = False  # moves received and not acked (see _wants_ack)
        self._last_sent = now
        self._want_at = [0.0] * n
        self._gaps: dict[int, tuple[float, int, PeerId]] = {}  # seat -> (due, upto, source)
        self._done: set[tuple[int, int, int]] = set()  # (kind, round, what) of own events
        self._out: list[Effect] = []
        self._restoring = False  # Peer.restore is reading our log back
        # Recovery (restore with ``recover``): our log may lack events we signed and sent.
        # Until every member still in the game has announced what it holds of our feed, we
        # sign nothing and send no beat (a beat naming a head below an event others hold,
        # timed below the beat, is a lie about time); wants ask for our own events.
        self._recovering = False
        self._recovery_first = 0  # our head when the recovery began
        self._recovery_clock = 0  # our first recovery want's Lamport time
        # seat -> what its latest beat timed after that want says it holds, per feed
        self._recovery_heard: dict[int, tuple[int, ...]] = {}
        # seat -> its head in its first such beat: every event that existed when it took our
        # want in (those our lost events can name) is at or below the heads
        self._recovery_heads: dict[int, int] = {}
        # seat -> feed -> what a member recovering too announced holding of it, in its wants
        # timed after our first want (it sends no beat either: its wants start past what it
        # holds, one per feed)
        self._recovery_wants: dict[int, dict[int, int]] = {}
        self._recovery_since = now  # when the recovery began
        self._deferred_forks: list[tuple[int, int]] = []  # proofs found while recovering
        self._started = False
        self.rejected = 0

    # -- secrets of the fair deal -----------------------------------------------------------
    def _secret(self, number: int) -> bytes:
        return st.local_secret(self._private, self.game_id, number)

    def _nonce(self, number: int) -> bytes:
        return st.local_nonce(self._private, self.game_id, number)

    # -- views ------------------------------------------------------------------------------
    @property
    def final(self) -> GameState:
        """The final fold (never rolled back)."""
        return self._final

    @property
    def tentative(self) -> GameState:
        """The fold of every held event: what the player sees."""
        if self._tentative is None:
            self._tentative = self._fold_tentative({}, {}, {})
        return self._tentative

    def _fold_tentative(
        self,
        cuts: dict[int, int],
        gaps: dict[int, tuple[tuple[int, int], ...]],
        caps: dict[int, tuple[int, int]],
        rounds: int = 0,
    ) -> GameState:
        """The final fold plus every held event not final, in order, skipping those past
        ``cuts`` and in ``gaps``, and the votes past ``caps``.

        None of a member's events past its cut counts, even one before its drop in the order,
        nor one in the gap of a member readmitted (§9.2, §9.8), nor a vote of a member signed
        past what a standing vote against it counts (:meth:`GameState.standing_caps`): the
        fold, taking events one at a time, cannot know these before it reaches the drop, the
        readmission or the vote. When it counted such an event, the fold is made again with
        what it found, until that stops changing (as the observer of the simulator does).
        Otherwise the held view could show what the final fold never will: a vote past its
        author's cut deciding a drop, or a round that a member's invalid moves kept from
        ending, and its readmission missing (soak seeds 236, 472).
        """
        final = self._final
        t = final.copy()
        caps = st.with_forks(caps, self._forked_at, own=self.seat)
        t.vote_caps = caps
        counted: list[Event] = []
        for ev in self._nonfinal:
            seat_gaps = gaps.get(ev.seat)
            cut = cuts.get(ev.seat)
            if (
                (cut is not None and cut < ev.seq < _after_gap(seat_gaps, cut))
                or (seat_gaps and any(lo < ev.seq < hi for lo, hi in seat_gaps))
                or not self._counts(ev, t)
            ):
                t.observe(ev)
                continue
            t.apply(ev)
            counted.append(ev)
        if not (t.dropped or t.gaps or t.votes) or rounds >= _REFOLDS:
            return t
        # (Exactly what this fold decided: a cut kept from a fold that decided otherwise would
        # skip events that count.)
        new_cuts = {q: c for q, c in t.dropped.items() if q not in final.dropped}
        new_gaps = {q: g for q, g in t.gaps.items() if final.gaps.get(q) != g}
        new_caps = st.with_forks(t.standing_caps(), self._forked_at, own=self.seat)
        wrong = any(
            (ev.seat in new_cuts and ev.seq > new_cuts[ev.seat]
             and ev.seq < _after_gap(new_gaps.get(ev.seat), new_cuts[ev.seat]))
            or any(lo < ev.seq < hi for lo, hi in new_gaps.get(ev.seat, ()))
            or (ev.kind is _DROP and isinstance(ev.body, Drop)
                and st.capped(new_caps, ev.seat, ev.seq, ev.body))
            for ev in counted
        )  # fmt: skip
        if not wrong or (new_cuts == cuts and new_gaps == gaps and new_caps == caps):
            return t
        return self._fold_tentative(new_cuts, new_gaps, new_caps, rounds + 1)

    @property
    def view(self) -> Table | None:
        """The table as this peer sees it now (tentative); ``None`` before the deal."""
        return self.tentative.table

    @property
    def phase(self) -> Phase:
        """The final phase of the game."""
        return self._final.phase

    @property
    def provisional(self) -> bool:
        """Whether the final result may still change (an abandoned game whose absent member
        has not been heard to agree yet: :attr:`GameState.provisional`, §9.3)."""
        return self._final.provisional

    def held(self, seat: int) -> int:
        """How many events of ``seat``'s feed are held here."""
        return len(self._feeds[seat])

    def events(self, seat: int) -> list[Message]:
        """The delivered events of one feed (for relaying and tests)."""
        return list(self._feeds[seat])

    def pending_claims(self) -> list[Event]:
        """The local player's claims that are not final yet ("in the air")."""
        return [e for e in self._nonfinal if e.seat == self.seat and e.kind is Kind.CLAIM]

    def frozen_piles(self) -> set[Pile]:
        """The piles the local player may not touch now: those a claim in the air came from,
        and the waste (with the stock) while an everyone-stuck rotation is not final."""
        piles = self._claimed_piles()
        if self.rotation_pending():
            piles.add(Pile.WASTE)
        return piles

    def _claimed_piles(self) -> set[Pile]:
        """The piles our claims in the air came from."""
        piles = set()
        for ev in self.pending_claims():
            body = ev.body
            assert isinstance(body, Play) and body.move.source is not None
            piles.add(body.move.source)
        return piles

    def rotation_pending(self) -> bool:
        """Whether the table shows an everyone-stuck rotation that is not final yet.

        Until it is, an event not held here may still come before the last pass (a seat's
        move after its own pass) and mean that nothing rotates: a move of the waste or the
        stock made on the rotated view would then be refused by every fold (§8.7).
        """
        shown = self.tentative.round
        if shown.rotation_seen is None:
            return False
        final = self._final.round
        return shown.number != final.number or shown.rotation_seen != final.rotation_seen

    def silent_for(self, now: float) -> float:
        """Seconds since any other member still in the game was last heard from (directly or
        by relay). A member dropped or gone does not count: a cheater voted out may well go on
        talking, and the one member left with us may be silent all the same."""
        dropped = self.tentative.dropped
        others = [self._heard[q] for q in range(self._n) if q != self.seat and q not in dropped]
        return now - max(others) if others else float("inf")

    def gone_for(self, now: float) -> float | None:
        """How long the one other member left has counted as gone for an abandon (silent past
        ``drop_after``, or talking while finality waits for it past ``phase_timeout``, §9.2);
        negative: how much longer before it does. ``None``: no abandon is possible now
        (:func:`~p2p_nertz.protocol.state.abandon_partner`)."""
        partner = st.abandon_partner(self._final, self.tentative, self.seat)
        return None if isinstance(partner, str) else self._gone_for(partner, now)

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (``None``: only on input)."""
        deadlines = [self._last_sent + self.config.beat_interval]
        if self._recovering:  # only our wants and gap repair run (no votes, no acks)
            return min([*deadlines, *(due for due, _, _ in self._gaps.values())])
        # (A member that is out casts no vote (_vote): no deadline waits for one.)
        out = self.seat in self._final.dropped
        blame_from = self._blame_from(self._phase_since)
        if (
            not out
            and blame_from is not None
            and self._final.phase in _WAITING_PHASES
            and any(q != self.seat and q not in self._voted for q in self._final.waiting())
        ):
            deadlines.append(blame_from + self.config.phase_timeout)
        if self._ack_due is not None:
            deadlines.append(self._ack_due)
        deadlines.extend(due for due, _, _ in self._gaps.values())
        for q in range(self._n):
            if q == self.seat or q in self._final.dropped:
                continue
            if q not in self._suspected:
                deadlines.append(self._heard[q] + self.config.suspect_after)
            elif q not in self._voted and not out:
                deadlines.append(self._heard[q] + self.config.drop_after)
        for q, (since, _, _) in self._stall.items():
            if q not in self._voted and not out:
                deadlines.append(max(since + self.config.phase_timeout, self._stall_scan_at))
        return min(deadlines)

    # -- inputs -----------------------------------------------------------------------------
    def start(self, now: float) -> list[Effect]:
        """Join the game: sign and send this peer's ``join`` (its first event)."""
        if not self._started:
            self._started = True
            if not self._feeds[self.seat]:
                self._emit(Join(self._frontier()), now)
            self._beat(Kind.BEAT, now)
        return self._flush(now)

    def feed(self, data: bytes, now: float) -> list[Effect]:
        """Take bytes received from the network. Never raises for anything in ``data``."""
        self._receive(data, now)
        return self._flush(now)

    def feed_many(self, messages: Iterable[bytes], now: float) -> list[Effect]:
        """Take several messages at once (one round of finality and acks for the batch)."""
        for data in messages:
            self._receive(data, now)
        return self._flush(now)

    def tick(self, now: float) -> list[Effect]:
        """Let time pass: beats, acks, suspicion, drop votes, gap repair."""
        return self._flush(now)

    def release_ready(self, number: int, now: float) -> list[Effect]:
        """Sign our ``ready`` of round ``number`` (and of earlier rounds) once it is due.

        Only matters while :attr:`ready_through` holds readies back; a held ``ready`` that is
        due already is signed now.
        """
        if self.ready_through is not None and number > self.ready_through:
            self.ready_through = number
            self._act()
        return self._flush(now)

    def play(self, move: Move, now: float) -> list[Effect]:
        """Play a move of the local player (or pass, or call Nerts).

        Raises:
            IllegalMoveError: the move is illegal now (nothing is sent, nothing changes).
            LocalProtocolError: the game is not in play, or the pile is frozen by a claim in
                the air (or, for the waste and the stock, by a rotation not yet final), or a
                slide-under needs a pile that such a claim emptied.
        """
        if self._recovering:
            raise LocalProtocolError(f"{move}: still recovering our own events from the others")
        tentative = self.tentative
        table = tentative.table
        if tentative.phase is not Phase.PLAY or table is None or table.over:
            raise LocalProtocolError(f"{move}: the round is not in play ({tentative.phase.value})")
        if self.seat not in tentative.round.ready:
            raise LocalProtocolError(f"{move}: the deal is not done yet")
        frozen = self._claimed_piles()
        touched = self._touches(move)
        if frozen & touched:
            pile = sorted(frozen & touched)[0]
            raise LocalProtocolError(
                f"{move}: a card from {pile!r} is in the air; wait until its claim is decided"
            )
        if Pile.WASTE in touched and self.rotation_pending():
            raise LocalProtocolError(
                f"{move}: everyone was stuck and the stocks rotate; wait until that is final"
            )
        tableau = table.tableaux[self.seat]
        if move.kind is MoveKind.SLIDE and frozen and tableau.has_empty_work_pile():
            # A slide-under needs an empty work pile, and one emptied by a claim in the air is
            # empty only if the claim wins: the move must be legal either way (§7.3).
            empty = [p for p in tableau.work_piles if not tableau.work[p - 1]]
            if all(p in frozen for p in empty):
                raise LocalProtocolError(
                    f"{move}: a slide-under needs an empty work pile, and pile {empty[0]} is "
                    "empty only while its claim is in the air; wait until it is decided"
                )
        card = None
        if move.is_lake:
            assert move.source is not None
            foundation = move.foundation or table.lake_target(self.seat, move.source, move.declare)
            move = Move.to_lake(move.source, foundation, move.declare)
        _, play = table.play(self.seat, move, max(self.clock + 1, table.clock))
        if play.resolution is not None:
            if not play.resolution.kept:
                who = play.resolution.winner
                raise IllegalMoveError(
                    f"{move}: {play.resolution.claim.card} no longer fits"
                    + (f" (seat {who} got there first)" if who is not None else "")
                )
            card = play.resolution.claim.card
        reveals: tuple[Card, ...] = ()
        if move.kind is MoveKind.TURN and tableau.stock:
            k = min(self.spec.rules.draw, len(tableau.stock))
            reveals = tuple(reversed(tableau.stock[-k:]))
        elif move.plays_card and move.source is Pile.NERTS and len(tableau.nerts) >= 2:
            reveals = (tableau.nerts[-2],)
        body = Play(self._frontier(), tentative.round.number, move, card, reveals)
        self._emit(body, now)
        return self._flush(now)

    def leave(self, now: float) -> list[Effect]:
        """Leave the game (the others see a signed ``leave``).

        While recovering (:meth:`restore` with ``recover``) it signs nothing: the seq it would
        take may be one we already used. The others drop us for silence instead.
        """
        if self._recovering:
            return self._flush(now)
        if self.seat not in self._final.dropped and not any(
            m.kind is Kind.LEAVE for m in self._feeds[self.seat]
        ):
            self._emit(Leave(self._frontier()), now)
        return self._flush(now)

    def abandon(self, now: float) -> list[Effect]:
        """End the game when only one other member is left and it has gone (DESIGN.md §6).

        With two members nobody can be dropped (a majority of two is two votes): the one left
        signs an ``abandon`` instead. The round in progress is void, and the game ends on the
        totals of the rounds both sides saw scored (docs/protocol.md §9.3); until the other is
        heard from again the result may be :attr:`provisional`.

        Raises:
            LocalProtocolError: the game is over, more than one other member is left, or the
                other has not been silent for ``drop_after`` seconds (nothing is sent).
        """
        if self._recovering:  # (§9.6: nothing is signed before our own feed is known)
            raise LocalProtocolError("still recovering our own events from the others")
        partner = st.abandon_partner(self._final, self.tentative, self.seat)
        if isinstance(partner, str):
            raise LocalProtocolError(partner)
        other = partner
        if self._gone_for(other, now) < 0:
            # Said to the player: the name and the seat numbered from 1, as the table shows.
            silent = now - self._heard[other]
            raise LocalProtocolError(
                f"{self.spec.members[other].name} (seat {other}) was heard {silent:.1f} s "
                f"ago; an abandon needs {self.config.drop_after:g} s of silence "
                f"({max(self.config.drop_after - silent, 0.1):.1f} s more)"
            )
        # Count all we hold, or what an earlier vote of ours froze our announcements at.
        held = self._voted.setdefault(other, len(self._feeds[other]))
        self._proven_seats.add(other)  # not withdrawn if it is heard again
        ids = self._vote_ids(other, held)
        self._emit(Drop(self._frontier(), other, held, DropReason.ABANDON, 0, ids), now)
        return self._flush(now)

    # -- restart ----------------------------------------------------------------------------
    @classmethod
    def restore(
        cls,
        identity: Identity,
        spec: GameSpec,
        records: Iterable[bytes],
        now: float,
        config: PeerConfig | None = None,
        *,
        reserved: int = 0,
        recover: bool = False,
        envelopes: EnvelopeCache | None = None,
    ) -> tuple[Peer, list[Effect]]:
        """Rebuild a peer from its log (every event it sent or received) after a crash.

        Its own events are taken back as sent, so no seq is ever reused; its clock starts at
        ``reserved``, the last :class:`Reserve` made durable, so nothing it sends is timed
        below what it sent before; the returned effects announce it (a beat) and re-send its
        latest event in case the crash came before the send.

        With ``recover`` (the log's tail was cut, or may have lost its end: it may lack events
        we signed and sent), the peer first learns its own feed from the others: it signs
        nothing and sends no beat, asks every member for its own events past its log (a
        ``want`` every ``beat_interval``), takes back those that verify with its key (logged
        as its own), and signs again only once every member still in the game has announced,
        in a beat timed after its first want, what it holds of our feed, and we hold at least
        that much (a :class:`Recovered` effect says so). Meanwhile :meth:`play` and
        :meth:`abandon` raise, and :meth:`leave` signs nothing (docs/protocol.md §9.6).

        ``envelopes``: the codec's memo, as for the constructor.
        """
        peer = cls(identity, spec, now, config, envelopes=envelopes)
        peer._started = True
        peer.clock = peer._reserved = reserved
        records = list(records)
        for data in records:
            # Our votes on proof of a fork first: the events we delivered past that fork (on
            # one version or the other) are delivered again the same way.
            try:
                message = decode_message(
                    data, game_id=peer.game_id, roster=peer._roster, cache=peer._envelopes
                )
            except InvalidMessageError:
                continue
            if message.author == identity.peer_id and message.kind is Kind.DROP:
                body = parse_body(message.kind, message.body, peer._n)
                if isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION:
                    forked = min(body.fork_seq, peer._forked_at.get(body.seat, body.fork_seq))
                    peer._forked_at[body.seat] = forked
                    peer._cap_dependencies(body.seat, forked - 1)
        peer._restoring = True
        for data in records:
            peer._receive(data, now, restoring=True)
        peer._restoring = False
        peer._out = [e for e in peer._out if not isinstance(e, Send | Record)]
        own = peer._feeds[peer.seat]
        for message in own:
            peer._take_back(message)
        if recover:
            peer._recovering = True
            peer._recovery_first = len(own)
            peer._recovery_since = now
            if own:
                peer._out.append(Send(own[-1].wire))  # (signed before: the same bytes)
            peer._recovery_want(now)
            return peer, peer._flush(now)
        if own:
            peer._out.append(Send(own[-1].wire))
        else:
            peer._emit(Join(peer._frontier()), now)
        peer._beat(Kind.BEAT, now)
        return peer, peer._flush(now)

    def _take_back(self, message: Message) -> None:
        """Take one of our own events (from our log, or from the others in recovery) as done:
        the phase events it sends are not sent again, its votes stand."""
        body = parse_body(message.kind, message.body, self._n)
        self._mark_done(message.kind, body)
        assert not isinstance(body, _NOT_EVENTS)
        # What it announced holding we announced: a vote of ours on a fork must count it
        # (others may have made it final on our word, §9.4).
        announced = self._announced_held
        for q, h in enumerate(body.frontier):
            announced[q] = max(announced[q], h)
        if isinstance(body, Drop) and body.reason is DropReason.REJOIN:
            self._sponsored.add((body.seat, body.last_seq))
        elif isinstance(body, Drop) and body.reason is not DropReason.WITHDRAW:
            self._voted[body.seat] = body.last_seq
            if body.reason in (DropReason.EQUIVOCATION, DropReason.WITHHELD):
                self._proven_seats.add(body.seat)  # not withdrawn when heard (§9.2)
        elif isinstance(body, Drop):
            self._voted.pop(body.seat, None)

    # -- recovery ---------------------------------------------------------------------------
    @property
    def recovering(self) -> bool:
        """Whether this peer, restored with ``recover``, still waits to learn its own feed."""
        return self._recovering

    def awaiting(self) -> tuple[int, ...]:
        """The seats a recovering peer still waits for: members still in the game that have
        not announced, since the recovery began, holding at least the events of our feed we
        hold and every event that existed when the others took our first want in, or that
        announced more of our feed than we hold (empty when not recovering)."""
        if not self._recovering:
            return ()
        seat = self.seat
        tentative = self.tentative
        members = [q for q in range(self._n) if q not in tentative.dropped]
        # A member we hold proof against is not waited for: its word is worth nothing (it
        # could announce less of our feed than it holds), and its drop may need our vote.
        cheaters = {q for q, _ in self._proven} | set(self._forked_at)
        # What each member must hold of each feed: all of ours we hold, and every event that
        # existed when the feed's author took our want in; for a member that voted the
        # author out, no more than its vote counted (it announces no more).
        heads = self._recovery_heads
        announced = self._recovery_heard.copy()
        for r, wants in self._recovery_wants.items():
            if r not in announced and len(wants) == self._n and r in wants:
                # Recovering too (it asks for its own feed): its wants announce what it holds.
                announced[r] = tuple(wants[q] for q in range(self._n))
        need = {q: heads.get(q, 0) for q in members}
        need[seat] = len(self._feeds[seat])
        frozen = {
            (voter, q): vote.last_seq for q in members for voter, vote in tentative.votes.get(q, ())
        }
        waiting = []
        for r in members:
            if r == seat or r in cheaters:
                continue
            held = announced.get(r)
            if (
                held is None  # not heard since our first want
                or max(held[seat], self._claimed[r][seat]) > need[seat]  # holds ours we lack
                # Holding less, it may hold a later event of ours waiting for the events it
                # lacks, which its beats do not announce (§9.6).
                or any(held[q] < min(need[q], frozen.get((r, q), need[q])) for q in members)
            ):
                waiting.append(r)
        return tuple(waiting)

    def recovery_hopeless(self, now: float) -> bool:
        """Whether a recovering peer cannot finish: every member it waits for has been silent
        for ``drop_after`` (gone, or cut off). It must not sign (it could reuse a seq), so
        nobody can be dropped by it: the runtime should stop and say so."""
        waiting = self.awaiting()
        return bool(waiting) and all(
            now >= max(self._heard[q], self._recovery_since) + self.config.drop_after
            for q in waiting
        )

    def _recovery_want(self, now: float) -> None:
        """Ask every member for our own events past what we hold (a want is signed but names
        no head: it announces nothing of our feed, and keeps us heard)."""
        first = len(self._feeds[self.seat]) + 1
        if not self._recovery_clock:
            # The first one is timed far above anything we sent before (our reservation):
            # another member's clock passes it by taking it in (§5.3), or only after some
            # thousand messages of the table, long after what we sent before the crash arrived.
            self.clock = max(self.clock, self._reserved) + self.config.clock_reserve
        wire = self._want_wire(self.seat, first, first + self.config.max_want - 1)
        if not self._recovery_clock:
            self._recovery_clock = self.clock
        self._out.append(Send(wire))
        # To a member recovering at once (it asked for its own feed), one per other feed too,
        # from past what we hold (or announce: our votes cap it): it cannot wait for a beat
        # of ours, and takes them as our announcement (§9.6).
        recovering = [r for r, wants in self._recovery_wants.items() if r in wants]
        if recovering:
            frontier = self._frontier()
            for r in recovering:
                to = self.spec.peer_ids[r]
                for q, held in enumerate(frontier):
                    if q != self.seat:
                        wire = self._want_wire(q, held + 1, held + self.config.max_want)
                        self._out.append(Send(wire, to))
        self._last_sent = now
        self._ack_due = None
        self._unacked = False

    def _check_recovered(self, now: float) -> None:
        """End the recovery once nothing the others hold of our feed is missing here."""
        own = self._feeds[self.seat]
        if self.awaiting() or self._pending[self.seat]:
            return
        most = max((self._claimed[q][self.seat] for q in range(self._n)), default=0)
        # A member that voted us out announces no more of our feed than its vote counts, and
        # its vote says how much it held then.
        votes = self.tentative.votes.get(self.seat, ())
        most = max([most, *(vote.last_seq for _, vote in votes)])
        if most > len(own):
            return
        self._recovering = False
        first = self._recovery_first
        holders = tuple(
            q for q in range(self._n) if q != self.seat and self._claimed[q][self.seat] > first
        )
        self._out.append(Recovered(first, len(own), holders))
        self._dirty = True
        for seat, fork_seq in self._deferred_forks:
            self._vote_fork(seat, fork_seq, now)
        self._deferred_forks.clear()
        if not own:
            self._emit(Join(self._frontier()), now)  # (the log lost even our join, or had none)
        self._advance_final()
        self._act()
        self._beat(Kind.BEAT, now)

    # -- receiving --------------------------------------------------------------------------
    def _reject(self, reason: str, detail: str, author: PeerId | None = None) -> None:
        self.rejected += 1
        self._out.append(Rejected(reason, detail, author))

    def _receive(self, data: bytes, now: float, *, restoring: bool = False) -> None:
        try:
            message = decode_message(
                data, game_id=self.game_id, roster=self._roster, cache=self._envelopes
            )
        except InvalidMessageError as exc:
            self._reject(exc.reason.value, exc.detail)
            return
        seat = self._seat_of[message.author]
        try:
            body = parse_body(message.kind, message.body, self._n)
        except ValueError as exc:
            self._reject(RejectReason.BAD_BODY.value, str(exc), message.author)
            return
        if message.lamport > self.clock + MAX_CLOCK_JUMP:
            # No honest peer is that far ahead; following it would exhaust our clock.
            self._reject("clock_jump", f"Lamport time {message.lamport} is far ahead of ours")
            return
        beat = body if type(body) is Beat else None  # (parse_body gives each kind its class)
        if beat is not None or type(body) is Want:  # a beat, an ack or a want: no event
            if seat == self.seat:
                return  # our own beat, echoed: nothing to learn
            if beat is not None:
                if not self._beat_is_sound(seat, message, beat, now):
                    return
                # Even an old beat (a relayed proof arrives that way) may contradict an event
                # still to come: keep it for that check.
                self._watch_beat(seat, message, beat.head_seq)
            if message.lamport <= self._beat_clock[seat]:
                return  # an old beat (replayed, or overtaken in the network): nothing new
            self._beat_clock[seat] = message.lamport
            self._heard_from(seat, now)
            if message.lamport > self.clock:
                self.clock = message.lamport
                self._dirty = True
            if beat is not None:
                self._take_beat(seat, message.lamport, beat, now)
                if self._recovering and message.lamport > self._recovery_clock:
                    # Timed above our first recovery want (far above our old clock): sent after
                    # it took the want in, so after all we sent it before the crash (§9.6).
                    self._recovery_heard[seat] = beat.held
                    self._recovery_heads.setdefault(seat, beat.head_seq)
                    if beat.held[self.seat] < len(self._feeds[self.seat]):
                        # It lacks some of ours, and cannot learn our head from a beat: send
                        # them (it may hold a later one of ours waiting for them).
                        head = len(self._feeds[self.seat])
                        want = Want(self.seat, beat.held[self.seat] + 1, head)
                        self._answer_want(message.author, want)
            elif isinstance(body, Want):
                self._answer_want(message.author, body)
                if self._recovering and message.lamport > self._recovery_clock:
                    self._recovery_wants.setdefault(seat, {})[body.seat] = body.first - 1
                    if body.seat == seat:  # (it recovers too: its own head, as it knows it)
                        self._recovery_heads.setdefault(seat, body.first - 1)
            return
        assert not isinstance(body, _NOT_EVENTS)
        feed = self._feeds[seat]
        if seat == self.seat and message.seq > len(feed) and not restoring and not self._recovering:
            # Our log holds every event we ever signed: this one we never did (a stolen key).
            # (Recovering from a cut log, it is ours, signed before the log lost it: it
            # verifies with our key, which nobody else holds. It is taken back, and logged as
            # ours, _deliver.)
            self._reject("not_ours", f"event {message.seq} in our name that we never signed")
            return
        if message.seq <= len(feed):
            if feed[message.seq - 1].id != message.id:
                self._equivocation(seat, feed[message.seq - 1], message, now)
            return  # a duplicate (a replay or a relay we already have)
        pending = self._pending[seat]
        other = pending.get(message.seq)
        if other is not None:
            if other[0].id != message.id:
                self._equivocation(seat, other[0], message, now)
            return
        if self._watch[seat] and message.seq == len(feed) + 1 and seat not in self._forked_at:
            beat_message = self._watched_lie(seat, message)
            if beat_message is not None:
                # A beat of its author announced that nothing of its would come at or below
                # its clock past its head: both signed, so proof now, whatever came between.
                # (Only for the next event of the feed: one further on is checked when its
                # turn comes, once we hold the events before it and our vote can count them;
                # a vote counting less than the others hold cuts what they built on, §9.2.)
                self._clock_lie(seat, beat_message, message, now)
                self._reject(
                    "broken_chain",
                    f"event {message.seq} is timed below a clock its author announced",
                    message.author,
                )
                return
        if len(pending) >= self.config.max_pending:
            self._reject("too_far_ahead", f"seat {seat} has too many events waiting")
            return
        if seat != self.seat:
            self._heard_from(seat, now)
        pending[message.seq] = (message, body, restoring)
        self._drain(now)

    def _drain(self, now: float) -> None:
        """Deliver every pending event whose turn has come."""
        self._redrain = False
        progress = True
        while progress:
            progress = False
            for seat in range(self._n):
                pending = self._pending[seat]
                feed = self._feeds[seat]
                required = self._required.get(seat)
                while pending:
                    nxt = pending.get(len(feed) + 1)
                    if nxt is None:
                        break
                    message, body, restoring = nxt
                    if required is not None and not _matches(required, message.seq, message.id):
                        del pending[message.seq]
                        self._reject(
                            "not_kept",
                            f"seat {seat} event {message.seq} is not on the chain its drop keeps",
                            message.author,
                        )
                        continue
                    if (
                        required is not None
                        and feed
                        and message.prev is not None
                        and message.prev != feed[-1].id
                        and message.seq in required
                    ):
                        # On the kept chain, but ours parts from it below: the kept event
                        # names its predecessor exactly. Give ours up and fetch that one.
                        required[message.seq - 1] = message.prev
                        before = len(feed)
                        self._truncate(seat, message.seq - 2)
                        if len(feed) < before:
                            progress = True
                            break
                    frontier = body.frontier
                    cap = self._dep_cap
                    if (
                        any(map(gt, frontier, map(len, self._feeds)))  # (no cap: C loops)
                        if not cap
                        else any(
                            min(frontier[q], cap.get(q, frontier[q])) > len(self._feeds[q])
                            for q in range(self._n)
                        )
                    ):
                        break  # its causal past is not all here yet
                    problem = self._chain_problem(seat, message, frontier, restoring)
                    del pending[message.seq]
                    if problem is not None:
                        self._reject("broken_chain", problem, message.author)
                        clash = None if restoring else self._time_clash(message, frontier)
                        if clash is not None and clash[0] != seat and clash[0] != self.seat:
                            # Timed at or below our copy of another member's event it says it
                            # holds: it may hold another version of that event (a fork sent
                            # to us alone, timed higher). Ask everyone for theirs: the other
                            # version is the proof (§9.4), and with it the fork's cap lets
                            # this event in when it comes again (soak seed 285: the votes
                            # that dropped us were refused for good, so we never knew).
                            q, seq = clash
                            if q not in self._unproven and q not in self._forked_at:
                                self._unproven[q] = seq
                                self._probe_at[q] = now + self.config.beat_interval
                        held = len(feed)
                        if (
                            seat != self.seat
                            and held
                            and message.seq == held + 1
                            and message.prev != feed[-1].id
                            and seat not in self._unproven
                        ):
                            # Its author signed it after another version of our event
                            # ``held``: a fork we hold no proof of yet (a version sent to us
                            # alone, the real one lost). Ask everyone for theirs: the other
                            # version is the proof (§9.4), and without it we could never take
                            # this feed further (soak seed 442).
                            # (At the next beat, not in answer to what may be garbage.)
                            self._unproven[seat] = held
                            self._probe_at[seat] = now + self.config.beat_interval
                        continue
                    self._deliver(seat, message, body, now, restoring=restoring)
                    progress = True

    def _chain_problem(
        self, seat: int, message: Message, frontier: tuple[int, ...], restoring: bool = False
    ) -> str | None:
        feed = self._feeds[seat]
        if self._watch[seat] and seat not in self._proven_seats:
            # (Once an author is proven to cheat and voted out, the drop's cut decides which of
            # its events count; its timing lies no longer matter.)
            beat = self._watched_lie(seat, message)
            if beat is not None:
                self._clock_lie(seat, beat, message, None)
                return f"event {message.seq} is timed below a clock its author announced"
        if message.lamport <= self.stable and not self._never_counts(seat, message):
            return f"event {message.seq} is timed {message.lamport}, below what is final"
        prev = feed[-1].id if feed else None
        if message.prev != prev:
            return f"event {message.seq} does not follow the author's event {len(feed)}"
        if frontier[seat] != message.seq - 1:
            return f"event {message.seq} says it follows event {frontier[seat]}"
        if restoring:
            return None  # from our log: its times were checked when it first came
        clash = self._time_clash(message, frontier)
        if clash is not None:
            return (
                f"Lamport time {message.lamport} is not above the events it has seen "
                f"(seat {clash[0]} event {clash[1]})"
            )
        return None

    def _time_clash(self, message: Message, frontier: tuple[int, ...]) -> tuple[int, int] | None:
        """The first (seat, seq) of the frontier held here timed at or above ``message``."""
        for q in range(self._n):
            if q in self._forked_at and frontier[q] >= self._forked_at[q]:
                continue  # it may hold the other version of a proven fork: times differ
            if frontier[q] > len(self._feeds[q]):
                continue  # past a forked or dropped feed's cap: nothing here to compare
            if frontier[q] and self._feeds[q][frontier[q] - 1].lamport >= message.lamport:
                return q, frontier[q]
        return None

    def _never_counts(self, seat: int, message: Message) -> bool:
        """Whether a (late) event of a member dropped, or readmitted since, can never count:
        it is held and relayed (its feed goes on through it), never folded."""
        final = self._final
        if not final.counts(seat, message.seq):
            return True
        gaps = final.gaps.get(seat)
        at = final.readmitted_at.get(seat)
        if not gaps or at is None:
            return False
        return message.seq >= gaps[-1][1] and message.lamport <= at

    def _deliver(
        self, seat: int, message: Message, body: EventBody, now: float, *, restoring: bool
    ) -> None:
        self._feeds[seat].append(message)
        self._dirty = True
        watch = self._watch[seat]
        if watch and watch[0][0] < message.seq:
            # A beat below the head now held was checked against the event after its head
            # (_beat_is_sound, or check 1 when that event came); later events are timed above.
            del watch[: bisect.bisect_left(watch, message.seq, key=_head)]
        self.clock = max(self.clock, message.lamport)
        self._known[seat] = max(self._known[seat], message.lamport)
        lamport, head = self._announced[seat]
        if head <= len(self._feeds[seat]):
            self._known[seat] = max(self._known[seat], lamport)
        # The author holds its own event (what else it holds, its beats say, with ids).
        if message.seq > self._held_by[seat][seat]:
            held = self._held_by[seat]
            self._held_by[seat] = (*held[:seat], message.seq, *held[seat + 1 :])
            self._dirty = True
        if any(self._uncredited):
            for r, uncredited in enumerate(self._uncredited):
                if uncredited:
                    self._credit(r, seat)
        early = self._early[seat]
        if early is not None and early[1].head_seq <= message.seq:
            self._early[seat] = None
            self._take_beat(seat, early[0], early[1], now)
        event = Event(seat, message.seq, message.lamport, message.kind, body, message.id)
        key = event.key
        if message.lamport > self.stable:  # (else it never counts: see _never_counts)
            index = bisect.bisect(self._nonfinal_keys, key)
            self._nonfinal.insert(index, event)
            self._nonfinal_keys.insert(index, key)
        else:
            # Never folded, but an abandoned game's end reads it (§9.3).
            self._out.extend(self._final.observe(event))
        if message.kind is _JOIN and message.seq > 1 and seat != self.seat:
            self._rejoin_requests[seat] = message.seq
        # The tentative fold is rebuilt from the final one when someone looks at it: the
        # final fold plus the few events not yet final (GGPO's rollback and replay, lazily).
        self._tentative = None
        if message.kind is _DROP:
            self._votes_held = True
            assert isinstance(body, Drop)
            target = body.seat
            if body.reason is DropReason.EQUIVOCATION and target != self.seat:
                self._unproven.setdefault(target, body.fork_seq)
        if seat == self.seat:
            if not restoring:  # ours, taken back from the others in recovery
                self._out.append(Record(message.wire, own=True))
                self._take_back(message)
        else:
            if not restoring:
                self._out.append(Record(message.wire, own=False))
            if self._wants_ack(message):
                if self._ack_due is None:
                    self._ack_due = now + self.config.ack_delay
            else:
                self._unacked = True

    def _wants_ack(self, message: Message) -> bool:
        """Whether a received event is answered with an ack at once.

        Acks make events final fast, and only claims race: a tableau move is acked at once
        only while a claim held here, timed at or after it, waits for everyone to announce
        holding it. Other moves are announced by the next ack or beat; a claim of ours
        announces them at once (_emit). Acking every move made the acks grow with the square
        of the table and doubled the traffic, for no claim made final sooner (issue #4).
        """
        if message.kind is not _MOVE:
            return True
        lamport = message.lamport
        for event in reversed(self._nonfinal):  # by Lamport time, the latest first
            if event.lamport < lamport:
                return False
            if event.kind is _CLAIM:
                return True
        return False

    def _credit(self, r: int, q: int) -> None:
        """Credit member ``r`` with the part of ``q``'s feed it announced before we held it,
        once we do and the ids match (a mismatch is left to ``r``'s next beat, which then
        shows the fork)."""
        entry = self._uncredited[r].get(q)
        if entry is None or entry[0] > len(self._feeds[q]):
            return
        del self._uncredited[r][q]
        h, prefix = entry
        if self._feeds[q][h - 1].id[:ID_PREFIX] == prefix:
            held = self._held_by[r]
            self._note_held(r, (*held[:q], max(held[q], h), *held[q + 1 :]))

    def _note_held(self, seat: int, held: tuple[int, ...]) -> None:
        old = self._held_by[seat]
        if held != old and any(h > o for h, o in zip(held, old, strict=True)):
            self._held_by[seat] = tuple(max(h, o) for h, o in zip(held, old, strict=True))
            self._dirty = True

    def _beat_is_sound(self, seat: int, message: Message, beat: Beat, now: float) -> bool:
        """Check a beat against the events we hold of its author, before it changes anything."""
        feed = self._feeds[seat]
        if 0 < beat.head_seq <= len(feed) and feed[beat.head_seq - 1].id != beat.head_id:
            # The author signed a head that is not the event we hold: it forked.
            self._reject("fork", f"seat {seat} announces another event {beat.head_seq}")
            return False
        if len(feed) > beat.head_seq and feed[beat.head_seq].lamport <= message.lamport:
            # It announced clock L with head h, yet signed event h+1 at or below L: a lie about
            # time, which could rewrite what others already took as final. Proof: both.
            self._clock_lie(seat, message, feed[beat.head_seq], now)
            return False
        waiting = self._pending[seat].get(len(feed) + 1) if self._pending[seat] else None
        if (
            waiting is not None
            and waiting[0].seq > beat.head_seq
            and waiting[0].lamport <= message.lamport
        ):
            # The same with the next event, come before the beat and waiting for its turn (one
            # further on is checked when its turn comes: _chain_problem, check 1).
            del self._pending[seat][len(feed) + 1]
            self._clock_lie(seat, message, waiting[0], now)
            return False
        return True

    def _watch_beat(self, seat: int, message: Message, head: int) -> None:
        """Keep a sound beat of ``seat`` announcing ``head`` to check its later events against:
        one timed at or below it with a seq above ``head`` proves a lie about time (§9.4)."""
        if head < len(self._feeds[seat]) or seat in self._forked_at:
            return  # checked against the event after its head already (_beat_is_sound)
        watch = self._watch[seat]
        lamport = message.lamport
        below = bisect.bisect_right(watch, head, key=_head)
        if below and watch[below - 1][1] >= lamport:
            return  # a kept beat with a head as low and a time as high catches all it would
        start = bisect.bisect_left(watch, head, key=_head)
        end = start
        while end < len(watch) and watch[end][1] <= lamport:
            end += 1  # kept beats this one now catches every lie of (head as low, time higher)
        if start == end and len(watch) >= self.config.max_pending:
            return  # bounded memory: a member announcing that many heads ahead is stalling
        watch[start:end] = [(head, lamport, message)]

    def _watched_lie(self, seat: int, message: Message) -> Message | None:
        """A kept beat of ``seat`` that the event ``message`` contradicts (a head below its seq,
        a time at or above its own), if any: the one with the highest such head."""
        watch = self._watch[seat]
        below = bisect.bisect_left(watch, message.seq, key=_head)
        if below and watch[below - 1][1] >= message.lamport:
            return watch[below - 1][2]
        return None

    def _take_beat(self, seat: int, lamport: int, beat: Beat, now: float) -> None:
        feeds = self._feeds
        feed = feeds[seat]
        if lamport > self._announced[seat][0]:
            self._announced[seat] = (lamport, beat.head_seq)
        if beat.head_seq <= len(feed) and lamport > self._known[seat]:
            self._known[seat] = lamport
            self._dirty = True
        # One pass over the feeds does what the beat says of each: what the author claims to
        # hold (and the most any member claims), its cover, and the gaps it shows.
        #
        # Cover is credited only where the other peer's chain is known to be ours: the id of
        # an event names its whole chain (each event hashes the previous id), so a matching id
        # at the seq it announces proves the same chain up to there. A count beyond what we
        # hold cannot be checked yet: it is credited once we hold that far and it matches.
        #
        # Nor is cover credited before we hold the author's own feed up to the head the beat
        # announces: its votes and withdrawals there decide what its cover may make final (a
        # withdrawal lifts caps, §9.2; soak seed 1826: the cover of the votes' target came
        # before the withdrawal that let an earlier vote count, and the final fold took that
        # vote as capped). It is credited once that feed is here (_deliver).
        early = beat.head_seq > len(feed)
        if early:
            stashed = self._early[seat]
            if stashed is None or stashed[1].head_seq <= beat.head_seq:
                self._early[seat] = (lamport, beat)
        claimed = self._claimed[seat]
        claims_more = False
        most = self._claimed_most
        old = self._held_by[seat]
        held = list(old)
        ahead = []  # the feeds it holds more of than we do
        for q, (h, prefix) in enumerate(zip(beat.held, beat.held_ids, strict=True)):
            if h > claimed[q]:
                claims_more = True
                most[q] = max(most[q], h)
            ours = feeds[q]
            if h > len(ours):
                ahead.append(q)
                if early:
                    continue
                # Not here yet (a beat relayed by a third peer can overtake the events, on
                # their way from their author): credited when they are (_credit). Without
                # that, a claim waited here for the beat's author to beat again.
                if h > self._uncredited[seat].get(q, (0, b""))[0]:
                    self._uncredited[seat][q] = (h, prefix)
                continue
            if h and ours[h - 1].id[:ID_PREFIX] != prefix:
                # It holds another event under that seq: the author forked. Do not count its
                # cover, and fetch its versions since the last agreed seq: the earliest pair
                # of different signed events is the proof (once the author's drop is final
                # here, the chain that counts is settled: nothing more to prove).
                if q not in self._final.dropped and now >= self._want_at[q]:
                    self._want_at[q] = now + self.config.want_interval
                    first = min(max(old[q], 0) + 1, h)
                    self._out.append(Send(self._want_wire(q, first, h), self.spec.peer_ids[seat]))
                continue
            if early:
                continue  # (the fork above is checked all the same: it is how we learn one)
            held[q] = max(held[q], h)
        if claims_more:
            self._claimed[seat] = tuple(map(max, beat.held, claimed))
            self._dirty = True
        raised = tuple(held)  # (each item only raised above: as _note_held would do)
        if raised != old:
            self._held_by[seat] = raised
            self._dirty = True
        # Gap repair: whoever holds more of a feed than we do can send it.
        for q in ahead:
            count = beat.held[q]
            upto = min(count, self._final.dropped.get(q, count))  # past a final cut: nothing
            if upto > len(feeds[q]):
                self._gap(q, upto, self.spec.peer_ids[seat], now)
        if beat.head_seq > len(feed):
            self._gap(seat, beat.head_seq, self.spec.peer_ids[seat], now)

    def _gap(self, seat: int, upto: int, source: PeerId, now: float) -> None:
        """``source`` holds ``seat``'s feed up to ``upto``: ask it for the rest now, or after
        ``want_delay`` if it has not come by then (:meth:`_repair`)."""
        if self.config.want_delay <= 0:
            self._want(seat, upto, source, now)
            return
        due, known, _ = self._gaps.get(seat, (now + self.config.want_delay, 0, source))
        if upto > known:
            self._gaps[seat] = (due, upto, source)

    def _repair(self, now: float) -> None:
        """Ask for the gaps still open once their ``want_delay`` has passed."""
        for seat, (due, upto, source) in list(self._gaps.items()):
            if len(self._feeds[seat]) >= upto:
                del self._gaps[seat]  # it came
            elif now >= due:
                del self._gaps[seat]  # asked for now; a later beat reopens it if need be
                self._want(seat, upto, source, now)

    def _want(self, seat: int, upto: int, source: PeerId, now: float) -> None:
        if now < self._want_at[seat]:
            return
        first = len(self._feeds[seat]) + 1
        # Skip what is already waiting in pending.
        while first in self._pending[seat] and first <= upto:
            first += 1
        if first > upto:
            return
        self._want_at[seat] = now + self.config.want_interval
        last = min(upto, first + self.config.max_want - 1)
        self._out.append(Send(self._want_wire(seat, first, last), source))

    def _want_wire(self, seat: int, first: int, last: int) -> bytes:
        return self._sign_beat(Kind.WANT, Want(seat, first, last))

    def _answer_want(self, to: PeerId, want: Want) -> None:
        feed = self._feeds[want.seat]
        last = min(want.last, len(feed), want.first + self.config.max_want - 1)
        for message in feed[want.first - 1 : last]:
            self._out.append(Send(message.wire, to))
            other = self._proofs.get((want.seat, message.seq))
            if other is not None:
                self._out.append(Send(other, to))  # with the proof of its fork
        for (seat, seq), (beat, event) in sorted(self._lie_proofs.items()):
            if seat == want.seat and want.first <= seq <= want.last:
                # A lie about time: the event (which we may not hold) and the beat it
                # contradicts, so that the asker reaches the proof and votes too (§9.4).
                self._out.append(Send(beat, to))
                self._out.append(Send(event, to))

    def _heard_from(self, seat: int, now: float) -> None:
        self._heard[seat] = now
        if seat in self._suspected:
            self._suspected.discard(seat)
            self._out.append(Suspected(seat, False))
        if (
            seat in self._voted
            and not self._recovering  # (heard again later, it is withdrawn then)
            and seat not in self._proven_seats
            and seat not in self._final.dropped
            and seat not in self.tentative.dropped
            and self.tentative.readmitted_at.get(seat) == self._final.readmitted_at.get(seat)
        ):
            # We hear it again: withdraw our vote for silence (it only counts if still needed).
            # A vote on proof of cheating stands.
            del self._voted[seat]
            self._emit(Drop(self._frontier(), seat, 0, DropReason.WITHDRAW), now)

    def _clock_lie(self, seat: int, beat: Message, event: Message, now: float | None) -> None:
        """A beat and a later event of one author that contradict each other's clocks."""
        if (seat, -event.seq) in self._proven or seat == self.seat:
            return
        if self._forked_at.get(seat, event.seq + 1) <= event.seq:
            return  # proven to cheat at or below this seq already: nothing more to prove
        self._proven.add((seat, -event.seq))
        self._lie_proofs[(seat, event.seq)] = (beat.wire, event.wire)
        # As for a fork at that seq: what the event names of its author past it may never be
        # held here (we refused it), and nothing of it from there may count (§9.4).
        self._forked_at[seat] = min(event.seq, self._forked_at.get(seat, event.seq))
        self._cap_dependencies(seat, event.seq - 1)
        self._watch[seat].clear()
        self._out.append(Equivocation(seat, event.seq, beat.wire, event.wire))
        self._out.append(Note.proof(beat.wire, event.wire))  # logged before anything is sent
        self._out.append(Send(beat.wire))
        self._out.append(Send(event.wire))
        self._vote_fork(seat, event.seq, now)

    def _equivocation(self, seat: int, first: Message, second: Message, now: float) -> None:
        if self._restoring:
            # Both versions from our own log: we followed one, then switched to the one a
            # drop kept. What we did about it is in our log (our votes), not to be redone.
            self._forked_at[seat] = min(first.seq, self._forked_at.get(seat, first.seq))
            self._cap_dependencies(seat, first.seq - 1)
            return
        if (seat, first.seq) in self._proven:
            return  # already proven, relayed and voted on
        self._proven.add((seat, first.seq))
        self._proofs[(seat, first.seq)] = second.wire
        self._forked_at[seat] = min(first.seq, self._forked_at.get(seat, first.seq))
        self._cap_dependencies(seat, first.seq - 1)
        self._out.append(Equivocation(seat, first.seq, first.wire, second.wire))
        self._out.append(Note.proof(first.wire, second.wire))  # logged before anything is sent
        # Relay the proof to everyone, and vote the author out before the fork.
        self._out.append(Send(first.wire))
        self._out.append(Send(second.wire))
        self._vote_fork(seat, first.seq, now)

    def _vote_fork(self, seat: int, fork_seq: int, now: float | None) -> None:
        """Vote out an author proven to have forked at ``fork_seq``.

        We count what we have already announced holding (others may have taken it as final),
        and nothing past the fork that we have not; the vote names the version we count.
        """
        if seat in self._voted or seat == self.seat:
            return
        if self._recovering:  # we may sign nothing yet: vote once recovered
            self._deferred_forks.append((seat, fork_seq))
            return
        held = len(self._feeds[seat])
        counted = max(fork_seq - 1, self._announced_held[seat], self._final_count(seat))
        cut = min(held, counted)
        self._voted[seat] = cut
        self._proven_seats.add(seat)
        ids = self._vote_ids(seat, cut)
        self._emit(Drop(self._frontier(), seat, cut, DropReason.EQUIVOCATION, fork_seq, ids), now)

    def _vote_ids(self, seat: int, last: int) -> tuple[bytes, ...]:
        """The id prefixes a vote quotes: our copies of ``seat``'s last events up to ``last``."""
        feed = self._feeds[seat]
        return tuple(m.id[:ID_PREFIX] for m in feed[max(0, last - VOTE_WINDOW) : last])

    def _vote(self, seat: int, reason: DropReason, now: float | None) -> None:
        """Vote ``seat`` out (silent, withheld) counting all we hold, and freeze there.

        Not while we are out ourselves: our votes would not count, and the rejoin request
        unfreezes them at each step (soak seed 1216: a dropped member voted another out for
        withholding ten thousand times)."""
        if self.seat in self._final.dropped:
            return
        last = len(self._feeds[seat])
        self._voted[seat] = last
        self._emit(Drop(self._frontier(), seat, last, reason, 0, self._vote_ids(seat, last)), now)

    # -- finality ---------------------------------------------------------------------------
    def _counts(self, event: Event, state: GameState) -> bool:
        """Whether an event can count in ``state`` (not past a dropped member's cut)."""
        return state.counts(event.seat, event.seq)

    def _admits(
        self,
        event: Event,
        excluded: dict[int, int],
        gaps: dict[int, tuple[tuple[int, int], ...]] | None = None,
    ) -> bool:
        """Whether the final fold takes an event now final: not past the cut of a member
        dropped (``excluded``, which may be decided later in the order, §9.2), unless the member
        was readmitted since; and not in the gap of a member readmitted (``gaps``, as the held
        events decide them, also later in the order: a peer folding a whole game at once, as
        after a restart, learns a member's drop and its readmission together, §9.8)."""
        final = self._final
        seat, seq = event.seat, event.seq
        if not final.counts(seat, seq):
            return False
        if gaps:
            seat_gaps = gaps.get(seat)
            if seat_gaps and any(lo < seq < hi for lo, hi in seat_gaps):
                return False
        limit = excluded.get(seat)
        if limit is None or seq <= limit:
            return True
        # Excluded at its old cut, and readmitted in this very advance: its events from its
        # rejoin request on count again.
        readmitted = final.gaps.get(seat, ())
        if seat in final.dropped or not readmitted:
            return False
        cut, request = readmitted[-1]
        return cut == limit and seq >= request

    def _bounds(self, excluded: dict[int, int], floor: int | None = None) -> int:
        """The stable time if the seats in ``excluded`` (seat -> cut) no longer play.

        That time is the least of many terms: one per member (what we know of its feed), one
        per vote of ours, and one per pair of members (what one is known to hold of the
        other's feed). With a ``floor``, the caller only asks whether the time is above it:
        the term that was the least at the last such call (``_holder``) is tried first, and
        returned if it is still at or below ``floor``. Most inputs make nothing final, and
        what held finality back then usually still does; the full walk is n² steps.
        """
        if floor is not None:
            term = self._holder_term(excluded)
            if term is not None and term <= floor:
                return term  # (some term is at or below floor, so the least one is)
        seat = self.seat
        feeds = self._feeds
        members = [q for q in range(self._n) if q not in excluded]
        # The most of each feed any other member says it holds; kept up to date for all
        # members (_take_beat), computed for a subset.
        most = self._claimed_most if not excluded else None
        holder: tuple[int, int] | None = None
        bound = self.clock  # (nobody left to wait for: everyone else left or was dropped)
        for q in members:
            if q == seat:
                known = self._own_known()
            else:
                known = self._known[q]
                feed = feeds[q]
                if (
                    most[q] > len(feed)
                    if most is not None
                    else any(self._claimed[r][q] > len(feed) for r in members if r != seat)
                ):
                    # Someone holds an event of q that we do not: whatever q's beats said, we
                    # cannot know every event of q up to them until we have it (a beat can lie
                    # about time).
                    known = min(known, feed[-1].lamport if feed else 0)
            if holder is None or known < bound:
                bound, holder = known, (_KNOWN, q)
        for q, seq in self._voted.items() if seat not in excluded else ():
            # Having voted a member out at ``seq``, we count no more of it than our vote does,
            # as we announce no more (the drop's cut may be our count, §9.2). Unless we are
            # out ourselves: the votes of a member dropped no longer count (§9.2), and waiting
            # on ours would never let the drop that put us out be final here (a member asleep
            # past drop_after that wakes and votes against the one that abandoned it).
            feed = feeds[q]
            if q in excluded or len(feed) <= seq:
                continue
            term = feed[seq].lamport - 1
            if term < bound:
                bound, holder = term, (_VOTED, q)
        for r in members:
            if r == seat:
                continue
            held = self._held_by[r]
            for q in members:
                feed = feeds[q]
                h = held[q]
                if h < len(feed):
                    term = feed[h].lamport - 1
                    if term < bound:
                        bound, holder = term, (r, q)
        if floor is not None and holder is not None and bound <= floor:
            self._holder = holder
        return bound

    def _own_known(self) -> int:
        """Every event of ours timed up to here is held: all of them (our clock), except while
        recovering, when others may hold ours past the last one here, timed anywhere above it."""
        if not self._recovering:
            return self.clock
        own = self._feeds[self.seat]
        return own[-1].lamport if own else 0

    def _holder_term(self, excluded: dict[int, int]) -> int | None:
        """The value of the term of :meth:`_bounds` that ``_holder`` names, or ``None`` if it
        is no term now. For a member's own term, a value at least as large."""
        if self._holder is None:
            return None
        r, q = self._holder
        if q in excluded:
            return None
        feed = self._feeds[q]
        if r == _KNOWN:
            if q == self.seat:
                return self._own_known()
            known = self._known[q]
            if not excluded and self._claimed_most[q] > len(feed):
                known = min(known, feed[-1].lamport if feed else 0)
            return known  # (with seats excluded, the term may be lower than this)
        if r == _VOTED:
            seq = self._voted.get(q)
            if seq is None or len(feed) <= seq or self.seat in excluded:
                return None  # (no term: see _bounds)
            return feed[seq].lamport - 1
        if r in excluded:
            return None
        h = self._held_by[r][q]
        return feed[h].lamport - 1 if h < len(feed) else None

    def _cap_dependencies(self, seat: int, upto: int) -> None:
        """Events may be delivered once ``seat``'s feed is held up to ``upto``, whatever more
        of it their frontier names (a forked or dropped feed: the rest may never come)."""
        if upto < self._dep_cap.get(seat, upto + 1):
            self._dep_cap[seat] = upto
            self._dirty = True
            self._redrain = True

    def _final_count(self, seat: int) -> int:
        """How many events of ``seat``'s feed are final here (its times increase along it)."""
        feed = self._feeds[seat]
        return bisect.bisect_right([m.lamport for m in feed], self.stable)

    def _truncate(self, seat: int, keep: int) -> None:
        """Give up ``seat``'s events after ``keep`` (not final: another chain counts)."""
        feed = self._feeds[seat]
        # Final events are on every chain that counts; final by their time but never counted
        # (past a cut, in a readmitted member's gap) they may go.
        floor = self._final_count(seat)
        final = self._final
        cut = final.dropped.get(seat)
        if cut is not None and floor > cut:
            floor = cut
        for lo, hi in final.gaps.get(seat, ()):
            if lo < floor < hi:
                floor = lo
        keep = max(keep, floor)
        if keep >= len(feed):
            return
        del feed[keep:]
        kept = [e for e in self._nonfinal if not (e.seat == seat and e.seq > keep)]
        self._nonfinal = kept
        self._nonfinal_keys = [e.key for e in kept]
        self._tentative = None
        self._dirty = True
        self._redrain = True
        self._want_at[seat] = 0.0

    def _follow_rejoined(self, state: GameState) -> None:
        """Follow the chain a readmission names of the member it readmits (§9.8): give up our
        copy from the first quoted event that is not on it, and fetch that chain.

        The member may have forked while it was out (a version sent to us alone, its real
        event lost in a partition): the fork lies in its gap, where nothing counts, but we
        could never take its feed further, nor anything that follows from it (soak seed
        442). The readmission quotes the ids of the chain its author holds, up to the rejoin
        request: that chain is the one every member follows from then on."""
        for seat, quoted in state.rejoin_ids.items():
            if seat == self.seat or self._rejoin_seen.get(seat) == quoted:
                continue
            self._rejoin_seen[seat] = quoted
            required = self._required.setdefault(seat, {})
            for q, prefix in quoted.items():
                required.setdefault(q, prefix)
            feed = self._feeds[seat]
            bad = [q for q in quoted if q <= len(feed) and not _matches(quoted, q, feed[q - 1].id)]
            if bad:
                self._truncate(seat, min(bad) - 1)
            pending = self._pending[seat]
            for q in [q for q, (m, _, _) in pending.items() if not _matches(quoted, q, m.id)]:
                del pending[q]

    def _follow_kept(self, state: GameState) -> None:
        """Follow the chain a drop keeps of a member that forked (or any dropped member): give
        up our copy from the first event that is not on it, and fetch the kept one (§9.4).

        Ours was never final past the point where the chains part (the holders of the kept
        chain never announced ours, so it was never covered)."""
        for seat, kept in state.kept_forks.items():
            if seat == self.seat or self._kept_seen.get(seat) == kept:
                continue
            self._follow_chain(seat, kept, dict(state.kept_ids.get(seat, {})))

    def _follow_chain(self, seat: int, kept: tuple[int, bytes], required: dict[int, bytes]) -> None:
        """Follow ``required`` (seq -> id prefix) of ``seat``'s feed, up to ``kept``."""
        self._kept_seen[seat] = kept
        self._required[seat] = required
        self._cap_dependencies(seat, kept[0])
        feed = self._feeds[seat]
        held = len(feed)
        bad = [q for q in required if q <= held and not _matches(required, q, feed[q - 1].id)]
        if bad:
            self._truncate(seat, min(bad) - 1)
        pending = self._pending[seat]
        for q in [q for q, (m, _, _) in pending.items() if not _matches(required, q, m.id)]:
            del pending[q]

    def _follow_voted(self, state: GameState) -> None:
        """Follow the chain the counted votes quote of a member proven here to fork, before
        its drop is decided here, where ours is the other version (§9.4).

        The drop may wait on an event of that chain: one of the member's own votes, against
        us, that a majority counted while we slept (soak seed 893: we never took the chain
        the drop keeps, so never the vote that dropped us, so never the drop that keeps it).
        Ours was never final past the fork: the voters hold another version and announce
        theirs. Our own vote, if it counts, quotes ours, and the chain then stops below the
        split (:func:`~p2p_nertz.protocol.state.vote_cut`): nothing to follow.
        """
        for seat, fork in self._forked_at.items():
            if seat == self.seat or seat in state.dropped:
                continue
            ballots = tuple(
                b for voter, b in state.votes.get(seat, ()) if voter not in state.dropped
            )
            if not ballots:
                continue
            cut, chain = st.vote_cut(ballots)
            if cut < fork or cut not in chain or self._kept_seen.get(seat) == (cut, chain[cut]):
                continue
            feed = self._feeds[seat]
            if any(
                fork <= q <= len(feed) and not _matches(chain, q, feed[q - 1].id) for q in chain
            ):
                self._follow_chain(seat, (cut, chain[cut]), chain)

    def _advance_final(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        final = self._final
        excluded = dict(final.dropped)
        tentative = self.tentative if self._votes_held else final
        if self._votes_held:
            for q, cut in tentative.dropped.items():
                self._cap_dependencies(q, cut)
        if tentative.kept_forks:
            self._follow_kept(tentative)
            tentative = self.tentative
        if self._forked_at and tentative.votes:
            self._follow_voted(tentative)
            tentative = self.tentative
        if tentative.rejoin_ids:
            self._follow_rejoined(tentative)
            tentative = self.tentative
        # The votes the held events show can never count, the final fold does not count either.
        final.vote_caps = dict(tentative.vote_caps)
        # Seats the held votes drop (at a point the others' feeds make final) no longer hold
        # finality back, once their events up to the cut are here. Try them all together (a
        # partition drops several at once), then give up those whose drop is not yet final.
        candidates = (
            {
                q: cut
                for q, cut in tentative.dropped.items()
                if q not in excluded and len(self._feeds[q]) >= cut
            }
            if tentative.dropped
            else {}
        )
        for q, at in tentative.readmitted_at.items():
            # Dropped and readmitted since, both held and neither final (a restart reads a
            # whole game at once): out from its drop to its readmission, as below. Left in,
            # our own vote against it (read back from the log) would hold finality below its
            # drop for good (soak seed 145).
            if q in excluded or q in tentative.dropped or final.readmitted_at.get(q) == at:
                continue
            cut = tentative.gaps[q][-1][0]
            if len(self._feeds[q]) >= cut:
                candidates[q] = cut
        while candidates:
            trial = excluded | candidates
            bound = self._bounds(trial)
            late = [q for q in candidates if tentative.drop_at.get(q, 0) > bound]
            if not late:
                excluded = trial
                break
            for q in late:
                del candidates[q]
        stable = self._bounds(excluded, self.stable)
        for q, cut in tentative.dropped.items() if tentative.dropped else ():
            # A drop the held votes decide, not final yet: the member's events past its cut
            # must not be final before it is, or the drop, once final, would cut events
            # already taken (soak seed 1216: both voters had withdrawn after the votes that
            # decided it, each before holding the other's vote).
            feed = self._feeds[q]
            if q not in excluded and cut < len(feed):
                stable = min(stable, feed[cut].lamport - 1)
        if stable <= self.stable:
            return  # (the readmissions below could only lower it)
        for q, at in tentative.readmitted_at.items():
            if q in excluded and q not in tentative.dropped:
                # Readmitted at time ``at`` (held here, not final yet): a member again for
                # everything after it.
                rest = {k: v for k, v in excluded.items() if k != q}
                stable = min(stable, max(at, self._bounds(rest)))
        if stable <= self.stable:
            return
        self.stable = max(self.stable, stable)
        moved = 0
        for event in self._nonfinal:
            if event.lamport > self.stable:
                break
            moved += 1
            if not self._admits(event, excluded, tentative.gaps):
                self._tentative = None  # the tentative fold counted it; this one never will
                self._out.extend(final.observe(event))
                continue
            self._out.extend(final.apply(event))
        if moved:
            del self._nonfinal[:moved]
            del self._nonfinal_keys[:moved]
            self._readmitted()
            self._act()

    def _readmitted(self) -> None:
        """A member readmitted in the final fold: we announce its feed again, and wait for it."""
        final = self._final
        for q, at in final.readmitted_at.items():
            if (q, at) in self._readmissions or q in final.dropped:
                continue
            self._readmissions.add((q, at))
            self._voted.pop(q, None)
            self._proven_seats.discard(q)
            self._dep_cap.pop(q, None)
            self._unproven.pop(q, None)
            self._dirty = True
            self._redrain = True
            if q in self._forked_at:
                # Back in the game, and proven to have forked while out (its readmission came
                # before the proof): it is voted out as a cheater now (soak seed 544).
                self._vote_fork(q, self._forked_at[q], None)

    # -- acting on the final state ----------------------------------------------------------
    def _act(self) -> None:
        """Emit the phase events the final state now calls for."""
        if self._recovering:
            return  # nothing is signed before our own feed is known (_check_recovered acts)
        final = self._final
        rs = final.round
        seat = self.seat
        if final.abandoned is not None:
            self._answer_abandon()
        if seat in final.dropped:
            self._ask_rejoin()
            return
        if seat not in rs.seats or seat in rs.forfeit:
            return
        n = rs.number
        phase = final.phase
        if phase is Phase.COMMIT and not self._is_done(Kind.COMMIT, n):
            self._emit(
                Commit(
                    self._frontier(),
                    n,
                    st.secret_hash(self._secret(n)),
                    st.nonce_hash(self._nonce(n)),
                ),
                None,
            )
        elif phase is Phase.NONCE and not self._is_done(Kind.REVEAL, n, RevealWhat.NONCE):
            self._emit(Reveal(self._frontier(), n, RevealWhat.NONCE, self._nonce(n)), None)
        elif (
            phase is Phase.PLAY
            and not self._is_done(Kind.READY, n)
            and (self.ready_through is None or n <= self.ready_through)
        ):
            assert rs.randomness is not None
            deck = shuffled_deck(
                st.deck_seed(self._secret(n), rs.randomness, n), self.spec.rules.jokers
            )
            t = Tableau.deal(deck, self.spec.rules)
            visible = (t.nerts[-1], *(p[-1] for p in t.work))
            self._emit(Ready(self._frontier(), n, visible), None)
        elif phase is Phase.REVEAL and not self._is_done(Kind.REVEAL, n, RevealWhat.SECRET):
            self._emit(Reveal(self._frontier(), n, RevealWhat.SECRET, self._secret(n)), None)
        elif phase is Phase.RESULT and not self._is_done(Kind.RESULT, n):
            assert rs.expected is not None and rs.digest is not None
            scores = tuple(p.total for p in rs.expected.players)
            self._emit(Result(self._frontier(), n, rs.digest, scores), None)

    def _answer_abandon(self) -> None:
        """The other member abandoned the game while we were cut off: sign our own abandon.

        Its frontier shows what we held; the fold counts the rounds both abandons saw scored
        (§9.3), so this settles the result on both sides (the other may have counted a round
        whose last result never reached us). Once only: an abandon of ours already does it.
        """
        final = self._final
        assert final.abandoned is not None
        author, absent = final.abandoned
        if absent != self.seat or (self.seat, author) in final.abandons:
            return
        if any(
            m.kind is Kind.DROP
            and isinstance(body := parse_body(m.kind, m.body, self._n), Drop)
            and body.reason is DropReason.ABANDON
            for m in self._feeds[self.seat]
        ):
            return  # signed already (not yet read back by the fold)
        held = len(self._feeds[author])
        self._emit(
            Drop(
                self._frontier(),
                author,
                held,
                DropReason.ABANDON,
                0,
                self._vote_ids(author, held),
            ),
            None,
        )

    def _ask_rejoin(self) -> None:
        """We were dropped (our final fold says so): ask to rejoin at the next round, once.

        Not after a leave or a drop for cheating (the fold refuses those), nor in a game over.
        Our own votes no longer count (we were out): our announcements unfreeze."""
        final = self._final
        seat = self.seat
        cut = final.dropped[seat]
        for q in [q for q in self._voted if q not in final.dropped]:
            del self._voted[q]
        if (
            not self.config.rejoin
            or final.phase is Phase.OVER
            or seat in final.left
            or seat in final.rejoining
            or any(v.reason is DropReason.EQUIVOCATION for _, v in final.votes.get(seat, ()))
            or any(m.kind is Kind.JOIN for m in self._feeds[seat][cut:])
        ):
            return
        self._emit(Join(self._frontier()), None)

    def _sponsor_rejoins(self, now: float) -> None:
        """Readmit a dropped member whose rejoin request we hold (an event of ours counts,
        its request does not, §9.7)."""
        final = self._final
        if self.seat in final.dropped or final.phase is Phase.OVER:
            return
        for q, request in self._rejoin_requests.items():
            if (q, request) in self._sponsored or q not in final.dropped:
                continue
            if q in final.rejoining or request <= final.dropped[q]:
                continue
            if q in self._forked_at:
                # Proven to fork while it was out (two versions of one of its events, in its
                # gap): a cheater does not come back (§9.8), whether or not what it forked
                # would have counted (soak seed 544).
                continue
            self._sponsored.add((q, request))
            ids = self._vote_ids(q, request)
            self._emit(Drop(self._frontier(), q, request, DropReason.REJOIN, 0, ids), now)

    def _is_done(self, kind: Kind, number: int, what: int = 0) -> bool:
        return (int(kind), number, int(what)) in self._done

    def _mark_done(self, kind: Kind, body: object) -> None:
        number = getattr(body, "round", 0)
        what = int(body.what) if isinstance(body, Reveal) else 0
        self._done.add((int(kind), number, what))

    # -- sending ----------------------------------------------------------------------------
    def _frontier(self) -> tuple[int, ...]:
        """What we announce holding: everything, except past our vote for a suspect."""
        held = [len(f) for f in self._feeds]
        dropped = self._final.dropped
        for q, seq in self._voted.items():
            # Once the drop is final its cut counts, whatever our vote said: a claim on a card
            # the member played between our vote and the cut must show it saw that card
            # (soak seed 2449: every claim on it lost, forever).
            cut = dropped.get(q)
            held[q] = min(held[q], seq if cut is None else max(seq, cut))
        announced = self._announced_held
        for q, h in enumerate(held):
            announced[q] = max(announced[q], h)
        return tuple(held)

    def _emit(self, body: EventBody, now: float | None) -> None:
        """Sign one of our events, log it, send it, and deliver it to ourselves."""
        kind = kind_of(body)
        feed = self._feeds[self.seat]
        seq = len(feed) + 1
        frontier = list(body.frontier)
        frontier[self.seat] = seq - 1
        body = _with_frontier(body, tuple(frontier))
        self.clock += 1
        for q in range(self._n):
            if frontier[q]:
                self.clock = max(self.clock, self._feeds[q][frontier[q] - 1].lamport + 1)
        self._reserve(self.clock)
        wire = encode_message(
            self.identity,
            game_id=self.game_id,
            seq=seq,
            prev=feed[-1].id if feed else None,
            lamport=self.clock,
            kind=kind,
            body=encode_body(body),
            cache=self._envelopes,
        )
        self._mark_done(kind, body)
        # The local event takes the remote path: decoded, verified, delivered (DESIGN.md §1).
        message = decode_message(
            wire, game_id=self.game_id, roster=self._roster, cache=self._envelopes
        )
        self._out.append(Record(wire, own=True))
        self._out.append(Send(wire))
        self._last_sent = now if now is not None else self._last_sent
        self._deliver(self.seat, message, body, now or 0.0, restoring=True)
        if kind in _ANNOUNCING and self._unacked and now is not None:
            # Our claim (or a pass, which may complete an everyone-stuck rotation that holds
            # the waste and stock until final, or a Nerts call, which ends the round) is
            # final once everyone has announced holding what we hold below it, we included:
            # announce the moves we held without acking them, not at our next beat.
            self._ack_due = now

    def _reserve(self, clock: int) -> None:
        if clock > self._reserved:
            self._reserved = clock + self.config.clock_reserve
            self._out.append(Reserve(self._reserved))

    def _sign_beat(self, kind: Kind, body: Beat | Want) -> bytes:
        self.clock += 1
        self._dirty = True
        self._reserve(self.clock)
        return encode_message(
            self.identity,
            game_id=self.game_id,
            seq=0,
            prev=None,
            lamport=self.clock,
            kind=kind,
            body=encode_body(body),
            cache=self._envelopes,
        )

    def _beat(self, kind: Kind, now: float) -> None:
        feed = self._feeds[self.seat]
        head = feed[-1].id if feed else None
        held = self._frontier()
        ids = tuple(self._feeds[q][h - 1].id[:ID_PREFIX] if h else b"" for q, h in enumerate(held))
        self._out.append(Send(self._sign_beat(kind, Beat(len(feed), head, held, ids))))
        self._last_sent = now
        self._ack_due = None
        self._unacked = False

    def _flush(self, now: float) -> list[Effect]:
        """Finish one input: finality, phase actions, timers; return the effects."""
        self._advance_final()
        while self._redrain:
            self._drain(now)
            self._advance_final()
        phase = (self._final.phase, self._final.round.number)
        if phase != self._phase_key:
            self._phase_key = phase
            self._phase_since = now
        self._liveness(now)
        if self._gaps:
            self._repair(now)
        if self._recovering:
            self._check_recovered(now)
        if self._recovering:
            # No beat or ack: it would name a head below what others may hold of ours. A want
            # for our own events instead, as often as a beat.
            self._ack_due = None
            if now >= self._last_sent + self.config.beat_interval:
                self._recovery_want(now)
        elif self._ack_due is not None and now >= self._ack_due:
            self._beat(Kind.ACK, now)
        elif now >= self._last_sent + self.config.beat_interval:  # the deadline's own sum
            self._beat(Kind.BEAT, now)
        out, self._out = self._out, []
        return out

    def _liveness(self, now: float) -> None:
        final = self._final
        if self._recovering:
            return  # no vote, no readmission before our own feed is known (§9.6)
        if self._rejoin_requests:
            self._sponsor_rejoins(now)
        for q, fork_seq in list(self._unproven.items()) if self._unproven else ():
            if (q, fork_seq) in self._proven or q in self._voted or q in final.dropped:
                del self._unproven[q]
            elif now >= self._probe_at[q]:
                # Another member voted on proof we do not have: ask everyone for their version
                # of that seq (one holding another version than ours sends the proof).
                self._probe_at[q] = now + self.config.beat_interval
                self._out.append(Send(self._want_wire(q, fork_seq, fork_seq)))
        self._track_silence(now)
        blame_from = self._blame_from(self._phase_since)
        if (
            final.phase in _WAITING_PHASES
            and blame_from is not None
            and now >= blame_from + self.config.phase_timeout
        ):
            # Connected but withholding what the round waits for (a nonce, a secret, a result):
            # DESIGN.md §5.2 makes that a forfeit; a majority's votes drop the seat.
            for q in sorted(final.waiting()):
                if q != self.seat and q not in self._voted:
                    self._proven_seats.add(q)  # not withdrawn when heard: it is heard
                    self._vote(q, DropReason.WITHHELD, now)
        if now >= self._stall_scan_at:
            self._stall_scan_at = now + self.config.beat_interval
            self._scan_stalls(now)
        config = self.config
        others = self._heard[: self.seat] + self._heard[self.seat + 1 :]
        if not others or now < min(others) + min(config.suspect_after, config.drop_after):
            # No other member has been silent long enough for anything below (a float sum
            # does not decrease when a term grows: each sum below is at least this one).
            return
        for q in range(self._n):
            if q == self.seat or q in final.dropped:
                continue
            # Compare with the same sums next_deadline() returns, or a float rounding could
            # leave a deadline that is due but never acted on.
            heard = self._heard[q]
            if now >= heard + self.config.suspect_after and q not in self._suspected:
                self._suspected.add(q)
                self._out.append(Suspected(q, True))
            if now >= heard + self.config.drop_after and q not in self._voted:
                self._vote(q, DropReason.SILENT, now)

    def _track_silence(self, now: float) -> None:
        """Keep :attr:`_all_heard_since` up to date: whether a member still in is silent now."""
        dropped = self._final.dropped
        limit = self.config.suspect_after
        silent = any(
            now >= self._heard[q] + limit
            for q in range(self._n)
            if q != self.seat and q not in dropped
        )
        if silent:
            self._all_heard_since = None
        elif self._all_heard_since is None:
            self._all_heard_since = now

    def _blame_from(self, since: float) -> float | None:
        """When a wait that began at ``since`` starts to count against the members it waits for:
        not before every member still in has been heard again (None: one is silent now).

        A member that is silent to us may be holding back the others' finality as well as ours
        (a partition, a crash): what they owe us then waits on it, not on them. Blaming them
        for it made both sides of a healed partition vote each other out for withholding, votes
        that stand, and no majority ever formed (soak seed 229). The silence timers deal with
        the silent member first; the waits count once it is heard again or dropped.
        """
        if self._all_heard_since is None:
            return None
        return max(since, self._all_heard_since)

    def _scan_stalls(self, now: float) -> None:
        """Vote out a member that keeps talking while finality waits for it (§9.2).

        A member that beats is never suspected; if what it owes never comes, it would hold
        every peer's finality back forever. What it owes is what only it can give: its events
        up to the head it announced itself, and its announcements of holding the events held
        here (of feeds it has not voted out). A wait that sees no progress on what was owed when
        it began, while the member is heard, for ``phase_timeout``, is a vote *withheld*: it
        stands when the member beats again. (Its events and cover come from it alone; any
        honest member sends them within a round trip, or fetches what it lacks from us.)
        """
        final = self._final
        if final.phase is Phase.OVER or self.seat in final.dropped or self._all_heard_since is None:
            self._stall.clear()  # (a member is silent: nobody is blamed for now, _blame_from)
            return
        config = self.config
        feeds = self._feeds
        members = [q for q in range(self._n) if q not in final.dropped]
        for q in [q for q in self._stall if q in final.dropped]:
            del self._stall[q]  # out of the game: it owes nothing
        for q in members:
            if q == self.seat:
                continue
            if q in self._suspected or now >= self._heard[q] + config.suspect_after:
                self._stall.pop(q, None)  # silent, not talking: the silence timers apply
                continue
            owed_feed = max(self._announced[q][1], self._claimed[q][q])
            if owed_feed <= len(feeds[q]):
                owed_feed = 0
            held = self._held_by[q]
            # What of each feed it must cover now: up to what we count of it (no more than our
            # vote, nor a held drop's cut), unless it voted that member out (it then announces
            # no more than its vote). Worked out afresh at each scan: a target set earlier on a
            # feed that stopped counting (a member dropped, or voted out by it) is met.
            due = []
            for r in range(self._n):
                count = 0
                if r != q and r in members:
                    count = min(
                        len(feeds[r]),
                        self._voted.get(r, len(feeds[r])),
                        self.tentative.dropped.get(r, len(feeds[r])),
                    )
                    if held[r] < count and any(v == q for v, _ in self.tentative.votes.get(r, ())):
                        count = 0
                due.append(count)
            owed_cover = tuple(d if held[r] < d else 0 for r, d in enumerate(due))
            owes = owed_feed > 0 or any(owed_cover)
            record = self._stall.get(q)
            if record is not None:
                _, feed_target, cover_target = record
                progress = len(feeds[q]) >= feed_target and all(
                    h >= min(c, d) for h, c, d in zip(held, cover_target, due, strict=True)
                )
                if not progress:
                    if now >= record[0] + config.phase_timeout and q not in self._voted:
                        self._proven_seats.add(q)  # not withdrawn when heard: it is heard
                        self._vote(q, DropReason.WITHHELD, now)
                    continue
            if owes:
                self._stall[q] = (now, owed_feed, owed_cover)
            else:
                self._stall.pop(q, None)

    def _gone_for(self, seat: int, now: float) -> float:
        """How long ``seat`` has counted as gone: silent past ``drop_after``, or talking while
        finality waits for it past ``phase_timeout`` (§9.2). Negative: not gone, and how much
        longer before it is."""
        gone = now - self._heard[seat] - self.config.drop_after
        stall = self._stall.get(seat)
        if stall is not None and now < self._heard[seat] + self.config.suspect_after:
            # (A member silent now is the silence timers' alone, as _scan_stalls says: a wait
            # noted while it still talked does not count, even before the next scan drops it.)
            gone = max(gone, now - stall[0] - self.config.phase_timeout)
        return gone

    @staticmethod
    def _touches(move: Move) -> set[Pile]:
        if move.kind in (MoveKind.TURN, MoveKind.ROTATE):
            return {Pile.WASTE}
        if move.kind is MoveKind.CALL:
            return {Pile.NERTS}
        touched = set()
        if move.source is not None:
            touched.add(move.source)
        if move.target is not None and move.target is not Pile.LAKE:
            touched.add(move.target)
        return touched


#: How many times at most the tentative fold is made again (each time with more of what it
#: found; in the soaks it settles in one or two).
_REFOLDS = 6


def _after_gap(gaps: tuple[tuple[int, int], ...] | None, cut: int) -> int:
    """The first seq that counts again after ``cut``: the rejoin request of the gap that starts
    there, if the member was readmitted, else never."""
    for lo, hi in gaps or ():
        if lo == cut:
            return hi
    return 1 << 63


def _head(entry: tuple[int, int, Message]) -> int:
    """The head seq of a kept beat (Peer._watch)."""
    return entry[0]


def _matches(required: dict[int, bytes], seq: int, message_id: bytes) -> bool:
    """Whether an event id is the one (or has the prefix) ``required`` names at ``seq``."""
    want = required.get(seq)
    return want is None or message_id[: len(want)] == want


def _with_frontier(body: EventBody, frontier: tuple[int, ...]) -> EventBody:
    """The same body with another frontier (all event bodies carry one)."""
    return dataclasses.replace(body, frontier=frontier)
