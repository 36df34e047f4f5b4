"""A member whose final cut on another is below what it delivered, before it signed an event
naming those events (docs/protocol.md §5.3, *what the bound leaves*; §13, *a leap named by
some honest members only*, (c); session 43: reproduced, then mended).

A liar (seat 6 of seven, in the lobby) signs two commits past its join, each just under the
leap bound past the one before (each within the bound: taken), and sends them to honest seat 0
alone, as four other members (seats 2 to 5, a strict majority of seven) vote it out for
silence counting its join. Seat 0 delivers the two leaps before the votes: nothing cuts the
liar yet, so its frontier would name them. Honest seat 1 fetches them from seat 0 (any member
relays). The votes then drop the liar at 1 in both final folds, and each signs its commit: its
frontier names the liar's feed up to the cut, never past it (§5.1), and its own previous event
(its join) is timed 1. Until session 43 its clock had taken the two leaps whole as they came,
so its commit was nearly 2^33 past what it names: every member refused it as ``clock_jump``
(the two honest members each other's), and a watcher too. No scan met it (a liar timing its
leaps to the votes on it).

The mend (§5.3, *an event far ahead*): an event delivered more than the beats' lead past our
clock moves the clock as a beat does until every member still in has announced holding it
(then no cut falls below it: a voter counts at least what it announced), and is taken whole
then. Here the voters never announce the leaps: each honest clock stays in bounds, the commits
are timed in bounds of what they name, and nobody refuses them.
"""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork, forge, sign

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, Commit, Drop, DropReason, Join, encode_body
from p2p_nertz.protocol.effects import Effect, Send
from p2p_nertz.protocol.envelope import Kind, Message, decode_message
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP
from p2p_nertz.protocol.peer import Peer, Rejected
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.sim.logfiles import log_file, log_records


def _beat(peer: Peer, net: PeerNetwork, seat: int, lamport: int) -> bytes:
    """A beat of voter ``seat``: its own feed as ``peer`` holds it, the liar's (the last
    seat) to its join."""
    feeds = [peer.events(q) for q in range(net.n)]
    held = tuple(min(len(f), 1) if q == net.n - 1 else len(f) for q, f in enumerate(feeds))
    ids = tuple(feeds[q][h - 1].id[:ID_PREFIX] if h else b"" for q, h in enumerate(held))
    body = Beat(head_seq=held[seat], head_id=feeds[seat][-1].id, held=held, held_ids=ids)
    return sign(
        net.identities[seat], peer.spec, kind=Kind.BEAT, body=encode_body(body), lamport=lamport
    )


def _exchange(
    peers: dict[int, Peer], outputs: list[tuple[int, list[Effect]]], now: float
) -> list[tuple[int, Rejected]]:
    """Deliver what the honest cores send each other until nothing is left; the refusals."""
    ids = {seat: peer.spec.peer_ids[seat] for seat, peer in peers.items()}
    refused: list[tuple[int, Rejected]] = []
    queue = list(outputs)
    while queue:
        source, effects = queue.pop(0)
        for effect in effects:
            if not isinstance(effect, Send):
                continue
            for seat, peer in peers.items():
                if seat != source and effect.to in (None, ids[seat]):
                    out = peer.feed(effect.data, now)
                    refused.extend((seat, r) for r in out if isinstance(r, Rejected))
                    queue.append((seat, out))
    return refused


