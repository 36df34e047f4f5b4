"""Issue 19's hiding test at the peer level: before a card of a shuffle game is turned up,
nothing its owner's peer holds (its folds, its log, its own round secret) opens it; once every
member's share is in, the card is the one its deck has there (docs/shuffle.md §10)."""

from __future__ import annotations

from p2p_nertz.deck.elgamal import decrypt_with
from p2p_nertz.deck.group import ORDER, DeckError, scalar_bytes
from p2p_nertz.deck.shares import make_share, open_card
from p2p_nertz.protocol.bodies import DeckEvent, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_unverified
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.shuffle import local_deck_key
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules, is_unknown, sealed
from p2p_nertz.sim.network import SimConfig, SimResult, run


def _events(result: SimResult, seat: int) -> list[tuple[int, Kind, object]]:
    """Seat ``seat``'s log as (author seat, kind, parsed body), in log order."""
    spec = result.spec
    out = []
    for record in result.logs[seat]:
        message = decode_unverified(record, game_id=spec.game_id, roster=spec.peer_ids)
        if message.kind.is_event:
            body = parse_body(message.kind, message.body, spec.seats)
            out.append((spec.seat_of(message.author), message.kind, body))
    return out


def test_peer_hiding_nothing_a_peer_holds_before_a_turn_up_opens_its_own_card() -> None:
    result = run(
        SimConfig(players=3, seed=7, deal=Deal.SHUFFLE, rules=Rules(target=None, rounds=1))
    )
    assert result.finished and result.violations == []
    seat = 0
    spec = result.spec
    keys = [local_deck_key(identity.to_bytes(), spec.game_id, 1) for identity in result.identities]
    events = _events(result, seat)
    # The first stock turn of ours in play: the log up to it holds the deal and everything
    # before, and none of the others' shares of the cards it turns up.
    turn = next(
        i
        for i, (author, kind, body) in enumerate(events)
        if author == seat and kind is Kind.MOVE and str(body.move) == "S"  # type: ignore[attr-defined]
    )
    records = result.logs[seat]
    cut = [
        i
        for i, r in enumerate(records)
        if decode_unverified(r, game_id=spec.game_id, roster=spec.peer_ids).kind.is_event
    ][turn] + 1
    before, _ = Peer.restore(result.identities[seat], spec, records[:cut], 0.0)
    after, _ = Peer.restore(result.identities[seat], spec, records, 0.0)
    deck_before = before.tentative.round.deck
    deck_after = after.final.round.deck
    assert deck_before is not None and deck_after is not None and deck_after.final is not None
    turned = [w for w in deck_before.turned if w[0] == 0 and w not in deck_before.opened]
    assert turned, "the stock turn turned up cards of our own deck"
    secrets_of_others = {scalar_bytes(k.x) for k in keys[1:]}
    joint_secret = sum(k.x for k in keys) % ORDER
    for where in turned:
        deck, position = where
        cipher = deck_after.final[deck][position]
        card = decrypt_with(joint_secret, cipher)
        assert card is not None
        # Its folds show it sealed, its table face down, nobody's share but its own is held.
        for fold in (before.final, before.tentative):
            rs = fold.round
            assert rs.deck is not None and where not in rs.deck.opened
            assert rs.table is not None and sealed(position) in tuple(
                rs.table.tableaux[seat].cards()
            )
            assert set(rs.deck.shares.get(where, {})) <= {0}
        view = before.view
        assert view is not None
        assert all(is_unknown(c) or c != card for c in view.tableaux[seat].face_up().waste[-1:])
        # Nothing in its log is another member's share of it, or another member's secret.
        for author, kind, body in events[: turn + 1]:
            if kind is Kind.DECK_SHARES and author != seat:
                assert isinstance(body, DeckEvent)
                assert all((s.deck, s.position) != where for s in body.message.shares)  # type: ignore[union-attr]
        assert not any(s in r for r in records[:cut] for s in secrets_of_others)
        # Its own secret alone opens nothing.
        own = make_share(keys[seat], 0, deck, position, cipher)
        try:
            opened = open_card(cipher, [own.point])
        except DeckError:
            opened = None
        assert opened is None
        # Every member's share together opens it to the card its deck holds (a position a move
        # turned up is opened in a fold only by a move that needs it, docs/shuffle.md §10.14).
        points = [make_share(k, i, deck, position, cipher).point for i, k in enumerate(keys)]
        assert open_card(cipher, points) == card
        assert deck_after.opened.get(where, card) == card
