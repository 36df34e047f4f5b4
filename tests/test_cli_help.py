"""``nertz --help`` and every command's options (issue 15, "The first game").

``nertz --help`` lists the commands without importing them (fast: no trio, zmq, bots or
engine); the list matches the real parsers; every option of every command says what it does;
an unknown option is named as such.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.keyfile import save_key
from cli.main import COMMANDS, build_parser
from p2p_nertz import defaults
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules
from tests.cli_helpers import nertz as run_nertz

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("trio", "zmq", "p2p_nertz.bots", "p2p_nertz.rules", "p2p_nertz.protocol", "curses")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def nertz(*args: str) -> subprocess.CompletedProcess[str]:
    return run_nertz(*args, cwd=ROOT)


def test_help_imports_none_of_the_game() -> None:
    probe = (
        "import sys\n"
        "from cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip().endswith("[]"), done.stdout
    assert "COMMAND" in done.stdout and "play" in done.stdout


#: The modules a running command needs and a refused command line must not wait for: the
#: commands' own modules, trio, ZeroMQ, the runtime, the peer core, the audit, the bots, the
#: lobby, the screens.
COMMAND_MODULES = (
    "cli.demo",
    "cli.keygen_cmd",
    "cli.node_cmd",
    "cli.lobby_cmd",
    "cli.play",
    "cli.watch",
    "cli.audit_cmd",
    "cli.replay_cmd",
    "cli.match_cmd",
)
RUNTIME = (
    *COMMAND_MODULES,
    "cli.web_cmd",
    "trio",
    "zmq",
    "asyncio",
    "curses",
    "hypercorn",
    "p2p_nertz.runtime",
    "p2p_nertz.protocol.peer",
    "p2p_nertz.audit",
    "p2p_nertz.bots",
    "p2p_nertz.lobby",
    "p2p_nertz.web",
    "p2p_nertz.ui",
)

#: One wrong argument for each command (a number, a port, an endpoint, a path, a timer, an
#: option it does not take, a log that is missing or a directory): each is refused as a usage
#: error.
REFUSALS = (
    ("demo", "--bots", "x"),
    ("node", "--speed", "0.3"),
    ("keygen", "--key", ""),
    ("host", "--port", "70000"),
    ("join", "--timeout", "x"),
    ("bot", "--beacon-port", "0"),
    ("games", "--discover", "10.0.0.255", "--timeout", "x"),
    ("resume", "x.log", "--speed", "0"),
    ("play", "--bots", "0"),
    ("play", "--suspect-after", "0"),
    ("play", "--bots", "8"),
    ("play", "--bots", "2", "--log-dir", "logs"),
    ("play", "--practice"),
    ("play", "--spec", "x.spec"),
    ("play", "--peer", "nowhere"),
    ("play", "--name", " x"),
    ("play", "--bots", "2", "--pairs"),
    ("play", "--bots", "2", "--speed", "11"),
    ("demo", "--players", "9"),
    ("demo", "--strategy", "nobody"),
    ("host", "--players", "3", "--pairs"),
    ("host", "--json", "--players", "2"),
    ("join", "--peer", "127.0.0.1:5"),
    (
        "node",
        "--key",
        "k",
        "--spec",
        "s",
        "--bind",
        "tcp://127.0.0.1:0",
        "--log",
        "full.log",
        "--fresh",
    ),
    ("match", "--players", "9"),
    ("host", "--suspect-after", "5", "--drop-after", "1"),
    ("host", "--capacity", "2", "--players", "5"),
    ("join", "--bot", "greedy"),
    ("watch", "--bind", "nowhere"),
    ("audit", "x.log", "--spec", ""),
    ("audit", "missing.log"),
    ("replay", "--text", "."),
    ("replay", "x.log", "--web-bind", "x"),
    ("rules", "--bogus"),
    ("match", "--players", "0"),
)

#: A file named on the command line that is not there, is a directory or is not what it is
#: named for, for every command that reads one or makes a directory (session 36: ``nertz
#: watch`` imported trio, ZeroMQ and the screens, and loaded the spec, before it found no key).
WRONG_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no.key", ("watch", "--spec", "game.spec", "--key", "no.key", "--bind", "1.2.3.4:5")),
    ("missing.spec", ("watch", "--spec", "missing.spec", "--key", "a.key", "--bind", "1.2.3.4:5")),
    ("full.log", ("watch", "--spec", "full.log", "--key", "a.key", "--bind", "1.2.3.4:5")),
    ("game.spec", ("watch", "--spec", "game.spec", "--key", "game.spec", "--bind", "1.2.3.4:5")),
    ("missing.key", ("node", "--key", "missing.key", "--spec", "game.spec",
                     "--bind", "tcp://127.0.0.1:0", "--log", "n.log")),
    (".", ("node", "--key", "a.key", "--spec", ".", "--bind", "tcp://127.0.0.1:0",
           "--log", "n.log")),
    ("missing.key", ("host", "--bot", "greedy", "--key", "missing.key")),
    ("full.log", ("host", "--bot", "greedy", "--key", "a.key", "--log-dir", "full.log")),
    ("missing.txt", ("host", "--bot", "greedy", "--key", "a.key", "--invite-file", "missing.txt")),
    ("none.txt", ("host", "--bot", "greedy", "--key", "a.key", "--invite-file", "none.txt")),
    (".", ("join", "--bot", "greedy", "--key", ".", "--peer", "127.0.0.1:5")),
    ("full.log", ("bot", "--peer", "127.0.0.1:5", "--log-dir", "full.log")),
    ("full.log", ("bot", "--peer", "127.0.0.1:5", "--key", "full.log")),
    ("missing.log", ("resume", "missing.log")),
    (".", ("resume", ".")),
    ("missing.key", ("resume", "full.log", "--key", "missing.key")),
    ("missing.key", ("play", "--key", "missing.key")),
    ("missing.key", ("play", "--key", "missing.key", "--spec", "game.spec",
                     "--bind", "127.0.0.1:0", "--log", "n.log")),
    ("missing.spec", ("play", "--key", "a.key", "--spec", "missing.spec",
                      "--bind", "127.0.0.1:0", "--log", "n.log")),
    ("full.log", ("play", "--bots", "2", "--dir", "full.log")),
    ("full.log", ("demo", "--dir", "full.log")),
    ("missing.spec", ("audit", "full.log", "--spec", "missing.spec")),
    (".", ("replay", "--text", "full.log", "--spec", ".")),
)  # fmt: skip


def _imports_of(tmp_path: Path, *command_lines: list[str]) -> list[dict[str, object]]:
    """Run ``nertz`` on each command line in one Python process (in ``tmp_path``); for each,
    its exit status, its stderr and the modules of :data:`RUNTIME` imported by then."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from cli.main import main\n"
        f"RUNTIME = {RUNTIME!r}\n"
        # (for `play`, a terminal's streams as far as isatty says: `play --spec` without one
        # is refused by its argument checks, before its command is imported; session 44)
        "class Tty(io.StringIO):\n"
        "    def isatty(self):\n"
        "        return True\n"
        "stdin = sys.stdin\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    err = io.StringIO()\n"
        "    out = Tty() if argv[0] == 'play' else io.StringIO()\n"
        "    sys.stdin = Tty() if argv[0] == 'play' else stdin\n"
        "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):\n"
        "        try:\n"
        "            status = main(argv)\n"
        "        except SystemExit as exc:\n"
        "            status = exc.code\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith(RUNTIME))\n"
        "    print(json.dumps({'status': status, 'stderr': err.getvalue(), 'loaded': loaded}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(command_lines)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_wrong_argument_is_refused_before_the_command_is_imported(tmp_path: Path) -> None:
    # A typo is answered at once: the arguments are checked before trio, ZeroMQ, the runtime
    # or the audit are imported (cli/parsers.py), which took a few tenths of a second of CPU.
    (tmp_path / "full.log").write_bytes(b"a game")  # (node --fresh: a log not new)
    results = _imports_of(tmp_path, *map(list, REFUSALS))
    for argv, result in zip(REFUSALS, results, strict=True):
        assert result["status"] == 2, (argv, result)
        assert str(result["stderr"]).startswith(f"nertz {argv[0]}: error: "), (argv, result)
        assert result["loaded"] == [], (argv, result)


