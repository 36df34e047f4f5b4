"""A readmitted member's events from its rejoin request on count only from its readmission on
in the total order, whatever cut the fold is given (``folds.unreadmitted``, docs/protocol.md
§9.8; session 36).

The lie fuzzer's readmit seeds 156 and 16 (``join_twice``): the liar, cut off, signed a
second ``join`` past its cut before it learned of its drop (the event came before the votes
that cut it in the total order), and the others readmitted it at that join, its rejoin
request. The peers' final folds, given the cut, never counted it; the audit, whose pass
knows the member readmitted (its gap, not its cut any more), counted it, refused it as a
second join and reached another state. One rule now answers for both views.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Rules


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"unreadm")


def _vote(players: int, target: int, last_seq: int, reason: DropReason) -> Drop:
    return Drop(frontier=(0,) * players, seat=target, last_seq=last_seq, reason=reason)


def _drop(state: GameState, players: int, cut: int, at: int) -> None:
    """Seat 2 voted out at ``cut`` by every other member (settled at Lamport ``at``)."""
    voters = [q for q in range(players) if q != 2]
    for i, voter in enumerate(voters):
        state.roster.vote(voter, at + i, _vote(players, 2, cut, DropReason.SILENT))
    assert state.roster.settle(at) == [(2, cut)]


def _readmit(state: GameState, players: int, request: int, at: int) -> None:
    state.roster.rejoin(_vote(players, 2, request, DropReason.REJOIN), over=False)
    assert state.roster.readmit(at) == [2]


def test_folds_a_request_before_the_drop_in_the_order_never_counts_in_either_view() -> None:
    """Seat 2 cut at 9, readmitted at its request 14, the events deciding both later in the
    order than the ones asked of: with the cut given (the peer's final fold) or only the gap
    (the audit's pass), its events up to the cut count, the gap's and the request's and
    those after it do not, until the fold has readmitted it."""
    for players in (3, 4):
        folds = Folds(GameState(_spec(players)))
        gaps = {2: ((9, 14),)}
        for excluded in ({2: 9}, {}):
            assert folds.counts(2, 9, excluded, gaps)
            assert not any(folds.counts(2, seq, excluded, gaps) for seq in range(10, 14))
            assert not folds.counts(2, 14, excluded, gaps)  # (the request: never folded)
            assert not folds.counts(2, 15, excluded, gaps)
            assert folds.counts(1, 15, excluded, gaps)  # (another member: no gap of its own)
        # No readmission known to the fold: the gap's rule alone, as before.
        assert folds.counts(2, 15, {}, {})


def test_folds_after_the_readmission_its_events_from_the_request_on_count() -> None:
    for players in (3, 4):
        state = GameState(_spec(players))
        _drop(state, players, 9, 100)
        _readmit(state, players, 14, 200)
        folds = Folds(state)
        gaps = {2: ((9, 14),)}
        for excluded in ({2: 9}, {}):
            assert folds.counts(2, 9, excluded, gaps)
            assert not folds.counts(2, 12, excluded, gaps)
            assert folds.counts(2, 14, excluded, gaps) and folds.counts(2, 30, excluded, gaps)


def test_folds_a_second_readmission_counts_from_its_own_request_only_once_made() -> None:
    """Readmitted at 14 from 9, cut again at 20 and readmitted at 25: between the two, its
    events from 15 to 20 count, from 25 on not yet; once the second is made, they do."""
    for players in (3, 4):
        state = GameState(_spec(players))
        _drop(state, players, 9, 100)
        _readmit(state, players, 14, 200)
        folds = Folds(state)
        gaps = {2: ((9, 14), (20, 25))}
        assert folds.counts(2, 15, {}, gaps) and folds.counts(2, 20, {}, gaps)
        assert not folds.counts(2, 22, {}, gaps)
        assert not folds.counts(2, 25, {}, gaps) and not folds.counts(2, 26, {}, gaps)
        _drop(state, players, 20, 300)
        _readmit(state, players, 25, 400)
        assert folds.counts(2, 15, {}, gaps) and folds.counts(2, 26, {}, gaps)
        assert not folds.counts(2, 22, {}, gaps) and not folds.counts(2, 12, {}, gaps)
