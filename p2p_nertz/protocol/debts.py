"""The signed word of a member that owes its own feed: the beat that announced the head.

A member owes this peer its own feed up to the head it announced itself (docs/protocol.md
§9.2); after ``phase_timeout`` without it, this peer votes it out *withheld*
(``Membership.stalls``). A head announced to this peer alone is a debt no other member
sees: the vote stays alone, no majority follows, and it freezes this peer's announcements of
the member's feed, so none of its later events is final anywhere, for good (one member that
announces to one peer alone a head past an event it gives nobody stalls the table:
tests/test_sim_freeze_beats.py, four players). So this peer relays, with its vote, the beat
that made the debt: the beat is signed, so every member that takes it owes-tracks the same
head (:meth:`Finality.note_head <p2p_nertz.protocol.finality.Finality.note_head>`, an old
beat too), fetches it like any, and votes the member out in turn if it never comes. An
honest member's head reaches every member within a round trip anyway: the relayed beat
announces nothing they do not hold or get.

Such a beat may also hold this peer's finality back: a voter's word on a member it voted out
is taken no further than its vote only where this peer holds the voter's feed up to the last
head it announced (``Finality._said``), and a voter announcing a head of its own feed that it
gives nobody, or late, keeps that word as said (docs/protocol.md §9.2, the own-head
variant). Beats are not logged, so an audit reading this peer's events cannot see why it
waited (docs/shuffle.md §11). Where a kept debt's beat announces, past a freeze the held
events show (``roster.freezes``), a member's feed past the vote's count, this peer keeps the
beat in its log as a note named :data:`DEBT_NOTE` (:func:`past_freeze`): the audit takes it
as the reason a dealer's final fold lagged (``audit.answers``), never as a fault of the
dealer's; read against every log, the note names its author where no log holds the head it
announced, its own whole log included (``audit.debt_notes``: ``ungiven_head``). An honest
member's beat past a freeze comes only after a withdrawal not yet held here: rare, and
harmless to note (its head comes).

A member also owes this peer the events of any feed it announced holding past what is held here
(docs/protocol.md §9.2, *a claim on a silent member's feed*, session 35): §7.1 caps that feed's
term at its last event held while the word stands, so a lie nobody can make good held every
peer's finality back for as long as that feed's member signed nothing. :meth:`Debts.note_claims`
keeps the beat that made such a claim (:func:`claimed_past`), ``Membership.stalls`` tracks it
(:func:`owed_relays`), and :meth:`Debts.relayed` sends it with the vote *withheld* and keeps it
once in the log as a ``debt`` note, which the audit reads against every log
(:func:`unsigned_claims`: ``ungiven_claim``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence, Sized
from typing import TYPE_CHECKING

from p2p_nertz.errors import chained
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, open_noted
from p2p_nertz.protocol.effects import Effect, Note, Rejected, Send
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.state import Roster, freezes

if TYPE_CHECKING:
    from p2p_nertz.protocol.finality import Finality
    from p2p_nertz.protocol.inbox import Inbox

__all__ = [
    "DEBT_NOTE",
    "DebtNoteError",
    "Debts",
    "claimed_past",
    "excused",
    "note_due",
    "owed_head",
    "owed_relays",
    "past_freeze",
    "read_note",
    "unsigned_claims",
]

#: The name of the note that keeps a debt's signed beat announcing a member's feed past a
#: voter's freeze (docs/log-format.md §5).
DEBT_NOTE = "debt"


class DebtNoteError(ValueError):
    """The data of a ``debt`` note is not a signed beat of the game."""


def owed_head(seat: int, beat: Beat) -> int:
    """The head of its own feed that ``seat`` owes by its beat ``beat``: the most it announced
    holding of it (its ``head_seq``, or its own count in ``held``)."""
    return max(beat.head_seq, beat.held[seat] if seat < len(beat.held) else 0)


def claimed_past(
    seat: int, beat: Beat, held: Sequence[int], excused: Collection[int] = ()
) -> list[tuple[int, int]]:
    """The feeds of third members that ``seat``'s beat ``beat`` announces holding past what
    is held (``held``: the count of each feed held here, or in every log an audit reads),
    as ``(feed, count)``: what ``seat`` owes of them (:func:`owed_relays`). Not its own feed
    (:func:`owed_head`), nor a feed ``excused`` (ours, a member out of the game, one proven to
    fork: an honest member may hold the other version of a forked feed)."""
    return [
        (q, h)
        for q, h in enumerate(beat.held)
        if q != seat and q < len(held) and h > held[q] and q not in excused
    ]


def unsigned_claims(
    seat: int,
    beat: Beat,
    held: Sequence[int],
    prefix: Callable[[int, int], bytes],
    excused: Collection[int] = (),
) -> list[tuple[int, int]]:
    """The third members' feeds that ``seat``'s beat ``beat`` announces holding up to an event
    that is not the one held (``held``: how much of each feed is held; ``prefix(q, h)``: the id
    prefix of ``q``'s event ``h`` held), as ``(feed, count)``: past what is held
    (:func:`claimed_past`, what a peer votes on), or under an id other than the held event's.
    Read against a member's own whole log (``audit.debt_notes``), either is an event it never
    signed, unless it forked (``excused``)."""
    past = claimed_past(seat, beat, held, excused)
    return past + [
        (q, h)
        for q, h in enumerate(beat.held)
        if q != seat
        and q not in excused
        and 0 < h <= held[q]
        and prefix(q, h)[:ID_PREFIX] != beat.held_ids[q][:ID_PREFIX]
    ]


def excused(dropped: Collection[int], forked: Collection[int]) -> set[int]:
    """The members whose feeds nobody owes of a claim on them (:func:`owed_relays`): out of
    the game (``dropped``), or proven to fork (``forked``: an honest member may hold the other
    version of a forked feed)."""
    return {*dropped, *forked}


def owed_relays(
    seat: int, claimed: Sequence[int], held: Sequence[int], excused: Collection[int]
) -> tuple[int, ...]:
    """What ``seat`` owes this peer of each third member's feed (docs/protocol.md §9.2, *a
    claim on a silent member's feed*): the most of it that ``seat`` announced holding
    (``claimed``: ``Finality.claimed[seat]``, its beats' and events' word, and a relayed
    beat's) where that is past what is held here (``held``); 0 where it owes nothing (its own
    feed, a feed ``excused``: :func:`claimed_past`). An honest member relays what it holds and
    answers a want within a round trip; one that announced holding events nobody gives holds
    back the finality of their author's feed (§7.1 caps its term while any member claims more)
    for as long as that author signs nothing, with no other timer running."""
    return tuple(
        h if q != seat and h > held[q] and q not in excused else 0 for q, h in enumerate(claimed)
    )


def past_freeze(seat: int, beat: Beat, frozen: Mapping[int, Mapping[int, int]]) -> bool:
    """Whether ``seat``'s beat ``beat`` announces some member's feed past the count of a vote
    of ``seat``'s standing against it (``frozen``: member -> voter -> count, as
    ``roster.freezes`` gives it)."""
    return any(
        seat in voters and q < len(beat.held) and beat.held[q] > voters[seat]
        for q, voters in frozen.items()
    )


def note_due(roster: Roster, seat: int, beat: Beat) -> bool:
    """Whether a debt's beat ``beat`` of ``seat``, just kept (:meth:`Debts.note`), is kept in
    the log too, as a ``debt`` note: it announces a member's feed past the count of ``seat``'s
    vote standing against it in ``roster`` (the held events'). While the head it announced is
    not held, that word holds our finality back, and only the note shows an audit why
    (docs/shuffle.md §11)."""
    frozen = {q: freezes(roster, q) for q in range(len(beat.held)) if q != seat}
    return past_freeze(seat, beat, frozen)


def read_note(
    data: bytes,
    *,
    game_id: bytes,
    roster: Collection[bytes],
    versions: Sequence[int],
    seats: int,
) -> tuple[Message, Beat]:
    """The signed beat a ``debt`` note holds, its signature verified.

    Raises:
        DebtNoteError: the bytes are not a signed beat of a member of this game (the reason
            says why). Nothing else.
    """
    try:
        message, body = open_noted(
            data, (Kind.BEAT, Kind.ACK), game_id=game_id, roster=roster, versions=versions,
            seats=seats,
        )  # fmt: skip
    except ValueError as exc:
        raise chained(DebtNoteError(str(exc)), None)
    if type(body) is not Beat:
        raise DebtNoteError("its body is not a beat's")
    return message, body


class Debts:
    """Per member, the beat of its announcing the highest head of its own feed that was not
    held here when it came (kept until the feed is held that far)."""

    __slots__ = ("beats", "claims", "noted", "out")

    def __init__(self, out: Callable[[], Collection[int]] = tuple) -> None:
        #: the members whose feed nobody owes: out of the game, or proven to fork (an honest
        #: member may hold the other version of a forked feed)
        self.out = out
        self.beats: dict[int, tuple[int, Message]] = {}  # seat -> (head, the signed beat)
        #: (seat, feed) -> (count, the signed beat): the beat of ``seat``'s announcing the
        #: most of a third member's feed past what was held here when it came (§9.2, *a claim
        #: on a silent member's feed*), kept until that feed is held that far
        self.claims: dict[tuple[int, int], tuple[int, Message]] = {}
        self.noted: set[bytes] = set()  # (the claims' beats kept in our log: once each)

    def note(self, seat: int, message: Message, beat: Beat, held: int) -> bool:
        """Keep ``message`` (``seat``'s beat ``beat``) if it announces a head of its own feed
        past what is held here (``held``) and past the one kept; whether it was kept."""
        head = owed_head(seat, beat)
        kept = self.beats.get(seat)
        if head <= held or (kept is not None and head <= kept[0]):
            return False
        self.beats[seat] = (head, message)
        return True

    def take(
        self, seat: int, message: Message, beat: Beat, feeds: Sequence[Sized], finality: Finality
    ) -> bool:
        """Take what ``seat``'s sound beat ``beat`` makes it owe here (``feeds``: what is held):
        the head of its own feed past what is held (:meth:`note`; ``finality.note_head``) and
        the third members' feeds it announces holding past ours (:meth:`note_claims`;
        ``finality.note_claims``, which caps their terms, §7.1); whether a head was kept. One
        home for a beat come live and one read back from a ``debt`` note (:meth:`read_back`)."""
        kept = self.note(seat, message, beat, len(feeds[seat]))
        if kept:
            finality.note_head(seat, self.beats[seat][0])
        finality.note_claims(seat, self.note_claims(seat, message, beat, feeds))
        return kept

    def read_back(
        self,
        notes: Sequence[bytes],
        inbox: Inbox,
        feeds: Sequence[Sized],
        finality: Finality,
    ) -> None:
        """Take back, on a restore, the signed beats our log's ``debt`` notes keep (``notes``;
        ``inbox`` opens each; anything but a member's beat is skipped),
        before our events (``feeds`` empty yet): every claim each announced is kept, so a vote
        *withheld* of ours read back knows which of them it was cast on (:meth:`stall`,
        ``Author.recall``), and the word caps those feeds' terms again (§7.1), as when it came
        (:meth:`take`). Each is noted already: not kept in the log a second time."""
        for data in notes:
            opened = inbox.open(data)
            if not isinstance(opened, Rejected) and type(opened[2]) is Beat:
                self.noted.add(data)
                self.take(opened[0], opened[1], opened[2], feeds, finality)

    def stall(
        self, seat: int, frontier: Sequence[int], now: float
    ) -> tuple[float, int, tuple[int, ...], tuple[int, ...]] | None:
        """The stall record (``Membership.stall_votes``, as of ``now``) that a vote *withheld*
        of ours on ``seat`` read back from our log was cast on, where ``seat`` then owed the
        events of third members' feeds it claimed (:attr:`claims`, our ``debt`` notes' among
        them: :meth:`read_back`) past what the vote's ``frontier`` says we held: those feeds
        up to those counts, owed until held here (``Membership.relieved`` then withdraws the
        vote, as before the restart); ``None`` where it owed none."""
        claims = self.claims
        relay = tuple(
            claims[seat, q][0] if (seat, q) in claims and claims[seat, q][0] > h else 0
            for q, h in enumerate(frontier)
        )
        return (now, 0, (0,) * len(relay), relay) if any(relay) else None

    def evidence(self, seat: int, owed: int, held: int) -> bytes | None:
        """The signed beat that makes ``seat`` owe its feed up to ``owed`` (a head past
        ``held``, what is held here), to relay with a vote *withheld* on it; ``None`` where no
        beat kept says so (the head was announced in an event, which is relayed as any)."""
        kept = self.beats.get(seat)
        if kept is None or kept[0] <= held:
            self.beats.pop(seat, None)
            return None
        return kept[1].wire if kept[0] >= owed else None

    def note_claims(
        self, seat: int, message: Message, beat: Beat, feeds: Sequence[Sized]
    ) -> list[tuple[int, int]]:
        """Keep ``message`` (``seat``'s beat ``beat``) for each third member's feed it
        announces holding past what is held here (``feeds``; :func:`claimed_past`) and past
        the count kept for it, but of a member :attr:`out`; the ``(feed, count)`` kept."""
        if all(h <= len(f) for h, f in zip(beat.held, feeds, strict=False)):
            return []  # (the usual beat: nothing past what we hold)
        kept = []
        claims = self.claims
        held = [len(f) for f in feeds]
        for q, h in claimed_past(seat, beat, held, self.out()):
            old = claims.get((seat, q))
            if old is None or h > old[0]:
                claims[seat, q] = (h, message)
                kept.append((q, h))
        return kept

    def claim_evidence(self, seat: int, owed: Sequence[int], held: Sequence[int]) -> list[bytes]:
        """The signed beats that make ``seat`` owe the third members' feeds ``owed`` (by feed:
        a count past ``held``, what is held here; 0 where nothing is owed), to relay with a
        vote *withheld* on it: one per feed a kept beat announces as far as owed (the same
        beat once), none where the claim came in an event (relayed as any)."""
        wires: list[bytes] = []
        claims = self.claims
        for q, count in enumerate(owed):
            kept = claims.get((seat, q))
            if kept is None:
                continue
            if kept[0] <= held[q]:
                del claims[seat, q]
            elif count and kept[0] >= count and kept[1].wire not in wires:
                wires.append(kept[1].wire)
        return wires

    def relayed(
        self,
        votes: Mapping[int, tuple[float, int, tuple[int, ...], tuple[int, ...]]],
        feeds: Sequence[Sequence[Message]],
    ) -> list[Effect]:
        """What to send with our votes *withheld* (``votes``: seat -> the stall record each
        was cast on, ``Membership.stall_votes``; ``feeds``: what is held here): the signed beat
        of the head of its own feed each member owed (:meth:`evidence`), and those of the third
        members' feeds it announced holding past ours (:meth:`claim_evidence`), each of these
        kept in our log too, once, as a :data:`DEBT_NOTE`: the vote's reason, which an audit
        checks against every log (``audit.debt_notes``: ``ungiven_claim``)."""
        effects: list[Effect] = []
        held: list[int] | None = None
        for seat, (_, owed, _, relays) in sorted(votes.items()):
            wire = self.evidence(seat, owed, len(feeds[seat]))
            if owed > 0 and wire is not None:
                effects.append(Send(wire))
            if any(relays):
                if held is None:
                    held = [len(f) for f in feeds]
                for wire in self.claim_evidence(seat, relays, held):
                    if wire not in self.noted:
                        self.noted.add(wire)
                        effects.append(Note(DEBT_NOTE, wire))
                    effects.append(Send(wire))
        return effects
