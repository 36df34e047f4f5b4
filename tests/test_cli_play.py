"""``nertz play`` driven in a pseudo-terminal as a person would, read through a screen emulator.

The real program runs (``python -m cli play --bots 2``: two ``nertz node`` bot processes and
the curses table) in an 80×24 pty; pyte keeps the screen as a terminal would show it. Every
wait is for screen content, bounded by a deadline: no sleep stands in for synchronisation.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import forkserver
import pexpect
import pyte
import pytest
from cli_helpers import FORKSERVER_ENV, aimed_python, at_end_of_test, kill_tree, nertz
from forked_tty import ForkedSpawn

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Card, fits_on

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 80, 24
_DIR_OPTIONS = ("--log-dir", "--dir")  # where a command's bots write their .err files
_ERR_LINES = 20  # lines of each shown when a wait fails


class XtermScreen(pyte.Screen):
    """pyte's screen with xterm's REP (``CSI Ps b``: the last character drawn, Ps times
    more). ncurses uses it under TERM=xterm-256color for runs of one character; pyte ignores
    it, which left cells of an earlier frame on the screen (a flaky lobby test, under load,
    when curses chose to repeat a space)."""

    _last = " "

    def draw(self, data: str) -> None:
        if data:
            self._last = data[-1]
        super().draw(data)

    def repeat_last(self, count: int = 1, *args: object, **kwargs: object) -> None:
        super().draw(self._last * max(1, count))


class XtermStream(pyte.ByteStream):
    """A byte stream that dispatches REP to :class:`XtermScreen`."""

    csi: ClassVar[dict[str, str]] = {**pyte.ByteStream.csi, "b": "repeat_last"}
    events: ClassVar[frozenset[str]] = pyte.ByteStream.events | {"repeat_last"}


# A guard against a hang, not a timing: the first table of a game takes the program's and its
# bots' start-up, connections and deal, which a machine at a load of 40 stretches past 30 s.
WAIT = 60.0


def _as_from_a_shell() -> None:
    """In the program's process before it starts: SIGHUP as a terminal's shell leaves it for
    the commands it runs (its default: the process ends, or nertz leaves the game). A suite
    run under ``nohup`` (or any runner that ignores SIGHUP) passed its SIG_IGN on, and the
    program whose terminal a test closed played on, as ``nohup`` asks (session 30's hang).
    (A child of the fork server is asked for the same: ``sig_dfl``.)"""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Tty:
    """A program in a pseudo-terminal, with the screen it draws."""

    def __init__(
        self,
        args: list[str],
        cwd: Path = ROOT,
        env: dict[str, str] | None = None,
        *,
        python: str = sys.executable,
    ) -> None:
        """``python``: the interpreter it runs in (``cli_helpers.aimed_python``: not forked)."""
        env = dict(env or os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        env.pop("NO_COLOR", None)
        forked = os.environ.get(FORKSERVER_ENV) != "0" and python == sys.executable
        if forked:  # (forked: tests/forked_tty.py, session 37)
            self.child = ForkedSpawn(
                forkserver.launcher_for(env), args, sig_dfl=[signal.SIGHUP],
                dimensions=(HEIGHT, WIDTH), env=env, cwd=str(cwd),
            )  # fmt: skip
        else:
            self.child = pexpect.spawn(
                python,
                ["-m", "cli", *args],
                dimensions=(HEIGHT, WIDTH),
                env=env,
                cwd=str(cwd),
                preexec_fn=_as_from_a_shell,
            )
        # (ours alone: a process this one starts later must not keep the terminal open, or
        # closing it here would not hang it up for the program)
        os.set_inheritable(self.child.child_fd, False)
        at_end_of_test(self.close)  # (a test that fails leaves nothing running either)
        self.screen = XtermScreen(WIDTH, HEIGHT)
        self.stream = XtermStream(self.screen)
        self.raw = b""
        # Where its bots write their stderr (NAME.err): shown when a wait fails, since a bot
        # that stopped says why only there (CI: a lobby's bot never sat down, and no word why).
        self.dirs = [cwd / args[n + 1] for n, a in enumerate(args[:-1]) if a in _DIR_OPTIONS]

    def bots_said(self) -> str:
        """What the program's bots wrote on stderr (their ``.err`` files, the last lines)."""
        parts = []
        for path in sorted({p for d in self.dirs for p in d.glob("**/*.err")}):
            lines = path.read_text(errors="replace").splitlines()[-_ERR_LINES:]
            parts.append(f"--- {path.name}:\n" + "\n".join(lines))
        return "".join(f"\n{part}" for part in parts)

    def close(self) -> None:
        """Kill the program and every process under it (its bots) if it is still running,
        and reap it. Run at the end of every test that made a Tty."""
        if self.child.isalive():
            kill_tree(self.child.pid)
        self.child.close(force=True)

    def pump(self, wait: float = 0.05) -> bool:
        """Take what the program wrote (waiting at most ``wait``); ``False`` at its end."""
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def line(self, index: int) -> str:
        return self.screen.display[index].rstrip()

    def wait(
        self, check: str | Callable[[str], bool], timeout: float = WAIT, *, keep: str = ""
    ) -> str:
        """Wait until the screen shows ``check`` (a fragment or a test); return the screen.

        ``keep``: keys to send again each time nothing new arrives (a player who keeps
        passing while waiting for the others).
        """
        test = (lambda text: check in text) if isinstance(check, str) else check
        deadline = time.monotonic() + timeout
        repaint = time.monotonic() + 2.0
        while True:
            text = self.text()
            if test(text):
                # A pty hands a redraw over in pieces: read what follows at once, and check
                # again on the whole frame.
                self.settle()
                text = self.text()
                if test(text):
                    return text
            if time.monotonic() > deadline:
                said = self.bots_said()
                raise AssertionError(f"the screen never showed {check!r}:\n{text}{said}")
            if not self.pump(0.1):
                said = self.bots_said()
                raise AssertionError(f"the program ended before showing {check!r}:\n{text}{said}")
            if keep:
                self.send(keep)
            if time.monotonic() > repaint:
                # pyte does not follow every scrolling optimisation of ncurses, and a cell
                # left from an earlier frame can hide what is there (the lobby test failed so
                # in CI): a SIGWINCH makes the table repaint all of it. Sent as a signal: the
                # kernel sends none for a resize to the same size.
                repaint = time.monotonic() + 2.0
                self.child.kill(signal.SIGWINCH)

    def settle(self, quiet: float = 0.03) -> None:
        """Read until the program has written nothing for ``quiet`` seconds (or ended)."""
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=quiet)
            except (pexpect.TIMEOUT, pexpect.EOF):
                return
            self.raw += data
            self.stream.feed(data)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self, timeout: float = WAIT) -> int:
        """Wait for the program to end; its exit status."""
        deadline = time.monotonic() + timeout
        while self.pump(0.2):
            if time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"the program did not end:\n{self.text()}{self.bots_said()}")
        self.child.close()
        status = self.child.exitstatus
        return status if status is not None else 128 + (self.child.signalstatus or 0)


