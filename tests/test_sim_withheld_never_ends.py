"""A vote *withheld* that never ends (docs/protocol.md §9.2, *a vote withheld that never
ends*; §13, *A member that never passes*, stall (2)), in the simulator at three and four
players.

A member whose fold parted from the table's (a liar whose own table, with its lied-about
cards, ended play in a Nerts call the table never saw) waits in its own ``reveal`` and votes
the others out *withheld*; the vote freezes its announcements of their feeds, so none of
their later events could be final anywhere, and no majority ever joins it: every honest
peer stopped at one stable time for good. Now a vote *withheld* excuses its voter's cover
only where the peer joins it (``protocol/unjoined.py``): otherwise the voter owes the cover
of the target's events held there, and the others vote it out *withheld* (the stall rule).

What must not happen: an honest voter voted out by it. An honest voter's vote waits for what
its target owes it, and the others, folding the same events, wait for it too or hold it; the
member slow to reveal below is waited for by an honest voter whose vote stands while the
reveal is late, shorter and longer than the timers, and nobody votes that voter out.
"""

from __future__ import annotations

import dataclasses

import pytest
import test_sim_freeze_beats as freeze_beats
from peer_helpers import signed_votes

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.effects import Effect, Send
from p2p_nertz.protocol.envelope import Kind, decode_unverified
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim.collusion import (
    FreezeBreaker,
    LateVote,
    RevealWithholder,
    breaker_marks,
    simulate,
)
from p2p_nertz.sim.liar_games import LiarRun
from p2p_nertz.sim.liar_games import game as liar_game
from p2p_nertz.sim.liar_games import simulate as liar_simulate
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, SimConfig, SimResult

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: The liar (or the slow member) and the member it votes out (or that waits for it).
LIAR, HONEST = 1, 0
WITHHELD = DropReason.WITHHELD


def _config(players: int, faults: Faults) -> SimConfig:
    return SimConfig(
        players=players,
        seed=0,
        rules=Rules(target=None, rounds=1),
        faults=dataclasses.replace(
            faults, delay=0.005, jitter=0.003, reorder=0.05, loss=0.02, duplicate=0.02
        ),
        peer=QUICK_TIMERS,
        max_time=120.0,
        record_effects=True,
    )


def _honest(result: SimResult, cheaters: set[int]) -> list[int]:
    return [s for s, p in enumerate(result.peers) if p is not None and s not in cheaters]


def _liar_out_alone(result: SimResult, liar: int) -> None:
    """The game ended, every honest peer dropped the liar and nobody else, and the audit
    accuses nobody honest."""
    assert result.finished
    assert result.violations == []
    for seat in _honest(result, {liar}):
        peer = result.peers[seat]
        assert peer is not None
        assert set(peer.final.dropped) == {liar}
    report = result.audit
    assert report is not None
    findings = (*report.errors, *report.violations)
    assert {f.seat for f in findings if f.seat is not None and f.kind.accuses} <= {liar}


def _withheld_on(peer: Peer, target: int) -> set[int]:
    """The members whose vote *withheld* on ``target`` ``peer`` holds (a liar game records no
    effects: read from the held events)."""
    seats = peer.spec.seats
    out = set()
    for seat in range(seats):
        for m in peer.events(seat):
            vote = parse_body(m.kind, m.body, seats) if m.kind is Kind.DROP else None
            if isinstance(vote, Drop) and (vote.seat, vote.reason) == (target, WITHHELD):
                out.add(seat)
    return out


def _liar_run(seed: int) -> LiarRun:
    config, liars = liar_game(seed)
    return liar_simulate(config, liars)


