"""The values of the game's fold: what goes in (:class:`Event`), where the game stands
(:class:`Phase`), and what comes out: notices of what happened, and refusals (a
:class:`RefusalCode` for machines, a :class:`Reason` in words for people, a :class:`Violation`
recorded).

Shared by the parts of the fold (:mod:`~p2p_nertz.protocol.state`, which re-exports every
name, :mod:`~p2p_nertz.protocol.rounds` and :mod:`~p2p_nertz.protocol.roster`), so that none
of them imports another's module for its vocabulary.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2p_nertz.protocol.bodies import EventBody
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.reason import Reason
from p2p_nertz.rules import GameResult, Resolution, RoundScore, RoundStatus
from p2p_nertz.slots import quick_init

__all__ = [
    "ClaimDecided",
    "Event",
    "GameEnded",
    "MemberDropped",
    "MemberRejoined",
    "Notice",
    "PassedFor",
    "PassesStale",
    "Phase",
    "PhaseChanged",
    "Reason",
    "RefusalCode",
    "Refuse",
    "Refused",
    "Rotated",
    "RoundEnded",
    "RoundScored",
    "Violation",
]


class Phase(enum.Enum):
    """Where the game stands (module docstring)."""

    JOINING = "joining"
    COMMIT = "commit"
    NONCE = "nonce"
    #: a shuffle game (docs/shuffle.md §8.3): every member's key, then every stage of the deal
    KEY = "key"
    DEAL = "deal"
    PLAY = "play"
    REVEAL = "reveal"
    #: a shuffle game: every member's round secret, once play is over
    OPEN = "open"
    RESULT = "result"
    OVER = "over"


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
PHASE_PLAY = Phase.PLAY
PHASE_OVER = Phase.OVER


@quick_init
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
    VOTE_CONTRADICTS = "vote_contradicts"
    """A vote quoting, at the seq of the member's feed its own frontier names, another id than
    the frontier, or (for silence, withholding, a flap fault) counting past that seq
    (:func:`~p2p_nertz.protocol.roster.contradicts`): its voter's word against itself, in
    one signed event."""
    VOTE_UNSIGNED = "vote_unsigned"
    """A vote quoting, at a seq of the member's feed the fold counted, another id than the
    event counted there (:func:`~p2p_nertz.protocol.roster.unsigned_id`): ids of no chain of
    the member's signed events."""
    UNPROVEN_VOTE = "unproven_vote"
    """A vote on proof (*equivocation*) whose carried proof does not verify, or proves
    another member's fault or another event's than the vote names
    (:func:`~p2p_nertz.protocol.evidence.vote_unproven`, session 39)."""
    UNPROVEN_FLAP = "unproven_flap"
    """A vote *flapping* naming a withdrawal at which the fold finds no flap fault of the
    member (:mod:`p2p_nertz.protocol.flaps`): a forged proof."""
    BAD_REJOIN = "bad_rejoin"
    """A readmission of a member that left, was dropped for cheating, asked before its cut, or
    was voted out a second time over a vote for silence of its own that never ended
    (:mod:`p2p_nertz.protocol.second_stall`)."""
    BAD_ABANDON = "bad_abandon"
    """An abandon with other members than its author and the absent one left."""
    WRONG_DEAL = "wrong_deal"
    """An event of the other deal than the game's (a commit in a shuffle game, a shuffle event
    in a commit game: docs/shuffle.md §10.6)."""
    BAD_KEY = "bad_key"
    """A round key that is no point, whose proof fails, or whose dealing has the wrong shape."""
    BAD_STAGE = "bad_stage_shape"
    """A shuffle stage from another member than the schedule's, of the wrong size, or before
    its input (docs/shuffle.md §8.5)."""
    BAD_SHARE = "bad_share"
    """A decryption share whose proof fails, for a member other than its author, or twice."""
    BAD_OPEN = "bad_open"
    """A VSS share revealed with a round secret (``deck_open``'s held shares) that is not the
    one the dropped member's commitments fix, or of a member not dropped."""
    WRONG_SECRET = "wrong_secret"
    """A revealed round secret that is not the author's key's: the seat forfeits the round
    (docs/shuffle.md §7.2)."""
    BAD_SHUFFLE = "bad_shuffle"
    """The checks after the round: a stage that is not its shuffler's secret's re-run from its
    published input (a card substituted, dropped or duplicated; seq 0, docs/shuffle.md §7.2)."""
    BAD_DEALING = "bad_dealing"
    """A complaint of a box with no VSS dealing to complain of, or twice; an answer to no
    complaint, or with a share that is not the one the dealer's commitments fix: a proven
    fault of the dealer (docs/shuffle.md §6.3); after the round (seq 0), a dealing that is not
    the one its dealer's secret makes (§7.2)."""
    BAD_CARD = "bad_card"
    """A position whose right shares open no card, or a card its deck has already shown: a
    stage substituted a ciphertext (docs/shuffle.md §5; the checks after the round say whose)."""
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
@quick_init  # one a claim
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
class PassedFor:
    """``by`` passed on ``seat``'s behalf: it had played no card for a long while with everyone
    else stuck (RULES.md: a player who plays nothing); ``seat`` is stuck until it plays one."""

    round: int
    seat: int
    by: int


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
    | PassedFor
    | PassesStale
    | Refused
)


class Refuse(Exception):
    """Raised inside the fold: the event is wrong here. :meth:`GameState.apply
    <p2p_nertz.protocol.state.GameState.apply>` catches it and records a :class:`Violation`
    with this code and text; it never leaves the fold."""

    def __init__(self, code: RefusalCode, text: str) -> None:
        super().__init__(text)
        self.reason = Reason(code, text)
