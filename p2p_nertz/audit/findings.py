"""What an audit finds: every problem is one :class:`Finding` value with a precise kind.

A finding names what it is about as far as the logs allow: the log file and byte offset for
damage, the event (author, seq, Lamport time, round, kind, id) for everything signed, the move
in the rules engine's notation, and what was expected against what was found.

Kinds have a :class:`Severity`. **Errors** are what a valid game cannot contain: damage, a
forgery, a broken or forked feed, a rule broken by a signed event, a result that disagrees.
**Notices** are facts worth saying that prove nothing wrong: a log that stops before events
the other logs hold (its peer left when the game was over), an event only one log holds, a game
that is not finished, a false Nerts call (the rules allow one, at a cost the scores carry). An
audit is *valid* when it finds no error.

(A *finding*, not a violation: a notice proves nothing wrong, and
:class:`p2p_nertz.protocol.state.Violation` is the fold's refusal of one event, which the audit
reads into a finding by its :class:`~p2p_nertz.protocol.state.RefusalCode`.)

>>> v = Finding(FindingKind.BAD_SIGNATURE, "the signature does not verify", log="p1.log")
>>> str(v)
'bad_signature: the signature does not verify [log p1.log]'
>>> v.severity
<Severity.ERROR: 'error'>
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any

__all__ = ["Finding", "FindingKind", "Severity"]


class Severity(enum.StrEnum):
    """How much a finding weighs: errors make a game invalid, notices do not."""

    ERROR = "error"
    NOTICE = "notice"


class FindingKind(enum.StrEnum):
    """What is wrong; the value is a stable short code (JSON output, tests, scripts)."""

    # -- the files -----------------------------------------------------------------------------
    UNREADABLE = "unreadable"
    """A file is not a readable log (not a log, unsupported version, damaged header, I/O)."""
    WRONG_LOG = "wrong_log"
    """A log of another game, or by a peer outside the roster."""
    LOG_DAMAGE = "log_damage"
    """Damaged bytes inside a log (a bad frame, a checksum that fails, an invalid record)."""
    TRUNCATED = "truncated"
    """A log ends inside a frame: its writer died mid-append and never restarted, or the file
    was cut; or in zero bytes, where a crash kept the file's new size but not its data
    (notice: a crash's torn record was never sent, so it hides nothing; a cut that lost
    events others hold is a ``gap``, an error)."""
    MISFILED = "misfiled"
    """A record filed as the log owner's own event is by someone else, or the reverse."""
    REORDERED = "reordered"
    """A log holds an author's event after a later event of the same feed."""
    # -- envelopes ---------------------------------------------------------------------------
    MALFORMED = "malformed"
    """An envelope that is not well formed (oversize, malformed, non-canonical, unknown kind)."""
    BAD_VERSION = "bad_version"
    """An envelope of another protocol version."""
    WRONG_GAME = "wrong_game"
    """A message of another game (a replay across games)."""
    UNKNOWN_AUTHOR = "unknown_author"
    """A message signed by a key outside the roster."""
    BAD_SIGNATURE = "bad_signature"
    """A signature that does not verify: the bytes are not what the author signed."""
    BAD_BODY = "bad_body"
    """A signed event whose body does not follow its kind's schema."""
    # -- feeds -------------------------------------------------------------------------------
    BROKEN_CHAIN = "broken_chain"
    """An event whose ``prev`` or own frontier entry does not follow the author's feed."""
    MISSING_EVENT = "missing_event"
    """No log holds an event that the feeds need (a hole in a feed, or a frontier naming it)."""
    EQUIVOCATION = "equivocation"
    """Two different signed events with one author and seq: a fork, proof of cheating."""
    FLAP_FAULT = "flap_fault"
    """A member that withdrew its votes against one member more than the limit allows in one
    round (``protocol/flaps.py``): its own signed events prove it (docs/protocol.md §9.4)."""
    LAMPORT_ORDER = "lamport_order"
    """An author's Lamport clock that does not increase along its feed."""
    CLOCK_BELOW_ACK = "clock_below_ack"
    """An event timed at or below a clock its author had already acknowledged seeing."""
    CLOCK_JUMP = "clock_jump"
    """An event timed more than 2^32 past 1 + the latest event its frontier names: a leap no
    honest clock makes, which every peer refuses (docs/protocol.md §5.3, *the leap bound*);
    nothing of its feed from it on is folded."""
    UNGIVEN_HEAD = "ungiven_head"
    """A voter's signed beat, kept by a peer as a ``debt`` note, announcing a member's feed
    past the count of the voter's vote standing against it and a head of the voter's own feed
    that no log holds, its own whole log included: events it gave nobody (docs/protocol.md
    §9.2, *the own-head variant*; ``audit.debt_notes``)."""
    UNGIVEN_CLAIM = "ungiven_claim"
    """A member's signed beat, kept by a peer as a ``debt`` note with its vote *withheld* on
    the member, announcing a third member's feed past what any log holds of it, that member's
    own whole log included: events that were never signed (docs/protocol.md §9.2, *a claim on
    a silent member's feed*; ``audit.debt_notes``)."""
    # -- the game ----------------------------------------------------------------------------
    REVEAL_MISMATCH = "reveal_mismatch"
    """A revealed nonce or secret that does not match its commit (a stacked deck)."""
    DECK_MISMATCH = "deck_mismatch"
    """A tableau that does not replay against its revealed deck (a card shown is not the
    deck's, or a move is impossible with the real cards)."""
    ILLEGAL_MOVE = "illegal_move"
    """A signed tableau move that the rules do not allow there."""
    UNAVAILABLE_CARD = "unavailable_card"
    """A claim of a card that was not at the top of the pile it names."""
    FALSE_NERTS = "false_nerts"
    """A Nerts call with cards left in the caller's Nerts pile (notice: the rules allow it, at
    a cost: no bonus and the false-call penalty, which the recomputed scores carry, so a
    result that left it out is a ``result_mismatch``; a call the rules refuse, by a member
    not in the round or a second call, is ``refused``)."""
    RESULT_MISMATCH = "result_mismatch"
    """A signed result whose lake digest or scores disagree with the recomputed ones."""
    BAD_SHUFFLE = "bad_shuffle"
    """A shuffle stage that is not its shuffler's: the re-run from its published input with
    the secret revealed differs (a card substituted, dropped or duplicated), or a stage of the
    wrong shape or member (docs/shuffle.md §7.3)."""
    BAD_SHARE = "bad_share"
    """A decryption share whose proof fails, of a position or member it cannot be of; a VSS
    share revealed that is not the one its dealer's commitments fix (docs/shuffle.md §7.3)."""
    BAD_DEALING = "bad_dealing"
    """A VSS dealing that is not the one its dealer's secret makes, or a wrong or misplaced
    answer to a complaint of a box (docs/shuffle.md §6.3, §7.3)."""
    WRONG_SECRET = "wrong_secret"
    """A revealed round secret that is not the author's key's (docs/shuffle.md §7.3)."""
    WITHHELD_SHARE = "withheld_share"
    """A member still in the round that revealed its secret without ever sending its share
    of a position the table turned up, or its partial share of a position still sealed for a
    member dropped whose VSS share it revealed (docs/shuffle.md §7.3)."""
    WITHHELD_ANSWER = "withheld_answer"
    """A dealer that signed an event its final fold asked of it only after holding a complaint
    of its VSS box, and never answered the complaint (docs/shuffle.md §6.3, §7.3)."""
    REFUSED = "refused"
    """Another signed event the rules refused (out of its phase, a repeat, a wrong round)."""
    # -- evidence ----------------------------------------------------------------------------
    BAD_PROOF = "bad_proof"
    """A ``proof`` note that proves nothing: malformed, a message that does not verify, or two
    signed messages that do not contradict each other."""
    UNPROVEN_VOTE = "unproven_vote"
    """A vote to drop a member for equivocation (or a lie about time) that no log proves:
    neither two signed versions of the event it names nor a proof note."""
    UNTRACED_FORFEIT = "untraced_forfeit"
    """A seat forfeits a round and the logs hold no cause for it that stands (a reveal that
    does not match its commit, a lie in the replay, a leave or a drop that is not an unproven
    accusation)."""
    SPLIT_RESULT = "split_result"
    """Two logs that each reach a round's result or the game's end reach different ones: the
    peers that wrote them finished with two different results."""
    PROVISIONAL_SPLIT = "provisional_split"
    """Two logs of an abandoned two-member game end on different results, one of them marked
    provisional (its side could not know what the other saw): the union decides (notice)."""
    # -- copies ------------------------------------------------------------------------------
    GAP = "gap"
    """A log lacks events that other logs hold, inside what it holds or of its own feed."""
    LOG_ENDS_EARLY = "log_ends_early"
    """A log stops before other members' events that other logs hold (notice)."""
    SINGLE_COPY = "single_copy"
    """Events that only one of several logs holds (notice)."""
    INCOMPLETE = "incomplete"
    """The game in these logs is not finished (notice)."""
    SAME_MEMBER = "same_member"
    """Two logs given of one member: a copy of the other (read as one log) or two that differ
    where both hold a record (both read; notice: :mod:`~p2p_nertz.audit.copies`)."""

    @property
    def severity(self) -> Severity:
        """Whether this kind makes a game invalid."""
        return Severity.NOTICE if self in _NOTICES else Severity.ERROR

    @property
    def accuses(self) -> bool:
        """Whether a finding of this kind accuses the member it names (``seat``) of a fault
        its own signature proves. The others are about the files (bytes that do not read or
        verify, records missing or out of place: whoever held the file, not the member named,
        may have caused them) or name a member wronged (a drop or forfeit with no cause that
        stands: the voters are named by their own ``unproven_vote``)."""
        return self not in _NOT_ACCUSING


