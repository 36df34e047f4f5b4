"""A vote's ids are its voter's word, not the member's signature (docs/protocol.md §9.2, *a
vote's ids are its voter's word*; ``roster.contradicts``, ``roster.vote_cut``).

The rule on values: a vote whose quoted id at the seq its own frontier names differs from the
frontier's id contradicts itself (a vote counting events it does not hold, with ids it made
up: the lie ``vote_ahead``), and the game fold refuses it; two votes' ids lower a drop's cut
only where the chains they quote part (they differ at the highest seq both quote), so one id
changed below (the lie ``vote_ids``) lowers nothing and is kept out of the chain the drop
keeps; chains that part still cut below the parting, as before. The games are in
``tests/test_sim_vote_ids.py``.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.fold_values import RefusalCode
from p2p_nertz.protocol.roster import contradicts, vote_cut
from p2p_nertz.protocol.state import Event, GameState
from tests.test_folds_dropped_past_cut import _spec

_S, _E = DropReason.SILENT, DropReason.EQUIVOCATION
TARGET = 1  # (the member voted out, in every vote below)


def _id(seq: int, chain: str = "a") -> bytes:
    """The id prefix of the member's event ``seq`` on chain ``chain`` (8 bytes)."""
    return f"{chain}{seq:07d}".encode()


def _chain(last: int, chain: str = "a", *, wrong: int = 0) -> tuple[bytes, ...]:
    """The ids a vote counting ``last`` quotes of ``chain`` (``wrong``: that seq's id made
    up, as the lie ``vote_ids`` changes one)."""
    ids = [_id(seq, chain) for seq in range(max(1, last - 63), last + 1)]
    if wrong:
        ids[wrong - max(1, last - 63)] = b"madeup!!"
    return tuple(ids)


def _vote(
    last: int,
    ids: tuple[bytes, ...],
    *,
    held: int | None = None,
    named: bytes | None = None,
    reason: DropReason = _S,
) -> Drop:
    """Seat 0's vote on seat 1 counting ``last``, quoting ``ids``; its frontier announces
    ``held`` of seat 1's feed (``last`` unless said), with id ``named`` (the honest one of
    chain ``a`` unless said)."""
    held = last if held is None else held
    named = (_id(held) if held else b"") if named is None else named
    fork = 3 if reason is _E else 0
    return Drop((5, held, 5), TARGET, last, reason, fork, ids, (_id(5, "z"), named, _id(5, "y")))


def test_roster_an_honest_vote_never_contradicts_itself() -> None:
    assert not contradicts(_vote(10, _chain(10)))
    # Its frontier below the ids it quotes (a final fold's cut, or past the window of 64).
    assert not contradicts(_vote(10, _chain(10), held=7))
    assert not contradicts(_vote(100, _chain(100), held=20))
    assert not contradicts(_vote(10, _chain(10), held=0))  # (it holds nothing: no id named)
    # A withdrawal quotes nothing.
    assert not contradicts(Drop((5, 3, 5), TARGET, 0, DropReason.WITHDRAW))


def test_roster_a_vote_counting_events_it_does_not_hold_contradicts_its_own_frontier() -> None:
    """``vote_ahead``: seat 3 of two-liar soak seed 15 counted 29 of seat 1's events, its
    frontier 28 (the id of the event it holds), every quoted id made up."""
    ahead = tuple(f"x{seq:07d}".encode() for seq in range(1, 30))
    assert contradicts(_vote(29, ahead, held=28))
    # ``vote_ids`` with the id changed at the frontier's seq: the same contradiction.
    assert contradicts(_vote(10, _chain(10, wrong=10)))
    # One changed below it is no contradiction of the vote alone (vote_cut weighs it).
    assert not contradicts(_vote(10, _chain(10, wrong=4)))


def test_roster_one_voters_wrong_id_below_where_the_chains_agree_lowers_no_cut() -> None:
    """``vote_ids``: two-liar soak seed 28, one id wrong at seq 15, cut at 14 before."""
    honest, liar = _vote(20, _chain(20)), _vote(22, _chain(22, wrong=15))
    cut, chain = vote_cut((honest, liar))
    assert cut == 22  # (silence: the highest count, the chains one)
    assert 15 not in chain and chain[14] == _id(14) and chain[22] == _id(22)
    # On proof, the lowest count, not the wrong id's seq.
    proof = _vote(20, _chain(20), reason=_E)
    cut, chain = vote_cut((proof, liar))
    assert cut == 20
    assert 15 not in chain and chain[20] == _id(20)
    # Whichever vote comes first.
    assert vote_cut((liar, proof)) == (cut, chain)


