"""An honest member that leaves while cut off, before the votes (or the abandon) that remove
it in the order, past their count (docs/protocol.md §9.3, *A leave past the cut*; session 37).

Its clock is behind the others' (it hears nothing while cut off), so its ``leave`` comes
first in the total order; the others, holding its feed only up to what they count, make its
drop final without the leave, which never counts for them once read. Until session 37 the
audit of every log read the leave first, had the member out at it, and reached another game
than the peers' (the lie fuzzer's ``claim_after_leave`` after a readmission found it: readmit
seeds 297 and two-liar 56, ``tests/test_sim_liars_back.py``). Pure tests on a fake clock
(:class:`PeerNetwork`, every peer honest), the audit of their logs.
"""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork, log_sources

from p2p_nertz.audit import audit
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.peer import PeerConfig, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)


def _send(net: PeerNetwork, seat: int, effects: list[object]) -> None:
    for effect in effects:
        if isinstance(effect, Send):
            net.send(seat, effect)


def _cut_off_and_leave(players: int, seed: int) -> tuple[PeerNetwork, int]:
    """A game of ``players`` in play; the last seat is cut off from everyone and leaves half
    a second later; the others drop it for silence (at two, the other abandons it once it is
    silent for ``drop_after``); the network heals 8 s after the cut. Returns the network once
    every member still in has ended the game and the leaver holds every event of theirs."""
    net = PeerNetwork(players, seed=seed, rules=Rules(target=None, rounds=2), config=QUICK)
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers) and n.now > 3.0)
    out = players - 1
    net.blocked = frozenset(frozenset((out, q)) for q in range(out))
    cut = net.now
    net.run(lambda n: n.now >= cut + 0.5)
    _send(net, out, net.peers[out].leave(net.now))
    if players == 2:
        net.run(lambda n: n.now >= cut + QUICK.drop_after + 0.5)
        _send(net, 0, net.peers[0].abandon(net.now))
    net.run(lambda n: n.now >= cut + 8.0)
    net.blocked = frozenset()
    stayed = net.peers[:out]

    def settled(n: PeerNetwork) -> bool:
        done = all(p.final.phase is Phase.OVER for p in stayed)
        return done and all(
            len(n.peers[out].events(q)) == len(n.peers[q].events(q)) for q in range(out)
        )

    net.run(settled, within=200.0)
    return net, out


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (2, 1), (3, 0), (3, 1), (4, 0)])
def test_leave_past_the_cut_the_audit_reaches_the_game_of_the_members_still_in(
    players: int, seed: int
) -> None:
    net, out = _cut_off_and_leave(players, seed)
    stayed = [p.final for p in net.peers[:out]]
    (cut,) = {f.dropped[out] for f in stayed}
    (removed_at,) = {f.drop_at[out] for f in stayed}
    # (The case: the leave past the cut, before the votes or the abandon in the order.)
    (leave,) = [m for m in net.peers[0].events(out) if m.kind is Kind.LEAVE]
    assert leave.seq > cut and leave.lamport < removed_at
    assert all(out not in f.roster.left for f in stayed)
    (digest,) = {f.digest() for f in stayed}
    report = audit(log_sources(net))
    assert report.state is not None
    assert report.state.dropped[out] == cut and out not in report.state.roster.left
    assert report.digest == digest
    result = stayed[0].game.result
    assert result is not None and report.winners == result.winners
    # Every peer's own view too, the leaver's among them: it learned the drop from the votes.
    assert report.valid, report.violations
    assert net.peers[out].final.dropped[out] == cut and out not in net.peers[out].final.roster.left
