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
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from p2p_nertz.protocol.bodies import Beat, open_noted
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.state import Roster, freezes

__all__ = [
    "DEBT_NOTE",
    "DebtNoteError",
    "Debts",
    "note_due",
    "owed_head",
    "past_freeze",
    "read_note",
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
        raise DebtNoteError(str(exc)) from None
    if type(body) is not Beat:
        raise DebtNoteError("its body is not a beat's")
    return message, body


class Debts:
    """Per member, the beat of its announcing the highest head of its own feed that was not
    held here when it came (kept until the feed is held that far)."""

    __slots__ = ("beats",)

    def __init__(self) -> None:
        self.beats: dict[int, tuple[int, Message]] = {}  # seat -> (head, the signed beat)

    def note(self, seat: int, message: Message, beat: Beat, held: int) -> bool:
        """Keep ``message`` (``seat``'s beat ``beat``) if it announces a head of its own feed
        past what is held here (``held``) and past the one kept; whether it was kept."""
        head = owed_head(seat, beat)
        kept = self.beats.get(seat)
        if head <= held or (kept is not None and head <= kept[0]):
            return False
        self.beats[seat] = (head, message)
        return True

    def evidence(self, seat: int, owed: int, held: int) -> bytes | None:
        """The signed beat that makes ``seat`` owe its feed up to ``owed`` (a head past
        ``held``, what is held here), to relay with a vote *withheld* on it; ``None`` where no
        beat kept says so (the head was announced in an event, which is relayed as any)."""
        kept = self.beats.get(seat)
        if kept is None or kept[0] <= held:
            self.beats.pop(seat, None)
            return None
        return kept[1].wire if kept[0] >= owed else None
