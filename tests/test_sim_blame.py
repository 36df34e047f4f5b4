"""No false accusation: nobody is voted out for what a silent member holds back (issue 13).

A member that keeps talking while finality waits on it is voted out for withholding
(docs/protocol.md §9.2). But what it owes may itself wait on a member that is silent to
everyone, or only to it (a partition, a crash, a peer asleep): blaming it then made both
sides of a healed partition vote each other out, votes that stand, and no majority ever
formed. A wait counts against a member only from when every member still in is heard.
These games try partitions and sleeps of every length around the timers, at every table
size down to three, and check that every peer finishes on one state with no vote for
withholding against an honest member.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, Partition, SimConfig, SimResult, run

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)
TWO_ROUNDS = Rules(target=None, rounds=2)
#: Shorter than suspect_after, between the timers, past drop_after, past phase_timeout too.
LENGTHS = [0.5, 2.0, 5.0, 14.0]


def _votes(result: SimResult, reason: DropReason) -> list[tuple[int, int]]:
    """Every (voter, target) of a vote for ``reason`` in the logs."""
    seats = {pid: seat for seat, pid in enumerate(result.spec.peer_ids)}
    found: dict[bytes, tuple[int, int]] = {}
    for log in result.logs:
        for wire in log:
            message = decode_message(wire, game_id=result.spec.game_id, roster=seats)
            if message.kind is Kind.DROP and message.id not in found:
                body = parse_body(message.kind, message.body, len(seats))
                if body.reason is reason:
                    found[message.id] = (seats[message.author], body.seat)
    return sorted(found.values())


@pytest.mark.parametrize(
    ("players", "side"),
    [(3, {0}), (4, {0, 1}), (5, {0, 1})],
    ids=["3:1|2", "4:2|2", "5:2|3"],
)
@pytest.mark.parametrize("length", LENGTHS)
def test_blame_a_partition_of_any_length_accuses_nobody_of_withholding(
    players: int, side: set[int], length: float
) -> None:
    groups = (frozenset(side), frozenset(set(range(players)) - side))
    faults = Faults(partitions=(Partition(5.0, 5.0 + length, groups),))
    result = run(SimConfig(players=players, rules=TWO_ROUNDS, seed=11, faults=faults, peer=QUICK))
    assert result.violations == []
    assert _votes(result, DropReason.WITHHELD) == []
    finals = [p.final for p in result.peers if p is not None]
    if len(side) * 2 == players or length < QUICK.drop_after:
        # No side had a majority, or nobody was silent long enough: nobody left the game.
        assert all(not f.dropped for f in finals)


@pytest.mark.parametrize("seed", [229, 1322, 2070, 2431])
def test_blame_the_soak_seeds_that_froze_on_mutual_withheld_votes(seed: int) -> None:
    """Each froze for good before the fix (with the rules as they were before issue 15's
    changes to the everyone-stuck rotation and stale passes, which play these seeds
    differently; they stay as seeded games with long faults): after a long partition (with a member
    asleep and readmitted on one side only, or a crash), the two sides' finals stood at
    different phases; each side voted the other's members out for withholding, the votes
    stood, and no strict majority ever agreed."""
    result = run(SimConfig.soak(seed))
    assert result.violations == []
    accused = {target for _, target in _votes(result, DropReason.WITHHELD)}
    assert accused <= result.config.faults.cheaters
