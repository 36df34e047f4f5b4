"""Property tests: random legal play keeps every card, scores recount, notation round-trips,
and the move generator agrees with the move validator."""

from __future__ import annotations

from helpers_rules import check_invariants, random_walk, recount
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rng import Rng
from p2p_nertz.rules import (
    Card,
    Claim,
    FoundationId,
    Lake,
    Move,
    MoveKind,
    Outcome,
    Pile,
    Rules,
    Table,
    Tableau,
    new_deck,
    shuffled_deck,
)

rules_strategy = st.builds(
    Rules,
    draw=st.sampled_from([1, 3]),
    work_piles=st.sampled_from([4, 5, 6]),
    nerts_bonus=st.sampled_from([0, 5, 10, 25]),
    nerts_card_penalty=st.sampled_from([1, 2]),
    false_call_penalty=st.sampled_from([0, 5, 9]),
    rotate_alone=st.booleans(),
    pairs=st.booleans(),
    jokers=st.sampled_from([0, 1, 2]),
)


@st.composite
def dealt_tables(draw: st.DrawFn) -> tuple[Table, int]:
    rules = draw(rules_strategy)
    seats = draw(st.just(4) if rules.pairs else st.integers(1, 4))
    seed = draw(st.integers(0, 2**32))
    decks = [shuffled_deck(f"{seed}/{s}".encode(), rules.jokers) for s in range(seats)]
    return Table.deal(rules, decks), seed


@settings(max_examples=40, deadline=None)
@given(dealt_tables())
def test_random_play_never_loses_or_duplicates_a_card(dealt: tuple[Table, int]) -> None:
    table, seed = dealt
    check_invariants(table)
    # Every listed move plays without raising (random_walk plays only listed moves, plus
    # same-time and late replays of lake cards: true ties and lost races).
    table, plays = random_walk(table, Rng(seed), 400, check_every=25)
    check_invariants(table)
    assert plays
    for p in plays:
        if p.resolution is not None and not p.resolution.kept:
            assert p.resolution.outcome is Outcome.LOST and p.resolution.winner is not None


@settings(max_examples=30, deadline=None)
@given(dealt_tables())
def test_scores_match_a_recount_from_the_final_state(dealt: tuple[Table, int]) -> None:
    table, seed = dealt
    table, _ = random_walk(table, Rng(seed ^ 0x5EED), 400)
    score = table.score()
    seats, teams = recount(table)
    assert list(score.team_totals) == teams
    assert sum(p.total for p in score.players) == sum(teams)
    if not table.rules.pairs:
        assert [p.total for p in score.players] == [
            s + (table.rules.nerts_bonus if i in table.callers else 0) for i, s in enumerate(seats)
        ]
    # The bonus goes to callers only, once per team, and only for a valid call.
    assert {p.seat for p in score.players if p.bonus} <= set(table.callers)
    for seat in table.callers:
        assert table.can_call(seat)


@settings(max_examples=30, deadline=None)
@given(dealt_tables())
def test_notation_round_trips_for_positions_reached_by_play(dealt: tuple[Table, int]) -> None:
    table, seed = dealt
    table, plays = random_walk(table, Rng(seed + 1), 300)
    for t in table.tableaux:
        assert Tableau.parse(str(t)) == t
        assert eval(repr(t), {"Tableau": Tableau}) == t
    lake = table.lake
    assert eval(repr(lake), {"Lake": Lake}) == lake
    # The display form drops the times; with them zeroed it is the same lake.
    assert str(Lake.parse(str(lake))) == str(lake)
    for p in plays:
        assert Move.parse(str(p.move)) == p.move
        assert eval(repr(p.move), {"Move": Move}) == p.move
        if p.resolution is not None:
            claim = p.resolution.claim
            assert Claim.parse(str(claim)) == claim
            assert eval(repr(claim), {"Claim": Claim}) == claim
    for c in (lc.card for lc in lake.cards()):
        assert Card.parse(str(c)) == c


def candidate_moves(table: Table, seat: int, rng: Rng) -> list[Move]:
    """Moves of every shape at this position, legal or not: the generator must list exactly
    the ones the validator accepts."""
    t = table.tableaux[seat]
    piles = [Pile.NERTS, Pile.WASTE, *t.work_piles]
    declares: list[Card | None] = [None]
    declares += [m.declare for m in table.legal_moves(seat) if m.declare is not None]
    declares += [rng.choice(new_deck()) for _ in range(2)]
    foundations: list[FoundationId | None] = [None, *table.lake]
    foundations += [
        FoundationId(seat, s, j) for s in {*(f.suit for f in table.lake)} for j in (0, 1)
    ]
    moves = [Move.turn(), Move.rotate()]
    for src in piles:
        depth = len(t.pile(src)) if src.is_work else 1
        for decl in declares:
            for fid in foundations:
                moves.append(Move.to_lake(src, fid, decl))
            for dst in t.work_piles:
                for count in range(1, depth + 1):
                    moves.append(Move.to_pile(src, dst, count, decl))
                    moves.append(Move.slide(src, dst, count, decl))
    return list(dict.fromkeys(moves))


@settings(max_examples=25, deadline=None)
@given(dealt_tables(), st.integers(0, 120))
def test_legal_moves_are_exactly_the_moves_that_play(dealt: tuple[Table, int], steps: int) -> None:
    table, seed = dealt
    rng = Rng(seed + 2)
    table, _ = random_walk(table, rng, steps)
    if table.over:
        return
    for seat in range(table.seats):
        listed = set(table.legal_moves(seat))
        for move in candidate_moves(table, seat, rng):
            try:
                _, p = table.play(seat, move)
            except IllegalMoveError:
                assert move not in listed, f"{move} is listed but illegal:\n{table}"
                continue
            if p.resolution is not None and not p.resolution.kept:
                continue  # a lost race is a result, not a legal-move question
            if move.is_lake and move.foundation is None:
                assert move in table.legal_moves(seat), f"{move} plays but is not listed"
            elif move.kind is not MoveKind.CALL:
                assert move in listed, f"{move} plays but is not listed:\n{table}"
