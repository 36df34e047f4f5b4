"""Scan every ``nertz`` command with what a person might get wrong and what a hostile file
might be: malformed numbers, wrong files where a key, spec or log is due, places that cannot
be written. Each case runs a real ``nertz`` process (with a timeout) and must end with the
documented status, its last stderr line in the project's form (``nertz CMD: error: …``; a
usage error's usage line above it is allowed), no traceback, and nothing changed on disk that
should not be. Prints one line per case and a summary; exits 1 if any case failed.

Cases that need a read-only or a full filesystem run inside a private mount namespace
(``unshare -m``, a tmpfs mounted there only); the unreadable-file cases run the command as
``nobody`` (``setpriv``). A case whose tool or privilege is missing is listed as skipped.
Session 27 added (:func:`_session27_cases`) standard streams closed as ``nertz`` starts, names
the system refuses before the command's own checks (too long, in a directory ``nobody`` may
not search), a FIFO or ``/dev/zero`` where a key, spec, log or invite file is due, ``nertz
host`` numbers that contradict each other and arguments of 10,000 characters. Session 28
added (:func:`_session28_cases`) every whole-number option given a fraction, a sign, a word or
nothing, ``--dir`` naming a device or a file or another game's directory or a quoted ``~``,
``nertz rules`` with a wrong topic, ``nertz`` alone, argparse's other refusals (a missing
value, an ambiguous start, a switch given a value) and a terminal that is not UTF-8; and every
case's error line is checked for argparse's own English ("invalid int value", "expected one
argument", "unrecognized arguments"): the project says what to do in its own words.

Not part of the suite: ``python scripts/scan_cli_inputs.py [--only WORD,…] [--timeout S]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_nertz.protocol.identity import Identity  # noqa: E402
from p2p_nertz.protocol.spec import GameSpec  # noqa: E402
from p2p_nertz.rng import derive_seed  # noqa: E402
from p2p_nertz.rules import Rules  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "golden"
HUGE = 2 << 30  # a sparse 2 GiB file


@dataclass
class Case:
    """One command line and what it must end with."""

    name: str
    argv: list[str]
    want: tuple[int, ...] = (2,)
    wrap: str = ""  # "" | "nobody" | "rofs" | "fullfs"
    watch: list[Path] = field(default_factory=list)  # must be unchanged (or still absent)
    closed: tuple[int, ...] = ()  # standard descriptors closed as it starts (0: <&-, 1: >&-)
    env: dict[str, str] = field(default_factory=dict)  # more of the environment


def _state(paths: list[Path]) -> list[str]:
    out = []
    for p in paths:
        if p.is_dir():
            out.append(f"{p}:dir:{sorted(x.name for x in p.iterdir())}")
        elif p.is_file():
            st = p.stat()
            h = hashlib.sha256()
            with p.open("rb") as f:
                h.update(f.read(1 << 20))
            out.append(f"{p}:{st.st_size}:{st.st_mode:o}:{h.hexdigest()}")
        else:
            out.append(f"{p}:absent")
    return out


class Fixtures:
    """The good and the wrong files the cases name, in one temporary directory."""

    def __init__(self, base: Path) -> None:
        self.base = base
        ids = [Identity.generate(derive_seed(b"scan-cli-inputs", n)) for n in (0, 1)]
        spec = GameSpec.create(
            [(ids[0].peer_id, "Ann"), (ids[1].peer_id, "Bob")],
            Rules(target=None, rounds=1),
            b"scan",
        )
        self.home = base / "home"
        self.home.mkdir()
        self.key = self._write("ann.key", ids[0].to_bytes(), 0o600)
        self.spec = self._write("game.spec", spec.to_wire())
        self.public = self._write("public.key", bytes(ids[0].peer_id), 0o600)
        self.empty = self._write("empty", b"", 0o600)
        self.short_key = self._write("short.key", ids[0].to_bytes()[:16], 0o600)
        self.long_key = self._write("long.key", ids[0].to_bytes() + b"\n", 0o600)
        self.text_key = self._write(
            "ssh.key", b"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n", 0o600
        )
        self.group_key = self._write("group.key", ids[0].to_bytes(), 0o640)
        self.locked = self._write("locked", ids[0].to_bytes(), 0o000)
        self.junk = self._write("junk", bytes(range(256)) * 64, 0o600)
        self.utf8_junk = self._write("utf8", "ünïcödé ✓\n".encode() * 10, 0o600)
        self.directory = base / "a-directory"
        self.directory.mkdir()
        self.huge = base / "huge"
        with self.huge.open("wb") as f:
            f.truncate(HUGE)
        os.chmod(self.huge, 0o600)
        self.spec_trunc = self._write("trunc.spec", spec.to_wire()[: len(spec.to_wire()) // 2])
        wire = bytearray(spec.to_wire())
        wire[-3] ^= 0x01  # a spec that lies: one byte of its contents changed
        self.spec_lie = self._write("lie.spec", bytes(wire))
        log1 = (GOLDEN / "two-players" / "p1.log").read_bytes()
        self.log1 = self._write("p1.log", log1)
        self.log2 = self._write("p2.log", (GOLDEN / "two-players" / "p2.log").read_bytes())
        self.other = self._write(
            "other.log", (GOLDEN / "three-players-lossy" / "p1.log").read_bytes()
        )
        self.log_half = self._write("half.log", log1[: len(log1) // 2 + 7])
        self.log_head = self._write("head.log", log1[:20])
        self.log_junk_tail = self._write("junktail.log", log1 + b"\xff" * 40)
        self.v1 = self._write("v1.log", (ROOT / "tests/data/v1/three-players-p1.log").read_bytes())
        self.a_file = self._write("a-file", b"x")
        self.missing = base / "missing"
        self.no_parent = base / "no" / "such" / "dir"
        self.mnt = base / "mnt"  # the read-only or full tmpfs, in a private mount namespace
        self.mnt.mkdir()
        self.fifo = base / "a-fifo"
        os.mkfifo(self.fifo)
        self.too_long = base / ("x" * 300)  # (over NAME_MAX: the system refuses the name)
        self.sealed = base / "sealed"  # root's, 0700: nobody may look inside
        self.sealed.mkdir(mode=0o700)
        self.sealed_key = self._write("sealed/ann.key", ids[0].to_bytes(), 0o600)
        self.sealed_log = self._write("sealed/p1.log", log1)

    def _write(self, name: str, data: bytes, mode: int = 0o644) -> Path:
        path = self.base / name
        path.write_bytes(data)
        os.chmod(path, mode)
        return path


def _numbers() -> list[str]:
    return ["-1", "0", "1" + "0" * 30, "abc", "", "nan", "1e309", "½"]


def cases(fx: Fixtures) -> list[Case]:
    """Every case of the scan."""
    s, k = str, str(fx.key)
    host, join = (["host", "--bot", "greedy", "--key", k], ["join", "--bot", "greedy", "--key", k])
    out: list[Case] = []
    # --- numbers --------------------------------------------------------------------------
    numeric = {
        "match": ["--players", "--bots", "--speed", "--seed", "--target", "--rounds",
                  "--false-call-penalty"],
        "demo": ["--bots", "--players", "--speed", "--seed", "--timeout", "--suspect-after",
                 "--drop-after"],
        "play": ["--bots", "--speed", "--seed"],
        "host": ["--capacity", "--bots", "--port", "--beacon-port", "--players", "--bot-speed"],
        "join": ["--timeout", "--beacon-port", "--speed"],
        "games": ["--timeout", "--beacon-port"],
    }  # fmt: skip
    for cmd, options in numeric.items():
        extra = ["--discover", "127.0.0.255"] if cmd == "games" else []
        for option in options:
            for value in _numbers():
                if option == "--seed" and value not in ("abc", "", "nan", "½"):
                    continue  # (a seed may be any integer: a game would be played)
                if option == "--timeout" and value.startswith("1000"):
                    continue  # (a huge timeout is a long wait, as asked: Ctrl-C ends it)
                if option == "--false-call-penalty" and value == "0":
                    continue  # (valid)
                out.append(Case(f"{cmd} {option} {value!r}", [cmd, *extra, option, value]))
    out.append(Case("demo --bots ² (a digit int() refuses)", ["demo", "--bots", "²"]))
    out.append(Case("match --players ٣ (unicode digit)", ["match", "--players", "٣"], (0, 2)))
    out.append(Case("node --speed 0", ["node", "--key", k, "--spec", s(fx.spec), "--bind",
                                       "tcp://127.0.0.1:1", "--log", s(fx.missing),
                                       "--speed", "0"]))  # fmt: skip
    for value in ("", "tcp://", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:x", "ipc:///tmp/x"):
        out.append(Case(f"node --bind {value!r}", ["node", "--key", k, "--spec", s(fx.spec),
                   "--bind", value, "--log", s(fx.base / "n.log")],
                   watch=[fx.base / "n.log"]))  # fmt: skip
    for value in ("", ":", "host:", ":1", "[::1]", "1.2.3.4:0", "a b:1", "é:1"):
        out.append(Case(f"join --peer {value!r}", [*join, "--peer", value]))
    out.append(Case("watch --watcher junk", ["node", "--key", k, "--spec", s(fx.spec), "--bind",
               "tcp://127.0.0.1:1", "--log", s(fx.missing), "--watcher", "tcp://x#y"]))  # fmt: skip
    out.append(Case("play --web-bind junk", ["play", "--bots", "1", "--web", "--web-bind", "x"]))
    out.append(Case("host --name ''", [*host, "--name", ""]))
    out.append(Case("host --name huge", [*host, "--name", "n" * 5000]))
    out.append(Case("host --invite junk", [*host, "--players", "2", "--invite", "zz"]))
    # --- key files --------------------------------------------------------------------------
    bad_keys: list[tuple[str, Path, str]] = [
        ("missing", fx.missing, ""), ("empty", fx.empty, ""), ("truncated", fx.short_key, ""),
        ("one byte long", fx.long_key, ""), ("ssh text", fx.text_key, ""),
        ("junk", fx.junk, ""), ("directory", fx.directory, ""), ("huge", fx.huge, ""),
        ("group-readable", fx.group_key, ""), ("unreadable", fx.locked, "nobody"),
        ("/proc/self/mem", Path("/proc/self/mem"), ""), ("missing parent", fx.no_parent, ""),
    ]  # fmt: skip
    log_out = fx.base / "node.log"
    for what, path, wrap in bad_keys:
        kp = s(path)
        lines = {
            "keygen --show": ["keygen", "--show", "--key", kp],
            "node": ["node", "--key", kp, "--spec", s(fx.spec), "--bind", "tcp://127.0.0.1:1",
                     "--log", s(log_out)],
            "host": ["host", "--bot", "greedy", "--key", kp, "--log-dir", s(fx.base / "logs")],
            "join": ["join", "--bot", "greedy", "--key", kp, "--peer", "127.0.0.1:1",
                     "--log-dir", s(fx.base / "logs")],
            "watch": ["watch", "--key", kp, "--spec", s(fx.spec), "--bind", "tcp://127.0.0.1:1"],
            "resume": ["resume", "--key", kp, s(fx.log1)],
        }  # fmt: skip
        for cmd, argv in lines.items():
            if cmd != "keygen --show" and what in ("group-readable",) and cmd not in ("node",):
                continue  # (tests/test_cli_keys.py covers every command; one is enough here)
            want = (2, 4) if cmd == "resume" else (2,)
            out.append(Case(f"{cmd} key {what}", argv, want, wrap,
                            watch=[path, log_out, fx.base / "logs"] if path.is_relative_to(fx.base)
                            else [log_out, fx.base / "logs"]))  # fmt: skip
    # a public key in a secret key's place: both are 32 raw bytes, so it is read as another key
    # (reported, not a failure: the format cannot tell them apart)
    out.append(Case("keygen --show key public", ["keygen", "--show", "--key", s(fx.public)], (0,)))
    # --- keygen's writes --------------------------------------------------------------------
    out.append(Case("keygen onto existing", ["keygen", "--key", k], (2,), watch=[fx.key]))
    out.append(Case("keygen --force onto dir", ["keygen", "--force", "--key", s(fx.directory)],
                    watch=[fx.directory]))  # fmt: skip
    out.append(Case("keygen under a file", ["keygen", "--key", s(fx.a_file / "k")],
                    watch=[fx.a_file]))  # fmt: skip
    out.append(Case("keygen key ''", ["keygen", "--key", ""]))
    out.append(Case("keygen read-only fs", ["keygen", "--key", s(fx.mnt / "k")], wrap="rofs"))
    out.append(Case("keygen full fs", ["keygen", "--key", s(fx.mnt / "k")], wrap="fullfs"))
    out.append(Case("keygen unwritable dir", ["keygen", "--key", s(fx.base / "ro" / "k")],
                    wrap="nobody"))  # fmt: skip
    # --- spec files -------------------------------------------------------------------------
    bad_specs: list[tuple[str, Path, str]] = [
        ("missing", fx.missing, ""), ("empty", fx.empty, ""), ("truncated", fx.spec_trunc, ""),
        ("lying", fx.spec_lie, ""), ("junk", fx.junk, ""), ("text", fx.utf8_junk, ""),
        ("a log", fx.log1, ""), ("a key", fx.key, ""), ("directory", fx.directory, ""),
        ("huge", fx.huge, ""), ("unreadable", fx.locked, "nobody"),
    ]  # fmt: skip
    for what, path, wrap in bad_specs:
        sp = s(path)
        lines = {
            "node": ["node", "--key", k, "--spec", sp, "--bind", "tcp://127.0.0.1:1",
                     "--log", s(log_out)],
            "watch": ["watch", "--key", k, "--spec", sp, "--bind", "tcp://127.0.0.1:1"],
            "play": ["play", "--key", k, "--spec", sp, "--bind", "tcp://127.0.0.1:1",
                     "--log", s(log_out)],
            "audit": ["audit", "--spec", sp, s(fx.log1)],
            "replay": ["replay", "--text", "--spec", sp, s(fx.log1)],
        }  # fmt: skip
        for cmd, argv in lines.items():
            want = (1, 2) if cmd in ("audit", "replay") and what == "lying" else (2,)
            out.append(Case(f"{cmd} spec {what}", argv, want, wrap, watch=[log_out]))
    # --- logs -------------------------------------------------------------------------------
    bad_logs: list[tuple[str, list[Path], str, tuple[int, ...]]] = [
        ("missing", [fx.missing], "", (2,)), ("empty", [fx.empty], "", (2,)),
        ("header cut", [fx.log_head], "", (2,)), ("cut mid-record", [fx.log_half], "", (0, 1, 2)),
        ("junk tail", [fx.log_junk_tail], "", (1, 2)), ("junk", [fx.junk], "", (2,)),
        ("a key", [fx.key], "", (2,)), ("a spec", [fx.spec], "", (2,)),
        ("directory", [fx.directory], "", (2,)), ("huge", [fx.huge], "", (2,)),
        ("unreadable", [fx.locked], "nobody", (2,)), ("v1", [fx.v1], "", (2,)),
        ("of two games", [fx.log1, fx.other], "", (1, 2)),
        ("twice", [fx.log1, fx.log1], "", (0, 1, 2)),
        ("/proc/self/mem", [Path("/proc/self/mem")], "", (2,)),
    ]  # fmt: skip
    for what, paths, wrap, want in bad_logs:
        ps = [s(p) for p in paths]
        watch = [p for p in paths if p.is_relative_to(fx.base)]
        out.append(Case(f"audit log {what}", ["audit", *ps], want, wrap, watch))
        out.append(Case(f"replay log {what}", ["replay", "--text", *ps], want, wrap, watch))
        if len(paths) == 1:
            out.append(Case(f"resume log {what}", ["resume", "--key", k, ps[0]], (2, 4), wrap,
                            watch))  # fmt: skip
    # --- places to write --------------------------------------------------------------------
    places: list[tuple[str, Path, str]] = [
        ("a file", fx.a_file, ""), ("read-only fs", fx.mnt / "d", "rofs"),
        ("full fs", fx.mnt / "d", "fullfs"), ("''", Path(""), ""),
    ]  # fmt: skip
    for what, path, wrap in places:
        ds = s(path) if s(path) != "." else ""
        watch = [fx.a_file]
        out.append(Case(f"demo --dir {what}", ["demo", "--bots", "2", "--dir", ds, "--timeout",
                        "20"], (1, 2), wrap, watch))  # fmt: skip
        if wrap != "fullfs":  # (a full disk's directory exists: the table opens and waits)
            out.append(Case(f"host --log-dir {what}", [*host, "--log-dir", ds,
                        "--players", "2"], (2,), wrap, watch))  # fmt: skip
        out.append(Case(f"node --log in {what}", ["node", "--key", k, "--spec", s(fx.spec),
                   "--bind", "tcp://127.0.0.1:1", "--peer", "1=tcp://127.0.0.1:2",
                   "--log", s(path / "n.log") if ds else ""], (1, 2), wrap, watch))  # fmt: skip
    spec_dir = fx.base / "spec-dir"
    (spec_dir / "game.spec").mkdir(parents=True)
    out.append(Case("demo --dir holding a game.spec dir", ["demo", "--bots", "2", "--dir",
                    s(spec_dir)], (2,), watch=[spec_dir, spec_dir / "game.spec"]))  # fmt: skip
    out.append(Case("node --log existing", ["node", "--key", k, "--spec", s(fx.spec), "--bind",
               "tcp://127.0.0.1:1", "--log", s(fx.log1)], (2,), watch=[fx.log1]))  # fmt: skip
    out.append(Case("invite file junk", [*host, "--players", "2", "--invite-file", s(fx.junk)]))
    out.append(Case("invite file huge", [*host, "--players", "2", "--invite-file", s(fx.huge)]))
    out.append(
        Case("invite file missing", [*host, "--players", "2", "--invite-file", s(fx.missing)])
    )
    # --- arguments themselves ---------------------------------------------------------------
    for cmd in ("demo", "node", "keygen", "host", "join", "bot", "games", "resume", "play",
                "watch", "audit", "replay", "rules", "match"):  # fmt: skip
        out.append(
            Case(
                f"{cmd} extra word",
                [cmd, "--key", k, "surplus", "words"]
                if cmd not in ("rules", "match", "demo", "games")
                else [cmd, "surplus"],
            )
        )
        out.append(Case(f"{cmd} unknown option", [cmd, "--no-such-option"]))
        out.append(Case(f"{cmd} unicode option", [cmd, "--\u00e9"]))
    for cmd in ("node", "watch", "audit", "replay", "resume", "games"):
        out.append(Case(f"{cmd} nothing", [cmd]))
    out.append(Case("audit log ''", ["audit", ""]))
    out.append(Case("replay log ''", ["replay", "--text", ""]))
    out.append(Case("resume log ''", ["resume", "--key", k, ""]))
    out.append(Case("lone surrogate arg", ["audit", "\udcff"]))
    out.extend(_session27_cases(fx, host))
    out.extend(_session28_cases(fx))
    return out


def _session28_cases(fx: Fixtures) -> list[Case]:
    """Session 28's (words28): whole numbers of every option, odd --dir places, rules
    topics, argparse's other refusals, a terminal that is not UTF-8."""
    s, k = str, str(fx.key)
    node = ["node", "--key", k, "--spec", s(fx.spec), "--bind", "tcp://127.0.0.1:1", "--log",
            s(fx.missing)]  # fmt: skip
    numeric = {
        "node": (node, ["--speed"]),
        "bot": (["bot", "--key", k, "--discover", "127.0.0.255"], ["--speed"]),
        "host": (["host", "--key", k], ["--bot-speed", "--capacity", "--bots", "--players",
                                        "--target", "--rounds", "--false-call-penalty"]),
        "demo": (["demo"], ["--players", "--target", "--rounds", "--false-call-penalty"]),
        "match": (["match"], ["--target", "--rounds", "--false-call-penalty"]),
        "join": (["join", "--key", k, "--peer", "127.0.0.1:1"], ["--speed"]),
    }  # fmt: skip
    out = []
    for cmd, (argv, options) in numeric.items():
        for option in options:
            for value in ("0.3", "1e9", "-1", "", "x", "1" + "0" * 30, "99999"):
                if option == "--false-call-penalty" and value == "-1":
                    continue  # (argparse reads "-1" as an option only where none look like it)
                out.append(Case(f"{cmd} {option} {value!r}", [*argv, option, value]))
    busy = fx.base / "busy-game"
    busy.mkdir()
    (busy / "game.spec").write_bytes(b"another game's spec")
    out += [
        Case("demo --dir /dev/null", ["demo", "--bots", "2", "--dir", "/dev/null"]),
        Case("demo --dir a file", ["demo", "--bots", "2", "--dir", s(fx.a_file)],
             watch=[fx.a_file]),
        Case("demo --dir another game's", ["demo", "--bots", "2", "--dir", s(busy)],
             watch=[busy, busy / "game.spec"]),
        Case("demo --dir=~/a file", ["demo", "--bots", "2", f"--dir=~/{fx.a_file.name}"],
             env={"HOME": s(fx.base)}, watch=[fx.a_file]),
        Case("rules x", ["rules", "x"]),
        Case("rules a topic", ["rules", "lake"], (0,)),
        Case("nertz alone", []),
        Case("nertz unknown command", ["frobnicate"]),
        Case("demo --bots without value", ["demo", "--bots"]),
        Case("demo --b ambiguous", ["demo", "--b", "2"]),
        Case("match --rotate-alone=yes", ["match", "--rotate-alone=yes"]),
        Case("match --target and --rounds", ["match", "--target", "5", "--rounds", "2"]),
        Case("match --draw 2", ["match", "--draw", "2"]),
        Case("replay --speed", ["replay", "--speed", "2", s(fx.log1)]),
        Case("rules, ascii terminal", ["rules"], (0,), env={"PYTHONIOENCODING": "ascii"}),
        Case("replay, ascii terminal", ["replay", "--text", s(fx.log1), s(fx.log2)], (0, 1),
             env={"PYTHONIOENCODING": "ascii"}),
        Case("audit, latin-1 terminal", ["audit", s(fx.log1), s(fx.log2)], (0, 1),
             env={"PYTHONIOENCODING": "latin-1"}),
        Case("rules x, ascii terminal", ["rules", "x"], env={"PYTHONIOENCODING": "ascii"}),
    ]  # fmt: skip
    return out