def watched_to_the_leave(player: Tty, watcher: Tty) -> None:
    """A spectator's screen follows the bots' lake cards, then the player's Ctrl-C: it shows
    the signed leave, says that the game, which the bots play on, is no longer followed here
    (the player pushed it alone), and quits cleanly."""
    watcher.wait(lambda t: re.search(r"^ +[2-9JQK]\S*[♣♦♥♠] \d+", t, re.M) is not None)
    player.child.sendintr()
    assert player.finish() == 130
    watcher.wait("you left the game", timeout=30)
    text = watcher.wait("you left: not followed here", timeout=30)
    assert "playing" not in text.splitlines()[0], text
    watcher.send("q")
    assert watcher.finish() == 0
    assert b"watched " in watcher.raw and b"Traceback" not in watcher.raw


def tops(text: str) -> dict[int, Card]:
    """The exposed card of each of my work piles on the screen."""
    found = {}
    for m in re.finditer(r"^\[(\d)\] (.*)$", text, re.M):
        words = m[2].split()
        if words and words[-1] != "-":
            found[int(m[1])] = Card.parse(words[-1])
    return found


def stock(text: str) -> int:
    m = re.search(r"\[s\] stock +(\d+)", text)
    assert m, text
    return int(m[1])


def play(tmp_path: Path, *more: str) -> Tty:
    # (Seed 11: you sit at seat 2, the bots at 0 and 1, named by their seats: bot0, bot1.)
    args = ["play", "--bots", "2", "--speed", "10", "--seed", "11", "--rounds", "1"]
    return Tty([*args, "--dir", str(tmp_path / "game"), *more])


def leave(tty: Tty) -> None:
    """Press ``q`` (and ``y`` if asked to confirm), then expect a clean exit."""
    tty.send("q")
    while tty.pump(0.2):
        if "leave the game?" in tty.text():
            tty.send("y")
    assert tty.finish() == 0
    assert_said_on_lines_of_its_own(tty)


