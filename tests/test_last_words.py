"""The words that ended a game, relayed (docs/protocol.md §9.2, *only beats one ahead*;
``protocol.last_words``, ``Finality.raises``): signed beats, real ``Finality``."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, encode_body
from p2p_nertz.protocol.envelope import Kind, Message, decode_message, encode_message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.last_words import AGAIN, LastWords

_GAME = bytes(range(32))
_IDS = [Identity.generate(bytes([i + 1]) * 32) for i in range(4)]


def _feeds(lengths: list[int]) -> list[list[Any]]:
    """Feeds held here, ``lengths[q]`` events of seat ``q`` (their ids, ``q`` and the seq)."""
    return [
        [SimpleNamespace(id=bytes([q, seq]) * 16, seq=seq) for seq in range(1, n + 1)]
        for q, n in enumerate(lengths)
    ]


def _ids(feeds: list[list[Any]], held: tuple[int, ...]) -> tuple[bytes, ...]:
    return tuple(
        feeds[q][h - 1].id[:ID_PREFIX]
        if 0 < h <= len(feeds[q])
        else (bytes([q, h]) * 16)[:ID_PREFIX]
        for q, h in enumerate(held)
    )


def _signed(seat: int, lamport: int, head: int, held: tuple[int, ...], feeds: Any) -> Message:
    beat = Beat(head, bytes(32), held, _ids(feeds, held))
    wire = encode_message(
        _IDS[seat], game_id=_GAME, seq=0, prev=None, lamport=lamport, kind=Kind.BEAT,
        body=encode_body(beat),
    )  # fmt: skip
    return decode_message(wire, game_id=_GAME)


def _note(
    words: LastWords, feeds: Any, seat: int, lamport: int, *, head: int, held: Any
) -> Message:
    message = _signed(seat, lamport, head, held, feeds)
    beat = Beat(head, bytes(32), held, _ids(feeds, held))
    words.note(seat, message, beat, feeds)
    return message


def test_the_end_is_relayed_once_to_each_member_with_the_beats_that_set_its_terms() -> None:
    """A liar (seat 2) sends us a true ack, then a lie (a head past its feed, never given) and
    a beat announcing less of seat 0's feed: what is relayed is the last beat of a head held
    (what we know of its feed) and the true ack (its cover of seat 0's), never the lie. An
    honest member's latest beat sets both: it alone is relayed."""
    feeds = _feeds([5, 4, 6, 3])
    words = LastWords()
    honest = [_note(words, feeds, 1, t, head=4, held=(5, 4, 6, 3)) for t in (10, 12)]
    true = _note(words, feeds, 2, 20, head=6, held=(5, 4, 6, 3))
    _note(words, feeds, 2, 21, head=7, held=(5, 4, 7, 3))  # the lie: its head is not held here
    less = _note(words, feeds, 2, 22, head=6, held=(2, 4, 6, 3))  # less of seat 0's feed
    assert sorted(m.lamport for m in words.words(2, feeds)) == [true.lamport, less.lamport]
    assert words.words(1, feeds) == [honest[-1]]
    peer_ids = [i.peer_id for i in _IDS]
    sends = words.relay(0, [0, 1, 2], peer_ids, feeds)  # (seat 3 is out: not relayed)
    got = {(peer_ids.index(s.to), s.data) for s in sends if s.to is not None}
    assert got == {(1, true.wire), (1, less.wire), (2, honest[-1].wire)} and len(sends) == 3
    assert words.relay(0, [0, 1, 2], peer_ids, feeds) == []  # (once a game)


def test_a_member_still_beating_after_the_relay_gets_it_again_now_and_then() -> None:
    """The relay is one message a member withheld from may lose on the way (a link failing one
    way, docs/protocol.md §13): every AGAIN-th new beat of a member relayed to sends it that
    member's part once more, as the relay did; nothing before the relay, nor to a member out
    at it."""
    feeds = _feeds([5, 4, 6])
    words = LastWords()
    peer_ids = [i.peer_id for i in _IDS]
    one = _note(words, feeds, 1, 10, head=4, held=(5, 4, 6))
    two = _note(words, feeds, 2, 11, head=6, held=(5, 4, 6))
    assert words.again(2, feeds) == []  # (our end not relayed yet)
    first = words.relay(0, [0, 1, 2], peer_ids, feeds)
    to_two = [s for s in first if s.to == peer_ids[2]]
    assert [s.data for s in to_two] == [one.wire]
    later = [words.again(2, feeds) for _ in range(2 * AGAIN)]
    assert [i for i, sends in enumerate(later, 1) if sends] == [AGAIN, 2 * AGAIN]
    assert later[AGAIN - 1] == to_two
    assert words.again(1, feeds) == []  # (its first new beat since: one of AGAIN)
    assert words.again(3, feeds) == []  # (out at the relay)
    assert two.wire in {s.data for s in first if s.to == peer_ids[1]}


def test_a_beat_kept_aside_counts_once_what_it_names_is_held() -> None:
    """A beat whose head is not held when it comes (an ack overtaking its author's event), or
    that announces more of a feed than is held, counts once they are, its ids matching; a
    lie's count never matches."""
    feeds = _feeds([5, 4, 6, 3])
    words = LastWords()
    early = _note(words, feeds, 2, 20, head=7, held=(5, 4, 7, 3))
    assert words.words(2, feeds) == []
    feeds[2].append(SimpleNamespace(id=bytes([2, 7]) * 16, seq=7))  # (its event 7 comes)
    _note(
        words, feeds, 2, 21, head=8, held=(5, 4, 8, 3)
    )  # (a lie, after: the early ack counts first)
    assert words.words(2, feeds) == [early]
    ahead = _note(words, feeds, 1, 30, head=4, held=(6, 4, 7, 3))  # seat 0's 6th: not held yet
    assert words.words(1, feeds) == [ahead]  # (what it set: known; seat 0's count waits)
    _note(words, feeds, 1, 31, head=4, held=(5, 4, 7, 3))
    feeds[0].append(SimpleNamespace(id=bytes([0, 6]) * 16, seq=6))
    assert ahead in words.words(1, feeds)  # (it is the one that announced seat 0's 6th)


def _finality(times: dict[int, list[int]]) -> Finality:
    """Seat 0's finality, holding the events of each seat timed ``times[seat]``, delivered."""
    feeds: list[list[Any]] = [[] for _ in range(3)]
    finality = Finality(0, feeds)
    for q in range(3):
        for seq, t in enumerate(times[q], 1):
            feeds[q].append(SimpleNamespace(lamport=t, id=b"", seq=seq))
            finality.delivered(q, feeds[q][-1])
    return finality


def test_an_old_beat_is_taken_only_where_it_says_more_of_a_feed_held_here() -> None:
    """The dealer holds the liar's (seat 1's) events up to 2 and has taken only its lie (a
    head past them, so nothing of its time is known past its last event). The liar's true beat
    relayed by another member is old, and says more: taken, it is the liar's word, as when new;
    taken, it says no more. A beat whose head is not held, or that says nothing new, raises
    nothing."""
    times = {0: [30], 1: [10, 20], 2: [5]}
    finality = _finality(times)
    ids = (b"", b"", b"")
    finality.take_beat(1, 101, Beat(3, bytes(32), (1, 3, 1), ids))  # the lie, new
    assert finality.known[1] == 20  # (its last event's; the lie's head is not held)
    true = Beat(2, bytes(32), (1, 2, 1), ids)
    asked: list[bool] = []

    def over(answer: bool) -> Callable[[], bool]:
        def ask() -> bool:
            asked.append(answer)
            return answer

        return ask

    # Not before the game's end (our tentative fold over: every event of the game here).
    finality.over = over(False)
    assert not finality.raises(1, 100, true)
    finality.over = over(True)
    assert finality.raises(1, 100, true)
    finality.take_beat(1, 100, true)
    assert finality.known[1] == 100 and finality.held_by[1] == (1, 2, 1)
    asked.clear()
    assert not finality.raises(1, 100, true)  # (taken: each item raises once)
    assert not finality.raises(1, 99, Beat(2, bytes(32), (0, 2, 1), ids))  # (nothing new)
    assert not finality.raises(1, 200, Beat(3, bytes(32), (1, 3, 1), ids))  # (head not held)
    assert asked == []  # (the end is asked only of a beat that says more: it may refold)
    # Cover of a feed held here is more, even timed lower; of a feed not held, it waits.
    fresh = _finality(times)
    fresh.over = over(True)
    fresh.take_beat(1, 50, Beat(2, bytes(32), (0, 2, 0), ids))
    assert fresh.raises(1, 40, Beat(2, bytes(32), (1, 2, 0), ids))
    assert not fresh.raises(1, 40, Beat(2, bytes(32), (0, 2, 0), ids))
    assert not fresh.raises(1, 40, Beat(2, bytes(32), (0, 2, 2), ids))  # (seat 2's 2nd: not here)
