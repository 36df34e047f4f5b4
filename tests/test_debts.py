"""The debt a member's own beat makes, relayed with a vote *withheld* on it (docs/protocol.md
§9.2, *the own-head variant*; ``protocol.debts``, ``Finality.note_head``): signed beats,
real ``Finality``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.protocol.bodies import Beat, encode_body
from p2p_nertz.protocol.debts import DebtNoteError, Debts, owed_head, past_freeze, read_note
from p2p_nertz.protocol.effects import Rejected
from p2p_nertz.protocol.envelope import Kind, Message, decode_message, encode_message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.identity import Identity

_GAME = bytes(range(32))
_LIAR = Identity.generate(b"debts liar".ljust(32, b"\0"))


def _beat(head: int, lamport: int, held: tuple[int, ...] = (0, 0, 0)) -> tuple[Message, Beat]:
    """A beat of seat 1 (the liar) announcing its own feed up to ``head``, signed."""
    own = (held[0], max(held[1], head), held[2])
    beat = Beat(head, bytes(32) if head else None, own, tuple(b"" for _ in own))
    wire = encode_message(
        _LIAR, game_id=_GAME, seq=0, prev=None, lamport=lamport, kind=Kind.BEAT,
        body=encode_body(beat),
    )  # fmt: skip
    return decode_message(wire, game_id=_GAME), beat


def test_the_beat_of_the_highest_head_not_held_is_kept_and_given_as_evidence() -> None:
    debts = Debts()
    low, low_beat = _beat(5, 10)
    high, high_beat = _beat(9, 11)
    assert not debts.note(1, low, low_beat, held=5)  # a head held here is no debt
    assert debts.note(1, high, high_beat, held=5)
    assert not debts.note(1, low, _beat(7, 12)[1], held=5)  # (a lower head does not replace it)
    assert debts.evidence(1, owed=9, held=5) == high.wire
    # The wire given is the author's signed beat, as it came.
    relayed = decode_message(debts.evidence(1, owed=9, held=5) or b"", game_id=_GAME)
    assert relayed.author == _LIAR.peer_id and relayed.lamport == 11
    assert debts.evidence(1, owed=10, held=5) is None  # it says less than is owed
    assert debts.evidence(1, owed=9, held=9) is None  # held that far now: no debt, forgotten
    assert debts.beats == {}


def test_a_relayed_old_beat_makes_its_head_owed_at_the_receiver() -> None:
    feeds: list[list[Message]] = [[], [], []]
    finality = Finality(0, feeds)
    _, beat = _beat(1000, 7)
    finality.note_head(1, beat.head_seq)
    # Owed (what Membership.stalls reads); its own word caps nothing (Finality.bounds reads
    # known for it, below).
    assert finality.claimed[1][1] == 1000 and finality.claimed_most[1] == 0
    finality.note_head(1, 3)  # (a lower word lowers nothing)
    assert finality.claimed[1][1] == 1000


def test_a_head_of_its_own_past_ours_holds_finality_no_lower_than_its_beats_of_held_heads() -> None:
    """The own-head lie at the game's end (docs/protocol.md §9.2): the liar beats a head of
    its own one past its last event, never given. Its beats of a head held here said nothing
    of its feed past that head comes at or below their time (an event that did would be a
    lie about time, §9.4), so its term is that time, not its last event's: a peer is not
    held for good by the head. Another member's word that it holds more still caps it."""
    times = {0: [], 1: [10, 20], 2: [5]}  # seat -> its events' Lamport times held here
    feeds: list[list[Any]] = [
        [SimpleNamespace(lamport=t, id=b"") for t in times[q]] for q in range(3)
    ]
    finality = Finality(0, feeds)
    ids = (b"", b"", b"")
    everything = (0, 2, 1)
    finality.take_beat(2, 200, Beat(1, bytes(32), everything, ids))  # (seat 2 is no term)
    finality.take_beat(1, 100, Beat(2, bytes(32), everything, ids))  # the liar's true beat
    finality.take_beat(1, 101, Beat(3, bytes(32), (0, 3, 1), ids))  # ... and its lie
    assert finality.claimed[1][1] == 3  # (owed: Membership.stalls reads it)
    far = 10**6
    assert finality.bounds({}, {}, far, far) == 100
    # Another member says it holds the liar's event 3: we cannot know every event of the
    # liar up to 100 before we have it (its beats may lie about time).
    finality.take_beat(2, 201, Beat(1, bytes(32), (0, 3, 1), ids))
    assert finality.bounds({}, {}, far, far) == times[1][-1]


