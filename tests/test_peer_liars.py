"""A member that stays alive while it lies about time or withholds its feed (issue 13 §2).

The liar is a :class:`~liar_helpers.Liar`, a :class:`~peer_helpers.PuppetPeer` in a bot-played
:class:`~peer_helpers.PeerNetwork`: it beats like any member, and at a chosen beat (Lamport
time ``L``, head ``h``) it signs its event ``h + 1`` timed ``L`` — below the clock it has just
announced — and keeps it back while its beats (at ``h``) let the others make ``L`` final. Then:

- *late*: it takes the event into its feed, announces the higher head, and lets it be fetched
  by a ``want`` (docs/protocol.md §9.4: the beat comes first, then beats with higher heads,
  then the event): this froze every honest peer (the event refused as ``broken_chain``, no
  proof, the liar never suspected);
- *early*: it sends the event first, and a beat announcing ``h`` at a later clock after it;
- *partial*: only one honest member sees the lying beats;
- *ack*: the lying beat is an ``ack``;
- *never*: it announces ``h + 1`` and never lets it be fetched (finality held back, §9.2).

In every case each honest peer finishes the round without the liar, and holds the proof in
its log (the ``proof`` note, docs/log-format.md §5) when there is one.
"""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]
import pytest
from liar_helpers import Liar
from peer_helpers import PeerNetwork, beat_of, forge

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.bodies import Beat, Drop, DropReason, Play, parse_body
from p2p_nertz.protocol.envelope import Kind, Message, decode_message
from p2p_nertz.protocol.peer import (
    PROOF_NOTE,
    Equivocation,
    Note,
    Peer,
    PeerConfig,
    Record,
    Send,
)
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move, Rules
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import Gone

ONE_ROUND = Rules(target=None, rounds=1)
CONFIG = PeerConfig(phase_timeout=10.0)


def _network(players: int, seed: int) -> tuple[PeerNetwork, Liar]:
    liar_seat = players - 1
    net = PeerNetwork(
        players, seed=seed, rules=ONE_ROUND, config=CONFIG, factories={liar_seat: Liar}
    )
    liar = net.peers[liar_seat]
    assert isinstance(liar, Liar)
    net.run(_mid_game)
    liar.paused = True
    return net, liar


def _mid_game(net: PeerNetwork) -> bool:
    return all(
        p.final.phase is Phase.PLAY
        and p.final.table is not None
        and sum(1 for _ in p.final.table.lake.cards()) >= 2
        for p in net.peers
    )


def _honest(net: PeerNetwork, liar: Peer) -> list[Peer]:
    return [p for p in net.peers if p is not liar]


def _sign_lie(net: PeerNetwork, liar: Liar) -> Message:
    """Let the liar beat once more, and sign its event ``h + 1`` at that beat's clock."""
    liar.lie_at_next_beat = True
    net.run(lambda _: liar.lie is not None)
    assert liar.lie is not None
    return liar.lie


def _finish(net: PeerNetwork, liar: Liar) -> None:
    """Run until every honest peer's round is over, and check that it dropped the liar."""
    honest = _honest(net, liar)
    net.run(lambda _: all(p.final.phase is Phase.OVER for p in honest), within=200.0)
    digests = {p.final.digest() for p in honest}
    assert len(digests) == 1
    for peer in honest:
        assert liar.seat in peer.final.dropped


def _votes(net: PeerNetwork, seat: int, target: int) -> list[Drop]:
    """The drop votes ``seat`` signed against ``target``."""
    votes = []
    for effect in net.effects[seat]:
        if isinstance(effect, Record) and effect.own:
            message = decode_message(effect.data)
            if message.kind is Kind.DROP:
                body = parse_body(message.kind, message.body, net.n)
                assert isinstance(body, Drop)
                if body.seat == target:
                    votes.append(body)
    return votes


