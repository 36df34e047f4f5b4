"""The lake: foundations, claims and the resolver (RULES.md: lake; DESIGN.md §4)."""

from __future__ import annotations

from helpers_rules import IDLE, assert_illegal, foundation_is_valid, script, table_from
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nertz.rules import (
    SUITS,
    Card,
    Claim,
    FoundationId,
    Lake,
    Move,
    Outcome,
    Pile,
    Resolution,
    card,
    resolve,
)

F0S = FoundationId.parse("0S")
F0H = FoundationId.parse("0H")
F1S = FoundationId.parse("1S")


def lake_text(lake: Lake) -> list[str]:
    return str(lake).splitlines()


# -- foundations --------------------------------------------------------------------------


def test_ace_starts_its_owners_foundation() -> None:
    table = table_from("N: AS | 1: 9C | 2: 8C | 3: 7C | 4: 6C", IDLE.replace("KS", "AH"))
    table, plays = script(table, "0 N>L", "1 N>L")
    assert lake_text(table.lake) == ["0S: AS/0", "1H: AH/1"]
    assert [p.resolution.outcome for p in plays if p.resolution] == [Outcome.KEPT] * 2
    assert table.tableaux[0].nerts == ()


def test_aces_never_conflict_even_at_the_same_time() -> None:
    table = table_from(
        "N: AS | 1: 9C | 2: 8C | 3: 7C | 4: 6C", "N: AS | 1: 9C | 2: 8C | 3: 7C | 4: 6C"
    )
    table, plays = script(table, "0 N>L @3", "1 N>L @3")
    assert [p.resolution.outcome for p in plays if p.resolution] == [Outcome.KEPT] * 2
    assert lake_text(table.lake) == ["0S: AS/0", "1S: AS/1"]


def test_aces_in_the_resolver_start_separate_foundations() -> None:
    lake, results = resolve([Claim.parse("0:N:AS@1"), Claim.parse("1:N:AS@1")])
    assert [r.outcome for r in results] == [Outcome.KEPT, Outcome.KEPT]
    assert list(lake) == [F0S, F1S]