def test_soak_seed_1125_a_liar_in_its_own_reveal_is_voted_out_and_the_game_ends() -> None:
    """``scripts/soak.py --liars`` seed 1125: four players, seat 1 lies about a move's cards;
    its own fold ends play in a Nerts call the table counted false, and from its ``reveal`` it
    votes seats 0, 2 and 3 out *withheld* at 599-601 (counting 81, 88, 88). On main every
    honest peer stopped at stable 603 for good (the pair term liar/seat 3, capped at its
    vote), their tentative folds at seat 2's valid Nerts (621)."""
    run = _liar_run(1125)
    result = run.result
    assert run.held_open == ()
    _liar_out_alone(result, LIAR)
    # The honest members voted it out *withheld*, each on what it owed them (its cover).
    peer = result.peers[HONEST]
    assert peer is not None
    assert _withheld_on(peer, LIAR) == {0, 2, 3}


def test_soak_seed_1489_the_liars_votes_hold_no_honest_event_back() -> None:
    """``--liars`` seed 1489: the same lie and the same votes (seat 1 in its own ``reveal``
    voting seats 0, 2, 3 out *withheld*), but the honest members, stuck, sign nothing past
    the votes' counts: nothing is held back, and the liar holds play open by never passing
    (§13, stall (1): a pass on its behalf ends it). Once the others sign past the counts (such
    a pass), the votes would freeze those events for good but for this rule: with the pass on
    a member's behalf and without this rule, the honest peers stop at stable 849; with both, the
    game ends (docs/protocol.md §13)."""
    run = _liar_run(1489)
    result = run.result
    assert result.violations == []
    assert result.finished and run.held_open == ()  # (both rules: see the docstring)
    for seat in _honest(result, {LIAR}):
        peer = result.peers[seat]
        assert peer is not None and HONEST not in peer.final.dropped
        for q in _honest(result, {LIAR}):
            events = peer.events(q)
            assert events[-1].lamport <= peer.stable  # (every honest event it holds is final)


@pytest.mark.parametrize(
    ("players", "breaks"), [(3, False), (4, False), (3, True)], ids=["3", "4", "3-breaks"]
)
def test_a_liar_whose_vote_withheld_nobody_joins_is_voted_out(players: int, breaks: bool) -> None:
    # The voter's side: seat 1 votes seat 0 out *withheld* in play (no phase waits for seat 0,
    # and it owes seat 1 nothing), never withdraws, keeping its freeze or breaking it. On main
    # seat 0's events past the count are never final and the game never ends.
    cheat = FreezeBreaker(LIAR, HONEST, 2.5, breaks=breaks, reason=DropReason.WITHHELD)
    result = simulate(_config(players, Faults(deck_cheats=breaker_marks([cheat]))), [cheat])
    _liar_out_alone(result, LIAR)
    votes = signed_votes(result)
    withheld = [(t, seat, on) for t, seat, on, why in votes if why is DropReason.WITHHELD]
    assert {seat for _, seat, on in withheld if on == LIAR} == set(_honest(result, {LIAR}))
    # ``phase_timeout`` after the vote at the soonest: the stall rule's wait, on the debt.
    assert all(t >= 2.5 + QUICK_TIMERS.phase_timeout for t, seat, _ in withheld if seat != LIAR)
    assert not any(on == HONEST for _, seat, on in withheld if seat != LIAR)


@pytest.mark.parametrize("players", [3, 4])
def test_the_honest_majority_in_reveal_drops_a_liar_that_votes_them_out(players: int) -> None:
    # The other side: the honest majority in ``reveal`` waits for the liar's reveal, which
    # never comes, while the liar votes every one of them out *withheld* as the phase opens.
    cheat = RevealWithholder(LIAR)
    result = simulate(_config(players, Faults(deck_cheats=breaker_marks([cheat]))), [cheat])
    _liar_out_alone(result, LIAR)
    votes = signed_votes(result)
    assert {on for _, seat, on, why in votes if seat == LIAR and why is DropReason.WITHHELD} == set(
        _honest(result, {LIAR})
    )
    assert not any(on != LIAR for _, seat, on, _ in votes if seat != LIAR)


