"""A vote for silence that never ends (docs/protocol.md §9.2, *a vote for silence that never
ends*; §13, session 26), in the simulator at three, four and five players.

A member that votes out for silence a member the others hear, and never withdraws, held the
finality of that member's later events for good, everywhere: no majority joins its vote, and
it owed no cover of a feed it had voted out. Now a vote for silence excuses no cover of a
member still in by the held votes: where a peer holds that member's events past the vote's
count, every member heard, the voter owes their cover, and a voter that gives none for
``phase_timeout`` is voted out *withheld* by the others (the stall rule of §9.2).

What must not happen: an honest voter dropped by it. Its vote was signed because it heard
nothing of the member for ``drop_after`` (here a link from the member failing while the member
signed nothing: :class:`LateVote` signs that vote at a chosen time, and the voter's core is
otherwise honest). Every peer that holds the member's later events announces them to it, it
fetches them (§6.3), hears the member by them (§9.1) and withdraws: within a round trip or
two, whether the link from the member fails for less than the liveness timers or for longer
than them all, either way or both ways.
"""

from __future__ import annotations

import dataclasses

import pytest
from peer_helpers import signed_votes

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.rules import Rules
from p2p_nertz.sim.collusion import (
    FreezeBreaker,
    LateVote,
    Withholder,
    breaker_marks,
    simulate,
)
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, SimConfig

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

PLAYERS = (3, 4, 5)
#: The voter and the member it votes out.
VOTER, TARGET = 1, 0
#: When the link fails (simulated seconds; the round is in play until about 9 s at five
#: players, 15 s at three) and when the voter's timer fires.
START = 2.0
VOTE_AT = START + 0.5
#: How long the link fails: shorter than ``drop_after`` (3 s), and longer than ``drop_after``
#: and ``phase_timeout`` (6 s) together.
SHORT, LONG = 2.0, 12.0


def _config(players: int, faults: Faults | None = None) -> SimConfig:
    return SimConfig(
        players=players,
        seed=0,
        rules=Rules(target=None, rounds=1),
        faults=dataclasses.replace(
            faults or Faults(), delay=0.005, jitter=0.003, reorder=0.05, loss=0.02, duplicate=0.02
        ),
        peer=QUICK_TIMERS,
        max_time=120.0,
        record_effects=True,
    )


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("breaks", [False, True], ids=["keeps-its-freeze", "breaks-its-freeze"])
def test_a_voter_that_never_withdraws_is_voted_out_and_the_game_ends(
    players: int, breaks: bool
) -> None:
    cheat = FreezeBreaker(VOTER, TARGET, VOTE_AT, breaks=breaks)
    config = _config(players, Faults(deck_cheats=breaker_marks([cheat])))
    result = simulate(config, [cheat])
    assert result.finished
    assert result.violations == []
    for peer in result.peers:
        assert peer is not None
        assert VOTER in peer.final.dropped and TARGET not in peer.final.dropped
    report = result.audit
    assert report is not None
    assert {d.seat for d in report.drops} == {VOTER}
    findings = (*report.errors, *report.violations)
    assert {f.seat for f in findings if f.seat is not None and f.kind.accuses} <= {VOTER}
    # A majority of the others voted the voter out for its cover, ``phase_timeout`` after its
    # vote at the soonest; nobody else voted out the member it voted on.
    votes = signed_votes(result)
    withheld = [(t, seat) for t, seat, on, why in votes if why is DropReason.WITHHELD]
    assert len({seat for _, seat in withheld}) >= players // 2 + 1
    assert all(t >= VOTE_AT + QUICK_TIMERS.phase_timeout for t, _ in withheld)
    assert all(on == VOTER for _, _, on, why in votes if why is DropReason.WITHHELD)
    assert not any(on == TARGET for _, seat, on, _ in votes if seat != VOTER)


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("length", [SHORT, LONG], ids=["shorter", "longer"])
@pytest.mark.parametrize("way", ["from-the-member", "to-the-member", "both-ways"])
def test_an_honest_voter_behind_one_failed_link_withdraws_and_stays_in(
    players: int, length: float, way: str
) -> None:
    # The member that does not hear the other over the link votes it out for silence.
    voter, target = (TARGET, VOTER) if way == "to-the-member" else (VOTER, TARGET)
    links = [Withholder(target, voter, START, START + length)]  # (target's sends to voter lost)
    if way == "both-ways":
        links.append(Withholder(voter, target, START, START + length))
    result = simulate(_config(players), [*links, LateVote(voter, target, VOTE_AT)], links=True)
    assert result.finished
    assert result.violations == []
    for peer in result.peers:
        assert peer is not None and peer.final.dropped == {}
    votes = signed_votes(result)
    assert not any(v[3] is DropReason.WITHHELD for v in votes)
    # The late vote stood, and was withdrawn by its voter; with the link down for longer than
    # the timers, before the link came back: the member was heard by its relayed events.
    mine = [(t, why) for t, seat, on, why in votes if seat == voter and on == target]
    assert mine[0][1] is DropReason.SILENT and mine[0][0] >= VOTE_AT
    withdrawn = [t for t, why in mine if why is DropReason.WITHDRAW]
    assert withdrawn and withdrawn[0] > mine[0][0]
    if length == LONG:
        assert withdrawn[0] < START + length