_NOTICES = frozenset(
    {
        FindingKind.LOG_ENDS_EARLY,
        FindingKind.SINGLE_COPY,
        FindingKind.TRUNCATED,
        FindingKind.INCOMPLETE,
        FindingKind.PROVISIONAL_SPLIT,
        FindingKind.SAME_MEMBER,
        FindingKind.FALSE_NERTS,
    }
)


_NOT_ACCUSING = frozenset(
    {
        # the files: a signature that does not verify is bytes nobody in the roster signed
        FindingKind.UNREADABLE,
        FindingKind.WRONG_LOG,
        FindingKind.LOG_DAMAGE,
        FindingKind.TRUNCATED,
        FindingKind.MISFILED,
        FindingKind.REORDERED,
        FindingKind.MALFORMED,
        FindingKind.BAD_VERSION,
        FindingKind.WRONG_GAME,
        FindingKind.UNKNOWN_AUTHOR,
        FindingKind.BAD_SIGNATURE,
        FindingKind.BAD_PROOF,
        # the copies: events a log, or every log, lacks
        FindingKind.MISSING_EVENT,
        FindingKind.GAP,
        FindingKind.LOG_ENDS_EARLY,
        FindingKind.SINGLE_COPY,
        FindingKind.INCOMPLETE,
        FindingKind.SAME_MEMBER,
        # a member wronged
        FindingKind.UNTRACED_FORFEIT,
    }
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding of an audit.

    Only ``kind`` and ``detail`` are always set; the other fields say where, when known.

    Attributes:
        kind: what is wrong.
        detail: one sentence for people.
        log: the log file (for damage, gaps, misfiled records).
        offset: byte offset of damage in that file.
        record: the index (from 1) of the record in that file that the finding is about.
        seat: the author's seat.
        author: the author's display name.
        fingerprint: the author's key fingerprint.
        seq: the event's seq in the author's feed (or the first of a range).
        last_seq: the last seq of a range of events (gaps), else ``None``.
        lamport: the event's Lamport time.
        round: the round the event belongs to.
        event: the event kind (``claim``, ``move``, ...).
        event_id: the event id, hex.
        move: the move or claim in the notation (``W>L@0S``), for play events.
        expected: what the audit expected, in the notation.
        found: what the logs hold instead.
        other_log: the other log of a finding about two logs (``same_member``).
    """

    kind: FindingKind
    detail: str
    _: KW_ONLY
    log: str | None = None
    offset: int | None = None
    record: int | None = None
    seat: int | None = None
    author: str | None = None
    fingerprint: str | None = None
    seq: int | None = None
    last_seq: int | None = None
    lamport: int | None = None
    round: int | None = None
    event: str | None = None
    event_id: str | None = None
    move: str | None = None
    expected: str | None = None
    found: str | None = None
    # (Left out of the repr: a report's repr is what scripts/effect_digest.py --audit hashes.)
    other_log: str | None = field(default=None, repr=False)

    @property
    def severity(self) -> Severity:
        """The severity of the kind."""
        return self.kind.severity

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (``None`` fields left out)."""
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out["kind"] = self.kind.value
        out["severity"] = self.severity.value
        return out

    def where(self) -> str:
        """Where the finding is, in a few words (``bob seq 12 (claim W>L@0S) lamport 40``)."""
        parts: list[str] = []
        if self.author is not None or self.seat is not None:
            who = self.author if self.author is not None else f"seat {self.seat}"
            parts.append(who)
        if self.seq is not None:
            span = f"{self.seq}-{self.last_seq}" if self.last_seq not in (None, self.seq) else ""
            parts.append(f"seqs {span}" if span else f"seq {self.seq}")
        if self.event is not None:
            parts.append(f"({self.event} {self.move})" if self.move else f"({self.event})")
        if self.lamport is not None:
            parts.append(f"lamport {self.lamport}")
        if self.round is not None:
            parts.append(f"round {self.round}")
        if self.log is not None:
            at = f" offset {self.offset}" if self.offset is not None else ""
            at += f" record #{self.record}" if self.record is not None else ""
            parts.append(f"[log {self.log}{at}]")
        return " ".join(parts)

    def __str__(self) -> str:
        text = f"{self.kind.value}: {self.detail}"
        if self.expected is not None or self.found is not None:
            text += f" (expected {self.expected}, found {self.found})"
        where = self.where()
        return f"{text} {where}" if where else text
