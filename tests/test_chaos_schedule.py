"""``scripts/chaos.py``'s schedules: every kind at every table size (``--cover``), two faults
at once (``--overlap``), and a seed's game unchanged by either option's existence."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from script_helpers import load_script

from cli.args import EXIT_UNHEARD
from p2p_nertz.testing.said import READY_BOUND

chaos = load_script("chaos")
TIMERS = {"suspect": 2.0, "drop": 8.0}


def test_chaos_cover_draws_every_kind_at_every_table_size_as_the_first_fault(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert chaos.main(["--cover", "--lab", "--players", "2-5", "--print-schedule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    drawn = set()
    for text in lines:
        _, _, size, _, first, *_ = text.split()
        drawn.add((first.split("@")[0], int(size[:-1])))
    wanted = {(k, n) for k in chaos.KINDS for n in range(2, 6)} - {("cut-halves", 2)}
    assert drawn == wanted
    assert len(lines) == len(wanted)


def test_chaos_overlap_starts_the_second_fault_inside_the_first() -> None:
    pairs = [("cut-one", "stop-over"), ("stop-2d", "kill"), ("cut-halves", "stop-suspect")]
    for seed in range(200):
        plan = chaos.schedule(seed, players=[4, 5], kinds=chaos.KINDS, pairs=pairs, **TIMERS)
        first, second = plan.faults
        assert (first.kind, second.kind) in pairs
        assert first.during < 0
        assert 0 < second.during < first.length


def test_chaos_schedule_of_a_seed_is_the_same_without_the_options() -> None:
    for seed in range(100):
        plain = chaos.schedule(seed, players=[2, 3, 4, 5], kinds=chaos.KINDS, **TIMERS)
        again = chaos.schedule(seed, players=[2, 3, 4, 5], kinds=chaos.KINDS, **TIMERS)
        first = chaos.schedule(
            seed, players=[2, 3, 4, 5], kinds=chaos.KINDS, first=plain.faults[0].kind, **TIMERS
        )
        assert plain == again == first
        assert all(f.during < 0 for f in plain.faults)


def test_chaos_refuses_a_pair_that_is_not_two_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("stop-over", "stop-over+nap", "+kill"):
        with pytest.raises(SystemExit) as exit_:
            chaos.main(["--overlap", bad, "--print-schedule"])
        assert exit_.value.code == 2
        assert "KIND+KIND" in capsys.readouterr().err


def test_chaos_summary_counts_the_faults_done_not_those_missed() -> None:
    result = {"players": 3, "ok": True, "seed": 7, "kinds": ["stop-short", "stop-short"]}
    text = chaos.summary([{**result, "missed": ["stop-short"]}])
    assert "stop-short         1/1" in text
    text = chaos.summary([{**result, "missed": []}, {**result, "ok": False, "missed": []}])
    assert "stop-short         2/4" in text
    assert "FAILED seeds: 7" in text


def test_chaos_length_gives_every_cut_and_kill_a_named_length_and_changes_nothing_else() -> None:
    spans = chaos.lengths(TIMERS["suspect"], TIMERS["drop"])
    gone = spans["stop-gone"]
    low, high = (TIMERS["drop"] + d for d in chaos.DROP_RACE)
    for seed in range(200):
        plain = chaos.schedule(seed, players=[2, 3], kinds=chaos.KINDS, **TIMERS)
        named = chaos.schedule(
            seed, players=[2, 3], kinds=chaos.KINDS, spans=("gone", "drop"), **TIMERS
        )
        assert named == chaos.schedule(
            seed, players=[2, 3], kinds=chaos.KINDS, spans=("gone", "drop"), **TIMERS
        )
        assert (named.players, named.rounds) == (plain.players, plain.rounds)
        for was, now in zip(plain.faults, named.faults, strict=True):
            assert now.kind == was.kind and now.victim == was.victim
            assert now.trigger == was.trigger and now.half == was.half
            if now.kind in chaos.STOPS:
                assert now.length == was.length
            else:
                assert now.length == gone or low <= now.length <= high, now
    drawn = [
        f.length
        for seed in range(100)
        for f in chaos.schedule(
            seed, players=[2], kinds=["cut-one"], spans=("drop",), **TIMERS
        ).faults
    ]
    assert all(low <= x <= high for x in drawn)
    assert min(drawn) < TIMERS["drop"] < max(drawn)  # heals before and after the votes


def test_chaos_length_wait_heals_around_the_end_of_the_provisional_wait() -> None:
    drop = TIMERS["drop"]
    end = 4 * drop  # the abandon after drop of silence, then gone_after = 3 drop on its result
    low, high = (end + d for d in chaos.WAIT_RACE)
    plans = [
        chaos.schedule(seed, players=[2], kinds=["cut-one"], spans=("wait",), **TIMERS)
        for seed in range(100)
    ]
    again = [
        chaos.schedule(seed, players=[2], kinds=["cut-one"], spans=("wait",), **TIMERS)
        for seed in range(100)
    ]
    assert plans == again
    drawn = [f.length for plan in plans for f in plan.faults]
    assert all(low <= x <= high for x in drawn)
    assert min(drawn) < end < max(drawn)  # heals before and after the wait ends
    # Named with the others, it leaves every other length where it was drawn.
    mixed = [
        f.length
        for seed in range(100)
        for f in chaos.schedule(
            seed, players=[2], kinds=["cut-one"], spans=("drop", "wait", "past"), **TIMERS
        ).faults
    ]
    past = 4 * drop + 4
    assert {x == past or low <= x <= high or x < drop + 2 for x in mixed} == {True}
    assert any(low <= x <= high for x in mixed) and past in mixed


def test_chaos_refuses_an_unknown_length(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("nap", "", "gone,2x"):
        with pytest.raises(SystemExit) as exit_:
            chaos.main(["--length", bad, "--print-schedule"])
        assert exit_.value.code == 2
        assert "choose from short, suspect" in capsys.readouterr().err


def test_chaos_check_fails_a_provisional_result_more_than_the_last_round_apart() -> None:
    settled = {"rounds": 2, "provisional": False}
    assert chaos.provisional_apart({0: settled, 1: {"rounds": 1, "provisional": True}}) == []
    assert chaos.provisional_apart({0: settled, 1: {"rounds": 3, "provisional": True}}) == []
    far = chaos.provisional_apart({0: settled, 1: {"rounds": 0, "provisional": True}})
    assert far == ["P2: provisional on 0 rounds, settled on [2]"]
    # Two provisional sides (nobody settled): nothing to hold them to.
    both = {0: {"rounds": 0, "provisional": True}, 1: {"rounds": 2, "provisional": True}}
    assert chaos.provisional_apart(both) == []


class _Switch:
    """A lab's switch as far as cuts go: which ports are down, and the calls made."""

    def __init__(self) -> None:
        self.down: set[int] = set()
        self.calls: list[str] = []

    def cut(self, host: int) -> None:
        self.calls.append(f"cut {host}")
        self.down.add(host)

    def heal(self, host: int) -> None:
        self.calls.append(f"heal {host}")
        self.down.discard(host)

    def split(self, sides: list[int]) -> None:
        self.calls.append(f"split {sides}")


