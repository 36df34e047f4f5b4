"""A leap in Lamport time is judged by the event and the events it names alone, never by the
receiver's clock (docs/protocol.md §5.3, §4.5 ``clock_jump``; session 39).

Until session 39 a member refused any message timed more than 2^32 past its *own* clock, as
it came: two honest members holding the same event and its causal past could answer
differently (one whose clock had followed a chain of steps, each under 2^32, took what one
that had missed the steps refused for good: ``tests/test_sim_liars_five.py``, seed 29). Now
an event is refused as a ``clock_jump`` when its turn comes, if it is timed more than
``MAX_CLOCK_JUMP`` past 1 + the latest event its frontier names (``Feeds.chain_problem``);
an early one waits for its past; a beat's time binds its author alone and is never refused.

Two copies of one member (seat 0 of a fresh three-seat game, before any play) receive the
same signed events, seat 1's and seat 2's, forged with their real keys: one copy has followed
seat 1's steps (its clock nearly 2^33 ahead), the other has not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from peer_helpers import PeerNetwork, beat_of, forge, snapshot

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Commit,
    Drop,
    DropReason,
    Join,
    Want,
    held_ids,
    parse_body,
)
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import EnvelopeCache, Kind, Message, decode_message
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP, unknown_versions, version_time
from p2p_nertz.protocol.outbox import BEAT_LEAD, Outbox
from p2p_nertz.protocol.peer import Peer, Rejected
from p2p_nertz.protocol.proofs import VERSION_ASKS
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.sim.liar_games import game as liar_game
from p2p_nertz.sim.liar_games import simulate as liar_simulate
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.logfiles import log_file, log_records

RECEIVER, STEPPER, OTHER = 0, 1, 2


def _jumps(effects: list[object]) -> list[Rejected]:
    return [e for e in effects if isinstance(e, Rejected) and e.reason == "clock_jump"]


def _as_session_42(net: PeerNetwork, voter: Peer, vote: Message, lamport: int) -> Message:
    """``voter``'s ``vote`` re-signed, its body unchanged, at ``lamport``: the time a voter
    whose clock took the leaps it holds whole as they came (the rule until session 42) gave
    it. Since session 43 a clock takes an event far ahead whole only once every member still
    in announced holding it (§5.3), and a vote counts what it announced: an honest voter
    times such a vote low (checked by the caller). A receiver's verdict is the author's rule
    alone, never its clock: the vote as session 42 timed it is judged as it was."""
    body = parse_body(vote.kind, vote.body, len(voter.spec.members))
    assert isinstance(body, Drop)
    wire = forge(
        voter, net.identities[RECEIVER], body, seq=vote.seq, frontier=body.frontier, lamport=lamport
    )
    return decode_message(wire)


def _receivers() -> tuple[PeerNetwork, Peer, Peer, list[bytes]]:
    """Two copies of seat 0: ``ahead`` holds seat 1's three events, each timed just under
    2^32 past the one before, and seat 2's beat announcing them (so every member holds them,
    and its clock took them whole: nearly 2^33 ahead, §5.3, session 43), ``behind`` only the
    first. And seat 1's three events."""
    net = PeerNetwork(3, seed=0)
    ahead, behind = net.clone(RECEIVER), net.clone(RECEIVER)
    steps = [forge(ahead, net.identities[STEPPER], Join(()))]
    ahead.feed(steps[0], 0.0)
    behind.feed(steps[0], 0.0)
    for _ in range(2):
        top = decode_message(steps[-1]).lamport  # (the latest event it names: its own)
        steps.append(
            forge(ahead, net.identities[STEPPER], Join(()), lamport=top + MAX_CLOCK_JUMP - 1)
        )
        assert _jumps(ahead.feed(steps[-1], 0.0)) == []  # (within the bound: taken)
    assert ahead.clock < MAX_CLOCK_JUMP  # (as beats: seat 2 announced none of them yet)
    ahead.feed(beat_of(ahead, net.identities[OTHER], 2), 0.0)  # (seat 2 holds them too)
    assert ahead.held(STEPPER) == 3 and behind.held(STEPPER) == 1
    assert ahead.clock - behind.clock > MAX_CLOCK_JUMP
    return net, ahead, behind, steps


def test_clock_leaps_the_same_event_has_the_same_verdict_at_clocks_2_32_apart() -> None:
    net, ahead, behind, _ = _receivers()
    # Seat 2's first event names seat 0's join and seat 1's first event only: both copies
    # hold that past, and its latest time.
    named = (1, 1, 0)
    top = max(behind.events(RECEIVER)[0].lamport, behind.events(STEPPER)[0].lamport)
    leap = forge(
        behind, net.identities[OTHER], Join(()), frontier=named, lamport=top + 2 + MAX_CLOCK_JUMP
    )
    for peer in (ahead, behind):
        before = snapshot(peer)
        (jump,) = _jumps(peer.feed(leap, 0.0))  # (the copy ahead took it before session 39)
        assert jump.author == net.identities[OTHER].peer_id and "far past" in jump.detail
        assert snapshot(peer) == before and peer.held(OTHER) == 0
    # One tick less is no leap: both take it.
    step = forge(
        behind, net.identities[OTHER], Join(()), frontier=named, lamport=top + 1 + MAX_CLOCK_JUMP
    )
    for peer in (ahead, behind):
        assert _jumps(peer.feed(step, 0.0)) == []
        assert peer.held(OTHER) == 1


