"""The game as a deterministic fold over events in their total order.

Theory of operation
-------------------
Every peer holds some set of signed events. :class:`GameState` folds them, one at a time, in
the total order ``(lamport, seat, seq)`` (DESIGN.md §3): the same events in the same order give
the same state on every machine, whatever order the bytes arrived in. The peer keeps two folds:
the *final* one over the events it knows to be stable (never rolled back), and a *tentative* one,
recomputed from the final state whenever an event arrives out of order (GGPO's rollback).

The fold drives the whole game (DESIGN.md §5):

``joining`` every member's first event is a ``join``;
``commit`` each seat of the round commits ``H(secret)`` and ``H(nonce)``;
``nonce`` once all commits are in, each reveals its nonce; ``R = H(nonces)``;
``play`` each seat publishes its dealt face-up cards (``ready``) and plays: moves, claims,
    stuck, Nerts. Tableaux of other seats are followed with their hidden cards as
    :data:`~p2p_nertz.rules.cards.HIDDEN`, filled in as moves reveal them;
``reveal`` the round is over (Nerts at ``T*``, or blocked); each reveals its secret, and
    every seat's moves are replayed against the deck the secret gives: every revealed card
    must be the card the deck says;
``result`` each seat publishes the lake digest and the scores, which must be the fold's own;
``over`` the game has a result.

An event that is well signed and well formed but wrong *here* (an illegal move, a card its
owner does not have where it says, a reveal that does not match its commit) changes nothing and
is recorded as a :class:`Violation`, the same on every peer. A seat whose deal cannot be
verified (a stacked or withheld deck) forfeits the round: it scores as if its whole Nerts pile
were left and it had no card in the lake.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field

from p2p_nertz.errors import IllegalMoveError, NertzError
from p2p_nertz.protocol.bodies import (
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
)
from p2p_nertz.protocol.envelope import KIND_JOIN, Kind
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import (
    NERTS_PILE_SIZE,
    Card,
    FoundationId,
    Game,
    GameResult,
    Move,
    MoveKind,
    Outcome,
    Resolution,
    RoundScore,
    RoundStatus,
    Rules,
    Table,
    Tableau,
    Termination,
    new_deck,
    shuffled_deck,
)
from p2p_nertz.rules.cards import HIDDEN
from p2p_nertz.rules.lake import OUTCOME_TIED, Claim
from p2p_nertz.rules.moves import MOVE_CALL, MOVE_PASS, MOVE_TURN
from p2p_nertz.rules.table import STATUS_NERTS

__all__ = [
    "DeckProblem",
    "Event",
    "GameState",
    "Phase",
    "Reason",
    "RefusalCode",
    "Violation",
    "deck_seed",
    "local_nonce",
    "local_secret",
    "nonce_hash",
    "replay_round",
    "replay_seat",
    "round_randomness",
    "capped",
    "secret_hash",
    "seat_deck",
    "voted_chain",
    "with_forks",
]


# -- the fair deal's hashes (DESIGN.md §5.2) --------------------------------------------------
def secret_hash(secret: bytes) -> bytes:
    """The commitment to a round secret."""
    return hashlib.sha256(b"p2p-nertz/v1/secret\0" + secret).digest()


def nonce_hash(nonce: bytes) -> bytes:
    """The commitment to a round nonce."""
    return hashlib.sha256(b"p2p-nertz/v1/nonce\0" + nonce).digest()


def round_randomness(nonces: list[bytes]) -> bytes:
    """``R = H(all nonces)``, in seat order."""
    return hashlib.sha256(b"p2p-nertz/v1/R\0" + b"".join(nonces)).digest()


def deck_seed(secret: bytes, randomness: bytes, number: int) -> bytes:
    """The seed of a seat's deck for a round: ``H(secret, R, round)``."""
    return hashlib.sha256(
        b"p2p-nertz/v1/deck\0" + secret + randomness + number.to_bytes(4, "big")
    ).digest()


def local_secret(private_key: bytes, game_id: bytes, number: int) -> bytes:
    """A seat's secret for a round, derived from its private key (so a restart knows it)."""
    return hmac.new(
        private_key, b"secret\0" + game_id + number.to_bytes(4, "big"), "sha256"
    ).digest()


def local_nonce(private_key: bytes, game_id: bytes, number: int) -> bytes:
    """A seat's nonce for a round, derived from its private key."""
    return hmac.new(
        private_key, b"nonce\0" + game_id + number.to_bytes(4, "big"), "sha256"
    ).digest()


class Phase(enum.Enum):
    """Where the game stands (module docstring)."""

    JOINING = "joining"
    COMMIT = "commit"
    NONCE = "nonce"
    PLAY = "play"
    REVEAL = "reveal"
    RESULT = "result"
    OVER = "over"


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
PHASE_PLAY = Phase.PLAY
PHASE_OVER = Phase.OVER


@dataclass(frozen=True, slots=True)
class Event:
    """A verified event, ready to fold: who, where in their feed, when, what."""

    seat: int
    seq: int
    lamport: int
    kind: Kind
    body: EventBody
    id: bytes = b""

    @property
    def key(self) -> tuple[int, int, int]:
        """The total order ``(lamport, seat, seq)``."""
        return (self.lamport, self.seat, self.seq)


class RefusalCode(enum.StrEnum):
    """Why the fold refused an event, for machines: the audit maps each code to a finding
    (its one reading of a refusal), and :class:`Reason` carries the words for people.

    The value is a stable short name. The codes of the replay against the decks (``deck_*``)
    are refusals of a seat's whole round, found when the last secret comes in (seq 0).
    """

    NOT_JOINED = "not_joined"
    """An event before its author's join."""
    BAD_JOIN = "bad_join"
    """A join that is not its author's first event."""
    WRONG_PHASE = "wrong_phase"
    """An event of another round or phase than the game's."""
    NOT_PLAYING = "not_playing"
    """An event of a seat that does not play the round (or forfeited it)."""
    REPEATED = "repeated"
    """A second commit, nonce, secret, ready or result of a seat for a round."""
    NONCE_MISMATCH = "nonce_mismatch"
    """A nonce that does not match its commit: the seat forfeits the round."""
    SECRET_MISMATCH = "secret_mismatch"
    """A secret that does not match its commit (a stacked deck): the seat forfeits."""
    BAD_DEAL = "bad_deal"
    """A deal (``ready``) that shows a wrong number of cards, repeats one or declares a joker."""
    DEAL_NOT_DECK = "deal_not_deck"
    """The local seat's own deal is not the one its deck deals (only its own fold knows)."""
    WRONG_ROUND = "wrong_round"
    """A play of a round that is not being played."""
    BEFORE_DEAL = "before_deal"
    """A play before the seat's deal (``ready``)."""
    CARD_NOT_THERE = "card_not_there"
    """A claim of a card that the seat does not show where the claim takes it from."""
    REVEAL_COUNT = "reveal_count"
    """A move that shows another number of cards than it turns up."""
    REVEAL_REPEATED = "reveal_repeated"
    """A move that turns up a card its seat has already shown."""
    REVEAL_WRONG = "reveal_wrong"
    """A move that shows a card where the seat's card is known to be another."""
    HIDDEN_DECLARED = "hidden_declared"
    """A face-down joker shown declared."""
    ILLEGAL_MOVE = "illegal_move"
    """A move the rules do not allow there (:meth:`Table.play <p2p_nertz.rules.Table.play>`)."""
    RESULT_MISMATCH = "result_mismatch"
    """A result whose lake digest or scores disagree with the fold's own."""
    SELF_VOTE = "self_vote"
    """A vote to drop its own author."""
    BAD_REJOIN = "bad_rejoin"
    """A readmission of a member that left, was dropped for cheating, or asked before its cut."""
    BAD_ABANDON = "bad_abandon"
    """An abandon with other members than its author and the absent one left."""
    INVALID = "invalid"
    """Anything else the rules refuse in the event (a :class:`~p2p_nertz.errors.NertzError`
    or ``ValueError`` of the rules engine)."""
    DECK_DEAL = "deck_deal"
    """Replay: the deal the seat showed is not the one its deck deals."""
    DECK_REVEAL = "deck_reveal"
    """Replay: a card the seat showed for a move is not the deck's."""
    DECK_CLAIM = "deck_claim"
    """Replay: a claimed card is not the one the deck has where the claim took it from."""
    DECK_ILLEGAL = "deck_illegal"
    """Replay: a move that is illegal with the deck's cards."""
    NOT_CONSERVED = "not_conserved"
    """Replay with conservation (:func:`replay_round`): a seat's cards are not its deck after a
    move (a fault of the rules engine, never a refusal of the fold)."""
    LAKE_NOT_PLAYED = "lake_not_played"
    """Replay with conservation: the lake holds other cards of a seat than its claims kept."""