def test_build_up_in_suit_to_the_king_completes_the_foundation() -> None:
    queen = "0H: " + " ".join(f"{r}H/0" for r in ["A", *map(str, range(2, 11)), "J", "Q"])
    table = table_from("N: KH | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake=queen)
    assert table.lake.completed() == ()
    table, (p,) = script(table, "0 N>L")
    assert p.resolution is not None and p.resolution.outcome is Outcome.KEPT
    assert table.lake.height(F0H) == 13
    assert table.lake.completed() == (F0H,)
    # Set aside: it takes nothing more, and is no longer open...
    assert dict(table.lake.open_foundations()) == {}
    assert all(table.lake.targets(card(r, s)) == () for r in range(2, 14) for s in SUITS)
    # ...but its cards still score (RULES.md: a completed foundation still scores).
    assert table.score().players[0].lake == 13
    assert table.score().players[0].total == 13


def test_build_refuses_another_suit_or_a_skipped_rank() -> None:
    table = table_from("N: 3H | 1: 3S | 2: 8C | 3: 7C | 4: 6C", lake="0S: AS/0")
    assert_illegal(table, 0, "N>L@0S", "cannot go on the SPADES foundation")
    assert_illegal(table, 0, "N>L", "fits on no foundation")
    assert_illegal(table, 0, "1>L@3S", "does not fit on foundation 3S (not started)")
    # A skipped rank on a started foundation is a claim the lake resolves: lost, the card stays.
    after, (p,) = script(table, "0 1>L@0S")
    assert p.resolution is not None and p.resolution.outcome is Outcome.LOST
    assert after.tableaux == table.tableaux and after.lake == table.lake


def test_anyone_plays_on_anyones_foundation() -> None:
    table = table_from(IDLE, "N: 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake="0S: AS/0")
    table, (p,) = script(table, "1 N>L")
    assert p.resolution is not None and p.resolution.outcome is Outcome.KEPT
    assert lake_text(table.lake) == ["0S: AS/0 2S/1"]
    score = table.score()
    assert [s.lake for s in score.players] == [1, 1]


def test_lake_move_without_a_foundation_goes_on_the_first_that_fits() -> None:
    table = table_from(
        IDLE, "N: 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake="1S: AS/1; 0S: AS/0; 0H: AH/0"
    )
    assert table.lake.targets(Card.parse("2S")) == (F0S, F1S)
    assert table.lake_target(1, Pile.NERTS) == F0S
    table, _ = script(table, "1 N>L")
    assert table.lake.height(F0S) == 2
    assert table.lake.height(F1S) == 1


def test_lake_move_from_waste_and_work_pile() -> None:
    table = table_from("N: KS | 1: 9C 2S | 2: 8C | 3: 7C | 4: 6C | W: 4H 3S", lake="0S: AS/0")
    table, _ = script(table, "0 1>L", "0 W>L")
    assert lake_text(table.lake) == ["0S: AS/0 2S/0 3S/0"]
    assert str(table.tableaux[0]) == "N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: - | W: 4H"


def test_lake_move_from_an_empty_pile_is_refused() -> None:
    table = table_from("N: - | 1: - | 2: 8C | 3: 7C | 4: 6C | W: -", lake="0S: AS/0")
    assert_illegal(table, 0, "N>L", "Nerts pile is empty")
    assert_illegal(table, 0, "W>L", "waste is empty")
    assert_illegal(table, 0, "1>L", "work pile 1 is empty")
    assert_illegal(table, 0, "5>L", "no work pile 5")


# -- races --------------------------------------------------------------------------------


def test_lost_race_returns_the_card_and_names_the_winner() -> None:
    table = table_from(
        IDLE,
        "N: KD | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: 2S",
        "N: KD | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: 2S",
        lake="0S: AS/0",
    )
    table, (first,) = script(table, "1 W>L@0S @4")
    before = table.tableaux[2]
    lake_before = table.lake
    table, (late,) = script(table, "2 W>L@0S @5")  # a stale view: it looked free
    assert first.resolution is not None and first.resolution.outcome is Outcome.KEPT
    assert late.resolution is not None
    assert late.resolution.outcome is Outcome.LOST
    assert late.resolution.winner == 1
    assert not late.resolution.kept
    assert table.tableaux[2] == before  # the 2S is back on the waste
    assert table.lake == lake_before
    assert [s.lake for s in table.score().players] == [1, 1, 0]


def test_lost_race_after_the_foundation_grew_names_who_holds_that_height() -> None:
    table = table_from(IDLE, "N: 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake="0S: AS/0 2S/2@3 3S/0@4")
    table, (p,) = script(table, "1 N>L@0S @6")
    assert p.resolution == Resolution(Claim.parse("1:N:2S>0S@6"), Outcome.LOST, 2)
    assert table.tableaux[1].nerts == (Card.parse("2S"),)


def test_true_tie_keeps_both_cards_and_both_score() -> None:
    table = table_from(
        IDLE,
        "N: KD | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: 2S",
        "N: KD | 1: 2S | 2: 8C | 3: 7C | 4: 6C",
        lake="0S: AS/0",
    )
    table, plays = script(table, "1 W>L@0S @5", "2 1>L@0S @5")
    assert [p.resolution.outcome for p in plays if p.resolution] == [Outcome.KEPT, Outcome.TIED]
    assert all(p.resolution is not None and p.resolution.kept for p in plays)
    assert lake_text(table.lake) == ["0S: AS/0 2S/1 2S/2"]
    assert table.tableaux[1].waste == () and table.tableaux[2].work[0] == ()
    assert [s.lake for s in table.score().players] == [1, 1, 1]
    # The foundation goes on from the tied height.
    assert table.lake.targets(Card.parse("3S")) == (F0S,)


def test_after_a_tie_a_later_claim_at_that_height_loses() -> None:
    lake = Lake.parse("0S: AS/0@1 2S/1@5 2S/2@5")
    lake2, r = lake.apply(Claim.parse("3:W:2S>0S@6"))
    assert r.outcome is Outcome.LOST and r.winner in (1, 2)
    assert lake2 == lake
    lake3, r = lake.apply(Claim.parse("3:W:2S>0S@5"))  # a third card at the same time: tied
    assert r.outcome is Outcome.TIED
    assert str(lake3) == "0S: AS/0 2S/1 2S/2 2S/3"


def test_resolver_claim_that_skips_a_rank_loses_with_no_winner() -> None:
    # A peer's claim that never fitted is a result for the resolver (Table.play refuses it).
    lake = Lake.parse("0S: AS/0")
    for text in ("1:N:3S>0S@4", "1:N:2S>1S@4"):
        after, r = lake.apply(Claim.parse(text))
        assert r == Resolution(Claim.parse(text), Outcome.LOST, None)
        assert after == lake


def test_resolve_orders_claims_by_lamport_seat_and_seq() -> None:
    claims = [
        Claim.parse("1:N:2H>0H@3"),
        Claim.parse("0:W:AH@1"),
        Claim.parse("2:1:2H>0H@2"),
        Claim.parse("0:N:3H>0H@3#1"),
        Claim.parse("0:N:4H>0H@3#2"),
    ]
    lake, results = resolve(claims)
    assert [str(r.claim) for r in results] == [
        "0:W:AH@1",
        "2:1:2H>0H@2",
        "0:N:3H>0H@3#1",
        "0:N:4H>0H@3#2",
        "1:N:2H>0H@3",
    ]
    assert [r.outcome.value for r in results] == ["kept", "kept", "kept", "kept", "lost"]
    assert results[-1].winner == 2
    assert str(lake) == "0H: AH/0 2H/2 3H/0 4H/0"
    assert lake.count_by_owner() == {0: 3, 2: 1}


def test_resolve_continues_from_a_given_lake() -> None:
    start = Lake.parse("0H: AH/0@1")
    lake, results = resolve([Claim.parse("1:N:2H>0H@4")], start)
    assert str(lake) == "0H: AH/0 2H/1"
    assert start == Lake.parse("0H: AH/0@1")  # lakes are values
    assert results[0].outcome is Outcome.KEPT


def test_lake_digest_names_the_exact_lake() -> None:
    a = Lake.parse("0S: AS/0@1 2S/1@4")
    assert a.digest() == Lake.parse("0S: AS/0@1 2S/1@4").digest()
    assert a.digest() != Lake.parse("0S: AS/0@1 2S/1@5").digest()
    assert a.digest() != Lake.parse("0S: AS/0@1 2S/2@4").digest()
    assert hash(a) == hash(Lake.parse("0S: AS/0@1 2S/1@4"))
    assert a != "0S: AS/0 2S/1"


def test_lake_queries() -> None:
    lake = Lake.parse("1S: AS/1 2S/0; 0S: AS/0; 0H: AH/0 2H/1 3H/1")
    assert lake.height(F0S) == 1 and lake.height(FoundationId.parse("3C")) == 0
    assert dict(lake.open_foundations()) == {F0H: 3, F0S: 1, F1S: 2}
    assert lake.targets(Card.parse("2S")) == (F0S,)
    assert lake.targets(Card.parse("3S")) == (F1S,)
    assert lake.targets(Card.parse("AS")) == ()
    assert lake.targets(Card.parse("JK1")) == ()
    assert [str(lc) for lc in lake.cards()] == ["AH/0", "2H/1", "3H/1", "AS/0", "AS/1", "2S/0"]
    assert lake.count_by_owner() == {0: 3, 1: 3}
    assert lake[FoundationId.parse("2D")] == ()


def test_lake_targets_follow_every_kept_claim() -> None:
    lake = Lake()
    lake, _ = lake.apply(Claim.parse("0:N:AS@1"))
    lake, _ = lake.apply(Claim.parse("1:N:AS@1"))
    assert lake.targets(Card.parse("2S")) == (F0S, F1S)
    lake, _ = lake.apply(Claim.parse("2:W:2S>1S@2"))
    assert lake.targets(Card.parse("2S")) == (F0S,)
    assert lake.targets(Card.parse("3S")) == (F1S,)
    # The incremental index agrees with a lake built from scratch.
    rebuilt = eval(repr(lake), {"Lake": Lake})
    assert [rebuilt.targets(card(r, s)) for r in range(2, 14) for s in SUITS] == [
        lake.targets(card(r, s)) for r in range(2, 14) for s in SUITS
    ]


def test_joker_foundation_is_separate_from_the_real_ace() -> None:
    lake, results = resolve([Claim.parse("0:N:AS@1"), Claim.parse("0:W:JK1=AS>0S*1@2")])
    assert [r.outcome for r in results] == [Outcome.KEPT, Outcome.KEPT]
    assert [str(f) for f in lake] == ["0S", "0S*1"]
    assert lake.targets(Card.parse("2S")) == (F0S, FoundationId.parse("0S*1"))


# -- any delivery order gives the same lake -----------------------------------------------


@st.composite
def claim_sets(draw: st.DrawFn) -> list[Claim]:
    """Claims that make sense: several players with their own aces and following cards,
    random Lamport times with deliberate collisions, and a few retries of lost cards."""
    seats = draw(st.integers(2, 4))
    suits = draw(st.lists(st.sampled_from(SUITS), min_size=1, max_size=2, unique=True))
    top_rank = draw(st.integers(2, 6))
    seq = [0] * seats
    claims: list[Claim] = []

    def add(seat: int, c: Card, fid: FoundationId, lamport: int) -> None:
        seq[seat] += 1
        source = draw(st.sampled_from([Pile.NERTS, Pile.WASTE, Pile.W1, Pile.W3]))
        claims.append(Claim(seat, c, source, fid, lamport, seq[seat]))

    foundations = []
    for seat in range(seats):
        for suit in suits:
            if draw(st.booleans()):
                foundations.append(FoundationId(seat, suit))
                add(seat, card(1, suit), FoundationId(seat, suit), draw(st.integers(0, 3)))
    if not foundations:
        return claims
    for rank in range(2, top_rank + 1):
        for seat in range(seats):
            for suit in suits:
                choices = [f for f in foundations if f.suit is suit]
                if not choices or not draw(st.booleans()):
                    continue
                # Times in a small window so that races and true ties are common.
                lamport = draw(st.integers(rank, rank + 3))
                add(seat, card(rank, suit), draw(st.sampled_from(choices)), lamport)
                if draw(st.integers(0, 3)) == 0:  # a retry after a lost race
                    add(seat, card(rank, suit), draw(st.sampled_from(choices)), lamport + 1)
    return claims


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_resolve_any_delivery_order_gives_the_same_lake(data: st.DataObject) -> None:
    claims = data.draw(claim_sets())
    shuffled = data.draw(st.permutations(claims))
    lake, results = resolve(claims)
    lake2, results2 = resolve(shuffled)
    assert lake == lake2
    assert lake.digest() == lake2.digest()
    assert results == results2
    # And the lake is well formed: every card kept or tied is in it, once.
    kept = sum(1 for r in results if r.kept)
    assert sum(1 for _ in lake.cards()) == kept
    for fid in lake:
        assert foundation_is_valid(fid, [lc.card for lc in lake[fid]])


@settings(max_examples=100, deadline=None)
@given(claim_sets())
def test_resolve_one_claim_at_a_time_equals_resolve_all(claims: list[Claim]) -> None:
    lake, _ = resolve(claims)
    stepwise = Lake()
    for claim in sorted(claims, key=Claim.order_key):
        stepwise, _ = stepwise.apply(claim)
    assert stepwise == lake
    assert eval(repr(lake), {"Lake": Lake}) == lake


def test_move_notation_for_lake_moves_names_the_foundation() -> None:
    table = table_from(IDLE, "N: 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake="0S: AS/0; 1S: AS/1")
    lake_moves = [str(m) for m in table.legal_moves(1) if m.is_lake]
    assert lake_moves == ["N>L@0S", "N>L@1S"]
    assert Move.parse("N>L") in table.legal_moves(1)