def test_clock_leaps_a_member_that_missed_the_steps_takes_them_late_as_the_others_did() -> None:
    net, ahead, behind, steps = _receivers()
    # The copy behind gets the last step first: far past its clock, it waits for its past
    # (it was refused for good before session 39), and comes in behind the step it names.
    assert _jumps(behind.feed(steps[2], 0.0)) == [] and behind.held(STEPPER) == 1
    assert _jumps(behind.feed(steps[1], 0.0)) == []
    assert behind.held(STEPPER) == 3
    assert [m.id for m in behind.events(STEPPER)] == [m.id for m in ahead.events(STEPPER)]
    # Seat 2's event naming the last step is taken alike, at any time up to the bound.
    top = ahead.events(STEPPER)[2].lamport
    event = forge(ahead, net.identities[OTHER], Join(()), lamport=top + 1 + MAX_CLOCK_JUMP)
    for peer in (ahead, behind):
        assert _jumps(peer.feed(event, 0.0)) == [] and peer.held(OTHER) == 1


def test_clock_leaps_a_beat_far_ahead_is_taken_everywhere_and_moves_no_clock_past_the_lead() -> (
    None
):
    net, ahead, behind, _ = _receivers()
    far = 1 << 62  # (far past every clock: its author's word on its own feed alone)
    for peer in (ahead, behind):
        top = max(m.lamport for s in range(3) for m in peer.events(s))
        effects = peer.feed(beat_of(peer, net.identities[OTHER], far, Kind.BEAT), 0.0)
        assert [e for e in effects if isinstance(e, Rejected)] == []
        assert top < peer.clock <= top + max(BEAT_LEAD, 8 * peer.config.clock_reserve)


def test_clock_leaps_an_event_we_do_not_name_moves_our_clock_only_as_a_beat_does() -> None:
    # What we sign next names no more of a member's feed than our vote, nor past the cut of
    # its drop (§5.1): a step past there taken whole into our clock would time our next event
    # more than the bound past what it names, and every member would refuse it (seed 29's
    # honest members, their clocks moved by a liar's withdrawals past its cut).
    net = PeerNetwork(3, seed=0)
    peer = net.peers[RECEIVER]
    outbox = Outbox(
        net.identities[RECEIVER],
        peer.spec.game_id,
        peer.spec.peer_ids,
        0.0,
        beat_interval=0.2,
        ack_delay=0.01,
        clock_reserve=1000,
        envelopes=EnvelopeCache(),
    )
    outbox.take_event(40)
    far = 40 + MAX_CLOCK_JUMP - 1
    outbox.take_event(far, named=False)
    assert (outbox.clock, outbox.events_top) == (40 + outbox.lead, 40)
    outbox.take_event(far)  # (named: readmitted, our vote withdrawn, ours naming it)
    assert (outbox.clock, outbox.events_top) == (far, far)


@pytest.mark.parametrize(("seed", "players"), [(9, 2), (8, 3)])
def test_clock_leaps_the_audit_refuses_the_leap_every_peer_refused(seed: int, players: int) -> None:
    # A real game of the lie fuzzer (``soak.py --liars --lie lamport_leap``, seeds 9 at two
    # players, 8 at three): the liar's event leaping past what it names is refused by every
    # honest peer, which never delivers it nor what follows it in the liar's feed. The audit
    # of every log names that very event (until session 40 it folded it and named nothing:
    # the peers' verdict, not the audit's) and counts nothing of the liar's feed from it on.
    config, liars = liar_game(seed, players=(players, players), lies=(Lie.LAMPORT_LEAP,))
    run = liar_simulate(dataclasses.replace(config, record_effects=True), liars)
    result, liar = run.result, liars[0].seat
    assert result.violations == [] and result.audit is not None
    honest = [p for seat, p in enumerate(result.peers) if p is not None and seat != liar]
    refused = {
        (seat, e.detail.split()[2])  # (the event's Lamport time: "Lamport time T is far past")
        for _, seat, e in result.effects
        if isinstance(e, Rejected) and e.reason == "clock_jump"
    }
    jump = next(v for v in result.audit.violations if v.kind is FindingKind.CLOCK_JUMP)
    assert jump.seat == liar and jump.seq is not None
    assert refused == {(p.seat, jump.found) for p in honest}
    assert all(p.held(liar) == jump.seq - 1 for p in honest)
    assert result.audit.state is not None
    assert max(s for s, _ in result.audit.state.counted_ids.items(liar)) < jump.seq


