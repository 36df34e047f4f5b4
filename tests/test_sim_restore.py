"""A peer restored from its log reaches the fold it held live (docs/protocol.md §9.6).

A peer killed at the end of a game and started again from its log must hold the game it held:
the same events of every feed, so the same tentative fold. Found in session 9 (plain soak
seeds 1080 and 2872: the restored peer re-scored a dropped cheater −26 where it had made −31
final live, and read the others' results as violations). The cheater forked at the seq its
drop kept; the peer had taken the version the votes did not keep, then, live, gave it up when
the votes came and took the kept one from its log of received events. Read back, the log
held both versions in that order, but the chains that count were followed only at the end
of the read: by then the kept version had been refused as the fork of the other (23, 1080,
2872). And folding the whole game at once, the tentative fold skipped every event of a member
cut and readmitted further on in the order, its votes among them (36, 40): its refold checked
for events counted that should be skipped, never for events skipped that count.

One seed now (session 43): 23 (1.8 CPU-s), which fails with the first fix undone (the held
votes followed as the log is read back, ``Delivery.read_back``). Of the others, 40 (2.1 CPU-s)
fails on that alone too; 36, 1080 and 2872 pass with it undone, as every seed does with the
refold's check of events skipped that count undone (``folds.skips``) or with a restored peer's
vote again on a fork it voted on after a readmission allowed (``Chains._fork_voted_since``):
the games have changed since session 9.
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim import SimConfig, Simulation
from tests.peer_helpers import restored as restored_peer


@pytest.mark.slow
@pytest.mark.parametrize("seed", [23])
def test_every_peer_restored_from_its_log_holds_the_fold_it_held(seed: int) -> None:
    result = Simulation(SimConfig.soak(seed)).run()
    restored_any = False
    for seat, peer in enumerate(result.peers):
        if peer is None:
            continue
        restored = restored_peer(result, seat)
        restored_any = True
        for q in range(result.spec.seats):
            assert [m.id for m in restored.events(q)] == [m.id for m in peer.events(q)], (seat, q)
        assert restored.tentative.digest() == peer.tentative.digest(), seat
        assert restored.tentative.violations == peer.tentative.violations, seat
    assert restored_any
