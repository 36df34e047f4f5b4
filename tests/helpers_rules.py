"""Helpers for the rules-engine tests: tables from notation, invariants, an independent recount.

Everything here is written against the notation and the public API, not the engine's internals,
so that a check made with these helpers does not share the engine's mistakes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import pytest

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rng import Rng
from p2p_nertz.rules import (
    Card,
    FoundationId,
    Lake,
    Move,
    Pile,
    Play,
    RoundStatus,
    Rules,
    Table,
    Tableau,
    new_deck,
)

#: A four-pile tableau where nothing can move but the stock: for the seats a test ignores.
#: Red work cards never build on each other, a King in the Nerts pile has nowhere to go.
IDLE = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"


def table_from(
    *tableaux: str,
    lake: str = "",
    rules: Rules | None = None,
    active: Sequence[bool] | None = None,
) -> Table:
    """A table with one tableau per seat, each in tableau notation, and a lake in lake notation.

    The number of work piles in the rules follows the first tableau unless ``rules`` says so.
    """
    parsed = [Tableau.parse(t) for t in tableaux]
    if rules is None:
        rules = Rules(work_piles=len(parsed[0].work))
    return Table.from_tableaux(rules, parsed, Lake.parse(lake), active=active)


def play(
    table: Table, seat: int, move: str | Move, lamport: int | None = None
) -> tuple[Table, Play]:
    """Play one move given in notation."""
    m = Move.parse(move) if isinstance(move, str) else move
    return table.play(seat, m, lamport)


def script(table: Table, *steps: str) -> tuple[Table, list[Play]]:
    """Play steps written ``"<seat> <move>"`` or ``"<seat> <move> @<lamport>"`` in order."""
    plays = []
    for step in steps:
        words = step.split()
        lamport = int(words[2].lstrip("@")) if len(words) > 2 else None
        table, p = play(table, int(words[0]), words[1], lamport)
        plays.append(p)
    return table, plays


def assert_illegal(
    table: Table, seat: int, move: str | Move, fragment: str = "", lamport: int | None = None
) -> IllegalMoveError:
    """Check that a move raises IllegalMoveError naming it, and that the table is unchanged."""
    m = Move.parse(move) if isinstance(move, str) else move
    before_text, before_repr = str(table), repr(table)
    with pytest.raises(IllegalMoveError) as info:
        table.play(seat, m, lamport)
    assert str(table) == before_text
    assert repr(table) == before_repr
    message = str(info.value)
    assert fragment in message, message
    if m.plays_card or m.kind.value in "SR":
        assert str(m) in message, f"the error does not name the move {m}: {message}"
    return info.value


def fits(card: Card, below: Card) -> bool:
    """An independent statement of RULES.md's building rule: one lower, the other colour."""
    assert card.suit is not None and below.suit is not None
    return card.rank == below.rank - 1 and card.suit.is_red != below.suit.is_red


def pile_is_valid(cards: Sequence[Card]) -> bool:
    """A work pile is built down in alternating colours; an undeclared joker only on top."""
    for i, c in enumerate(cards):
        if i == 0:
            continue
        below = cards[i - 1]
        if below.suit is None:
            return False  # nothing lies on an undeclared joker
        if c.suit is None:
            if below.rank < 2 or i != len(cards) - 1:
                return False
        elif not fits(c, below):
            return False
    return True


def foundation_is_valid(fid: FoundationId, cards: Sequence[Card]) -> bool:
    """A foundation: its owner's ace, then the same suit one rank up at a time (ties allowed)."""
    if not cards or cards[0].rank != 1 or cards[0].joker != fid.joker:
        return False
    previous = 0
    for c in cards:
        if c.suit is not fid.suit or c.rank not in (previous, previous + 1):
            return False
        if c.rank == previous and c.rank == 1:
            return False
        previous = c.rank
    return True


def physical_deck(rules: Rules) -> list[Card]:
    """One seat's physical cards, sorted."""
    return sorted(new_deck(rules.jokers), key=Card.sort_key)


