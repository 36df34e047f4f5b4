"""Two proven cheaters that never vote, beside a minority of honest members, are dropped by
the honest members' votes alone (docs/protocol.md §9.2, *a member proven to cheat*; session
41).

Two members fork at once (each signs a second version of its next event, a Nerts call, and
sends it to the honest members), and go on playing: the honest members prove both forks and
vote both out on proof. No cheater's vote reaches an honest fold (an honest member takes
none of a member's events past its fork), so each cheater's drop needs the other's vote,
unless the other is one its voters all voted out. Sessions 38 to 40 excepted a member voted
out on proof only by a strict majority of the roster: at three players (one honest member),
at four (two), at five (two, the fifth member dead for good) the honest members are no
majority: the cheaters held each other in the game and the honest members waited in play for
good (the simulator, with no honest majority, asks no end). Since session 39 a vote on proof
counts only with its proof, so a member every voter voted out on proof did fork, and is
excepted whoever voted (``roster._voted_out_by``): both cheaters are dropped and the game
ends, every honest fold and the audit of every log alike, naming the cheaters alone.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.fold_values import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Crash, Equivocation, Faults, SimConfig, run
from p2p_nertz.sim.invariants import forks

# (players, cheaters, a member dead for good from before the forks)
CASES = [
    pytest.param(3, (1, 2), None, id="3-players-one-honest"),
    pytest.param(4, (2, 3), None, id="4-players-two-honest"),
    pytest.param(5, (3, 4), 2, id="5-players-two-honest-one-dead"),
]


@pytest.mark.parametrize(("players", "cheaters", "dead"), CASES)
def test_two_proven_cheaters_are_dropped_by_a_minority_of_honest_votes(
    players: int, cheaters: tuple[int, int], dead: int | None
) -> None:
    others = frozenset(q for q in range(players) if q not in cheaters)
    faults = Faults(
        equivocations=tuple(Equivocation(c, 5.0, others) for c in cheaters),
        crashes=() if dead is None else (Crash(dead, 4.0, None),),
    )
    config = SimConfig(
        players=players,
        seed=1,
        rules=Rules(target=None, rounds=1),
        faults=faults,
        peer=QUICK_TIMERS,
    )
    result = run(config)
    assert forks(result) == set(cheaters)
    assert result.violations == []  # (run() checked every invariant, the audit's too)
    honest = [q for q in sorted(others) if q != dead]
    out = {*cheaters, *(() if dead is None else (dead,))}
    for seat in honest:
        peer = result.peers[seat]
        assert peer is not None
        assert peer.final.dropped.keys() == out, seat
        assert peer.final.phase is Phase.OVER, seat
    assert result.audit is not None
    errors = [f for f in result.audit.violations if f.severity.value == "error"]
    assert {f.seat for f in errors} == set(cheaters)
    assert FindingKind.EQUIVOCATION in {f.kind for f in errors}
