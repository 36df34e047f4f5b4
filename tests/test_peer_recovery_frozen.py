"""A recovering peer and the members that voted it out: their beats cannot vouch for our feed.

A voter announces no more of its target's feed than its vote counted (docs/protocol.md §9.2),
whatever it holds of it. So a recovering peer (§9.6) cannot take such a member's beat as what
it holds of its own feed: it would end its recovery at its own head and sign a seq the voter
holds (soak seed 8215, ``--players 2-2``). Every member answers a recovery want with a want of
its own for the rest of the asker's feed, which says what it holds of it whatever its votes;
the recovering peer takes that word from a member whose beats may be frozen.

A game of :class:`~tests.peer_helpers.PeerNetwork` runs a while; seat 1's log loses its last
two events, which every other member holds; the peer restored from it is fed by hand: votes
against it, withdrawals, beats and wants, as the members would send them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    VOTE_WINDOW,
    Beat,
    Drop,
    DropReason,
    Want,
    encode_body,
    parse_body,
)
from p2p_nertz.protocol.envelope import Kind, Message, decode_message
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Record, Recovered, Reserve, Send
from p2p_nertz.protocol.state import Phase
from tests.peer_helpers import PeerNetwork, forge, sign

SEAT = 1
LOSE = 2


def _lost(net: PeerNetwork) -> bool:
    return net.peers[SEAT].held(SEAT) >= 12 and net.peers[0].final.phase is Phase.PLAY


@pytest.fixture(scope="module", params=[3, 4], ids=["3-players", "4-players"])
def net(request: pytest.FixtureRequest) -> PeerNetwork:
    n = request.param
    network = PeerNetwork(n, seed=5)
    network.run(_lost)
    # Quiet: every peer holds every feed as far as its author (nothing is in flight).
    network.run(lambda m: all(p.held(q) == m.peers[q].held(q) for p in m.peers for q in range(n)))
    return network


class Restored:
    """Seat SEAT restored in recovery from its log cut before its last LOSE own events, with
    every other member's feed as the network holds it fed back already."""

    def __init__(self, net: PeerNetwork) -> None:
        self.net = net
        log = [e.data for e in net.effects[SEAT] if isinstance(e, Record)]
        own = net.identities[SEAT].peer_id
        mine = [i for i, wire in enumerate(log) if decode_message(wire).author == own]
        self.lost = [log[i] for i in mine[-LOSE:]]
        reserved = max(e.clock for e in net.effects[SEAT] if isinstance(e, Reserve))
        self.peer, effects = Peer.restore(
            net.identities[SEAT],
            net.spec,
            log[: mine[-LOSE]],
            net.now,
            reserved=reserved,
            recover=True,
        )
        self.effects = list(effects)
        self.head = self.peer.held(SEAT)
        self.clock = max(decode_message(e.data).lamport for e in effects if isinstance(e, Send))
        for q in range(net.n):
            if q != SEAT:
                self.feed([m.wire for m in self._before_lost(net.peers[q].events(q))])

    def _before_lost(self, feed: Sequence[Message]) -> list[Message]:
        """The events of ``feed`` before the first that names one of our lost events (the
        members signed their own votes instead, in this story)."""
        kept = []
        for message in feed:
            body = parse_body(message.kind, message.body, self.net.n)
            if body.frontier[SEAT] > self.head:
                break
            kept.append(message)
        return kept

    def feed(self, wires: Sequence[bytes]) -> list[Effect]:
        effects = self.peer.feed_many(list(wires), self.net.now)
        self.effects.extend(effects)
        return effects

    def tick(self) -> int:
        """The next Lamport time a member's message is sent at (above our first want)."""
        self.clock += 1
        return self.clock

    def event(self, author: int, body: Drop, lamport: int | None = None) -> bytes:
        """``author``'s next event, holding what the peer holds (its vote counts that much of
        our feed: it had not received our lost events yet)."""
        return forge(self.peer, self.net.identities[author], body, lamport=lamport)

    def vote(self, author: int, reason: DropReason = DropReason.SILENT) -> bytes:
        ours = self.peer.events(SEAT)
        ids = tuple(m.id[:ID_PREFIX] for m in ours[max(0, self.head - VOTE_WINDOW) : self.head])
        return self.event(author, Drop((), SEAT, self.head, reason, 0, ids))

    def withdraw(self, author: int, lamport: int | None = None) -> bytes:
        return self.event(author, Drop((), SEAT, 0, DropReason.WITHDRAW, 0, ()), lamport)

    def beat(self, author: int, ours: int, head: int | None = None) -> bytes:
        """A beat of ``author`` naming ``head`` of its feed (all the peer holds of it), holding
        ``ours`` of our feed and every other feed as far as the peer holds it."""
        feeds: list[list[Message]] = [list(self.peer.events(q)) for q in range(self.net.n)]
        feeds[SEAT] = list(self.net.peers[SEAT].events(SEAT))  # (the lost ones too)
        held = [len(f) for f in feeds]
        held[SEAT] = ours
        if head is not None:
            held[author] = head
        body = Beat(
            head_seq=held[author],
            head_id=feeds[author][held[author] - 1].id,
            held=tuple(held),
            held_ids=tuple(f[h - 1].id[:ID_PREFIX] for f, h in zip(feeds, held, strict=True)),
        )
        return self.sign(author, Kind.BEAT, encode_body(body))

    def want(self, author: int, ours: int) -> bytes:
        """A want of ``author`` for our feed past the ``ours`` it holds (its answer to our
        recovery want)."""
        return self.sign(author, Kind.WANT, encode_body(Want(SEAT, ours + 1, ours + 64)))

    def sign(self, author: int, kind: Kind, body: object) -> bytes:
        identity = self.net.identities[author]
        return sign(identity, self.net.spec, kind=kind, body=body, lamport=self.tick())

    def signed_since_restart(self) -> list[int]:
        """The seqs of our events the peer signed (not taken back) since its restart."""
        lost = set(self.lost)
        return [
            decode_message(e.data).seq
            for e in self.effects
            if isinstance(e, Record) and e.own and e.data not in lost
        ]


