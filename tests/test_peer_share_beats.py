"""A peer's turn-up shares outside the feed (docs/shuffle.md §10.14, the peer's first step):
each member sends its own turn-up shares in a signed ``deck_reveal`` beat ahead of the log's
sync, keeps the right ones it receives in its share store, its bot chooses on the held view,
and a move on a card sealed in its fold carries the card's opening. Since session 21 a move's
turn-up shares go in the beats alone (the deal's face-up ones still in ``deck_shares``:
``tests/test_sim_shuffle_feed.py``), and the audit reads the game to the peers' state.

The simulated games give the log's write a time of its own (``Faults.sync``: a message sent
after a record of the same input leaves that much later), longer than the bots' pace, so that a
bot looks at its table while the others' beats are in and their events are not."""

from __future__ import annotations

import dataclasses

import pytest
from peer_helpers import sign

from p2p_nertz.deck.group import add, base_mul
from p2p_nertz.deck.shares import Share, make_share
from p2p_nertz.protocol.bodies import DeckReveal, Play, encode_body, parse_body
from p2p_nertz.protocol.effects import Rejected, Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.sim.invariants import check, settled
from p2p_nertz.sim.network import Faults, SimConfig, Simulation

pytestmark = pytest.mark.slow  # (whole simulated shuffle games)

#: the log's write, slower than a bot's look (a bot at speed 10 looks every ~0.25 s)
SYNC = 0.3


def _config(players: int, seed: int, **more: object) -> SimConfig:
    return SimConfig(
        players=players,
        seed=seed,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=1),
        faults=Faults(sync=SYNC),
        **more,  # type: ignore[arg-type]
    )


def _carried(logs: list[list[bytes]], seats: int) -> list[Play]:
    """The moves and claims in ``logs`` (each event once) that carry an opening and are timed
    before the round's ``nerts`` (one timed after it does not count, and opens nothing: its
    position, turned up and never played, stays sealed in every fold, docs/shuffle.md
    §10.14)."""
    seen: dict[bytes, tuple[int, Play]] = {}
    end = None
    for log in logs:
        for wire in log:
            message = decode_message(wire)
            if message.kind is Kind.NERTS:
                end = message.lamport if end is None else min(end, message.lamport)
            if message.kind in (Kind.MOVE, Kind.CLAIM) and message.id not in seen:
                body = parse_body(message.kind, message.body, seats)
                assert isinstance(body, Play)
                seen[message.id] = (message.lamport, body)
    return [b for t, b in seen.values() if b.opens and (end is None or t < end)]


@pytest.mark.parametrize(("players", "seed"), [(2, 12), (3, 13)])
def test_peer_share_beats_a_shuffle_game_with_reveals_and_carried_openings(
    players: int, seed: int
) -> None:
    result = Simulation(_config(players, seed, record_effects=True)).run()
    # (run() checks no invariant: check() does, the audit of every log among them)
    assert result.finished and check(result) == [] and result.rejected == 0
    finals = settled(result)
    assert len({f.digest() for f in finals}) == 1 and finals[0].violations == ()
    report = result.audit
    assert report is not None
    assert report.valid and report.violations == ()
    assert report.digest == finals[0].digest()
    # Every member sent its turn-up shares as beats, and never logged one.
    reveals: dict[int, int] = {}
    for _, seat, effect in result.effects:
        if isinstance(effect, Send) and decode_message(effect.data).kind is Kind.DECK_REVEAL:
            reveals[seat] = reveals.get(seat, 0) + 1
    assert sorted(reveals) == list(range(players))
    logs = [list(log) for log in result.logs]
    assert all(decode_message(w).kind is not Kind.DECK_REVEAL for log in logs for w in log)
    # Some moves were made on a card the mover's fold had sealed, carrying its opening: every
    # member's share of the cards they needed, each opening its card in every fold.
    carried = _carried(logs, players)
    assert carried
    rs = finals[0].round
    deck = rs.deck
    assert deck is not None
    for body in carried:
        places = {(s.deck, s.position) for s in body.opens}
        for where in places:
            makers = {s.seat for s in body.opens if (s.deck, s.position) == where}
            assert makers <= set(range(players)) and where in deck.opened
            assert deck.opened[where] is not None


