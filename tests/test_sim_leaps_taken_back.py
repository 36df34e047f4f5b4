"""A refusal as a leap taken back is no verdict the audit owes (session 44).

The fuzzer of liars holds the audit to the members' verdict on a leap: a liar an event of
which an honest peer refused as a ``clock_jump`` has a ``clock_jump`` named by the audit
(``sim.liar_games.judge_liars``, ``leaps_named_alone``). But a peer may take such a refusal
back: an event naming a version of a forked feed it does not know is refused, the version
asked for, and the event, fetched again, judged from it and taken (docs/protocol.md §5.3;
``test_clock_leaps``' branch past the fork). Until session 44 the refusal (``Rejected``)
named its author alone, so the check counted it all the same: "split blame" where the peer
and the audit agree. Now it names the event (seq and id), and a refusal whose event the
peer's feed holds in the end is taken back (``standing_leaps``).

Real peers, real signatures: the receiver refuses the judge's commit, asks, is answered,
takes it. Seat 1 (the judge) is read as the liar, the audit as naming no leap of it.
"""

from __future__ import annotations

from peer_helpers import forge
from test_clock_leaps import STEPPER, _a_branch_past_the_fork, _answered, _jumps

from p2p_nertz.protocol.bodies import Commit
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.sim.liar_games import judge_liars, standing_leaps

RECEIVER = 0  # (seat 0's copy that holds the other branch)


def _split_blame(
    receiver: Peer, jumps: set[tuple[int, int, int | None, bytes | None]]
) -> list[str]:
    """``judge_liars``' leap check of ``jumps``, seat 1 the liar, an audit naming no leap."""
    problems = judge_liars(
        [receiver, None, None],
        frozenset({STEPPER}),
        finished=True,
        time=0.0,
        report=None,
        forked=set(),
        jumps=jumps,
    )
    return [p for p in problems if p.startswith("split blame")]


def test_leap_refusal_names_the_event_and_taken_back_owes_no_audit_verdict() -> None:
    # The judge's commit naming b3, timed one above it: the receiver, which holds the other
    # branch, refuses it as a leap (``test_clock_leaps``, a branch past the fork).
    net, peers, events = _a_branch_past_the_fork()
    wire = forge(
        peers["judge"],
        net.identities[STEPPER],
        Commit((), 1, b"j" * 32, b"j" * 32),
        lamport=decode_message(events["b3"]).lamport + 1,
    )
    event = decode_message(wire)
    receiver = peers["receiver"]
    (jump,) = _jumps(receiver.feed(wire, 0.0))
    # The refusal names the event it refused, as the simulator records it.
    assert (jump.seq, jump.event_id) == (event.seq, event.id)
    assert jump.author == event.author
    jumps = {(RECEIVER, STEPPER, jump.seq, jump.event_id)}
    # Standing (the event not held): the audit owes the leap.
    assert receiver.held(STEPPER) == 1
    assert standing_leaps([receiver, None, None], jumps) == {(RECEIVER, STEPPER)}
    assert len(_split_blame(receiver, jumps)) == 1
    # Taken back: the version named is fetched, the commit comes again and is taken.
    assert _answered(net, receiver, peers["judge"], receiver.tick(1.0), 1.0) == [(3, 3)]
    assert _jumps(receiver.feed(wire, 1.0)) == [] and receiver.held(STEPPER) == 2
    assert standing_leaps([receiver, None, None], jumps) == set()
    assert _split_blame(receiver, jumps) == []
    # Another event at that seq (a version the peer never took), or no event named, or a
    # peer not known (gone): the refusal still stands, as before session 44.
    other = (RECEIVER, STEPPER, jump.seq, b"\x00" * len(event.id))
    for stands in (other, (RECEIVER, STEPPER, None, None)):
        assert standing_leaps([receiver, None, None], {stands}) == {(RECEIVER, STEPPER)}
    assert standing_leaps([None, None, None], jumps) == {(RECEIVER, STEPPER)}