#: argparse's own sentences: the project says them in its own words (cli/args.py).
_ARGPARSE_ENGLISH = (
    "invalid int value", "invalid float value", "invalid choice", "expected one argument",
    "unrecognized arguments", "not allowed with argument", "the following arguments are",
    "could match", "ignored explicit argument", "File exists",
)  # fmt: skip


def _session27_cases(fx: Fixtures, host: list[str]) -> list[Case]:
    """Session 27's (red27): closed standard streams, names the system refuses before any
    check of the command's, a directory nobody may search, a FIFO or a device where a file
    is due, numbers that contradict each other."""
    s, k = str, str(fx.key)
    out = [
        Case("play stdin closed", ["play", "--bots", "1"], closed=(0,)),
        Case("host stdin closed", ["host", "--key", k], closed=(0,)),
        Case("join stdin closed", ["join", "--key", k, "--peer", "127.0.0.1:1"], closed=(0,)),
        Case("rules stdout closed", ["rules"], (0,), closed=(1,)),
        Case("audit stdout, stderr closed", ["audit", s(fx.log1), s(fx.log2)], (0,),
             closed=(1, 2)),
        Case("demo stdout closed", ["demo", "--bots", "2", "--dir", s(fx.base / "so")], (0,),
             closed=(1,)),
        Case("host --players over --capacity", [*host, "--players", "5", "--capacity", "2"]),
        Case("host --bots over --capacity", [*host, "--bots", "2", "--capacity", "2"]),
        Case("host --name 10,000 long", [*host, "--name", "n" * 10_000]),
        Case("join --peer 10,000 long", ["join", "--bot", "greedy", "--key", k, "--peer",
             "1" * 10_000]),
    ]  # fmt: skip
    long, sealed, fifo = s(fx.too_long), fx.sealed, s(fx.fifo)
    lines = {
        "keygen --show key": ["keygen", "--show", "--key", "{}"],
        "keygen key": ["keygen", "--key", "{}"],
        "host key": ["host", "--bot", "greedy", "--key", "{}"],
        "resume key": ["resume", "--key", "{}", s(fx.log1)],
        "audit log": ["audit", "{}"],
        "replay log": ["replay", "--text", "{}"],
        "resume log": ["resume", "--key", k, "{}"],
        "watch spec": ["watch", "--key", k, "--spec", "{}", "--bind", "tcp://127.0.0.1:1"],
        "audit spec": ["audit", "--spec", "{}", s(fx.log1)],
        "invite file": [*host, "--players", "2", "--invite-file", "{}"],
    }
    for what, argv in lines.items():
        key = what.endswith("key")
        for how, path, wrap in (
            ("too long a name", long, ""),
            ("in a sealed dir", s(sealed / ("ann.key" if key else "p1.log")), "nobody"),
            ("a FIFO", fifo, ""),
            ("/dev/zero", "/dev/zero", ""),
        ):
            if what == "keygen key" and how in ("a FIFO", "/dev/zero"):
                continue  # (keygen refuses to replace an existing file: covered above)
            want = (2, 4) if what.startswith("resume") else (2,)
            out.append(Case(f"{what} {how}", [a.replace("{}", path) for a in argv], want, wrap,
                            watch=[sealed]))  # fmt: skip
    return out