def assert_said_on_lines_of_its_own(tty: Tty) -> None:
    """What ``nertz play`` printed once the table was gone (the scores first) stands on lines
    of its own, and the shell's prompt will too (the cursor at the start of a line). pyte, as
    a terminal with no alternate screen, keeps the table: the scores used to overwrite the
    start of the footer and its end showed after them ("after 0 round(s): bot1 0  you 06 · s
    stock · p stuck · …")."""
    lines = tty.text().splitlines()
    said = next((n for n, line in enumerate(lines) if line.startswith("after ")), None)
    assert said is not None, "no score said after the table:\n" + "\n".join(lines)
    assert re.fullmatch(r"after (1 round|\d+ rounds):( +\S+ -?\d+)+", lines[said]), lines[said:]
    assert tty.screen.cursor.x == 0, (tty.screen.cursor.x, lines[tty.screen.cursor.y])


def refused_in_one_line(argv: str, env: dict[str, str] | None = None) -> str:
    """Run ``nertz argv``; assert it exits 2 with one line of output; return that line."""
    output, status = pexpect.run(
        f"{sys.executable} -m cli {argv}", cwd=str(ROOT), withexitstatus=True, timeout=30, env=env
    )
    assert status == 2, output
    lines = output.decode().strip().splitlines()
    assert len(lines) == 1, lines
    return str(lines[0])


@pytest.mark.timeout(450)  # (a tied round's tiebreak: a countdown and a round more)
def test_play_keys_apply_moves_refuse_an_illegal_one_and_reach_the_scoreboard(
    tmp_path: Path,
) -> None:
    tty = play(tmp_path)
    text = tty.wait("[n] Nerts")
    assert "you (seat " in tty.line(0) and "round 1" in tty.line(0)
    for name in ("bot0", "bot1"):  # (each row with its Nerts count: a bot at full speed on a
        # loaded machine may have played a Nerts card before the first screen is read)
        assert re.search(rf"^\d {name} +N +\d+ ", text, re.M), text

    # The stock key turns three cards: the stock shrinks, the waste fans the top three.
    before = stock(text)
    tty.send("s")
    text = tty.wait(lambda t: stock(t) == before - 3)
    assert re.search(r"\[w\] waste \S+ \S+ \S+", text), text

    # An illegal pair of keys: a work pile onto one its card does not fit; nothing moves.
    piles = tops(text)
    pair = next((a, b) for a in piles for b in piles if a != b and not fits_on(piles[a], piles[b]))
    tty.send(f"{pair[0]}")
    tty.wait(">" + str(pair[0]) + "<")
    tty.send(f"{pair[1]}")
    text = tty.wait("illegal: ")
    assert tops(text) == piles
    status = tty.line(HEIGHT - 2)
    assert status.startswith("illegal: ") and "does not go on" in status, text

    # A false call (x twice, cards left): legal at a cost, said so on our row. Taken unless
    # a bot ended the round first (at full speed on a loaded machine): then it is refused.
    tty.send("x")
    tty.wait("left in your Nerts pile: x again to call anyway")
    tty.send("x")
    text = tty.wait(lambda t: "false call: Nerts!" in t or "the round is over" in t)
    called = "false call: Nerts!" in text

    # The typed command line takes the notation; bad notation is refused in one line.
    tty.send(":zz\r")
    tty.wait("not a move: 'zz'")
    tty.send(":S\r")
    # (Bots at full speed on a loaded machine may end the round first: then S is refused.)
    tty.wait(
        lambda t: (
            "turned the stock" in t
            or "the round is over" in t
            or ("[s] stock" in t and stock(t) == before - 6)
        )
    )

    # Pass until everyone is stuck often enough, or a bot calls Nerts: the board comes up.
    # When no bot can go out, the round ends blocked after a whole cycle of rotations with no
    # card played: 35 of them (our untouched stock), ~2.5 s each as the bots turn through
    # theirs. Which it is depends on how the races went: allow for the long one.
    text = tty.wait("round 1 over", timeout=200, keep="p")
    for name in ("you", "bot0", "bot1"):
        assert re.search(rf"^\d {name} +lake \+\d+ +Nerts −2×", text, re.M), text
    # Over now, or after a tiebreak (RULES.md) when the round ended tied: the bots' timing
    # decides that. The tied play it after the board's countdown, we pass if we are one of
    # them ('p' on a board only says "Enter: back to the table").
    text = tty.wait("game over — winner: ", timeout=200, keep="p")
    assert re.search(r"^   lake: ", text, re.M)
    leave(tty)
    played = re.search(rb"after (\d+) rounds?:", tty.raw)
    assert played is not None and int(played[1]) >= 1, tty.raw[-500:]
    assert b"Traceback" not in tty.raw
    # The players' logs audit VALID, the false call named as a notice (the rules allow it).
    logs = sorted(str(p) for p in (tmp_path / "game").glob("**/*.log"))
    done = nertz("audit", *logs, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and "verdict: VALID" in done.stdout, done.stdout[-2000:]
    said = [line for line in done.stdout.splitlines() if "false_nerts" in line]
    named = [
        line.startswith("notice false_nerts: ") and " called Nerts with " in line for line in said
    ]
    assert named == ([True] if called else []), said


def test_play_ctrl_c_leaves_cleanly_and_the_bots_hold_the_leave(tmp_path: Path) -> None:
    tty = play(tmp_path)
    tty.wait("[n] Nerts")
    tty.child.sendintr()
    status = tty.finish()
    assert status == 128 + 2
    assert b"left the game on signal 2" in tty.raw and b"Traceback" not in tty.raw
    assert_said_on_lines_of_its_own(tty)
    game = tmp_path / "game"
    spec = GameSpec.from_wire((game / "game.spec").read_bytes())
    me = next(m.peer_id for m in spec.members if m.name == "you")
    roster = frozenset(spec.peer_ids)
    for bot in ("bot0", "bot1"):
        with read_log(game / f"{bot}.log") as reader:
            kinds = [
                decode_message(r.data, game_id=spec.game_id, roster=roster)
                for r in reader
                if r.kind is RecordKind.RECEIVED_EVENT
            ]
        assert any(m.author == me and m.kind is Kind.LEAVE for m in kinds), bot


def test_play_needs_a_mode_and_says_so_in_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, NERTZ_HOME=str(tmp_path))
    # A key named but missing: the lobby cannot open. (With no --key at a terminal the first
    # run asks for a name instead: test_cli_firstgame.)
    assert "--bots" in refused_in_one_line(f"play --key {tmp_path / 'nokey'}", env)


