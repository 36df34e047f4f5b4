"""The dealerless shuffle: cards as points, the pipelined deal, shares, and the checks after it."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl import bindings as sodium

from p2p_nertz.deck import proofs
from p2p_nertz.deck.check import (
    Fault,
    FaultKind,
    check_keys,
    check_shares,
    check_stages,
)
from p2p_nertz.deck.deal import DealTranscript, deck_at, member_at, schedule
from p2p_nertz.deck.elgamal import (
    Deck,
    decrypt_with,
    initial_deck,
    reencrypt,
    shuffle_stage,
    stage_plan,
)
from p2p_nertz.deck.group import (
    BASE,
    IDENTITY,
    ORDER,
    DeckError,
    add,
    base_mul,
    card_of,
    card_point,
    check_point,
    check_scalar,
    mul,
    scalar_bytes,
)
from p2p_nertz.deck.keys import joint_key, verify_member_key
from p2p_nertz.deck.proofs import prove_equal, verify_equal
from p2p_nertz.deck.shares import (
    Share,
    make_share,
    open_card,
    share_context,
    share_holds,
    verify_share,
)
from p2p_nertz.rules.cards import Card, new_deck
from tests.deck_helpers import CONTEXT, deal, joint_secret, member_keys, open_by_shares

# A point of order 8 (on the curve, outside the prime-order subgroup), and one of order 8L.
SMALL_ORDER = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
MIXED = sodium.crypto_core_ed25519_add(BASE, SMALL_ORDER)
NOT_CANONICAL = bytes([0xED]) + bytes([0xFF]) * 30 + bytes([0x7F])  # y = p: not reduced


def test_deck_card_points_are_distinct_points_that_map_back() -> None:
    cards = new_deck(jokers=2)
    points = [card_point(c) for c in cards]
    assert len(set(points)) == len(cards)
    for card, point in zip(cards, points, strict=True):
        assert check_point(point) == point
        assert card_of(point) == card
    assert card_point(Card.parse("JK1=5H")) == card_point(Card.parse("JK1"))
    assert card_of(add(points[0], BASE)) is None


@pytest.mark.parametrize("n", range(2, 9))
def test_deck_round_trip_opens_a_permutation_of_the_deck(n: int) -> None:
    keys = member_keys(n, seed=n)
    transcript = deal(n, seed=n)
    x = joint_secret(keys)
    for deck in transcript.final:
        opened = [decrypt_with(x, cipher) for cipher in deck]
        assert sorted(opened, key=Card.sort_key) == list(new_deck())  # type: ignore[arg-type]
    # The table's own way, position by position with every member's share, on one deck.
    d = n - 1
    by_shares = [open_by_shares(keys, d, p, c) for p, c in enumerate(transcript.final[d])]
    assert by_shares == [decrypt_with(x, c) for c in transcript.final[d]]
    assert by_shares != list(new_deck())


def test_deck_round_trip_with_jokers_through_the_wire() -> None:
    keys = member_keys(3, seed="jokers")
    cards = new_deck(jokers=2)
    from p2p_nertz.deck.deal import run_deal

    transcript = run_deal(keys, [cards] * 3, wire=True)
    x = joint_secret(keys)
    for deck in transcript.final:
        assert sorted((decrypt_with(x, c) for c in deck), key=Card.sort_key) == list(cards)  # type: ignore[arg-type]


def test_deck_same_seeds_give_the_same_deck_byte_for_byte() -> None:
    a, b = deal(4, seed="same"), deal(4, seed="same")
    assert [d.to_bytes() for d in a.final] == [d.to_bytes() for d in b.final]
    assert a == b
    other = deal(4, seed="other")
    assert all(x.to_bytes() != y.to_bytes() for x, y in zip(a.final, other.final, strict=True))


@given(st.integers(min_value=1, max_value=8))
def test_deck_schedule_puts_each_deck_through_each_member_once(n: int) -> None:
    plan = schedule(n)
    for stage in plan:
        assert sorted(stage) == list(range(n))  # every member on a different deck
    for d in range(n):
        members = [member_at(stage=s, deck=d, members=n) for s in range(n)]
        assert members[0] == d and sorted(members) == list(range(n))
        for s, m in enumerate(members):
            assert deck_at(stage=s, member=m, members=n) == d == plan[s][m]


@settings(max_examples=25, deadline=None)
@given(st.binary(min_size=1, max_size=16), st.integers(min_value=0, max_value=7))
def test_deck_stage_plan_is_a_permutation_with_fresh_randomness(seed: bytes, deck: int) -> None:
    key = member_keys(1, seed=seed.hex())[0]
    plan = stage_plan(key.x, CONTEXT, deck, 52)
    assert sorted(plan.perm) == list(range(52))
    assert len(set(plan.rand)) == 52 and all(0 < r < ORDER for r in plan.rand)
    assert stage_plan(key.x, CONTEXT, (deck + 1) % 8, 52) != plan


def test_deck_reencryption_keeps_the_card_and_changes_every_byte() -> None:
    keys = member_keys(2)
    joint = joint_key(k.public for k in keys)
    cipher = initial_deck([Card.parse("7D")], joint)[0]
    again = reencrypt(cipher, 12345, joint)
    assert again[0] != cipher[0] and again[1] != cipher[1]
    assert decrypt_with(joint_secret(keys), again) == Card.parse("7D")


# -- shares -----------------------------------------------------------------------------------


def _one_position() -> tuple[list, Deck]:  # type: ignore[type-arg]
    keys = member_keys(3, seed="shares")
    return keys, deal(3, seed="shares").final[1]


def test_deck_share_proof_verifies_and_opens_the_card() -> None:
    keys, deck = _one_position()
    shares = [make_share(k, seat, 1, 7, deck[7]) for seat, k in enumerate(keys)]
    for share, key in zip(shares, keys, strict=True):
        verify_share(share, key.public, deck[7], CONTEXT)
    assert open_card(deck[7], [s.point for s in shares]) == decrypt_with(
        joint_secret(keys), deck[7]
    )


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda s: dataclasses.replace(s, point=add(s.point, BASE)), id="point"),
        pytest.param(lambda s: dataclasses.replace(s, position=8), id="position"),
        pytest.param(lambda s: dataclasses.replace(s, deck=2), id="deck"),
        pytest.param(lambda s: dataclasses.replace(s, seat=0), id="seat"),
        pytest.param(
            lambda s: dataclasses.replace(s, proof=(s.proof[0], s.proof[1] + 1)), id="proof"
        ),
    ],
)
def test_deck_a_wrong_share_is_refused(tamper) -> None:  # type: ignore[no-untyped-def]
    keys, deck = _one_position()
    share = make_share(keys[1], 1, 1, 7, deck[7])
    with pytest.raises(DeckError, match="does not verify"):
        verify_share(tamper(share), keys[1].public, deck[7], CONTEXT)


def test_deck_a_share_made_with_its_key_given_is_the_same_share() -> None:
    # make_share hands prove_equal the member's key (x·G, known) instead of recomputing it:
    # the proof must not change by a byte, for any position.
    keys, deck = _one_position()
    for seat, key in enumerate(keys):
        for position in (0, 7, 51):
            ctx = share_context(CONTEXT, seat, seat, 1, position)
            assert prove_equal(key.x, deck[position][0], ctx, key.public) == prove_equal(
                key.x, deck[position][0], ctx
            )
            share = make_share(key, seat, 1, position, deck[position])
            assert (share.point, share.proof) == prove_equal(key.x, deck[position][0], ctx)


def test_deck_a_statement_proved_here_is_answered_as_its_multiplications_answer() -> None:
    # verify_equal answers the statements prove_equal made here (PROVEN) without multiplying:
    # each such answer must be the multiplications' (an own share, its key given or not, and a
    # partial's statement, under another secret), and nothing else is taken for proved: a
    # share under another key, a share or proof changed, another context.
    keys, deck = _one_position()
    prove_equal.cache_clear()  # (a proof remembered is not noted again: made anew here)
    made = []
    for seat, key in enumerate(keys):
        for position in (0, 7, 51):
            ctx = share_context(CONTEXT, seat, seat, 1, position)
            share = make_share(key, seat, 1, position, deck[position])
            made.append((key.public, deck[position][0], share.point, share.proof, ctx))
            partial = share_context(CONTEXT, seat, (seat + 1) % 3, 1, position)
            point, proof = prove_equal(key.x + 1, deck[position][0], partial)
            made.append((base_mul(key.x + 1), deck[position][0], point, proof, partial))
    for statement in made:
        assert statement in proofs.PROVEN
        assert verify_equal(*statement) is proofs._verified(*statement) is True
    key, point, share, (c, s), ctx = made[0]
    for other in (
        (keys[1].public, point, share, (c, s), ctx),
        (key, point, made[1][2], (c, s), ctx),
        (key, point, share, (c, (s + 1) % ORDER), ctx),
        (key, point, share, (c, s), ctx + b"x"),
    ):
        assert other not in proofs.PROVEN
        assert verify_equal(*other) is proofs._verified(*other) is False


def test_deck_the_statements_proved_are_kept_to_a_bound_the_oldest_out() -> None:
    keys, deck = _one_position()
    kept = dict(proofs.PROVEN)
    try:
        proofs.PROVEN.clear()
        for position in range(proofs.PROVEN_LIMIT + 2):
            ctx = share_context(CONTEXT, 0, 0, 1, position)
            proofs._proven(keys[0].public, deck[0][0], b"", (position, 0), ctx)
        assert len(proofs.PROVEN) == proofs.PROVEN_LIMIT
        oldest = next(iter(proofs.PROVEN))
        assert oldest[3] == (2, 0)  # (the first two out)
    finally:
        proofs.PROVEN.clear()
        proofs.PROVEN.update(kept)


def test_deck_a_share_under_another_key_is_refused() -> None:
    keys, deck = _one_position()
    share = make_share(keys[1], 1, 1, 7, deck[7])
    with pytest.raises(DeckError):
        verify_share(share, keys[2].public, deck[7], CONTEXT)


def test_deck_a_kept_verdict_is_the_one_of_those_exact_values() -> None:
    # share_holds keeps its answers for the process: a right share answered first must not
    # vouch for one that differs in any field, nor for the same share under another key,
    # ciphertext or round (the cache is keyed by every value the check reads).
    keys, deck = _one_position()
    share = make_share(keys[1], 1, 1, 7, deck[7])
    assert share_holds(share, keys[1].public, deck[7], CONTEXT)
    assert share_holds(dataclasses.replace(share), keys[1].public, deck[7], CONTEXT)
    wrong = [
        (dataclasses.replace(share, point=add(share.point, BASE)), keys[1].public, deck[7]),
        (dataclasses.replace(share, position=8), keys[1].public, deck[8]),
        (dataclasses.replace(share, seat=0), keys[1].public, deck[7]),
        (
            dataclasses.replace(share, proof=(share.proof[0], share.proof[1] + 1)),
            keys[1].public,
            deck[7],
        ),
        (share, keys[2].public, deck[7]),
        (share, keys[1].public, deck[8]),
    ]
    for args in wrong:
        assert not share_holds(*args, CONTEXT)
    assert not share_holds(share, keys[1].public, deck[7], CONTEXT + b"\0")
    assert share_holds(share, keys[1].public, deck[7], CONTEXT)


def test_deck_a_missing_or_wrong_share_opens_no_card() -> None:
    keys, deck = _one_position()
    points = [make_share(k, seat, 1, 0, deck[0]).point for seat, k in enumerate(keys)]
    with pytest.raises(DeckError, match="do not open"):
        open_card(deck[0], points[:2])
    with pytest.raises(DeckError, match="do not open"):
        open_card(deck[0], [*points[:2], add(points[2], BASE)])


def test_deck_remembered_checks_give_the_first_answer_every_time() -> None:
    """Share proofs, points and stages are remembered (pure: a fold and the audit ask again):
    a remembered answer is the one a fresh check gives, for a wrong input as for a right one,
    whichever came first."""
    keys, deck = _one_position()
    share = make_share(keys[1], 1, 1, 7, deck[7])
    wrong = dataclasses.replace(share, proof=(share.proof[0], share.proof[1] + 1))
    for _ in range(2):
        with pytest.raises(DeckError, match="does not verify"):
            verify_share(wrong, keys[1].public, deck[7], CONTEXT)
        verify_share(share, keys[1].public, deck[7], CONTEXT)
        for bad in (MIXED, SMALL_ORDER, IDENTITY):
            with pytest.raises(DeckError, match="not a point"):
                check_point(bad)
        assert check_point(BASE) == BASE
    source = initial_deck(new_deck()[:5], BASE)
    for x in (5, 6, 5):
        assert shuffle_stage(x, CONTEXT, 0, source, BASE) == shuffle_stage.__wrapped__(
            x, CONTEXT, 0, source, BASE
        )


# -- keys -------------------------------------------------------------------------------------


def test_deck_a_rogue_key_is_refused() -> None:
    keys = member_keys(3)
    honest = joint_key(k.public for k in keys[:2])
    # The last member publishes Y − (X_0 + X_1) for a Y whose log it knows: X would be Y.
    rogue = sodium.crypto_core_ed25519_sub(base_mul(777), honest)
    with pytest.raises(DeckError, match="proof of knowledge"):
        verify_member_key(rogue, keys[2].proof(2), CONTEXT, 2)
    verify_member_key(keys[2].public, keys[2].proof(2), CONTEXT, 2)
    with pytest.raises(DeckError, match="proof of knowledge"):
        verify_member_key(keys[2].public, keys[2].proof(2), CONTEXT, 1)  # another seat's


# -- bad points and scalars -------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(IDENTITY, id="identity"),
        pytest.param(SMALL_ORDER, id="small-order"),
        pytest.param(MIXED, id="outside-subgroup"),
        pytest.param(NOT_CANONICAL, id="not-canonical"),
        pytest.param(bytes(32), id="off-curve"),
        pytest.param(BASE[:31], id="short"),
        pytest.param(BASE + b"\0", id="long"),
        pytest.param("G", id="not-bytes"),
    ],
)
def test_deck_every_bad_point_is_refused(raw: object) -> None:
    with pytest.raises(DeckError):
        check_point(raw)
    good = initial_deck(new_deck()[:3], BASE).to_bytes()
    if isinstance(raw, bytes) and len(raw) == 32:
        for at in (0, 32, 160):
            bad = good[:at] + raw + good[at + 32 :]
            with pytest.raises(DeckError, match="position"):
                Deck.from_bytes(bad, 3)
        with pytest.raises(DeckError):
            mul(5, raw)


def test_deck_a_deck_of_the_wrong_length_is_refused() -> None:
    good = initial_deck(new_deck()[:3], BASE).to_bytes()
    for raw in (good[:-1], good + b"\0", good[:128]):
        with pytest.raises(DeckError, match="expected 3 ciphertexts"):
            Deck.from_bytes(raw, 3)
    assert Deck.from_bytes(good, 3).to_bytes() == good


def test_deck_a_scalar_not_below_the_order_is_refused() -> None:
    with pytest.raises(DeckError, match="canonical"):
        check_scalar(ORDER.to_bytes(32, "little"))
    with pytest.raises(DeckError, match="32 bytes"):
        check_scalar(b"\1" * 31)
    assert check_scalar(scalar_bytes(ORDER - 1)) == ORDER - 1
    with pytest.raises(DeckError):
        base_mul(ORDER)


# -- the checks after the round ---------------------------------------------------------------


def _with_stage(transcript: DealTranscript, stage: int, deck: int, new: Deck) -> DealTranscript:
    """``transcript`` with deck ``deck`` replaced at ``stage``, the later members honest on it."""
    n = len(transcript.stages)
    keys = member_keys(n, "cheat")
    stages = [list(s) for s in transcript.stages]
    stages[stage][deck] = new
    for s in range(stage + 1, n):
        key = keys[member_at(stage=s, deck=deck, members=n)]
        stages[s][deck] = shuffle_stage(key.x, CONTEXT, deck, stages[s - 1][deck], transcript.joint)
    return dataclasses.replace(transcript, stages=tuple(tuple(s) for s in stages))


def _secrets(n: int, seed: str) -> dict[int, int]:
    return {i: k.x for i, k in enumerate(member_keys(n, seed))}


def test_deck_an_honest_deal_passes_every_check() -> None:
    keys = member_keys(4, "honest")
    transcript = deal(4, "honest")
    assert check_keys([k.public for k in keys], _secrets(4, "honest")) == []
    assert check_stages(transcript, [new_deck()] * 4, _secrets(4, "honest"), CONTEXT) == []


def _tampered_stage(how: str) -> list[Fault]:
    n, stage, d = 4, 2, 1
    keys = member_keys(n, "cheat")
    transcript = deal(n, "cheat")
    joint = transcript.joint
    ciphers = list(transcript.stages[stage][d].ciphers)
    if how == "substituted":  # a fresh encryption of a card of the cheater's choice
        ciphers[5] = reencrypt((BASE, add(card_point(Card.parse("AS")), joint)), 99, joint)
    elif how == "duplicated":  # one card twice, another gone
        ciphers[5] = reencrypt(ciphers[6], 99, joint)
    elif how == "permuted":  # a permutation not the seed's
        ciphers[0], ciphers[1] = ciphers[1], ciphers[0]
    elif how == "rerandomised":  # the same cards, another randomness
        ciphers = [reencrypt(c, 5, joint) for c in ciphers]
    bad = _with_stage(transcript, stage, d, Deck(tuple(ciphers)))
    # The cheat does not show in the cards alone, except as a duplicate.
    x = joint_secret(keys)
    opened = [decrypt_with(x, c) for c in bad.stages[stage][d]]
    assert all(card is not None for card in opened)
    return check_stages(bad, [new_deck()] * n, _secrets(n, "cheat"), CONTEXT)


@pytest.mark.parametrize("how", ["substituted", "duplicated", "permuted", "rerandomised"])
def test_deck_a_stage_not_its_seeds_rerun_is_caught_and_blamed(how: str) -> None:
    cheater = member_at(stage=2, deck=1, members=4)
    # Only the cheater's stage is at fault: the next stage re-runs from what it received.
    assert _tampered_stage(how) == [Fault(FaultKind.BAD_STAGE, cheater, deck=1, at=2)]


def test_deck_a_wrong_secret_is_caught() -> None:
    keys = member_keys(3, "x")
    secrets = _secrets(3, "x")
    secrets[1] = (secrets[1] + 1) % ORDER
    assert check_keys([k.public for k in keys], secrets) == [Fault(FaultKind.WRONG_SECRET, 1)]
    del secrets[2]
    assert Fault(FaultKind.UNREVEALED, 2) in check_keys([k.public for k in keys], secrets)


def test_deck_a_wrong_share_is_caught_after_the_round_too() -> None:
    keys = member_keys(3, "shares")
    final = deal(3, "shares").final
    good = make_share(keys[2], 2, 0, 4, final[0][4])
    bad = Share(2, 2, 0, 5, good.point, good.proof)  # the share of position 4, sent for 5
    found = check_shares([good, bad], [d.ciphers for d in final], _secrets(3, "shares"))
    assert found == [Fault(FaultKind.BAD_SHARE, 2, deck=0, at=5)]


def test_deck_a_restarted_deal_derives_new_secrets() -> None:
    from p2p_nertz.deck.keys import MemberKey, round_context
    from tests.deck_helpers import GAME_ID

    first, again = (MemberKey.from_seed(b"s", round_context(GAME_ID, 1, a)) for a in (0, 1))
    assert first.x != again.x
    with pytest.raises(ValueError, match="attempt"):
        round_context(GAME_ID, 1, 256)
