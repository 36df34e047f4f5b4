"""A fork of a shuffle event too large for a vote to carry (session 40; docs/protocol.md §9.4,
§13).

Until session 40 a vote on proof carried its proof in two messages of at most 1,500 bytes
each (session 39), in a drop of at most 4,096: a shuffle game's ``deck_stage`` is ~3.5 KB and
its ``deck_shares`` up to ~2.8 KB, so a fork of one was proven and relayed, the member's feed
capped at the fork where the other version was seen, but nobody voted: at two and three
players the table waited in its deal for good. Since session 40 a drop may be up to
``MAX_VOTE_SIZE`` (12,288 bytes), and a vote carries any message but a drop over 4,096
(``PROOF_MESSAGE_MAX``): such a fork is voted on as any other. At three and more the member
is cut below its fork, and a stage another member built on the forked one (or on such a
stage) is lost to the cut without blame: the deal starts again without the forker.

A :class:`~tests.peer_helpers.PeerNetwork` of a shuffle game, quick timers; the member's
second version of its event is the same body signed at another clock, given to one peer.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import SPEC_NOTE, FindingKind
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.protocol.bodies import PROOF_MESSAGE_MAX, Drop, DropReason, parse_body
from p2p_nertz.protocol.effects import Note
from p2p_nertz.protocol.envelope import MAX_VOTE_SIZE, Kind, Message, encode_message
from p2p_nertz.protocol.peer import Record as LogEffect
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import QUICK_TIMERS
from tests.audit_helpers import Game, Logs
from tests.peer_helpers import PeerNetwork

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _forked(players: int, kind: Kind, forker: int) -> tuple[PeerNetwork, int]:
    """A shuffle game in which ``forker`` signs a second version of its first ``kind`` event
    (given to the next seat alone), played on; the size of the forked event."""
    net = PeerNetwork(
        players,
        seed=1,
        rules=Rules(target=None, rounds=1),
        config=QUICK_TIMERS,
        deal=Deal.SHUFFLE,
    )
    net.run(lambda n: any(m.kind is kind for m in n.peers[forker].events(forker)), within=60)
    first = next(m for m in net.peers[forker].events(forker) if m.kind is kind)
    second = _another_version(net, forker, first)
    # (Its core knows the other version is its own doing, as the simulator's forger's does:
    # it neither doubts its own feed nor stops on that version, recovery.Doubt.)
    net.peers[forker]._author.forger = True
    net.inject((forker + 1) % players, second)
    return net, len(first.wire)


def _another_version(net: PeerNetwork, forker: int, first: Message) -> bytes:
    """``first``'s body signed by ``forker`` again, at the next clock: a fork of it."""
    return encode_message(
        net.identities[forker],
        game_id=net.spec.game_id,
        seq=first.seq,
        prev=first.prev,
        lamport=first.lamport + 1,
        kind=first.kind,
        body=first.body,
        version=net.spec.wire_version,
    )


def _logs(net: PeerNetwork) -> Logs:
    """Each seat's log as its peer wrote it: its events, and its proof notes."""
    logs: Logs = []
    for seat in range(net.n):
        records = [Record.note(SPEC_NOTE, net.spec.to_wire())]
        for effect in net.effects[seat]:
            if isinstance(effect, LogEffect):
                kind = RecordKind.SENT_EVENT if effect.own else RecordKind.RECEIVED_EVENT
                records.append(Record(kind=kind, data=effect.data))
            elif isinstance(effect, Note):
                records.append(Record.note(effect.name, effect.data))
        logs.append(records)
    return logs


#: Session 39's bound on a message a vote on proof carried (``PROOF_MESSAGE_MAX`` then), in a
#: drop of at most ``MAX_MESSAGE_SIZE``: each fork below is of an event over it.
SESSION_39_BOUND = 1500


