"""Whole simulated games of a shuffle game (docs/shuffle.md §10): real peer cores signing
their keys, stages, shares and secrets, bots playing, the invariants and the audit over every
log."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter

import pytest
from peer_helpers import sign

from p2p_nertz.deck.shares import Share
from p2p_nertz.protocol.bodies import Join, encode_body
from p2p_nertz.protocol.effects import Rejected, Send
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION, SHARES_VERSION, Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS
from p2p_nertz.sim.network import Faults, SimConfig, SimResult, run

#: A share's place in a round: (its maker's seat, the seat it stands for, deck, position).
_Where = tuple[int, int, int, int]


@functools.cache
def _played(config: SimConfig) -> tuple[SimResult, dict[int, Counter[_Where]]]:
    """The game of ``config`` (its invariants checked), and the share checks each peer's round
    made, by the round's memo (one per peer; the tentative and final folds share it): a check
    answered from the memo is not counted. The counter calls the check through: the game is
    the one it would be without it, and the tests that read it share it."""
    from p2p_nertz.protocol import shuffle

    checked: dict[int, Counter[_Where]] = {}  # memo -> share -> checks
    verify = shuffle.DeckRound._verify  # private: where a check is made or answered

    def counting(deck: DeckRound, share: Share, key: bytes, cipher: tuple[bytes, bytes]) -> None:
        if (share, key, cipher) not in deck.memo:  # checked now, not answered from the memo
            where = (share.seat, share.of_seat, share.deck, share.position)
            checked.setdefault(id(deck.memo), Counter())[where] += 1
        verify(deck, share, key, cipher)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shuffle.DeckRound, "_verify", counting)
        result = run(config)
    return result, checked


def _fault_free(players: int, rounds: int) -> SimConfig:
    return SimConfig(
        players=players,
        seed=players * 10 + rounds,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=rounds),
    )


#: A game of three on links of exactly 0.01 s one way, its effects recorded: when each share
#: beat leaves is read from them.
_TIMED = SimConfig(
    players=3,
    seed=5,
    faults=Faults(delay=0.01, jitter=0.0),
    deal=Deal.SHUFFLE,
    record_effects=True,
)


@pytest.mark.parametrize(("players", "rounds"), [(2, 1), (3, 1), (4, 1), (2, 3)])
def test_sim_shuffle_a_fault_free_game_ends_with_every_card_opened_by_the_table(
    players: int, rounds: int
) -> None:
    result, _ = _played(_fault_free(players, rounds))
    assert result.finished and result.violations == []
    finals = [p._final for p in result.peers if p is not None]
    assert len({f.digest() for f in finals}) == 1
    final = finals[0]
    assert final.violations == () and len(final.history) >= rounds
    for rs in (*final.past_rounds, final.round):
        deck = rs.deck
        assert deck is not None and deck.final is not None
        # Every position the deal turned up was opened, to a card, by every member's share,
        # and so was every one a move needed (carried): a position a move turned up and nobody
        # played is opened in no fold (its shares travelled as beats, docs/shuffle.md §10.14).
        assert deck.face_up <= set(deck.opened) <= set(deck.turned)
        assert len(deck.opened) > len(deck.face_up) and None not in deck.opened.values()
        assert len(deck.secrets) == players


#: The one-round games the share checks are counted in (those of the tests above and below).
_COUNTED = {2: _fault_free(2, 1), 3: _TIMED}


@pytest.mark.parametrize("players", [2, 3])
def test_sim_shuffle_each_share_is_checked_by_every_other_peer_once_and_not_by_its_maker(
    players: int,
) -> None:
    """A turn-up costs each peer N - 1 checks: its own share, made from its secret, is not
    checked again when its deck_shares comes back to its folds (DeckRound.made), and its
    folds, final and tentative, check each other share once between them (the round's
    memo, one per peer)."""
    result, checked = _played(_COUNTED[players])
    assert result.finished and result.violations == []
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        deck = peer._final.round.deck
        assert deck is not None
        me = deck.member(seat)
        expected = {(i, i, d, p): 1 for i in range(players) if i != me for d, p in deck.turned}
        assert checked[id(deck.memo)] == expected


def test_sim_shuffle_shares_go_in_the_flush_of_the_event_that_turns_cards_up() -> None:
    """The mover's shares leave with its move, each other member's with its delivery of the
    move (the tentative fold's duty, docs/shuffle.md §10.3-10.4), each in a ``deck_reveal``
    beat (§10.14: a move's turn-up shares are never logged): a turn-up is one round trip, not
    a finality."""
    result, _ = _played(_TIMED)
    spec = result.spec
    sent: list[tuple[float, int, Kind]] = []
    for now, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.to is None:
            sent.append((now, seat, decode_message(effect.data, cache=result.envelopes).kind))
    turns = [(now, seat) for now, seat, kind in sent if kind is Kind.MOVE]
    shares = {(now, seat) for now, seat, kind in sent if kind is Kind.DECK_REVEAL}
    assert turns and shares
    # Most moves are stock turns, and every first pass through a stock turns sealed cards.
    with_shares = [t for t in turns if t in shares]
    assert len(with_shares) >= len(turns) // 3
    # Each other member answers one one-way delay later, when the move reaches it.
    for now, seat in with_shares:
        for other in set(range(spec.seats)) - {seat}:
            assert (round(now + 0.01, 9), other) in {(round(t, 9), s) for t, s in shares}


def test_sim_shuffle_a_peer_refuses_the_other_protocol_version() -> None:
    """A shuffle game's envelopes carry version 10 and a commit game's 9; a peer of either
    refuses the other version (docs/shuffle.md §10.6) and changes nothing."""
    identities = [Identity.generate(derive_seed("version", i)) for i in range(2)]
    members = [(ident.peer_id, f"p{i}") for i, ident in enumerate(identities)]
    for deal, other in ((Deal.SHUFFLE, PROTOCOL_VERSION), (Deal.COMMIT, SHARES_VERSION)):
        spec = GameSpec.create(members, Rules(target=None, rounds=1), b"version", deal=deal)
        me, them = (identities[spec.seat_of(i.peer_id)] for i in identities)
        peer = Peer(me, spec, 0.0)
        sent = [decode_message(e.data) for e in peer.start(0.0) if isinstance(e, Send)]
        assert sent and all(m.version == spec.wire_version for m in sent)
        join = encode_body(Join((0, 0), (b"", b"")))
        for version in (other, spec.wire_version):
            wire = sign(them, spec, kind=Kind.JOIN, body=join, seq=1, version=version)
            held = peer.held(1 - peer.seat)
            effects = peer.feed(wire, 0.0)
            refused = [e.reason for e in effects if isinstance(e, Rejected)]
            if version == other:
                assert refused == ["bad_version"] and peer.held(1 - peer.seat) == held
            else:
                assert refused == [] and peer.held(1 - peer.seat) == held + 1


def test_sim_shuffle_partial_shares_wait_for_a_drop_the_final_fold_holds() -> None:
    """Soak seed 101 (``--players 3-5 --deal shuffle``): a member signed partial shares for a
    member only its tentative fold had dropped, and the fold refused them where they landed
    (``bad_share``: a partial for a member not dropped), a violation of an honest member. A
    partial is signed now only for a member the final fold dropped (docs/shuffle.md §6.4)."""
    config = dataclasses.replace(
        SimConfig.soak(101, players=(3, 5), peer=QUICK_TIMERS), deal=Deal.SHUFFLE
    )
    result = run(config)
    assert result.finished and result.violations == []