def _a_fork_at_the_brink() -> tuple[PeerNetwork, Peer, Peer, Peer, Message, bytes]:
    """Seat 2 (a liar) signs its second event, a commit, in two versions: ``brink``, timed
    at the bound itself past the events it names (``1 + MAX_CLOCK_JUMP`` past them: taken
    everywhere), and another at the next tick. Seat 0's ``voter`` gets both (it proves the
    fork and votes, counting seat 2's join), seat 0's ``plain`` copy and seat 1's ``judge``
    ``brink`` only. Returns them, the vote and the other version."""
    net = PeerNetwork(3, seed=0)
    voter, plain, judge = net.clone(RECEIVER), net.clone(RECEIVER), net.clone(STEPPER)
    for peer in (voter, plain):
        peer.feed(judge.events(STEPPER)[0].wire, 0.0)
    judge.feed(voter.events(RECEIVER)[0].wire, 0.0)
    join = forge(voter, net.identities[OTHER], Join(()))
    for peer in (voter, plain, judge):
        assert _jumps(peer.feed(join, 0.0)) == []
    top = max(m.lamport for s in range(3) for m in voter.events(s))
    brink, other = (
        forge(voter, net.identities[OTHER], Commit((), 1, b * 32, b * 32), lamport=lamport)
        for b, lamport in ((b"a", top + 1 + MAX_CLOCK_JUMP), (b"b", top + 1))
    )
    for peer in (voter, plain, judge):
        assert _jumps(peer.feed(brink, 0.0)) == [] and peer.held(OTHER) == 2
        # (taken as a beat: not every member announced it, §5.3, session 43)
        assert peer.clock <= top + MAX_CLOCK_JUMP
    voter.feed(other, 0.0)
    honest = voter.events(RECEIVER)[-1]
    assert honest.lamport <= top + MAX_CLOCK_JUMP  # (names its join: timed in bounds)
    vote = _as_session_42(net, voter, honest, decode_message(brink).lamport + 1)
    body = parse_body(vote.kind, vote.body, 3)
    assert isinstance(body, Drop) and body.seat == OTHER and body.frontier[OTHER] == 1
    return net, voter, plain, judge, vote, other


def test_clock_leaps_a_vote_below_a_leap_its_voter_took_is_not_refused() -> None:
    # Corner (1): the voter took the brink whole into its clock (it named it), then proved
    # the fork and voted counting seat 2's join only: its vote names nothing timed within
    # 2^32 of its clock, and every member refused it until session 40, an honest member held
    # back. (Since session 43 its clock takes the brink as a beat and it times the vote in
    # bounds; the vote judged here is as the clock that took it whole timed it.) A vote on
    # proof may now lead what it names by the bound once more (the fork's version it held,
    # itself at most the bound past what the vote names); no more, and no other event may.
    net, _, _, judge, vote, _ = _a_fork_at_the_brink()
    body = parse_body(vote.kind, vote.body, 3)
    assert isinstance(body, Drop)
    top = max(judge.events(s)[f - 1].lamport for s, f in enumerate(body.frontier) if f)
    assert vote.lamport > judge.events(OTHER)[1].lamport > top + MAX_CLOCK_JUMP
    wires = sorted((m for s in range(3) for m in judge.events(s)), key=lambda m: m.lamport)
    farthest = top + 2 * (1 + MAX_CLOCK_JUMP)
    liars = {
        "past the doubled bound": forge(
            judge, net.identities[RECEIVER], body, frontier=body.frontier, lamport=farthest + 1
        ),
        "a vote not on proof": forge(
            judge,
            net.identities[RECEIVER],
            dataclasses.replace(body, reason=DropReason.SILENT, fork_seq=0, proof=()),
            frontier=body.frontier,
            lamport=vote.lamport,
        ),
    }
    for what, wire in liars.items():
        copy = net.clone(STEPPER)
        for message in wires:
            copy.feed(message.wire, 0.0)
        assert len(_jumps(copy.feed(wire, 0.0))) == 1, what
        assert copy.held(RECEIVER) == 1, what
    at_bound = forge(
        judge, net.identities[RECEIVER], body, frontier=body.frontier, lamport=farthest
    )
    assert _jumps(judge.feed(at_bound, 0.0)) == [] and judge.held(RECEIVER) == 2


