"""The game fold of a shuffle game (docs/shuffle.md §10): its phases and event kinds, from
hand-built events with real keys, stages, shares and proofs (the deck package makes them),
each body through its wire form and the strict parser."""

from __future__ import annotations

import dataclasses

import msgpack  # type: ignore[import-untyped]
import pytest

from p2p_nertz.deck.elgamal import Deck, decrypt_with, initial_deck, shuffle_stage
from p2p_nertz.deck.group import ORDER, DeckError
from p2p_nertz.deck.keys import MemberKey, joint_key, round_context
from p2p_nertz.deck.proofs import prove_equal
from p2p_nertz.deck.shares import Share, make_share, share_context
from p2p_nertz.deck.vss import deal_shares, open_share, share_for, x25519_public, x25519_secret
from p2p_nertz.deck.wire import DeckAnswer, DeckComplain, DeckKey, DeckOpen, DeckShares, DeckStage
from p2p_nertz.protocol.bodies import (
    Commit,
    DeckEvent,
    Drop,
    DropReason,
    Join,
    Leave,
    Play,
    encode_body,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.share_waits import ShareWaits
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import Event, GameState, Phase, RefusalCode, Rotated
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import (
    Card,
    Move,
    Rules,
    Tableau,
    Termination,
    is_unknown,
    new_deck,
    sealed_position,
)
from tests.deck_helpers import walk_owed


def _owed(deck: DeckRound, seat: int) -> list[tuple[int, int, int]]:
    """``deck.owed(seat)``, checked against its slow twin (every position turned walked)."""
    owed = deck.owed(seat)
    assert owed == walk_owed(deck, seat)
    return owed


def _drop(t: ShuffleTable, target: int, voters: list[int], cut: int | None = None) -> None:
    """``voters`` each vote ``target`` out *silent* at ``cut`` (its events so far unless
    given)."""
    cut = t.seqs[target] if cut is None else cut
    # (The ids every event of this table names, ShuffleTable.event: a vote quoting others than
    # its own frontier names is refused, docs/protocol.md §9.2.)
    quoted = (b"\x01" * 8,) * min(cut, 64)
    for voter in voters:
        t.play(voter, Drop((), target, cut, DropReason.SILENT, 0, quoted))


class ShuffleTable:
    """A shuffle game's members signing by hand: keys, stages, shares, secrets, moves; every
    event folded by ``fold`` through its wire form."""

    def __init__(self, n: int, rules: Rules | None = None, seed: int = 0) -> None:
        self.ids = [Identity.generate(derive_seed("fold shuffle", seed, i)) for i in range(n)]
        members = [(ident.peer_id, f"p{i}") for i, ident in enumerate(self.ids)]
        self.spec = GameSpec.create(members, rules or Rules(), b"shuffle", deal=Deal.SHUFFLE)
        self.ids.sort(key=lambda ident: self.spec.seat_of(ident.peer_id))  # ids[i]: seat i's
        self.n = n
        self.fold = GameState(self.spec)
        self.seqs = [0] * n
        self.clock = 0
        self.context = round_context(self.spec.game_id, 1)
        self.keys = [
            MemberKey.from_seed(derive_seed("secret", seed, i), self.context) for i in range(n)
        ]
        self.joint = joint_key(k.public for k in self.keys)
        self.stages: dict[tuple[int, int], Deck] = {}

    def event(
        self, seat: int, body_without_frontier: object, held: dict[int, int] | None = None
    ) -> Event:
        """The next event of ``seat``, its body built with a frontier holding everything (or,
        for a member in ``held``, its events up to the seq given)."""
        self.seqs[seat] += 1
        self.clock += 1
        frontier = tuple((held or {}).get(q, self.seqs[q] - (q == seat)) for q in range(self.n))
        ids = tuple(b"\x01" * 8 if f else b"" for f in frontier)
        body = dataclasses.replace(body_without_frontier, frontier=frontier, frontier_ids=ids)  # type: ignore[type-var]
        wire = msgpack.unpackb(msgpack.packb(encode_body(body)), use_list=False)
        kind = kind_of(body)
        parsed = parse_body(kind, wire, self.n)
        return Event(seat, self.seqs[seat], self.clock, kind, parsed)  # type: ignore[arg-type]

    def play(self, seat: int, body: object) -> list[object]:
        """Fold one event of ``seat``; its notices."""
        return list(self.fold.apply(self.event(seat, body)))

    def deck_event(self, seat: int, message: object) -> list[object]:
        return self.play(seat, DeckEvent((), message))  # type: ignore[arg-type]

    # -- the phases --------------------------------------------------------------------------
    def join_all(self) -> None:
        for s in range(self.n):
            self.play(s, Join(()))

    def key_message(self, i: int) -> DeckKey:
        key = self.keys[i]
        dealing = None
        if self.n >= 3:
            recipients = [x25519_public(ident.peer_id) for ident in self.ids]
            dealing = deal_shares(key, i, recipients)
        return DeckKey(1, key.public, key.proof(i), dealing)

    def stage_message(self, i: int, stage: int, *, key: MemberKey | None = None) -> DeckStage:
        d = (i - stage) % self.n
        source = (
            initial_deck(new_deck(self.spec.rules.jokers), self.joint)
            if stage == 0
            else self.stages[(d, stage - 1)]
        )
        out = shuffle_stage((key or self.keys[i]).x, self.context, d, source, self.joint)
        self.stages[(d, stage)] = out
        return DeckStage(1, d, stage, out)

    def deal_all(self, cheat: tuple[int, int] | None = None) -> None:
        """Every member's key, then every stage; with ``cheat`` (a member, a stage), that
        member's that stage shuffled under a key that is not its own (a substitution)."""
        for i in range(self.n):
            self.deck_event(i, self.key_message(i))
        other = MemberKey.from_seed(b"not the secret", self.context)
        for stage in range(self.n):
            for i in range(self.n):
                key = other if (i, stage) == cheat else None
                self.deck_event(i, self.stage_message(i, stage, key=key))

    def final(self, deck: int) -> Deck:
        return self.stages[(deck, self.n - 1)]

    def card_at(self, deck: int, position: int) -> Card:
        """The card at a position, decrypted with the joint secret (no member holds it)."""
        x = sum(k.x for k in self.keys) % ORDER
        card = decrypt_with(x, self.final(deck)[position])
        assert card is not None
        return card

    def shares(self, i: int, where: list[tuple[int, int]]) -> DeckShares:
        """Member ``i``'s own shares of ``where``."""
        return self.partials(i, [(i, d, p) for d, p in where])

    def partials(self, i: int, owed: list[tuple[int, int, int]]) -> DeckShares:
        """Member ``i``'s shares of ``owed`` (of member, deck, position): its own, or a
        partial from its VSS share of a dropped member's secret."""
        made = []
        for of, d, p in owed:
            cipher = self.final(d)[p]
            if of == i:
                made.append(make_share(self.keys[i], i, d, p, cipher))
                continue
            sigma = self.held_share(i, of)
            point, proof = prove_equal(sigma, cipher[0], share_context(self.context, i, of, d, p))
            made.append(Share(i, of, d, p, point, proof))
        return DeckShares(1, i, tuple(made))

    def held_share(self, i: int, of: int, key: DeckKey | None = None) -> int:
        """Member ``i``'s VSS share of member ``of``'s secret, opened from its box in ``of``'s
        key message (the honest one unless ``key`` is given)."""
        dealing = (key or self.key_message(of)).dealing
        assert dealing is not None
        return open_share(
            dealing,
            public=self.keys[of].public,
            dealer=of,
            seat=i,
            members=self.n,
            secret=x25519_secret(self.ids[i].to_bytes()),
            context=self.context,
        )

    def owed(self, seat: int) -> list[tuple[int, int]]:
        """The positions whose own share ``seat`` owes."""
        deck = self.fold.round.deck
        assert deck is not None
        i = deck.member(seat)
        return [(d, p) for of, d, p in _owed(deck, seat) if of == i]

    def share_all(self, skip: frozenset[int] = frozenset()) -> None:
        """Every member but ``skip`` sends what it owes."""
        deck = self.fold.round.deck
        assert deck is not None
        for i in range(self.n):
            owed = _owed(deck, i)
            if owed and i not in skip:
                self.deck_event(i, self.partials(i, owed))

    def move(
        self, seat: int, text: str, card: str | None = None, held: dict[int, int] | None = None
    ) -> list[object]:
        body = Play((), 1, Move.parse(text), Card.parse(card) if card else None)
        return list(self.fold.apply(self.event(seat, body, held)))

    def refusals(self) -> list[RefusalCode]:
        return [v.reason.code for v in self.fold.violations]


@pytest.mark.parametrize("n", [2, 3])
def test_fold_shuffle_phases_key_deal_then_play_with_the_face_up_cards_sealed(n: int) -> None:
    t = ShuffleTable(n)
    t.join_all()
    assert t.fold.phase is Phase.KEY
    for i in range(n):
        assert t.fold.waiting() == frozenset(range(i, n))
        t.deck_event(i, t.key_message(i))
    assert t.fold.phase is Phase.DEAL
    for stage in range(n):
        for i in range(n):
            assert t.fold.phase is Phase.DEAL
            t.deck_event(i, t.stage_message(i, stage))
    assert t.fold.phase is Phase.PLAY
    assert t.refusals() == []
    table = t.fold.table
    assert table is not None
    # Every shown card is sealed, and owed by every member: N x (1 + work piles) shares.
    for seat in range(n):
        assert all(is_unknown(c) for c in table.tableaux[seat].shown)
        assert len(t.owed(seat)) == n * (1 + t.spec.rules.work_piles)


@pytest.mark.parametrize("n", [2, 3])
def test_fold_shuffle_shares_open_the_deal_s_cards_only_once_every_member_s_are_in(n: int) -> None:
    t = ShuffleTable(n)
    t.join_all()
    t.deal_all()
    for i in range(n - 1):
        t.deck_event(i, t.shares(i, t.owed(i)))
        table = t.fold.table
        assert table is not None
        assert all(is_unknown(c) for seat in range(n) for c in table.tableaux[seat].shown)
    t.deck_event(n - 1, t.shares(n - 1, t.owed(n - 1)))
    table = t.fold.table
    assert table is not None and t.refusals() == []
    dealt = table.tableaux[0].shown
    expected = tuple(t.card_at(0, p) for p in _shown_positions(t))
    assert dealt == expected
    assert not any(is_unknown(c) for seat in range(n) for c in table.tableaux[seat].shown)


def _dealt_and_turned(seat: int) -> tuple[ShuffleTable, list[int | None]]:
    """A 2-player shuffle table dealt and opened, and the deck positions a stock turn of
    ``seat`` would turn up."""
    t = ShuffleTable(2)
    t.join_all()
    t.deal_all()
    t.share_all()
    table = t.fold.table
    assert table is not None
    return t, [sealed_position(c) for c in table.tableaux[seat].reveals(Move.parse("S"))]


def test_fold_shuffle_a_stock_turn_turns_sealed_cards_up_and_its_shares_open_them() -> None:
    t, turned = _dealt_and_turned(1)
    assert None not in turned
    t.move(1, "S")
    table = t.fold.table
    assert table is not None
    waste = table.tableaux[1].waste
    assert len(waste) == 3 and all(is_unknown(c) for c in waste)
    # A move of the sealed waste top is refused: nobody knows it yet.
    t.move(1, "W>1")
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE]
    assert t.owed(0) == [(1, p) for p in turned] and t.owed(1) == t.owed(0)
    t.share_all()
    table = t.fold.table
    assert table is not None
    assert table.tableaux[1].waste == tuple(t.card_at(1, p) for p in turned if p is not None)
    assert t.owed(0) == [] and t.refusals() == [RefusalCode.ILLEGAL_MOVE]


