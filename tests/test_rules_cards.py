"""Notation of cards, moves, claims, foundations, tableaux and lakes; decks and shuffling."""

from __future__ import annotations

import pytest

from p2p_nertz.errors import NertzError, NotationError
from p2p_nertz.rules import (
    Card,
    Claim,
    FoundationId,
    Lake,
    LakeCard,
    Move,
    MoveKind,
    Pile,
    Suit,
    Tableau,
    card,
    format_cards,
    new_deck,
    parse_cards,
    shuffled_deck,
)

#: Names a pasted repr needs.
SCOPE = {
    "Card": Card,
    "Claim": Claim,
    "FoundationId": FoundationId,
    "Lake": Lake,
    "LakeCard": LakeCard,
    "Move": Move,
    "Tableau": Tableau,
}

ALL_CARDS = [*new_deck(jokers=2)] + [
    Card.parse(f"JK{n}={c}") for n in (1, 2) for c in map(str, new_deck())
]


def assert_notation_error(parse, text: str, *fragments: str) -> NotationError:
    with pytest.raises(NotationError) as info:
        parse(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err, NertzError)
    message = str(err)
    assert repr(text) in message or text in message, message
    for fragment in fragments:
        assert fragment in message, message
    return err


# -- cards --------------------------------------------------------------------------------


@pytest.mark.parametrize("c", ALL_CARDS, ids=str)
def test_card_str_parses_back(c: Card) -> None:
    assert Card.parse(str(c)) == c
    assert eval(repr(c), SCOPE) == c


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10H", "10H"),
        ("TH", "10H"),
        ("th", "10H"),
        ("10♥", "10H"),
        ("Q♠", "QS"),
        (" AS ", "AS"),
        ("as", "AS"),
        ("1S", "AS"),
        ("jk1", "JK1"),
        ("JK2=qd", "JK2=QD"),
    ],
)
def test_card_parse_accepts_aliases(text: str, expected: str) -> None:
    assert str(Card.parse(text)) == expected


def test_card_parse_gives_rank_suit_and_joker() -> None:
    c = Card.parse("QS")
    assert (c.rank, c.suit, c.joker, c.is_joker, c.declared) == (12, Suit.SPADES, 0, False, True)
    j = Card.parse("JK1")
    assert (j.rank, j.suit, j.joker, j.is_joker, j.declared) == (0, None, 1, True, False)
    d = Card.parse("JK2=5H")
    assert (d.rank, d.suit, d.joker, d.declared) == (5, Suit.HEARTS, 2, True)
    assert d.physical == Card.parse("JK2")
    assert c.physical is c


@pytest.mark.parametrize(
    "text",
    [
        "",
        "S",
        "1",
        "11H",
        "0H",
        "ZS",
        "10X",
        "AS2",
        "A S",
        "JK",
        "JK3",
        "JK0",
        "JK1=",
        "JK1=JK2",
        "JK1=0H",
        "JK1=5X",
        "joker",
    ],
)
def test_card_parse_malformed_raises_notation_error(text: str) -> None:
    assert_notation_error(Card.parse, text, "not a card")


def test_card_parse_error_explains_the_notation() -> None:
    err = assert_notation_error(Card.parse, "11H")
    assert "10H" in str(err)  # an example of the right form
    err = assert_notation_error(Card.parse, "JK3")
    assert "JK1" in str(err)


@pytest.mark.parametrize(
    ("rank", "suit", "joker"),
    [
        (14, Suit.SPADES, 0),
        (0, Suit.SPADES, 0),
        (5, None, 0),
        (5, None, 1),
        (0, Suit.HEARTS, 1),
        (0, None, 3),
    ],
)
def test_card_constructor_rejects_non_cards(rank: int, suit: Suit | None, joker: int) -> None:
    with pytest.raises(ValueError):
        Card(rank, suit, joker)


def test_card_colours_follow_suits() -> None:
    assert [Card.parse(t).is_red for t in ("AH", "AD", "AS", "AC", "JK1", "JK1=3D")] == [
        True,
        True,
        False,
        False,
        False,
        True,
    ]
    assert [s.is_red for s in Suit] == [False, True, True, False]


