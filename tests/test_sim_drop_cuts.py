"""A drop decided without the member's events past its cut (soak seed 2086's class).

A member cut off by a partition (seat 1) votes a member asleep (seat 0) out; the other side
votes both out, counting seat 1's feed only as far as it held it, and often withdraws the
vote on seat 0 when it wakes. Seat 1's vote is past the cut the others give it, so none of the
others holds it when the drop is made final (``finality.settle``: a member the held votes drop
no longer holds finality back once its feed is held up to the cut). A fold that holds that
vote (seats 0 and 1, the audit of every log) counted it, and it
decided seat 0's drop; ``Roster.vote_floor`` (soak seed 53) then kept seat 1's drop from
coming below it: seat 1 stayed in there and was out everywhere else. The rule now reads the
same data in every view: the drop of a member at a cut is decided as the votes decide it
without its events past the cut (``Roster._decided``, docs/protocol.md §9.2).

Found by a scan over a grid of partitions and sleeps around the liveness timers
(``scripts/scan_drop_cuts.py``); each case failed before that rule. The class needs every vote
against seat 1 withdrawn once it is heard again, after those votes dropped it (a vote that
stands caps seat 1's later votes, §9.2 "Caps", and every fold then agrees): the partition ends
as the others' silence timers on seat 1 fire. Of 160 games of the grid at five players
(seeds 0 to 31, partitions of 2.8 to 3.2 s, ``drop_after`` being 3 s), one did; of 40 with
three or four players, where the others need the sleeper's vote on seat 1 (it does not
withdraw: it holds the others' votes when it signs), none. Those table sizes are built by
hand on the roster (``tests/test_roster_cuts.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, Freeze, Partition, SimConfig, run


@dataclass(frozen=True)
class Split:
    """A game of the class: its seed, size and rounds; seat 0 asleep from ``at`` for
    ``lasting``; a partition ``offset`` after it falls asleep, for ``length``, that cuts seat
    1 off from the others (with the sleeper on seat 1's side if ``together``, else on the
    others')."""

    seed: int
    players: int
    rounds: int
    at: float
    lasting: float
    offset: float
    length: float
    together: bool
    #: the network of soak seed 2086 (delays, reordering, losses, duplicates), else a clean one
    noisy: bool = False

    def config(self) -> SimConfig:
        rest = set(range(2, self.players))
        ours = {0, 1} if self.together else {1}
        theirs = rest if self.together else rest | {0}
        start = self.at + self.offset
        groups = (frozenset(theirs), frozenset(ours))
        faults = dataclasses.replace(
            _NOISY if self.noisy else Faults(),
            freezes=(Freeze(0, self.at, self.lasting),),
            partitions=(Partition(start, start + self.length, groups),),
        )
        return SimConfig(
            players=self.players,
            seed=self.seed,
            rules=Rules(target=None, rounds=self.rounds),
            faults=faults,
            peer=QUICK_TIMERS,
        )


#: Soak seed 2086's network.
_NOISY = Faults(delay=0.018, jitter=0.008, reorder=0.093, loss=0.031, duplicate=0.068)

CASES = [
    # Soak seed 2086's shape at 5 players: the partition ends as the others' silence timers on
    # seat 1 fire (drop_after is 3 s); each of them withdraws its vote on hearing seat 1
    # again, before holding the others'.
    pytest.param(Split(0, 5, 1, 5.0, 7.4, 2.2, 2.9, True, noisy=True), id="5-players-2.9s"),
]


@pytest.mark.parametrize("split", CASES)
def test_a_drop_stands_as_its_votes_decide_it_without_the_members_events_past_the_cut(
    split: Split,
) -> None:
    result = run(split.config())
    # The game of the class: a member dropped somewhere (readmitted since, maybe).
    assert any(p.tentative.drop_at for p in result.peers if p is not None)
    # Every invariant: the game ends (or cannot), the members still in agree, and the
    # audit of every log reaches their state.
    assert result.violations == []  # (run() checked every invariant)