def test_fold_shuffle_a_share_made_here_is_not_checked_again_and_no_other_share_is_spared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A peer's own shares come back to its fold in its own deck_shares: the fold takes them
    # without the four multiplications of a check when DeckRound.made vouched for them, and
    # checks every other share, a share of the same position that differs from the one
    # vouched for included.
    from p2p_nertz.protocol import shuffle

    # (The round asks share_holds on a miss of its memo: the process-wide cache behind it
    # may answer from another peer's check, but the round's asking is what is counted.)
    checked: list[tuple[int, int, int]] = []
    holds = shuffle.share_holds

    def counting(share: Share, key: bytes, cipher: object, context: bytes) -> bool:
        checked.append((share.seat, share.deck, share.position))
        return holds(share, key, cipher, context)  # type: ignore[arg-type]

    # (share_holds is the interpreted deck package's: a compiled shuffle reads it from its
    # module's namespace at each call, so the spy counts alike on both builds.)
    monkeypatch.setattr(shuffle, "share_holds", counting)
    t, turned = _dealt_and_turned(0)
    where = [(0, p) for p in turned if p is not None]
    t.move(0, "S")
    deck = t.fold.round.deck
    assert deck is not None and deck.final is not None
    own = t.shares(0, where)
    for share in own.shares:
        deck.made(share)
    checked.clear()
    t.deck_event(0, own)
    assert checked == [] and t.refusals() == []
    # Member 1's shares: checked, one by one, and the cards open.
    t.deck_event(1, t.shares(1, where))
    assert checked == [(1, d, p) for d, p in where]
    table = t.fold.table
    assert table is not None
    assert table.tableaux[0].waste == tuple(t.card_at(0, p) for _, p in where)
    # A share vouched for by member 1's fold is no pass for another one of the same position.
    t.move(1, "S")
    deck = t.fold.round.deck
    assert deck is not None
    position = next(p for d, p in t.owed(1) if d == 1)
    right = t.shares(1, [(1, position)]).shares[0]
    deck.made(right)
    wrong = dataclasses.replace(right, point=t.shares(0, [(1, position)]).shares[0].point)
    checked.clear()
    t.deck_event(1, DeckShares(1, 1, (wrong,)))
    assert checked == [(1, 1, position)]
    assert t.refusals() == [RefusalCode.BAD_SHARE]


