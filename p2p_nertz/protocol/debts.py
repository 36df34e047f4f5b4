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
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Beat
from p2p_nertz.protocol.envelope import Message

__all__ = ["Debts"]


class Debts:
    """Per member, the beat of its announcing the highest head of its own feed that was not
    held here when it came (kept until the feed is held that far)."""

    __slots__ = ("beats",)

    def __init__(self) -> None:
        self.beats: dict[int, tuple[int, Message]] = {}  # seat -> (head, the signed beat)

    def note(self, seat: int, message: Message, beat: Beat, held: int) -> bool:
        """Keep ``message`` (``seat``'s beat ``beat``) if it announces a head of its own feed
        past what is held here (``held``) and past the one kept; whether it was kept."""
        head = max(beat.head_seq, beat.held[seat] if seat < len(beat.held) else 0)
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