def _adopt_and_prove(net: PeerNetwork, liar: Liar, lie: Message) -> None:
    """The liar takes ``lie`` as its next event, never sent by itself (fetched by a want
    only), then plays on: the game ends without it and every honest peer proved the lie
    (:func:`_finish`, :func:`_assert_proven`)."""
    liar.adopt = lie.wire
    liar.withheld.add(lie.wire)
    net.run(lambda _: liar.held(liar.seat) == lie.seq)
    liar.withheld.clear()
    liar.paused = False
    _finish(net, liar)
    _assert_proven(net, liar, lie)


def _assert_proven(net: PeerNetwork, liar: Liar, lie: Message) -> None:
    """Every honest peer found the lie, logged its proof (a note before its vote), relayed it
    and voted the liar out on it."""
    for peer in _honest(net, liar):
        effects = net.effects[peer.seat]
        (proof,) = [e for e in effects if isinstance(e, Equivocation)]
        assert (proof.seat, proof.seq, proof.second) == (liar.seat, lie.seq, lie.wire)
        beat = decode_message(proof.first)
        assert beat.kind in (Kind.BEAT, Kind.ACK) and beat.author == liar.identity.peer_id
        assert beat.lamport >= lie.lamport
        body = parse_body(beat.kind, beat.body, net.n)
        assert isinstance(body, Beat) and body.head_seq < lie.seq
        notes = [e for e in effects if isinstance(e, Note)]
        assert notes == [Note(PROOF_NOTE, msgpack.packb([proof.first, lie.wire]))]
        logged = [e for e in effects if isinstance(e, Note | Record)]
        note_at = logged.index(notes[0])
        (vote,) = _votes(net, peer.seat, liar.seat)
        assert (vote.reason, vote.fork_seq) == (DropReason.EQUIVOCATION, lie.seq)
        assert vote.last_seq >= lie.seq - 1  # (what it had announced holding, §9.4)
        assert peer.final.dropped[liar.seat] == lie.seq - 1  # the cut: nothing of the lie
        vote_at = next(
            i
            for i, e in enumerate(logged)
            if isinstance(e, Record) and e.own and decode_message(e.data).kind is Kind.DROP
        )
        assert note_at < vote_at


# -- a lie about time ------------------------------------------------------------------------------
@pytest.mark.parametrize(("players", "seed"), [(3, 0), (4, 1)])
def test_late_lie_about_time_is_proven_and_the_round_finishes(players: int, seed: int) -> None:
    net, liar = _network(players, seed)
    lie = _sign_lie(net, liar)
    honest = _honest(net, liar)
    # Its beats at head h let every honest peer make the lie's time final...
    net.run(lambda _: all(p.stable >= lie.lamport for p in honest))
    # ...then it takes the event, announces it, and lets it be fetched.
    _adopt_and_prove(net, liar, lie)


def test_early_lie_about_time_is_proven_and_the_round_finishes() -> None:
    net, liar = _network(3, 2)
    liar.hold_lying_beat = True
    lie = _sign_lie(net, liar)
    liar.adopt = lie.wire  # the event goes out at once, before the beat it contradicts
    honest = _honest(net, liar)
    net.run(lambda _: all(p.held(liar.seat) >= lie.seq for p in honest))  # taken: no lie seen
    assert liar.lying_beat is not None
    for peer in honest:
        net.inject(peer.seat, liar.lying_beat)  # the beat comes last (older than the latest)
    liar.paused = False
    _finish(net, liar)
    _assert_proven(net, liar, lie)


def test_lie_about_time_in_an_ack_is_proven() -> None:
    net, liar = _network(3, 3)
    liar.beat_kind = Kind.ACK
    lie = _sign_lie(net, liar)
    honest = _honest(net, liar)
    net.run(lambda _: all(p.stable >= lie.lamport for p in honest))
    liar.beat_kind = None
    _adopt_and_prove(net, liar, lie)
    for peer in honest:
        (proof,) = [e for e in net.effects[peer.seat] if isinstance(e, Equivocation)]
        assert decode_message(proof.first).kind is Kind.ACK