def test_fold_shuffle_a_share_sent_early_waits_for_its_turn_up() -> None:
    t, turned = _dealt_and_turned(0)
    where = [(0, p) for p in turned if p is not None]
    for i in range(2):
        t.deck_event(i, t.shares(i, where))
    table = t.fold.table
    assert table is not None and all(is_unknown(c) for c in table.tableaux[0].stock[-3:])
    t.move(0, "S")
    table = t.fold.table
    assert table is not None and t.refusals() == []
    assert table.tableaux[0].waste == tuple(t.card_at(0, p) for _, p in where)


def test_fold_shuffle_refuses_what_is_wrong_here_and_changes_nothing() -> None:
    t = ShuffleTable(3)
    t.join_all()
    # A key whose proof is another member's.
    bad = dataclasses.replace(t.key_message(0), proof=t.keys[0].proof(1))
    t.deck_event(0, bad)
    # A commit in a shuffle game.
    t.play(1, Commit((), 1, bytes(32), bytes(32)))
    assert t.refusals() == [RefusalCode.BAD_KEY, RefusalCode.WRONG_DEAL]
    assert t.fold.waiting() == frozenset({0, 1, 2})
    for i in range(3):
        t.deck_event(i, t.key_message(i))
    assert t.fold.phase is Phase.DEAL
    # A stage that is another member's to make, and one before its input.
    t.deck_event(1, dataclasses.replace(t.stage_message(0, 0), round=1))
    t.deck_event(1, DeckStage(1, 0, 1, t.stages[(0, 0)]))
    assert t.refusals()[2:] == [RefusalCode.BAD_STAGE, RefusalCode.BAD_STAGE]
    t.stages.clear()
    for stage in range(3):
        for i in range(3):
            t.deck_event(i, t.stage_message(i, stage))
    assert t.fold.phase is Phase.PLAY
    # A share with another position's proof, then a share twice.
    share = t.shares(0, t.owed(0)[:2]).shares
    forged = dataclasses.replace(share[0], proof=share[1].proof)
    t.deck_event(0, DeckShares(1, 0, (forged,)))
    assert t.refusals()[-1] is RefusalCode.BAD_SHARE
    t.deck_event(0, DeckShares(1, 0, share[:1]))
    t.deck_event(0, DeckShares(1, 0, share[:1]))
    assert t.refusals()[-1] is RefusalCode.REPEATED


def test_fold_shuffle_a_deck_event_in_a_commit_game_is_refused() -> None:
    t = ShuffleTable(2)
    t.fold = GameState(dataclasses.replace(t.spec, deal=Deal.COMMIT))
    t.join_all()
    assert t.fold.phase is Phase.COMMIT
    t.deck_event(0, t.key_message(0))
    assert t.refusals() == [RefusalCode.WRONG_DEAL]


def _play_to_blocked(t: ShuffleTable) -> None:
    """Everyone passes until the round is blocked, the shares of every turn-up sent."""
    for _ in range(200):
        if t.fold.phase is not Phase.PLAY:
            return
        for seat in range(t.n):
            t.play(seat, Play((), 1, Move.pass_()))
            t.share_all()
    raise AssertionError("the round never ended")


@pytest.mark.parametrize("cheat", [False, True])
def test_fold_shuffle_open_checks_every_stage_and_the_cheat_forfeits(cheat: bool) -> None:
    t = ShuffleTable(2)
    t.join_all()
    t.deal_all(cheat=(1, 0) if cheat else None)
    t.share_all()
    _play_to_blocked(t)
    assert t.fold.phase is Phase.OPEN
    for i in range(2):
        t.deck_event(i, DeckOpen(1, t.keys[i].x, ()))
    assert t.fold.phase is Phase.RESULT
    rs = t.fold.round
    if cheat:
        assert rs.forfeit == frozenset({1})
        assert t.refusals()[-1] is RefusalCode.BAD_SHUFFLE
        assert t.fold.violations[-1].seat == 1 and t.fold.violations[-1].kind is Kind.DECK_OPEN
    else:
        assert rs.forfeit == frozenset() and t.refusals() == []


def test_fold_shuffle_a_secret_that_is_not_the_key_s_is_refused_and_forfeits() -> None:
    """docs/shuffle.md §7.4: a wrong secret is refused and forfeits the round (as a stacked
    deck's secret does): the open phase waits for it no more."""
    t = ShuffleTable(2)
    t.join_all()
    t.deal_all()
    t.share_all()
    _play_to_blocked(t)
    t.deck_event(0, DeckOpen(1, (t.keys[0].x + 1) % ORDER, ()))
    assert t.refusals() == [RefusalCode.WRONG_SECRET]
    assert t.fold.round.forfeit == frozenset({0}) and t.fold.waiting() == frozenset({1})
    t.deck_event(1, DeckOpen(1, t.keys[1].x, ()))
    assert t.fold.phase is Phase.RESULT and t.fold.round.forfeit == frozenset({0})