def test_card_declare_fixes_a_joker_and_only_a_joker() -> None:
    joker = Card.parse("JK1")
    assert joker.declare(5, Suit.HEARTS) == Card.parse("JK1=5H")
    assert joker.declare(5, Suit.HEARTS) != card(5, Suit.HEARTS)  # a joker stays traceable
    with pytest.raises(ValueError, match="undeclared joker"):
        Card.parse("5H").declare(5, Suit.HEARTS)
    with pytest.raises(ValueError, match="undeclared joker"):
        Card.parse("JK1=5H").declare(6, Suit.HEARTS)


def test_card_pretty_uses_symbols() -> None:
    assert Card.parse("10H").pretty() == "10♥"
    assert Card.parse("10H").pretty(symbols=False) == "10H"
    assert Card.parse("JK1=QS").pretty() == "JK1=Q♠"
    assert Card.parse("JK2").pretty() == "JK2"


def test_card_sort_key_is_a_total_order_matching_the_canonical_deck() -> None:
    deck = new_deck(jokers=2)
    assert sorted(reversed(deck), key=Card.sort_key) == list(deck)
    assert len({c.sort_key() for c in deck}) == len(deck)


def test_parse_cards_and_format_cards_round_trip() -> None:
    cards = parse_cards("AS 2H, 10C JK1=4D")
    assert cards == (Card.parse("AS"), Card.parse("2H"), Card.parse("10C"), Card.parse("JK1=4D"))
    assert format_cards(cards) == "AS 2H 10C JK1=4D"
    assert parse_cards(format_cards(cards)) == cards
    assert parse_cards("-") == parse_cards("") == ()
    assert format_cards(()) == "-"
    with pytest.raises(NotationError, match="'XX'"):
        parse_cards("AS XX")


# -- decks --------------------------------------------------------------------------------


def test_new_deck_has_52_distinct_cards_in_canonical_order() -> None:
    deck = new_deck()
    assert len(deck) == len(set(deck)) == 52
    assert {(c.rank, c.suit) for c in deck} == {(r, s) for r in range(1, 14) for s in Suit}
    assert format_cards(deck[:3]) == "AC 2C 3C"
    assert str(deck[-1]) == "KS"
    assert not any(c.is_joker for c in deck)


@pytest.mark.parametrize("jokers", [1, 2])
def test_new_deck_adds_distinct_undeclared_jokers(jokers: int) -> None:
    deck = new_deck(jokers)
    assert len(deck) == len(set(deck)) == 52 + jokers
    assert [str(c) for c in deck[52:]] == [f"JK{n}" for n in range(1, jokers + 1)]


@pytest.mark.parametrize("jokers", [-1, 3])
def test_new_deck_refuses_other_joker_counts(jokers: int) -> None:
    with pytest.raises(ValueError, match="jokers"):
        new_deck(jokers)


@pytest.mark.parametrize("jokers", [0, 1, 2])
def test_shuffled_deck_is_a_permutation_of_the_deck(jokers: int) -> None:
    deck = shuffled_deck(b"perm", jokers)
    assert sorted(deck, key=Card.sort_key) == list(new_deck(jokers))
    assert deck != new_deck(jokers)


def test_shuffled_deck_is_deterministic_per_seed() -> None:
    assert shuffled_deck(b"seed-1") == shuffled_deck(b"seed-1")
    assert shuffled_deck(b"seed-1", 2) == shuffled_deck(b"seed-1", 2)


def test_shuffled_deck_differs_between_seeds() -> None:
    decks = {shuffled_deck(f"seed-{i}".encode()) for i in range(50)}
    assert len(decks) == 50


def test_shuffled_deck_golden_order_is_stable() -> None:
    # A regression pin: the deal must be byte-for-byte the same on every version and platform,
    # or peers would deal different games from the same seed.
    deck = shuffled_deck(b"golden")
    assert format_cards(deck[:13]) == "8S KS AD 6H 10D 10C 2C 4S KH 7C AS 4H 2H"
    assert format_cards(deck[-13:]) == "AC 9D 2D 8C QH 9S 3S 6D 7S 4D JC 9C KD"
    with_jokers = shuffled_deck(b"golden", 2)
    assert format_cards(with_jokers[:13]) == "KD 8S 3D 2D 7H 8C 3S 7D QS 2H 10H AD 10C"


# -- foundations --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["0S", "3H", "7C*1", "2D*2"])
def test_foundation_id_round_trips(text: str) -> None:
    fid = FoundationId.parse(text)
    assert str(fid) == text
    assert eval(repr(fid), SCOPE) == fid


