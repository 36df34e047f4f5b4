"""``nertz resume`` of a log cut inside an event its peer had sent (issue 13, section 4).

Real processes on 127.0.0.1: two ``nertz node`` bots play; Bob's is killed (SIGKILL) and his
log is cut inside the last event he had signed and sent (the torn tail a disk can leave). The
resume says so, waits for Ann to say what she holds of Bob's feed (nothing is signed
meanwhile: a SIGTERM then signs nothing either), takes his event back from her, and finishes
the game; ``nertz audit`` of both logs finds the game valid, with no equivocation.
"""

from __future__ import annotations

import json
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from cli_helpers import (
    cli_popen,
    cli_run,
    held_ports,
    introduce,
    json_lines_until,
    nertz,
    one_error_line,
    stop_all,
)

from cli.args import EXIT_GONE, GoneError
from cli.keyfile import write_key
from cli.lobby_cmd import _recovery_reason
from cli.main import main
from cli.node_cmd import watch_recovery
from p2p_nertz.logfile.format import LogHeader, RecordKind, encode_record
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import create_log, read_log
from p2p_nertz.protocol.envelope import Message, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.peer import Record as PeerRecord
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import ENDPOINTS_NOTE, SPEC_NOTE
from p2p_nertz.testing.said import reap

DEADLINE = 60.0
# Ann's patience with Bob's silence: it runs from his kill through a first resume and a
# second one's start (two process starts and a stop; on a loaded machine each start can take
# 10 s and more), and at two players its end ends the game (§9.3, §9.5): 30 s is too near.
_PATIENT = ["--drop-after", "120"]
NERTZ = [sys.executable, "-m", "cli"]


def _frames(data: bytes) -> list[tuple[int, int, bytes]]:
    """Every record frame of a log: (offset, length, payload) (docs/log-format.md §2-§3)."""
    (length,) = struct.unpack(">I", data[10:14])
    at = 10 + 12 + length  # after the prefix and the header frame
    out = []
    while at + 12 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        out.append((at, length, data[at + 8 : at + 8 + length]))
        at += 12 + length
    return out


def _own_events(path: Path) -> list[Message]:
    with read_log(path) as reader:
        wires = [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]
    return [decode_message(w) for w in wires]


