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

The pinned soak seed 2086 no longer plays the class since a process restored from its log
waits for a member's word before it signs (§9.6, session 31), and no grid case on a clean
network does (the voters, as close as their timers, hold each other's votes before they hear
seat 1 again). So the game is built: :class:`~p2p_nertz.sim.schedules.LoneWithdrawals` holds
each voter's vote on seat 1 away from the other voters until that one has withdrawn its own,
on any seed. On the peers and in the audit, a second rule reaches the same drops there (the
cuts of events no other member announced holding, ``Folds._cut_unheld``): the game is played
with it too and with it taken out (``no_imposed_cuts``), so that each rule is checked alone.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, Freeze, Partition, SimConfig, SimResult, run
from p2p_nertz.sim.probes import no_imposed_cuts
from p2p_nertz.sim.schedules import LoneWithdrawals


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


#: Soak seed 2086's game, built: 5 players, seat 0 asleep from 5 s for 7.4 s, seat 1 cut off
#: with it from 7.2 s for 3.2 s (the others' silence timers on seat 1 fire just before it
#: ends), on a clean network.
BUILT = Split(0, 5, 1, 5.0, 7.4, 2.2, 3.2, True)


def _votes_on(result: SimResult, author: int, target: int) -> set[int]:
    """The seqs of ``author``'s votes (not withdrawals) against ``target`` that some peer
    holds."""
    seqs: set[int] = set()
    for peer in result.peers:
        for event in peer.events(author) if peer is not None else ():
            body = parse_body(event.kind, event.body, len(result.peers))
            if not isinstance(body, Drop) or body.seat != target:
                continue
            if body.reason is not DropReason.WITHDRAW:
                seqs.add(event.seq)
    return seqs


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("rules", ["every-rule", "the-roster-alone"])
def test_a_drop_stands_as_the_votes_decide_it_without_the_members_vote(
    seed: int, rules: str
) -> None:
    """Seat 1, cut off, votes the sleeping seat 0 out with an event past the cut at which
    seats 2, 3 and 4 then vote seat 1 out; each of them withdraws on hearing seat 1 again,
    before it holds the others' votes. Holding the three votes, they make seat 1's drop final
    at that cut without its vote (``finality.settle``: a member the held votes drop no longer
    holds finality back). Folded with that vote, seat 0's drop was decided with it, so seat
    1's cut could not fall below it (``Roster.vote_floor``, soak seed 53) and seat 1 was never
    dropped there: seats 0 and 1 (and the audit of every log) counted seat 1's later claims,
    the others did not, and the game never ended (soak seed 2086, session 21). A drop is now
    what the votes decide without the member's events past its cut (``Roster._decided``,
    §9.2): seat 1 is out at its cut in every fold, its vote past it in none. With the roster
    alone (no cut imposed over a fold: ``no_imposed_cuts``), the same."""
    schedule = LoneWithdrawals(1, frozenset({2, 3, 4}))
    alone: AbstractContextManager[None] = (
        no_imposed_cuts() if rules == "the-roster-alone" else nullcontext()
    )
    with alone:
        result = run(dataclasses.replace(BUILT, seed=seed).config(), schedule)
    assert schedule.withdrawn == {2, 3, 4}  # (each withdrew holding its own vote alone)
    assert result.violations == []  # (run() checked every invariant, the audit with it)
    held = {tuple(sorted(p.final.dropped.items())) for p in result.peers if p is not None}
    assert len(held) == 1
    dropped = dict(held.pop())
    assert set(dropped) == {0, 1}
    # The game of the class: seat 1's vote on seat 0 is past the cut it is dropped at.
    assert any(seq > dropped[1] for seq in _votes_on(result, 1, 0))
    assert {_votes_on(result, voter, 1) != set() for voter in (2, 3, 4)} == {True}
    assert result.audit is not None  # (the audit of every log run() made)
    assert dict(result.audit.dropped) == dropped