def _voters(net: PeerNetwork) -> list[list[int]]:
    # One member voted us out and the others did not; with four, two did and one did not
    # (no majority: we are not dropped).
    return [[0], [0, 2]] if net.n == 4 else [[0]]


def test_a_voters_beat_does_not_vouch_for_what_it_holds_of_our_feed(net: PeerNetwork) -> None:
    for voters in _voters(net):
        r = Restored(net)
        r.feed([r.vote(v) for v in voters])
        assert SEAT not in r.peer.tentative.dropped
        # Every beat says it holds our feed up to our own head: the voters' because their
        # votes froze it there (they hold our two lost events), the others' because they
        # lack them. The voters' beats cannot say so: they are waited for.
        r.feed([r.beat(q, r.head) for q in range(net.n) if q != SEAT])
        assert r.peer.recovering and r.peer.awaiting() == tuple(voters)
        # The voters' own word, a want for the rest of our feed, says what they hold.
        r.feed([r.want(v, r.head + LOSE) for v in voters])
        assert r.peer.awaiting() == tuple(voters)  # they hold ours we lack
        r.feed(r.lost)
        others = [q for q in range(net.n) if q not in (SEAT, *voters)]
        assert r.peer.awaiting() == tuple(others)  # (they lacked them: we sent them)
        done = r.feed([r.beat(q, r.head + LOSE) for q in others])
        notices = [e for e in done if isinstance(e, Recovered)]
        holders = tuple(q for q in range(net.n) if q != SEAT)
        assert notices == [Recovered(r.head, r.head + LOSE, holders)]
        assert all(seq > r.head + LOSE for seq in r.signed_since_restart())


def test_a_voters_want_saying_it_holds_no_more_ends_the_recovery(net: PeerNetwork) -> None:
    # Nobody got our lost events: a voter's frozen beat and its want say the same, and its
    # want is what counts; the seqs are signed anew.
    r = Restored(net)
    r.feed([r.vote(0)])
    r.feed([r.beat(q, r.head) for q in range(net.n) if q != SEAT])
    assert r.peer.awaiting() == (0,)
    done = r.feed([r.want(0, r.head)])
    assert [e for e in done if isinstance(e, Recovered)] == [Recovered(r.head, r.head, ())]
    assert not r.peer.recovering