def _files(tmp_path: Path) -> None:
    """In ``tmp_path``: ``full.log`` (bytes that are no spec, key or log), ``none.txt`` (an
    invite file naming no key), ``game.spec`` (a game of two) and ``a.key`` (a key, no member
    of that game)."""
    (tmp_path / "full.log").write_bytes(b"a game")
    (tmp_path / "none.txt").write_bytes(b"# (an invite file that names no key)\n")
    members = [(Identity.generate().peer_id, name) for name in "AB"]
    (tmp_path / "game.spec").write_bytes(GameSpec.create(members, Rules(), b"s").to_wire())
    save_key(tmp_path / "a.key", Identity.generate())


def test_a_wrong_file_is_refused_before_the_command_is_imported(tmp_path: Path) -> None:
    _files(tmp_path)
    results = _imports_of(tmp_path, *(list(argv) for _, argv in WRONG_FILES))
    for (wrong, argv), result in zip(WRONG_FILES, results, strict=True):
        lines = str(result["stderr"]).splitlines()
        assert result["status"] == 2 and len(lines) == 1, (argv, result)
        assert lines[0].startswith(f"nertz {argv[0]}: error: "), (argv, lines)
        assert repr(wrong) in lines[0], (argv, lines)  # (it names the file it refuses)
        assert result["loaded"] == [], (argv, result)
    # The spectator is told first how to make the key it lacks.
    assert "the spectator needs a key" in str(results[0]["stderr"]), results[0]


