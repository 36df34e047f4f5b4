"""A turn-up's shares outside the feed, the fold's half (docs/shuffle.md §10.14): a move or
claim carries the opening of the sealed cards it needs; the fold checks and takes it before it
judges the move. Hand-built events with real keys, stages, shares and proofs, each body through
its wire form and the strict parser (``ShuffleTable``)."""

from __future__ import annotations

import dataclasses

import msgpack  # type: ignore[import-untyped]
import pytest

from p2p_nertz.deck.group import DeckError, scalar_bytes
from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.shares import Share, make_share
from p2p_nertz.deck.wire import (
    MAX_OPENING,
    DeckOpen,
    decode_opening,
    encode_opening,
)
from p2p_nertz.protocol.bodies import Play, encode_body, kind_of, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Refuse
from p2p_nertz.protocol.rounds import sealed_needed
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import GameState, Phase, RefusalCode, Rotated
from p2p_nertz.rules import Card, Move, Table, is_unknown, sealed_position
from p2p_nertz.rules.cards import sealed
from tests.test_fold_shuffle import ShuffleTable, _choose, _drop, _shown_positions


class OpeningTable(ShuffleTable):
    """A shuffle table whose members make every share on demand (each made once) and whose
    moves carry their openings: no ``deck_shares`` but the deal's."""

    def __init__(self, n: int, seed: int = 0) -> None:
        super().__init__(n, seed=seed)
        self.made: dict[tuple[int, int, int], Share] = {}
        self.cards: dict[tuple[int, int], Card] = {}

    def share(self, i: int, deck: int, position: int) -> Share:
        """Member ``i``'s own share of ``position`` of ``deck``, proven."""
        key = (i, deck, position)
        if key not in self.made:
            cipher = self.final(deck)[position]
            self.made[key] = make_share(self.keys[i], i, deck, position, cipher)
        return self.made[key]

    def opening(self, where: list[tuple[int, int]], makers: list[int] | None = None) -> tuple:
        """Every member's (or ``makers``') share of each position of ``where``."""
        return tuple(
            self.share(i, d, p)
            for d, p in where
            for i in (range(self.n) if makers is None else makers)
        )

    def held(self) -> Table:
        """The table as a peer holding every share of every position turned up sees it: the
        fold's, each position turned up and not opened there showing its card (what the
        members' shares open it to). What a player chooses its moves on; the fold is told
        nothing of it."""
        rs = self.fold.round
        deck, table = rs.deck, rs.table
        assert deck is not None and table is not None
        for d, p in deck.turned:
            if (d, p) not in deck.opened:
                seat = deck.members[d]
                opened = table.tableaux[seat].opened(sealed(p), self.card(d, p))
                table = table.with_tableau(seat, opened)
        return table

    def card(self, deck: int, position: int) -> Card:
        """The card at a position (``card_at``, each decrypted once)."""
        key = (deck, position)
        if key not in self.cards:
            self.cards[key] = self.card_at(deck, position)
        return self.cards[key]

    def carry(self, seat: int, move: Move, card: Card | None, where: list[tuple[int, int]]):
        """``seat`` plays ``move`` carrying every member's share of ``where``."""
        return self.play(seat, Play((), 1, move, card, opens=self.opening(where)))


def _dealt(n: int, seed: int = 0) -> OpeningTable:
    t = OpeningTable(n, seed=seed)
    t.join_all()
    t.deal_all()
    t.share_all()  # the deal's face-up cards: the only deck_shares of the round
    return t


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4])
def test_fold_opening_a_whole_round_opens_every_card_a_move_needs_and_no_other(n: int) -> None:
    t = _dealt(n, seed=n)
    assert t.refusals() == []
    needed: set[tuple[int, int]] = {(d, p) for d in range(n) for p in _shown_positions(t)}
    turns = [0] * n
    for _ in range(3000):
        if t.fold.phase is not Phase.PLAY:
            break
        for seat in range(n):
            held = t.held()
            table = t.fold.table
            assert held is not None and table is not None
            move = _choose(list(held.legal_moves(seat)), turns[seat])
            if move is None:
                notices = t.play(seat, Play((), 1, Move.pass_()))
                if any(isinstance(x, Rotated) for x in notices):
                    turns = [0] * n
            else:
                where = [(seat, p) for p in sealed_needed(table.tableaux[seat], move)]
                needed.update(where)
                card = held.tableaux[seat].top(move.source) if move.is_lake else None  # type: ignore[arg-type]
                t.carry(seat, move, card, where)
                turns[seat] += move == Move.parse("S")
            assert t.refusals() == [], (seat, move)
            if t.fold.phase is not Phase.PLAY:
                break
    assert t.fold.phase is Phase.OPEN and t.refusals() == []
    deck = t.fold.round.deck
    assert deck is not None
    # Every opened card is the card its position holds; only the needed ones were opened,
    # and positions turned up and never needed stay sealed.
    for (d, p), card in deck.opened.items():
        assert card == t.card_at(d, p)
    assert set(deck.opened) <= needed
    assert all(w not in deck.opened for w in set(deck.turned) - needed)
    for i in range(n):
        t.deck_event(i, DeckOpen(1, t.keys[i].x, ()))
    assert t.fold.phase in (Phase.RESULT, Phase.KEY) and t.refusals() == []


