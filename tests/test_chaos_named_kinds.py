"""``scripts/chaos.py``'s kinds drawn only when named (session 26): a failed link
(``cut-link``, ``cut-oneway``) between two seats, and a log cut at a drawn byte
(``kill-cut``, ``kill-frame``) that the resume takes back with ``--recover`` only where the cut
fell on a frame boundary (docs/protocol.md §9.6: such a log looks whole)."""

from __future__ import annotations

from pathlib import Path

from script_helpers import load_script

from p2p_nertz.logfile.format import LogHeader, Record, encode_header, encode_record

chaos = load_script("chaos")
TIMERS = {"suspect": 2.0, "drop": 8.0}


def test_chaos_named_kinds_are_not_drawn_unless_named_and_leave_the_seeds_games_alone() -> None:
    assert not set(chaos.NAMED_ONLY) & set(chaos.KINDS)
    for seed in range(40):
        plain = chaos.schedule(seed, players=[3, 4, 5], kinds=chaos.KINDS, **TIMERS)
        assert all(f.other == -1 and f.keep == -1.0 for f in plain.faults)
        named = chaos.schedule(seed, players=[3, 4, 5], kinds=chaos.NAMED_ONLY, **TIMERS)
        assert (named.players, named.rounds) == (plain.players, plain.rounds)
        for fault in named.faults:
            if fault.kind in chaos.LINKS:
                assert fault.other != fault.victim and 0 <= fault.other < named.players
                assert named.lab
            elif fault.kind in chaos.DEGRADED:
                assert named.lab and fault.other == -1 and fault.keep == -1.0
            else:
                assert 0 < fault.keep <= 1.0 and fault.other == -1


def test_chaos_cut_log_says_whether_the_cut_fell_on_a_frame_boundary(tmp_path: Path) -> None:
    header = encode_header(LogHeader(game_id=b"g", peer_id=bytes(32), created_at_ms=0))
    first = encode_record(Record.note("one", b"x" * 40))
    blob = header + first + encode_record(Record.note("two", b"y" * 40))
    log = tmp_path / "p1.log"
    cases = {
        len(header) + len(first): True,  # a whole record kept, the second lost: looks whole
        len(header) + len(first) + 7: False,  # mid-record: a torn tail, recovered anyway
        len(header) + 3: False,  # inside the first record
        len(header) - 1: False,  # inside the header: no header to read
    }
    for at, boundary in cases.items():
        log.write_bytes(blob)
        assert chaos.cut_log(log, at / len(blob)) is boundary, at
        assert log.stat().st_size == at
    # kill-frame: back to the boundary before the cut (the header's end at least).
    for at, end in {len(blob) - 5: len(header) + len(first), len(header) + 2: len(header)}.items():
        log.write_bytes(blob)
        assert chaos.cut_log(log, at / len(blob), on_frame=True) is True
        assert log.stat().st_size == end


def test_chaos_was_down_sees_the_gap_between_a_nodes_processes(tmp_path: Path) -> None:
    # Seed 26003 (--overlap cut-halves+kill-torn): a member gone (exit 3) and resumed 2 s before
    # a recovery gave up naming it silent; its last process alone made it look up all along.
    plan = chaos.schedule(1, players=[3], kinds=chaos.KINDS, **TIMERS)
    game = chaos.Game(plan, tmp_path, 2.0, 8.0)
    node = chaos.Node(0, tmp_path / "k", tmp_path / "l")
    for started, ended in ((0.0, 60.0), (74.5, None)):
        run = chaos.Run(None, tmp_path / "o", tmp_path / "e", [], started, ended)  # type: ignore[arg-type]
        node.runs.append(run)
    game.nodes.append(node)
    assert game.was_down(0, 64.4, 76.7)  # down from 60 to 74.5
    assert game.was_down(0, 50.0, 61.0)
    assert not game.was_down(0, 10.0, 59.0)  # the first process ran throughout
    assert not game.was_down(0, 75.0, 200.0)  # the second runs still


def test_chaos_degraded_kinds_draw_a_strength_of_their_own_and_roll_needs_three() -> None:
    """Session 31: a ``lossy``, ``slow``, ``narrow`` or ``flap`` fault carries its strength
    (a share lost, a delay, a rate, a period); a rolling partition at two players is a flap."""
    table = {
        "lossy": set(chaos.LOSSES),
        "slow": set(chaos.slow_delays(TIMERS["suspect"])),
        "narrow": set(chaos.RATES),
        "flap": set(chaos.flap_periods(TIMERS["suspect"], TIMERS["drop"])),
        "reset": {0.0},
        "roll": {0.0},
    }
    seen = set()
    for seed in range(60):
        plan = chaos.schedule(seed, players=[2, 3], kinds=chaos.DEGRADED, **TIMERS)
        for fault in plan.faults:
            assert fault.strength in table[fault.kind], fault
            assert not (fault.kind == "roll" and plan.players < 3)
            assert not (fault.everyone and fault.kind not in chaos.SPREAD)
            seen.add(fault.kind)
    assert seen == set(chaos.DEGRADED)
