"""Faults no issue names, on real ``nertz node`` processes (session 28's red team).

- The same player started twice at once on one machine (two terminals, two logs): the second
  process forked the player's feed, every other member took that as proof of cheating, the
  honest player was dropped and the audit said *equivocation*. It is now refused before it
  signs anything (:mod:`p2p_nertz.runtime.playerlock`), in one line.
- The same player on a second machine that reaches the others but hears none of them (they
  send to the first): it had no word to doubt and abandoned the other under a seq the first
  had used. Knowing nothing of its feed past its join, it now signs nothing more until a member
  has said what it holds of it, and, hearing nobody, stops in one line (status 5).
- One node's disk fills mid-game (a small tmpfs for its log alone): it stops in one line naming
  its log; the others drop it (or, at two, abandon it) and end alike; the audit of every log is
  VALID, the short log's gaps notices, not findings against anyone.

- One node's disk is slow to sync (seconds a sync): it was dropped before anyone heard it, its
  start making four syncs in a row before its first message (the log's header, its
  directory, the session notes, the join). A new log is now created with its notes and the
  join, two syncs (the file, its directory), and the node is heard as soon as they end.

``scripts/scan_node_faults.py`` plays these and the other faults of the session (the log
removed, a wall clock that jumps, a sync taking a second) at 2, 3 and 4 players.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, cli_run, json_lines_until, node_game
from cli_results import assert_audit_valid, final_event
from script_helpers import load_script

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.logfile.store import read_log
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.evidence import PROOF_NOTE
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.runtime.nodelog import read_session, recovery_unfinished
from p2p_nertz.runtime.playerlock import SCOPE_ENV, PlayerLock

NERTZ = [sys.executable, "-m", "cli"]
TIMERS = ["--suspect-after", "2", "--drop-after", "8"]
#: Timers that a node held still while another starts (a loaded machine: seconds) keeps within.
SLOW_TIMERS = ["--suspect-after", "10", "--drop-after", "60"]
#: Timers within which a node started again learns, on a loaded machine, that its feed goes on
#: elsewhere (a want's round trip within ``suspect_after``), and the game ends soon without it.
MID_TIMERS = ["--suspect-after", "5", "--drop-after", "15"]
_EVENTS = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)


def _endpoints(log: Path) -> dict[int, str]:
    """The endpoints, by seat, that a node noted at the head of its log."""
    with read_log(log) as reader:
        session = read_session(reader)
    assert session is not None
    spec, book = session
    return {spec.seat_of(pid): endpoint for pid, endpoint in book.items()}


def _under_way(
    tmp_path: Path, name: str, timers: list[str]
) -> tuple[GameSpec, list[subprocess.Popen[str]], list[Path], dict[int, str]]:
    """A game of Ann and Bob under way (a card in the lake: Bob has signed events), on
    ``timers``: the spec, the processes, their logs and their endpoints by seat."""
    spec, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], SHORT_ROUND,
        keys=b"test-red-faults-" + name.encode(), salt=b"red-faults-" + name.encode(),
        args=lambda n: ["--progress", *timers],
    )  # fmt: skip
    json_lines_until(procs[0], "lake")
    return spec, procs, logs, _endpoints(logs[0])


def test_player_lock_is_one_holder_per_player_and_game_and_freed_on_release() -> None:
    ann, bob = Identity.from_bytes(bytes(32)), Identity.from_bytes(bytes([1]) * 32)
    game = b"test-red-faults-lock-%d" % os.getpid()  # (names are machine-wide)
    first = PlayerLock(game, ann, "Ann (seat 0)")
    first.acquire()
    assert first.held
    with pytest.raises(BlockingIOError, match="already playing as Ann \\(seat 0\\)"):
        PlayerLock(game, ann, "Ann (seat 0)").acquire()
    others = [PlayerLock(game, bob, "Bob (seat 1)"), PlayerLock(game + b"2", ann, "Ann")]
    for other in others:  # another player, another game: their own locks
        other.acquire()
        other.release()
    first.release()
    again = PlayerLock(game, ann, "Ann (seat 0)")
    again.acquire()  # freed by the first's release
    again.release()
    assert not again.held


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract Unix sockets: Linux")
def test_another_user_cannot_squat_a_players_lock_from_public_values() -> None:
    """The game's id and the player's public key are in every log and beacon: a lock named from
    them alone could be bound first by anyone on the machine, keeping the player out of its own
    game. Every name such a squatter could make is bound here; the player still takes its lock."""
    ann = Identity.from_bytes(bytes([7]) * 32)
    game = b"test-red-faults-squat-%d" % os.getpid()
    public = game + bytes(ann.peer_id)
    squats = []
    for word in (b"", b"p2p-nertz player lock\0", b"p2p-nertz player lock v1\0"):
        for made in (
            hashlib.sha256(word + public),
            hashlib.sha256(word + bytes(ann.peer_id) + game),
        ):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind("\0p2p-nertz-player-" + made.hexdigest()[:32])
            squats.append(sock)
    try:
        lock = PlayerLock(game, ann, "Ann (seat 0)")
        lock.acquire()  # (raises BlockingIOError if a squatter holds its name)
        assert lock.held
        lock.release()
    finally:
        for sock in squats:
            sock.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_second_process_of_one_player_is_refused_before_it_signs(tmp_path: Path) -> None:
    _, procs, logs, endpoints = _under_way(tmp_path, "twin", SLOW_TIMERS)
    # Bob's node held still (it still holds its lock) until its twin is done, so that the game
    # cannot end first, whatever the machine's load.
    procs[1].send_signal(signal.SIGSTOP)
    twin_log = tmp_path / "bob-again.log"
    twin = cli_run(
        [*NERTZ, "node", "--key", str(tmp_path / "1.key"), "--spec", str(tmp_path / "game.spec"),
         "--bind", "tcp://127.0.0.1:0", "--peer", f"0={endpoints[0]}", "--log", str(twin_log),
         "--json", "--speed", "10", *SLOW_TIMERS],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    procs[1].send_signal(signal.SIGCONT)
    # Before the lock it played on as Bob: its own events forked his feed, Ann dropped the
    # honest Bob as a cheat (or, at two, abandoned him) and the audit said equivocation.
    assert twin.returncode == 1, twin.stdout + twin.stderr
    assert "Traceback" not in twin.stderr
    (line,) = twin.stderr.strip().splitlines()
    assert "already playing as Bob (seat 1) in this game" in line, line
    assert not twin_log.exists()  # nothing signed, nothing written
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    finals = [final_event(out) for out in outs]
    assert all(f["over"] and not f["dropped"] for f in finals), finals
    assert finals[0]["digest"] == finals[1]["digest"]
    assert_audit_valid(logs)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_node_started_again_after_its_log_was_lost_stops_without_signing(
    tmp_path: Path,
) -> None:
    """Bob's node killed and its log lost whole, then ``nertz node`` started again for Bob on
    the same endpoint (a fixed ``--bind``), with a new log: it knows nothing of what Bob
    signed. Before session 28 it signed its join (the same bytes as before), then under a seq
    Bob had used: proof of a fork against Bob. Now Ann's word that she holds more of Bob's feed
    than it signed holds it back until Bob's own events, asked for, show that his feed goes on
    elsewhere: it stops in one line, having signed nothing new, and Ann ends the game without
    Bob, for his silence, with no proof against him. Its log says last that it was begun again
    short of Bob's feed (a ``recovering`` note, session 30): the audit of both logs is VALID,
    Bob's events it lacks a notice checked in Ann's copy (until then an error, "lacks events its
        own peer signed"), and a resume of it learns Bob's feed from the others before it signs
    (Ann gone home by then: it refuses in one line, having signed nothing)."""
    spec, procs, logs, endpoints = _under_way(tmp_path, "lost-log", MID_TIMERS)
    ann, bob = (next(s for s, m in enumerate(spec.members) if m.name == n) for n in ("Ann", "Bob"))
    procs[1].kill()
    procs[1].communicate(timeout=60)
    logs[1].unlink()  # the log lost whole
    # (The same endpoint, as a node with a fixed --bind comes back: Ann's DEALER reconnects.)
    again = cli_run(
        [*NERTZ, "node", "--key", str(tmp_path / "1.key"), "--spec", str(tmp_path / "game.spec"),
         "--bind", endpoints[bob], "--peer", f"{ann}={endpoints[ann]}",
         "--log", str(logs[1]), "--json", "--speed", "10", *MID_TIMERS],
        capture_output=True, text=True, timeout=200, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert again.returncode == 1, again.stdout + again.stderr
    assert "Traceback" not in again.stderr
    (line,) = again.stderr.strip().splitlines()
    assert "your key has signed this game's events elsewhere (seq " in line, line
    out, err = procs[0].communicate(timeout=240)
    # Ann ends the game without Bob: she abandons him (status 0), or, her round over on the
    # table first, stops waiting for his word on it (status 3, "gone"); which, the load decides.
    assert procs[0].returncode in (0, 3), out[-2000:] + err[-2000:]
    final = final_event(out)
    assert final["over"] and final["dropped"] == [bob], final
    # The new process signed its join alone (the same bytes as Bob's first event, which Ann
    # holds), nothing after: no proof of a fork in Ann's log, which audits VALID.
    with read_log(logs[1]) as reader:
        own = [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]
    with read_log(logs[0]) as reader:
        records = list(reader)
    assert len(own) == 1 and own[0] in {r.data for r in records}
    assert not [r for r in records if r.kind is RecordKind.NOTE and r.name == PROOF_NOTE]
    with read_log(logs[1]) as reader:
        kept = list(reader)
    assert recovery_unfinished(kept)  # (a resume learns Bob's feed first: resume_point)
    assert_audit_valid(logs)  # (every log: ``nertz audit`` exits 0)
    report = audit([LogSource.from_path(p) for p in logs])
    bobs = [f for f in report.violations if f.log == str(logs[1]) and f.seat == bob]
    events = [decode_message(r.data) for r in records if r.kind in _EVENTS]
    head = max(m.seq for m in events if m.author == spec.peer_ids[bob])
    assert [(f.kind, f.seq, f.last_seq) for f in bobs] == [(FindingKind.LOG_ENDS_EARLY, 2, head)]
    assert report.valid and "begun again" in bobs[0].detail
    # `nertz resume` of it learns Bob's feed from the others before it signs: Ann has gone
    # home, so nobody answers, and it refuses in one line (status 3), having signed nothing.
    resume = cli_run(
        [*NERTZ, "resume", "--key", str(tmp_path / "1.key"), "--bot", "greedy",
         "--suspect-after", "1", "--drop-after", "3", str(logs[1])],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert resume.returncode == 3, resume.stdout + resume.stderr
    assert "a recovery begun earlier did not finish" in resume.stdout
    (line,) = resume.stderr.strip().splitlines()
    assert "cannot recover our own events" in line and "Nothing was signed" in line, line
    with read_log(logs[1]) as reader:
        assert [r.data for r in reader if r.kind is RecordKind.SENT_EVENT] == own


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_second_machine_of_one_player_that_hears_nobody_stops_unheard_without_signing(
    tmp_path: Path,
) -> None:
    """Bob's key in a second ``nertz node`` (another lock scope: another machine) given Ann's
    endpoint, while Bob's first node plays on: Ann's messages go to the first, so the second
    hears nobody. Before session 29 it had no word to doubt, and after ``--drop-after`` it
    abandoned Ann under a seq Bob had used: proof of a fork against Bob. Now, knowing nothing of
    Bob's feed past its join and told nothing by anyone, it signs nothing more and stops in one
    line (status 5); Ann and Bob end their game, nobody voted out and no proof against Bob, and
    the audit of every log, the second's among them, is VALID. Until session 34 the second's
    DEALER, under Bob's own key and routing id, took that id over at Ann's ROUTER
    (``ROUTER_HANDOVER``), which closed the first's connection, and at times Ann heard none of
    the first Bob for her drop timer and voted him out for silence (session 33: 1 of 3 quiet
    runs of the whole suite); each DEALER has a routing id of its own now (``mesh.dealer_id``),
    and the two connections stand side by side at Ann's ROUTER."""
    spec, procs, logs, endpoints = _under_way(tmp_path, "deaf", MID_TIMERS)
    ann = next(s for s, m in enumerate(spec.members) if m.name == "Ann")
    twin_log = tmp_path / "bob-elsewhere.log"
    env = {**os.environ, SCOPE_ENV: f"{os.environ.get(SCOPE_ENV, '')} another machine"}
    twin = cli_run(
        [*NERTZ, "node", "--key", str(tmp_path / "1.key"), "--spec", str(tmp_path / "game.spec"),
         "--bind", "tcp://127.0.0.1:0", "--peer", f"{ann}={endpoints[ann]}",
         "--log", str(twin_log), "--json", "--speed", "10",
         "--suspect-after", "1", "--drop-after", "3"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False, env=env,
    )  # fmt: skip
    assert twin.returncode == 5, twin.stdout + twin.stderr
    assert "Traceback" not in twin.stderr
    (line,) = twin.stderr.strip().splitlines()
    assert "heard nobody at this table in " in line and "signed nothing new" in line, line
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    finals = [final_event(out) for out in outs]
    assert all(f["over"] and not f["dropped"] for f in finals), finals
    assert finals[0]["digest"] == finals[1]["digest"]
    # The second signed its join alone: the same bytes as Bob's first event, which Ann holds.
    with read_log(twin_log) as reader:
        own = [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]
    with read_log(logs[0]) as reader:
        records = list(reader)
    assert len(own) == 1 and own[0] in {r.data for r in records}
    assert not [r for r in records if r.kind is RecordKind.NOTE and r.name == PROOF_NOTE]
    assert_audit_valid([*logs, twin_log])


def _can_mount_tmpfs() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare to mount a small tmpfs in a private mount namespace"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr!r}"


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_node_whose_disk_fills_stops_in_words_and_the_others_end_alike(
    tmp_path: Path,
) -> None:
    why = _can_mount_tmpfs()
    if why is not None:
        pytest.skip(why)
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    # Bob's log alone on a 48 KiB disk of its own, which a game of three short rounds fills
    # in its second (~30 KiB a round, ~95 KiB the game: session 41; the rounds after Bob's
    # drop are short); copied out when his node ends (the disk goes with its namespace).
    mount = (
        f'mount -t tmpfs -o size=48k none {disk} && "$@"; code=$?; cp {disk}/1.log {kept}/; '
        "exit $code"
    )
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob", "Cid"], replace(SHORT_ROUND, rounds=3),
        keys=b"test-red-faults-disk", salt=b"red-faults-disk",
        args=lambda n: [*TIMERS, *(["--log", str(disk / "1.log")] if n == 1 else [])],
        wrap=lambda n: ["unshare", "-m", "sh", "-c", mount, "sh"] if n == 1 else [],
    )  # fmt: skip
    bob = procs[1]
    out, err = bob.communicate(timeout=300)
    assert bob.returncode == 1, out + err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line == f"nertz node: error: {str(disk / '1.log')!r}: No space left on device"
    finals = [final_event(p.communicate(timeout=300)[0]) for p in (procs[0], procs[2])]
    assert [p.returncode for p in (procs[0], procs[2])] == [0, 0]
    assert all(f["over"] and f["dropped"] == [1] for f in finals), finals
    assert finals[0]["digest"] == finals[1]["digest"]
    short = kept / "1.log"
    with read_log(short) as reader:
        assert any(r.kind is RecordKind.SENT_EVENT for r in reader)
        assert not reader.summary().problems  # cut back to its last whole frame
    assert_audit_valid([logs[0], short, logs[2]])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_log_removed_mid_game_is_written_again_and_the_game_stays_valid(tmp_path: Path) -> None:
    """Removed, the log went on being written to a file no name reached: the game ended with
    no log for that player, and a person starting the node again without it would sign again
    under seqs it had used."""
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], SHORT_ROUND,
        keys=b"test-red-faults-unlink", salt=b"red-faults-unlink",
        args=lambda n: ["--progress", *TIMERS],
    )  # fmt: skip
    json_lines_until(procs[1], "lake")
    logs[1].unlink()
    done = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], done
    assert "Traceback" not in done[1][1]
    assert f"{logs[1]} was removed while the game ran: written again there" in done[1][1]
    finals = [final_event(out) for out, _ in done]
    assert finals[0]["digest"] == finals[1]["digest"] and not finals[0]["dropped"]
    assert_audit_valid(logs)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_log_replaced_mid_game_stops_its_node_in_one_line(tmp_path: Path) -> None:
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob", "Cid"], SHORT_ROUND,
        keys=b"test-red-faults-replaced", salt=b"red-faults-replaced",
        args=lambda n: ["--progress", *TIMERS],
    )  # fmt: skip
    json_lines_until(procs[1], "lake")
    other = tmp_path / "other"
    other.write_bytes(b"not a log")
    os.replace(other, logs[1])
    out, err = procs[1].communicate(timeout=240)
    assert procs[1].returncode == 1, out + err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line == (
        f"nertz node: error: {str(logs[1])!r}: another file replaced the log while the game "
        "ran; stopped before signing anything more (this node's events were in the file "
        "replaced)"
    )
    assert logs[1].read_bytes() == b"not a log"  # (not overwritten)
    finals = [final_event(p.communicate(timeout=240)[0]) for p in (procs[0], procs[2])]
    assert [p.returncode for p in (procs[0], procs[2])] == [0, 0]
    assert all(f["over"] and f["dropped"] == [1] for f in finals), finals
    assert finals[0]["digest"] == finals[1]["digest"]
    assert_audit_valid([logs[0], logs[2]])


