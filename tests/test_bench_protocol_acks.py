"""The acks' figures of scripts/bench_protocol.py (``--acks``, issue 18, session 20).

Simulated games on a 1 ms ± 0.5 ms one-way network: what the counts and the finality times
must be by the protocol's own rules (docs/protocol.md §7.1, §7.2), whatever the machine.
"""

from __future__ import annotations

import pytest
from script_helpers import load_script

from p2p_nertz.protocol.peer import PeerConfig

pytestmark = pytest.mark.timeout(120)

ONE_WAY_LEAST_MS = 0.5  # 1 ms less its 0.5 ms jitter


def test_at_two_peers_the_other_member_is_final_on_arrival_and_the_author_a_round_trip_later() -> (
    None
):
    f = load_script("bench_protocol").ack_figures(2, PeerConfig(ack_delay=0.0), seeds=(2,))
    assert f.claims > 0 and len(f.author) == len(f.others) == f.claims
    # The author waits for the other's ack: there and back.
    assert min(f.author) >= 2 * ONE_WAY_LEAST_MS
    # The other holds its only other member's word (the claim itself) when the claim lands.
    assert min(f.others) >= ONE_WAY_LEAST_MS
    assert max(f.others) <= 3 * ONE_WAY_LEAST_MS
    assert f.relayed == 0 and f.bursts == f.messages


def test_every_receiver_acks_a_claim_to_every_other_member_and_the_window_delays_finality() -> None:
    bench = load_script("bench_protocol")
    now = bench.ack_figures(4, PeerConfig(ack_delay=0.0), seeds=(2,))
    # Acked at once, each of the 3 receivers tells each of the 3 others: (N - 1)^2.
    assert now.acks >= 9
    assert now.verifies <= now.messages
    window = 0.002
    later = bench.ack_figures(4, PeerConfig(ack_delay=window), seeds=(2,))
    assert min(later.author) >= window * 1e3 + 2 * ONE_WAY_LEAST_MS
    assert min(later.others) >= window * 1e3 + ONE_WAY_LEAST_MS
    assert min(now.author) < window * 1e3 + 2 * ONE_WAY_LEAST_MS