def test_clock_leaps_an_event_naming_a_forked_brink_has_one_verdict() -> None:
    # Corner (2): the judge, which holds the brink and never saw the fork, signs a commit
    # naming it, timed one above it. The plain copy takes it; the voter, which proved seat
    # 2 forked at that seq, left the brink out of what the commit names (it may be the other
    # version, §9.4) and refused it as a leap until session 40: two verdicts on one signed
    # event. Now a forked entry counts the version the frontier names by id, as the audit's.
    # A copy of seat 0 that holds the other version and proved the fork by the brink (the
    # brink in its proof alone) takes it too, reading the brink's time from the proof.
    net, voter, plain, judge, _, other = _a_fork_at_the_brink()
    flipped = net.clone(RECEIVER)
    flipped.feed(judge.events(STEPPER)[0].wire, 0.0)
    for message in (forge(flipped, net.identities[OTHER], Join(())), other):
        assert _jumps(flipped.feed(message, 0.0)) == []
    brink = judge.events(OTHER)[1]
    flipped.feed(brink.wire, 0.0)
    assert flipped.held(OTHER) == 2 and flipped.events(OTHER)[1].id != brink.id  # (proven)
    event = forge(
        judge,
        net.identities[STEPPER],
        Commit((), 1, b"j" * 32, b"j" * 32),
        lamport=brink.lamport + 1,  # (as a clock that took the brink whole timed it)
    )
    for peer in (plain, voter, flipped):
        assert _jumps(peer.feed(event, 0.0)) == [] and peer.held(STEPPER) == 2


def _a_branch_past_the_fork(
    brinks: int = 2, seats: int = 3
) -> tuple[PeerNetwork, dict[str, Peer], dict[str, bytes]]:
    """Seat 2 (a liar) forks at its second event and goes on on both branches: ``a2``, ``a3``
    ... timed as an honest author would, ``b2``, ``b3`` ... (``brinks`` of them) each at the
    brink past what it names (the fuzzer's ``brink_branch``). Seat 0's ``voter`` and seat 1's
    ``judge`` hold the brink branch; seat 0's ``receiver`` and ``rival`` (seat 1's, or seat
    3's at four seats) hold the other branch and proved the fork at seq 2 (``b2`` in their
    proof): they know nothing of ``b3`` on. Returns the copies and the events."""
    net = PeerNetwork(seats, seed=0)
    peers = {
        "voter": net.clone(RECEIVER),
        "receiver": net.clone(RECEIVER),
        "judge": net.clone(STEPPER),
        "rival": net.clone(3 if seats > 3 else STEPPER),
    }
    joins = [peers["voter"].events(RECEIVER)[0].wire, peers["judge"].events(STEPPER)[0].wire]
    for peer in peers.values():
        for join in joins:
            peer.feed(join, 0.0)
    join = forge(peers["voter"], net.identities[OTHER], Join(()))
    for peer in peers.values():
        assert _jumps(peer.feed(join, 0.0)) == []
    top = max(m.lamport for s in range(3) for m in peers["voter"].events(s))
    events: dict[str, bytes] = {}
    for seq in range(2, brinks + 2):
        commits = {
            branch: Commit((), seq - 1, *[f"{branch}{seq}".encode().ljust(32, b".")] * 2)
            for branch in "ab"
        }
        events[f"a{seq}"] = forge(peers["receiver"], net.identities[OTHER], commits["a"])
        events[f"b{seq}"] = forge(
            peers["judge"],
            net.identities[OTHER],
            commits["b"],
            lamport=top + 1 + MAX_CLOCK_JUMP,  # (the brink past the latest event it names)
        )
        top = decode_message(events[f"b{seq}"]).lamport
        for name, peer in peers.items():
            branch = "a" if name in ("receiver", "rival") else "b"
            assert _jumps(peer.feed(events[f"{branch}{seq}"], 0.0)) == []
            assert peer.held(OTHER) == seq
    for name in ("receiver", "rival"):
        peers[name].feed(events["b2"], 0.0)  # (proven: b2 in its proof alone)
        assert peers[name].events(OTHER)[-1].wire == events[f"a{brinks + 1}"]
    return net, peers, events


def _refused_after_three_asks(
    net: PeerNetwork, asker: Peer, holder: Peer, lie: bytes, seat: int
) -> None:
    """``lie`` fed to ``asker`` six times: refused as a leap each time, its unknown version
    asked of ``holder`` :data:`VERSION_ASKS` times in all (then no more), ``seat``'s feed held
    at 1 throughout."""
    asks = 0
    for step in range(6):
        effects = asker.feed(lie, float(step))
        assert len(_jumps(effects)) == 1
        asks += len(_answered(net, asker, holder, effects + asker.tick(step + 0.5), step))
        assert asker.held(seat) == 1
    assert asks == VERSION_ASKS


def _answered(
    net: PeerNetwork, asker: Peer, holder: Peer, effects: Sequence[object], now: float
) -> list[tuple[int, int]]:
    """The wants among ``asker``'s ``effects`` for seat 2's events, each given to ``holder``,
    and what ``holder`` sends back of seat 2's feed given to ``asker`` (its beats are not:
    the forged events below were never signed by its own clock). Returns the (first, last)
    asked."""
    asked = []
    for effect in effects:
        if not isinstance(effect, Send):
            continue
        want = decode_message(effect.data)
        if want.kind is not Kind.WANT:
            continue
        body = parse_body(want.kind, want.body, 3)
        assert isinstance(body, Want)
        if body.seat != OTHER:
            continue
        asked.append((body.first, body.last))
        for answer in holder.feed(effect.data, now):
            if isinstance(answer, Send):
                message = decode_message(answer.data)
                if message.is_event and message.author == net.identities[OTHER].peer_id:
                    asker.feed(answer.data, now)
    return asked