def test_chaos_two_cuts_of_one_node_heal_it_when_the_later_ends(tmp_path: Path) -> None:
    plan = chaos.Schedule(seed=1, players=3, rounds=2, faults=())
    game = chaos.Game(plan, tmp_path, 1.0, 4.0)
    switch = _Switch()
    game.lab = switch
    game.nodes = [
        chaos.Node(s, tmp_path / f"{s}.key", tmp_path / f"{s}.log", runs=[object()])
        for s in range(3)
    ]
    first = game.inflict(chaos.Fault("cut-one", 1, 0, 20.0))
    second = game.inflict(chaos.Fault("cut-one", 1, 0, 20.0, during=10.0))
    other = game.inflict(chaos.Fault("cut-one", 2, 0, 5.0))
    assert switch.down == {1, 2}
    first()  # the first cut's end: the second still holds seat 1 off the LAN
    assert switch.down == {1, 2}
    other()
    assert switch.down == {1}
    second()
    assert switch.down == set()
    assert switch.calls == ["cut 1", "cut 2", "heal 2", "heal 1"]
    # Seats 1 and 2 cut off leave seat 0 alone: all three may find the table gone.
    assert all(n.faulted for n in game.nodes)


def _game(tmp_path: Path, players: int) -> Any:
    plan = chaos.Schedule(seed=1, players=players, rounds=2, faults=())
    game = chaos.Game(plan, tmp_path, 1.0, 4.0)
    game.lab = _Switch()
    game.nodes = [
        chaos.Node(s, tmp_path / f"{s}.key", tmp_path / f"{s}.log", runs=[object()])
        for s in range(players)
    ]
    return game


