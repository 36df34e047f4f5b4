"""The words that ended a game, relayed (docs/protocol.md §9.2, *only beats one ahead*;
``protocol.last_words``, ``Finality.raises``): signed beats, real ``Finality``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from p2p_nertz.protocol.bodies import Beat, encode_body
from p2p_nertz.protocol.envelope import Kind, Message, decode_message, encode_message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.last_words import LastWords

_GAME = bytes(range(32))
_IDS = [Identity.generate(bytes([i + 1]) * 32) for i in range(4)]


def _signed(seat: int, lamport: int) -> Message:
    beat = Beat(1, bytes(32), (1, 1, 1, 1), (b"", b"", b"", b""))
    wire = encode_message(
        _IDS[seat], game_id=_GAME, seq=0, prev=None, lamport=lamport, kind=Kind.BEAT,
        body=encode_body(beat),
    )  # fmt: skip
    return decode_message(wire, game_id=_GAME)


def test_the_end_is_relayed_once_to_each_member_with_the_latest_beat_of_every_third() -> None:
    words = LastWords()
    for seat, lamport in [(1, 10), (2, 11), (3, 12), (2, 15)]:
        words.note(seat, _signed(seat, lamport))
    peer_ids = [i.peer_id for i in _IDS]
    sends = words.relay(0, [0, 1, 2], peer_ids)  # (seat 3 is out: neither sent to nor relayed)
    got = {(peer_ids.index(s.to), decode_message(s.data, game_id=_GAME)) for s in sends if s.to}
    assert {(to, peer_ids.index(m.author), m.lamport) for to, m in got} == {(1, 2, 15), (2, 1, 10)}
    assert len(sends) == 2
    assert words.relay(0, [0, 1, 2], peer_ids) == []  # (once a game)


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
    assert finality.raises(1, 100, true)
    finality.take_beat(1, 100, true)
    assert finality.known[1] == 100 and finality.held_by[1] == (1, 2, 1)
    assert not finality.raises(1, 100, true)  # (taken: each item raises once)
    assert not finality.raises(1, 99, Beat(2, bytes(32), (0, 2, 1), ids))  # (nothing new)
    assert not finality.raises(1, 200, Beat(3, bytes(32), (1, 3, 1), ids))  # (head not held)
    # Cover of a feed held here is more, even timed lower; of a feed not held, it waits.
    fresh = _finality(times)
    fresh.take_beat(1, 50, Beat(2, bytes(32), (0, 2, 0), ids))
    assert fresh.raises(1, 40, Beat(2, bytes(32), (1, 2, 0), ids))
    assert not fresh.raises(1, 40, Beat(2, bytes(32), (0, 2, 0), ids))
    assert not fresh.raises(1, 40, Beat(2, bytes(32), (0, 2, 2), ids))  # (seat 2's 2nd: not here)