def test_clock_leaps_an_event_naming_a_branch_past_the_fork_is_taken_once_its_version_is() -> None:
    # The judge, which never saw the fork, signs a commit naming b3, timed one above it:
    # the voter, which holds b3 too, takes it. The receiver knows b2 (its proof) but not b3,
    # the version named: it counts nothing of seat 2's past its join and refuses the commit
    # as a leap (until session 41, for good: two verdicts on one signed event, the audit
    # reading b3 in the logs taking it too). Now it asks everyone for seat 2's event 3: the
    # judge's answer, another version of one it holds, is kept as a proof's pair, and the
    # commit, fetched again, is judged from it and taken.
    net, peers, events = _a_branch_past_the_fork()
    event = forge(
        peers["judge"],
        net.identities[STEPPER],
        Commit((), 1, b"j" * 32, b"j" * 32),
        lamport=decode_message(events["b3"]).lamport + 1,  # (as a clock that took b3 whole)
    )
    assert _jumps(peers["voter"].feed(event, 0.0)) == [] and peers["voter"].held(STEPPER) == 2
    receiver = peers["receiver"]
    assert len(_jumps(receiver.feed(event, 0.0))) == 1 and receiver.held(STEPPER) == 1
    assert _answered(net, receiver, peers["judge"], receiver.tick(1.0), 1.0) == [(3, 3)]
    assert _jumps(receiver.feed(event, 1.0)) == [] and receiver.held(STEPPER) == 2


def test_clock_leaps_a_version_named_that_nobody_holds_is_asked_for_a_few_times_and_refused() -> (
    None
):
    # A liar's commit naming seat 2's event 3 by a made-up id, timed as if it were b3: no
    # member holds that version, so the asks end (three) and the commit is refused each time
    # it comes, as before session 41: no leap is taken on a version nobody can show.
    net, peers, events = _a_branch_past_the_fork()
    judge, receiver = peers["judge"], peers["receiver"]
    ids = list(held_ids([judge.events(s) for s in range(3)], (1, 1, 3)))
    ids[OTHER] = b"\x00" * len(ids[OTHER])
    lie = forge(
        judge,
        net.identities[STEPPER],
        Commit((), 1, b"j" * 32, b"j" * 32),
        frontier_ids=tuple(ids),
        lamport=decode_message(events["b3"]).lamport + 1,
    )
    _refused_after_three_asks(net, receiver, judge, lie, STEPPER)


def _vote_on_the_fork(
    net: PeerNetwork, peers: dict[str, Peer], events: dict[str, bytes]
) -> tuple[Message, Drop]:
    """The voter, holding the brinks and having signed nothing since its join, proves the fork
    at seq 2 (``a2`` comes) and votes counting seat 2's join, naming the last brink as what it
    took. Its clock took the brinks as beats (§5.3, session 43: no member announced them), so
    it times its vote in bounds of its join; the vote returned is that body as a voter whose
    clock took the brinks whole signed it (the rule until session 42), timed past the last
    brink (:func:`_as_session_42`). Returns it and its body."""
    voter = peers["voter"]
    voter.feed(events["a2"], 0.0)
    honest = voter.events(RECEIVER)[-1]
    body = parse_body(honest.kind, honest.body, len(voter.spec.members))
    assert isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION
    last = voter.events(OTHER)[-1]
    assert honest.lamport <= 1 + MAX_CLOCK_JUMP  # (its frontier names joins timed 1)
    vote = _as_session_42(net, voter, honest, last.lamport + 1)
    assert body.frontier[OTHER] == 1 and vote.lamport > last.lamport
    assert (body.took_seq, body.took_id) == (last.seq, last.id[:ID_PREFIX])  # (what it took)
    return vote, body


@pytest.mark.parametrize(("brinks", "seats"), [(2, 3), (3, 3), (2, 4)])
def test_clock_leaps_a_vote_below_brinks_its_voter_took_is_taken_by_every_member(
    brinks: int, seats: int
) -> None:
    # Two (three) brink events taken whole past the fork: the vote leads what it names by
    # two (three) bounds and more, past the fixed allowance of session 40 (one brink), and
    # every member refused it until session 42 (an honest voter held back, or dropped). It
    # now names the last event it took (``took_seq``, ``took_id``) and may lead from it: the
    # judge, which holds that event, takes the vote at once; the rival, holding the other
    # branch, refuses it, asks everyone for the event named (as for a version a frontier
    # names, session 41), keeps the voter's answer as a proof's pair, and takes the vote
    # fetched again. At four seats too (the rival seat 3). Since session 42 a version
    # fetched counts once what it names is known (§5.3, *a version fetched*): with three
    # brinks the rival asks for b4, then for b3 it names, and takes the vote then.
    net, peers, events = _a_branch_past_the_fork(brinks, seats)
    vote, _ = _vote_on_the_fork(net, peers, events)
    judge, rival = peers["judge"], peers["rival"]
    assert _jumps(judge.feed(vote.wire, 0.0)) == [] and judge.held(RECEIVER) == 2
    for seq in range(brinks + 1, 2, -1):
        assert len(_jumps(rival.feed(vote.wire, seq))) == 1 and rival.held(RECEIVER) == 1
        assert _answered(net, rival, peers["voter"], rival.tick(seq + 0.5), seq) == [(seq, seq)]
    assert _jumps(rival.feed(vote.wire, 9.0)) == [] and rival.held(RECEIVER) == 2


