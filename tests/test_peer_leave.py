"""Leaving: the others see a signed leave, and the last one out does not break the core."""

from __future__ import annotations

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Send
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules


def _pair() -> list[Peer]:
    ids = [Identity.generate(bytes([i + 1]) * 32) for i in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(ids)], Rules(target=None, rounds=1), b"x"
    )
    by_id = {i.peer_id: i for i in ids}
    return [Peer(by_id[pid], spec, 0.0) for pid in spec.peer_ids]


def _pump(peers: list[Peer], effects: list[Effect], source: int, now: float) -> None:
    queue = [(source, e) for e in effects]
    while queue:
        seat, effect = queue.pop(0)
        if isinstance(effect, Send):
            for other, peer in enumerate(peers):
                if other != seat:
                    queue += [(other, e) for e in peer.feed(effect.data, now)]


def _ticks(peers: list[Peer], start: float, count: int) -> None:
    for step in range(count):
        now = start + 0.3 * step
        for seat, peer in enumerate(peers):
            _pump(peers, peer.tick(now), seat, now)


def test_leave_is_seen_by_the_others_and_the_last_one_out_does_not_raise() -> None:
    peers = _pair()
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 4)
    _pump(peers, peers[0].leave(2.0), 0, 2.0)
    _ticks(peers, 2.4, 4)
    assert all(0 in p.final.dropped and 0 in p.final.left for p in peers)
    _pump(peers, peers[1].leave(4.0), 1, 4.0)
    _ticks(peers, 4.2, 6)  # used to raise ValueError: min() over no remaining member
    assert set(peers[1].final.dropped) == {0, 1}


class _Withholder(Peer):
    """A member that stays connected but never reveals its nonce (a forfeit, DESIGN.md §5.2)."""

    def _act(self) -> None:
        if self._final.phase is not Phase.NONCE:
            super()._act()


def _trio(config: PeerConfig) -> list[Peer]:
    ids = [Identity.generate(bytes([i + 7]) * 32) for i in range(3)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(ids)], Rules(target=None, rounds=1), b"w"
    )
    by_id = {i.peer_id: i for i in ids}
    kinds = [Peer, Peer, _Withholder]
    return [
        kind(by_id[pid], spec, 0.0, config) for kind, pid in zip(kinds, spec.peer_ids, strict=True)
    ]


def test_member_withholding_its_reveal_is_voted_out_and_the_round_goes_on() -> None:
    peers = _trio(PeerConfig(phase_timeout=5.0))
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 10)  # joins and commits are in; seat 2 sits on its nonce
    assert peers[0].final.phase is Phase.NONCE and peers[0].final.waiting() == {2}
    _ticks(peers, 3.3, 20)  # past the phase timeout: seats 0 and 1 vote seat 2 out
    for peer in peers[:2]:
        assert 2 in peer.final.dropped
        assert peer.final.phase is Phase.PLAY  # the deal goes on without it


def test_drop_majority_counts_the_current_roster() -> None:
    # After one leave in a three-player game, the two left can still drop a third... of two:
    # a strict majority of the current roster (2 members) is 2 votes.
    peers = _pair()
    state = peers[0].final
    assert state.majority == 2
    state.dropped[1] = 0
    assert state.majority == 1