def test_roster_chains_that_part_still_cut_below_the_parting() -> None:
    """A member forked at seq 8: one voter holds chain a, another chain b from 8 on. Ids differ
    at every seq from 8 to the highest both quote: the cut is 7, on the chain both hold."""
    a = _vote(12, _chain(12))
    b = _vote(10, tuple(_id(s) if s < 8 else _id(s, "b") for s in range(1, 11)))
    cut, chain = vote_cut((a, b))
    assert cut == 7
    assert chain == {s: _id(s) for s in range(1, 8)}
    # A wrong id of a third voter below the parting lowers nothing further.
    liar = _vote(12, _chain(12, wrong=3))
    cut, chain = vote_cut((a, b, liar))
    assert cut == 7
    assert 3 not in chain and chain[7] == _id(7)
    # Every id differing (a chain of made-up ids, its frontier not contradicted): it parts at
    # the first seq both quote, as before (no fold counts such a vote whose frontier names a
    # held event: contradicts).
    made_up = _vote(12, tuple(f"x{seq:07d}".encode() for seq in range(1, 13)), held=0)
    assert vote_cut((a, made_up))[0] == 0


def _events(vote: Drop) -> list[Event]:
    joins = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * 3)) for s in range(3)]
    return [*joins, Event(0, 2, 10, KIND_DROP, vote)]


def test_roster_the_fold_refuses_a_vote_that_contradicts_itself_and_counts_it_not() -> None:
    ahead = _vote(3, tuple(f"x{seq:07d}".encode() for seq in range(1, 4)), held=1)
    state = GameState(_spec(3))
    for event in _events(ahead):
        state.apply(event)
    (violation,) = state.violations
    assert (violation.seat, violation.seq, violation.code) == (0, 2, RefusalCode.VOTE_CONTRADICTS)
    assert state.votes == {}
    assert state.standing_caps() == {}  # (it freezes nothing, caps nothing)
    # The same vote with its own ids counts.
    honest = GameState(_spec(3))
    for event in _events(_vote(1, _chain(1))):
        honest.apply(event)
    assert honest.violations == ()
    assert [voter for voter, _ in honest.votes[TARGET]] == [0]


def test_roster_a_vote_lying_at_exactly_an_honest_voters_count_cuts_below_it() -> None:
    """The kind left argued (docs/protocol.md §9.2, §13 *the vote at exactly an honest voter's
    count*), made on purpose: seat 0 votes seat 1 out for silence counting 20 (it holds 20,
    so 20 may be final somewhere); seat 2, a liar holding 22, counts 22 with its own frontier
    (no contradiction) and changes the one id at exactly 20. The highest seq both quote is
    20 and the ids differ there: it reads as chains parting at 20, a fork, so the drop is
    cut at 19, the lowest count less one, below an event the honest voter's count says may
    be final (silence alone would keep 22). What the table does with it: every fold takes
    the vote and drops seat 1 at 19 alike (the fold of the votes has nothing to tell the lie
    from an honest voter holding a version forked at 20); the lie costs the member its event
    20, final or not. One seq either way and the votes decide as for silence."""
    honest = _vote(20, _chain(20))
    at_count = _vote(22, _chain(22, wrong=20))
    assert not contradicts(at_count)
    assert vote_cut((honest, at_count)) == (19, {s: _id(s) for s in range(1, 20)})
    # The same lie one seq lower is no fork (the chains agree again at 20): it lowers
    # nothing, and the seq is left out of the chain kept; one seq higher the honest voter
    # quotes nothing to weigh it against.
    below = vote_cut((honest, _vote(22, _chain(22, wrong=19))))
    above = vote_cut((honest, _vote(22, _chain(22, wrong=21))))
    assert (below[0], 19 in below[1]) == (22, False)
    assert above[0] == 22 and above[1][20] == _id(20)
    # The game fold, every fold of the votes alike: both count, seat 1 is dropped at 19.
    state = GameState(_spec(3))
    joins = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * 3)) for s in range(3)]
    votes = [
        Event(0, 2, 10, KIND_DROP, honest),
        Event(2, 2, 11, KIND_DROP, at_count),
    ]
    for event in [*joins, *votes]:
        state.apply(event)
    assert state.violations == ()
    assert state.dropped == {TARGET: 19}