def _lie(net: PeerNetwork, judge: Peer, body: Drop, lamport: int, **took: Any) -> bytes:
    """The voter's vote re-signed with ``took`` changed (a liar's), timed ``lamport``."""
    lie = dataclasses.replace(body, **took)
    return forge(judge, net.identities[RECEIVER], lie, frontier=lie.frontier, lamport=lamport)


@pytest.mark.parametrize("seats", [3, 4])
def test_clock_leaps_a_vote_leads_what_it_took_by_the_bound_and_no_more(seats: int) -> None:
    # The field is checked against the signed event it names: a vote may lead the event it
    # took by the bound (as any event the latest it names), at every member holding it; one
    # tick more is a leap, refused alike by the judge (on the branch named) and the rival
    # (the branch fetched).
    net, peers, events = _a_branch_past_the_fork(3, seats)
    _, body = _vote_on_the_fork(net, peers, events)
    took = decode_message(events["b4"]).lamport
    for name in ("judge", "rival"):
        holder = peers[name]
        if name == "rival":  # (other versions of its a3, a4: a proof's pairs)
            for wire in (events["b3"], events["b4"]):
                holder.feed(wire, 0.0)
        past = _lie(net, holder, body, took + 2 + MAX_CLOCK_JUMP)
        assert len(_jumps(holder.feed(past, 0.0))) == 1 and holder.held(RECEIVER) == 1, name
        at = _lie(net, holder, body, took + 1 + MAX_CLOCK_JUMP)
        assert _jumps(holder.feed(at, 0.0)) == [] and holder.held(RECEIVER) == 2, name


@pytest.mark.parametrize(
    "took", [{"took_id": b"\x00" * ID_PREFIX}, {"took_seq": 9, "took_id": b"\x00" * ID_PREFIX}]
)
def test_clock_leaps_a_vote_naming_an_event_nobody_holds_is_asked_about_and_refused(
    took: dict[str, Any],
) -> None:
    # A liar's vote timed as the honest one, but naming as taken a version of seat 2's event
    # 3 nobody holds (a made-up id), or more than seat 2 signed (event 9): it gains nothing
    # from the field. The judge asks everyone for it, three times (no version comes: the
    # voter's event 3 is another, held already), and refuses the vote each time it comes.
    net, peers, events = _a_branch_past_the_fork()
    vote, body = _vote_on_the_fork(net, peers, events)
    judge, voter = peers["judge"], peers["voter"]
    lie = _lie(net, judge, body, vote.lamport, **took)
    _refused_after_three_asks(net, judge, voter, lie, RECEIVER)


@pytest.mark.parametrize("brinks", [2, 3])
def test_clock_leaps_the_audit_judges_what_a_vote_took_as_the_members_do(brinks: int) -> None:
    # The audit of the judge's log (the brink branch, the vote) takes the honest vote, naming
    # what it took (until session 42 it named the vote ``clock_jump``, as every member
    # refused it); the same log with the vote naming a made-up version instead, timed alike,
    # has that vote named ``clock_jump``: no log holds what it says it took.
    net, peers, events = _a_branch_past_the_fork(brinks)
    vote, body = _vote_on_the_fork(net, peers, events)
    judge = peers["judge"]
    lie = _lie(net, judge, body, vote.lamport, took_id=b"\x00" * ID_PREFIX)
    judge.feed(vote.wire, 0.0)
    held = sorted((m for s in range(3) for m in judge.events(s)), key=lambda m: m.lamport)
    for wire, refused in ((vote.wire, False), (lie, True)):
        wires = [wire if m.id == vote.id else m.wire for m in held]
        data = log_file(net.spec, STEPPER, log_records(net.spec, STEPPER, wires))
        report = audit([LogSource.from_bytes("p1.log", data)])
        jumps = [(v.seat, v.seq) for v in report.violations if v.kind is FindingKind.CLOCK_JUMP]
        assert jumps == ([(RECEIVER, vote.seq)] if refused else []), refused