def test_a_command_imports_its_own_module_alone(tmp_path: Path) -> None:
    # ``nertz node --help`` imports no command; ``nertz node`` (every bot process of a game)
    # imports its own alone: not the terminal table, the browser table's server or the others.
    _files(tmp_path)  # (a key and a game it is no member of: refused by the command itself)
    made = sorted(tmp_path.iterdir())
    node = ["node", "--key", "a.key", "--spec", "game.spec", "--bind", "127.0.0.1:0"]
    helped, ran = _imports_of(tmp_path, ["-v", "node", "--help"], [*node, "--log", "l.log"])
    assert helped["status"] == 0 and helped["loaded"] == [], helped
    assert ran["status"] == 2 and "nertz node: error: " in str(ran["stderr"]), ran
    loaded = list(map(str, ran["loaded"]))  # type: ignore[call-overload]
    assert "cli.node_cmd" in loaded and "trio" in loaded, loaded
    for other in ("cli.play", "cli.demo", "cli.lobby_cmd", "cli.web_cmd", "hypercorn"):
        assert other not in loaded, loaded
    # Nor the terminal table's package (p2p_nertz/ui: a twelfth of the start), which
    # cli/ended.py's words for a resumed game that had ended pulled in for every node.
    assert not [m for m in loaded if m.startswith("p2p_nertz.ui")], loaded
    # Nor asyncio (a tenth of the start), which pyzmq's monitor module imports: the mesh reads
    # its monitors' events itself (runtime/zmqtrio.py's monitor_event).
    assert "zmq" in loaded and "asyncio" not in loaded, loaded
    assert sorted(tmp_path.iterdir()) == made  # (refused: it wrote nothing)


def test_the_lobby_commands_play_and_watch_import_no_web_server(tmp_path: Path) -> None:
    # ``nertz host``, ``join``, ``bot``, ``games`` and ``resume`` share one module
    # (cli/lobby_cmd.py), ``nertz play`` and ``nertz watch`` their own: the browser's server
    # (hypercorn and asyncio, a quarter of a process's start) is imported by ``--web`` alone,
    # not by every bot of a lobby game, every ``play`` at a terminal or every spectator.
    # (Files its checks take, refused by the command itself: no log, no member, no terminal.)
    _files(tmp_path)
    given = ["--key", "a.key", "--spec", "game.spec", "--bind", "127.0.0.1:0", "--log", "l.log"]
    watched = ["--key", "a.key", "--spec", "game.spec", "--bind", "127.0.0.1:0"]
    lines = [
        ["resume", "full.log", "--bot", "greedy"],
        ["play", *given],
        ["watch", *watched],
    ]
    modules = {"resume": "cli.lobby_cmd", "play": "cli.play", "watch": "cli.watch"}
    for argv, ran in zip(lines, _imports_of(tmp_path, *lines), strict=True):
        assert ran["status"] != 0 and f"nertz {argv[0]}: error: " in str(ran["stderr"]), ran
        loaded = list(map(str, ran["loaded"]))  # type: ignore[call-overload]
        assert "trio" in loaded and modules[argv[0]] in loaded, (argv, loaded)
        for web in ("cli.web_cmd", "hypercorn", "asyncio", "p2p_nertz.web.server"):
            assert web not in loaded, (argv, loaded)


