"""Feldman VSS of the round secrets: a member who drops mid-round does not take its share away."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from p2p_nertz.deck.check import Fault, FaultKind, check_dealings
from p2p_nertz.deck.group import ORDER, DeckError, base_mul, mul
from p2p_nertz.deck.proofs import prove_equal
from p2p_nertz.deck.shares import Share, make_share, open_card, share_context, verify_share
from p2p_nertz.deck.vss import (
    Dealing,
    _combined,
    _share_key,
    check_revealed_share,
    combine_partials,
    deal_shares,
    reconstruct,
    share_key,
    threshold,
)
from tests.deck_helpers import CONTEXT, VssTable, box_keys, deal, member_keys


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_deck_vss_any_threshold_rebuilds_the_secret_and_fewer_do_not(n: int) -> None:
    keys = member_keys(n, "vss")
    dealer = n - 1
    held = VssTable(keys, dealers=[dealer]).held_of(dealer)
    t = threshold(n)
    assert t is not None
    for group in itertools.combinations(sorted(held), t):
        assert reconstruct({j: held[j] for j in group}) == keys[dealer].x
    for group in itertools.combinations(sorted(held), t - 1):
        assert reconstruct({j: held[j] for j in group}) != keys[dealer].x


def test_deck_vss_none_under_three_members() -> None:
    keys = member_keys(2)
    publics, _ = box_keys(2)
    assert threshold(2) is None
    with pytest.raises(ValueError, match="no VSS"):
        deal_shares(keys[0], 0, publics)


def test_deck_vss_a_bad_share_is_caught_by_its_recipient() -> None:
    n, dealer, seat = 5, 0, 2
    keys = member_keys(n, "bad")
    table = VssTable(keys, dealers=[dealer, 1])
    good = table.dealings[dealer]

    def opened(dealing: Dealing, secret: bytes = table.secrets[seat]) -> int:
        return table.share(dealer, seat, dealing=dealing, secret=secret)

    # A box that does not open (a bit flipped); seat 2's box is the second (seat 0 deals).
    flipped = bytes([good.boxes[1][0] ^ 1]) + good.boxes[1][1:]
    with pytest.raises(DeckError, match="does not open"):
        opened(dataclasses.replace(good, boxes=(good.boxes[0], flipped, *good.boxes[2:])))
    # A box that opens, to a share the published commitments do not fix.
    other = table.dealings[1]
    moved = dataclasses.replace(good, commitments=(other.commitments[0], *good.commitments[1:]))
    with pytest.raises(DeckError, match="commitments"):
        opened(moved)
    # Another member's key does not open seat 2's box.
    with pytest.raises(DeckError, match="does not open"):
        opened(good, secret=table.secrets[3])
    # The share revealed in the clear (the answer to a complaint) is checked the same way.
    sigma = opened(good)
    check_revealed_share(sigma, public=keys[0].public, commitments=good.commitments, seat=seat)
    with pytest.raises(DeckError, match="commitments"):
        check_revealed_share(
            sigma + 1, public=keys[0].public, commitments=good.commitments, seat=seat
        )


def test_deck_vss_a_dealing_is_rerun_after_the_round() -> None:
    n = 4
    keys = member_keys(n, "rerun")
    table = VssTable(keys)
    dealings, publics = table.dealings, table.publics
    secrets = {i: k.x for i, k in enumerate(keys)}
    assert check_dealings(dealings, secrets, publics, CONTEXT) == []
    bad = deal_shares(member_keys(n, "other")[2], 2, publics)
    dealings[2] = dataclasses.replace(dealings[2], boxes=bad.boxes)
    assert check_dealings(dealings, secrets, publics, CONTEXT) == [Fault(FaultKind.BAD_DEALING, 2)]


@settings(max_examples=6, deadline=None)
@given(st.integers(min_value=3, max_value=7), st.data())
def test_deck_vss_the_members_left_open_a_card_for_one_who_dropped(
    n: int, data: st.DataObject
) -> None:
    keys = member_keys(n, f"drop{n}")
    transcript = deal(n, f"drop{n}")
    dropped = data.draw(st.integers(min_value=0, max_value=n - 1), label="dropped")
    deck = data.draw(st.integers(min_value=0, max_value=n - 1), label="deck")
    position = data.draw(st.integers(min_value=0, max_value=51), label="position")
    table = VssTable(keys, dealers=[dropped])
    dealing, held = table.dealings[dropped], table.held_of(dropped)
    t = threshold(n)
    assert t is not None
    left = sorted(held)
    helpers = data.draw(st.permutations(left), label="helpers")[:t]
    cipher = transcript.final[deck][position]
    partials = {}
    for j in helpers:
        # Member j's partial share for the dropped member, proven against σ·G from the commitments.
        ctx = share_context(CONTEXT, j, dropped, deck, position)
        point, proof = prove_equal(held[j], cipher[0], ctx)
        share = Share(j, dropped, deck, position, point, proof)
        verify_share(
            share, share_key(keys[dropped].public, dealing.commitments, j), cipher, CONTEXT
        )
        partials[j] = point
    stand_in = combine_partials(partials)
    assert stand_in == mul(keys[dropped].x, cipher[0])
    own = [
        make_share(k, s, deck, position, cipher).point for s, k in enumerate(keys) if s != dropped
    ]
    assert open_card(cipher, [*own, stand_in]) is not None
    # A partial share proven with a wrong σ is refused against the commitments.
    ctx = share_context(CONTEXT, helpers[0], dropped, deck, position)
    point, proof = prove_equal(held[helpers[0]] + 1, cipher[0], ctx)
    with pytest.raises(DeckError):
        verify_share(
            Share(helpers[0], dropped, deck, position, point, proof),
            share_key(keys[dropped].public, dealing.commitments, helpers[0]),
            cipher,
            CONTEXT,
        )
    # Fewer than t partials combine to something else.
    if t > 1:
        fewer = {j: partials[j] for j in helpers[: t - 1]}
        assert combine_partials(fewer) != stand_in


def test_deck_vss_share_keys_match_the_shares() -> None:
    n = 5
    keys = member_keys(n, "keys")
    table = VssTable(keys, dealers=[0])
    dealing = table.dealings[0]
    for j, sigma in table.held_of(0).items():
        assert share_key(keys[0].public, dealing.commitments, j) == base_mul(sigma)


@given(
    st.integers(min_value=3, max_value=8).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.integers(1, ORDER - 1), min_size=n // 2, max_size=n // 2),
            st.permutations(range(n)),
        )
    )
)
def test_deck_vss_lagrange_rebuilds_any_polynomial_from_any_threshold(
    case: tuple[int, list[int], list[int]],
) -> None:
    n, coefficients, order = case
    t = threshold(n)
    assert t == len(coefficients) + 1
    secret = 1 + coefficients[0] % 1000

    def f(seat: int) -> int:
        return sum(a * (seat + 1) ** k for k, a in enumerate([secret, *coefficients])) % ORDER

    seats = order[:t]
    assert reconstruct({j: f(j) for j in seats}) == secret
    assert reconstruct({j: f(j) for j in seats[:-1]}) != secret


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, ORDER - 1), min_size=2, max_size=5),
    st.integers(min_value=0, max_value=7),
)
def test_deck_vss_share_key_remembered_is_the_value_computed(
    coefficients: list[int], seat: int
) -> None:
    # share_key is remembered (a refold checks every partial again); the answer, first or
    # repeated, must be the public value of the polynomial's share and the uncached sum's.
    public, *commitments = (base_mul(a) for a in coefficients)
    sigma = sum(a * (seat + 1) ** k for k, a in enumerate(coefficients)) % ORDER
    # A share of 0 has no point to compare with (base_mul refuses 0: the identity); random
    # coefficients make one with odds 1/L, hypothesis found [1, L - 1] at seat 0.
    assume(sigma != 0)
    uncached = _share_key.__wrapped__(public, tuple(commitments), seat)
    assert uncached == base_mul(sigma)
    first = share_key(public, commitments, seat)
    hits = _share_key.cache_info().hits
    assert share_key(public, tuple(commitments), seat) == first == uncached
    assert _share_key.cache_info().hits == hits + 1


def test_deck_vss_share_key_cache_is_bounded_over_many_rounds() -> None:
    # A node plays round after round: each round's keys are new, so the cache must forget
    # the old ones instead of growing with the game.
    limit = _share_key.cache_info().maxsize
    assert limit is not None
    for r in range(limit + 50):
        public = base_mul(r + 2)
        share_key(public, (base_mul(r + 3),), r % 3)
        assert _share_key.cache_info().currsize <= limit
    assert _share_key.cache_info().currsize == limit


@settings(max_examples=20, deadline=None)
@given(
    st.integers(min_value=3, max_value=8).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(1, ORDER - 1), min_size=n // 2 + 1, max_size=n // 2 + 1),
            st.permutations(range(n)),
            st.integers(1, ORDER - 1),
        )
    )
)
def test_deck_vss_combined_partials_remembered_are_the_value_computed(
    case: tuple[list[int], list[int], int],
) -> None:
    # combine_partials is remembered (a peer's held view opens the same positions at every
    # look); in any order of the partials, first or repeated, it is x·C1 and the uncached sum.
    coefficients, order, c = case
    c1 = base_mul(c)

    def f(seat: int) -> int:
        return sum(a * (seat + 1) ** k for k, a in enumerate(coefficients)) % ORDER

    # (a share f(j) of 0 has no point: 1/L odds a share, met by Hypothesis with coefficients
    # [1, (L-1)/2] at seat 1, as the test above met [1, L-1] at seat 0)
    assume(all(f(j) != 0 for j in order[: len(coefficients)]))
    partials = {j: mul(f(j), c1) for j in order[: len(coefficients)]}
    uncached = _combined.__wrapped__(tuple(sorted(partials.items())))
    assert uncached == mul(coefficients[0], c1)
    first = combine_partials(partials)
    hits = _combined.cache_info().hits
    assert combine_partials(dict(reversed(partials.items()))) == first == uncached
    assert _combined.cache_info().hits == hits + 1
    limit = _combined.cache_info().maxsize
    assert limit is not None and _combined.cache_info().currsize <= limit
