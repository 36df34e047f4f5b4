"""The third test of ``unjoined`` (docs/protocol.md §9.2, *a vote withheld that never ends*)
beside a drop: a vote's frontier asks the target's signed word for no more of a member the
held fold drops than its cut (session 40; ``--two-liars --back readmit`` seed 179, §13).

An event never names a member's events past the cut its author's final fold dropped it at
(``membership._announced``): a vote whose voter's fold kept the member in named them, and the
target, whose fold dropped it, could never say as much, so this peer joined the vote for good
and never voted the voter out. The rule's one home is ``roster.named_within_cuts``; these are
unit tests of ``unjoined`` over it, with real signed events, at 2 to 5 members.

Seats: the voter 0, the target 1, the member dropped 2 (3 and 4 are bystanders).
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import ID_PREFIX, Drop, DropReason, Leave, encode_body, kind_of
from p2p_nertz.protocol.envelope import Message, decode_message, encode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.roster import Roster, named_within_cuts
from p2p_nertz.protocol.unjoined import unjoined

VOTER, TARGET, CUT_MEMBER = 0, 1, 2
COUNT = 3  # the vote's count of the target's feed (the target holds 5 events here)
CUT = 6  # the cut at which the held roster drops CUT_MEMBER
GAME = bytes(32)
IDS = [Identity.generate(bytes([40 + i]) * 32) for i in range(5)]


def _feeds(players: int, said: tuple[int, ...]) -> list[list[Message]]:
    """Feeds of ``players`` members: the target's five events (Lamport 10, 20, ...), its last
    one signed with frontier ``said``; the others' empty (``unjoined`` reads their number)."""
    feeds: list[list[Message]] = [[] for _ in range(players)]
    prev = None
    for seq in range(1, 6):
        body = Leave(frontier=said)
        body = dataclasses.replace(
            body, frontier_ids=tuple(bytes(ID_PREFIX) if h else b"" for h in said)
        )
        wire = encode_message(
            IDS[TARGET],
            game_id=GAME,
            seq=seq,
            prev=None if prev is None else prev.id,
            lamport=10 * seq,
            kind=kind_of(body),
            body=encode_body(body),
        )
        prev = decode_message(wire, game_id=GAME)
        feeds[TARGET].append(prev)
    return feeds


def _vote(frontier: tuple[int, ...]) -> Drop:
    return Drop(frontier=frontier, seat=TARGET, last_seq=COUNT, reason=DropReason.WITHHELD)


def _frontier(players: int, **named: int) -> tuple[int, ...]:
    """A frontier naming 8 of every feed but the target's (5), except where ``named`` says
    (``cut_member=...``, ``voter=...``)."""
    seats = {"voter": VOTER, "cut_member": CUT_MEMBER}
    out = [8] * players
    out[TARGET] = 5
    for name, held in named.items():
        out[seats[name]] = held
    return tuple(out)


def _unjoined(players: int, vote: Drop, said: tuple[int, ...], dropped: dict[int, int]) -> bool:
    roster = Roster(players)
    roster.dropped.update(dropped)
    return unjoined(TARGET, vote, roster, _feeds(players, said), stable=1000)


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("voted", [CUT + 5, CUT + 1, CUT, CUT - 2])
def test_a_votes_frontier_past_a_cut_asks_the_target_only_to_the_cut(
    players: int, voted: int
) -> None:
    # The target's fold dropped seat 2 at the cut, as the held one does: its events name
    # seat 2's feed to the cut and no further. The vote's frontier names it past the cut
    # (seed 179: 38 against 22), at it, or below it: the target's word meets it each time,
    # and the voter owes the cover (unjoined). Before session 40 the first two joined.
    said = _frontier(players, cut_member=CUT)
    vote = _vote(_frontier(players, cut_member=voted))
    assert _unjoined(players, vote, said, {CUT_MEMBER: CUT})


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("voted", [CUT + 5, CUT])
def test_a_target_that_holds_less_than_the_cut_still_falls_short(players: int, voted: int) -> None:
    # Capped at the cut, the vote still asks for the cut: a target whose word names less of
    # seat 2 than that has not said it holds what the voter held, and the peer joins.
    said = _frontier(players, cut_member=CUT - 1)
    vote = _vote(_frontier(players, cut_member=voted))
    assert not _unjoined(players, vote, said, {CUT_MEMBER: CUT})


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_drop_the_held_fold_has_not_made_caps_nothing(players: int) -> None:
    # The target's fold dropped seat 2 (its word stops at the cut), ours has not (yet): the
    # vote is read whole, and the peer joins until its own fold drops seat 2. The cut is
    # ours to apply, never guessed from the target's word.
    said = _frontier(players, cut_member=CUT)
    vote = _vote(_frontier(players, cut_member=CUT + 5))
    assert not _unjoined(players, vote, said, {})
    assert _unjoined(players, vote, said, {CUT_MEMBER: CUT})  # (the drop made: it unjoins)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_voter_whose_fold_dropped_the_member_when_the_target_kept_it(players: int) -> None:
    # The other way round: the voter's fold dropped seat 2 (its vote names the cut), the
    # target's kept it in and names its feed past the cut. Held roster dropping seat 2 or
    # not, the target's word meets the vote.
    said = _frontier(players, cut_member=CUT + 5)
    vote = _vote(_frontier(players, cut_member=CUT))
    assert _unjoined(players, vote, said, {CUT_MEMBER: CUT})
    assert _unjoined(players, vote, said, {})


@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_cut_caps_only_its_own_members_feed(players: int) -> None:
    # Seat 2 dropped and read to its cut; the voter's own feed, not dropped, is read whole:
    # a target that names less of it than the vote does falls short, the cut or no cut.
    said = _frontier(players, cut_member=CUT, voter=7)
    vote = _vote(_frontier(players, cut_member=CUT + 5, voter=8))
    assert not _unjoined(players, vote, said, {CUT_MEMBER: CUT})
    said = _frontier(players, cut_member=CUT, voter=8)
    assert _unjoined(players, vote, said, {CUT_MEMBER: CUT})


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_without_a_drop_the_vote_is_read_whole(players: int) -> None:
    # No member dropped (the only case at two members: the third test reads the voter's
    # feed): the target's word meets the vote at or past it, and falls short below it.
    vote = _vote(_frontier(players))
    assert _unjoined(players, vote, _frontier(players), {})
    assert _unjoined(players, vote, _frontier(players, voter=9), {})
    assert not _unjoined(players, vote, _frontier(players, voter=7), {})


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_target_dropped_itself_is_never_unjoined(players: int) -> None:
    # (The target's own feed is never read against the vote; and a target the held fold
    # dropped owes nothing: whatever the frontiers say.)
    vote = _vote(_frontier(players))
    assert not _unjoined(players, vote, _frontier(players, voter=9), {TARGET: COUNT})


def test_named_within_cuts_caps_every_member_dropped_but_the_author() -> None:
    # The one home of the rule: what an event of seat 1 holding (9, 9, 9, 9) can name where
    # seats 1 and 3 are dropped at 4 and 2, and seat 2 not at all: its own feed whole.
    assert named_within_cuts((9, 9, 9, 9), {1: 4, 3: 2}, 1) == [9, 9, 9, 2]
    assert named_within_cuts((9, 9, 9, 9), {1: 4, 3: 2}, 0) == [9, 4, 9, 2]
    assert named_within_cuts((1, 9, 9, 0), {1: 4, 3: 2}, 0) == [1, 4, 9, 0]  # (held less)