def _shown_positions(t: ShuffleTable) -> list[int]:
    positions = [sealed_position(c) for c in Tableau.sealed(t.spec.rules).shown]
    return [p for p in positions if p is not None]


def test_spec_a_commit_game_keeps_its_four_fields_and_a_shuffle_game_names_its_deal() -> None:
    t = ShuffleTable(2)
    commit = dataclasses.replace(t.spec, deal=Deal.COMMIT)
    assert len(msgpack.unpackb(commit.to_wire())) == 4
    assert msgpack.unpackb(t.spec.to_wire())[4] == {"deal": "shuffle"}
    assert GameSpec.from_wire(t.spec.to_wire()) == t.spec
    assert GameSpec.from_wire(commit.to_wire()) == commit
    assert commit.game_id != t.spec.game_id


def _choose(table_moves: list[Move], turns: int) -> Move | None:
    """A plain player: a card to the lake, else a card moved from the Nerts pile or the
    waste, else the stock (a few times round), else a pass."""
    for move in table_moves:
        if move.is_lake:
            return move
    for move in table_moves:
        if move.plays_card and move.source is not None and not move.source.is_work:
            return move
    if turns < 40 and Move.parse("S") in table_moves:
        return Move.parse("S")
    return None


@pytest.mark.parametrize("n", [2, 3, 4])
def test_fold_shuffle_a_whole_round_opens_every_card_where_its_deck_has_it(n: int) -> None:
    t = ShuffleTable(n, seed=n)
    t.join_all()
    t.deal_all()
    t.share_all()
    turns = [0] * n
    for _ in range(3000):
        if t.fold.phase is not Phase.PLAY:
            break
        for seat in range(n):
            table = t.fold.table
            assert table is not None
            move = _choose(list(table.legal_moves(seat)), turns[seat])
            if move is None:
                notices = t.play(seat, Play((), 1, Move.pass_()))
                if any(isinstance(x, Rotated) for x in notices):
                    turns = [0] * n  # everyone was stuck: the stocks go round again
            elif move.is_lake:
                fid = move.foundation
                assert fid is not None and move.source is not None
                played = table.tableaux[seat].top(move.source)
                assert played is not None
                t.play(seat, Play((), 1, move, played))
            else:
                t.play(seat, Play((), 1, move))
                turns[seat] += move == Move.parse("S")
            t.share_all()
            if t.fold.phase is not Phase.PLAY:
                break
    assert t.fold.phase is Phase.OPEN and t.refusals() == []
    deck = t.fold.round.deck
    assert deck is not None
    for (d, p), card in deck.opened.items():
        assert card == t.card_at(d, p)
    assert len(deck.opened) <= n * 52
    for i in range(n):
        t.deck_event(i, DeckOpen(1, t.keys[i].x, ()))
    assert t.fold.phase in (Phase.RESULT, Phase.KEY) and t.refusals() == []
    table = t.fold.round.table
    assert table is not None
    for seat in range(n):
        mine = [c.physical for c in table.tableaux[seat].cards() if not is_unknown(c)]
        mine += [lc.card.physical for lc in table.lake.cards() if lc.owner == seat]
        sealed_left = sum(1 for c in table.tableaux[seat].cards() if is_unknown(c))
        assert len(set(mine)) == len(mine) and len(mine) + sealed_left == 52


def test_fold_shuffle_a_member_dropped_mid_round_is_opened_for_by_partial_shares() -> None:
    t = ShuffleTable(3)
    t.join_all()
    t.deal_all()
    t.share_all()
    t.move(2, "S")  # a stock turn of seat 2, which is then voted out before it shares it
    t.share_all(skip=frozenset({2}))
    table = t.fold.table
    assert table is not None and all(is_unknown(c) for c in table.tableaux[2].waste)
    _drop(t, 2, [0, 1])
    assert 2 in t.fold.dropped
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == frozenset({2})
    # Each member left owes a partial share of seat 2's secret for each card still sealed.
    assert [of for of, _, _ in _owed(deck, 0)] == [2, 2, 2]
    t.share_all(skip=frozenset({2}))
    assert t.refusals() == []
    deck = t.fold.round.deck
    assert deck is not None
    turned = [w for w in deck.turned if w[0] == 2][-3:]
    assert all(deck.opened[w] == t.card_at(*w) for w in turned)
    # The member dropped still owes its own shares of them, opened by partials without it.
    assert [w[1:] for w in _owed(deck, 2)][-3:] == turned
    # A partial for a member not dropped is refused.
    t.deck_event(0, t.partials(0, [(1, *deck.turned[0])]))
    assert t.refusals() == [RefusalCode.BAD_SHARE]


def _wastes_turned() -> tuple[ShuffleTable, int]:
    """Five members (three votes drop a member) dealt and shared, seats 2 and 3 each turning
    its stock (each waste's cards turned up, and sealed): the table, and seat 4's events so
    far (its cut, once voted out)."""
    t = ShuffleTable(5)
    t.join_all()
    t.deal_all()
    t.share_all()
    t.move(2, "S")
    t.move(3, "S")
    return t, t.seqs[4]


def test_fold_shuffle_a_move_on_a_card_opened_past_a_drops_cut_is_a_race_lost() -> None:
    """docs/shuffle.md §9: a member dropped sends, past its cut, its shares of a card that
    were all a player's tentative fold lacked to open it; the player plays it. Here the card
    is sealed and the move refused, but its author held events past the cut: a race lost to
    the cut, without blame, and so are its later moves refused while it still holds them
    (they built on that one). A move on a sealed card whose author held nothing past the cut
    is a cheat, as before; so is a move the rules refuse of an author that lost none."""
    t, cut = _wastes_turned()
    _drop(t, 4, [0, 1, 2])  # (seat 3 casts no vote)
    assert t.fold.dropped == {4: cut}
    deck = t.fold.round.deck
    assert deck is not None
    t.deck_event(4, t.shares(4, [(d, p) for of, d, p in _owed(deck, 4) if of == 4]))
    table = t.fold.table
    assert table is not None and is_unknown(table.tableaux[3].waste[-1])
    # Seat 3 before it held seat 4's shares past the cut: a move on its sealed card cheats.
    t.move(3, "W>1", held={4: cut})
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE]
    # Seat 3 holding them (its tentative fold opened its waste top): races lost.
    for text, card in (("W>1", None), ("W>L@3S", "AS"), ("1>1", None)):
        t.move(3, text, card)
        assert t.refusals() == [RefusalCode.ILLEGAL_MOVE], text
        assert t.fold.table == table, text
    assert t.fold.round.astray == frozenset({3})
    # Once its frontier holds nothing past the cut (its final fold holds the drop), its
    # moves are read as they are: a move on a sealed card cheats again.
    t.move(3, "W>1", held={4: cut})
    t.move(3, "W>L@3S", "AS", held={4: cut})
    t.move(2, "1>1")  # past the cut (seat 2 voted), but no move of seat 2 was lost to it
    assert t.refusals() == [
        RefusalCode.ILLEGAL_MOVE,
        RefusalCode.ILLEGAL_MOVE,
        RefusalCode.CARD_NOT_THERE,
        RefusalCode.ILLEGAL_MOVE,
    ]
    assert t.fold.table == table
    # The partials of the members left open the cards.
    t.share_all(skip=frozenset({4}))
    table = t.fold.table
    assert table is not None and not is_unknown(table.tableaux[3].waste[-1])
    assert len(t.refusals()) == 4