def _slow_disk_game(
    tmp_path: Path, players: int, name: bytes, syncs: list[str], timers: list[str]
) -> None:
    """A one-round game whose victim (Bob) has a slow disk (``syncs``: the ``RED_FSYNC*``
    settings of ``scripts/scan_node_faults.py``'s ``sitecustomize``), on ``timers``: every
    node must end alike, nobody dropped, the audit of every log VALID."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(load_script("scan_node_faults").SITECUSTOMIZE)
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob", "Cid"][:players], SHORT_ROUND,
        keys=b"test-red-faults-" + name, salt=b"red-faults-%s-%d" % (name, players),
        args=lambda n: timers,
        wrap=lambda n: ["env", f"PYTHONPATH={site}", *syncs] if n == 1 else [],
    )  # fmt: skip
    done = [p.communicate(timeout=360) for p in procs]
    assert [p.returncode for p in procs] == [0] * players, done
    assert all("Traceback" not in err for _, err in done)
    finals = [final_event(out) for out, _ in done]
    assert all(f["over"] and not f["dropped"] for f in finals), finals
    assert len({f["digest"] for f in finals}) == 1, finals
    assert_audit_valid(logs)


#: A slow start: the victim's first SLOW_SYNCS syncs take SLOW_SYNC s each, a third of the drop
#: timer (DROP_AFTER), so that four in a row (32 s unheard) outlast it by a third and two (16 s)
#: stay under it by a third, whatever the machine's load adds to the start of one node.
SLOW_SYNC, SLOW_SYNCS, DROP_AFTER = 8, 4, 24


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("players", [2, 3])
def test_a_node_slow_to_sync_at_its_start_is_heard_before_the_drop(
    tmp_path: Path, players: int
) -> None:
    """Four syncs before the first message (header, directory, session notes, join) kept the
    node unheard for 32 s: the others dropped it (at two, abandoned it) before it said a word.
    Two (the log created whole with its notes and the join) keep it to 16 s."""
    syncs = [f"RED_FSYNC={SLOW_SYNC}", f"RED_FSYNC_FIRST={SLOW_SYNCS}"]
    timers = ["--suspect-after", "4", "--drop-after", str(DROP_AFTER)]
    _slow_disk_game(tmp_path, players, b"slow-sync", syncs, timers)


#: A disk slow mid-game: the victim's syncs quick while it creates its log (with its join),
#: then one of 0.3 s (it moves its syncs to a worker thread), then MID_SYNCS of MID_SYNC s, half
#: again the drop timer (MID_DROP): syncing on trio's thread it was silent 7.5 s, and the
#: others dropped it (at two, abandoned it; and it abandoned the other on waking, before it
#: read what waited); kept heard through the first MID_DROP s of a sync, it is silent 2.5 s at
#: most. (Syncs under the drop timer never got it dropped: at 3 s a sync it was heard between
#: them, session 28.)
MID_SYNC, MID_SYNCS, MID_DROP = 7.5, 1, 5


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("players", [2, 3])
def test_a_node_kept_waiting_by_its_disk_is_heard_through_the_sync(
    tmp_path: Path, players: int
) -> None:
    # (The log's file, its directory, then its events.)
    syncs = [f"RED_FSYNC=0,0,0.3,{MID_SYNC}", f"RED_FSYNC_FIRST={3 + MID_SYNCS}"]
    timers = ["--suspect-after", "1", "--drop-after", str(MID_DROP)]
    _slow_disk_game(tmp_path, players, b"mid-sync", syncs, timers)