def test_foundation_id_parse_reads_owner_suit_joker() -> None:
    assert FoundationId.parse("3h*1") == FoundationId(owner=3, suit=Suit.HEARTS, joker=1)
    assert FoundationId.parse(" 0S ") == FoundationId(0, Suit.SPADES)


@pytest.mark.parametrize("text", ["", "S0", "0X", "10S", "0S*3", "0S*", "AS"])
def test_foundation_id_parse_malformed_raises(text: str) -> None:
    assert_notation_error(FoundationId.parse, text, "not a foundation")


# -- moves --------------------------------------------------------------------------------

MOVE_TEXTS = [
    "S",
    "R",
    "P",
    "X",
    "N>L",
    "W>L",
    "3>L",
    "W>L@0S",
    "N>L@2H*1",
    "N>2",
    "W>1",
    "1>4",
    "1:3>4",
    "6:12>1",
    "N>_2",
    "W>_3",
    "2:2>_5",
    "W>L=5H",
    "N>L@0S*1=AS",
    "N>3=7S",
    "1:2>_4=9D",
]


@pytest.mark.parametrize("text", MOVE_TEXTS)
def test_move_str_parses_back(text: str) -> None:
    move = Move.parse(text)
    assert str(move) == text
    assert eval(repr(move), SCOPE) == move
    assert Move.parse(text.lower()) == move


def test_move_parse_reads_every_field() -> None:
    m = Move.parse("2:3>_5=9D")
    assert (m.kind, m.source, m.target, m.count, m.foundation, m.declare) == (
        MoveKind.SLIDE,
        Pile.W2,
        Pile.W5,
        3,
        None,
        Card.parse("9D"),
    )
    lake = Move.parse("W>L@1H")
    assert lake.is_lake and lake.plays_card
    assert lake.foundation == FoundationId(1, Suit.HEARTS)
    assert not Move.parse("S").plays_card
    assert Move.parse("1:1>2") == Move.parse("1>2")


def test_move_constructors_match_the_notation() -> None:
    assert Move.turn() == Move.parse("S")
    assert Move.rotate() == Move.parse("R")
    assert Move.pass_() == Move.parse("P")
    assert Move.call() == Move.parse("X")
    assert Move.to_lake(Pile.NERTS) == Move.parse("N>L")
    assert Move.to_lake(Pile.WASTE, FoundationId(0, Suit.SPADES)) == Move.parse("W>L@0S")
    assert Move.to_lake(Pile.W1, declare=Card.parse("5H")) == Move.parse("1>L=5H")
    assert Move.to_pile(Pile.W1, Pile.W4, 3) == Move.parse("1:3>4")
    assert Move.slide(Pile.NERTS, Pile.W2) == Move.parse("N>_2")
    assert Move.slide(Pile.W1, Pile.W2, 2, Card.parse("6S")) == Move.parse("1:2>_2=6S")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "not a move"),
        ("Q", "not a move"),
        ("N>", "not a move"),
        ("N>7", "not a move"),
        ("L>1", "not a move"),
        ("N:2>3", "only a work pile moves several"),
        ("W:2>3", "only a work pile moves several"),
        ("1:0>3", "only a work pile moves several"),
        ("1:2>L", "one card at a time goes to the lake"),
        ("N>_L", "one card at a time goes to the lake"),
        ("1>N", "never go to the Nerts pile or waste"),
        ("1>W", "never go to the Nerts pile or waste"),
        ("N>2@0S", "only a lake move names a foundation"),
        ("N>L@0X", "not a move"),
        ("N>L=JK1", "not a move"),
        ("N>L=11H", "not a move"),
        ("S S", "not a move"),
    ],
)
def test_move_parse_malformed_raises_notation_error(text: str, fragment: str) -> None:
    assert_notation_error(Move.parse, text, fragment)


def test_pile_work_numbers_and_text() -> None:
    assert Pile.work(3) is Pile.W3
    assert [str(p) for p in Pile] == ["N", "1", "2", "3", "4", "5", "6", "W", "L"]
    assert [p.is_work for p in (Pile.NERTS, Pile.W1, Pile.W6, Pile.WASTE, Pile.LAKE)] == [
        False,
        True,
        True,
        False,
        False,
    ]
    with pytest.raises(ValueError):
        Pile.work(7)