def test_fold_shuffle_a_voters_move_on_a_sealed_card_is_a_cheat_unless_it_shows_the_cut() -> None:
    """docs/shuffle.md §9, §11: a voter's frontier announces no more of the member than its
    vote counts (§9.2 of protocol.md). Folded where the member's events past the cut were read
    (they did not count) and its drop not yet reached, a voter's move on a sealed card is a
    cheat unless its own frontier shows events of the member past the cut: having voted is no
    proof of holding them (``Roster.saw_cut``). Its frontier past the cut is a race lost."""
    t, cut = _wastes_turned()
    _drop(t, 4, [2, 3])
    assert t.fold.dropped == {}
    deck = t.fold.round.deck
    assert deck is not None
    # The member's shares past the cut, read by a fold that knows the cut (they do not count).
    owed = [(d, p) for of, d, p in _owed(deck, 4) if of == 4]
    past = t.event(4, DeckEvent((), t.shares(4, owed)))
    t.fold.observe(past)
    table = t.fold.table
    assert table is not None and is_unknown(table.tableaux[2].waste[-1])
    # Voters whose frontier shows nothing of seat 4 past the cut: cheats, blamed.
    t.move(2, "W>1", held={4: cut})
    t.move(3, "W>L@3S", "AS", held={4: cut})
    assert t.refusals() == [RefusalCode.ILLEGAL_MOVE, RefusalCode.CARD_NOT_THERE]
    assert t.fold.round.astray == frozenset()
    # A voter whose frontier shows the shares past the cut: a race lost, without blame.
    t.move(3, "W>1", held={4: past.seq})
    assert len(t.refusals()) == 2 and t.fold.round.astray == frozenset({3})
    assert t.fold.table == table
    _drop(t, 4, [1], cut)  # the third vote
    assert t.fold.dropped == {4: cut}


def test_fold_shuffle_a_round_too_few_members_are_left_to_open_ends_blocked() -> None:
    t = ShuffleTable(4)  # a threshold of 3: two members gone leave cards nobody can open
    t.join_all()
    t.deal_all()
    t.share_all()
    _drop(t, 3, [0, 1, 2])
    assert t.fold.phase is Phase.PLAY and 3 in t.fold.dropped
    _drop(t, 2, [0, 1])
    assert 2 in t.fold.dropped and t.fold.phase is Phase.OPEN
    table = t.fold.table
    assert table is not None and table.status.value == "blocked"
    assert t.refusals() == []


@pytest.mark.parametrize("phase", [Phase.KEY, Phase.DEAL])
def test_fold_shuffle_a_drop_before_the_deal_is_over_restarts_it_without_the_member(
    phase: Phase,
) -> None:
    """docs/shuffle.md §8.4: the deal starts again at ``key`` with the members left, under the
    next attempt's context; what was signed for the attempt given up changes nothing."""
    t = ShuffleTable(3)
    t.join_all()
    t.deck_event(0, t.key_message(0))
    if phase is Phase.DEAL:
        for i in (1, 2):
            t.deck_event(i, t.key_message(i))
        t.deck_event(0, t.stage_message(0, 0))
    assert t.fold.phase is phase
    _drop(t, 2, [0, 1])
    assert 2 in t.fold.dropped and t.fold.phase is Phase.KEY
    deck = t.fold.round.deck
    assert deck is not None and deck.members == (0, 1) and deck.attempt == 1
    assert deck.context == round_context(t.spec.game_id, 1, 1) and not deck.keys
    assert t.fold.waiting() == frozenset({0, 1})
    # Seat 1's key and stage of attempt 0, signed before it saw the drop: read, not refused.
    t.deck_event(1, t.key_message(1))
    t.deck_event(1, t.stage_message(1, 0))
    assert t.refusals() == [] and not deck.keys and t.fold.phase is Phase.KEY
    # A key of an attempt not started is refused.
    t.deck_event(1, dataclasses.replace(t.key_message(1), attempt=2))
    assert t.refusals() == [RefusalCode.WRONG_PHASE]
    # The members left deal again, with new keys: play starts with their two decks.
    context = round_context(t.spec.game_id, 1, 1)
    keys = [MemberKey.from_seed(derive_seed("attempt 1", i), context) for i in range(2)]
    for i in range(2):
        t.deck_event(i, DeckKey(1, keys[i].public, keys[i].proof(i), None, attempt=1))
    joint = joint_key(k.public for k in keys)
    stages: dict[tuple[int, int], Deck] = {}
    for stage in range(2):
        for i in range(2):
            d = (i - stage) % 2
            source = initial_deck(new_deck(0), joint) if stage == 0 else stages[(d, stage - 1)]
            stages[(d, stage)] = shuffle_stage(keys[i].x, context, d, source, joint)
            t.deck_event(i, DeckStage(1, d, stage, stages[(d, stage)], attempt=1))
    assert t.refusals() == [RefusalCode.WRONG_PHASE]
    assert t.fold.phase is Phase.PLAY and t.fold.round.playing == frozenset({0, 1})