def test_a_beat_past_its_authors_standing_vote_is_noted_and_no_other() -> None:
    """The ``debt`` note (docs/log-format.md §5) is kept for a beat announcing a member's feed
    past the count of its author's vote standing against it, and only for such a beat."""
    _, beat = _beat(4, 20, held=(0, 4, 7))  # seat 1 announces seat 2's feed up to 7
    assert owed_head(1, beat) == 4
    assert past_freeze(1, beat, {2: {1: 6}})  # its vote on seat 2 counted 6
    assert not past_freeze(1, beat, {2: {1: 7}})  # (no more than its vote counts)
    assert not past_freeze(1, beat, {2: {0: 3}})  # (another voter's freeze)
    assert not past_freeze(1, beat, {})


def test_a_debt_note_is_read_only_as_a_signed_beat_of_the_game() -> None:
    beat = Beat(4, bytes(32), (0, 4, 7), (b"", bytes(8), bytes(8)))
    wire = encode_message(
        _LIAR, game_id=_GAME, seq=0, prev=None, lamport=20, kind=Kind.BEAT,
        body=encode_body(beat),
    )  # fmt: skip
    message = decode_message(wire, game_id=_GAME)
    roster = [bytes(32), _LIAR.peer_id, bytes(range(1, 33))]
    read = read_note(
        message.wire, game_id=_GAME, roster=roster, versions=(message.version,), seats=3
    )
    assert read == (message, beat)
    forged = bytearray(message.wire)
    forged[-1] ^= 1  # (its signature no longer verifies)
    for data, why in ((bytes(forged), "refused"), (b"\x01\x02", "refused")):
        with pytest.raises(DebtNoteError, match=why):
            read_note(data, game_id=_GAME, roster=roster, versions=(message.version,), seats=3)
    with pytest.raises(DebtNoteError, match="refused"):  # (another game's beat)
        read_note(
            message.wire, game_id=bytes(32), roster=roster, versions=(message.version,), seats=3
        )


def test_a_vote_read_back_is_given_the_claims_past_its_frontier_as_its_cause() -> None:
    # (Debts.stall, Author.recall: docs/protocol.md §13, *a claim on a silent member's feed*,
    # session 36.) Seat 1's beat claims 6 of seat 0's feed and 3 of seat 2's; our vote on it
    # held 4 of seat 0's and 3 of seat 2's: it was cast on seat 0's events 5 and 6 alone.
    debts = Debts()
    message, beat = _beat(2, 10, held=(6, 2, 3))
    feeds: list[list[Message]] = [[], [], []]  # (a restore reads its notes before its events)
    assert debts.note_claims(1, message, beat, feeds) == [(0, 6), (2, 3)]
    assert debts.stall(1, (4, 2, 3), now=7.0) == (7.0, 0, (0, 0, 0), (6, 0, 0))
    assert debts.stall(1, (6, 2, 3), now=7.0) is None  # (held then: not its cause)
    assert debts.stall(2, (4, 2, 3), now=7.0) is None  # (no claim of that member's)


def test_debt_notes_read_back_are_taken_as_when_they_came_and_kept_once() -> None:
    feeds: list[list[Message]] = [[], [], []]
    finality = Finality(0, feeds)
    debts = Debts()
    message, beat = _beat(2, 10, held=(6, 2, 0))
    refused = Rejected("malformed", "not a message")
    inbox = SimpleNamespace(
        open=lambda data: (1, message, beat) if data == message.wire else refused
    )
    debts.read_back([b"garbage", message.wire], inbox, feeds, finality)  # type: ignore[arg-type]
    assert finality.claimed_most[0] == 6  # (seat 0's term capped again, §7.1)
    assert finality.claimed[1][1] == 2  # (its own head: owed)
    assert debts.claims[1, 0][0] == 6
    assert debts.noted == {message.wire}  # (relayed with our vote, not noted again)