def test_keygen_imports_no_node(tmp_path: Path) -> None:
    # ``nertz keygen`` (its own module, cli/keygen_cmd.py) reads and writes a key file: not
    # the lobby's commands, the node, trio or ZeroMQ, nine-tenths of its start when it shared
    # cli/lobby_cmd.py. Run for real: a key made, then shown, then refused without --force.
    key = tmp_path / "k.key"
    lines = [["keygen", "--key", str(key)], ["keygen", "--show", "--key", str(key)]]
    lines.append(["keygen", "--key", str(key)])
    made, shown, refused = _imports_of(tmp_path, *lines)
    assert made["status"] == 0 and shown["status"] == 0 and key.is_file(), (made, shown)
    assert refused["status"] == 2 and "--force replaces it" in str(refused["stderr"]), refused
    loaded = list(map(str, refused["loaded"]))  # type: ignore[call-overload]
    assert "cli.keygen_cmd" in loaded, loaded
    for heavy in ("cli.lobby_cmd", "cli.node_cmd", "trio", "zmq", "p2p_nertz.runtime"):
        assert heavy not in loaded, loaded


def test_timers_that_contradict_each_other_are_refused_before_the_command(
    tmp_path: Path,
) -> None:
    # ``nertz demo`` starts node processes and waits on them: the timers it passes them, as
    # every command's (cli/args.py's check_liveness), are checked before its module, the
    # node, trio or ZeroMQ are imported (cli/parsers.py's _later).
    line = ["demo", "--bots", "2", "--suspect-after", "2", "--drop-after", "1"]
    (ran,) = _imports_of(tmp_path, line)
    assert ran["status"] == 2, ran
    assert "nertz demo: error: --drop-after (1) must not be shorter" in str(ran["stderr"]), ran
    assert ran["loaded"] == [], ran
    assert not list(tmp_path.iterdir())  # (refused: it made no game directory)


def test_rules_imports_only_the_rule_book(tmp_path: Path) -> None:
    # ``nertz rules`` prints a file of the package: its module (cli/match_cmd.py, beside
    # ``nertz match``) imports the screens' words for the match alone, not at its top (they
    # brought the peer core, the bots and the deck: 280 modules for the rule book, now 158).
    (ran,) = _imports_of(tmp_path, ["rules", "lake"])
    assert ran["status"] == 0 and ran["stderr"] == "", ran
    assert ran["loaded"] == ["cli.match_cmd"], ran


def test_the_light_defaults_are_what_the_bots_peer_and_lobby_use() -> None:
    # p2p_nertz/defaults.py is their one home: parsing imports no bot, runtime or lobby code.
    from p2p_nertz.bots import STRATEGIES
    from p2p_nertz.bots.base import SPEEDS, register
    from p2p_nertz.lobby.beacon import BEACON_PORT
    from p2p_nertz.runtime.node import NODE_CONFIG

    assert defaults.STRATEGY_NAMES == tuple(sorted(STRATEGIES)) == tuple(STRATEGIES)
    assert defaults.BOT_SPEEDS is SPEEDS
    assert (NODE_CONFIG.suspect_after, NODE_CONFIG.drop_after) == (
        defaults.SUSPECT_AFTER,
        defaults.DROP_AFTER,
    )
    assert defaults.BEACON_PORT is BEACON_PORT
    with pytest.raises(ValueError, match="STRATEGY_NAMES"):
        register("unlisted")


def test_the_light_command_list_is_the_real_one() -> None:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            real = [(c.dest, c.help) for c in action._choices_actions]
            assert real == list(COMMANDS)
            return
    raise AssertionError("no subcommands")


def test_every_option_of_every_command_has_help_text() -> None:
    missing = []
    for name, sub in _commands(build_parser()).items():
        for action in sub._actions:
            if action.option_strings and not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings)}")
    assert missing == []


def test_an_unknown_option_says_so() -> None:
    for args in (["--frobnicate"], ["-x"], ["--frobnicate", "play"], ["play", "--frobnicate"]):
        done = nertz(*args)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "does not take" in lines[0], (args, done.stderr)
        assert "--frobnicate" in lines[0] or "-x" in lines[0]
    done = nertz()
    assert done.returncode == 2 and "COMMAND" in done.stderr


def test_demo_bots_is_a_number_of_bots_as_in_play() -> None:
    parser = build_parser()
    assert parser.parse_args(["demo", "--bots", "3"]).bots == 3
    assert parser.parse_args(["play", "--bots", "3"]).bots == 3
    done = nertz("demo", "--bots", "greedy")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--strategy greedy" in lines[0], done.stderr


def test_the_play_command_says_it_plays_in_a_browser_too() -> None:
    # A newcomer reading `nertz --help` for the browser table found "play at the terminal".
    (summary,) = [text for name, text in COMMANDS if name == "play"]
    assert summary.startswith("play at the terminal or in a browser (--web): "), summary
