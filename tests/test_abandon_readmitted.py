"""An abandon by a member readmitted earlier in the game (docs/protocol.md §9.3, §9.8).

Chaos demo, seed 14 (four real processes, random ``SIGSTOP``s): P2, dropped and readmitted
in round 1, was left in round 2 with P4 alone (P1 dropped with a readmission pending, P3
dropped), the two cut off from each other. Each abandoned the other. P2's tentative fold then
cut P2 itself at the count it had been readmitted from (no member still in announced its later
events: it was the last one), skipped every event of its own not final yet, the abandon among
them, and its final fold never ended: the abandon answer stayed yes, its bot signed the same
abandon every few ticks, and turned its stock from a view without its own last turn (192
``deck_mismatch`` findings on its moves). Reproduced here with three players (then four), on
the in-memory network of cores.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
from peer_helpers import PeerNetwork

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.local import abandon_answer, abandoned_by
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move, Rules

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)


def _abandons(net: PeerNetwork, seat: int, peer: Peer | None = None) -> list[int]:
    """The seqs of the abandons in ``seat``'s own feed (as ``peer`` holds it: by default,
    ``seat``'s peer on ``net``)."""
    holder = net.peers[seat] if peer is None else peer
    return [
        m.seq
        for m in holder._feeds[seat]
        if m.kind is Kind.DROP
        and isinstance(body := parse_body(m.kind, m.body, net.n), Drop)
        and body.reason is DropReason.ABANDON
    ]


def _last_two(seed: int, players: int, pending: bool = False) -> tuple[PeerNetwork, int, int]:
    """Seat 1 dropped in round 1 and readmitted at round 2; then (with four) seat 3 dropped
    for good, and seat 0 dropped (``pending``: back long enough to be readmitted at the next
    round, then gone again, as P1 in the demo); seats 1 and 2 left, cut off from each other."""
    net = PeerNetwork(players, seed=seed, rules=Rules(target=None, rounds=4), config=QUICK)
    net.run(lambda net: all(p.final.phase is Phase.PLAY for p in net.peers) and net.now > 2.0)
    net.silence(1)
    net.run(lambda net: all(1 in p.final.dropped for s, p in enumerate(net.peers) if s != 1))
    net.silenced.discard(1)
    net.run(
        lambda net: all(
            1 not in p.final.dropped and p.final.round.number >= 2 and p.final.phase is Phase.PLAY
            for p in net.peers
        )
    )
    assert net.peers[1].final.gaps.get(1)  # readmitted: a gap from its cut
    for gone in range(players - 1, 2, -1):  # one at a time: a majority drops each
        net.silence(gone)
        net.run(lambda net, q=gone: all(q in net.peers[s].final.dropped for s in (0, 1, 2)))
    net.silence(0)
    net.run(lambda net: all(0 in net.peers[s].final.dropped for s in (1, 2)))
    if pending:
        net.silenced.discard(0)
        net.run(lambda net: all(0 in net.peers[s].final.rejoining for s in (1, 2)))
        net.silence(0)
    assert all(len(net.peers[s].final.dropped) == players - 2 for s in (1, 2))
    net.blocked = frozenset({frozenset((1, 2))})
    return net, 1, 2


@functools.cache
def _last_two_shared() -> tuple[PeerNetwork, int, int]:
    """``_last_two(1, 3)``, played once for the tests below that each work on a clone of its
    seat ``a`` alone (session 44: each played the very game on its own). Nobody steps the
    network: a test ticks and abandons on its clone, which nothing else sees."""
    return _last_two(1, 3)


def _left_two() -> tuple[PeerNetwork, Peer, int, int]:
    """:func:`_last_two_shared`'s network, a fresh clone of its seat ``a``, ``a`` and ``b``."""
    net, a, b = _last_two_shared()
    return net, net.clone(a), a, b