@pytest.mark.parametrize("cheat", [False, True])
def test_fold_shuffle_the_members_left_rebuild_a_dropped_members_secret_and_check_it(
    cheat: bool,
) -> None:
    """docs/shuffle.md §6.4, §7.2: each ``deck_open`` carries its author's VSS share of each
    member dropped; with ``t`` of them the member's secret is rebuilt and its stages re-run,
    so a member that dropped after substituting a card is caught all the same."""
    t = ShuffleTable(3)
    t.join_all()
    t.deal_all(cheat=(2, 1) if cheat else None)
    t.share_all()
    _drop(t, 2, [0, 1])
    t.share_all(skip=frozenset({2}))
    _play_to_blocked(t)
    assert t.fold.phase is Phase.OPEN

    def held(i: int) -> int:
        return t.held_share(i, 2)

    # A held share that is not the commitments' is refused, and so is one of a member in.
    t.deck_event(0, DeckOpen(1, t.keys[0].x, ((2, (held(0) + 1) % ORDER),)))
    t.deck_event(0, DeckOpen(1, t.keys[0].x, ((1, held(0)),)))
    assert t.refusals()[-2:] == [RefusalCode.BAD_OPEN, RefusalCode.BAD_OPEN]
    refused = len(t.refusals())
    for i in range(2):
        t.deck_event(i, DeckOpen(1, t.keys[i].x, ((2, held(i)),)))
    deck = t.fold.round.deck
    assert deck is not None and deck.secrets[2] == t.keys[2].x
    assert t.fold.phase is Phase.RESULT and 2 in t.fold.round.forfeit
    # The rebuilt secret re-runs seat 2's stages: a substitution is named.
    caught = t.refusals()[refused:]
    assert caught == ([RefusalCode.BAD_SHUFFLE] if cheat else [])


def test_fold_shuffle_a_complaint_of_a_box_is_settled_by_the_dealers_answer() -> None:
    """docs/shuffle.md §6.3: a member whose box does not open complains; the dealer answers
    with that member's share in the clear, which must be the one its commitments fix."""
    t = ShuffleTable(3)
    t.join_all()
    bad = _spoiled_key(t)
    for i, message in ((0, t.key_message(0)), (1, t.key_message(1)), (2, bad)):
        t.deck_event(i, message)
    assert t.fold.phase is Phase.DEAL and t.refusals() == []
    with pytest.raises(DeckError):
        t.held_share(0, 2, key=bad)
    share = share_for(t.keys[2], 0, 3)
    t.deck_event(1, DeckAnswer(1, 0, share))  # an answer to no complaint
    t.deck_event(0, DeckComplain(1, 2))
    t.deck_event(0, DeckComplain(1, 2))  # twice
    t.deck_event(0, DeckComplain(1, 0))  # of itself
    deck = t.fold.round.deck
    assert deck is not None and deck.answers_owed(2) == [0]
    t.deck_event(2, DeckAnswer(1, 0, (share + 1) % ORDER))  # not the committed share
    assert deck.answers_owed(2) == [0]
    t.deck_event(2, DeckAnswer(1, 0, share))
    assert deck.answers_owed(2) == [] and deck.complaints[(2, 0)] == share
    assert t.refusals() == [
        RefusalCode.BAD_DEALING,
        RefusalCode.REPEATED,
        RefusalCode.BAD_DEALING,
        RefusalCode.BAD_DEALING,
    ]


def test_fold_shuffle_a_share_owed_past_phase_timeout_while_heard_is_late() -> None:
    """docs/shuffle.md §10.4: a member that owes its share of a position the final fold
    turned up ``phase_timeout`` ago, every member heard meanwhile, is voted out *withheld*
    (:class:`ShareWaits` says who, the membership votes); its share arriving ends the wait."""
    t = ShuffleTable(3)
    t.join_all()
    t.deal_all()  # the deal's face-up positions are turned up: noted at the first look
    t.share_all(skip=frozenset({2}))
    waits = ShareWaits()
    assert waits.late(10.0, t.fold, t.fold, 6.0, heard=0.0) == []  # (turned up at 10.0 for us)
    assert waits.late(15.9, t.fold, t.fold, 6.0, heard=0.0) == []
    assert waits.late(16.0, t.fold, t.fold, 6.0, heard=0.0) == [2]
    # A member silent until 14.0 (a partition): the wait counts from then.
    assert waits.late(19.9, t.fold, t.fold, 6.0, heard=14.0) == []
    assert waits.late(20.0, t.fold, t.fold, 6.0, heard=14.0) == [2]
    t.share_all()
    assert waits.late(30.0, t.fold, t.fold, 6.0, heard=0.0) == []


def test_fold_shuffle_a_partial_of_a_position_already_opened_changes_nothing() -> None:
    """With five members ``t`` is 3: four are left to open a dropped member's shares, and the
    fourth partial of a position may come after the other three opened it (its author signed
    it before its own fold opened the position). It is checked and changes nothing; it is no
    fault (soak seeds 101 and 105 refused it as a second share, blaming an honest member)."""
    t = ShuffleTable(5)
    t.join_all()
    t.deal_all()
    t.share_all(skip=frozenset({4}))
    _drop(t, 4, [0, 1, 2])
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == {4}
    late = deck.owed(3)
    for i in (0, 1, 2):
        t.deck_event(i, t.partials(i, deck.owed(i)))
    opened = dict(deck.opened)
    assert all((d, p) in opened for _, d, p in late)  # (three partials opened every one)
    t.deck_event(3, t.partials(3, late))
    assert t.refusals() == [] and t.fold.round.deck is not None
    assert t.fold.round.deck.opened == opened


def _spoiled_key(t: ShuffleTable) -> DeckKey:
    """Member 2's key message with its box to member 0 garbage (zeros)."""
    good = t.key_message(2)
    assert good.dealing is not None
    boxes = (bytes(len(good.dealing.boxes[0])), *good.dealing.boxes[1:])
    return dataclasses.replace(good, dealing=dataclasses.replace(good.dealing, boxes=boxes))


def _deal_with_a_bad_box(t: ShuffleTable) -> None:
    """Deal ``t`` (three members) with member 2's box to member 0 spoiled, and member 0's
    complaint of it in (docs/shuffle.md §6.3)."""
    t.join_all()
    bad = _spoiled_key(t)
    for i, message in ((0, t.key_message(0)), (1, t.key_message(1)), (2, bad)):
        t.deck_event(i, message)
    t.deck_event(0, DeckComplain(1, 2))
    for stage in range(t.n):
        for i in range(t.n):
            t.deck_event(i, t.stage_message(i, stage))
    assert t.fold.phase is Phase.PLAY and t.refusals() == []