def test_clock_leaps_a_watcher_judges_a_version_named_from_the_one_pushed_to_it() -> None:
    # A watcher is pushed both branches (every member pushes what it logs): holding the other
    # branch, it refused the judge's commit naming b3 and the vote naming b3 as taken, which
    # every member takes (until session 42: ``soak.py --liars --lie brink_branch`` seed 48,
    # five players, the watcher stalled in play). It now keeps the other version pushed to
    # it and judges an event naming it by id from its time, as a member from a proof.
    net, peers, events = _a_branch_past_the_fork()
    vote, _ = _vote_on_the_fork(net, peers, events)
    judge = peers["judge"]
    commit = forge(
        judge,
        net.identities[STEPPER],
        Commit((), 1, b"j" * 32, b"j" * 32),
        lamport=decode_message(events["b3"]).lamport + 1,  # (as a clock that took b3 whole)
    )
    watcher = Spectator(net.spec)
    joins = [judge.events(s)[0].wire for s in range(3)]
    for wire in (*joins, events["a2"], events["a3"], events["b2"], events["b3"], commit, vote.wire):
        watcher.feed(wire)
    assert watcher.rejected == 0
    assert [m.wire for m in watcher.events(STEPPER)] == [joins[STEPPER], commit]
    assert [m.id for m in watcher.events(RECEIVER)] == [m.id for m in judge.events(RECEIVER)] + [
        vote.id
    ]


@pytest.mark.parametrize(
    ("took", "why"),
    [
        ({"took_seq": 1}, "past what its frontier names"),  # (its join: named already)
        ({"took_seq": 0}, "first 8 id bytes, or none"),  # (an id with no seq)
        ({"took_id": b"\x00" * 7}, "first 8 id bytes, or none"),
    ],
)
def test_clock_leaps_a_vote_whose_took_is_malformed_is_refused_as_a_bad_body(
    took: dict[str, Any], why: str
) -> None:
    net, peers, events = _a_branch_past_the_fork()
    vote, body = _vote_on_the_fork(net, peers, events)
    judge = peers["judge"]
    before = snapshot(judge)
    effects = judge.feed(_lie(net, judge, body, vote.lamport, **took), 0.0)
    (bad,) = [e for e in effects if isinstance(e, Rejected)]
    assert bad.reason == "bad_body" and why in bad.detail
    assert snapshot(judge) == before


def _a_version_shown_on_request(
    seats: int,
) -> tuple[PeerNetwork, list[Peer], bytes, bytes]:
    """Two liars: seat 2 signs its second event twice, ``a2`` timed as an honest author
    would (every member holds it) and ``far``, timed 2^33 past what it names, which it shows
    only on request; seat 1 signs a commit naming ``far`` by id, timed one above it (within
    the bound of the version it names). Returns the honest members (seat 0, and seat 3 at
    four seats), each holding the joins and ``a2``, ``far`` and the commit."""
    net = PeerNetwork(seats, seed=0)
    honest = [net.clone(s) for s in (RECEIVER, *range(3, seats))]
    liar = net.clone(STEPPER)  # (what the namer holds: the joins, then ``far``)
    joins = [net.clone(s).events(s)[0].wire for s in range(seats) if s != OTHER]
    joins.append(forge(liar, net.identities[OTHER], Join(())))
    for peer in (*honest, liar):
        for wire in joins:
            peer.feed(wire, 0.0)
    seq2 = {b: Commit((), 1, b * 32, b * 32) for b in (b"a", b"f")}
    a2 = forge(honest[0], net.identities[OTHER], seq2[b"a"])
    for peer in honest:
        assert _jumps(peer.feed(a2, 0.0)) == [] and peer.held(OTHER) == 2
    top = max(m.lamport for s in range(seats) for m in liar.events(s))
    far = forge(liar, net.identities[OTHER], seq2[b"f"], lamport=top + (1 << 33))
    frontier = [liar.held(s) for s in range(seats)]
    ids = list(held_ids([liar.events(s) for s in range(seats)], tuple(frontier)))
    frontier[OTHER], ids[OTHER] = 2, decode_message(far).id[:ID_PREFIX]
    commit = forge(
        liar,
        net.identities[STEPPER],
        Commit((), 1, b"n" * 32, b"n" * 32),
        frontier=frontier,
        frontier_ids=tuple(ids),
        lamport=decode_message(far).lamport + 1,
    )
    return net, honest, far, commit


def _asked_for(effects: Sequence[object], seats: int) -> list[tuple[int, int, int]]:
    """The wants among ``effects``: (seat, first, last)."""
    asked = []
    for effect in effects:
        if isinstance(effect, Send):
            want = decode_message(effect.data)
            if want.kind is Kind.WANT:
                body = parse_body(want.kind, want.body, seats)
                assert isinstance(body, Want)
                asked.append((body.seat, body.first, body.last))
    return asked


