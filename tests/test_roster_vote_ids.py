"""A vote's ids are its voter's word, not the member's signature (docs/protocol.md §9.2, *a
vote's ids are its voter's word*; ``roster.contradicts``, ``roster.unsigned_id``,
``roster.vote_cut``).

The rule on values: a vote whose quoted id at the seq its own frontier names differs from the
frontier's id contradicts itself (a vote counting events it does not hold, with ids it made
up: the lie ``vote_ahead``), and the game fold refuses it; two votes' ids lower a drop's cut
only where the chains they quote part (they differ at the highest seq both quote), so one id
changed below (the lie ``vote_ids``) lowers nothing and is kept out of the chain the drop
keeps; chains that part still cut below the parting, as before. And since session 36, a vote
quoting at a seq the fold counted of the member another id than the member's event counted
there is refused (its ids are no chain of the member's signed events), wherever the seq is:
below its frontier, at it, or past it. The games are in ``tests/test_sim_vote_ids.py`` and
``tests/test_sim_liars_more.py``.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.fold_values import RefusalCode, Refused
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.roster import CountedIds, contradicts, freezes, unsigned_id, vote_cut
from p2p_nertz.protocol.state import Event, GameState
from tests.proof_helpers import proven
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
    assert not contradicts(_vote(100, _chain(100)))  # (a window of 64, its frontier the last)
    # On proof, its frontier below its count: the cut its final fold made of a member dropped
    # before the proof came (it announces nothing past a cut), within the ids it quotes,
    # below them past the window of 64, or at nothing held.
    assert not contradicts(_vote(10, _chain(10), held=7, reason=_E))
    assert not contradicts(_vote(100, _chain(100), held=20, reason=_E))
    assert not contradicts(_vote(10, _chain(10), held=0, reason=_E))
    # Its frontier above its count (the same cut, past the vote's count).
    assert not contradicts(_vote(10, _chain(10), held=12, named=_id(12)))
    # A withdrawal quotes nothing.
    assert not contradicts(Drop((5, 3, 5), TARGET, 0, DropReason.WITHDRAW))


def test_roster_a_vote_counting_past_its_own_frontier_contradicts_itself() -> None:
    """Session 37: a vote whose count may cut (for silence, withholding, a flap fault; the
    highest count cuts, §9.2) counting past the seq of the member's feed its own frontier
    names counts events its voter says it does not hold: ``vote_ahead`` at the join
    (``--two-liars --join`` seeds 379 and 532: counting 2, its frontier naming 0, every id
    made up), and a liar quoting the member's own ids up to what it holds and made-up ones
    past it (``vote_past``: its ids agree with its frontier, and with every honest vote)."""
    made_up = tuple(f"x{seq:07d}".encode() for seq in (1, 2))
    for reason in (_S, DropReason.WITHHELD, DropReason.FLAPPING):
        assert contradicts(_vote(2, made_up, held=0, reason=reason))
        past = (*_chain(10), b"madeup!!", b"madeup!?")
        assert contradicts(_vote(12, past, held=10, reason=reason))
        assert contradicts(_vote(65, _chain(65), held=1, reason=reason))  # (past the window)
        assert not contradicts(_vote(10, _chain(10), reason=reason))


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
    for event in proven(state.spec, _events(ahead)):
        state.apply(event)
    (violation,) = state.violations
    assert (violation.seat, violation.seq, violation.code) == (0, 2, RefusalCode.VOTE_CONTRADICTS)
    assert state.votes == {}
    assert state.standing_caps() == {}  # (it freezes nothing, caps nothing)
    # The same vote with its own ids counts.
    honest = GameState(_spec(3))
    for event in proven(honest.spec, _events(_vote(1, _chain(1)))):
        honest.apply(event)
    assert honest.violations == ()
    assert [voter for voter, _ in honest.votes[TARGET]] == [0]


def test_roster_a_vote_counting_past_its_frontier_sets_no_cut_the_peers_cannot_reach() -> None:
    """``--two-liars --join`` seed 379's drop, on values (four seats): seat 1's join never
    reached the others (a frontier naming an event of seat 0 nobody signed), so no fold
    counted any of its feed; seat 2, holding none of it either (its frontier names 0), votes
    it out for silence counting 2 with made-up ids; seats 0 and 3, then seat 2 again, vote it
    out *withheld* counting 0. Counted, seat 2's first vote set the cut (the highest count)
    on its made-up chain: no peer could ever fetch seat 1's events 1 and 2, the drop was
    never final, and the honest two waited in joining for good. Refused, seat 2's second
    vote is its first that counts, and the cut is 0, what every voter holds."""
    made_up = tuple(f"x{seq:07d}".encode() for seq in (1, 2))
    ahead = Drop((0, 0, 1, 0), TARGET, 2, _S, 0, made_up, (b"", b"", _id(1, "y"), b""))
    assert vote_cut((ahead,)) == (2, {1: made_up[0], 2: made_up[1]})  # (taken, as before)

    def withheld(seat: int, lamport: int) -> Event:
        body = Drop((1, 0, 1, 1), TARGET, 0, DropReason.WITHHELD, 0, (), (b"a", b"", b"b", b"c"))
        return Event(seat, 2 if seat != 2 else 3, lamport, KIND_DROP, body)

    joins = [Event(s, 1, s + 1, KIND_JOIN, Join(frontier=(0,) * 4)) for s in (0, 2, 3)]
    votes = [Event(2, 2, 4, KIND_DROP, ahead), withheld(3, 81), withheld(2, 82), withheld(0, 86)]
    state = GameState(_spec(4))
    for event in proven(state.spec, [*joins, *votes]):
        state.apply(event)
    assert [(v.seat, v.seq, v.code) for v in state.violations] == [
        (2, 2, RefusalCode.VOTE_CONTRADICTS)
    ]
    assert state.dropped == {TARGET: 0}


def test_roster_a_liar_counting_past_an_honest_count_with_its_ids_cuts_at_the_honest_count() -> (
    None
):
    """``vote_past`` on a member gone for good (one liar beside an honest majority, three
    seats): seat 0 counts 5, all seat 1 signed; seat 2 quotes seat 1's own ids to 5, its
    frontier naming 5 (nothing contradicts them, and no id it quotes differs from one
    counted), and made-up ones at 6 and 7. Counted, the cut was 7, on a chain no peer can
    fetch: the drop never final, the table waiting for good (before session 37, at three,
    four and five players alike). Refused, the honest count cuts."""
    past = (*_chain(5), b"madeup!!", b"madeup!?")
    liar = Drop((5, 5, 5), TARGET, 7, _S, 0, past, (_id(5, "z"), _id(5), _id(5, "y")))
    honest = Drop((5, 5, 5), TARGET, 5, _S, 0, _chain(5), (_id(5, "z"), _id(5), _id(5, "y")))
    assert vote_cut((honest, liar))[0] == 7  # (taken, as before)
    state = _fold(
        *_joins(), *_feed(5), Event(2, 2, 20, KIND_DROP, liar), Event(0, 2, 21, KIND_DROP, honest)
    )
    assert [(v.seat, v.code) for v in state.violations] == [(2, RefusalCode.VOTE_CONTRADICTS)]
    assert state.dropped == {}  # (one vote of three: no majority)
    honest2 = Drop((5, 5, 5), TARGET, 5, _S, 0, _chain(5), (_id(5, "z"), _id(5), _id(5, "y")))
    state.apply(Event(2, 3, 22, KIND_DROP, honest2))  # (the liar's next vote, honest)
    assert state.dropped == {TARGET: 5}


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
    # A fold that counted none of seat 1's events but its join (a join with no id: these
    # values are hand-built) has nothing to weigh the ids against: both count, seat 1 is
    # dropped at 19. A fold that counted them refuses the lie (the next test).
    state = GameState(_spec(3))
    joins = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * 3)) for s in range(3)]
    votes = [
        Event(0, 2, 10, KIND_DROP, honest),
        Event(2, 2, 11, KIND_DROP, at_count),
    ]
    for event in proven(state.spec, [*joins, *votes]):
        state.apply(event)
    assert state.violations == ()
    assert state.dropped == {TARGET: 19}


def _feed(last: int, chain: str = "a", *, fork: int = 0) -> list[Event]:
    """Seat 1's events 1 (its join) to ``last``, each with its id on ``chain`` (from ``fork``
    on, if given: below it, chain ``a``), Lamport 1 to ``last``; past the join each is a
    withdrawal of no vote (it counts for nothing and is refused nowhere)."""
    out = []
    for seq in range(1, last + 1):
        name = chain if seq >= fork else "a"
        body = (
            Join(frontier=(0,) * 3)
            if seq == 1
            else Drop((0, seq - 1, 0), 0, 0, DropReason.WITHDRAW)
        )
        out.append(
            Event(TARGET, seq, seq, KIND_JOIN if seq == 1 else KIND_DROP, body, _id(seq, name))
        )
    return out


def _joins() -> list[Event]:
    return [Event(s, 1, s + 1, KIND_JOIN, Join(frontier=(0,) * 3)) for s in (0, 2)]


def _fold(*events: Event) -> GameState:
    state = GameState(_spec(3))
    for event in proven(state.spec, sorted(events, key=lambda e: e.key)):
        state.apply(event)
    return state


def test_roster_unsigned_id_finds_an_id_that_is_no_chain_of_the_counted_events() -> None:
    counted = CountedIds(3)
    for seq in range(1, 21):
        counted.add(TARGET, seq, _id(seq))
    assert unsigned_id(_vote(20, _chain(20)), counted) == 0
    # One id changed anywhere among the counted seqs (vote_ids), below the frontier or at it.
    for wrong in (1, 7, 19, 20):
        assert unsigned_id(_vote(20, _chain(20, wrong=wrong)), counted) == wrong
    # Counting past what the fold counted: the seqs past it are not weighed, the rest are.
    assert unsigned_id(_vote(23, _chain(23)), counted) == 0
    assert unsigned_id(_vote(23, _chain(23, wrong=22)), counted) == 0
    # vote_ahead: holding nothing (its frontier names 0), every id made up (refused for
    # counting past its frontier too, since session 37: contradicts).
    ahead = _vote(3, tuple(f"x{seq:07d}".encode() for seq in range(1, 4)), held=0)
    assert contradicts(ahead)
    assert unsigned_id(ahead, counted) == 1
    # On proof too, below the fork it names (3, here); from there on it quotes the version it
    # holds, which may be the other one (soak seed 14017: the honest proofs at 100 quoted
    # the version the audit's fold had not counted). A withdrawal quotes nothing; a fold
    # that counted nothing weighs nothing.
    assert unsigned_id(_vote(20, _chain(20, wrong=2), reason=_E), counted) == 2
    assert unsigned_id(_vote(20, _chain(20, wrong=3), reason=_E), counted) == 0
    assert unsigned_id(_vote(20, _chain(20, wrong=5), reason=_E), counted) == 0
    assert unsigned_id(Drop((5, 3, 5), TARGET, 0, DropReason.WITHDRAW), counted) == 0
    assert unsigned_id(ahead, CountedIds(3)) == 0


def test_roster_the_fold_refuses_a_vote_quoting_ids_the_member_never_signed() -> None:
    """``--join --two-liars`` seed 15's shape, on values: seat 1's join and events to 5 are
    counted; seat 2 votes it out for silence counting 6 with made-up ids, its frontier naming
    the made-up id at 6 (no contradiction). Refused (``vote_unsigned``): no vote, no freeze,
    no cap. (Seed 15's liar held none of them, its frontier naming 0: since session 37 that
    vote contradicts itself first, counting past its frontier.) The same vote with seat 1's
    own ids counts."""
    made_up = tuple(f"x{seq:07d}".encode() for seq in range(1, 7))
    for liar, code in (
        (Drop((0, 6, 5), TARGET, 6, _S, 0, made_up, (b"", made_up[5], _id(5, "y"))), "unsigned"),
        (Drop((0, 0, 5), TARGET, 6, _S, 0, made_up, (b"", b"", _id(5, "y"))), "contradicts"),
    ):
        state = _fold(*_joins(), *_feed(5), Event(2, 2, 20, KIND_DROP, liar))
        (violation,) = state.violations
        assert (violation.seat, violation.seq) == (2, 2)
        assert violation.code is RefusalCode(f"vote_{code}")
        assert not state.votes.get(TARGET) and state.standing_caps() == {}
    honest = Drop((0, 5, 5), TARGET, 5, _S, 0, _chain(5), (b"", _id(5), _id(5, "y")))
    state = _fold(*_joins(), *_feed(5), Event(2, 2, 20, KIND_DROP, honest))
    assert state.violations == ()
    assert [voter for voter, _ in state.votes[TARGET]] == [2]


def test_roster_a_liar_quoting_made_up_ids_cuts_no_member_below_what_the_fold_counted() -> None:
    """Seed 15 itself, on values: seat 1 forked its seq 1, two members vote it out on proof
    counting 1, its join (counted) quoted; a third vote, for silence, holding nothing of it,
    counts 3 with made-up ids. Taken, the ids part at 1 and the cut is 0, below the join
    every fold counted; refused, the ballots left cut at 1, the join kept. (Four seats:
    seat 3 lies; in the game it is voted out itself, and the proofs then drop seat 1.)"""
    state = GameState(_spec(4))
    joins = [Event(s, 1, s + 1, KIND_JOIN, Join(frontier=(0,) * 4)) for s in (0, 2, 3)]
    member = Event(TARGET, 1, 1, KIND_JOIN, Join(frontier=(0,) * 4), _id(1))
    made_up = Drop((0, 0, 0, 1), TARGET, 3, _S, 0, tuple(f"x{s:07d}".encode() for s in (1, 2, 3)))
    proofs = [Drop((1, 1, 1, 1), TARGET, 1, _E, 1, (_id(1),)) for _ in (0, 2)]
    assert vote_cut((made_up, *proofs))[0] == 0  # (taken, as before)
    votes = [Event(3, 2, 8, KIND_DROP, made_up)]
    votes += [Event(s, 2, 9 + s, KIND_DROP, p) for s, p in zip((0, 2), proofs, strict=True)]
    for event in proven(state.spec, sorted([*joins, member, *votes], key=lambda e: e.key)):
        state.apply(event)
    assert [(v.seat, v.code) for v in state.violations] == [(3, RefusalCode.VOTE_UNSIGNED)]
    ballots = tuple(vote for _, vote in state.votes[TARGET])
    assert [voter for voter, _ in state.votes[TARGET]] == [0, 2]
    assert vote_cut(ballots) == (1, {1: _id(1)})


def test_roster_the_lie_at_exactly_an_honest_voters_count_is_refused_where_it_was_counted() -> None:
    """The kind left open in sessions 32 to 35 (the test before: a fold that counted nothing
    of the member cuts at 19): a fold that counted seat 1's events to 22 refuses the liar's
    vote (its id at 20 is not seat 1's event 20); the honest vote alone is no majority, and
    no cut goes below the honest count."""
    honest = Event(0, 2, 30, KIND_DROP, _vote(20, _chain(20)))
    at_count = Event(2, 2, 31, KIND_DROP, _vote(22, _chain(22, wrong=20)))
    state = _fold(*_joins(), *_feed(22), honest, at_count)
    assert [(v.seat, v.code) for v in state.violations] == [(2, RefusalCode.VOTE_UNSIGNED)]
    assert state.dropped == {}
    assert [voter for voter, _ in state.votes[TARGET]] == [0]


def test_roster_a_vote_quoting_a_real_forks_other_version_keeps_counting() -> None:
    """Seat 1 forks at 4: the fold holds chain ``a`` (1 to 6), seat 2 holds chain ``b`` from 4
    on and votes for silence quoting it. Where the fold's chain is final (its final fold
    counted ``a``'s 4 to 6), every member announced holding it, so no honest voter quotes
    ``b`` there: refused. Where it is held and not final (the tentative fold) and the fork is
    proven here, ``b`` is the member's own signed word too: the vote counts, and with seat
    0's vote on chain ``a`` the chains part at 4: the cut is 3, as before the rule."""
    b_chain = tuple(_id(s) if s < 4 else _id(s, "b") for s in range(1, 7))
    seat2 = Event(
        2, 2, 30, KIND_DROP, Drop((0, 6, 0), TARGET, 6, _S, 0, b_chain, (b"", _id(6, "b"), b""))
    )
    seat0 = Event(
        0, 2, 31, KIND_DROP, Drop((0, 6, 0), TARGET, 6, _S, 0, _chain(6), (b"", _id(6), b""))
    )
    final = _fold(*_joins(), *_feed(6), seat2, seat0)
    assert [(v.seat, v.code) for v in final.violations] == [(2, RefusalCode.VOTE_UNSIGNED)]
    assert final.dropped == {}
    # Held, not final: seat 1's join final, its events 2 to 6 and the votes held.
    folds = Folds(_fold(*_joins(), *_feed(1)))
    folds.forked_at = {TARGET: 4}
    for event in proven(folds.final.spec, [*_feed(6)[1:], seat2, seat0]):
        folds.add(event, stable=3)
    tentative = folds.tentative
    assert tentative.violations == ()
    assert tentative.dropped == {TARGET: 3}
    # A fork not proven here: the tentative fold checks against what it counted, as the
    # final one will (it refuses seat 2's vote; the final fold can never count chain a
    # while seat 2 holds b: seat 2 never announces it).
    unproven = Folds(_fold(*_joins(), *_feed(1)))
    for event in proven(unproven.final.spec, [*_feed(6)[1:], seat2, seat0]):
        unproven.add(event, stable=3)
    assert [v.seat for v in unproven.tentative.violations] == [2]
    # A vote on proof of the fork at 4 quotes its voter's version from there on, and is
    # weighed below it only: it counts even in a fold that counted chain a (soak seed 14017:
    # the audit's first pass had counted the other version than the honest proofs quoted).
    proof = Drop((0, 6, 0), TARGET, 6, _E, 4, b_chain, (b"", _id(6, "b"), b""))
    final = _fold(*_joins(), *_feed(6), Event(2, 2, 30, KIND_DROP, proof))
    assert final.violations == ()
    assert [voter for voter, _ in final.votes[TARGET]] == [2]
    # ... and is refused where it quotes another id below its fork.
    b_low = (_id(1), b"madeup!!", *b_chain[2:])
    proof = Drop((0, 6, 0), TARGET, 6, _E, 4, b_low, (b"", _id(6, "b"), b""))
    final = _fold(*_joins(), *_feed(6), Event(2, 2, 30, KIND_DROP, proof))
    assert [(v.seat, v.code) for v in final.violations] == [(2, RefusalCode.VOTE_UNSIGNED)]


# -- a vote folded before the member's events it quotes (session 37) ------------------------


def _later(last: int, *, after: int, chain: str = "a") -> list[Event]:
    """Seat 1's events 1 to ``last`` (:func:`_feed`), those past ``after`` timed after every
    vote below (Lamport 100 on): signed later, folded after the votes that quote them."""
    return [
        dataclasses.replace(e, lamport=e.lamport if e.seq <= after else 100 + e.seq)
        for e in _feed(last, chain)
    ]


def _ahead(held: int, last: int, *, voter: int = 2, lamport: int = 20) -> Event:
    """``voter``'s vote (its event 2) on seat 1 on proof of a fork just past its count,
    holding ``held`` of its events and counting ``last``: its own copies' ids up to ``held``,
    made-up ones past there; its frontier names ``held``, with that event's id. The one vote
    delivery lets be folded before the member's events it quotes (docs/protocol.md §9.2): a
    vote for silence, withholding or a flap fault counting past its frontier is refused
    first (``vote_contradicts``), and any vote is timed after every event its frontier
    names (§6.2), so counted after them."""
    ids = tuple(_id(s) if s <= held else f"x{s:07d}".encode() for s in range(1, last + 1))
    frontier, named = [0, 0, 0], [b"", b"", b""]
    frontier[TARGET], named[TARGET] = held, _id(held)
    vote = Drop(tuple(frontier), TARGET, last, _E, last + 1, ids, tuple(named))
    return Event(voter, 2, lamport, KIND_DROP, vote)


def test_roster_a_vote_folded_before_the_events_it_quotes_is_withdrawn_at_the_first_it_belies() -> (
    None
):
    """Seat 2 holds seat 1's events to 3 and votes it out counting 6, ids 4 to 6 made up;
    seat 1 signs 4 to 8 after. Folded, the vote contradicts nothing; at seat 1's event 4 it
    is withdrawn and refused (``vote_unsigned``, naming the vote), and stands nowhere: no
    ballot, no cap, no standing vote. Seat 2 may vote again, with seat 1's own ids, and
    that vote counts (with seat 0's, a majority of three: the cut is the count, 8)."""
    liar = _ahead(3, 6)
    state = _fold(*_joins(), *_later(8, after=3), liar)
    assert [(v.seat, v.seq, v.code) for v in state.violations] == [
        (2, 2, RefusalCode.VOTE_UNSIGNED)
    ]
    assert not state.votes.get(TARGET) and state.standing_caps() == {}
    # Before seat 1's event 4 it stood, counted: the fold holding events to 3 only.
    before = _fold(*_joins(), *_later(3, after=3), liar)
    assert before.violations == () and [v for v, _ in before.votes[TARGET]] == [2]
    # Withdrawn, not barred: seat 2 votes again (its event 3), and seat 0 with it.
    again = Event(2, 3, 200, KIND_DROP, _vote(8, _chain(8)))
    honest = Event(0, 2, 201, KIND_DROP, _vote(8, _chain(8)))
    state = _fold(*_joins(), *_later(8, after=3), liar, again, honest)
    assert state.dropped == {TARGET: 8}
    assert state.kept_ids[TARGET][5] == _id(5)


def test_roster_an_honest_vote_is_never_withdrawn_by_the_members_later_events() -> None:
    """An honest vote quotes only events it holds, each before it in the order: the member's
    later events are past its count, and it stands (a vote quoting ahead with ids that
    happen to be right stands too: nothing belies it)."""
    state = _fold(*_joins(), *_later(8, after=3), Event(0, 2, 20, KIND_DROP, _vote(3, _chain(3))))
    assert state.violations == ()
    assert [v for v, _ in state.votes[TARGET]] == [0]
    ahead = _ahead(3, 6)
    right = dataclasses.replace(ahead, body=dataclasses.replace(ahead.body, ids=_chain(6)))
    state = _fold(*_joins(), *_later(8, after=3), right)
    assert state.violations == () and [v for v, _ in state.votes[TARGET]] == [2]


def test_roster_a_capped_vote_folded_before_the_events_it_quotes_is_withdrawn_too() -> None:
    """A vote that does not count (capped by a vote standing against its voter) still caps
    its member (``Roster.standing_caps``); quoting made-up ids, it is withdrawn as a counted
    one is, and caps nothing after."""
    state = GameState(_spec(3))
    state.vote_caps = {2: (0, 1 << 63, (), ())}  # (seat 2's votes past its count 0 never count)
    events = [*_joins(), *_later(8, after=3), _ahead(3, 6)]
    ordered = sorted(proven(state.spec, events), key=lambda e: e.key)
    notices = [n for e in ordered for n in state.apply(e)]
    assert [(v.seat, v.code) for v in state.violations] == [(2, RefusalCode.VOTE_UNSIGNED)]
    assert [n.violation.seq for n in notices if isinstance(n, Refused)] == [2]
    assert TARGET not in state.standing_caps()
    # Capped and standing before seat 1's event 4.
    before = GameState(_spec(3))
    before.vote_caps = dict(state.vote_caps)
    for event in proven(
        before.spec, sorted([*_joins(), *_later(3, after=3), _ahead(3, 6)], key=lambda e: e.key)
    ):
        before.apply(event)
    assert before.standing_caps()[TARGET][0] == 6


def test_roster_a_vote_on_proof_is_weighed_by_the_later_events_below_its_fork_only() -> None:
    """A vote on proof of a fork at 5 quotes its voter's version from 5 on, which may be the
    other one than a fold counts: the member's later events 5 on belie nothing; one below
    the fork (4, made up) does."""
    ids = tuple(_id(s) if s < 5 else _id(s, "b") for s in range(1, 7))
    proof = Drop((0, 3, 0), TARGET, 6, _E, 5, ids, (b"", _id(3), b""))
    state = _fold(*_joins(), *_later(8, after=3), Event(2, 2, 20, KIND_DROP, proof))
    assert state.violations == () and [v for v, _ in state.votes[TARGET]] == [2]
    below = dataclasses.replace(proof, ids=(*ids[:3], b"madeup!!", *ids[4:]))
    state = _fold(*_joins(), *_later(8, after=3), Event(2, 2, 20, KIND_DROP, below))
    assert [(v.seat, v.code) for v in state.violations] == [(2, RefusalCode.VOTE_UNSIGNED)]


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_roster_every_fold_withdraws_the_vote_at_the_same_place(seats: int) -> None:
    """At three and four seats: the final fold, the tentative fold (the events past the join
    held, not final) and a fold of the same events from nothing withdraw the liar's vote at
    seat 1's event 4 alike, and take the same votes after it. At two, nobody else votes: the
    vote on proof drops seat 1 when folded, before its event 4, and that drop stands in every
    fold alike (what is final stays; docs/protocol.md §9.2, *What the rules leave*: a vote on
    proof no proof backs, which the audit names, ``unproven_vote``)."""
    liar = 0
    joins = [Event(s, 1, s + 1, KIND_JOIN, Join(frontier=(0,) * seats)) for s in range(seats)]
    joins = [j for j in joins if j.seat != TARGET]
    member = [
        dataclasses.replace(e, body=dataclasses.replace(e.body, frontier=(0,) * seats))
        if e.seq == 1
        else dataclasses.replace(e, body=Drop((0,) * seats, 0, 0, DropReason.WITHDRAW))
        for e in _later(8, after=3)
    ]
    frontier = tuple(3 if s == TARGET else 0 for s in range(seats))
    named = tuple(_id(3) if s == TARGET else b"" for s in range(seats))
    ids = tuple(_id(s) if s <= 3 else f"x{s:07d}".encode() for s in range(1, 7))
    ahead = Event(liar, 2, 20, KIND_DROP, Drop(frontier, TARGET, 6, _E, 7, ids, named))
    events = sorted([*joins, *member, ahead], key=lambda e: e.key)
    whole = GameState(_spec(seats))
    for event in proven(whole.spec, events):
        whole.apply(event)
    if seats == 2:
        assert whole.violations == () and whole.dropped == {TARGET: 6}
    else:
        assert [(v.seat, v.seq, v.code) for v in whole.violations] == [
            (liar, 2, RefusalCode.VOTE_UNSIGNED)
        ]
        assert whole.dropped == {} and whole.votes.get(TARGET, ()) == ()
    start = GameState(_spec(seats))
    for event in proven(start.spec, joins):
        start.apply(event)
    folds = Folds(start)
    for event in proven(folds.final.spec, sorted([*member, ahead], key=lambda e: e.key)):
        folds.add(event, stable=0)
    assert folds.tentative.violations == whole.violations
    assert folds.tentative.dropped == whole.dropped
    assert folds.tentative.votes.get(TARGET, ()) == whole.votes.get(TARGET, ())


def test_roster_a_second_vote_signed_while_the_first_stood_freezes_nothing_after_it() -> None:
    """``--lie quote_ahead`` seed 92 on values: seat 0 votes seat 1 out quoting ahead (its event
    2), and again (its event 3, never counted while the first stands) at the Lamport time of
    seat 1's event 4, before it in the order (seat 0 before seat 1). That event belies the
    first: the withdrawal lifts the freeze of seat 0's announcements of seat 1
    (``roster.freezes``, which the receivers enforce) that the two votes put, as seat 0's
    own withdrawal there would; read before the second vote (keyed at the first's seq),
    the freeze stood for good."""
    first = _ahead(3, 6, voter=0)
    second = dataclasses.replace(_ahead(3, 7, voter=0, lamport=104), seq=3)
    before = _fold(*_joins(), *_later(3, after=3), first, second)
    assert freezes(before.roster, TARGET) == {0: 6}
    state = _fold(*_joins(), *_later(8, after=3), first, second)
    assert [(v.seat, v.seq) for v in state.violations] == [(0, 2)]
    assert freezes(state.roster, TARGET) == {}
