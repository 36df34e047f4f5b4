"""Asking for a turn-up's missing shares (docs/shuffle.md §10.14, ``deck_want``): a peer whose
held fold turned a position up and that still lacks a member's share of it ``want_after`` later
asks everyone for it, a bounded number of times; a peer asked answers the asker from its store
with a ``deck_reveal``, only for positions its own fold turned up; a forged, malformed or
stranger's ``deck_want`` changes nothing and is answered with nothing.

Real signatures throughout: peers of simulated shuffle games, taken out of their game at a
chosen moment and fed signed messages through the sans-I/O core, and a whole game in which
one member's ``deck_reveal`` beats never reach one peer (``Faults.lost_reveals``)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable

import pytest
from peer_helpers import sign

from p2p_nertz.deck.shares import Share, make_share
from p2p_nertz.protocol.bodies import DeckReveal, DeckWant, encode_body, parse_body
from p2p_nertz.protocol.effects import Effect, Rejected, Send
from p2p_nertz.protocol.envelope import MAX_MESSAGE_SIZE, Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer, PeerConfig
from p2p_nertz.protocol.share_wants import WANT_ASKS
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.sim.invariants import check, settled
from p2p_nertz.sim.network import Faults, SimConfig, Simulation

#: the log's write, slower than a bot's look (as tests/test_peer_share_beats.py)
SYNC = 0.3


def _config(
    players: int, seed: int, faults: Faults | None = None, peer: PeerConfig | None = None
) -> SimConfig:
    return SimConfig(
        players=players,
        seed=seed,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=1),
        faults=faults or Faults(sync=SYNC),
        peer=peer or PeerConfig(),
    )


def _run_until(seed: int, window: Callable[[Peer], bool]) -> tuple[Simulation, Peer, float]:
    """A two-player shuffle game run until its seat 0 meets ``window``."""
    sim = Simulation(_config(2, seed))

    def met(s: Simulation) -> bool:
        peer = s.peers[0]
        deck = peer.tentative.round.deck if peer is not None else None
        return peer is not None and deck is not None and deck.final is not None and window(peer)

    now = sim.run(until=met).time
    peer = sim.peers[0]
    assert peer is not None and met(sim)
    return sim, peer, now


def _lacking(peer: Peer) -> set[tuple[int, int, int]]:
    """The shares of others that ``peer``'s held fold and store lack, of positions turned up."""
    deck = peer.tentative.round.deck
    assert deck is not None
    store, me = peer._chains.shares.store, deck.member(peer.seat)
    return {(m, *w) for w in deck.turned for m in store.lacking(deck, w) if m != me}


def _share_beats(effects: list[Effect], kind: Kind) -> list[tuple[Send, object]]:
    """The ``kind`` share beats among ``effects``, each with its parsed body."""
    out = []
    for effect in effects:
        if isinstance(effect, Send):
            message = decode_message(effect.data)
            if message.kind is kind:
                out.append((effect, parse_body(message.kind, message.body, 8)))
    return out