def test_lie_seen_by_one_member_only_is_proven_by_all() -> None:
    net, liar = _network(3, 4)
    witness = net.peers[0]
    liar.beats_to = witness.identity.peer_id  # the lying beats reach seat 0 only
    lie = _sign_lie(net, liar)
    net.run(lambda _: witness.stable >= lie.lamport)
    liar.beats_to = None
    _adopt_and_prove(net, liar, lie)
    # The others had taken the event (no lie visible to them): the relayed beat proved it.
    other = net.peers[1]
    (proof,) = [e for e in net.effects[other.seat] if isinstance(e, Equivocation)]
    assert proof.second == lie.wire


def test_relayed_old_beat_proves_a_lie_against_a_held_event() -> None:
    net, liar = _network(3, 5)
    lie = _sign_lie(net, liar)
    beat = next(
        e.data
        for e in reversed(net.effects[liar.seat])
        if isinstance(e, Send) and decode_message(e.data).lamport == liar.lie_beat
    )
    peer = net.clone(0)  # it has not seen the lying beat yet
    now = net.last_input_time[0]
    taken = peer.feed(lie.wire, now)
    assert not [e for e in taken if isinstance(e, Equivocation)]
    assert peer.held(liar.seat) == lie.seq  # no lie visible: the event is held
    newer = beat_of(peer, liar.identity, liar.lie_beat + 10)  # its head is now the event
    peer.feed(newer, now + 0.001)
    # The lying beat comes last, relayed: older than the latest beat, checked all the same.
    effects = peer.feed(beat, now + 0.002)
    assert [e.second for e in effects if isinstance(e, Equivocation)] == [lie.wire]
    assert Note.proof(beat, lie.wire) in effects


# -- an event announced and never given --------------------------------------------------------
def _withhold(players: int, seed: int) -> tuple[PeerNetwork, Liar, Message]:
    net, liar = _network(players, seed)
    round_ = liar.tentative.round.number
    wire = forge(liar, liar.identity, Play((), round_, Move.pass_()), lamport=liar.clock + 1)
    liar.withheld.add(wire)
    liar.adopt = wire  # in its feed, announced by its beats, never sent
    return net, liar, decode_message(wire)


@pytest.mark.parametrize(("players", "seed"), [(3, 6), (4, 7)])
def test_member_announcing_an_event_it_never_gives_is_voted_out(players: int, seed: int) -> None:
    net, liar, withheld = _withhold(players, seed)
    liar.paused = False  # it plays on: its later events wait on the one withheld
    _finish(net, liar)
    for peer in _honest(net, liar):
        votes = _votes(net, peer.seat, liar.seat)
        assert [v.reason for v in votes] == [DropReason.WITHHELD]  # it beats: never withdrawn
        assert peer.final.dropped[liar.seat] == votes[0].last_seq == withheld.seq - 1


def test_two_members_may_abandon_one_that_talks_but_never_gives_its_event() -> None:
    net, liar, _ = _withhold(2, 8)
    peer = net.peers[0]
    start = net.now
    net.run(lambda n: n.now >= start + 1.0)
    with pytest.raises(LocalProtocolError):
        net.clone(0).abandon(net.now)  # it talks, and has not held finality back for long
    net.run(lambda n: n.now >= start + CONFIG.phase_timeout + 1.0)
    assert peer.silent_for(net.now) < CONFIG.suspect_after  # it never fell silent
    assert peer.stable < liar.events(liar.seat)[-1].lamport  # and finality waits for it
    # The table offers the key too, by the core's one answer: the member never fell silent,
    # so it is never suspected, yet the core counts it gone.
    gone = peer.gone_for(net.now)
    assert gone is not None and gone >= 0
    answer = peer.abandon_answer(net.now)
    assert answer.why is None and answer.partner == 1 and answer.wait == 0
    tracker = Tracker(tuple(m.name for m in net.spec.members), 0)
    offer = tracker.may_abandon(answer)
    assert isinstance(offer, Gone) and offer.seat == 1 and offer.wait == 0
    assert offer.silent == CONFIG.drop_after + gone
    effects = peer.abandon(net.now)
    (vote,) = [e for e in effects if isinstance(e, Record) and e.own]
    body = parse_body(Kind.DROP, decode_message(vote.data).body, 2)
    assert isinstance(body, Drop) and body.reason is DropReason.ABANDON
    assert peer.tentative.phase is Phase.OVER