@pytest.mark.parametrize(
    ("seed", "players", "pending"),
    [(1, 3, False), (2, 3, False), (3, 3, False), (1, 4, False), (1, 4, True), (2, 3, True)],
)
def test_abandon_readmitted_member_ends_its_game_with_one_abandon(
    seed: int, players: int, pending: bool
) -> None:
    net, a, b = _last_two(seed, players, pending)
    end = net.now + 8 * QUICK.drop_after
    while net.now < end and not all(net.peers[s].final.phase is Phase.OVER for s in (a, b)):
        assert net.step()
        for s in (a, b):
            peer = net.peers[s]
            if peer.abandon_answer(net.now).why is None:  # as the node's bot does, every tick
                net._handle(s, peer.abandon(net.now))
        assert all(len(_abandons(net, s)) <= 1 for s in (a, b)), "an abandon signed twice"
    for s, other in ((a, b), (b, a)):
        peer = net.peers[s]
        assert peer.final.phase is Phase.OVER, f"seat {s} never ended"
        assert peer.final.abandoned == (s, other)
        assert len(_abandons(net, s)) == 1
        # Its own events count in its view: nothing more of the round to play on.
        assert peer.tentative.abandoned == (s, other)
        with pytest.raises((IllegalMoveError, LocalProtocolError)):
            peer.play(Move.parse("S"), net.now)
    assert not any(v.seat in (a, b) for s in (a, b) for v in net.peers[s].final.violations)


def test_abandon_answer_refuses_a_second_abandon_of_the_same_member() -> None:
    net, peer, _, b = _left_two()
    now = net.now + 2 * QUICK.drop_after
    for n in range(1, 13):  # (listening meanwhile, as a node's timer does: no break, §9.3)
        peer.tick(net.now + n * QUICK.drop_after / 6)
    folds = peer._chains.folds
    membership = peer._author.membership
    names = [m.name for m in net.spec.members]

    def answer(abandoned: tuple[int, ...]) -> str | None:
        return abandon_answer(
            folds.final,
            folds.tentative,
            membership,
            now,
            names=names,
            recovering=False,
            left=False,
            abandoned=abandoned,
        ).why

    assert answer(()) is None
    why = answer((b,))
    assert why is not None and "abandoned the game already" in why
    effects: list[Effect] = peer.abandon(now)
    assert effects and peer.abandon_answer(now).why is not None


def test_abandoned_by_reads_each_drop_of_the_feed_once_as_it_grows() -> None:
    """``abandoned_by`` with what it read kept (the table's abandon answer asks at every look,
    session 36): the same members as read afresh, before and after the abandon, each drop's
    body parsed once, and a drop of another id read anew."""
    net, peer, a, b = _left_two()
    now = net.now + 2 * QUICK.drop_after
    for n in range(1, 13):
        peer.tick(net.now + n * QUICK.drop_after / 6)
    own = peer._feeds[a]
    read: dict[bytes, int | None] = {}
    votes = [m for m in own if m.kind is Kind.DROP]
    assert votes  # (the votes that dropped the others: not abandons)
    assert abandoned_by(own, net.n, read) == abandoned_by(own, net.n) == set()
    assert read == {m.id: None for m in votes}
    assert peer.abandon(now)
    own = peer._feeds[a]
    assert abandoned_by(own, net.n, read) == {b}
    (abandon,) = [m for m in own if m.kind is Kind.DROP and m not in votes]
    assert read == {**{m.id: None for m in votes}, abandon.id: b}  # (the new drop, read once)
    # What was read is not read again: an answer planted for a vote is taken as it stands,
    # and only by the caller that keeps it (afresh, every drop is parsed again).
    planted = {**read, votes[0].id: a}
    assert abandoned_by(own, net.n, planted) == {a, b}
    assert abandoned_by(own, net.n, read) == abandoned_by(own, net.n) == {b}


def test_abandoned_by_reads_a_drop_that_does_not_parse_as_no_abandon() -> None:
    """A liar's own feed may hold a drop its schema refuses (a rejoin counting no request:
    session 39's scan of every lie beside a crash, seed 305, where the liar's table's abandon
    answer raised and ended the whole simulation): it puts nobody out, and the abandon after it
    still counts."""
    net, peer, a, b = _left_two()
    for n in range(1, 13):
        peer.tick(net.now + n * QUICK.drop_after / 6)
    assert peer.abandon(net.now + 2 * QUICK.drop_after)
    own = list(peer._feeds[a])
    (abandon,) = [m for m in own if m.seq in _abandons(net, a, peer)]
    bad_rejoin = list(abandon.body)  # type: ignore[arg-type]
    bad_rejoin[3] = DropReason.REJOIN.value  # (a rejoin must count its request: last seq > 0)
    bad_rejoin[2] = 0
    with pytest.raises(ValueError, match="rejoin"):
        parse_body(Kind.DROP, tuple(bad_rejoin), net.n)
    torn = dataclasses.replace(abandon, body=tuple(bad_rejoin), id=b"\x01" * 32)
    read: dict[bytes, int | None] = {}
    assert abandoned_by([*own[:-1], torn, own[-1]], net.n, read) == {b}
    assert read[torn.id] is None
    assert abandoned_by([torn], net.n) == set()