class _Signer:
    """Signs the share beats of a game's members, and of a stranger, at rising clocks."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.lamport = 10_000
        self.stranger = Identity.generate(derive_seed("share wants stranger", 0))

    def __call__(self, seat: int | None, kind: Kind, body: object) -> bytes:
        self.lamport += 1
        identity = self.stranger if seat is None else self.sim.identities[seat]
        return sign(identity, self.sim.spec, kind=kind, body=body, lamport=self.lamport)

    def share(self, seat: int, member: int, where: tuple[int, int], peer: Peer) -> Share:
        """``seat``'s (member ``member``) right share of ``where`` in ``peer``'s held round."""
        rs = peer.tentative.round
        deck = rs.deck
        assert deck is not None and deck.final is not None
        other = self.sim.peers[seat]
        assert other is not None
        key = other._outbox.deck_key(rs.number, deck.attempt)
        d, p = where
        return make_share(key, member, d, p, deck.final[d][p])


def test_share_wants_a_missing_share_is_asked_for_want_after_a_bounded_number_of_times() -> None:
    sim, peer, now = _run_until(12, lambda p: bool(_lacking(p)))
    signer = _Signer(sim)
    after = peer.config.want_after
    wants = peer._chains.wants
    due = wants.due
    # Noted at its turn-up (this input or one just before it), asked for `want_after` later.
    assert now < due <= now + after
    assert peer.next_deadline() <= due
    assert not _share_beats(peer.tick(due - after / 10), Kind.DECK_WANT)
    asked = _share_beats(peer.tick(due), Kind.DECK_WANT)
    assert asked
    rs = peer.tentative.round
    deck = rs.deck
    assert deck is not None
    me = deck.member(peer.seat)
    lacking = _lacking(peer)
    first: set[tuple[int, int, int]] = set()
    for send, body in asked:
        assert send.to is None  # (to everyone)
        assert isinstance(body, DeckWant) and body.round == rs.number
        assert set(body.wanted) <= lacking and all(m != me for m, _, _ in body.wanted)
        first |= set(body.wanted)
    assert first
    # Asked once at a time: the same instant asks nothing more.
    assert not _share_beats(peer.tick(due), Kind.DECK_WANT)
    # One position's share comes (from its maker's beat): it is never asked for again.
    member, d, p = sorted(first)[0]
    share = signer.share(deck.members[member], member, (d, p), peer)
    reveal = signer(
        deck.members[member], Kind.DECK_REVEAL, encode_body(DeckReveal(rs.number, (share,)))
    )
    assert not [e for e in peer.feed(reveal, due) if isinstance(e, Rejected)]
    # The others are asked for again, later and later, WANT_ASKS times each at most.
    times: dict[tuple[int, int, int], list[float]] = {w: [due] for w in first}
    for _ in range(4 * WANT_ASKS):
        t = peer._chains.wants.due
        if math.isinf(t):
            break
        for _, body in _share_beats(peer.tick(t), Kind.DECK_WANT):
            assert isinstance(body, DeckWant)
            for w in body.wanted:
                times.setdefault(w, []).append(t)
    assert math.isinf(peer._chains.wants.due)  # (nothing waits: every ask made or dropped)
    assert times[(member, d, p)] == [due]
    for w, at in times.items():
        assert len(at) <= WANT_ASKS
        if w in first and w != (member, d, p):
            assert len(at) == WANT_ASKS
            gaps = [b - a for a, b in itertools.pairwise(at)]
            assert gaps[0] == pytest.approx(2 * after)
            assert all(g2 == pytest.approx(2 * g1) for g1, g2 in itertools.pairwise(gaps))


def _holds_relayable(peer: Peer) -> bool:
    """Whether ``peer``'s store holds seat 1's share of a position its fold turned up and holds
    no share of seat 1's of (a beat came, the event not yet)."""
    deck = peer.tentative.round.deck
    assert deck is not None
    store, m = peer._chains.shares.store, deck.member(1)
    return any(
        store.has(deck, (m, m, *w)) and m not in deck.shares.get(w, {})
        for w in deck.turned
        if w not in deck.opened
    )


def _state(peer: Peer) -> tuple[object, ...]:
    store = peer._chains.shares.store
    held = {c: dict(v) for c, v in store._rounds.items()}
    return (peer.final.digest(), peer.tentative.digest(), peer.view, held)


def test_share_wants_a_deck_want_is_answered_from_the_store_for_positions_turned_up_only() -> None:
    sim, peer, now = _run_until(12, _holds_relayable)
    signer = _Signer(sim)
    rs = peer.tentative.round
    deck = rs.deck
    assert deck is not None and deck.final is not None
    n, m1 = rs.number, deck.member(1)
    store = peer._chains.shares.store
    where = next(w for w in deck.turned if store.has(deck, (m1, m1, *w)))
    # A right share of seat 1's of a position not turned up: kept (it proves itself), and
    # never relayed before its turn-up (the hiding property).
    hidden = next(
        (d, p)
        for d in range(len(deck.members))
        for p in range(deck.size)
        if (d, p) not in deck.turned_set
    )
    early = signer.share(1, m1, hidden, peer)
    signer_reveal = signer(1, Kind.DECK_REVEAL, encode_body(DeckReveal(n, (early,))))
    peer.feed(signer_reveal, now)
    assert store.has(deck, (m1, m1, *hidden))

    def want(seat: int | None, *wanted: tuple[int, int, int]) -> bytes:
        return signer(seat, Kind.DECK_WANT, encode_body(DeckWant(n, wanted)))

    def answers(effects: list[Effect]) -> list[tuple[Send, DeckReveal]]:
        return [
            (s, b) for s, b in _share_beats(effects, Kind.DECK_REVEAL) if isinstance(b, DeckReveal)
        ]

    before = _state(peer)
    # Refused by the codec and answered with nothing: a stranger's, a forged one, malformed.
    good = want(1, (m1, *where))
    forged = bytearray(good)
    forged[-1] ^= 1
    refusals = {
        "unknown_author": want(None, (m1, *where)),
        "bad_signature": bytes(forged),
        "bad_body": signer(1, Kind.DECK_WANT, [n, []]),
    }
    for reason, wire in refusals.items():
        effects = peer.feed(wire, now)
        assert [e.reason for e in effects if isinstance(e, Rejected)] == [reason], reason
        assert not answers(effects) and _state(peer) == before
    # A want of a position not turned up here: nothing, though the store holds the share.
    effects = peer.feed(want(1, (m1, *hidden)), now)
    assert not answers(effects) and not [e for e in effects if isinstance(e, Rejected)]
    assert _state(peer) == before
    # A right want: answered to its sender alone, with the right share (a relay: seat 1's own
    # share sent back to it proves itself as well) and none of the hidden position's.
    effects = peer.feed(want(1, (m1, *where), (m1, *hidden)), now)
    ((send, body),) = answers(effects)
    assert send.to == sim.identities[1].peer_id
    assert body.round == n and body.shares == (store.share(deck, (m1, m1, *where)),)
    assert _state(peer) == before
    # Asked again at once: not answered again (at most once every want_after to one asker)...
    assert not answers(peer.feed(want(1, (m1, *where)), now))
    # ... and again want_after later.
    later = now + peer.config.want_after
    ((_, again),) = answers(peer.feed(want(1, (m1, *where)), later))
    assert again.shares == body.shares