def _turned(t: OpeningTable, seat: int) -> list[tuple[int, int]]:
    """``seat`` turns its stock; the positions sealed on its waste, top last."""
    t.move(seat, "S")
    table = t.fold.table
    assert table is not None
    waste = table.tableaux[seat].waste
    assert all(is_unknown(c) for c in waste)
    return [(seat, p) for p in map(sealed_position, waste) if p is not None]


def test_fold_opening_a_move_without_its_opening_or_with_its_author_s_share_only_is_refused() -> (
    None
):
    t = _dealt(2)
    turned = _turned(t, 1)
    top = turned[-1]
    t.move(1, "W>1")
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE]
    # Its author's share alone: the card stays sealed, the move refused, the share kept.
    t.play(1, Play((), 1, Move.parse("W>1"), opens=t.opening([top], makers=[1])))
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE] * 2
    deck = t.fold.round.deck
    assert deck is not None
    assert deck.shares[top] == {1: t.share(1, *top).point} and top not in deck.opened
    # Every share: the card opens, and the move is judged on it (the rules say if it fits).
    legal = Move.parse("W>1") in t.held().legal_moves(1)
    t.play(1, Play((), 1, Move.parse("W>1"), opens=t.opening([top])))
    deck = t.fold.round.deck
    assert deck is not None and deck.opened[top] == t.card_at(*top)
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE] * (2 if legal else 3)
    # The cards the stock turn put under it, turned up and not needed, stay sealed.
    assert not any(w in deck.opened for w in turned[:-1]) and len(turned) == 3


def test_fold_opening_a_bad_share_refuses_the_move_and_takes_nothing() -> None:
    t = _dealt(3)
    where = _turned(t, 0)
    top = where[-1]
    deck = t.fold.round.deck
    assert deck is not None
    before = {w: dict(v) for w, v in deck.shares.items()}
    right = t.opening([top])
    # Another position's proof.
    other = t.share(2, *where[0])
    forged = dataclasses.replace(right[2], proof=other.proof)
    t.play(0, Play((), 1, Move.parse("W>1"), opens=(*right[:2], forged)))
    # A stranger's share: a key not the round's, made for member 2.
    stranger = MemberKey.from_seed(b"a stranger", t.context)
    alien = make_share(stranger, 2, *top, t.final(top[0])[top[1]])
    t.play(0, Play((), 1, Move.parse("W>1"), opens=(*right[:2], alien)))
    # A partial for a member not dropped.
    partial = dataclasses.replace(right[2], of_seat=1)
    t.play(0, Play((), 1, Move.parse("W>1"), opens=(*right[:2], partial)))
    assert t.refusals() == [RefusalCode.BAD_SHARE] * 3
    deck = t.fold.round.deck
    assert deck is not None
    assert deck.shares == before and top not in deck.opened
    # A maker not among the round's members (the wire allows any seat of the game).
    with pytest.raises(Refuse) as refused:
        deck.copy().take_carried((dataclasses.replace(right[0], seat=3),))
    assert refused.value.reason.code is RefusalCode.BAD_SHARE


def test_fold_opening_a_share_already_held_is_no_fault() -> None:
    t = _dealt(2)
    top = _turned(t, 0)[-1]
    t.deck_event(1, t.shares(1, [top]))  # (a version-3 log: the share as an event)
    t.play(0, Play((), 1, Move.parse("S"), opens=t.opening([top])))
    deck = t.fold.round.deck
    assert deck is not None and t.refusals() == []
    assert deck.opened[top] == t.card_at(*top)
    # Carried again once opened: checked, and nothing changes.
    t.play(0, Play((), 1, Move.parse("S"), opens=t.opening([top])))
    assert t.refusals() == []


