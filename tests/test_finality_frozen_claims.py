"""What a peer waits for before it excludes a member the held votes drop: a voter's word on
the member's feed is taken no further than its vote counts, where the peer holds the voter's
feed up to the last head it announced (docs/protocol.md §9.2, *the freeze, enforced*;
``finality.frozen_claims``, ``Finality._said``, ``roster.freezes``).

Three members; seat 1 is dropped at its event 3 by the votes of seats 0 and 2 (each counting
3). Seat 0 then says it holds 9 of seat 1's feed (events nobody gives), and, as a check on
what the rule leaves alone, seat 2 says 9 too in the cases where it has not voted.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.finality import Finality, frozen_claims, unannounced
from p2p_nertz.protocol.roster import Roster, freezes

_OUT = 1


def _vote(target: int = _OUT, last: int = 3, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop((0, 0, 0), target, last, reason)


def _finality(voters: dict[int, list[Drop]], held: list[int]) -> tuple[Finality, Any]:
    """A view's finality (a watcher's: no term is its own) holding ``held[q]`` events of
    each feed, with seat 0 and seat 2 announcing 9 of seat 1's feed and
    their own feeds up to 5, and a fold whose roster counted ``voters`` (seat -> its drop
    events on seat 1, in order)."""
    feeds: list[list[Any]] = [[SimpleNamespace(lamport=t, id=b"") for t in range(h)] for h in held]
    finality = Finality(-1, feeds)
    roster = Roster(3)
    seq = 10
    for voter, bodies in voters.items():
        for body in bodies:
            seq += 1
            roster.vote(voter, seq, body, seq)
    for r in (0, 2):
        finality.announced[r] = (50, 5)
        claimed = list(finality.claimed[r])
        claimed[_OUT] = 9
        finality.claimed[r] = tuple(claimed)
    return finality, SimpleNamespace(roster=roster, dropped={_OUT: 3})


def test_finality_said_takes_a_voter_no_further_than_its_vote() -> None:
    """Seat 0 voted seat 1 out counting 3: its 9 is taken as 3, and the drop waits for
    nothing past the cut; seat 2, which did not vote, is taken at its word."""
    finality, tentative = _finality({0: [_vote()]}, [5, 3, 5])
    said = finality._said(tentative)
    assert said[0][_OUT] == 3 and said[2][_OUT] == 9
    feeds = [range(5), range(3), range(5)]
    assert unannounced({_OUT: 3}, feeds, said, out={_OUT}) == {}  # (seat 2's word)
    both, tentative = _finality({0: [_vote()], 2: [_vote()]}, [5, 3, 5])
    said = both._said(tentative)
    assert said[0][_OUT] == said[2][_OUT] == 3
    assert unannounced({_OUT: 3}, feeds, said, out={_OUT}) == {_OUT: 3}


def test_finality_said_takes_a_voter_at_its_word_where_its_stance_is_not_known() -> None:
    """Seat 0 announced a head of its own feed (5) past what is held of it (4): its events
    not held may withdraw the vote, after which it announces more as an honest member does.
    A withdrawal held, or a vote of another member's, leaves its word as said too."""
    finality, tentative = _finality({0: [_vote()]}, [4, 3, 5])
    assert finality._said(tentative)[0][_OUT] == 9
    finality, tentative = _finality(
        {0: [_vote(), _vote(last=0, reason=DropReason.WITHDRAW)]}, [5, 3, 5]
    )
    assert finality._said(tentative)[0][_OUT] == 9
    finality, tentative = _finality({0: [_vote(target=2)]}, [5, 3, 5])
    assert finality._said(tentative)[0][_OUT] == 9


def test_freezes_reads_each_voters_last_stance() -> None:
    """A withdrawal ends a voter's freeze, a new vote starts one at its own count; a vote on
    proof freezes as one for silence does."""
    roster = Roster(3)
    roster.vote(0, 11, _vote(last=3), 11)
    roster.vote(2, 12, _vote(last=4, reason=DropReason.EQUIVOCATION), 12)
    assert freezes(roster, _OUT) == {0: 3, 2: 4}
    roster.vote(0, 13, _vote(last=0, reason=DropReason.WITHDRAW), 13)
    assert freezes(roster, _OUT) == {2: 4}
    roster.vote(0, 14, _vote(last=6), 14)
    assert freezes(roster, _OUT) == {0: 6, 2: 4}
    assert frozen_claims([(0, 9, 0), (0, 0, 0), (0, 9, 0)], {_OUT: {0: 6, 2: 4}}) == [
        (0, 6, 0),
        (0, 0, 0),
        (0, 4, 0),
    ]