def check_invariants(table: Table, before: Table | None = None) -> None:
    """Conservation, well-formed work piles and foundations, notation round trips.

    Each seat owns its whole physical deck, or, for a position written by hand, exactly the
    cards it owned in ``before``.
    """
    deck = physical_deck(table.rules)
    for seat in range(table.seats):
        owned = sorted(table.owned_cards(seat), key=Card.sort_key)
        expected = deck if before is None else sorted(before.owned_cards(seat), key=Card.sort_key)
        assert owned == expected, f"seat {seat} lost or duplicated a card:\n{table}"
        t = table.tableaux[seat]
        for i, pile in enumerate(t.work, 1):
            assert pile_is_valid(pile), f"seat {seat} work pile {i} is not built down: {t}"
        assert Tableau.parse(str(t)) == t
    for fid in table.lake:
        cards = [lc.card for lc in table.lake[fid]]
        assert foundation_is_valid(fid, cards), f"foundation {fid}: {cards}"
        assert table.lake[fid][0].owner == fid.owner
    assert eval(repr(table.lake), {"Lake": Lake}) == table.lake
    assert Table.parse(str(table)) == table  # the whole table's notation reads back


def recount(table: Table) -> tuple[list[int], list[int]]:
    """Each seat's and each team's round score, counted from the final state (RULES.md: scoring).

    +1 per own card in the lake, minus the penalty per card left in the Nerts pile, minus the
    false-call penalties; the Nerts bonus once per team that made a valid call.
    """
    rules = table.rules
    in_lake: Counter[int] = Counter()
    for fid in table.lake:
        for lc in table.lake[fid]:
            in_lake[lc.owner] += 1
    seats = []
    for seat, t in enumerate(table.tableaux):
        if not table.active[seat]:
            seats.append(0)
            continue
        seats.append(
            in_lake[seat]
            - rules.nerts_card_penalty * len(t.nerts)
            - rules.false_call_penalty * table.false_calls[seat]
        )
    team_count = table.seats // 2 if rules.pairs else table.seats
    teams = [0] * team_count
    for seat, points in enumerate(seats):
        teams[seat // 2 if rules.pairs else seat] += points
    called = {seat // 2 if rules.pairs else seat for seat in table.callers}
    for team in called:
        teams[team] += rules.nerts_bonus
    return seats, teams


def random_walk(
    table: Table,
    rng: Rng,
    steps: int,
    *,
    check_every: int = 0,
    races: bool = True,
) -> tuple[Table, list[Play]]:
    """Play random legal moves; sometimes replay a lake card of another seat onto the same
    foundation at the same Lamport time (a true tie) or later (a lost race).

    Every listed move must play without raising. With ``check_every``, invariants are checked
    every that many steps.
    """
    plays: list[Play] = []
    seats = [s for s in range(table.seats) if table.active[s]]
    for step in range(steps):
        if table.over:
            break
        seat = rng.choice(seats)
        moves = list(table.legal_moves(seat))
        card_moves = [m for m in moves if m.plays_card]
        roll = rng.random()
        if table.can_call(seat) and roll < 0.3:
            move = Move.call()
        elif card_moves and roll < 0.75:
            move = rng.choice(card_moves)
        else:
            others = [m for m in moves if not m.plays_card and (m.kind.value != "X" or roll < 0.77)]
            move = rng.choice(others)
        table, p = table.play(seat, move)
        plays.append(p)
        if races and p.resolution is not None and p.resolution.kept and rng.random() < 0.5:
            table, extra = _race(table, rng, seat, p)
            plays += extra
        if check_every and step % check_every == 0:
            check_invariants(table)
    return table, plays


def _race(table: Table, rng: Rng, seat: int, p: Play) -> tuple[Table, list[Play]]:
    """Another seat plays the same rank and suit onto the same foundation, same time or later."""
    assert p.resolution is not None
    claim = p.resolution.claim
    if claim.card.rank == 1:
        return table, []
    for other in range(table.seats):
        if other == seat or not table.active[other]:
            continue
        t = table.tableaux[other]
        for source in (Pile.NERTS, Pile.WASTE, *t.work_piles):
            top = t.top(source)
            if top is not None and top.suit is claim.card.suit and top.rank == claim.card.rank:
                lamport = table.clock + rng.below(2)
                move = Move.to_lake(source, claim.foundation)
                table, q = table.play(other, move, lamport)
                return table, [q]
    return table, []


def lake_cards(lake: Lake) -> Iterable[tuple[FoundationId, str]]:
    """Each foundation with its cards in notation (``AS/0 2S/1``)."""
    for fid in lake:
        yield fid, " ".join(str(lc) for lc in lake[fid])


def is_over(table: Table) -> bool:
    """Whether the round has ended (for readability in tests)."""
    return table.status is not RoundStatus.PLAYING
