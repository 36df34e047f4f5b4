"""The shuffle's messages: exact round trips through msgpack, and every malformed one refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nertz.deck.group import BASE, IDENTITY, ORDER, DeckError, scalar_bytes
from p2p_nertz.deck.shares import make_share
from p2p_nertz.deck.vss import deal_shares
from p2p_nertz.deck.wire import (
    KINDS,
    MAX_SHARES,
    DeckAnswer,
    DeckComplain,
    DeckKey,
    DeckOpen,
    DeckShares,
    DeckStage,
)
from tests.deck_helpers import box_keys, deal, member_keys


def _packed(value: Any) -> Any:
    return msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False)


def _key(n: int) -> DeckKey:
    key = member_keys(n, "wire")[1]
    dealing = deal_shares(key, 1, box_keys(n)[0]) if n >= 3 else None
    return DeckKey(round=2, key=key.public, proof=key.proof(1), dealing=dealing)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("attempt", [0, 1, 255])
def test_deck_wire_key_round_trips(n: int, attempt: int) -> None:
    message = dataclasses.replace(_key(n), attempt=attempt)
    assert DeckKey.decode(_packed(message.encode()), members=n) == message


def test_deck_wire_stage_round_trips_and_is_about_3_3_kb() -> None:
    transcript = deal(2, "wire")
    message = DeckStage(round=1, deck=1, stage=0, ciphers=transcript.stages[0][1])
    raw = msgpack.packb(message.encode(), use_bin_type=True)
    assert 52 * 64 < len(raw) < 52 * 64 + 16
    assert DeckStage.decode(_packed(message.encode()), members=2, size=52) == message


def _shares(count: int = 3) -> DeckShares:
    keys = member_keys(2, "wire")
    deck = deal(2, "wire").final[0]
    return DeckShares(
        round=1, seat=0, shares=tuple(make_share(keys[0], 0, 0, p, deck[p]) for p in range(count))
    )


def test_deck_wire_shares_round_trip() -> None:
    message = _shares()
    assert DeckShares.decode(_packed(message.encode()), seat=0, members=2, size=52) == message


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 10_000),
    st.integers(1, ORDER - 1),
    st.lists(st.integers(0, ORDER - 1), max_size=3),
)
def test_deck_wire_open_round_trips(round_no: int, secret: int, held: list[int]) -> None:
    message = DeckOpen(round=round_no, secret=secret, held=tuple(enumerate(held)))
    assert DeckOpen.decode(_packed(message.encode()), members=4) == message


@given(st.integers(1, 10_000), st.integers(0, 7), st.integers(0, ORDER - 1), st.integers(0, 255))
def test_deck_wire_complaint_and_answer_round_trip(
    round_no: int, seat: int, share: int, attempt: int
) -> None:
    complain = DeckComplain(round=round_no, dealer=seat, attempt=attempt)
    answer = DeckAnswer(round=round_no, recipient=seat, share=share, attempt=attempt)
    assert DeckComplain.decode(_packed(complain.encode()), members=8) == complain
    assert DeckAnswer.decode(_packed(answer.encode()), members=8) == answer


def test_deck_wire_a_complaint_or_answer_names_its_attempt() -> None:
    """docs/shuffle.md §8.1: a complaint and its answer are of one deal attempt, like the keys
    and stages; one without it (or with one out of range) is refused, the field named."""
    with pytest.raises(DeckError, match="expected 3 fields"):
        DeckComplain.decode(_packed([1, 2]), members=3)
    with pytest.raises(DeckError, match="deck_complain attempt"):
        DeckComplain.decode(_packed([1, 2, 256]), members=3)
    share = scalar_bytes(5)
    with pytest.raises(DeckError, match="expected 4 fields"):
        DeckAnswer.decode(_packed([1, 0, share]), members=3)
    with pytest.raises(DeckError, match="deck_answer attempt"):
        DeckAnswer.decode(_packed([1, 0, share, -1]), members=3)


def _replace(value: list[Any], index: int, new: Any) -> list[Any]:
    return [*value[:index], new, *value[index + 1 :]]


BAD_SCALAR = ORDER.to_bytes(32, "little")


@pytest.mark.parametrize(
    ("index", "new", "match"),
    [
        (0, 0, "round"),
        (0, True, "round"),
        (1, IDENTITY, "key"),
        (1, BASE[:31], "key"),
        (2, BAD_SCALAR, "proof"),
        (4, [], "commitments"),
        (4, [IDENTITY], "commitment"),
        (5, b"", "box_key"),
        (6, [b"\0" * 48] * 2, "boxes"),
        (6, [b"\0" * 47] * 3, "box"),
        (7, -1, "attempt"),
        (7, 256, "attempt"),
        (7, False, "attempt"),
    ],
)
def test_deck_wire_a_bad_key_message_is_refused(index: int, new: Any, match: str) -> None:
    good = _key(4).encode()
    with pytest.raises(DeckError, match=match):
        DeckKey.decode(_replace(good, index, new), members=4)


def test_deck_wire_a_bad_stage_message_is_refused() -> None:
    good = DeckStage(round=1, deck=0, stage=1, ciphers=deal(2, "wire").final[0]).encode()
    raw = good[3]
    for bad, match in [
        (_replace(good, 1, 2), "deck"),
        (_replace(good, 2, -1), "stage"),
        (_replace(good, 3, raw[:-64]), "ciphertexts"),
        (_replace(good, 3, raw[:64] + IDENTITY + raw[96:]), "position 1, C1"),
        (_replace(good, 3, "text"), "bytes"),
        (_replace(good, 4, 256), "attempt"),
        (_replace(good, 4, "1"), "attempt"),
        (good[:4], "fields"),
        ("deck", "array"),
    ]:
        with pytest.raises(DeckError, match=match):
            DeckStage.decode(bad, members=2, size=52)


def test_deck_wire_a_bad_shares_message_is_refused() -> None:
    good = _shares().encode()
    entry = good[1][0]
    for bad, match in [
        (_replace(good, 1, []), "no share"),
        (_replace(good, 1, [entry, entry]), "repeats"),
        (_replace(good, 1, [_replace(entry, 0, 2)]), "of_seat"),
        (_replace(good, 1, [_replace(entry, 2, 52)]), "position"),
        (_replace(good, 1, [_replace(entry, 3, IDENTITY)]), "point"),
        (_replace(good, 1, [_replace(entry, 5, BAD_SCALAR)]), "answer"),
        (_replace(good, 1, [entry[:5]]), "fields"),
        (_replace(good, 1, [entry] * (MAX_SHARES + 1)), "at most"),
    ]:
        with pytest.raises(DeckError, match=match):
            DeckShares.decode(bad, seat=0, members=2, size=52)


def test_deck_wire_bad_open_complaint_and_answer_messages_are_refused() -> None:
    good = DeckOpen(round=1, secret=5, held=((0, 1), (2, 3))).encode()
    for bad, match in [
        (_replace(good, 1, scalar_bytes(0)), "0 is no"),
        (_replace(good, 1, BAD_SCALAR), "canonical"),
        (_replace(good, 2, [good[2][1], good[2][0]]), "increasing"),
        (_replace(good, 2, [[4, scalar_bytes(1)]]), "seat"),
    ]:
        with pytest.raises(DeckError, match=match):
            DeckOpen.decode(bad, members=4)
    with pytest.raises(DeckError, match="dealer"):
        DeckComplain.decode([1, 4, 0], members=4)
    with pytest.raises(DeckError, match="share"):
        DeckAnswer.decode([1, 0, BAD_SCALAR, 0], members=4)


def test_deck_wire_kinds_follow_the_existing_events() -> None:
    assert sorted(KINDS) == list(range(12, 18))
