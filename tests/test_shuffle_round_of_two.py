"""A shuffle round of two members that loses one during play (docs/shuffle.md §6.4).

Found by ``scripts/soak.py --deal shuffle --deck-cheats --seed 508 --games 1 --players 3-4
--timers quick``: four seats, round 2 dealt to seats 1 and 3 alone (the others out), seat 1
dropped mid-play. The round ends blocked, as it must (two members deal no VSS shares: nobody
can open a card for the member gone), but the fold went on listing, for seat 3, partial
shares of seat 1's secret owed at every position turned and not opened, and seat 3's duties,
making them, reached ``assert dealing is not None`` in ``Duties._held``: the peer died on an
assertion. A partial share for that member from the network reached the same kind of
assertion in ``DeckRound._key_of``. Now no member holds a VSS share of a member that dealt
none: nothing is owed for it, and such a partial is refused as ``bad_share``.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.deck.proofs import prove_equal
from p2p_nertz.deck.shares import Share, share_context
from p2p_nertz.deck.vss import x25519_secret
from p2p_nertz.deck.wire import DeckShares
from p2p_nertz.protocol.duties import Duties
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase, RefusalCode
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from tests.test_fold_shuffle import ShuffleTable


def _two_dealt_one_gone() -> ShuffleTable:
    """Two members dealt; seat 0 turns its stock (cards sealed until both shares are in) and
    seat 1 shares them; then seat 0 goes out before it shares them: its deck noted gone, as
    ``RoundState.take_out`` notes it. (A round of two loses a member only in a game of more
    seats, some sitting the round out, as in soak seed 508, which no table of two builds by
    hand: a game of two ends when one leaves, and no majority drops one of two.)"""
    t = ShuffleTable(2)
    t.join_all()
    t.deal_all()
    t.share_all()
    t.move(0, "S")
    assert t.owed(0) and t.owed(1)
    t.deck_event(1, t.shares(1, t.owed(1)))
    deck = t.fold.round.deck
    assert deck is not None and deck.drop(0) == [] and deck.gone == {0}
    assert t.refusals() == [] and t.fold.phase is Phase.PLAY
    return t


def test_shuffle_round_of_two_a_member_gone_is_owed_no_partial() -> None:
    t = _two_dealt_one_gone()
    deck = t.fold.round.deck
    assert deck is not None
    sealed = [w for w in deck.turned if w not in deck.opened]
    assert sealed  # (seat 0's own shares of its turn-up never came)
    assert not deck.holds(1, 0) and deck.owed(1) == [] and not deck.can_open
    assert all(deck.partials_owed(w) == [] for w in sealed)


def test_shuffle_round_of_two_its_duties_owe_nothing_for_the_member_gone() -> None:
    """The peer's side: seat 1's duties ask it for no share it cannot make, in an event or a
    ``deck_reveal`` beat."""
    t = _two_dealt_one_gone()
    duties = Duties(
        1,
        t.spec,
        lambda n: b"\x00" * 32,
        lambda n: b"\x00" * 32,
        deck_key=lambda n, attempt: t.keys[1],
        box_secret=lambda: x25519_secret(t.ids[1].to_bytes()),
    )
    assert duties.reveals(t.fold, None) == []
    assert duties.phase_event(t.fold, None) is None


def test_shuffle_round_of_two_a_partial_for_the_member_gone_is_refused_and_changes_nothing() -> (
    None
):
    t = _two_dealt_one_gone()
    deck = t.fold.round.deck
    assert deck is not None and deck.final is not None
    d, p = next(w for w in deck.turned if w not in deck.opened)
    # A "partial" of seat 0's secret by seat 1, from a made-up VSS share (there is none).
    point, proof = prove_equal(12345, deck.final[d][p][0], share_context(t.context, 1, 0, d, p))
    before = (dict(deck.partials), dict(deck.opened), t.fold.phase)
    t.deck_event(1, DeckShares(1, 1, (Share(1, 0, d, p, point, proof),)))
    assert t.refusals() == [RefusalCode.BAD_SHARE]
    deck = t.fold.round.deck
    assert deck is not None and (dict(deck.partials), dict(deck.opened), t.fold.phase) == before


@pytest.mark.slow  # (a four-player, two-round shuffle game: about 4 s of CPU)
@pytest.mark.timeout(300)  # (a hang guard)
def test_shuffle_round_of_two_soak_seed_508_finishes_without_a_violation() -> None:
    config = SimConfig.soak(
        508, players=(3, 4), rounds=0, cheats=True, long=True, peer=QUICK_TIMERS
    )
    config = dataclasses.replace(config, deal=Deal.SHUFFLE)
    cheat = DeckCheat(0, DeckCheatKind.WITHHOLD_ANSWER)  # (scripts/soak.py's deck_cheat(508, 4))
    faults = dataclasses.replace(config.faults, deck_cheats=(cheat,))
    config = dataclasses.replace(config, faults=faults)
    assert config.players == 4
    result = run(config)
    assert result.finished and result.violations == []
    assert all(p is not None and p.final.phase is Phase.OVER for p in result.peers)
    # The audit names the cheat (an answer withheld) and nobody else.
    assert result.audit is not None and {f.seat for f in result.audit.errors} == {0}
    rounds = [(*p.final.past_rounds, p.final.round) for p in result.peers if p is not None]
    # The round the soak reached: two members dealt, one of them dropped during it (blocked).
    assert any(
        rs.deck is not None
        and len(rs.deck.members) == 2
        and rs.deck.gone
        and rs.table is not None
        and rs.table.status.value == "blocked"
        for past in rounds
        for rs in past
    )