_C = RefusalCode  # (short: every refusal in this module names one)


class Reason(str):
    """The words of a refusal (the string itself, for people) with its :class:`RefusalCode`
    (``code``, for machines).

    A string, so that a :class:`Violation` reads, compares and prints exactly as its text: the
    peer's effects carry violations (:class:`Refused`), and what a front end sees of them does
    not change with the code riding along. Read ``code``, never the words.

    >>> r = Reason(RefusalCode.REPEATED, "a second nonce")
    >>> r.code, str(r)
    (<RefusalCode.REPEATED: 'repeated'>, 'a second nonce')
    """

    code: RefusalCode

    def __new__(cls, code: RefusalCode, text: str) -> Reason:
        self = super().__new__(cls, text)
        self.code = code
        return self

    def __reduce__(self) -> tuple[type[Reason], tuple[RefusalCode, str]]:
        return (Reason, (self.code, str(self)))


@dataclass(frozen=True, slots=True)
class Violation:
    """An event that was refused by the fold: the same on every peer, and proof of a fault.

    The same event is refused everywhere, with the same :attr:`code`; only ``reason``'s words
    may read differently in the author's own fold, which can name the author's hidden cards (so
    :meth:`GameState.digest` leaves it out).
    """

    seat: int
    seq: int
    kind: Kind
    #: the words, for people; the fold gives a :class:`Reason`, which carries the code
    reason: str

    @property
    def code(self) -> RefusalCode:
        """Why the event was refused (:attr:`RefusalCode.INVALID` for a reason in words only)."""
        reason = self.reason
        return reason.code if isinstance(reason, Reason) else RefusalCode.INVALID

    def __str__(self) -> str:
        return f"seat {self.seat} event {self.seq} ({self.kind.name.lower()}): {self.reason}"


# Notices the fold reports (the peer turns them into events for the UI).
@dataclass(frozen=True, slots=True)
class ClaimDecided:
    """A claim was resolved (kept, tied, or lost and its card returned)."""

    resolution: Resolution
    round: int


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    """The game moved to another phase."""

    phase: Phase
    round: int


@dataclass(frozen=True, slots=True)
class Rotated:
    """Everyone was stuck: every tableau rotated."""

    round: int


