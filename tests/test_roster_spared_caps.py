"""A member's own votes never cap the votes against it (docs/protocol.md §9.2, *Caps*;
``roster.spared``, session 37).

A vote caps because its voter froze its announcements of the member's feed: while it stands
and its voter is in, nothing the member signed past its count can be final anywhere. A vote
of the member against that voter, signed past that count, becomes final exactly when the
voter is out, and a member dropped caps nothing. Capped by the voter's own vote, it kept the
voter in by that vote alone: the lie fuzzer's readmitted liar (``scripts/soak.py --liars
--two-liars --back readmit`` seed 33) voted both other members out *withheld* and could then
be voted out by no one in a fold of every event at once (the audit, a peer restored from its
log), which folds on from the caps of an earlier pass; the live peers, whose tentative fold
begins each time with no caps, dropped it. Both folds reach one drop now, from any caps they
start with. The other voters' votes cap as before.
"""

from __future__ import annotations

import pytest
from test_roster_readmission_caps import Script, _fold, _settled, _vote

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.folds import Round, cycle_meet
from p2p_nertz.protocol.state import Roster, capped, spared

_W = DropReason.WITHHELD
_NEVER = 1 << 63


def _liar_script(seats: int, liar: int) -> Script:
    """Seed 33's shape at ``seats`` players: ``liar`` votes every other member out *withheld*
    (at its seqs 80, 81, ...), counting each one's feed to 140 and more; each of them then
    votes the liar out counting 80 + the number of its votes (at its seq 150 and more, past
    the liar's count of its feed)."""
    others = [q for q in range(seats) if q != liar]
    script: Script = [("vote", liar, 80 + i, _vote(q, 140 + q, _W)) for i, q in enumerate(others)]
    script += [("vote", q, 150 + q, _vote(liar, 80 + len(others) - 1, _W)) for q in others]
    return script


@pytest.mark.parametrize("seats", [3, 4, 5])
@pytest.mark.parametrize("liar", [0, 1])
def test_roster_spared_a_member_voting_every_other_out_is_dropped_by_their_votes(
    seats: int, liar: int
) -> None:
    script = _liar_script(seats, liar)
    cut = 80 + seats - 2
    passes = _settled(seats, script)
    last = passes[-1]
    assert last.dropped == {liar: cut}
    assert last.standing_caps() == last.vote_caps  # (a fixed point)
    # From the caps the liar's votes give while it is in (a pass that has not dropped it yet,
    # as the audit's third pass read seed 33): the same drop, not the fold keeping it in.
    standing = Roster(seats)
    for _, voter, seq, body in script[: seats - 1]:
        standing.vote(voter, seq, body)
    caps = standing.standing_caps()
    assert set(caps) == {q for q in range(seats) if q != liar}
    assert _fold(seats, script, caps).dropped == {liar: cut}


def test_roster_spared_at_two_players_nobody_is_dropped_whatever_the_caps() -> None:
    # (Nobody can be dropped from two, DESIGN.md §6: the one vote against each is no majority.)
    script = _liar_script(2, 0)
    for caps in ({}, _fold(2, script[:1], {}).standing_caps()):
        assert _fold(2, script, caps).dropped == {}


def test_roster_spared_the_other_voters_votes_still_cap() -> None:
    """Four players: seats 1 and 3 vote seat 0 out counting 10 and 12; seat 0's votes past 10
    against seat 2 are capped (by both), against seat 1 still capped at 12, by seat 3's vote,
    and against seat 3 at 10, by seat 1's: only the target's own vote is no cap on it."""
    roster = Roster(4)
    roster.vote(1, 5, _vote(0, 10))
    roster.vote(3, 5, _vote(0, 12))
    caps = roster.standing_caps()
    assert caps[0][0] == 10
    assert spared(((1, _vote(0, 10)), (3, _vote(0, 12))), 10) == ((1, 12),)
    assert capped(caps, 0, 11, _vote(2, 3))
    assert not capped(caps, 0, 11, _vote(1, 3))
    assert capped(caps, 0, 13, _vote(1, 3))
    assert capped(caps, 0, 11, _vote(3, 3))
    # (Not a vote: a withdrawal or a leave is never capped; an abandon has its own cap.)
    assert not capped(caps, 0, 30, _vote(1, 0, DropReason.WITHDRAW))


def test_roster_spared_two_votes_at_the_lowest_count_spare_nobody() -> None:
    roster = Roster(3)
    roster.vote(1, 5, _vote(0, 10))
    roster.vote(2, 5, _vote(0, 10))
    caps = roster.standing_caps()
    assert caps[0][3] == ()
    assert capped(caps, 0, 11, _vote(1, 3)) and capped(caps, 0, 11, _vote(2, 3))


def test_roster_spared_a_withdrawn_vote_spares_nothing_more() -> None:
    """The target's vote withdrawn, the member's votes against it are capped by the others'
    as before (the withdrawal lifts the cap, and the spare with it)."""
    roster = Roster(4)
    roster.vote(1, 5, _vote(0, 10))
    roster.vote(3, 5, _vote(0, 12))
    roster.vote(1, 6, _vote(0, 0, DropReason.WITHDRAW))
    caps = roster.standing_caps()
    assert caps[0][:2] == (12, _NEVER) and caps[0][3] == ((3, _NEVER),)
    assert capped(caps, 0, 13, _vote(1, 3))


def test_roster_spared_a_cycles_meet_keeps_each_spare_at_its_lowest() -> None:
    """Where the rounds of a fold go round a cycle, the meet takes every cap any round had at
    its lowest (``folds.cycle_meet``): a target spared in one round (seat 0's votes against
    seat 1 capped at 9, not 5) and not in another (capped at 7 there) is capped at 7; one
    spared in no round of the cycle is capped at the meet's first seq."""
    a: Round = ({}, {}, {0: (5, _NEVER, (), ((1, 9),))})
    b: Round = ({2: 3}, {}, {0: (7, _NEVER, (), ())})
    meet = cycle_meet([a, b], a)
    assert meet == ({}, {}, {0: (5, _NEVER, (), ((1, 7),))})
    caps = meet[2]
    assert not capped(caps, 0, 7, _vote(1, 3)) and capped(caps, 0, 8, _vote(1, 3))
    assert capped(caps, 0, 6, _vote(3, 3))