def _peer_in_play(seed: int) -> tuple[Simulation, Peer, float]:
    """A two-player shuffle game run until its seat 0 holds a turn-up share of seat 1's in
    its store that its tentative fold does not hold (a beat came, the event not yet)."""
    sim = Simulation(_config(2, seed))

    def window(s: Simulation) -> bool:
        peer = s.peers[0]
        assert peer is not None
        deck = peer.tentative.round.deck
        if deck is None or deck.final is None:
            return False
        shares = peer._chains.shares.store
        return any(
            shares.has(deck, (1, 1, *w)) and 1 not in deck.shares.get(w, {})
            for w in deck.turned
            if w not in deck.opened
        )

    now = sim.run(until=window).time
    peer = sim.peers[0]
    assert peer is not None and window(sim)
    return sim, peer, now


def _state(peer: Peer) -> tuple[object, ...]:
    store = peer._chains.shares.store
    held = {c: dict(v) for c, v in store._rounds.items()}
    return (peer.final.digest(), peer.tentative.digest(), peer.view, held)


def test_peer_share_beats_the_held_view_shows_a_card_the_fold_has_sealed() -> None:
    _, peer, _ = _peer_in_play(12)
    rs = peer.tentative.round
    deck = rs.deck
    assert deck is not None and rs.table is not None
    opened, digest = dict(deck.opened), peer.tentative.digest()
    view = peer.view
    # The held view shows more than the fold's table; the fold is left as it was.
    assert view is not None and view != rs.table
    assert dict(deck.opened) == opened and peer.tentative.digest() == digest
    assert peer.tentative.table is rs.table


def test_peer_share_beats_a_forged_or_malformed_deck_reveal_changes_nothing() -> None:
    sim, peer, now = _peer_in_play(12)
    other = sim.peers[1]
    assert other is not None
    rs = peer.tentative.round
    deck = rs.deck
    assert deck is not None and deck.final is not None
    n, d = rs.number, deck.member(other.seat)
    # A position of seat 1's deck that nobody holds a share of yet.
    p = next(
        p for p in range(deck.size) if not deck.shares.get((d, p)) and (d, p) not in deck.turned
    )
    key = other._outbox.deck_key(n, deck.attempt)
    right = make_share(key, d, d, p, deck.final[d][p])
    ids = sim.identities
    stranger = Identity.generate(derive_seed("share beats stranger", 0))
    lamport = [10_000]

    def beat(identity: Identity, body: object) -> bytes:
        lamport[0] += 1
        return sign(identity, sim.spec, kind=Kind.DECK_REVEAL, body=body, lamport=lamport[0])

    def reveal(*shares: Share) -> object:
        return encode_body(DeckReveal(n, shares))

    forged_point = dataclasses.replace(right, point=add(right.point, base_mul(1)))
    other_place = dataclasses.replace(right, position=(p + 1) % deck.size)
    mine = deck.member(peer.seat)
    as_ours = dataclasses.replace(right, seat=mine, of_seat=mine)
    cases = {
        "bad_share": [
            beat(ids[1], reveal(forged_point)),
            beat(ids[1], reveal(other_place)),
            beat(ids[1], reveal(as_ours)),  # (relayed: checked against its maker's key)
        ],
        "bad_body": [beat(ids[1], [n, []]), beat(ids[1], [n])],
        "unknown_author": [beat(stranger, reveal(right))],
    }
    before = _state(peer)
    for reason, wires in cases.items():
        for wire in wires:
            effects = peer.feed(wire, now)
            refused = [e.reason for e in effects if isinstance(e, Rejected)]
            assert refused == [reason], (reason, refused)
            assert _state(peer) == before
    # The right share is kept, and refuses nothing; its position is not turned up: the folds
    # and the view are as they were.
    effects = peer.feed(beat(ids[1], reveal(right)), now)
    assert not [e for e in effects if isinstance(e, Rejected)]
    assert peer._chains.shares.store.has(deck, (d, d, d, p))
    assert _state(peer)[:3] == before[:3]