def _lost_link_game(want_after: float) -> tuple[Simulation, int]:
    """A three-player shuffle game whose seat 1's ``deck_reveal`` beats never reach seat 0,
    the log's write slower than a hop (``SYNC``), checked whole; and at how many positions
    turned up at seat 0 its held view (fold and store together) held every share, the card
    known, before its tentative fold held seat 1's share (its ``deck_shares``, or a move
    carrying it)."""
    faults = Faults(sync=SYNC, lost_reveals=frozenset({(1, 0)}))
    config = _config(3, 31, faults=faults, peer=PeerConfig(want_after=want_after))
    sim = Simulation(dataclasses.replace(config, record_effects=True))
    known: dict[tuple[int, int], int] = {}  # position -> the happening its card was known at
    folded: dict[tuple[int, int], int] = {}  # position -> ... seat 1's share was folded at
    step = [0]

    def watch(s: Simulation) -> bool:
        step[0] += 1
        peer = s.peers[0]
        deck = peer.tentative.round.deck if peer is not None else None
        if peer is None or deck is None or deck.final is None:
            return False
        store, m1 = peer._chains.shares.store, deck.member(1)
        for w in deck.turned:
            if w not in folded and m1 in deck.shares.get(w, {}):
                folded[w] = step[0]
            if w not in known and (w in deck.opened or store.shares_of(deck, w)):
                known[w] = step[0]
        return False

    result = sim.run(until=watch)
    # (run() checks no invariant: check() does, the audit of every log among them)
    assert result.finished and check(result) == [] and result.rejected == 0
    finals = settled(result)
    assert len({f.digest() for f in finals}) == 1 and finals[0].violations == ()
    report = result.audit
    assert report is not None
    assert report.valid and report.digest == finals[0].digest()
    assert known
    return sim, sum(at < folded.get(w, step[0] + 1) for w, at in known.items())


@pytest.mark.slow  # (two whole simulated shuffle games)
def test_share_wants_a_reveal_lost_for_good_on_a_link_is_relayed_through_the_want() -> None:
    sim, ahead = _lost_link_game(want_after=0.05)
    effects = sim.result.effects
    to_0 = sim.identities[0].peer_id
    wants = [e for at, seat, e in effects if seat == 0 and _share_beats([e], Kind.DECK_WANT)]
    relayed = [
        body
        for at, seat, e in effects
        if seat == 2
        for s, body in _share_beats([e], Kind.DECK_REVEAL)
        if s.to == to_0
    ]
    # Seat 0 asked; seat 2 answered it with seat 1's shares (a relay: seat 1's own beats
    # never reach seat 0); so seat 0's held view opened cards before its fold did.
    assert wants and relayed
    assert any(sh.seat == 1 for body in relayed for sh in body.shares)  # type: ignore[attr-defined]
    assert ahead > 0
    # Without the want (asked too late to matter), the held view is never ahead of the fold
    # at seat 0: seat 1's shares reach it only in the feed.
    assert _lost_link_game(want_after=1e6)[1] == 0


def test_share_wants_a_want_of_many_shares_is_answered_in_beats_a_frame_holds() -> None:
    """64 shares asked (the most a ``deck_want`` holds) go back in several ``deck_reveal``
    beats, each under the frame's limit (64 shares in one would be 6.9 KB: signing it
    raised, and the node stopped, in a loaded game on real sockets)."""

    def many(peer: Peer) -> bool:
        deck = peer.tentative.round.deck
        assert deck is not None
        store = peer._chains.shares.store
        held = [(m, *w) for w in deck.turned for m in (0, 1) if store.has(deck, (m, m, *w))]
        return len(held) >= 64

    sim, peer, now = _run_until(12, many)
    signer = _Signer(sim)
    rs = peer.tentative.round
    deck = rs.deck
    assert deck is not None
    store = peer._chains.shares.store
    wanted = [(m, *w) for w in deck.turned for m in (0, 1) if store.has(deck, (m, m, *w))][:64]
    wire = signer(1, Kind.DECK_WANT, encode_body(DeckWant(rs.number, tuple(wanted))))
    effects = peer.feed(wire, now)
    answers = [b for _, b in _share_beats(effects, Kind.DECK_REVEAL)]
    assert len(answers) >= 3
    got = [(s.seat, s.deck, s.position) for b in answers for s in b.shares]  # type: ignore[attr-defined]
    assert sorted(got) == sorted(wanted)
    sizes = [len(e.data) for e in effects if isinstance(e, Send)]
    assert max(sizes) <= MAX_MESSAGE_SIZE