def test_fold_opening_a_dropped_member_s_share_carried_after_its_drop_opens_the_card() -> None:
    t = _dealt(3)
    top = _turned(t, 0)[-1]
    _drop(t, 2, [0, 1])
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == frozenset({2}) and top not in deck.opened
    # Member 2 made its share before its drop (a beat reached seat 0): it is as good as ever.
    t.play(0, Play((), 1, Move.parse("S"), opens=t.opening([top])))
    deck = t.fold.round.deck
    assert deck is not None and t.refusals() == []
    assert deck.opened[top] == t.card_at(*top) and deck.partials == {}


def test_fold_opening_in_a_commit_game_is_refused() -> None:
    t = _dealt(2)
    opens = t.opening([(0, _shown_positions(t)[0])])
    t.fold = GameState(dataclasses.replace(t.spec, deal=Deal.COMMIT))
    t.seqs = [0] * t.n
    t.join_all()
    t.play(0, Play((), 1, Move.parse("S"), opens=opens))
    assert t.refusals() == [RefusalCode.WRONG_DEAL]


# -- the codec -----------------------------------------------------------------------------
def _wire(value: object) -> object:
    return msgpack.unpackb(msgpack.packb(value), use_list=False)


def test_opening_codec_round_trips_in_one_encoding_and_a_body_without_one_is_unchanged() -> None:
    t = _dealt(3)
    opens = t.opening([(0, 3), (1, 7)])
    raw = msgpack.packb(encode_opening(opens))
    assert decode_opening(msgpack.unpackb(raw), members=3, size=52) == opens
    assert (
        msgpack.packb(encode_opening(decode_opening(msgpack.unpackb(raw), members=3, size=52)))
        == raw
    )
    assert len(msgpack.packb(encode_opening(opens[:1]))) <= 108  # (107 bytes an entry)
    frontier = ((1, 2, 3), (b"\1" * 8,) * 3)
    for move, card in ((Move.parse("W>1"), None), (Move.parse("W>L@0S"), Card.parse("AS"))):
        bare = Play(frontier[0], 1, move, card, (), frontier[1])
        carrying = dataclasses.replace(bare, opens=opens)
        kind = kind_of(bare)
        assert kind in (Kind.MOVE, Kind.CLAIM) and kind_of(carrying) is kind
        assert encode_body(carrying)[:-1] == encode_body(bare)
        # (the body without an opening is the body of a move before §10.14: no last field)
        assert len(encode_body(bare)) == (5 if move.is_lake else 4)
        for body in (bare, carrying):
            assert parse_body(kind, _wire(encode_body(body)), 3) == body


def test_opening_codec_rejects_malformed_input_with_a_clear_error() -> None:
    t = _dealt(2)
    opens = encode_opening(t.opening([(0, 3)]))
    entry = list(opens[0])

    def bad(value: object, words: str) -> None:
        with pytest.raises(DeckError, match=words):
            decode_opening(_wire(value), members=2, size=52)

    bad([], "no share")
    bad("x", "expected an array")
    bad([entry, entry], "repeats")
    bad([entry] * (MAX_OPENING + 1), "at most")
    bad([entry[:6]], "expected 7 fields")
    bad([[2, *entry[1:]]], "seat")
    bad([[*entry[:3], 52, *entry[4:]]], "position")
    bad([[*entry[:4], b"\0" * 31, *entry[5:]]], "point")
    bad([[*entry[:4], bytes(32), *entry[5:]]], "point")  # (no point of the subgroup)
    bad([[*entry[:5], b"\xff" * 32, entry[6]]], "canonical")
    bad([[*entry[:6], scalar_bytes(1)[:31]]], "answer")
    # In a body: the body is refused as malformed, its last field named.
    frontier = [[0, 0], [b"", b""]]
    with pytest.raises(ValueError, match="opening"):
        parse_body(Kind.MOVE, _wire([frontier, 1, "W>1", [], []]), 2)
    with pytest.raises(ValueError, match="a stuck or nerts body"):
        encode_body(
            Play((0, 0), 1, Move.pass_(), frontier_ids=(b"", b""), opens=t.opening([(0, 3)]))
        )
