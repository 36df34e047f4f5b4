"""What the audit reads of a shuffle round's shares at its end: the shares withheld from the
feed, and the ``bad_share`` notes (docs/shuffle.md §7.3, §10.14).

Theory of operation
-------------------
:func:`withheld` names each member still in that revealed its secret without a share the feed
owes (:meth:`DeckRound.withheld <p2p_nertz.protocol.shuffle.DeckRound.withheld>`: its own of a
position the deal turned up, or a partial for a member dropped), on its ``deck_open``.

:class:`ShareNotes` reads the ``bad_share`` notes (:mod:`p2p_nertz.protocol.share_notes`): each
note's signed ``deck_reveal`` is verified as it is read (a note that holds no signed
``deck_reveal`` of a member is a ``bad_proof``), kept until the fold scores its round, then
checked against the round's decks: a share of it whose proof fails names its sender
``bad_share``; a note none of whose shares is wrong proves nothing (``bad_proof``). A note of a
round the logs never score (a round void, a game stopped) is checked against the decks the
fold holds at the end of the pass; one read after its round was scored is checked as it is
read. The same note read in
several logs is checked once.
"""

from __future__ import annotations

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.logs import Log
from p2p_nertz.logfile.format import Record
from p2p_nertz.protocol.bodies import DeckReveal
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.rounds import RoundState
from p2p_nertz.protocol.share_notes import BadShareNoteError, provably_wrong, read_note
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.state import Event

__all__ = ["ShareNotes", "withheld"]


def withheld(found: Collector, rs: RoundState, secret_events: dict[tuple[int, int], Event]) -> None:
    """A member still in that revealed its secret without a share the feed owes of it (an
    honest member sends every such share before its ``deck_open``): withheld, proven by that
    ``deck_open`` (docs/shuffle.md §7.3)."""
    deck = rs.deck
    assert deck is not None
    for member, places in sorted(deck.withheld().items()):
        seat = deck.members[member]
        opened = secret_events.get((rs.number, seat))
        if opened is None:
            continue  # (never heard at the end of the round: the drop votes' business)
        listed = ", ".join(f"deck {d} at {p}" for d, p in places[:4])
        more = f" and {len(places) - 4} more" if len(places) > 4 else ""
        found.add(
            Finding(
                FindingKind.WITHHELD_SHARE,
                f"revealed its round secret without its share of {len(places)} "
                f"position(s) turned up: {listed}{more}",
                expected="a share of every position turned up",
                found=f"{len(places)} missing",
                **found.about(opened),
            )
        )


class ShareNotes:
    """The ``bad_share`` notes of one pass (module docstring)."""

    def __init__(self, found: Collector) -> None:
        self.found = found
        self.seen: set[bytes] = set()
        #: round -> (the note's message, its beat, the log, the record), to check at its end
        self.pending: dict[int, list[tuple[Message, DeckReveal, str, int]]] = {}
        self.decks: dict[int, DeckRound] = {}  # round -> its decks, once scored

    def note(self, log: Log, record: Record) -> None:
        """A ``bad_share`` note: its signature verified now, its shares at its round's end."""
        data = bytes(record.data)
        if data in self.seen:
            return  # (the same beat, kept by another peer)
        self.seen.add(data)
        found = self.found
        spec = found.spec
        try:
            message, beat = read_note(
                data,
                game_id=spec.game_id,
                roster=spec.peer_ids,
                versions=spec.read_versions,
                seats=spec.seats,
            )
        except BadShareNoteError as exc:
            found.add(
                self._nothing(f"a bad_share note that proves nothing: {exc}", log.name, log.count)
            )
            return
        self.pending.setdefault(beat.round, []).append((message, beat, log.name, log.count))
        deck = self.decks.get(beat.round)
        if deck is not None:  # (read after its round was scored)
            self._check(beat.round, deck)

    def scored(self, rs: RoundState) -> None:
        """Check the notes of round ``rs`` against its decks, now that it is scored (and
        those read later at once)."""
        deck = rs.deck
        if deck is not None and deck.final is not None:
            self.decks[rs.number] = deck
            self._check(rs.number, deck)

    def _check(self, number: int, deck: DeckRound) -> None:
        found = self.found
        for message, beat, log, record in self.pending.pop(number, []):
            wrong = [s for s in beat.shares if provably_wrong(deck, s)]
            if not wrong:
                detail = "a bad_share note whose shares are all right, or none its sender's own"
                found.add(self._nothing(detail, log, record))
                continue
            share = wrong[0]
            found.add(
                Finding(
                    FindingKind.BAD_SHARE,
                    f"signed a deck_reveal whose share of member {share.seat}, deck "
                    f"{share.deck} at {share.position}, does not verify (kept by a peer as a "
                    "bad_share note)",
                    log=log,
                    record=record,
                    round=number,
                    expected="a share whose proof verifies",
                    found=f"{len(wrong)} wrong",
                    **self.found.about_message(message),
                )
            )

    @staticmethod
    def _nothing(detail: str, log: str, record: int) -> Finding:
        return Finding(
            FindingKind.BAD_PROOF,
            detail,
            log=log,
            record=record,
            expected="a signed deck_reveal with a share whose proof fails",
            found="none",
        )
