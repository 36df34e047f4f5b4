"""The objects of the core return values (issue 16): ``Feeds`` says what to deliver, refuse or
give up, ``Membership`` whether two messages are a new proof, ``Recovery`` when it is over.

Real signed messages throughout (two members' keys); no peer: these are the answers the peer
turns into effects (tests/test_peer_*.py check the effects themselves).
"""

from __future__ import annotations

import dataclasses

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, EventBody, Join, Leave, encode_body, kind_of
from p2p_nertz.protocol.envelope import Kind, Message, decode_message, encode_message
from p2p_nertz.protocol.feeds import (
    ChainCode,
    Contradiction,
    Feeds,
    Parting,
    Ready,
    Refusal,
    Source,
)
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.recovery import Recovered, Recovery
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules

IDS = [Identity.generate(bytes([7 + i]) * 32) for i in range(2)]
SPEC = GameSpec.create([(ident.peer_id, f"p{i}") for i, ident in enumerate(IDS)], Rules(), b"t")
AUTHOR = [IDS[0]] * 2
for _ident in IDS:
    AUTHOR[SPEC.seat_of(_ident.peer_id)] = _ident


def event(seat: int, seq: int, body: EventBody, prev: Message | None, lamport: int) -> Message:
    """Event ``seq`` of ``seat``, signed by its member, decoded as the peer decodes it (its
    frontier's ids are placeholders: :class:`Feeds` never reads them)."""
    ids = tuple(bytes(ID_PREFIX) if h else b"" for h in body.frontier)
    body = dataclasses.replace(body, frontier_ids=ids)
    wire = encode_message(
        AUTHOR[seat],
        game_id=SPEC.game_id,
        seq=seq,
        prev=None if prev is None else prev.id,
        lamport=lamport,
        kind=kind_of(body),
        body=encode_body(body),
    )
    return decode_message(wire, game_id=SPEC.game_id)


def feeds() -> Feeds:
    return Feeds(2, want_interval=0.05, want_delay=0.0, max_want=64)


def deliver_all(store: Feeds) -> list[Refusal | Parting | Ready]:
    """Walk :meth:`Feeds.ready` as the peer does: deliver every ready event (no checks)."""
    steps = []
    for step in store.ready():
        steps.append(step)
        if isinstance(step, Ready):
            store.feeds[step.seat].append(step.message)
    return steps


def test_ready_yields_events_in_chain_order_once_their_causal_past_is_held() -> None:
    store = feeds()
    join0 = event(0, 1, Join((0, 0)), None, 1)
    leave0 = event(0, 2, Leave((1, 0)), join0, 2)
    join1 = event(1, 1, Join((2, 0)), None, 3)  # names both events of seat 0
    store.hold(1, join1, Join((2, 0)), Source.NETWORK)
    store.hold(0, leave0, Leave((1, 0)), Source.NETWORK)
    assert deliver_all(store) == []  # seat 0's first event is missing: nothing is ready
    assert store.version(0, 2) is leave0 and store.version(0, 1) is None
    store.hold(0, join0, Join((0, 0)), Source.NETWORK)
    steps = deliver_all(store)
    assert [(s.seat, s.message.seq) for s in steps if isinstance(s, Ready)] == [
        (0, 1),
        (0, 2),
        (1, 1),
    ]
    assert not store.waiting(0) and not store.waiting(1)
    assert store.chain_problem(0, leave0, Leave((1, 0)), Source.NETWORK, {}) is not None  # held now


def test_ready_refuses_an_event_off_the_chain_that_counts_with_its_code() -> None:
    store = feeds()
    join0 = event(0, 1, Join((0, 0)), None, 1)
    store.required[0] = {1: b"\x00\x01"}  # a chain a drop keeps: another first event
    store.hold(0, join0, Join((0, 0)), Source.NETWORK)
    (step,) = deliver_all(store)
    assert isinstance(step, Refusal)
    assert step == Refusal(ChainCode.NOT_KEPT, step.detail, join0.author)
    assert step.code.value == "not_kept" and store.feeds[0] == [] and not store.waiting(0)


def _versions() -> tuple[Message, Message, Message]:
    """Seat 0's join, and two versions of its event 2 (a fork)."""
    join0 = event(0, 1, Join((0, 0)), None, 1)
    return join0, event(0, 2, Leave((1, 0)), join0, 2), event(0, 2, Leave((1, 0)), join0, 3)


def test_a_version_given_up_is_one_half_of_a_proof_when_the_other_comes() -> None:
    """Every way a feed gives a version up keeps it (§9.4, "A version given up"): a held
    event cut off (:meth:`Feeds.truncate`), a waiting one off the chain that counts (refused
    in :meth:`Feeds.ready`, or forgotten by :meth:`Feeds.follow`). The other version, come
    later, gets it back once; the same version gets nothing."""
    join0, mine, other = _versions()
    held = feeds()
    held.feeds[0] = [join0, mine]
    assert held.truncate(0, 1)
    refused = feeds()
    refused.feeds[0] = [join0]
    refused.required[0] = {2: other.id[:ID_PREFIX]}
    refused.hold(0, mine, Leave((1, 0)), Source.NETWORK)
    assert [type(step) for step in deliver_all(refused)] == [Refusal]
    forgotten = feeds()
    forgotten.feeds[0] = [join0]
    forgotten.hold(0, mine, Leave((1, 0)), Source.NETWORK)
    assert forgotten.follow(0, {2: other.id[:ID_PREFIX]}) is None and not forgotten.waiting(0)
    for store in (held, refused, forgotten):
        assert store.given_up(0, other) is mine
        assert store.given_up(0, other) is None  # (taken: proven once)
    again = feeds()
    again.feeds[0] = [join0, mine]
    again.truncate(0, 1)
    assert again.given_up(0, mine) is None and again.gone == {}  # the same event: no proof


