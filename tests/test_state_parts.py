"""The game fold's parts (protocol/state.py over rounds.py, roster.py, abandonment.py): the
names other code imports from ``protocol.state``, the independence of a copy, and the roster's
answers on their own (a vote that drops, a withdrawal, a rejoin)."""

from __future__ import annotations

import pytest

from p2p_nertz.protocol import abandonment, fold_values, roster, rounds, state
from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState, Phase, RefusalCode, Roster
from p2p_nertz.rules import Rules


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"parts")


def _vote(target: int, last_seq: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(0, 0, 0), seat=target, last_seq=last_seq, reason=reason)


def test_state_parts_every_name_is_importable_from_state_as_the_same_object() -> None:
    for module in (fold_values, rounds, roster, abandonment):
        for name in module.__all__:
            if name == "Refuse":  # (the fold's own exception: it never leaves the fold)
                continue
            assert getattr(state, name) is getattr(module, name), name


def test_state_parts_copy_is_independent_of_the_original() -> None:
    original = GameState(_spec(3))
    copy = original.copy()
    copy.dropped[1] = 5
    copy.votes[2] = ((0, _vote(2, 4)),)
    copy.vote_caps = {0: (1, 2, ())}
    copy.round.fair.commits[0] = None  # type: ignore[assignment]
    copy.round.log.append(None)
    copy.abandonment.abandons[(0, 1)] = (1, 1, 1)
    copy.abandonment.frontiers[0] = (1, (1, 1, 1))
    assert original.dropped == {} and original.votes == {} and original.vote_caps == {}
    assert original.round.fair.commits == {} and original.round.log == []
    assert original.abandons == {} and original.abandonment.frontiers == {}
    assert original.roster is not copy.roster and original.round is not copy.round


def test_state_parts_roster_drops_on_a_majority_and_readmits_at_the_next_round() -> None:
    members = Roster(3)
    assert members.majority == 2
    assert members.vote(0, 10, _vote(2, 7))
    assert members.settle(100) == []  # one vote of three: no majority
    assert not members.vote(0, 11, _vote(2, 8))  # one vote per voter
    assert members.vote(1, 12, _vote(2, 9))
    # Silent, not proven: the highest count is the cut (nothing anyone holds is lost).
    assert members.settle(101) == [(2, 9)]
    assert members.dropped == {2: 9} and members.drop_at == {2: 101}
    assert members.counts(2, 9) and not members.counts(2, 10)
    assert members.majority == 2  # (two left: both must vote)
    members.rejoin(_vote(2, 14, DropReason.REJOIN), over=False)
    assert members.rejoining == {2: 14}
    assert members.readmit(200) == [2]
    assert 2 not in members.dropped and members.gaps == {2: ((9, 14),)}
    assert not members.counts(2, 12) and members.counts(2, 15)


def test_state_parts_roster_withdrawn_vote_does_not_count() -> None:
    members = Roster(3)
    members.vote(0, 10, _vote(2, 7))
    assert not members.vote(0, 11, _vote(2, 0, DropReason.WITHDRAW))
    members.vote(1, 12, _vote(2, 9))
    assert members.settle(100) == []


def test_state_parts_roster_refuses_the_rejoin_of_a_member_that_left() -> None:
    members = Roster(3)
    members.leave(2, 6, 50)
    assert members.left == {2} and members.dropped == {2: 6}
    with pytest.raises(fold_values.Refuse) as refused:
        members.rejoin(_vote(2, 9, DropReason.REJOIN), over=False)
    assert refused.value.reason.code is RefusalCode.BAD_REJOIN


def test_state_parts_fold_reads_the_roster_state_as_its_own() -> None:
    fold = GameState(_spec(3))
    fold.dropped = {1: 4}
    assert fold.roster.dropped == {1: 4} and fold.majority == 2
    assert not fold.counts(1, 5) and fold.counts(0, 99)
    assert fold.phase is Phase.JOINING and fold.waiting() == frozenset({0, 2})