@pytest.mark.slow
@pytest.mark.timeout(360)
@pytest.mark.parametrize("how", ["torn", "boundary"])
def test_resume_of_a_log_cut_inside_a_sent_event_recovers_it_and_never_equivocates(
    tmp_path: Path, how: str
) -> None:
    # torn: cut inside the last event Bob sent (the tail is torn), and a first resume is
    # stopped by SIGTERM while it waits. boundary: cut three own events back at a frame
    # boundary (a backup, say: the log looks whole), resumed with --recover.
    ids = [Identity.generate(derive_seed(b"test-cli-resume-recovery", n)) for n in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, name) for i, name in zip(ids, ("Ann", "Bob"), strict=True)],
        Rules(target=None, rounds=1),
        b"resume-recovery",
    )
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    names = ("ann", "bob")
    for ident, name in zip(ids, names, strict=True):
        write_key(tmp_path / f"{name}.key", ident)
    logs = {name: tmp_path / f"{name}.log" for name in names}

    def node(name: str) -> subprocess.Popen[str]:  # (any free port, told the other's after)
        return cli_popen(
            [*NERTZ, "node", "--key", str(tmp_path / f"{name}.key"),
             "--spec", str(tmp_path / "game.spec"), "--bind", "tcp://127.0.0.1:0",
             "--peers-on-stdin", "--log", str(logs[name]), "--json", *_PATIENT,
             *(["--progress"] if name == "bob" else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.PIPE,
        )  # fmt: skip

    def resume(*extra: str) -> subprocess.Popen[str]:
        return cli_popen(
            [*NERTZ, "resume", str(logs["bob"]), "--key", str(tmp_path / "bob.key"),
             "--bot", "greedy", "--json", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    procs: list[subprocess.Popen[str]] = []
    try:
        ann, bob = node("ann"), node("bob")
        procs += [ann, bob]
        introduce(spec, ids, [ann, bob])
        for _ in range(3):  # three cards in the lake: Bob has signed and sent a good many events
            json_lines_until(bob, "lake")
        reap(bob, "Bob's node")
        # With Ann stopped, the resume can only wait: a SIGTERM then signs nothing.
        ann.send_signal(signal.SIGSTOP)
        # Cut Bob's log inside the last event he had sent that Ann holds (killed between the
        # log and the send, his very last one may never have left).
        with read_log(logs["ann"]) as reader:
            bob_id = ids[1].peer_id
            held = {
                m.id
                for m in (
                    decode_message(r.data) for r in reader if r.kind is RecordKind.RECEIVED_EVENT
                )
                if m.author == bob_id
            }
        data = logs["bob"].read_bytes()
        sent = [f for f in _frames(data) if f[2][0] == RecordKind.SENT_EVENT]
        offset, length, payload = [
            f for f in reversed(sent) if decode_message(f[2][1:]).id in held
        ][0 if how == "torn" else 2]
        lost = decode_message(payload[1:])
        if how == "torn":
            logs["bob"].write_bytes(data[: offset + 12 + length // 2])
            first = resume()
            procs.append(first)
            seen = json_lines_until(first, "waiting")
            recovering = next(e for e in seen if e["event"] == "recovering")
            assert (recovering["reason"], recovering["at"]) == ("torn", offset)
            assert seen[-1]["names"] == ["Ann"]
            first.send_signal(signal.SIGTERM)
            first.communicate(timeout=DEADLINE)
            assert max(m.seq for m in _own_events(logs["bob"])) == lost.seq - 1
            ann.send_signal(signal.SIGCONT)
            second = resume()  # its log is whole now, but says its recovery did not finish
            reason = "unfinished"
        else:
            logs["bob"].write_bytes(data[:offset])
            ann.send_signal(signal.SIGCONT)
            second = resume("--recover")
            reason = "asked"
        procs.append(second)
        # (It plays the rest of the round at the bots' pace, on a loaded machine.)
        out, err = second.communicate(timeout=3 * DEADLINE)
        assert second.returncode == 0, err
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        kinds = [e["event"] for e in events]
        assert events[kinds.index("recovering")]["reason"] == reason
        recovered = events[kinds.index("recovered")]
        assert (recovered["first"], recovered["last"], recovered["holders"]) == (
            lost.seq,
            recovered["last"],
            ["Ann"],
        )
        assert recovered["last"] >= lost.seq
        assert events[-1]["event"] == "final" and events[-1]["over"] is True
        _, err = ann.communicate(timeout=DEADLINE)
        assert ann.returncode == 0, err
    finally:
        stop_all(procs)
    own = _own_events(logs["bob"])
    assert sorted(m.seq for m in own) == list(range(1, len(own) + 1))  # each once, no gap
    assert lost.id in {m.id for m in own}  # taken back, not signed anew
    audit = cli_run(
        [*NERTZ, "audit", str(logs["ann"]), str(logs["bob"])],
        capture_output=True, text=True, timeout=DEADLINE, check=False,
    )  # fmt: skip
    assert "equivocat" not in audit.stdout.lower(), audit.stdout
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.fixture
def ports() -> Iterator[list[int]]:
    """Ann's and Bob's ports in :func:`_lone_log`, held bound for the test (``held_ports``):
    nobody answers at Ann's, and no other process takes Bob's before his resume binds it
    (it binds the endpoint its log notes, the one the others know: never port 0)."""
    with held_ports(2) as held:
        yield held


def _lone_log(tmp_path: Path, tail: bytes, ports: list[int]) -> tuple[Path, Path, bytes]:
    """Bob's log of a two-player game on ``ports`` (Ann's, Bob's): the session notes and his
    ``join``, then ``tail``. Returns the log, Bob's key file and the log's bytes."""
    ids = [Identity.generate(derive_seed(b"test-cli-resume-lone", n)) for n in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, name) for i, name in zip(ids, ("Ann", "Bob"), strict=True)],
        Rules(target=None, rounds=1),
        b"resume-lone",
    )
    bob = ids[1]
    write_key(tmp_path / "bob.key", bob)
    (tmp_path / "game.spec").write_bytes(spec.to_wire())  # (for `nertz node`)
    book = {bytes(i.peer_id): f"tcp://127.0.0.1:{p}" for i, p in zip(ids, ports, strict=True)}
    peer = Peer(bob, spec, 0.0)
    joins = [e.data for e in peer.start(0.0) if isinstance(e, PeerRecord) and e.own]
    path = tmp_path / "bob.log"
    header = LogHeader(game_id=spec.game_id, peer_id=bytes(bob.peer_id), created_at_ms=0)
    with create_log(path, header) as writer:
        writer.append_many(
            [
                LogRecord.note(SPEC_NOTE, spec.to_wire()),
                LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(book, use_bin_type=True)),
                *(LogRecord.sent_event(j) for j in joins),
            ]
        )
    with path.open("ab") as f:
        f.write(tail)
    return path, tmp_path / "bob.key", path.read_bytes()


def test_resume_whose_page_cannot_be_served_says_so_before_its_node_starts(
    tmp_path: Path, ports: list[int]
) -> None:
    """``nertz resume --web`` on a page address in use or not of this machine: one line,
    status 2, and nothing of the game touched — it was said after the node was made
    (session 43: ``play --web`` was mended first, resume's path was left)."""
    path, key, data = _lone_log(tmp_path, b"", ports)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        for bind in (f"127.0.0.1:{taken.getsockname()[1]}", "192.0.2.1:0"):  # (TEST-NET-1)
            done = nertz(
                *("resume", str(path), "--key", str(key), "--bot", "greedy"),
                *("--web", "--no-open", "--web-bind", bind),
                timeout=120,
                home=tmp_path / "home",
            )
            line = one_error_line(done, f"cannot serve the page on {bind}")
            assert done.returncode == 2 and line.startswith("nertz resume: error: "), line
            assert path.read_bytes() == data  # (no node: nothing appended, nothing cut)


def test_resume_says_whether_it_cut_a_frame_or_zero_bytes(tmp_path: Path, ports: list[int]) -> None:
    # A crash that kept the file's new size, not its data, leaves zeros: said as padding, not
    # as a frame cut short (LogSummary.torn_words: the audit's words too).
    torn = encode_record(LogRecord.sent_event(b"x" * 200))[:-50]
    for tail, words in ((bytes(4096), "ends in 4096 zero bytes"), (torn, "inside a frame")):
        (place := tmp_path / str(len(tail))).mkdir()
        path, _, _ = _lone_log(place, tail, ports)
        with read_log(path) as reader:
            summary = reader.summary()
        args = SimpleNamespace(cut_damaged_tail=False)
        said = _recovery_reason(path, summary, args, unfinished=False)  # type: ignore[arg-type]
        assert said is not None and words in said[0], said
        assert said[1] == {"reason": "torn", "at": summary.good_end, "cut": len(tail)}


def test_resume_refuses_a_damaged_tail_in_one_line_unless_told_to_cut_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ports: list[int]
) -> None:
    path, key, data = _lone_log(tmp_path, b"\x07" * 40, ports)
    status = main(["resume", str(path), "--key", str(key), "--bot", "greedy"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("nertz resume: error: ") and "--cut-damaged-tail" in line
    assert path.read_bytes() == data  # nothing cut, nothing written


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_resume_with_everyone_else_gone_stops_with_a_clear_error_and_signs_nothing(
    tmp_path: Path, ports: list[int]
) -> None:
    # The torn frame may have been an event Bob sent; Ann, who would hold it, never answers.
    torn = encode_record(LogRecord.sent_event(b"x" * 200))[:-50]
    path, key, _ = _lone_log(tmp_path, torn, ports)
    done = cli_run(
        [*NERTZ, "resume", str(path), "--key", str(key), "--bot", "greedy", "--json",
         "--suspect-after", "0.3", "--drop-after", "1"],
        capture_output=True, text=True, timeout=DEADLINE, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == EXIT_GONE, done.stderr  # (3: the others gone, not a usage error)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["resume", "recovering", "waiting"]
    assert events[1]["reason"] == "torn" and events[2]["names"] == ["Ann"]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("nertz resume: error: cannot recover our own events: Ann silent")
    assert [m.seq for m in _own_events(path)] == [1]  # nothing signed


class _HopelessAtOnce:
    """A node whose restored peer waits for seat 0 and is hopeless at the first look: the
    silence it counts began before the watch did (on a loaded machine, a drop timeout before)."""

    peer = SimpleNamespace(
        recovering=True,
        awaiting=lambda: (0,),
        recovery_hopeless=lambda now: True,
        config=SimpleNamespace(drop_after=1.0),
    )

    @staticmethod
    def clock() -> float:
        return 0.0


def test_a_recovery_given_up_at_its_first_look_says_whom_it_waited_for_first() -> None:
    said: list[tuple[int, ...]] = []
    with pytest.raises(GoneError, match="cannot recover our own events: Ann silent"):
        trio.run(watch_recovery, _HopelessAtOnce(), ["Ann", "Bob"], said.append)
    assert said == [(0,)]


@pytest.mark.timeout(60)
def test_node_on_a_torn_log_with_everyone_else_gone_stops_as_resume_does(
    tmp_path: Path, ports: list[int]
) -> None:
    # `nertz node` on the same log: it recovered in silence and waited for ever before.
    torn = encode_record(LogRecord.sent_event(b"x" * 200))[:-50]
    path, key, _ = _lone_log(tmp_path, torn, ports)
    spec = GameSpec.from_wire((tmp_path / "game.spec").read_bytes())
    ann = next(seat for seat, m in enumerate(spec.members) if m.name == "Ann")
    done = cli_run(
        [*NERTZ, "node", "--key", str(key), "--spec", str(tmp_path / "game.spec"),
         "--bind", "127.0.0.1:0", "--peer", f"{ann}=127.0.0.1:{ports[0]}", "--log", str(path),
         "--json", "--suspect-after", "0.3", "--drop-after", "1"],
        capture_output=True, text=True, timeout=DEADLINE, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == EXIT_GONE, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("nertz node: error: cannot recover our own events: Ann silent")
    assert [m.seq for m in _own_events(path)] == [1]  # nothing signed
