"""The audit folds each log alone too: two sides that finished differently are an error, named
where they part (issue 13 §1 and §3; docs/audit.md, "Each side's result").

Two constructions: the simulator's two-member partition of issue 13 §1 (each side abandons the
other; the audit must say split exactly when the two peers finished differently), and two
honest members' logs of a game whose third member forked its secret reveal, so that each log
holds its own complete game with every result signed and no abandon: that one splits whatever
rule ends an abandoned game.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import cli_run

from p2p_nertz.audit import AuditReport, Finding, FindingKind, LogSource, audit
from p2p_nertz.protocol.bodies import RevealWhat
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, SimConfig, Simulation
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.network import Partition, SimResult
from tests.audit_helpers import Game, Logs, events_of, played, rewrite

ROOT = Path(__file__).resolve().parent.parent


def _audit(files: list[bytes]) -> AuditReport:
    return audit([LogSource.from_bytes(f"p{i + 1}.log", data) for i, data in enumerate(files)])


def _splits(report: AuditReport) -> list[Finding]:
    return [v for v in report.violations if v.kind is FindingKind.SPLIT_RESULT]


def _partitioned() -> SimResult:
    """Issue 13 §1: two players, two rounds, cut apart from t=10 to t=50 (seed 1)."""
    halves = (frozenset({0}), frozenset({1}))
    faults = Faults(partitions=(Partition(10.0, 50.0, halves),))
    rules = Rules(target=None, rounds=2)
    return Simulation(SimConfig(players=2, seed=1, rules=rules, faults=faults)).run()


def test_audit_split_named_exactly_when_the_two_sides_finished_differently() -> None:
    # Issue 13 §1: before abandons counted only the rounds both sides saw scored, each side of
    # this partition abandoned the other and ended with its own totals, and the audit said
    # VALID. Whatever the fold decides, the audit must say split exactly when the peers did.
    result = _partitioned()
    report = _audit(log_files(result))
    results = [peer.final.game.result for peer in result.peers if peer is not None]
    assert len(results) == 2 and all(r is not None for r in results)
    totals = {r.totals for r in results if r is not None}
    splits = _splits(report)
    assert bool(splits) == (len(totals) > 1), [str(v) for v in report.violations]
    for split in splits:
        assert split.expected is not None and split.found is not None
        for seat, text in ((0, split.expected), (1, split.found)):
            peer = result.peers[seat]
            assert peer is not None
            assert f"game totals {list(peer.final.game.totals)}" in text
        assert split.detail.count("abandon") == 2  # where they part: each side's abandon
    assert report.valid == (not splits)


def _forked_secret(game: Game) -> Logs:
    """Two honest members' logs of one game, where the third member's secret reveal is another
    in the second log (a fork it signed): each log alone folds to a complete game with every
    result signed, the second with the third member forfeiting the round."""
    return [game.copy()[0], _forked_secret_everywhere(game)[1]]


def test_audit_split_two_honest_logs_with_different_complete_games_are_an_error() -> None:
    game = played(players=3, seed=11)
    logs = _forked_secret(game)
    report = game.audit(logs)
    splits = _splits(report)
    assert len(splits) == 1, [str(v) for v in report.violations]
    split = splits[0]
    assert split.round == 1
    assert split.expected is not None and split.expected.startswith("p1.log: game totals ")
    assert split.found is not None and split.found.startswith("p2.log: game totals ")
    assert split.expected[len("p1.log: ") :] != split.found[len("p2.log: ") :]
    assert split.seat == 2  # they part at an event of the member who forked
    # The fork itself is named too; each log alone is a finished game.
    assert {(v.seat, v.kind) for v in report.violations if v.kind is FindingKind.EQUIVOCATION}
    for one in ([logs[0]], [logs[1]]):
        alone = audit([LogSource.from_bytes("p.log", game.files(one)[0])])
        assert alone.finished


def test_audit_split_the_cheaters_own_log_is_no_side() -> None:
    game = played(players=3, seed=11)
    forked = _forked_secret_everywhere(game)
    # An honest log against the cheater's own (which holds its other version): the cheat is
    # named, and no split, since the cheater's fold follows its own fork.
    report = game.audit([game.copy()[0], game.copy()[1], forked[2]])
    assert [v.seat for v in report.violations if v.kind is FindingKind.EQUIVOCATION]
    assert not _splits(report)
    # Its fold alone does reach another result: it is skipped as a side, not agreeing.
    alone = audit([LogSource.from_bytes("p3.log", game.files([[], [], forked[2]])[2])])
    assert alone.finished and alone.totals != game.audit().totals


def test_audit_split_each_log_knows_the_forks_its_peer_proved() -> None:
    # Soak seed 685: a member forks its feed (a Nerts call sent to one peer only); another
    # peer proves it by a lie about time (its proof note: a beat and an event), holding only
    # one version, and does not count the forked member's later abandon. Folded alone, that
    # peer's log must not count it either: no split between two honest peers that agree.
    result = Simulation(SimConfig.soak(685)).run()
    finals = {p.final.game.result for p in result.peers if p is not None and p.seat != 2}
    assert len(finals) == 1  # the honest peers agree
    report = _audit(log_files(result))
    assert not _splits(report), [str(v) for v in _splits(report)]
    assert report.finished and {report.totals} == {r.totals for r in finals if r is not None}


def _forked_secret_everywhere(game: Game) -> Logs:
    """The game's logs with the third member's secret reveal (and every later event of its
    feed) signed again with another secret, in every log."""
    secret = next(
        m for m in events_of(game.logs, 2, game.spec, Kind.REVEAL) if m.body[2] == RevealWhat.SECRET
    )
    logs = game.copy()
    rewrite(game, logs, 2, secret.seq, lambda m: {"body": [*m.body[:3], bytes(32)]})
    return logs


def test_audit_split_command_prints_one_json_object_per_line(tmp_path: Path) -> None:
    game = played(players=3, seed=11)
    paths = []
    for i, data in enumerate(game.files(_forked_secret(game))):
        path = tmp_path / f"p{i + 1}.log"
        path.write_bytes(data)
        paths.append(str(path))
    done = cli_run(
        [sys.executable, "-m", "cli", "audit", "--json", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    *findings, verdict = lines
    assert {line["event"] for line in findings} == {"finding"}
    kinds = {line["finding"]["kind"] for line in findings}
    assert {"split_result", "equivocation"} <= kinds
    assert verdict["event"] == "verdict" and verdict["verdict"] == "invalid"
    assert verdict["errors"] + verdict["notices"] == len(findings)
    assert "violations" not in verdict