def _wrap(case: Case, fx: Fixtures, argv: list[str]) -> list[str] | None:
    if case.wrap == "nobody":
        if not shutil.which("setpriv") or os.geteuid() != 0:
            return None
        ro = fx.base / "ro"
        ro.mkdir(exist_ok=True)

        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    if case.wrap in ("rofs", "fullfs"):
        if not shutil.which("unshare") or os.geteuid() != 0:
            return None
        mnt = str(fx.mnt)
        if case.wrap == "rofs":
            setup = f"mount -t tmpfs -o ro,size=64k none {mnt}"
        else:
            setup = (f"mount -t tmpfs -o size=64k none {mnt} && "
                     f"(dd if=/dev/zero of={mnt}/fill bs=4k 2>/dev/null; mkdir -p {mnt}/d; "
                     f"dd if=/dev/zero of={mnt}/d/fill bs=1 2>/dev/null; true)")  # fmt: skip
        return ["unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh", *argv]
    return argv


def run(case: Case, fx: Fixtures, timeout: float, tree: Path = ROOT) -> tuple[str, str]:
    """Run one case; its outcome (``ok``, ``skipped`` or what failed) and its last line."""
    argv = _wrap(case, fx, [sys.executable, "-m", "cli", *case.argv])
    if argv is None:
        return "skipped", ""
    before = _state(case.watch)
    env = {**os.environ, "NERTZ_HOME": str(fx.home), "PYTHONPATH": str(tree), **case.env}

    def close() -> None:
        for fd in case.closed:
            os.close(fd)

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=fx.base,
                            stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                            preexec_fn=close if case.closed else None)  # fmt: skip  # noqa: PLW1509 (no threads here)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "HANG", ""
    text = err.decode(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    command = case.argv[0] if case.argv else ""
    problems = []
    if "Traceback" in text:
        problems.append("traceback")
    if any(english in text for english in _ARGPARSE_ENGLISH):
        problems.append("argparse's words")
    encoding = case.env.get("PYTHONIOENCODING")
    if encoding:
        try:
            out.decode(encoding)
        except UnicodeDecodeError:
            problems.append(f"stdout not {encoding}")
    if proc.returncode not in case.want:
        problems.append(f"status {proc.returncode} (want {'/'.join(map(str, case.want))})")
    report = command in ("audit", "replay") and proc.returncode == 1  # (findings shown)
    report |= command == "audit" and b"verdict: UNREADABLE" in out  # (audit's report, status 2)
    if 2 in case.closed:
        pass  # (stderr closed: the status says it all)
    elif proc.returncode != 0 and not report:
        if not last.startswith(f"nertz {command}: error: ") and not last.startswith(
            "nertz: error: "
        ):
            problems.append("no error line")
        others = [x for x in lines[:-1] if not x.startswith(("usage:", " "))]
        if others and "traceback" not in problems:
            problems.append(f"{len(lines)} lines")
    if _state(case.watch) != before:
        problems.append("disk changed")
    for path, was in zip(case.watch, before, strict=True):
        if was.endswith(":absent") and path.is_dir():  # (for the next case to see it made)
            shutil.rmtree(path, ignore_errors=True)
        elif was.endswith(":absent") and path.exists():
            path.unlink()
    return ("ok" if not problems else "FAIL: " + ", ".join(problems)), last[:150]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", help="run the cases whose name holds one of these words (comma-separated)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="run the nertz of this checkout (a reference)"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="nertz-scan-inputs-"))
    os.chmod(base, 0o755)
    fails = skipped = total = 0
    started = time.monotonic()
    try:
        fx = Fixtures(base)
        for case in cases(fx):
            if args.only and not any(word in case.name for word in args.only.split(",")):
                continue
            total += 1
            outcome, last = run(case, fx, args.timeout, args.tree)
            fails += outcome.startswith(("FAIL", "HANG"))
            skipped += outcome == "skipped"
            print(f"{case.name[:44]:44} {outcome:30} {last}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{args.tree}: {total} cases: {total - fails - skipped} ok, {fails} failed, "
          f"{skipped} skipped ({time.monotonic() - started:.0f} s, "
          f"load {os.getloadavg()[0]:.1f})")  # fmt: skip
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