@pytest.mark.parametrize("late", [2.0, 12.0], ids=["shorter", "longer"])
@pytest.mark.parametrize("players", [3, 4])
def test_an_honest_voter_waiting_on_a_slow_reveal_is_not_voted_out(
    players: int, late: float
) -> None:
    # Seat 1 reveals ``late`` seconds after its final fold enters ``reveal`` (shorter than
    # ``phase_timeout``, 6 s; longer than it and ``drop_after`` together); seat 0 votes it out
    # *withheld* as the phase opens, as its phase timer would had its wait begun earlier. Its
    # vote stands, freezing seat 1's reveal, while the others hold the reveal (shorter) or
    # wait for it themselves: they wait for the same event, and nobody votes seat 0 out.
    slow = RevealWithholder(LIAR, late=late, votes=False)
    early = LateVote(HONEST, LIAR, 0.0, phase=Phase.REVEAL)
    result = simulate(_config(players, Faults(deck_cheats=breaker_marks([slow]))), [slow, early])
    assert result.finished
    assert result.violations == []
    votes = signed_votes(result)
    mine = [(t, why) for t, seat, on, why in votes if seat == HONEST and on == LIAR]
    assert mine[0][1] is DropReason.WITHHELD
    assert not any(on != LIAR for _, _, on, _ in votes)  # (nobody votes the voter out)
    for seat in _honest(result, {LIAR}):
        peer = result.peers[seat]
        assert peer is not None
        # Shorter: the reveal came, the vote was withdrawn, nobody dropped. Longer: the
        # others joined after ``phase_timeout``, and the slow member alone is out.
        assert set(peer.final.dropped) == (set() if late < QUICK_TIMERS.phase_timeout else {LIAR})
    if late < QUICK_TIMERS.phase_timeout:
        assert [why for _, why in mine] == [DropReason.WITHHELD, DropReason.WITHDRAW]


@pytest.mark.slow
def test_a_lost_relay_of_the_own_head_debt_gets_no_honest_voter_voted_out() -> None:
    """The own-head variant (docs/protocol.md §9.2; ``tests/test_sim_freeze_beats.py``, four
    players, seed 5): the liar announces to the dealer alone a head of its own feed it gives
    nobody; the dealer votes it out *withheld* and relays the beat that made the debt. The
    first relay is lost on the dealer's link. Sent once, the others never owe-tracked the
    head, held the liar's later events past the dealer's count, whose frontiers said all the
    dealer held, and voted the honest dealer out (dropped at 75); on main the lone vote froze
    the table in play. The dealer relays the beat again at each stall scan while its vote
    stands (``Author.relay_debts``): the others owe-track the head, and the liar is out."""
    sim, _, lies = freeze_beats._shuffle_game(4, 5)
    liar = sim.peers[freeze_beats.LIAR]
    dealer = sim.peers[freeze_beats.DEALER]
    assert liar is not None and dealer is not None
    to = sim.identities[freeze_beats.DEALER].peer_id
    freeze_beats._break_freeze(liar, to, freeze_beats.CRASHED, lies, own_ahead=1000)
    flush, lost = dealer._flush, list[Effect]()

    def lossy(now: float) -> list[Effect]:  # (the dealer's first relay of the liar's beat)
        effects = flush(now)
        for effect in effects:
            if isinstance(effect, Send) and not lost and _relayed(dealer, effect.data):
                lost.append(effect)
        return [e for e in effects if e not in lost]

    dealer._flush = lossy
    result = sim.run()
    assert lost
    assert result.finished
    for peer in result.peers:
        if peer is not None and peer.seat != freeze_beats.LIAR:
            assert set(peer.final.dropped) == {freeze_beats.CRASHED, freeze_beats.LIAR}


def _relayed(dealer: Peer, data: bytes) -> bool:
    """Whether ``data``, sent by ``dealer``, is a beat of the liar's (a relayed debt)."""
    spec = dealer.spec
    message = decode_unverified(data, game_id=spec.game_id, roster=spec.peer_ids)
    return message.kind is Kind.BEAT and spec.seat_of(message.author) == freeze_beats.LIAR