# -- claims -------------------------------------------------------------------------------

CLAIM_TEXTS = [
    "0:N:AS@1",
    "1:W:5S>0S@12",
    "2:3:2H>0H@5#4",
    "3:N:JK1=AS>3S*1@7",
    "0:6:JK2=9D>1D@0",
    "1:W:7C>2C*1@3",
]


@pytest.mark.parametrize("text", CLAIM_TEXTS)
def test_claim_str_parses_back(text: str) -> None:
    claim = Claim.parse(text)
    assert str(claim) == text
    assert eval(repr(claim), SCOPE) == claim


def test_claim_parse_reads_every_field() -> None:
    c = Claim.parse("1:W:5S>0S@12#3")
    assert (c.seat, c.card, c.source, c.foundation, c.lamport, c.seq) == (
        1,
        Card.parse("5S"),
        Pile.WASTE,
        FoundationId(0, Suit.SPADES),
        12,
        3,
    )
    assert c.height == 5
    assert c.order_key() == (12, 1, 3)
    ace = Claim.parse("2:4:AD@0")
    assert ace.foundation == FoundationId(2, Suit.DIAMONDS)
    assert ace.source is Pile.W4


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "not a claim"),
        ("0:N:5S@1", "only an ace may omit its foundation"),
        ("0:N:JK1@1", "joker must be declared"),
        ("0:N:5S>0H@1", "HEARTS"),
        ("0:N:AS>1S@1", "starts its own foundation"),
        ("0:L:5S>0S@1", "not a claim"),
        ("0:N:5S>0S", "not a claim"),
        ("0:N:XX>0S@1", "not a card"),
        ("0:N:5S>QS@1", "not a foundation"),
    ],
)
def test_claim_parse_malformed_raises_notation_error(text: str, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        Claim.parse(text)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value)


def test_claim_constructor_validates() -> None:
    spade = FoundationId(0, Suit.SPADES)
    with pytest.raises(ValueError, match="declared"):
        Claim(0, Card.parse("JK1"), Pile.NERTS, spade)
    with pytest.raises(ValueError, match="cannot go on"):
        Claim(0, Card.parse("5H"), Pile.NERTS, spade)
    with pytest.raises(ValueError, match="own foundation"):
        Claim(1, Card.parse("AS"), Pile.NERTS, spade)
    with pytest.raises(ValueError, match="from the Nerts pile, waste or a work pile"):
        Claim(0, Card.parse("5S"), Pile.LAKE, spade)


# -- tableaux -----------------------------------------------------------------------------

TABLEAU_TEXTS = [
    "N: 4C 9D KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H | W: -",
    "N: - | 1: - | 2: - | 3: - | 4: - | S: - | W: -",
    "N: AS | 1: KD | 2: QC | 3: JH | 4: 10S | 5: 9D | S: 2C | W: 3C 4C",
    "N: JK1 | 1: KD | 2: QC | 3: JH | 4: 10S | 5: 9D | 6: 9S JK2 | S: - | W: JK1=5C",
]


@pytest.mark.parametrize("text", TABLEAU_TEXTS)
def test_tableau_str_parses_back(text: str) -> None:
    if "JK1 " in text and "JK1=" in text:
        # A deck holds one JK1: the same joker twice is refused (see the malformed cases).
        text = text.replace("JK1=5C", "5C")
    t = Tableau.parse(text)
    assert str(t) == text
    assert Tableau.parse(str(t)) == t
    assert eval(repr(t), SCOPE) == t


def test_tableau_parse_reads_piles_bottom_to_top() -> None:
    t = Tableau.parse("N: 4C KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H | W: 9S 3D")
    assert t.nerts == parse_cards("4C KS")
    assert t.work == (parse_cards("QH JS"), (), parse_cards("5D"), parse_cards("8C"))
    assert t.stock == parse_cards("2C 7H")
    assert t.waste == parse_cards("9S 3D")
    assert [t.top(p) for p in (Pile.NERTS, Pile.W1, Pile.W2, Pile.WASTE)] == [
        Card.parse("KS"),
        Card.parse("JS"),
        None,
        Card.parse("3D"),
    ]
    assert len(t) == 10
    assert t.work_piles == (Pile.W1, Pile.W2, Pile.W3, Pile.W4)
    assert t.has_empty_work_pile()