def test_fold_shuffle_an_answer_owed_past_phase_timeout_while_heard_is_late() -> None:
    """docs/shuffle.md §6.3: a dealer that does not answer a complaint of its box within
    ``phase_timeout`` of the final fold holding it, every member heard meanwhile, is voted
    out *withheld*; its answer ends the wait."""
    t = ShuffleTable(3)
    _deal_with_a_bad_box(t)
    t.share_all()
    waits = ShareWaits()
    assert waits.late(10.0, t.fold, t.fold, 6.0, heard=0.0) == []  # (the complaint noted at 10.0)
    assert waits.late(15.9, t.fold, t.fold, 6.0, heard=0.0) == []
    assert waits.late(16.0, t.fold, t.fold, 6.0, heard=0.0) == [2]
    assert waits.late(19.9, t.fold, t.fold, 6.0, heard=14.0) == []  # (one silent until 14.0)
    t.deck_event(2, DeckAnswer(1, 0, share_for(t.keys[2], 0, 3)))
    assert t.refusals() == [] and waits.late(30.0, t.fold, t.fold, 6.0, heard=0.0) == []


def test_fold_shuffle_a_partial_owed_past_phase_timeout_from_the_drop_is_late() -> None:
    """docs/shuffle.md §6.4, §10.4: a member left that does not send its partial share for a
    member dropped, of a position still sealed, within ``phase_timeout`` of the drop (not of
    the turn-up: nobody owed it before), is voted out *withheld*."""
    t = ShuffleTable(4)  # a threshold of 3: the three left must all send their partials
    t.join_all()
    t.deal_all()
    t.share_all()
    t.move(3, "S")  # a stock turn of seat 3, which is then voted out before it shares it
    t.share_all(skip=frozenset({3}))
    waits = ShareWaits()
    assert waits.late(10.0, t.fold, t.fold, 6.0, heard=0.0) == []  # (turned up at 10.0 for us)
    assert waits.late(16.0, t.fold, t.fold, 6.0, heard=0.0) == [3]  # (its own shares)
    _drop(t, 3, [0, 1, 2])
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == {3}
    assert waits.late(20.0, t.fold, t.fold, 6.0, heard=0.0) == []  # (the drop noted at 20.0)
    for i in (0, 1):
        t.deck_event(i, t.partials(i, deck.owed(i)))
    assert waits.late(25.9, t.fold, t.fold, 6.0, heard=0.0) == []
    assert waits.late(26.0, t.fold, t.fold, 6.0, heard=0.0) == [2]
    assert any(w not in deck.opened for w in deck.turned)
    # What the audit reads at the round's end: a member that revealed its VSS share of the
    # member dropped (so its own fold held the drop) without its partials withheld them.
    held = deck.copy()
    assert held.withheld() == {}
    sigma = share_for(t.keys[3], 2, 4)
    held.take_open(2, DeckOpen(1, t.keys[2].x, ((3, sigma),)))
    assert list(held.withheld()) == [2] and held.withheld()[2] == list(deck.turned[-3:])
    t.deck_event(2, t.partials(2, deck.owed(2)))
    assert t.refusals() == [] and waits.late(40.0, t.fold, t.fold, 6.0, heard=0.0) == []
    assert set(deck.opened) == set(deck.turned) and deck.withheld() == {}


def test_fold_shuffle_an_item_held_but_not_final_is_not_late() -> None:
    """docs/shuffle.md §10.12 (soak seed 518): a vote against a member freezes its voter's
    announcements, so what a member sends after it may be held here and never final while the
    vote stands. A share, an answer or a partial the held (tentative) fold has is not owed,
    whatever the final fold lacks; what the held fold lacks too is."""
    t = ShuffleTable(3)
    _deal_with_a_bad_box(t)
    t.share_all(skip=frozenset({2}))
    final = t.fold.copy()  # (the final fold stops here; what follows is only held)
    waits = ShareWaits()
    assert waits.late(10.0, final, t.fold, 6.0, heard=0.0) == []  # (noted at 10.0)
    assert waits.late(16.0, final, t.fold, 6.0, heard=0.0) == [2]
    assert {item.of for item in waits.items[2]} == {None, 2}  # (its answer and its shares)
    t.deck_event(2, DeckAnswer(1, 0, share_for(t.keys[2], 0, 3)))
    assert waits.late(16.0, final, t.fold, 6.0, heard=0.0) == [2]
    assert {item.of for item in waits.items[2]} == {2}  # (the answer is held)
    t.share_all()
    assert t.refusals() == [] and waits.late(16.0, final, t.fold, 6.0, heard=0.0) == []
    assert waits.late(16.0, final, final, 6.0, heard=0.0) == [2]  # (judged on the final)


def test_fold_shuffle_a_partial_held_but_not_final_is_not_late() -> None:
    """As above, for a partial share owed for a member dropped (docs/shuffle.md §6.4)."""
    t = ShuffleTable(4)
    t.join_all()
    t.deal_all()
    t.share_all()
    t.move(3, "S")
    t.share_all(skip=frozenset({3}))
    _drop(t, 3, [0, 1, 2])
    deck = t.fold.round.deck
    assert deck is not None
    for i in (0, 1):
        t.deck_event(i, t.partials(i, deck.owed(i)))
    final = t.fold.copy()
    waits = ShareWaits()
    assert waits.late(10.0, final, t.fold, 6.0, heard=0.0) == []
    assert waits.late(16.0, final, t.fold, 6.0, heard=0.0) == [2]
    items = waits.items[2]
    assert {(item.member, item.of) for item in items} == {(2, 3)}  # (its partials for 3)
    assert not any(item.held_in(t.fold) for item in items)
    t.deck_event(2, t.partials(2, deck.owed(2)))
    assert t.refusals() == [] and waits.late(16.0, final, t.fold, 6.0, heard=0.0) == []
    assert all(item.held_in(t.fold) for item in items)
    assert not any(item.held_in(final) for item in items)