@dataclass(frozen=True, slots=True)
class PassesStale:
    """A card kept in the lake made these seats' passes stale: they are stuck no more and
    must pass again (RULES.md: everyone stuck; only a lake card can unblock a player)."""

    round: int
    seats: tuple[int, ...]
    by: int


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """Play is over: Nerts at ``cut`` (``T*``), or blocked."""

    round: int
    status: RoundStatus
    cut: int
    callers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RoundScored:
    """Every result is in: the round's scores and the game's totals."""

    round: int
    score: RoundScore
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over."""

    result: GameResult


@dataclass(frozen=True, slots=True)
class MemberDropped:
    """A strict majority voted a member out (or it left): its events after ``cut`` are ignored."""

    seat: int
    cut: int
    left: bool


@dataclass(frozen=True, slots=True)
class MemberRejoined:
    """A dropped member came back and plays again from round ``round`` (DESIGN.md §6)."""

    seat: int
    round: int


@dataclass(frozen=True, slots=True)
class Refused:
    """An event was refused by the fold (see :class:`Violation`)."""

    violation: Violation


Notice = (
    (ClaimDecided | PhaseChanged | Rotated | RoundEnded | RoundScored | GameEnded | MemberDropped)
    | MemberRejoined
    | PassesStale
    | Refused
)


class _Refuse(Exception):
    """Internal: the event is wrong here; becomes a Violation with this code and text."""

    def __init__(self, code: RefusalCode, text: str) -> None:
        super().__init__(text)
        self.reason = Reason(code, text)


@dataclass(slots=True)
class RoundState:
    """The per-round part of the fold (immutable values, but for the dicts and the play log,
    which :meth:`copy` copies)."""

    number: int
    seats: frozenset[int]
    commits: dict[int, Commit] = field(default_factory=dict)
    nonces: dict[int, bytes] = field(default_factory=dict)
    randomness: bytes | None = None
    ready: frozenset[int] = frozenset()
    table: Table | None = None
    # The round's play, for the replay against the decks: (seat, move, card, reveals, lost)
    # per play event, and None for an everyone-stuck rotation. A list, appended to by every
    # move (a tuple grown by one for each would copy the whole round's play every time).
    log: list[tuple[int, Move, Card | None, tuple[Card, ...], bool] | None] = field(
        default_factory=list
    )
    seen: dict[int, frozenset[Card]] = field(default_factory=dict)
    top_events: dict[FoundationId, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    secrets: dict[int, bytes] = field(default_factory=dict)
    dealt: dict[int, tuple[Card, ...]] = field(default_factory=dict)
    forfeit: frozenset[int] = frozenset()
    #: the seats dealt in (a seat dropped or gone after its deal forfeits the round, §8.9)
    playing: frozenset[int] = frozenset()
    #: seat -> seq of the pass that made it stuck (replaced, never changed in place)
    passes: dict[int, int] = field(default_factory=dict)
    #: (seat, seq) of the events that made the latest everyone-stuck rotation: every stuck
    #: seat's pass, and the drop that left only stuck seats, if that set it off
    rotation_seen: tuple[tuple[int, int], ...] | None = None
    expected: RoundScore | None = None
    digest: bytes | None = None
    results: frozenset[int] = frozenset()
    #: (seat, seq) of every result folded, in fold order: an abandon reads which rounds its
    #: author had seen scored from its frontier (§9.3)
    result_seqs: tuple[tuple[int, int], ...] = ()

    def copy(self) -> RoundState:
        new = copy.copy(self)
        new.commits = dict(self.commits)
        new.nonces = dict(self.nonces)
        new.log = list(self.log)
        new.seen = dict(self.seen)
        new.top_events = dict(self.top_events)
        new.secrets = dict(self.secrets)
        new.dealt = dict(self.dealt)
        return new


class GameState:
    """The fold (module docstring). Mutable for speed; :meth:`copy` is cheap and independent.

    Args:
        spec: the game.
        secrets: for the local peer, a function giving its secret for a round (its own deck is
            then followed with every card known); ``None`` for a spectator or the audit.
        seat: the local peer's seat, if it plays.
    """

    def __init__(
        self,
        spec: GameSpec,
        *,
        seat: int | None = None,
        secrets: Callable[[int], bytes] | None = None,
    ) -> None:
        self.spec = spec
        self.rules = spec.rules
        self.local_seat = seat
        self._secrets = secrets
        n = spec.seats
        self.joined: frozenset[int] = frozenset()
        self.dropped: dict[int, int] = {}  # seat -> cut (its last counted seq)
        self.drop_at: dict[int, int] = {}  # seat -> Lamport time its drop was decided
        self.ended_at: int | None = None  # the Lamport time of the event that ended the game
        #: seat -> (cut, id prefix): the chain of a dropped member that counts, named by the
        #: id of its event at the cut (an id names the whole chain before it)
        self.kept_forks: dict[int, tuple[int, bytes]] = {}
        #: seat -> {seq: id prefix}: more of that chain, as the deciding vote quoted it
        self.kept_ids: dict[int, dict[int, bytes]] = {}
        #: seat -> {seq: id prefix}: the chain of a member readmitted, up to its rejoin
        #: request, as the readmission quoted it (every member follows it from then on)
        self.rejoin_ids: dict[int, dict[int, bytes]] = {}
        self.left: frozenset[int] = frozenset()
        #: seat -> seq of its rejoin request: a dropped member readmitted at the next round
        self.rejoining: dict[int, int] = {}
        #: seat -> Lamport time of the event that readmitted it (its first round back began)
        self.readmitted_at: dict[int, int] = {}
        #: seat -> ((cut, request), ...): its events strictly between never count
        self.gaps: dict[int, tuple[tuple[int, int], ...]] = {}
        self._lamport = 0  # the Lamport time of the event being folded
        self._event = (0, 0)  # its (seat, seq)
        # target -> (voter, vote) in fold order
        self.votes: dict[int, tuple[tuple[int, Drop], ...]] = {}
        #: (voter, target) -> the seq of the voter's vote counted
        self.vote_seqs: dict[tuple[int, int], int] = {}
        #: seat -> the highest seq of its votes that decided a drop (its cut never falls below)
        self.vote_floor: dict[int, int] = {}
        #: seat -> (the seq above which its votes against a member do not count, from the
        #: standing votes against it (see :meth:`standing_caps`); the seq above which no
        #: abandon of its counts (see :func:`with_forks`)). Given by the caller, like the cuts.
        self.vote_caps: dict[int, tuple[int, int]] = {}
        self.phase = Phase.JOINING
        self.round = RoundState(0, frozenset(range(n)))
        self.game = Game(spec.rules, n)
        self.violations: tuple[Violation, ...] = ()
        self.scores: tuple[RoundScore, ...] = ()
        #: Every finished round: (number, lake digest, scores), in order.
        self.history: tuple[tuple[int, bytes, tuple[int, ...]], ...] = ()
        #: The rounds before the current one, kept for replays and audits.
        self.past_rounds: tuple[RoundState, ...] = ()
        #: Per round recorded, the (seat, seq) of its results (what made it scored).
        self.result_events: tuple[tuple[tuple[int, int], ...], ...] = ()
        #: seat -> (seq, frontier) of its latest event folded or observed: what it held then.
        self.frontiers: dict[int, tuple[int, tuple[int, ...]]] = {}
        #: seat -> the least seq of its read (observe) that does not count (see _saw_cut)
        self.uncounted: dict[int, int] = {}
        #: (author, target) -> the frontier of the author's first abandon of the target,
        #: counted or observed (§9.3: the game counts the rounds every abandon saw scored).
        self.abandons: dict[tuple[int, int], tuple[int, ...]] = {}
        #: (author, absent) of the abandon that ended the game, if one did.
        self.abandoned: tuple[int, int] | None = None
        #: The game as recorded when the abandon came (the totals count a prefix of it).
        self._before_abandon: Game | None = None

    def copy(self) -> GameState:
        """An independent copy (the peer's tentative fold starts from its final one)."""
        new = copy.copy(self)
        new.dropped = dict(self.dropped)
        new.drop_at = dict(self.drop_at)
        new.kept_forks = dict(self.kept_forks)
        new.kept_ids = dict(self.kept_ids)
        new.rejoin_ids = dict(self.rejoin_ids)
        new.rejoining = dict(self.rejoining)
        new.readmitted_at = dict(self.readmitted_at)
        new.gaps = dict(self.gaps)
        new.votes = dict(self.votes)
        new.vote_seqs = dict(self.vote_seqs)
        new.vote_floor = dict(self.vote_floor)
        new.vote_caps = dict(self.vote_caps)
        new.frontiers = dict(self.frontiers)
        new.uncounted = dict(self.uncounted)
        new.abandons = dict(self.abandons)
        new.round = self.round.copy()
        return new

    # -- queries --------------------------------------------------------------------------
    @property
    def table(self) -> Table | None:
        """The current round's table (``None`` before the deal)."""
        return self.round.table

    @property
    def majority(self) -> int:
        """Votes needed to drop a member: a strict majority of the current roster (the
        members neither dropped nor gone), DESIGN.md §6."""
        return (self.spec.seats - len(self.dropped)) // 2 + 1

    def counts(self, seat: int, seq: int) -> bool:
        """Whether ``seat``'s event ``seq`` can still count: not past the cut of a member
        dropped now, nor between the cut and the rejoin request of one readmitted since (its
        events in order after the drop and before the readmission count neither: the fold
        ignores them)."""
        cut = self.dropped.get(seat)
        if cut is not None and seq > cut:
            return False
        gaps = self.gaps.get(seat)
        return not gaps or not any(lo < seq < hi for lo, hi in gaps)

    def waiting(self) -> frozenset[int]:
        """The seats whose event the current phase waits for."""
        rs = self.round
        out = set(self.dropped) | rs.forfeit
        if self.phase is Phase.JOINING:
            return frozenset(range(self.spec.seats)) - self.joined - set(self.dropped)
        if self.phase is Phase.COMMIT:
            return frozenset(rs.seats - set(rs.commits) - out)
        if self.phase is Phase.NONCE:
            return frozenset(rs.seats - set(rs.nonces) - out)
        if self.phase is Phase.PLAY:
            return frozenset(rs.seats - rs.ready - out)
        if self.phase is Phase.REVEAL:
            return frozenset(rs.seats - set(rs.secrets) - out)
        if self.phase is Phase.RESULT:
            return frozenset(rs.seats - rs.results - out)
        return frozenset()

    @property
    def provisional(self) -> bool:
        """Whether the game's result may still change: an abandoned game (§9.3) whose absent
        member may not have seen every round it counts scored.

        The result of an abandoned game counts the rounds *every* abandon saw scored. It is
        settled once the absent member's own abandon is here (both views are in), or once an
        event of the absent member shows it held every result of the last round counted (any
        abandon it signs later sees that round too). Until then it is provisional: the two
        sides of a partition cannot know what the other saw (the two generals), and the union of
        their logs decides. A game that ended otherwise is never provisional.
        """
        if self.abandoned is None:
            return False
        author, absent = self.abandoned
        if (absent, author) in self.abandons:
            return False
        counted = len(self.game.history)
        if not counted:
            return False  # no round to disagree on
        seen = self.frontiers.get(absent)
        return seen is None or not _covers(seen[1], self.result_events[counted - 1])

    def digest(self) -> str:
        """A hash of everything the fold decided (for agreement and determinism checks).

        For a game ended by an abandon, only its outcome: the rounds it counts and the result.
        The two sides of a partition each removed the other at their own count, and each
        table shows its own side's moves of the void round (§9.3); what they agree on is the
        result.
        """
        h = hashlib.sha256()
        if self.abandoned is not None:
            counted = len(self.game.history)
            h.update(f"abandoned|{self.history[:counted]}|{self.game!r}".encode())
            return h.hexdigest()
        # Drops decided once the game was over change nothing of it (voters that had not seen
        # its end yet: soak seed 2370); the member dropped may never learn of them.
        ended = self.ended_at
        dropped = sorted(
            (q, cut)
            for q, cut in self.dropped.items()
            if ended is None or self.drop_at.get(q, 0) <= ended
        )
        h.update(f"{self.phase.value}|{self.round.number}|{dropped}".encode())
        h.update(repr(self.game.history).encode())
        # Which events were refused, not the reasons' text: an author's own fold can name its
        # hidden cards there, where the others' folds show them face down.
        h.update("|".join(f"{v.seat},{v.seq},{v.kind.value}" for v in self.violations).encode())
        table = self.round.table
        if table is not None:
            # Only what every peer knows: the lake, and how big each hidden pile is.
            h.update(table.lake.digest())
            h.update(f"{table.status.value}|{table.cut}|{table.callers}".encode())
            h.update(f"{table.false_calls}".encode())
            for t in table.tableaux:
                h.update(f"{len(t.nerts)},{len(t.stock)},{len(t.waste)};".encode())
        return h.hexdigest()

    # -- the fold -------------------------------------------------------------------------
    def apply(self, event: Event) -> list[Notice]:
        """Fold one event (the next in total order); return what it made happen."""
        seat = event.seat
        if seat in self.dropped:
            # After a drop or a leave, nothing more of this seat counts (but an abandoned
            # game's end reads it, §9.3).
            return self.observe(event)
        frontier = event.body.frontier
        latest = self.frontiers.get(seat)
        if latest is None or latest[0] < event.seq:
            self.frontiers[seat] = (event.seq, frontier)
        notices: list[Notice] = []
        self._lamport = event.lamport
        self._event = (event.seat, event.seq)
        try:
            if event.kind is not KIND_JOIN and seat not in self.joined:
                raise _Refuse(_C.NOT_JOINED, "an event before the author's join")
            handler = _HANDLERS[event.kind]
            handler(self, event, notices)
        except (_Refuse, NertzError, ValueError) as refused:
            # Anything wrong with a signed event is the author's fault, the same on every peer.
            reason = (
                refused.reason
                if isinstance(refused, _Refuse)
                else Reason(RefusalCode.INVALID, str(refused))
            )
            violation = Violation(seat, event.seq, event.kind, reason)
            self.violations += (violation,)
            notices.append(Refused(violation))
            self._advance(notices)  # a refusal may still settle a phase (a forfeit)
            return notices
        self._advance(notices)
        return notices

    def observe(self, event: Event) -> list[Notice]:
        """Read an event that does not count (its author is past its cut, or dropped).

        Nothing it says is folded; only what an abandoned game's end needs (§9.3): what its
        author held when it signed it (its frontier), and whether it is its author's own
        abandon. Both only ever settle the result or lower the rounds it counts, whatever the
        order they are read in. Callers that skip an event for its author's cut pass it here.
        """
        body = event.body
        seat = event.seat
        if event.seq < self.uncounted.get(seat, event.seq + 1):
            self.uncounted[seat] = event.seq
        latest = self.frontiers.get(seat)
        if latest is None or latest[0] < event.seq:
            self.frontiers[seat] = (event.seq, body.frontier)
        if (
            isinstance(body, Drop)
            and body.reason is DropReason.ABANDON
            and (seat, body.seat) not in self.abandons
        ):
            self.abandons[(seat, body.seat)] = body.frontier
            if self.abandoned is not None:
                notices: list[Notice] = []
                self._end_abandoned(notices)
                return notices
        return []

    def _join(self, event: Event, notices: list[Notice]) -> None:
        if not isinstance(event.body, Join) or event.seq != 1:
            raise _Refuse(_C.BAD_JOIN, "a join must be the author's first event")
        self.joined |= {event.seat}

    def _commit(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Commit)
        rs = self.round
        self._expect(Phase.COMMIT, body.round, event.seat)
        if event.seat in rs.commits:
            raise _Refuse(_C.REPEATED, f"a second commit for round {body.round}")
        rs.commits[event.seat] = body

    def _reveal(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Reveal)
        rs = self.round
        seat = event.seat
        commit = rs.commits.get(seat)
        if body.what is RevealWhat.NONCE:
            self._expect(Phase.NONCE, body.round, seat)
            if seat in rs.nonces:
                raise _Refuse(_C.REPEATED, "a second nonce")
            if commit is None or nonce_hash(body.value) != commit.nonce_hash:
                rs.forfeit |= {seat}
                raise _Refuse(
                    _C.NONCE_MISMATCH,
                    "the nonce does not match its commit: the seat forfeits the round",
                )
            rs.nonces[seat] = body.value
            return
        self._expect(Phase.REVEAL, body.round, seat)
        if seat in rs.secrets:
            raise _Refuse(_C.REPEATED, "a second secret")
        if commit is None or secret_hash(body.value) != commit.secret_hash:
            rs.forfeit |= {seat}
            raise _Refuse(
                _C.SECRET_MISMATCH,
                "the secret does not match its commit (a stacked deck): the seat forfeits",
            )
        rs.secrets[seat] = body.value

    def _ready(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Ready)
        rs = self.round
        seat = event.seat
        self._expect(Phase.PLAY, body.round, seat)
        if seat in rs.ready:
            raise _Refuse(_C.REPEATED, "a second ready")
        assert rs.table is not None and rs.randomness is not None
        rules = self.rules
        if len(body.visible) != 1 + rules.work_piles:
            raise _Refuse(
                _C.BAD_DEAL, f"a deal shows the Nerts top and {rules.work_piles} work piles"
            )
        physical = {c.physical for c in body.visible}
        if len(physical) != len(body.visible) or any(
            c.is_joker and c.declared for c in body.visible
        ):
            raise _Refuse(_C.BAD_DEAL, "the dealt cards repeat a card or declare a joker")
        if seat == self.local_seat and self._secrets is not None:
            deck = shuffled_deck(
                deck_seed(self._secrets(rs.number), rs.randomness, rs.number), rules.jokers
            )
            tableau = Tableau.deal(deck, rules)
            if tableau.shown != body.visible:
                raise _Refuse(
                    _C.DEAL_NOT_DECK, "the dealt cards are not the ones this seat's deck deals"
                )
        else:
            tableau = Tableau.followed(body.visible, rules)
        rs.table = rs.table.with_tableau(seat, tableau)
        rs.ready |= {seat}
        rs.seen[seat] = frozenset(physical)
        rs.dealt[seat] = body.visible

    def _play(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Play)
        rs = self.round
        seat = event.seat
        table = rs.table
        if table is None or body.round < rs.number:
            return  # a late move of a finished round: it does not count
        if body.round != rs.number:
            raise _Refuse(_C.WRONG_ROUND, f"round {body.round} is not being played")
        if seat not in rs.ready:
            raise _Refuse(_C.BEFORE_DEAL, "a move before the seat's deal (ready)")
        if table.over and not (
            table.status is STATUS_NERTS and table.cut is not None and event.lamport <= table.cut
        ):
            return  # made before its author knew the round was over: it does not count
        made = rs.rotation_seen
        if made is not None and any(s != seat and body.frontier[s] < q for s, q in made):
            # Made before its author saw the everyone-stuck rotation that comes before it in
            # the order: it had not seen every pass that made it (its own pass may have been
            # the last, with another's still on the way), so it meant another table. It does
            # not count, as a move after T* does not.
            return
        move = body.move
        before = table.tableaux[seat]
        tableau, seen = self._fill_reveals(seat, before, move, body.reveals)
        if move.is_lake:
            assert move.source is not None and move.foundation is not None
            top = tableau.top(move.source)
            decl = move.declare
            played = top
            if top is not None and not top.declared and top.is_joker and decl is not None:
                assert decl.suit is not None
                played = top.declare(decl.rank, decl.suit)
            if played is None or body.card is None or played != body.card:
                raise _Refuse(
                    _C.CARD_NOT_THERE,
                    f"claims {body.card} from {move.source!r}, where the seat shows {top}",
                )
            # A foundation below rank - 1: the card this one was built on looked kept when it
            # was played and lost in the final order (or was our own pending claim, which
            # DESIGN.md §4 lets a player build on). Honest, and a lost race. A foundation that
            # never existed is no race: the fold refuses it below, unless its author held
            # events of a member that a drop has since cut (a forker's cards, which counted
            # nowhere in the end: a claim on them is a race lost to the cut, not a cheat).
            if move.foundation in table.lake:
                below = table.lake.height(move.foundation) < body.card.rank - 1
            else:
                below = body.card.rank > 1 and self._saw_cut(event)
            if below or not self._saw_foundation(event, move.foundation, body.card):
                # The author never saw the card this one would go on: it cannot win the race,
                # and the card returns.
                res = Resolution(
                    Claim(seat, body.card, move.source, move.foundation, event.lamport),
                    Outcome.LOST,
                    None,
                )
                rs.log.append((seat, move, body.card, body.reveals, True))
                rs.seen[seat] = seen
                if tableau is not before:
                    rs.table = table.with_tableau(seat, tableau)
                notices.append(ClaimDecided(res, rs.number))
                return
        if tableau is not before:  # the move showed hidden cards
            table = table.with_tableau(seat, tableau)
        try:
            new, play = table.play(seat, move, event.lamport)
        except IllegalMoveError as exc:
            raise _Refuse(_C.ILLEGAL_MOVE, str(exc)) from None
        rs.table = new
        rs.seen[seat] = seen
        lost = play.resolution is not None and not play.resolution.kept
        rs.log.append((seat, move, body.card, body.reveals, lost))
        if play.resolution is not None:
            notices.append(ClaimDecided(play.resolution, rs.number))
            if play.resolution.kept:
                fid = move.foundation
                assert fid is not None
                entry = (seat, event.seq)
                if play.resolution.outcome is OUTCOME_TIED:
                    rs.top_events[fid] = (*rs.top_events.get(fid, ()), entry)
                else:
                    rs.top_events[fid] = (entry,)
        passes = rs.passes
        if move.kind is MOVE_PASS and seat not in passes:
            # The pass that made the seat stuck; passing again while stuck changes nothing,
            # and a move made without seeing that repeat meant the same table.
            passes = {**passes, seat: event.seq}
        if play.unstuck:
            # The rule is the table's (Table.play); the fold only tells the passers.
            notices.append(PassesStale(rs.number, play.unstuck, seat))
        if play.rotated:
            rs.log.append(None)
            rs.rotation_seen = tuple(passes.items())
            passes = {}
            notices.append(Rotated(rs.number))
        elif passes and not all(new.stuck[s] for s in passes):
            passes = {s: q for s, q in passes.items() if new.stuck[s]}
        rs.passes = passes
        if play.ended is not None:
            assert new.cut is not None or play.ended is RoundStatus.BLOCKED
            cut = new.cut if new.cut is not None else event.lamport
            notices.append(RoundEnded(rs.number, play.ended, cut, new.callers))
            self._set_phase(Phase.REVEAL, notices)
        elif move.kind is MOVE_CALL and new.status is STATUS_NERTS and not play.false_call:
            # A simultaneous call at T*: the round already ended; report the new caller set.
            assert new.cut is not None
            notices.append(RoundEnded(rs.number, STATUS_NERTS, new.cut, new.callers))

    def _fill_reveals(
        self, seat: int, tableau: Tableau, move: Move, reveals: tuple[Card, ...]
    ) -> tuple[Tableau, frozenset[Card]]:
        """The tableau with the cards this move turns face up (:meth:`Tableau.reveals`) filled
        in, checked against what the seat's tableau already shows."""
        seen = self.round.seen.get(seat, frozenset())
        current = tableau.reveals(move, self.rules)  # (with HIDDEN where not known yet)
        if not current:
            if reveals:
                raise _Refuse(
                    _C.REVEAL_COUNT, f"{move} turns up no card, the event shows {len(reveals)}"
                )
            return tableau, seen
        if len(reveals) != len(current):
            raise _Refuse(
                _C.REVEAL_COUNT,
                f"{move} turns up {len(current)} card(s), the event shows {len(reveals)}",
            )
        if current == reveals:
            return tableau, seen  # nothing hidden here: every card was known and matches
        filled = []
        added: set[Card] = set()
        for now, card in zip(current, reveals, strict=True):
            if now is HIDDEN:
                if card.physical in seen or card.physical in added:
                    raise _Refuse(
                        _C.REVEAL_REPEATED, f"reveals {card}, which this seat has already shown"
                    )
                if card.is_joker and card.declared:
                    raise _Refuse(
                        _C.HIDDEN_DECLARED, f"a face-down joker cannot be declared ({card})"
                    )
                added.add(card.physical)
                filled.append(card)
            elif now != card:
                raise _Refuse(_C.REVEAL_WRONG, f"reveals {card} where the seat's card is {now}")
            else:
                filled.append(now)
        if move.kind is MOVE_TURN:
            stock = tableau.stock[: -len(filled)] + tuple(reversed(filled))
            new = Tableau(tableau.nerts, tableau.work, stock, tableau.waste)
        else:
            nerts = (*tableau.nerts[:-2], filled[0], tableau.nerts[-1])
            new = Tableau(nerts, tableau.work, tableau.stock, tableau.waste)
        return new, seen | added

    def _saw_cut(self, event: Event) -> bool:
        """Whether the event's frontier holds events of a member past the cut a drop made:
        its author saw cards on the lake that count nowhere now (a fork sent to a member
        asleep cut the forker below its fork, and with it the foundations it had started,
        which the others had built on: found by session 9's scan, 2 and 4 players): past a
        drop folded, or an event read that did not count, or past the fork of a member known
        to have forked."""
        frontier = event.body.frontier
        seat = event.seat
        if any(frontier[q] > cut for q, cut in self.dropped.items() if q != seat):
            return True
        # (A cut the fold has not reached yet in the order: the events past it were read, and
        # did not count, before this one. A voter's frontier announces no more of a member it
        # voted against than its vote counts (§9.2), though it holds, and plays on, more.)
        for q, first in self.uncounted.items():
            if q != seat and (
                frontier[q] >= first or any(v == seat for v, _ in self.votes.get(q, ()))
            ):
                return True
        # (A member known to fork whose drop this fold has not reached yet: the cap below its
        # fork, with_forks, is what its drop will cut at most.)
        return any(frontier[q] > events for q, (_, events) in self.vote_caps.items() if q != seat)

    def _saw_foundation(self, event: Event, fid: FoundationId, card: Card) -> bool:
        """Whether the claim's frontier holds an event that put a card at ``rank - 1`` on
        ``fid`` (DESIGN.md §3: a claim must have seen what it goes on)."""
        if card.rank == 1:
            return True
        table = self.round.table
        assert table is not None
        if table.lake.height(fid) != card.rank - 1:
            return True  # not a contest of this kind: the lake decides (tie or loss)
        body = event.body
        frontier = body.frontier
        return any(frontier[s] >= seq for s, seq in self.round.top_events.get(fid, ()))

    def _result(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Result)
        rs = self.round
        self._expect(Phase.RESULT, body.round, event.seat)
        if event.seat in rs.results:
            raise _Refuse(_C.REPEATED, "a second result")
        assert rs.expected is not None and rs.digest is not None
        rs.results |= {event.seat}
        rs.result_seqs += ((event.seat, event.seq),)
        expected = tuple(p.total for p in rs.expected.players)
        if body.digest != rs.digest or body.scores != expected:
            raise _Refuse(
                _C.RESULT_MISMATCH,
                f"its result {list(body.scores)} disagrees with the replay {list(expected)}",
            )

    def _drop(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Drop)
        target = body.seat
        if target == event.seat:
            raise _Refuse(_C.SELF_VOTE, "a vote to drop oneself")
        if target in self.dropped and body.reason is not DropReason.REJOIN:
            return
        if self.vote_caps and capped(self.vote_caps, event.seat, event.seq, body):
            return  # it never counts (see capped)
        if body.reason is DropReason.ABANDON:
            self._abandon(event, body, notices)
            return
        if body.reason is DropReason.REJOIN:
            self._rejoin(event, body)
            return
        votes = self.votes.get(target, ())
        if body.reason is DropReason.WITHDRAW:
            self.votes[target] = tuple(v for v in votes if v[0] != event.seat)
            return
        if any(v[0] == event.seat for v in votes):
            return  # one vote per voter
        self.votes[target] = (*votes, (event.seat, body))
        self.vote_seqs[(event.seat, target)] = event.seq
        self._settle_drops(event.lamport, notices)

    def _settle_drops(self, lamport: int, notices: list[Notice]) -> None:
        """Drop every member that a strict majority of the current roster has voted out.

        Votes of members dropped since do not count; one drop shrinks the roster, which may
        complete another (a partition's minority side), so this repeats until nothing moves.
        """
        changed = True
        while changed:
            changed = False
            for target in sorted(self.votes):
                if target in self.dropped:
                    continue
                counted = tuple(
                    (voter, v) for voter, v in self.votes[target] if voter not in self.dropped
                )
                ballots = tuple(v for _, v in counted)
                # A member proven to cheat is dropped on the votes of every member left: their
                # counts and chains together say where the chains part (see _cut). Except
                # members that every one of those voters has voted out (gone silent): else a
                # cheater and a member that died would hold each other in the game for ever
                # (the honest one cannot take the cheater's vote on the dead one, whose chain
                # it does not follow: soak seed 224).
                proven = any(v.reason is DropReason.EQUIVOCATION for v in ballots)
                if proven:
                    voters = {voter for voter, _ in counted}
                    needed = [
                        q
                        for q in range(self.spec.seats)
                        if q != target
                        and q not in self.dropped
                        and (q in voters or not self._voted_out_by(q, voters))
                    ]
                    if not voters.issuperset(needed):
                        continue
                elif len(ballots) < self.majority:
                    continue
                cut, chain = vote_cut(ballots)
                if not proven and self.vote_floor.get(target, 0) > cut:
                    # A vote of the member, past this cut, decided an earlier drop: with the
                    # member cut below it, that vote would not count (none of a member's events
                    # past its cut does, even before its drop in the order), the earlier drop
                    # would not stand, and often neither would this one, which the smaller
                    # roster made possible. Not a drop, then, until the votes count further
                    # (soak seed 53: a partition's two sides vote each other out while a third
                    # member sleeps).
                    continue
                self.drop_at[target] = lamport
                for voter, _ in counted:
                    seq = self.vote_seqs.get((voter, target), 0)
                    self.vote_floor[voter] = max(self.vote_floor.get(voter, 0), seq)
                if cut in chain:
                    self.kept_ids[target] = chain
                    self.kept_forks[target] = (cut, chain[cut])
                self._remove(target, cut, left=False, notices=notices)
                changed = True

    def standing_caps(self) -> dict[int, tuple[int, int]]:
        """For each member with votes against it standing (not withdrawn, by members still
        in): the lowest count those votes quote, past which its votes never count, and, if one
        of them is on proof of a fork at seq ``f``, ``f − 1``, past which no abandon of its
        counts (see :func:`with_forks`).

        A voter announces no more of a member's feed than its vote counts (§9.2), so while the
        vote stands no event of the member past that count can be final anywhere (finality
        needs every member to announce it). Such an event must not decide anything either: a
        vote of a member cut off from the others, signed during a partition and read only
        once it heals, would otherwise drop someone in the past of what the others made final
        without it (soak seed 472). The caller folds again with these
        caps, until they stop changing, as it does with the cuts.
        """
        caps: dict[int, tuple[int, int]] = {}
        for target, ballots in self.votes.items():
            if target in self.dropped:
                continue
            standing = [
                v for voter, v in ballots if voter not in self.dropped and v.reason in _CAPPED
            ]
            if standing:
                forks = [v.fork_seq - 1 for v in standing if v.reason is DropReason.EQUIVOCATION]
                caps[target] = (min(v.last_seq for v in standing), min(forks, default=_NEVER))
        return caps

    def _voted_out_by(self, seat: int, voters: set[int]) -> bool:
        """Whether every one of ``voters`` has a standing vote against ``seat``."""
        against = {voter for voter, _ in self.votes.get(seat, ())}
        return bool(voters) and voters <= against

    def _rejoin(self, event: Event, body: Drop) -> None:
        """A member readmits a dropped one that asked to rejoin (its ``join`` at seq
        ``last_seq``): it plays again from the next round (DESIGN.md §6).

        The request itself does not count (nothing of a dropped member does, and nobody waits
        for its events): a member that holds it vouches for it, in an event that counts. A
        member that left, or was dropped on proof of cheating, cannot come back.
        """
        target = body.seat
        if target in self.rejoining or target not in self.dropped:
            return  # another member readmitted it first, or it is back already
        if target in self.left:
            raise _Refuse(_C.BAD_REJOIN, f"seat {target} left the game: it cannot rejoin")
        if any(v.reason is DropReason.EQUIVOCATION for _, v in self.votes.get(target, ())):
            raise _Refuse(
                _C.BAD_REJOIN, f"seat {target} was dropped for cheating: it cannot rejoin"
            )
        if body.last_seq <= self.dropped[target]:
            raise _Refuse(_C.BAD_REJOIN, f"seat {target}'s rejoin request must come after its cut")
        if self.phase is Phase.OVER:
            # No next round to rejoin. Not a fault: a member sponsors the request once its
            # final fold has the member dropped, and the last result, timed just before, may
            # still be on its way to it (soak seed 185).
            return
        self.rejoining[target] = body.last_seq
        first = body.last_seq - len(body.ids) + 1
        self.rejoin_ids[target] = {first + i: prefix for i, prefix in enumerate(body.ids)}

    def _readmit(self, notices: list[Notice]) -> None:
        """At a round's start: the members asking to rejoin are members again."""
        for seat, request in sorted(self.rejoining.items()):
            cut = self.dropped.pop(seat)
            self.gaps[seat] = (*self.gaps.get(seat, ()), (cut, request))
            self.readmitted_at[seat] = self._lamport
            self.votes.pop(seat, None)
            # Its votes cast while it was out never count.
            for target, ballots in list(self.votes.items()):
                self.votes[target] = tuple(b for b in ballots if b[0] != seat)
            notices.append(MemberRejoined(seat, self.round.number + 1))
        self.rejoining = {}

    def _abandon(self, event: Event, body: Drop, notices: list[Notice]) -> None:
        """The last two members, one gone: the other ends the game (DESIGN.md §6, §9.3).

        Nobody can be dropped from two (a majority of two is two votes), so the one left signs
        an ``abandon``. The absent member is removed at the vote's count, as by a drop, and the
        game ends on the rounds **scored in every abandon's view**: the round in progress (not
        yet scored by every result) is void, nobody scores it and nobody forfeits it.

        Why void, and why every view: the two sides of a partition may each abandon the other,
        each on what it holds. Had the absent member forfeited the round in progress, each side
        would give the other the forfeit and both would win. With the round void, both sides
        count the same rounds, except that the results of the last round may have reached one
        side and not the other: each abandon therefore counts the rounds whose every result its
        frontier holds, and the game counts the fewest of all the abandons known (the other
        side's, read by :meth:`observe` even past its cut). Whatever each side does alone, the
        union of their events gives one result; :attr:`provisional` says when a side cannot be
        sure of it yet.

        A normal end that one side holds and the other does not yet (the last result in the
        air) is abandoned the same way: the abandon removes the absent member, so that finality
        can go on, and the game counts what every abandon saw.
        """
        members = set(range(self.spec.seats)) - set(self.dropped)
        if members != {event.seat, body.seat}:
            raise _Refuse(
                _C.BAD_ABANDON,
                "an abandon needs exactly two members left: its author and the absent",
            )
        target = body.seat
        self.drop_at[target] = event.lamport
        cut, chain = vote_cut((body,))
        if cut in chain:
            self.kept_ids[target] = chain
            self.kept_forks[target] = (cut, chain[cut])
        over = self.phase is Phase.OVER
        self._remove(target, cut, left=False, notices=notices)
        self.abandons.setdefault((event.seat, target), body.frontier)
        self.abandoned = (event.seat, target)
        self._before_abandon = self.game
        if not over:
            self._set_phase(Phase.OVER, notices)
        self._end_abandoned(notices, announce=not over)

    def _end_abandoned(self, notices: list[Notice], *, announce: bool = False) -> None:
        """Count the rounds every known abandon of the last two members saw scored (§9.3)."""
        assert self.abandoned is not None and self._before_abandon is not None
        author, absent = self.abandoned
        full = self._before_abandon
        counted = len(full.history)
        for (voter, target), frontier in self.abandons.items():
            if {voter, target} == {author, absent}:
                counted = min(counted, self._rounds_seen(frontier))
        if counted == len(full.history) and full.result is not None:
            result = full.result  # a normal end that every abandon saw
        else:
            totals = Game(full.rules, full.players, full.history[:counted]).totals
            best = max(totals)
            winners = tuple(t for t, total in enumerate(totals) if total == best)
            result = GameResult(winners, totals, Termination.ABANDONED)
        if self.game.result == result and len(self.game.history) == counted:
            if announce:
                notices.append(GameEnded(result))
            return
        self.game = Game(
            full.rules, full.players, full.history[:counted], full.playing[:counted], result
        )
        notices.append(GameEnded(result))

    def _rounds_seen(self, frontier: tuple[int, ...]) -> int:
        """How many rounds, from the first, an event with this frontier saw scored."""
        seen = 0
        for results in self.result_events:
            if not _covers(frontier, results):
                break
            seen += 1
        return seen

    def _leave(self, event: Event, notices: list[Notice]) -> None:
        assert isinstance(event.body, Leave)
        self.drop_at[event.seat] = event.lamport
        self._remove(event.seat, event.seq, left=True, notices=notices)
        self._settle_drops(event.lamport, notices)

    def _remove(self, seat: int, cut: int, *, left: bool, notices: list[Notice]) -> None:
        self.dropped[seat] = cut
        if left:
            self.left |= {seat}
        rs = self.round
        table = rs.table
        if table is not None and table.active[seat]:
            table = table.with_active(seat, False)
            rs.table = table
            if (
                self.phase is Phase.PLAY
                and table.status is RoundStatus.PLAYING
                and any(table.active)
                and all(s or not a for s, a in zip(table.stuck, table.active, strict=True))
            ):
                # Everyone left is stuck, and was waiting for the one gone: they rotate now,
                # as if the last of them had passed (RULES.md: everyone stuck).
                # (In turn-based play the seat on turn: only it may move.)
                first = table.turn if table.rules.turn_based else table.active.index(True)
                table, play = table.play(first, Move.pass_(), max(self._lamport, table.clock))
                rs.table = table
                if play.rotated:
                    rs.log.append(None)
                    rs.rotation_seen = (*rs.passes.items(), self._event)
                    rs.passes = {}
                    notices.append(Rotated(rs.number))
                if play.ended is not None:
                    notices.append(RoundEnded(rs.number, play.ended, table.clock, table.callers))
                    self._set_phase(Phase.REVEAL, notices)
        notices.append(MemberDropped(seat, cut, left))

    # -- phases ---------------------------------------------------------------------------
    def _expect(self, phase: Phase, number: int, seat: int) -> None:
        if self.phase is not phase or number != self.round.number:
            raise _Refuse(
                _C.WRONG_PHASE,
                f"round {number} {phase.value} event while the game is in round "
                f"{self.round.number} {self.phase.value}",
            )
        if seat not in self.round.seats or seat in self.round.forfeit:
            raise _Refuse(_C.NOT_PLAYING, f"seat {seat} does not play round {number}")

    def _set_phase(self, phase: Phase, notices: list[Notice]) -> None:
        self.phase = phase
        if phase is PHASE_OVER and self.ended_at is None:
            self.ended_at = self._lamport
        notices.append(PhaseChanged(phase, self.round.number))

    def _advance(self, notices: list[Notice]) -> None:
        """Move through every phase whose wait is over."""
        while self.phase is not PHASE_OVER:
            phase = self.phase
            if phase is PHASE_PLAY:
                # Play goes on until Nerts or a blocked round, whoever is waited for: asked
                # first, this spares every move of the round the sets waiting() builds.
                return
            if self.waiting():
                return
            if phase is Phase.JOINING:
                self._new_round(notices)
            elif phase is Phase.COMMIT:
                self._set_phase(Phase.NONCE, notices)
            elif phase is Phase.NONCE:
                self._deal(notices)
            elif phase is Phase.REVEAL:
                self._verify_and_score(notices)
            elif phase is Phase.RESULT:
                self._record(notices)

    def _new_round(self, notices: list[Notice]) -> None:
        if self.rejoining:
            self._readmit(notices)
        teams = set(self.game.teams_next_round())
        seats = frozenset(
            s
            for s in range(self.spec.seats)
            if self.rules.team_of(s) in teams and s not in self.dropped
        )
        if not seats:
            # An extra round between tied teams none of whose players is still in: nobody can
            # play it, so the tie is kept (soak seed 1777: a round with no seat waited forever).
            self.game = self.game.share_tie()
            self._set_phase(Phase.OVER, notices)
            assert self.game.result is not None
            notices.append(GameEnded(self.game.result))
            return
        if self.round.number:
            self.past_rounds += (self.round,)
        self.round = RoundState(self.round.number + 1, seats)
        self._set_phase(Phase.COMMIT, notices)

    def _deal(self, notices: list[Notice]) -> None:
        rs = self.round
        playing = sorted(rs.seats - rs.forfeit - set(self.dropped))
        rs.playing = frozenset(playing)
        rs.randomness = round_randomness([rs.nonces[s] for s in playing])
        n = self.spec.seats
        hidden = Tableau(
            (HIDDEN,) * NERTS_PILE_SIZE,
            tuple(() for _ in range(self.rules.work_piles)),
            (),
            (),
        )
        active = [s in playing for s in range(n)]
        rs.table = Table.from_tableaux(self.rules, [hidden] * n, active=active, number=rs.number)
        self._set_phase(Phase.PLAY, notices)

    def _verify_and_score(self, notices: list[Notice]) -> None:
        """Every secret is in: replay each seat against its deck, then score."""
        rs = self.round
        table = rs.table
        assert table is not None and rs.randomness is not None
        cheated: set[int] = set()
        for seat in sorted(rs.secrets):
            problem = replay_seat(self.rules, rs, seat, seat_deck(self.rules, rs, seat))
            if problem is not None:
                cheated.add(seat)
                violation = Violation(seat, 0, Kind.REVEAL, problem)
                self.violations += (violation,)
                notices.append(Refused(violation))
        # A seat dealt in and then dropped (silent, withholding, or gone) forfeits too: going
        # silent before the reveal must never cost less than being caught by it.
        gone = rs.playing & set(self.dropped)
        forfeits = (rs.forfeit | cheated | (rs.seats - set(rs.secrets))) - set(self.dropped)
        forfeits = (forfeits | gone) & rs.seats
        rs.forfeit = frozenset(forfeits)
        score = table.score()
        if forfeits:
            players = tuple(
                table.forfeit_score(p.seat) if p.seat in forfeits else p for p in score.players
            )
            score = RoundScore(players, score.teams, score.status, score.callers)
        rs.expected = score
        rs.digest = table.lake.digest()
        self._set_phase(Phase.RESULT, notices)

    def _record(self, notices: list[Notice]) -> None:
        rs = self.round
        assert rs.expected is not None
        self.result_events += (rs.result_seqs,)
        self.game = self.game.record(rs.expected)
        self.scores += (rs.expected,)
        assert rs.digest is not None
        self.history += ((rs.number, rs.digest, tuple(p.total for p in rs.expected.players)),)
        notices.append(RoundScored(rs.number, rs.expected, self.game.totals))
        if self.game.result is not None:
            self._set_phase(Phase.OVER, notices)
            notices.append(GameEnded(self.game.result))
        else:
            self._new_round(notices)


# -- a round replayed against its decks ----------------------------------------------------
# The one replay, for the fold (each seat when the last secret is in), the audit and the
# simulator's invariants (every finished round, with conservation).


@dataclass(frozen=True, slots=True)
class DeckProblem:
    """What the replay of a seat's round against its deck found (:func:`replay_round`)."""

    round: int
    seat: int
    reason: Reason

    def __str__(self) -> str:
        return f"round {self.round} seat {self.seat}: {self.reason}"


def seat_deck(rules: Rules, rs: RoundState, seat: int) -> tuple[Card, ...]:
    """The deck ``seat`` was dealt in round ``rs``, from its revealed secret and ``R``."""
    assert rs.randomness is not None
    return shuffled_deck(deck_seed(rs.secrets[seat], rs.randomness, rs.number), rules.jokers)


def replay_seat(
    rules: Rules, rs: RoundState, seat: int, deck: tuple[Card, ...], *, conserve: bool = False
) -> Reason | None:
    """Replay one seat's round against its deck: the first lie or impossibility, if any.

    In the order of the round's play: the deal the seat showed, the cards each of its moves
    showed (:meth:`Tableau.reveals`), the card each claim took, and every move with the real
    cards. With ``conserve``, also that the seat's cards (its tableau and the lake) stay its
    deck after every move, and that the lake holds the cards its claims kept at the end: a
    check of the rules engine itself, which the fold leaves to the audit and the simulator.
    A seat not dealt in (no ``ready``) has nothing to replay.
    """
    if seat not in rs.ready:
        return None
    tableau = Tableau.deal(deck, rules)
    shown = tableau.shown
    if rs.dealt.get(seat) != shown:
        published = " ".join(map(str, rs.dealt.get(seat, ())))
        return Reason(
            _C.DECK_DEAL,
            f"showed {published} as its deal but the deck deals {' '.join(map(str, shown))}",
        )
    full = sorted(new_deck(rules.jokers), key=Card.sort_key) if conserve else []
    in_lake: list[Card] = []
    for entry in rs.log:
        if entry is None:
            tableau = tableau.rotated()
            continue
        if entry[0] != seat:
            continue
        _, move, card, reveals, lost = entry
        expected = tableau.reveals(move, rules)
        if reveals != expected and tuple(c.physical for c in reveals) != tuple(
            c.physical for c in expected
        ):  # (equal cards are equal physical cards: the first test is the usual answer)
            showed = " ".join(map(str, reveals))
            real = " ".join(map(str, expected))
            return Reason(_C.DECK_REVEAL, f"showed {showed} for {move} but the deck says {real}")
        try:
            if move.is_lake:
                assert move.source is not None and card is not None
                top = tableau.top(move.source)
                if top is None or top.physical != card.physical:
                    return Reason(
                        _C.DECK_CLAIM,
                        f"claimed {card} from {move.source} but the deck has {top} there",
                    )
                if lost:
                    continue  # the card stayed where it was
                _, tableau = tableau.take(move.source)
                in_lake.append(top.physical)
            elif move.plays_card or move.kind in _ON_THE_DECK:
                tableau = tableau.apply(move, rules)
            else:
                continue
        except IllegalMoveError as exc:
            return Reason(_C.DECK_ILLEGAL, f"{move} is illegal with the deck's cards: {exc}")
        if conserve:
            owned = [c.physical for c in tableau.cards()] + in_lake
            if sorted(owned, key=Card.sort_key) != full:
                return Reason(_C.NOT_CONSERVED, f"cards not conserved after {move}")
    if conserve and rs.table is not None:
        lake = [lc.card.physical for lc in rs.table.lake.cards() if lc.owner == seat]
        if sorted(lake, key=Card.sort_key) != sorted(in_lake, key=Card.sort_key):
            return Reason(_C.LAKE_NOT_PLAYED, "the lake holds other cards than played")
    return None


def replay_round(rules: Rules, rs: RoundState) -> list[DeckProblem]:
    """Replay a round with every deck its revealed secrets give: per seat, the first lie, move
    illegal with the real cards, or card not conserved (:func:`replay_seat` with
    ``conserve``). The audit's and the simulator's check of every finished round."""
    if rs.randomness is None or rs.table is None or not rs.secrets:
        return []
    problems: list[DeckProblem] = []
    for seat in sorted(rs.secrets):
        reason = replay_seat(rules, rs, seat, seat_deck(rules, rs, seat), conserve=True)
        if reason is not None:
            problems.append(DeckProblem(rs.number, seat, reason))
    return problems


_ON_THE_DECK = (MoveKind.TURN, MoveKind.ROTATE)  # (moves that change a tableau but play no card)


def abandon_partner(final: GameState, tentative: GameState, seat: int) -> int | str:
    """The member an abandon by ``seat`` would end the game with (§9.3), or why there is none
    (in words): the one place that says who may abandon whom, for the peer, the table, the
    node and the simulator.

    Exactly one other member must be left by the *final* fold. A drop that only the held
    events decide may be undone by what the absent member signed unseen, earlier in the
    order: it may have withdrawn its vote before the vote that completed the drop (soak seed
    1315), or voted, with another, the abandoning member out first (soak seed 1520). The
    abandon would then not be one in the order every peer folds.
    """
    if final.phase is Phase.OVER:
        # (A game over only on the table, its last result not yet acknowledged by the other,
        # can still be abandoned: it ends on what both saw.)
        return "the game is already over"
    if seat in tentative.dropped or seat in final.dropped:
        return "you are out of the game"
    members = [q for q in range(final.spec.seats) if q not in final.dropped]
    if len(members) != 2:
        held = [q for q in members if q not in tentative.dropped]
        pending = "; a drop is not final yet" if len(held) == 2 else ""
        return f"an abandon needs exactly one other member left ({len(members) - 1} are{pending})"
    (other,) = (q for q in members if q != seat)
    return other


def capped(caps: dict[int, tuple[int, int]], seat: int, seq: int, body: Drop) -> bool:
    """Whether ``seat``'s ``drop`` event ``seq`` never counts under ``caps`` (the one home of
    the rule; :attr:`GameState.vote_caps`).

    A vote for silence, withholding or proof signed past what a standing vote against its
    author counts: that voter never announces it, so no peer can have made it final
    (:meth:`GameState.standing_caps`). An abandon signed on a forked chain (:func:`with_forks`).
    """
    cap = caps.get(seat)
    if cap is None:
        return False
    if body.reason is DropReason.ABANDON:
        return seq > cap[1]
    return body.reason in _CAPPED and seq > cap[0]


def with_forks(
    caps: dict[int, tuple[int, int]], forks: dict[int, int], *, own: int | None = None
) -> dict[int, tuple[int, int]]:
    """``caps`` (:meth:`GameState.standing_caps`) with the members known to have forked: two
    signed versions of seat ``q``'s event ``forks[q]`` are held. No abandon of its from there
    on counts: a member that forked does not get to end the game alone. Otherwise it could
    abandon the member that proved the fork, on its forked chain, in the order before that
    member's vote, and end the game in the past of what the honest members decided (soak seed
    685). Its other events, votes included, count as the drop's kept chain says (§9.2).
    ``own``: the caller's seat, never capped (a peer that finds its own feed forked only
    reports it, §9.4)."""
    out = dict(caps)
    for seat, first in forks.items():
        if seat == own or first < 1:
            continue
        votes, events = out.get(seat, (_NEVER, _NEVER))
        out[seat] = (votes, min(events, first - 1))
    return out


def _covers(frontier: tuple[int, ...], events: tuple[tuple[int, int], ...]) -> bool:
    """Whether a frontier holds every one of these (seat, seq) events."""
    return all(frontier[seat] >= seq for seat, seq in events)


def vote_cut(votes: tuple[Drop, ...]) -> tuple[int, dict[int, bytes]]:
    """The last counted seq of a member voted out, and the chain that counts (seq -> id).

    Every event of the member that is final anywhere is at or below every voter's
    ``last_seq``, and every voter holds the same chain up to it: finality needs every member
    to have announced holding it, with ids (docs/protocol.md §7.1), and a voter never counts
    less than it announced or made final. So any voter's count is a safe cut.

    For a member that only fell silent, the cut is the highest count (DESIGN.md §6: nothing
    anyone holds is lost). For a member proven to cheat (a vote on proof of equivocation, or two
    votes quoting different ids at one seq), the votes of every member left are counted, and
    the cut is the lowest count, lowered below the first seq where two of them quote different
    ids: up to there every voter holds the same chain, so nobody has to take an event it never
    held (a cheater can time one below what a peer already made final).
    """
    quoted: dict[int, bytes] = {}
    split: int | None = None
    for v in votes:
        for seq in range(v.last_seq - len(v.ids) + 1, v.last_seq + 1):
            if quoted.setdefault(seq, v.id_at(seq)) != v.id_at(seq):
                split = seq if split is None else min(split, seq)
    proven = split is not None or any(v.reason is DropReason.EQUIVOCATION for v in votes)
    counts = [v.last_seq for v in votes]
    cut = min(counts) if proven else max(counts)
    if split is not None:
        cut = min(cut, split - 1)
    if not proven:
        chosen = next(v for v in votes if v.last_seq == cut)
        first = cut - len(chosen.ids) + 1
        return cut, {first + i: prefix for i, prefix in enumerate(chosen.ids)}
    return cut, {seq: prefix for seq, prefix in quoted.items() if seq <= cut}


def voted_chain(state: GameState, seat: int, fork: int) -> tuple[int, dict[int, bytes]] | None:
    """The chain the counted votes quote of ``seat``, proven to have forked at ``fork``, while
    its drop is not decided: ``(cut, seq -> id prefix)`` if it reaches past the fork, else
    ``None`` (the one home of the rule, §9.2; the peer follows it, the simulator's observer
    and the audit fold it).

    The drop may wait on an event of that chain: one of the member's own votes, that a majority
    counted (soak seed 893: a peer holding the other version never took the vote that dropped
    it, so never the drop that keeps the chain; and an observer that folded the other version
    never counted that vote either, variants seed 893). The other version was never final
    anywhere past the fork: the voters hold theirs and announce it. A vote quoting the other
    version makes :func:`vote_cut` stop below the split: nothing to follow then.
    """
    if seat in state.dropped:
        return None
    ballots = tuple(b for voter, b in state.votes.get(seat, ()) if voter not in state.dropped)
    if not ballots:
        return None
    cut, chain = vote_cut(ballots)
    if cut < fork or cut not in chain:
        return None
    return cut, chain


#: The votes against a member that freeze what their voter announces of its feed (§9.2),
#: and so, standing, cap the member's own votes of these kinds (GameState.standing_caps).
#: Withdrawals, abandons and readmissions are not votes against anyone's feed.
_CAPPED = frozenset({DropReason.SILENT, DropReason.WITHHELD, DropReason.EQUIVOCATION})
_NEVER = 1 << 63  # (no cap)

_HANDLERS: dict[Kind, Callable[[GameState, Event, list[Notice]], None]] = {
    Kind.JOIN: GameState._join,
    Kind.COMMIT: GameState._commit,
    Kind.REVEAL: GameState._reveal,
    Kind.READY: GameState._ready,
    Kind.MOVE: GameState._play,
    Kind.CLAIM: GameState._play,
    Kind.STUCK: GameState._play,
    Kind.NERTS: GameState._play,
    Kind.RESULT: GameState._result,
    Kind.DROP: GameState._drop,
    Kind.LEAVE: GameState._leave,
}