def test_tableau_parse_accepts_newlines_and_omitted_stock_and_waste() -> None:
    t = Tableau.parse("N: KS\n1: QH\n2: -\n3: 5D\n4: 8C\n")
    assert t == Tableau.parse("N: KS | 1: QH | 2: - | 3: 5D | 4: 8C | S: - | W: -")
    assert t.stock == t.waste == ()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("1: AS | 2: - | 3: - | 4: -", "needs its Nerts pile"),
        ("N: - | 1: - | 2: - | 3: -", "work piles 1 to 4, 5 or 6"),
        ("N: - | 1: - | 2: - | 3: - | 4: - | 5: - | 6: - | 7: -", "not a tableau part"),
        ("N: - | 1: - | 2: - | 4: - | 5: -", "work piles 1 to 4, 5 or 6"),
        ("N: - | N: - | 1: - | 2: - | 3: - | 4: -", "appears twice"),
        ("N: AS | 1: AS | 2: - | 3: - | 4: -", "AS appears twice"),
        ("N: JK1 | 1: JK1=5H | 2: - | 3: - | 4: -", "JK1 appears twice"),
        ("N: - | 1: JK1 5H | 2: - | 3: - | 4: -", "undeclared joker"),
        ("N: - | 1: XX | 2: - | 3: - | 4: -", "not a card"),
        ("N: - | 1 AS | 2: - | 3: - | 4: -", "not a tableau part"),
        ("N: - | 1: - | 2: - | 3: - | 4: - | Q: -", "not a tableau part"),
    ],
)
def test_tableau_parse_malformed_raises_notation_error(text: str, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        Tableau.parse(text)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value), str(info.value)


# -- lakes --------------------------------------------------------------------------------


def test_lake_str_parses_back_when_times_are_zero() -> None:
    text = "0S: AS/0 2S/1 3S/0\n1H: AH/1\n2D*1: JK1=AD/2 2D/0"
    lake = Lake.parse(text)
    assert str(lake) == text
    assert Lake.parse(str(lake)) == lake
    assert eval(repr(lake), SCOPE) == lake


def test_lake_repr_keeps_lamport_times() -> None:
    lake = Lake.parse("0S: AS/0@1 2S/1@4 2S/2@4; 1H: AH/1@2")
    assert eval(repr(lake), SCOPE) == lake
    assert [lc.lamport for lc in lake[FoundationId(0, Suit.SPADES)]] == [1, 4, 4]
    assert lake.height(FoundationId(0, Suit.SPADES)) == 2
    # The display form leaves times out (cards and owners only).
    assert str(lake) == "0S: AS/0 2S/1 2S/2\n1H: AH/1"


def test_lake_parse_orders_foundations_by_owner_and_suit() -> None:
    lake = Lake.parse("1H: AH/1; 0S: AS/0; 0C: AC/0")
    assert [str(f) for f in lake] == ["0C", "0S", "1H"]
    assert len(lake) == 3
    assert FoundationId.parse("0S") in lake
    assert FoundationId.parse("2S") not in lake
    assert Lake.parse("") == Lake()


def test_lake_card_repr_pastes_back() -> None:
    lc = LakeCard(Card.parse("5S"), 2, 9)
    assert eval(repr(lc), SCOPE) == lc
    assert str(lc) == "5S/2"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0S AS/0", "not a foundation line"),
        ("0S: AS/0; 0S: AS/0", "appears twice"),
        ("0S: AS/0 2H/0", "cannot be on foundation"),
        ("0S: AS/0 3S/0", "cannot follow"),
        ("0S: 2S/0", "cannot follow"),
        ("0S: AS/1", "must start with its owner's ace"),
        ("0S: JK1=AS/0", "must start with its owner's ace"),
        ("0S*1: AS/0", "must start with its owner's ace"),
        ("0S*2: JK1=AS/0", "must start with its owner's ace"),
        ("0S: AS/0 AS/1", "cannot follow"),
        ("0S: AS", "not a lake card"),
        ("0S: AS/x", "not a lake card"),
        ("0S:", "has no cards"),
        ("QS: AS/0", "not a foundation"),
    ],
)
def test_lake_parse_malformed_raises_notation_error(text: str, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        Lake.parse(text)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value), str(info.value)