def test_play_rejects_bad_bot_arguments_in_one_line(tmp_path: Path) -> None:
    assert "strategy" in refused_in_one_line(f"play --bots 2 --strategy nobody --dir {tmp_path}")


def bot_processes(pid: int, commands: tuple[bytes, ...] = (b"node",)) -> list[int]:
    """The ``nertz node`` processes (or the other ``commands``) whose parent is ``pid`` (read
    from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid …: comm may hold spaces, so split after its closing paren.
        parent = int(stat.rpartition(")")[2].split()[1])
        # (Run through tests/timed_node.py, ``-- PYTHON -m cli …`` ends its command line.)
        start = command.index(b"--") + 1 if b"--" in command else 0
        if (
            parent == pid
            and command[start + 1 : start + 3] == [b"-m", b"cli"]
            and command[start + 3 : start + 4] in [[c] for c in commands]
        ):
            found.append(int(entry.name))
    return found


def test_play_abandon_key_ends_a_two_player_game_whose_bot_was_killed(tmp_path: Path) -> None:
    # Short liveness timers for this player's node; a slow bot, so the round is still on.
    # The silence is the test's own (session 44): the player's node suspects, and abandons,
    # nobody until the bot is killed, then the bot alone (tests/timed_node.py's --aim and
    # --aim-suspicion); the bot's node nobody. On the timers alone a loaded machine's stall of
    # either process (2 s) offered the key before the kill, or let the bot abandon the player.
    args = ["play", "--bots", "1", "--speed", "1", "--seed", "5", "--rounds", "3"]
    timers = ["--suspect-after", "2", "--drop-after", "2"]
    python = aimed_python(tmp_path, "bot1", "--aim-suspicion")
    tty = Tty([*args, *timers, "--dir", str(tmp_path / "game")], python=python)
    tty.wait("[n] Nerts")
    # While the bot answers, the key is not on offer; pressed anyway, it says why.
    assert "ends the game" not in tty.line(HEIGHT - 1)
    tty.send("a")
    text = tty.wait("cannot abandon: ")
    assert "bot1 is still answering" in tty.line(HEIGHT - 2), text
    (bot,) = bot_processes(tty.child.pid)
    os.kill(bot, signal.SIGKILL)
    os.kill(tty.child.pid, signal.SIGUSR2)  # (the bot's silence is the one its timers answer)
    # Once the bot is suspected, the footer offers the key; it asks first, then ends the game.
    text = tty.wait(lambda t: "ends the game (bot1 gone)" in t.splitlines()[-1])
    # What happened, in words, and what it does to the game (the two newest announcements).
    assert "» bot1 is not answering: their program stopped, or their network dropped" in text
    assert "» until bot1 answers, cards put in the lake stay in the air" in text
    tty.send("a")
    tty.wait("a or y ends it")
    tty.send("a")
    text = tty.wait("game over — winner: ")
    assert "(ended early)" in text and "the game was abandoned" in text
    leave(tty)
    assert b"winners: you, bot1" in tty.raw  # (no round scored: a tie, shared)
    assert b"Traceback" not in tty.raw


def test_play_stopped_from_outside_then_continued_takes_its_terminal_again(
    tmp_path: Path,
) -> None:
    # `kill -STOP` then the shell's `fg`: the shell had given the terminal its own modes back,
    # so the table redrew nothing, keys echoed and waited for Enter. (Ctrl-Z is curses's own.)
    tty = Tty(["play", "--bots", "1", "--speed", "1", "--rounds", "1",
               "--dir", str(tmp_path / "game")])  # fmt: skip
    tty.wait("[n] Nerts")
    os.kill(tty.child.pid, signal.SIGSTOP)
    fd = os.open(f"/proc/{tty.child.pid}/fd/0", os.O_RDWR | os.O_NOCTTY)
    try:  # what a shell does when its job stops: its terminal in cooked mode again
        modes = termios.tcgetattr(fd)
        modes[3] |= termios.ICANON | termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, modes)
    finally:
        os.close(fd)
    tty.stream.feed(b"\x1b[2J")  # (and its own lines over the table)
    os.kill(tty.child.pid, signal.SIGCONT)
    tty.wait("[n] Nerts")  # drawn again, whole
    tty.send("s")  # one key, no Enter: taken at once
    tty.wait(lambda text: text.splitlines()[HEIGHT - 2] == "turned the stock")
    leave(tty)
    assert b"Traceback" not in tty.raw


def test_play_rejects_liveness_timers_out_of_order_in_one_line(tmp_path: Path) -> None:
    line = refused_in_one_line(f"play --bots 1 --suspect-after 3 --drop-after 1 --dir {tmp_path}")
    assert "--drop-after" in line and "--suspect-after" in line
    assert not (tmp_path / "game.spec").exists()  # nothing was started


def test_a_failing_test_leaves_no_process_of_its_tty_running(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A test of its own that fails while `nertz play` and its bot run: the suite's teardown
    # (conftest.py's, imported into it as a fixture) must leave none of them running. Before,
    # the play process was left to pexpect's garbage collection and its bot played on.
    pids = tmp_path / "pids"
    pytester.makepyfile(
        test_fails=f"""
        from cli_helpers import descendants
        from conftest import _no_process_outlives_its_test  # noqa: F401
        from test_cli_play import Tty

        def test_fails_while_its_program_runs(tmp_path):
            tty = Tty(["play", "--bots", "1", "--speed", "1", "--seed", "3", "--rounds", "1",
                       "--dir", str(tmp_path / "game")])
            tty.wait("[n] Nerts", timeout=60)
            running = {{tty.child.pid, *descendants(tty.child.pid)}}
            open({str(pids)!r}, "w").write(" ".join(map(str, running)))
            assert False, "failing on purpose, its program running"
        """
    )
    tests = Path(__file__).resolve().parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), str(ROOT)]))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    started = {int(pid) for pid in pids.read_text().split()} if pids.exists() else set()
    left = {pid for pid in started if _running(pid)}
    for pid in left:  # (this test leaves nothing behind either)
        os.kill(pid, signal.SIGKILL)
    result.assert_outcomes(failed=1)
    assert len(started) >= 2, started  # (play and its bot's node)
    assert not left, f"left running: {left}"


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process still running (not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_play_quick_game_options_without_bots_say_so_in_one_line(tmp_path: Path) -> None:
    # `nertz play --practice` went to the lobby (or said there was no key), the practice
    # silently forgotten.
    env = dict(os.environ, NERTZ_HOME=str(tmp_path))
    line = refused_in_one_line("play --practice", env)
    assert "--practice is for a quick game against bots: add --bots N" in line, line
    line = refused_in_one_line(f"play --speed 3 --dir {tmp_path / 'game'}", env)
    assert "--speed and --dir are for a quick game against bots" in line, line
    assert list(tmp_path.iterdir()) == []  # (nothing was made: no key, no game)
