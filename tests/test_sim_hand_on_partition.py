"""A partition that heals hands nothing on in play (docs/protocol.md §9.2, *Handed on in play*;
``protocol/relays.py``).

Across a partition each side votes the other out for silence. Once it heals, each side's
votes reach the members of the other side, which heard their own partners throughout: by the
member's checks alone they handed their partners' beats on to the voters for the rest of the
game, though the voters hear those partners directly again (the soak of session 26: 73
hand-ons in 40 games of the default mix, every one after a heal, up to 11 % of a game's
sends). The voter was cut off from the relayer too, suspected there until lately
(``Membership.back``): its vote was cast across the partition, not over a failing link, and
nothing is handed on.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.sim import SimConfig, SimResult, run


def _silence_votes(result: SimResult) -> set[tuple[int, int]]:
    """(voter, member) of every vote for silence in the first peer's copy of the feeds."""
    peer = result.peers[0]
    assert peer is not None
    n = len(result.peers)
    votes = set()
    for voter, feed in enumerate(peer._feeds):
        for message in feed:
            if message.kind is Kind.DROP:
                body = parse_body(Kind.DROP, message.body, n)
                assert isinstance(body, Drop)
                if body.reason is DropReason.SILENT:
                    votes.add((voter, body.seat))
    return votes


def test_a_two_against_two_partition_that_heals_hands_nothing_on() -> None:
    """The effect digest's game 6: four players, seats {0, 1} and {2, 3} apart from 19.9 s to
    28.2 s. Each side votes the other out for silence; after the heal nobody hands anything
    on (session 26's merge tree handed on 82 beats), and the game ends with nobody dropped."""
    config = SimConfig.soak(6, players=(2, 4))
    assert config.players == 4
    halves = {frozenset({0, 1}), frozenset({2, 3})}
    assert any(set(p.groups) == halves for p in config.faults.partitions)
    result = run(config)
    assert result.finished, result.violations
    assert result.violations == []
    votes = _silence_votes(result)
    assert any(voter in (0, 1) and member in (2, 3) for voter, member in votes)
    assert any(voter in (2, 3) and member in (0, 1) for voter, member in votes)
    for peer in result.peers:
        assert peer is not None
        assert peer._delivery.words.to == {}
        assert peer.final.dropped == {}