@pytest.mark.parametrize(
    ("players", "kind", "forker"),
    [
        (2, Kind.DECK_STAGE, 0),
        (3, Kind.DECK_STAGE, 0),
        (3, Kind.DECK_STAGE, 1),  # (a stage on a stage on the cut one: void in turn)
        (3, Kind.DECK_SHARES, 1),
        (4, Kind.DECK_STAGE, 3),
    ],
)
def test_a_fork_of_a_large_event_drops_its_member_and_the_game_ends(
    players: int, kind: Kind, forker: int
) -> None:
    """Every honest peer votes on proof, the vote carrying both versions (a drop may be up to
    ``MAX_VOTE_SIZE``), every fold takes the votes, the member is dropped (from three, below
    its fork: the deal starts again without it), the game ends, and the audit accuses the
    forker alone: not a member whose stage shuffled the forked one (a race lost to the cut,
    ``DeckRound.take_stage``; cleanup40's trial named one ``bad_shuffle``)."""
    net, size = _forked(players, kind, forker)
    assert SESSION_39_BOUND < size <= PROOF_MESSAGE_MAX
    net.run_until_over(within=120)  # (at three the two left play the round out)
    votes: list[tuple[Drop, int]] = []  # (each vote on proof, and its size)
    for seat, peer in enumerate(net.peers):
        if seat != forker:
            assert set(peer.final.dropped) == {forker}, peer.final.dropped
            for m in peer.events(seat):
                body = parse_body(m.kind, m.body, players)
                if isinstance(body, Drop) and body.proof:
                    votes.append((body, len(m.wire)))
    assert len(votes) == players - 1
    for vote, wire_size in votes:  # (each carries the large version: over session 39's bound)
        assert size in map(len, vote.proof) and wire_size <= MAX_VOTE_SIZE
    game = Game(net.spec, net.identities, _logs(net), None)  # type: ignore[arg-type]
    report = game.audit()
    accused = {(f.seat, f.kind) for f in report.violations if f.kind.accuses}
    assert (forker, FindingKind.EQUIVOCATION) in accused, report.violations
    assert {seat for seat, _ in accused} == {forker}, report.violations


@pytest.mark.parametrize(
    ("players", "forker", "deal"),
    [
        (2, 0, Deal.COMMIT),
        (2, 1, Deal.COMMIT),
        (3, 0, Deal.COMMIT),
        (3, 2, Deal.COMMIT),
        (4, 1, Deal.COMMIT),
        (3, 1, Deal.SHUFFLE),
    ],
)
def test_a_fork_of_a_drop_too_large_to_carry_drops_its_member(
    players: int, forker: int, deal: Deal
) -> None:
    """The class's member left open in session 40: a drop over 4,096 bytes (here a vote on a
    made-up proof of two 4,000-byte messages, refused by every fold as ``unproven_vote``, but
    an event of the feed all the same), forked, the other version given to the next seat.
    Until session 41 its two versions (~8.2 KB each) fit no vote and nobody voted: the table
    waited for good at two and three players. Since then the proof is carried beside the
    signed payload and a vote on the fork carries the versions' signed parts (~1.2 KB each):
    every honest peer votes, the forker is dropped everywhere, the game ends, and the audit of
    the logs (each vote beside its proof) accuses the forker alone."""
    net = PeerNetwork(
        players, seed=1, rules=Rules(target=None, rounds=1), config=QUICK_TIMERS, deal=deal
    )
    net.run(lambda n: len(n.peers[forker].events(forker)) >= 2, within=60)
    author = net.peers[forker]._author
    author.forger = True  # (as _forked's: the other version is its own doing)
    made_up = (b"\1" * 4000, b"\2" * 4000)
    target = (forker + 1) % players
    vote = Drop((), target, 1, DropReason.EQUIVOCATION, 1, (b"\1" * 8,), proof=made_up)
    author.sign(vote, net.now)
    first = [m for m in net.peers[forker].events(forker) if m.kind is Kind.DROP][-1]
    assert PROOF_MESSAGE_MAX < len(first.wire) <= MAX_VOTE_SIZE
    assert len(first.signed_wire) <= PROOF_MESSAGE_MAX  # (what a vote on its fork carries)
    net.inject(target, _another_version(net, forker, first))
    net.run_until_over(within=300)  # (the others play the round out)
    for seat, peer in enumerate(net.peers):
        if seat != forker:
            assert set(peer.final.dropped) == {forker}, (seat, peer.final.dropped)
            votes = [
                parse_body(m.kind, m.body, players)
                for m in peer.events(seat)
                if m.kind is Kind.DROP
            ]
            assert any(isinstance(v, Drop) and v.seat == forker and v.proof for v in votes)
    game = Game(net.spec, net.identities, _logs(net), None)  # type: ignore[arg-type]
    report = game.audit()
    accused = {(f.seat, f.kind) for f in report.violations if f.kind.accuses}
    assert (forker, FindingKind.EQUIVOCATION) in accused, report.violations
    assert {seat for seat, _ in accused} == {forker}, report.violations