def test_the_earliest_version_given_up_is_kept_one_a_feed() -> None:
    join0, mine, other = _versions()
    later = event(0, 3, Leave((1, 0)), mine, 4)
    store = feeds()
    store.feeds[0] = [join0, mine, later]
    store.truncate(0, 2)  # event 3 given up
    store.truncate(0, 1)  # then event 2: the earlier one is kept
    assert store.gone == {0: mine}
    store.feeds[0] = [join0, other, event(0, 3, Leave((1, 0)), other, 5)]
    store.truncate(0, 2)  # event 2 is held again: the entry for it no longer matters
    assert store.gone[0].seq == 3


def test_chain_problem_names_a_wrong_predecessor_and_a_time_below_the_frontier() -> None:
    store = feeds()
    join0 = event(0, 1, Join((0, 0)), None, 5)
    store.feeds[0].append(join0)
    fork = event(0, 1, Join((0, 0)), None, 7)  # another version of event 1
    stray = event(0, 2, Leave((1, 0)), fork, 8)  # follows that one, not ours
    problem = store.chain_problem(0, stray, Leave((1, 0)), Source.NETWORK, {})
    assert problem is not None and problem[0] is ChainCode.BROKEN_CHAIN
    assert "does not follow" in problem[1]
    early = event(1, 1, Join((1, 0)), None, 5)  # holds join0, timed no higher
    problem = store.chain_problem(1, early, Join((1, 0)), Source.NETWORK, {})
    assert problem is not None and problem[0] is ChainCode.BROKEN_CHAIN
    assert "not above the events it has seen" in problem[1]
    # Read back from our own log, its times were checked when it first came.
    assert store.chain_problem(1, early, Join((1, 0)), Source.LOG, {}) is None


def test_contradiction_tells_a_fork_from_a_lie_about_time() -> None:
    store = feeds()
    join0 = event(0, 1, Join((0, 0)), None, 4)
    store.feeds[0].append(join0)
    other_head = Beat(1, b"\x07" * 32, (1, 0))
    assert store.contradiction(0, 9, other_head) == Contradiction(None)
    # "Nothing of mine past event 0 up to time 4", yet event 1 is timed 4: the lie and proof.
    assert store.contradiction(0, 4, Beat(0, None, (0, 0))) == Contradiction(join0)
    assert store.contradiction(0, 3, Beat(0, None, (0, 0))) is None


def test_a_clock_lie_is_a_new_proof_once_and_forks_the_feed_there() -> None:
    membership = Membership(1, 2, 0.0, SilenceTimers(5.0, 30.0, 60.0, 64))
    join0 = event(0, 1, Join((0, 0)), None, 4)
    beat = decode_message(
        encode_message(
            AUTHOR[0],
            game_id=SPEC.game_id,
            seq=0,
            prev=None,
            lamport=4,
            kind=Kind.BEAT,
            body=encode_body(Beat(0, None, (0, 0))),
        ),
        game_id=SPEC.game_id,
    )
    assert membership.proof.clock_lie(0, beat, join0)
    assert membership.proof.forked_at == {0: 1}
    assert not membership.proof.clock_lie(0, beat, join0)  # proven already: nothing to relay again
    assert membership.fork_vote(0, 1, 1, 0, recovering=False) == 0  # counts nothing past it
    assert membership.fork_vote(0, 1, 1, 0, recovering=False) is None  # voted already


def test_recovery_is_finished_only_when_nobody_holds_more_of_ours() -> None:
    recovery = Recovery(0, 2, 3, 0.0)
    claimed = [(3, 0), (5, 0)]  # seat 1 said it holds five of ours
    assert recovery.finished(4, claimed, ()) is None
    assert recovery.finished(5, claimed, ()) == Recovered(3, 5, (1,))


def test_a_gap_its_source_left_unanswered_is_asked_of_another_member_that_announces_it() -> None:
    """Gap repair asks whoever announced the most of a feed; once that member was asked for
    the next event and it has not come, another member announcing it is asked instead, even
    announcing less (docs/protocol.md §9.2, *an event past the end, withheld*: the liar
    announced its head one past the event it withheld, and was asked for good)."""
    liar, other = b"L" * 32, b"R" * 32
    feeds = Feeds(2, want_interval=0.05, want_delay=0.02, max_want=64)
    assert not feeds.gap(1, 2, liar, 0.0)  # (the liar: its head one past the event, 1)
    assert not feeds.gap(1, 1, other, 0.001)  # (another member holds the event)
    assert feeds.due(0.03) == [(1, 2, liar)]  # the most announced, first
    assert feeds.want(1, 2, liar, 0.03) == (1, 2)
    # Nothing came: the liar's next beat reopens the gap, then the other member announces it.
    assert not feeds.gap(1, 2, liar, 0.25)
    assert not feeds.gap(1, 1, other, 0.26)
    assert feeds.due(0.3) == [(1, 2, other)]
    assert feeds.want(1, 2, other, 0.3) == (1, 2)
    # And the other way back, if that one did not answer either: no member is asked for good.
    assert not feeds.gap(1, 2, other, 0.5)
    assert not feeds.gap(1, 2, liar, 0.51)
    assert feeds.due(0.55) == [(1, 2, liar)]
    # A source asked for an earlier event that has come since is kept (nothing was missed).
    fresh = Feeds(2, want_interval=0.05, want_delay=0.02, max_want=64)
    fresh.asked[1] = (0, liar)
    assert not fresh.gap(1, 2, liar, 0.0)
    assert not fresh.gap(1, 1, other, 0.001)
    assert fresh.due(0.03) == [(1, 2, liar)]