@pytest.mark.parametrize("seats", [3, 4])
def test_clock_leaps_a_version_fetched_is_judged_by_what_it_names_before_its_time_counts(
    seats: int,
) -> None:
    # §13 (d): the commit leaps past everything its honest receivers hold, naming a version
    # none holds: each asks for it, and the forker shows ``far`` (another version of a2: a
    # proof's pair, seat 2 proven forked). Until session 42 the commit, fetched again, was
    # judged from ``far``'s own time and taken: every honest clock leapt 2^33, on a version
    # no member would have delivered (it leaps past what it names). Now a fetched version's
    # time counts only if it is within the bound of what *it* names: the commit is refused
    # each time it comes, at every honest member, and no clock leaps.
    _, honest, far, commit = _a_version_shown_on_request(seats)
    for peer in honest:
        assert len(_jumps(peer.feed(commit, 0.0))) == 1 and peer.held(STEPPER) == 1
        assert (OTHER, 2, 2) in _asked_for(peer.tick(1.0), seats)
        peer.feed(far, 1.0)  # (the forker's answer)
        for step in range(2, 6):
            effects = peer.feed(commit, float(step)) + peer.tick(step + 0.5)
            assert len(_jumps(effects)) == 1 and peer.held(STEPPER) == 1
        assert peer.clock < MAX_CLOCK_JUMP < decode_message(far).lamport
    # A watcher pushed ``far`` (the other version of an event it holds, kept as a member
    # keeps a proof's pair) refuses the commit alike.
    watcher = Spectator(honest[0].spec)
    held = sorted((m.wire for s in range(seats) for m in honest[0].events(s)), key=_lamport)
    for wire in (*held, far, commit):
        watcher.feed(wire)
    assert watcher.rejected >= 1 and len(watcher.events(STEPPER)) == 1


@pytest.mark.parametrize("far_first", [True, False])
@pytest.mark.parametrize("seats", [3, 4])
def test_clock_leaps_the_audit_of_a_log_holding_a_version_fetched_names_a_liar_s_leap(
    seats: int, far_first: bool
) -> None:
    # A log holding both versions of seat 2's event 2 and the commit naming ``far`` (as the
    # namer's would), in either order: the audit keeps the version the commit names (a log
    # alone follows the version read last) and names it a ``clock_jump`` (it leaps past what
    # it names), and the commit a ``clock_jump`` too: a version found a leap lends no event
    # naming it its time, delivered or not (``Feed.time``, session 43), as the members
    # refuse the commit (they never deliver ``far``: ``feeds.fetched_time``). Until session
    # 43 the commit was judged from ``far``'s own time and taken: the audit blamed the
    # forker alone, the members the namer. No honest seat is named.
    net, honest, far, commit = _a_version_shown_on_request(seats)
    held = sorted((m.wire for s in range(seats) for m in honest[0].events(s)), key=_lamport)
    tail = [far, commit] if far_first else [commit, far]
    data = log_file(net.spec, RECEIVER, log_records(net.spec, RECEIVER, [*held, *tail]))
    report = audit([LogSource.from_bytes("p0.log", data)])
    jumps = [(v.seat, v.seq) for v in report.violations if v.kind is FindingKind.CLOCK_JUMP]
    assert sorted(jumps) == [(STEPPER, 2), (OTHER, 2)]
    assert {v.seat for v in report.errors} == {STEPPER, OTHER}


def _lamport(wire: bytes) -> int:
    return decode_message(wire).lamport


def test_clock_leaps_a_chain_of_kept_versions_as_long_as_a_liar_likes_is_judged_in_one_call() -> (
    None
):
    # A liar's versions kept in proofs, each naming the one below it by id (a chain the
    # fetching of session 42 follows down, one ask a link), 3,000 long: judging the top one
    # judges the chain deepest first (``feeds.deepest_first``), no call deeper than a link,
    # where a judging call a link deep ran out of Python's stack (RecursionError: a peer
    # stopped by a liar's chain). Each link leads what it names by one: the top counts.
    net = PeerNetwork(3, seed=0)
    peer = net.clone(0)
    assert peer.events(OTHER) == []
    chain: list[Message] = []
    for seq in range(1, 3001):
        below = chain[-1].id if chain else None
        wire = forge(
            peer,
            net.identities[OTHER],
            Commit((), 1, b"j" * 32, b"j" * 32),
            seq=seq,
            prev=below,
            lamport=seq,
            frontier=(0, 0, seq - 1),
            frontier_ids=(b"", b"", below[:ID_PREFIX] if below else b""),
        )
        chain.append(decode_message(wire))
    versions = {(OTHER, m.seq): (m,) for m in chain}
    feeds: list[list[Message]] = [[], [], []]
    top = chain[-1]
    named = (b"", b"", top.id[:ID_PREFIX])
    assert version_time(feeds, named, versions, OTHER, 3000) == 3000
    assert unknown_versions(feeds, 0, _naming(top), {OTHER: 1}, versions) == []


def _naming(version: Message) -> Commit:
    """A body of seat 0 naming ``version`` (of seat 2) by id."""
    return Commit((0, 0, version.seq), 1, b"j" * 32, b"j" * 32, (b"", b"", version.id[:ID_PREFIX]))