def test_chaos_overlap_of_two_splits_draws_two_different_halves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--lab", "--players", "3-5", "--overlap", "cut-halves+cut-halves", "--seed", "1"]
    assert chaos.main([*argv, "--games", "60", "--print-schedule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 60
    sizes = set()
    for text in lines:
        size = text.split()[2]
        first, second = text.split("  ")[-1].split(" + ")
        sizes.add(size)
        assert first.startswith("cut-halves@") and second.startswith("cut-halves@")
        halves = [f.split("@")[1].split("(")[0] for f in (first, second)]
        assert halves[0] != halves[1], text
        if size == "3p":  # the two halves of one seat each: P2, P3 in some order
            assert sorted(halves) == ["P2", "P3"], text
    assert sizes == {"3p", "4p", "5p"}
    # The same seeds with the pair of one split each way keep their first fault's half.
    for seed in range(1, 61):
        both = chaos.schedule(
            seed, players=[3, 4, 5], kinds=chaos.KINDS, pairs=[("cut-halves", "cut-halves")],
            **TIMERS,
        )  # fmt: skip
        one = chaos.schedule(
            seed, players=[3, 4, 5], kinds=chaos.KINDS, pairs=[("cut-halves", "cut-one")],
            **TIMERS,
        )  # fmt: skip
        assert both.faults[0] == one.faults[0]


def test_chaos_two_splits_at_once_leave_each_seat_its_side_of_both(tmp_path: Path) -> None:
    game = _game(tmp_path, 5)
    first = game.inflict(chaos.Fault("cut-halves", 1, 0, 20.0, half=(1, 2)))
    assert [n.faulted for n in game.nodes] == [False, True, True, False, False]
    second = game.inflict(chaos.Fault("cut-halves", 2, 0, 20.0, half=(2, 4), during=5.0))
    # Sides: P1 and P4 on neither half, P2 on the first, P3 on both, P5 on the second.
    assert game.lab.calls == ["split [0, 1, 1, 0, 0]", "split [0, 1, 3, 0, 2]"]
    assert [n.faulted for n in game.nodes] == [False, True, True, False, True]
    now = time.monotonic()
    assert not game.was_apart(0, 3, now, now)
    assert all(game.was_apart(a, b, now, now) for a, b in ((0, 1), (1, 2), (2, 4), (0, 4)))
    first()  # the first heals: the second split stands alone
    assert game.lab.calls[-1] == "split [0, 0, 1, 0, 1]"
    later = time.monotonic()
    assert not game.was_apart(0, 1, later, later) and not game.was_apart(2, 4, later, later)
    assert game.was_apart(1, 2, later, later)
    second()
    assert game.lab.calls[-1] == "split [0, 0, 0, 0, 0]" and game.halves == []
    # At three players, P2 and P3 split off each their own way: all three alone.
    game = _game(tmp_path, 3)
    game.inflict(chaos.Fault("cut-halves", 1, 0, 20.0, half=(1,)))
    assert [n.faulted for n in game.nodes] == [False, True, False]
    game.inflict(chaos.Fault("cut-halves", 2, 0, 20.0, half=(2,), during=5.0))
    assert all(n.faulted for n in game.nodes)


def test_chaos_marks_faulted_a_node_two_cuts_leave_alone(tmp_path: Path) -> None:
    # Seed 19103: P2+P3 split from P1+P4, then P1 cut off: P4, named by neither fault, is
    # alone and may find the table gone (§9.9).
    game = _game(tmp_path, 4)
    game.halves = [(1, 2)]
    game._links_changed()
    assert [n.faulted for n in game.nodes] == [False] * 4  # two sides of two
    game.inflict(chaos.Fault("cut-one", 0, 0, 20.0))
    assert [n.faulted for n in game.nodes] == [True, False, False, True]


def test_chaos_knows_who_was_cut_off_from_whom_and_when(tmp_path: Path) -> None:
    # Seed 19111: P2, killed inside a split P2+P3 | P1+P4 and resumed before it healed, gave
    # its recovery up on P1 and P4, silent: cut off from it, not gone (§9.6 step 5).
    game = _game(tmp_path, 4)
    before = time.monotonic()
    heal = game.inflict(chaos.Fault("cut-one", 3, 0, 5.0))
    cut = time.monotonic()
    game.halves = [(1, 2)]
    game._links_changed()
    during = time.monotonic()
    game.halves = []
    heal()
    after = time.monotonic() + 1.0
    assert game.was_apart(1, 0, during, during) and game.was_apart(1, 3, during, during)
    assert not game.was_apart(1, 2, before - 1.0, after)  # one side all along
    assert game.was_apart(0, 3, cut, cut)  # P4 cut off from the first
    assert not game.was_apart(0, 1, after, after + 1.0)  # all healed
    assert not game.was_apart(0, 1, before - 2.0, before - 1.0)  # before any cut
    err = (
        "nertz resume: error: cannot recover our own events: P1, P4 silent for 4 s and may"
        " hold events we signed. Nothing was signed: resume again if they are still playing"
    )
    assert chaos.silent_named(err) == [0, 3]
    assert chaos.silent_named("nertz resume: error: no such file") == []


class _Proc:
    def __init__(self, code: int | None) -> None:
        self.returncode = code

    def poll(self) -> int | None:
        return self.returncode


class _Run:
    def __init__(self, code: int | None, ended: float | None) -> None:
        self.proc = _Proc(code)
        self.ended = ended


def test_chaos_resumes_the_gone_once_the_rest_cannot_decide(tmp_path: Path) -> None:
    long_ago = time.monotonic() - 100.0
    game = _game(tmp_path, 4)
    resumed: list[str] = []
    game.resume = lambda node: resumed.append(node.name)
    codes = [chaos.EXIT_GONE, None, None, chaos.EXIT_GONE]
    for node, code in zip(game.nodes, codes, strict=True):
        node.runs = [_Run(code, None if code is None else long_ago)]
    game.ends = [(0.0, 0, lambda: None)]
    assert not game.revive_stalled()  # a fault still going on
    game.ends = []
    game.nodes[3].runs = [_Run(chaos.EXIT_GONE, time.monotonic())]
    assert not game.revive_stalled()  # the last gone a moment ago: the rest may yet decide
    game.nodes[3].runs = [_Run(chaos.EXIT_GONE, long_ago)]
    game.nodes[2].runs = [_Run(0, time.monotonic())]
    assert not game.revive_stalled()  # seed 19111: a game ending, its nodes one by one
    game.nodes[2].runs = [_Run(None, None)]
    assert game.revive_stalled()
    assert resumed == ["P1", "P4"] and game.revived == ["P1", "P4"]
    assert not game.revive_stalled()  # once a game
    # Three of five running still hold a majority; two players abandon instead.
    game = _game(tmp_path, 5)
    game.resume = lambda node: resumed.append(node.name)
    for node, code in zip(game.nodes, [3, 3, None, None, None], strict=True):
        node.runs = [_Run(code, None if code is None else long_ago)]
    assert not game.revive_stalled()
    game = _game(tmp_path, 2)
    game.resume = lambda node: resumed.append(node.name)
    for node, code in zip(game.nodes, [3, None], strict=True):
        node.runs = [_Run(code, None if code is None else long_ago)]
    assert not game.revive_stalled()
    assert resumed == ["P1", "P4"]


def test_chaos_deal_shuffle_plays_the_seeds_games_under_the_shuffle_deal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--cover", "--lab", "--players", "2-4", "--print-schedule"]
    assert chaos.main(argv) == 0
    plain = capsys.readouterr().out.splitlines()
    assert chaos.main([*argv, "--deal", "shuffle"]) == 0
    shuffled = capsys.readouterr().out.splitlines()
    # The same games, faults and all, each marked as dealt by shuffling; the default marks none.
    assert [f"{text}  (shuffle deal)" for text in plain] == shuffled
    assert not any("deal" in text for text in plain)
    plan = chaos.schedule(7, players=[3], kinds=chaos.KINDS, deal="shuffle", **TIMERS)
    assert plan.deal == "shuffle"
    assert plan.faults == chaos.schedule(7, players=[3], kinds=chaos.KINDS, **TIMERS).faults
    # The spec the nodes are given: the plan's deal, bound into the game id.
    spec, ids = chaos.game_spec(plan)
    commit, _ = chaos.game_spec(chaos.schedule(7, players=[3], kinds=chaos.KINDS, **TIMERS))
    assert spec.deal is chaos.Deal.SHUFFLE and commit.deal is chaos.Deal.COMMIT
    assert spec.game_id != commit.game_id
    assert [spec.seat_of(i.peer_id) for i in ids] == [0, 1, 2]
    assert spec.rules.rounds == plan.rounds


def test_chaos_refuses_an_unknown_deal(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("shuffled", "", "COMMIT"):
        with pytest.raises(SystemExit) as exit_:
            chaos.main(["--deal", bad, "--print-schedule"])
        assert exit_.value.code == 2
        assert "--deal: invalid choice" in capsys.readouterr().err
    with pytest.raises(ValueError):
        chaos.schedule(1, players=[2], kinds=chaos.KINDS, deal="riffle", **TIMERS)


def test_chaos_line_names_a_shuffle_game_and_only_it() -> None:
    result = {
        "ok": True, "seed": 3, "players": 2, "played": 2, "rounds": 2, "faults": ["kill@P1"],
        "exits": "0,0", "wall": 40.0, "missed": [], "dropped": [], "gone": {},
        "provisional": [], "problems": [],
    }  # fmt: skip
    assert "shuffle deal" in chaos.line({**result, "deal": "shuffle"})
    assert "deal" not in chaos.line({**result, "deal": "commit"})
    assert "deal" not in chaos.line(result)  # a results.jsonl line from before --deal


def _stopped(
    tmp_path: Path, stem: str, code: int | None, started: float, ended: float | None
) -> Any:
    """A process of a node that ran from ``started`` to ``ended`` (``None``: still running) and,
    with exit 5, said it stopped unheard."""
    out, err = tmp_path / f"{stem}.out", tmp_path / f"{stem}.err"
    final = {"event": "final", "over": False, "gone": "unheard", "digest": "d3"}
    out.write_text(json.dumps(final) + "\n" if code == EXIT_UNHEARD else "")
    err.write_text(
        "nertz node: heard nobody at this table in 8 s, so this node signed nothing new\n"
    )
    return chaos.Run(_Proc(code), out, err, [], started, ended)  # type: ignore[arg-type]


@pytest.fixture
def no_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``chaos.check``'s last step, the audit of the logs, answered VALID: no logs here, and
    the audit is not what these tests are about."""
    audit = subprocess.CompletedProcess[str]([], 0, "", "")
    monkeypatch.setattr(chaos.subprocess, "run", lambda *a, **k: audit)


@pytest.mark.usefixtures("no_audit")
def test_chaos_resumes_the_unheard_once_all_stopped_and_holds_each_to_who_was_in_reach(
    tmp_path: Path,
) -> None:
    # Session 30 (a kill at the table's 0th card for longer than ``drop``, two players): P1 dead
    # before P2 heard it, P2 stopped unheard at ``drop`` (exit 5, its log its join alone), P1's
    # resume 16 s later then heard nobody either. chaos.py called exit 5 undocumented and ended
    # the game there; a person resumes both, as their message says, and the game ends alike.
    t0 = time.monotonic() - 100.0
    game = _game(tmp_path, 2)
    game.drop = 8.0
    resumed: list[str] = []
    game.resume = lambda node: resumed.append(node.name)
    p1 = [
        _stopped(tmp_path, "p1", -9, t0, t0 + 0.5),
        _stopped(tmp_path, "p1.r", 5, t0 + 16, t0 + 25),
    ]
    game.nodes[0].runs = p1
    game.nodes[1].runs = [_stopped(tmp_path, "p2", 5, t0, t0 + 8.5)]
    problems, _ = chaos.check(game, [])
    assert problems == []
    assert chaos.play_out(game, time.monotonic() + 5.0, 1) == []
    assert resumed == ["P1", "P2"] and game.revived == ["P1", "P2"]
    # Stopped unheard while the other ran within its reach all along: a failure.
    game = _game(tmp_path, 2)
    game.drop = 8.0
    game.nodes[0].runs = [_stopped(tmp_path, "q1", 5, t0, t0 + 9)]
    game.nodes[1].runs = [_stopped(tmp_path, "q2", None, t0, None)]
    problems, _ = chaos.check(game, [])
    assert problems == ["P1: stopped unheard while P2 played within reach"]
    # ... and so is a process resumed since (each run is checked, not the last alone).
    game.nodes[0].runs.append(_stopped(tmp_path, "q1.r", None, t0 + 10, None))
    assert chaos.check(game, ["P1", "P2"])[0][1:] == problems
    game.nodes[0].runs.pop()
    game.stops = [[t0 + 0.5, t0 + 20.0, 1]]  # P2 held by SIGSTOP meanwhile: it said nothing
    assert chaos.check(game, [])[0] == []
    # Nobody resumed while one still runs, or where one ended with the game over.
    game.resume = lambda node: resumed.append(node.name)
    assert not game.revive_stalled()
    game.nodes[1].runs = [_stopped(tmp_path, "q2", 0, t0, t0 + 50)]
    assert not game.revive_stalled()
    assert resumed == ["P1", "P2"]


def test_scan_node_faults_fsync12_at_two_lets_the_other_stop_unheard(tmp_path: Path) -> None:
    # Session 30 (``scan_node_faults.py --faults fsync12 --players 2``): the victim's log
    # created by two syncs of 12 s before its join went out, the other heard nobody for the
    # drop and stopped unheard (exit 5, as docs/protocol.md §9.6 says), then the victim
    # abandoned it; the scan called that a failure. Under the drop it stays one.
    scan = load_script("scan_node_faults")
    t0 = time.monotonic() - 100.0
    game = _game(tmp_path, 2)
    game.nodes[0].runs = [_stopped(tmp_path, "p1", EXIT_UNHEARD, t0, t0 + 9)]
    game.nodes[1].runs = [_stopped(tmp_path, "p2", 0, t0, t0 + 40)]
    unheard = ["P1: stopped unheard while P2 played within reach"]
    assert scan.judge("fsync12", game, None, unheard) == []
    assert scan.judge("fsync3", game, None, unheard) == unheard


def test_chaos_starts_a_node_killed_before_its_log_again_and_resumes_one_with_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = chaos.Schedule(seed=1, players=2, rounds=2, faults=(), deal="shuffle")
    game = chaos.Game(plan, tmp_path, 1.0, 4.0)
    spawned: list[tuple[int, list[str], str]] = []
    monkeypatch.setattr(game, "_spawn", lambda n, argv, stem: spawned.append((n.seat, argv, stem)))
    game.nodes = []
    for seat in range(2):
        node = chaos.Node(seat, tmp_path / f"{seat}.key", tmp_path / f"{seat}.log")
        node.argv = ["nertz-node", f"seat{seat}"]
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        node.runs.append(chaos.Run(proc, tmp_path / "o", tmp_path / "e", [], time.monotonic()))
        game.nodes.append(node)
    game.nodes[1].log.write_bytes(b"0123456789")
    # Killed at the first moment, before it wrote a log (kill-torn: nothing to tear).
    again = game.inflict(chaos.Fault("kill-torn", 0, 0, 1.0, torn=5))
    assert game.nodes[0].last.proc.returncode == -signal.SIGKILL
    again()
    assert spawned == [(0, ["nertz-node", "seat0"], "p1.again1")]
    # Killed with a log: its tail torn (never past its start), then ``nertz resume`` of it.
    resumed = game.inflict(chaos.Fault("kill-torn", 1, 0, 1.0, torn=12))
    assert game.nodes[1].log.read_bytes() == b""
    resumed()
    seat, argv, stem = spawned[1]
    assert (seat, stem) == (1, "p2.resume1")
    assert argv[3:5] == ["resume", str(game.nodes[1].log)]


def test_chaos_cuts_off_a_killed_node_before_its_resume_and_misses_only_what_needs_it(
    tmp_path: Path,
) -> None:
    # ``--overlap kill+cut-one`` on one node: the cut falls while the node is dead, and its
    # resume comes up cut off (its namespace outlives its process). Before session 22 the
    # script counted the cut missed, so the pair never played on one victim.
    plan = chaos.Schedule(seed=1, players=2, rounds=2, faults=())
    game = chaos.Game(plan, tmp_path, 1.0, 4.0)
    game.nodes = []
    for seat in range(2):
        node = chaos.Node(seat, tmp_path / f"{seat}.key", tmp_path / f"{seat}.log")
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        node.runs.append(chaos.Run(proc, tmp_path / "o", tmp_path / "e", [], time.monotonic()))
        game.nodes.append(node)
    try:
        game.inflict(chaos.Fault("kill", 1, 0, 30.0))  # its resume is not due in this test
        now = time.monotonic()

        def due(kind: str, victim: int) -> bool:
            fault = chaos.Fault(kind, victim, 0, 5.0, during=0.0)
            return bool(game.wait_trigger(fault, now + 5.0, now))

        assert due("cut-one", 1)
        assert due("cut-halves", 1)
        assert not due("stop-over", 1)  # a dead process cannot be stopped
        assert not due("kill", 1)
        assert due("stop-over", 0)
        # A node that ended on its own (not killed by the script) is out of the game: no cut.
        game.nodes[0].last.proc.terminate()
        game.nodes[0].last.proc.wait(timeout=READY_BOUND)  # (its leave: a hang's bound)
        assert not due("cut-one", 0)
    finally:
        for node in game.nodes:
            node.last.proc.kill()
            node.last.proc.wait()


def test_chaos_line_names_a_resume_that_could_not_recover_as_such() -> None:
    """Exit 3 with no reason in its final line is a resume that gave up recovering its own
    events (at two players, its one other member ended: session 24, ``--players 2 --kinds
    kill-torn --length drop,wait,past``); the line said ``gone P1:None``."""
    result = {
        "ok": True, "seed": 101, "players": 2, "played": 1, "rounds": 3,
        "faults": ["kill-torn@P1"], "exits": "3,0", "wall": 71.0, "missed": [],
        "dropped": [0], "gone": {"0": None, "1": "silent"}, "provisional": [], "problems": [],
    }  # fmt: skip
    text = chaos.line(result)
    assert "gone P1:unrecovered,P2:silent" in text
    assert "None" not in text


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_chaos_nodes_bind_port_0_and_start_again_on_the_port_they_said(tmp_path: Path) -> None:
    """On loopback no port is picked for a node and bound later (scripts/ports.py): each binds
    port 0, says its port, and is told the others'; a node started again without a log (its
    first command, :meth:`chaos.Game.restart`) binds the port it said and names the others'."""
    plan = chaos.Schedule(seed=1, players=2, rounds=1, faults=(), deal="commit")
    game = chaos.Game(plan, tmp_path, 1.0, 4.0)
    try:
        game.begin(None)
        said = [json.loads(n.runs[0].out.read_text().splitlines()[0]) for n in game.nodes]
    finally:
        game.stop_all()
    assert not game.notes
    ports = [e["endpoint"] for e in said]
    assert all(e["event"] == "bound" and not e["endpoint"].endswith(":0") for e in said)
    for node in game.nodes:
        assert "--peers-on-stdin" not in node.argv
        assert node.argv[node.argv.index("--bind") + 1] == ports[node.seat]
        peers = [node.argv[i + 1] for i, a in enumerate(node.argv) if a == "--peer"]
        assert peers == [f"{s}={ports[s]}" for s in range(2) if s != node.seat]


@pytest.mark.usefixtures("no_audit")
def test_chaos_reads_an_unheard_exit_0_as_the_game_over_on_its_log(tmp_path: Path) -> None:
    # Session 33: a node that heard nobody and whose log holds the game's end (an old copy
    # of a finished game's log) exits 0, not 5 (cli/args.py gone_status); session 34: so does
    # one that stopped waiting, silent or dropped, with the game's end on its table (its
    # final line says "ended"). Its final fold lacks the others' acks: not a settled final to
    # compare, and fine only if it says the game is over and nobody played within its reach.
    t0 = time.monotonic() - 100.0

    def over_copy(stem: str, *, ended: bool, gone: str = "unheard") -> Any:
        run = _stopped(tmp_path, stem, 0, t0 + 50, t0 + 59)
        final = {"event": "final", "over": False, "gone": gone, "ended": ended, "digest": "d9"}
        run.out.write_text(json.dumps(final) + "\n")
        return run

    done = _stopped(tmp_path, "p1", 0, t0, t0 + 40)
    done.out.write_text(
        json.dumps({"event": "final", "over": True, "digest": "d1", "totals": [1]}) + "\n"
    )
    game = _game(tmp_path, 2)
    game.drop = 8.0
    game.nodes[0].runs = [done]
    for gone in ("unheard", "silent", "dropped"):
        game.nodes[1].runs = [over_copy("p2", ended=True, gone=gone)]
        assert chaos.check(game, [])[0] == []
        game.nodes[1].runs = [over_copy("p2", ended=False, gone=gone)]
        assert chaos.check(game, [])[0] == [f"P2: exit 0, {gone}, without the game over"]
    game.nodes[0].runs = [_stopped(tmp_path, "q1", None, t0, None)]
    game.nodes[1].runs = [over_copy("q2", ended=True)]
    assert chaos.check(game, ["P1"])[0][1:] == ["P2: stopped unheard while P1 played within reach"]