def test_fold_shuffle_a_key_or_stage_held_but_not_final_is_not_withheld() -> None:
    """docs/shuffle.md §10.13: as for a share (above), a key or a stage the held fold has is
    not withheld, whatever the final fold lacks (a vote froze its voter's announcements of
    the member's feed: the event may never be final while it stands); a vote cast for it
    names it (:class:`Awaited`), held once the held fold has it. In the deal, the stage
    named is the one due: a later stage of the member's is not it."""
    t = ShuffleTable(3)
    t.join_all()
    for i in (0, 1):
        t.deck_event(i, t.key_message(i))
    final = t.fold.copy()  # (the final fold stops here; what follows is only held)
    assert _withholding(t, 6.0, final) == [2]
    key = Awaited.of(final, 2)
    assert key.phase is Phase.KEY and not key.held_in(t.fold)
    t.deck_event(2, t.key_message(2))
    assert _withholding(t, 6.0, final) == [] and key.held_in(t.fold)
    assert not key.held_in(final)  # (judged on the final fold alone, it is withheld)
    t.deck_event(0, t.stage_message(0, 0))
    final = t.fold.copy()
    stage = Awaited.of(final, 1)
    assert stage.stage == (1, 0) and _withholding(t, 6.0, final) == [1, 2]
    t.deck_event(1, t.stage_message(1, 0))
    assert stage.held_in(t.fold) and not stage.held_in(final)
    assert _withholding(t, 6.0, final) == [2] and Awaited.of(t.fold, 1).stage == (0, 1)


def dropped_unanswered() -> ShuffleTable:
    """Three members, member 2's box to member 0 spoiled and complained of
    (:func:`_deal_with_a_bad_box`), a stock turn of member 2's, member 2 then dropped before it
    shares it or answers the complaint."""
    t = ShuffleTable(3)
    _deal_with_a_bad_box(t)
    t.share_all()
    t.move(2, "S")
    t.share_all(skip=frozenset({2}))
    _drop(t, 2, [0, 1])
    return t


def test_fold_shuffle_a_complainer_unanswered_owes_no_partial_and_cannot_open() -> None:
    """A member whose complaint of a dealer's box is unanswered holds no share of its secret:
    it owes no partial for it once dropped, and is not counted among those who can open its
    shares: with three members the round ends blocked (docs/shuffle.md §6.3, §6.4)."""
    t = dropped_unanswered()
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == {2} and not deck.can_open
    assert [of for of, _, _ in deck.owed(0)] == []
    assert [of for of, _, _ in deck.owed(1)] == [2, 2, 2]
    table = t.fold.table
    assert table is not None and table.status.value == "blocked"
    assert t.fold.phase is Phase.OPEN and t.refusals() == []


@pytest.mark.parametrize("phase", [Phase.KEY, Phase.DEAL])
@pytest.mark.parametrize("n", [2, 3])
def test_fold_shuffle_a_member_that_leaves_the_deal_of_two_ends_the_game_void(
    n: int, phase: Phase
) -> None:
    """docs/shuffle.md §8.4: nobody deals alone. A member that leaves a deal of two ends the
    game as an abandon does: the round in progress void, the game ended on the rounds
    recorded (here none); it waited for the leaver's key or stages for ever. From three, the
    deal starts again without it, as for a drop."""
    t = ShuffleTable(n)
    t.join_all()
    t.deck_event(0, t.key_message(0))
    if phase is Phase.DEAL:
        for i in range(1, n):
            t.deck_event(i, t.key_message(i))
        t.deck_event(0, t.stage_message(0, 0))
    assert t.fold.phase is phase
    t.play(n - 1, Leave(()))
    assert t.refusals() == [] and n - 1 in t.fold.left
    if n == 3:
        deck = t.fold.round.deck
        assert t.fold.phase is Phase.KEY and deck is not None and deck.members == (0, 1)
        return
    assert t.fold.phase is Phase.OVER
    result = t.fold.game.result
    assert result is not None and result.termination is Termination.ABANDONED
    assert t.fold.game.history == () and result.totals == (0, 0)


@pytest.mark.parametrize("n", [3, 4])
def test_fold_shuffle_a_complaint_of_a_deal_given_up_counts_in_no_other(n: int) -> None:
    """docs/shuffle.md §8.4: a complaint (and an answer) names its deal attempt. One signed
    before its author saw the drop that restarted the deal, folded after it, is read and
    changes nothing: it was refused (three members: the new deal of two has no dealing) or
    complained, under the new numbering, of another dealer's box (four)."""
    t = ShuffleTable(n)
    t.join_all()
    for i in range(n):
        t.deck_event(i, t.key_message(i))
    assert t.fold.phase is Phase.DEAL
    _drop(t, 1, [q for q in range(n) if q != 1])
    deck = t.fold.round.deck
    assert deck is not None and deck.attempt == 1 and t.fold.phase is Phase.KEY
    t.deck_event(0, DeckComplain(1, n - 1, attempt=0))
    t.deck_event(0, DeckAnswer(1, 0, 5, attempt=0))
    assert t.refusals() == [] and deck.complaints == {}
    t.deck_event(0, DeckComplain(1, n - 1, attempt=2))  # of a deal not started
    assert t.refusals() == [RefusalCode.WRONG_PHASE]


def _withholding(t: ShuffleTable, now: float, final: GameState | None = None) -> list[int]:
    """Who seat 0 votes out for withholding at ``now``, every member heard throughout, its
    final fold ``final`` (by default ``t.fold``) and its held fold ``t.fold``."""
    membership = Membership(0, t.n, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    for q in range(t.n):
        membership.heard_from(q, now)
    return list(membership.withholding(now, final or t.fold, 0.0, lambda: t.fold))


def test_fold_shuffle_a_member_withholding_its_key_or_stage_is_voted_out() -> None:
    """A member heard that does not send its key, or a stage whose input is in, within
    ``phase_timeout`` of the phase's start is voted out *withheld*, as for a commit game's
    phase events (soak seed 27, ``--deal shuffle --deck-cheats``: the game waited in ``key``
    for ever). In the deal, a member waiting for another's stage withholds nothing."""
    t = ShuffleTable(3)
    t.join_all()
    for i in (0, 1):
        t.deck_event(i, t.key_message(i))
    assert t.fold.phase is Phase.KEY
    assert _withholding(t, 5.9) == [] and _withholding(t, 6.0) == [2]
    t.deck_event(2, t.key_message(2))
    for i in (0, 1):
        t.deck_event(i, t.stage_message(i, 0))
    t.deck_event(1, t.stage_message(1, 1))  # (its input, deck 0's stage 0, is in)
    assert t.fold.phase is Phase.DEAL and {0, 2} <= t.fold.waiting()
    # Member 0's next stage shuffles deck 2, whose stage 0 member 2 withholds.
    assert _withholding(t, 6.0) == [2]