def test_a_beat_from_before_a_voters_withdrawal_does_not_vouch(net: PeerNetwork) -> None:
    r = Restored(net)
    r.feed([r.vote(0)])
    # A beat sent before the withdrawal (its head is the vote), arriving after it: frozen.
    before = r.beat(0, r.head)
    r.feed([r.withdraw(0, lamport=r.tick())])
    assert not r.peer.tentative.votes.get(SEAT)  # the vote stands no more
    r.feed([before, *(r.beat(q, r.head) for q in range(2, net.n))])
    assert r.peer.awaiting() == (0,)
    # After the withdrawal its beats say all it holds.
    r.feed([r.beat(0, r.head + LOSE)])
    r.feed(r.lost)
    others = [q for q in range(net.n) if q not in (0, SEAT)]
    done = r.feed([r.beat(q, r.head + LOSE) for q in others])
    assert [e for e in done if isinstance(e, Recovered)] == [
        Recovered(r.head, r.head + LOSE, tuple(q for q in range(net.n) if q != SEAT))
    ]


def test_a_beat_naming_a_head_we_do_not_hold_does_not_vouch(net: PeerNetwork) -> None:
    # Seat 0's beat names its vote as its head, but the vote has not reached us: what the
    # beat says of our feed may be frozen by it (and is).
    r = Restored(net)
    vote = r.vote(0)
    feeds = [list(r.peer.events(q)) for q in range(net.n)]
    feeds[0].append(decode_message(vote))
    held = [len(f) for f in feeds]
    beat = Beat(
        head_seq=held[0],
        head_id=feeds[0][-1].id,
        held=tuple(held),
        held_ids=tuple(f[h - 1].id[:ID_PREFIX] for f, h in zip(feeds, held, strict=True)),
    )
    r.feed([r.sign(0, Kind.BEAT, encode_body(beat))])
    r.feed([r.beat(q, r.head) for q in range(2, net.n)])
    others = tuple(q for q in range(net.n) if q != SEAT)
    assert r.peer.awaiting() == others  # (and seat 0's vote is missing at the others)
    r.feed([vote])
    r.feed([r.beat(q, r.head) for q in range(2, net.n)])
    assert r.peer.awaiting() == (0,)  # its vote is held now: its own word is what counts
    done = r.feed([r.want(0, r.head)])
    assert [e for e in done if isinstance(e, Recovered)] == [Recovered(r.head, r.head, ())]


def test_out_by_the_votes_the_recovery_takes_the_voters_word_and_signs_past_it(
    net: PeerNetwork,
) -> None:
    # Every other member voted us out (the held votes drop us): none of their beats can
    # vouch, and none of them will withdraw; their wants end the recovery.
    r = Restored(net)
    voters = [q for q in range(net.n) if q != SEAT]
    r.feed([r.vote(v) for v in voters])
    assert SEAT in r.peer.tentative.dropped
    r.feed([r.beat(q, r.head) for q in voters])
    assert r.peer.awaiting() == tuple(voters)
    r.feed(r.lost)
    done = r.feed([r.want(v, r.head + LOSE) for v in voters])
    assert [e for e in done if isinstance(e, Recovered)] == [
        Recovered(r.head, r.head + LOSE, tuple(voters))
    ]
    assert all(seq > r.head + LOSE for seq in r.signed_since_restart())


def test_every_member_answers_a_recovery_want_with_what_it_holds_of_the_askers_feed(
    net: PeerNetwork,
) -> None:
    member = net.clone(0)
    held = member.held(SEAT)
    # A restarted member's first want is timed two reservations above its old clock (§9.6):
    # far above the member's clock, within what a want may move it (§5.3).
    first = member.clock + 2 * PeerConfig().clock_reserve
    want = sign(
        net.identities[SEAT],
        net.spec,
        kind=Kind.WANT,
        body=encode_body(Want(SEAT, held - 1, held + 62)),
        lamport=first,
    )
    effects = member.feed(want, net.now + 0.001)
    sent = [(decode_message(e.data), e.to) for e in effects if isinstance(e, Send)]
    events = [m.seq for m, to in sent if m.is_event]
    assert events == [held - 1, held]  # what it asked for that the member holds
    wants = [
        parse_body(m.kind, m.body, net.n)
        for m, to in sent
        if m.kind is Kind.WANT and to == net.spec.peer_ids[SEAT]
    ]
    assert wants == [Want(SEAT, held + 1, held + 64)]  # and what it holds, by its own word
    assert all(m.lamport > first for m, _ in sent if m.kind is Kind.WANT)
