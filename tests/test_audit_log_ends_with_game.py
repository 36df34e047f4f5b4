"""A log that ends as its game ended: its peer stopped with the others' last events still on
their way to it (docs/audit.md, *Damage and blame*).

Session 26 (mergefix26): in the two-cheater scan's game with the breaker alone
(``tests/test_sim_two_cheaters.py``), the simulator stopped once the honest members were
over and held every event, while seats 2 and 4's ``result`` events were 15 ms from the
breaker. The breaker's log lacks them: the audit says so as ``log_ends_early``, a notice
that accuses no one (:attr:`FindingKind.accuses`), its ``seat`` the author of the feed the
log lacks. Whoever wrote those events did nothing wrong, and the game stays valid.

The class: any member's log cut where its peer signed its own last event (what reached it
afterwards lost, as a peer that stops when its game ends loses what is in flight to it),
at 2 to 4 players.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit import FindingKind, LogSource
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.sim import SimConfig, SimResult, Simulation
from p2p_nertz.sim.invariants import audit_result


def _sources(files: list[bytes]) -> list[LogSource]:
    return [LogSource.from_bytes(f"p{i + 1}.log", data) for i, data in enumerate(files)]


def _cut_at_own_end(result: SimResult, seat: int) -> tuple[SimResult, int]:
    """``result`` with ``seat``'s log cut after the last event its own peer signed, and how
    many received events went (those that reached it after its own last word)."""
    own = bytes(result.spec.peer_ids[seat])
    log = result.logs[seat]
    last = max(i for i, wire in enumerate(log) if bytes(decode_message(wire).author) == own)
    logs = [list(wires) for wires in result.logs]
    del logs[seat][last + 1 :]
    return dataclasses.replace(result, logs=logs), len(log) - last - 1


@pytest.mark.parametrize(("players", "seed"), [(2, 3), (3, 5), (4, 8)])
def test_a_log_cut_as_its_game_ended_names_no_one(players: int, seed: int) -> None:
    result = Simulation(SimConfig(players=players, seed=seed)).run()
    assert result.finished
    whole = audit_result(result)
    assert whole.valid and whole.violations == ()
    for seat in range(players):
        cut, lost = _cut_at_own_end(result, seat)
        assert lost > 0  # (the others' last events reached it after its own: the case at hand)
        report = audit_result(cut)
        # The same game, still valid: the others' logs hold what this one lacks.
        assert report.valid, [str(v) for v in report.errors]
        assert report.finished and report.digest == whole.digest
        assert report.totals == whole.totals
        # What is said: that log stops early (and, at two players, that the other's log alone
        # holds those events), notices that accuse no one, of the others' feeds.
        kinds = {v.kind for v in report.violations}
        assert FindingKind.LOG_ENDS_EARLY in kinds
        assert kinds <= {FindingKind.LOG_ENDS_EARLY, FindingKind.SINGLE_COPY}
        ends = [v for v in report.violations if v.kind is FindingKind.LOG_ENDS_EARLY]
        assert {v.log for v in ends} == {f"p{seat + 1}.log"}
        assert seat not in {v.seat for v in ends}
        assert not any(v.kind.accuses for v in report.violations)