@pytest.mark.parametrize(("seats", "count"), [(5, 2), (7, 2), (7, 3)])
def test_clock_leaps_a_cut_below_the_leaps_a_member_took_leaves_its_next_event_in_bounds(
    seats: int, count: int
) -> None:
    """At seven seats as the module says (and with three leaps, nearly 3 * 2^32); at five,
    seat 0 alone takes the leaps (seats 1 to 3 vote), judged by a watcher. (At two to four
    seats there is no majority to vote the liar out beside a member holding its leaps.)"""
    liar = seats - 1
    honest = (0, 1) if seats > 5 else (0,)  # (real cores: seat 1 fetches the leaps from 0)
    voters = tuple(range(len(honest), liar))  # (forged: a strict majority, none holding them)
    assert len(voters) == seats // 2 + 1
    net = PeerNetwork(seats, seed=0)
    peers = {seat: net.clone(seat, inputs=1) for seat in honest}  # (each holds its own join)
    first = peers[0]
    zero = (0,) * seats
    joins = {seat: peers[seat].events(seat)[0].wire for seat in honest}
    for seat in (*voters, liar):
        joins[seat] = forge(first, net.identities[seat], Join(()), frontier=zero)
    for seat, peer in peers.items():
        for author, wire in joins.items():
            if author != seat:
                peer.feed(wire, 0.0)
    leaps: list[bytes] = []
    for b in b"abc"[:count]:  # (``count`` commits: a liar's, each leaping)
        last = decode_message(leaps[-1] if leaps else joins[liar])
        named = tuple(last.seq if q == liar else 0 for q in range(seats))
        lamport = last.lamport + MAX_CLOCK_JUMP - 1  # (within the bound: taken)
        commit = Commit((), 1, bytes([b]) * 32, bytes([b]) * 32)
        leaps.append(forge(first, net.identities[liar], commit, frontier=named, lamport=lamport))
        assert not [e for e in first.feed(leaps[-1], 0.0) if isinstance(e, Rejected)]
    assert first.clock < MAX_CLOCK_JUMP  # (as beats: not every member announced them)
    liar_join = first.events(liar)[0].id[:ID_PREFIX]
    votes = [
        forge(
            first,
            net.identities[seat],
            Drop(zero, liar, 1, DropReason.SILENT, 0, (liar_join,)),
            frontier=(1,) * seats,
            lamport=10 + i,
        )
        for i, seat in enumerate(voters)
    ]
    refused: list[tuple[int, Rejected]] = []
    now = 0.1
    for step in range(10):  # (the voters' beats, a quarter of a second apart)
        outputs = [(seat, peer.tick(now)) for seat, peer in peers.items()]
        for seat, peer in peers.items():
            if step == 0:
                outputs.extend((seat, peer.feed(vote, now)) for vote in votes)
            outputs.extend((seat, peer.feed(_beat(peer, net, v, 20 + step), now)) for v in voters)
        refused += _exchange(peers, outputs, now)
        now += 0.25
    for peer in peers.values():
        assert dict(peer.final.dropped) == {liar: 1}
        assert peer.held(liar) == 1 + count  # (seat 1 fetched the leaps from seat 0)
    # Each honest member signed its commit once the cut was final, naming the liar's feed to
    # its join: timed in bounds of that, not past the leaps its clock took as beats.
    signed: list[Message] = [m for seat in honest for m in peers[seat].events(seat)[1:]]
    assert [m.kind for m in signed] == [Kind.COMMIT] * len(honest)
    assert all(m.lamport < MAX_CLOCK_JUMP for m in signed)
    assert [(seat, r.reason) for seat, r in refused] == [], "the honest members refused each other"
    # The audit of the honest members' logs reads the same: the honest members' events taken,
    # no clock_jump named (it judges an event by what it names alone, as the members do).
    wires = [*joins.values(), *leaps, *votes, *(m.wire for m in signed)]
    logs = [
        LogSource.from_bytes(
            f"p{seat}.log", log_file(net.spec, seat, log_records(net.spec, seat, wires))
        )
        for seat in honest
    ]
    report = audit(logs)
    assert [v for v in report.violations if v.kind is FindingKind.CLOCK_JUMP] == []
    assert report.state is not None
    assert all(report.state.counted_ids.items(seat) for seat in honest)
    watcher = Spectator(net.spec)
    for wire in (*joins.values(), *votes, *(m.wire for m in signed)):
        watcher.feed(wire)
    assert watcher.rejected == 0, "the watcher refused the honest events as leaps"
