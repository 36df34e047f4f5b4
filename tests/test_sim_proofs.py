"""Proofs of cheating reach the logs: the simulator's and the files made from them (issue 13 §3).

Each honest peer that finds a proof writes a ``proof`` note (docs/log-format.md §5) before the
vote it justifies: ``msgpack [wire_a, wire_b]``, two signed messages exactly as received.
"""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.logfile.format import LogDecoder, RecordKind
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import PROOF_NOTE, PeerConfig
from p2p_nertz.sim import Equivocation, Faults, SimConfig, run
from p2p_nertz.sim.logfiles import log_files

QUICK_DROP = PeerConfig(suspect_after=1.0, drop_after=3.0)


def test_sim_equivocation_proof_is_a_note_in_every_honest_log_before_the_vote() -> None:
    cheater = 2
    cheat = Equivocation(seat=cheater, at=5.0, to=frozenset({0}))
    config = SimConfig(players=4, seed=3, faults=Faults(equivocations=(cheat,)), peer=QUICK_DROP)
    result = run(config)
    assert result.finished and result.violations == []
    again = run(config)
    assert again.log_digest() == result.log_digest()  # notes too: same seed, same bytes
    author = result.spec.peer_ids[cheater]
    for seat, data in enumerate(log_files(result)):
        if seat == cheater:
            continue
        decoder = LogDecoder(strict=True)
        records = decoder.feed(data)
        decoder.close()
        proofs = [
            i for i, r in enumerate(records) if r.kind is RecordKind.NOTE and r.name == PROOF_NOTE
        ]
        assert len(proofs) == 1, seat
        first, second = (decode_message(w) for w in msgpack.unpackb(records[proofs[0]].data))
        assert first.author == second.author == author
        assert first.seq == second.seq and first.id != second.id
        votes = [
            i
            for i, r in enumerate(records)
            if r.kind is RecordKind.SENT_EVENT and decode_message(r.data).kind is Kind.DROP
        ]
        body = parse_body(Kind.DROP, decode_message(records[votes[0]].data).body, 4)
        assert isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION
        assert body.fork_seq == first.seq
        assert proofs[0] < votes[0]
