"""The lines a test's processes say (``p2p_nertz.testing.said``) and what a silent one is doing
(``p2p_nertz.testing.stalls``): session 37's answer to a lab process that "never said it
started" in a CI run (``scripts/bench_hwm_dead_link.py``: its two threads' lines ran into one).

Real processes and pipes. No timing is asserted: a wait that is meant to run out does so on a
process that will never say what is waited for, after it said what it says first.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from p2p_nertz.testing.netns import Lab, unavailable
from p2p_nertz.testing.said import NeverSaid, Said, first_line, lines, reap
from p2p_nertz.testing.stalls import describe, py_spy

_NO_LAB = unavailable()
#: A child Python's thread name: its executable's (``python3`` where pytest is run by its own
#: script, ``python`` by ``python -m pytest``), cut as the kernel cuts it (15 characters).
_COMM = re.escape(Path(sys.executable).name[:15])
needs_lab = pytest.mark.skipif(_NO_LAB is not None, reason=f"needs a netns lab: {_NO_LAB}")

# Threads that each say numbered lines as fast as they can. With PYTHONUNBUFFERED (given to the
# child here, as this machine's shells set it) stdout has no buffer: print's text and its newline
# are two write calls, the GIL let go between them; a short switch interval gives the other
# threads that moment often. With print in place of say, 6 to 8 of the 16,000 lines ran into
# another in each of three runs (session 37).
_SPEAKERS = textwrap.dedent("""
    import sys, threading
    from p2p_nertz.testing.said import say
    sys.setswitchinterval(1e-6)
    def speak(k):
        for i in range(2000):
            say(f"t{k} {i}")
    threads = [threading.Thread(target=speak, args=(k,)) for k in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
""")


def test_say_keeps_each_line_whole_while_threads_speak_at_once() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _SPEAKERS], capture_output=True, text=True, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines.pop() == ""  # (the last line ends too)
    expected = {f"t{k} {i}" for k in range(8) for i in range(2000)}
    assert len(lines) == len(expected)
    assert [line for line in lines if line not in expected] == []
    assert set(lines) == expected


@contextmanager
def _started(code: str) -> Iterator[Said]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    said = Said(proc, "the probe")
    try:
        yield said
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        said.close()
        for stream in (proc.stdin, proc.stdout):
            assert stream is not None
            stream.close()


def test_wait_for_returns_the_latest_line_said_with_the_prefix() -> None:
    code = "print('step one'); print('port 1'); print('port 2', flush=True); input()"
    with _started(code) as said:
        assert said.wait_for("port 2", 90) == "port 2"
        assert said.wait_for("port", 90) == "port 2"
        assert said.lines == ["step one", "port 1", "port 2"]
        said.clear()
        assert said.lines == []


def test_a_line_never_said_fails_saying_what_was_said_and_what_the_process_is_doing() -> None:
    with _started("print('step one', flush=True); input()") as said:
        said.wait_for("step one", 90)
        with pytest.raises(NeverSaid) as raised:
            said.wait_for("bound", 0.2)  # (it never will: it reads its input, which never comes)
        message = str(raised.value)
        pid = said.proc.pid
    assert message.startswith("the probe never said 'bound': not within 0.2 s; it said:")
    assert "'step one'" in message
    assert f"process {pid}: {sys.executable} -c print(" in message
    # Its main thread: its state (asleep on its input, or not yet), wait channel, kernel stack.
    assert re.search(rf"thread {pid} \({_COMM}\): state \S \([^)]*\), wchan \S+, kernel stack: ",
                     message), message  # fmt: skip


def test_a_process_ending_first_fails_at_once_with_its_exit() -> None:
    code = "print('only this', flush=True); raise SystemExit(3)"
    with _started(code) as said, pytest.raises(NeverSaid) as raised:
        said.wait_for("bound", 600)  # (a hang's bound: its end ends the wait)
    message = str(raised.value)
    assert "never said 'bound': ended (exit 3)" in message
    assert "'only this'" in message
    assert "state" not in message  # (nothing to describe: it is gone)


def test_first_line_reads_a_process_output_file_bounded(tmp_path: Path) -> None:
    def start(code: str, out: Path) -> subprocess.Popen[bytes]:
        with out.open("wb") as sink:
            return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                    stdout=sink)  # fmt: skip

    talked, quiet, quit_ = (tmp_path / f"{name}.txt" for name in ("talker", "silent", "quitter"))
    talker = start("print('tcp://x:1', flush=True); print('more', flush=True); input()", talked)
    silent = start("input()", quiet)
    try:
        assert first_line(talker, "the talker", 90, path=talked) == "tcp://x:1"
        with pytest.raises(NeverSaid, match=r"the silent said nothing: not within 0.2 s") as raised:
            first_line(silent, "the silent", 0.2, path=quiet)  # (it never will: it reads its input)
        assert f"process {silent.pid}: " in str(raised.value)
        assert raised.value.proc is silent
    finally:
        for proc in (talker, silent):
            proc.kill()
            proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()
    quitter = start("raise SystemExit(5)", quit_)
    assert quitter.stdin is not None
    with quitter.stdin, pytest.raises(NeverSaid, match=r"the quitter said nothing: ended \(exit 5"):
        first_line(quitter, "the quitter", 600, path=quit_)  # (its end ends the wait)


def test_first_line_reads_a_process_pipe_bounded_and_leaves_the_rest() -> None:
    def start(code: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)  # fmt: skip

    talker = start("print('tcp://x:1', flush=True); print('more', flush=True); input()")
    silent = start("input()")
    quitter = start("raise SystemExit(6)")
    try:
        assert first_line(talker, "the talker") == "tcp://x:1"
        assert talker.stdout is not None and talker.stdout.readline() == "more\n"  # (the caller's)
        with pytest.raises(NeverSaid, match=r"the silent said nothing: not within 0.2 s") as raised:
            first_line(silent, "the silent", 0.2)  # (it never will: it reads its input)
        assert f"process {silent.pid}: " in str(raised.value)
        with pytest.raises(NeverSaid, match=r"the quitter said nothing: its output ended \(exit 6"):
            first_line(quitter, "the quitter", 600)  # (its end ends the wait)
    finally:
        for proc in (talker, silent, quitter):
            proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                assert pipe is not None
                pipe.close()


def test_first_line_reads_stderr_when_asked_and_says_why_a_silent_process_ended() -> None:
    def start(code: str) -> subprocess.Popen[str]:
        pipe = subprocess.PIPE
        return subprocess.Popen(
            [sys.executable, "-c", code], stdin=pipe, stdout=pipe, stderr=pipe, text=True
        )

    guest = start("import sys; print('connecting to h:1…', file=sys.stderr, flush=True); input()")
    crasher = start("import sys; print('nope: no key', file=sys.stderr); raise SystemExit(2)")
    silent = start("input()")
    try:
        assert first_line(guest, "the guest", stderr=True) == "connecting to h:1…"
        # Its output ended: why is on its stderr, said (a process alive would not end it).
        with pytest.raises(NeverSaid, match=r"ended \(exit 2\); its stderr: 'nope: no key'"):
            first_line(crasher, "the crasher", 600)
        with pytest.raises(NeverSaid, match=r"the silent said nothing: not within 0.2 s"):
            first_line(silent, "the silent", 0.2, stderr=True)
    finally:
        for proc in (guest, crasher, silent):
            proc.kill()
            proc.communicate()
    stdout_only = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)
    stdout_only.communicate()
    with pytest.raises(ValueError, match="the probe: its stderr is not a pipe"):
        first_line(stdout_only, "the probe", stderr=True)


def test_lines_reads_on_until_the_end_and_a_process_silent_past_the_bound_is_described() -> None:
    def start(code: str) -> subprocess.Popen[str]:
        pipe = subprocess.PIPE
        return subprocess.Popen(
            [sys.executable, "-c", code], stdin=pipe, stdout=pipe, stderr=pipe, text=True
        )

    ender = start("import sys; print('a'); print('b', file=sys.stderr); print('c')")
    # Both lines in one write, and read only once they are in the pipe: the 0.2 s bound is on
    # the silence after them, not on the interpreter's start (over 0.2 s at a load of 45).
    stopper = start("import sys; sys.stdout.write('a\\nb\\n'); sys.stdout.flush(); input()")
    try:
        assert list(lines(ender, "the ender", 600)) == ["a\n", "c\n"]  # (its end ends it)
        assert list(lines(ender, "the ender", 600, stderr=True)) == ["b\n"]
        assert stopper.stdout is not None
        assert select.select([stopper.stdout], [], [], 600)[0]  # (its lines are in the pipe)
        seen = []
        with pytest.raises(NeverSaid, match=r"the stopper said nothing more: not within 0.2") as e:
            for line in lines(stopper, "the stopper", 0.2):  # (it never will: reads its input)
                seen.append(line)
        assert seen == ["a\n", "b\n"]
        assert f"process {stopper.pid}: " in str(e.value)  # (what it was doing)
        assert stopper.wait(600) < 0  # (killed, once described)
    finally:
        for proc in (ender, stopper):
            proc.kill()
            proc.communicate()
    # A process leading its own group, whose child holds the pipe too: the group is ended, or
    # the pipe would never end.
    code = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'input()']); input()"
    pipe = subprocess.PIPE
    leader = subprocess.Popen(
        [sys.executable, "-c", code], stdin=pipe, stdout=pipe, text=True, start_new_session=True
    )
    with pytest.raises(NeverSaid, match=r"the leader said nothing more"):
        list(lines(leader, "the leader", 0.5))
    leader.communicate()


def test_reap_kills_reads_to_the_end_and_reaps_and_says_when_a_child_holds_the_pipes() -> None:
    pipe = subprocess.PIPE
    talker = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('a', flush=True); input()"],
        stdin=pipe, stdout=pipe, stderr=pipe, text=True,
    )  # fmt: skip
    assert first_line(talker, "the talker") == "a"  # (alive, reading its input for good)
    assert reap(talker, "the talker") == ("", "")
    assert talker.returncode == -9
    # Its group is ended with it where it leads one: the child holding the pipe too.
    code = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'input()']); input()"
    leader = subprocess.Popen(
        [sys.executable, "-c", code], stdin=pipe, stdout=pipe, text=True, start_new_session=True
    )
    assert reap(leader, "the leader")[0] == ""
    # A child of its own session holds the pipe on: said after the bound, never waited for.
    code = (
        "import subprocess, sys; c = subprocess.Popen([sys.executable, '-c',"
        " 'import time; time.sleep(600)'], start_new_session=True); print(c.pid, flush=True);"
        " input()"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=pipe, stdout=pipe, text=True)
    child = int(first_line(parent, "the parent"))
    try:
        with pytest.raises(NeverSaid, match=r"the parent: its output did not end within 0.5 s"):
            reap(parent, "the parent", 0.5)
        assert parent.returncode == -9 and parent.stdout is not None and parent.stdout.closed
    finally:
        os.kill(child, signal.SIGKILL)


def test_json_lines_until_is_bounded_and_says_what_was_said() -> None:
    from tests.cli_helpers import json_lines_until

    code = "import json; print(json.dumps({'event': 'a'}), flush=True); print('b'); input()"
    pipe = subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=pipe, stdout=pipe, text=True, start_new_session=True
    )
    try:
        with pytest.raises(NeverSaid, match=r"no 'done' line within 0.5 s") as e:
            json_lines_until(proc, "done", bound=0.5)  # (it never will: reads its input)
        assert """'{"event": "a"}'""" in str(e.value) and "'b'" in str(e.value)
        assert f"process {proc.pid}: " in str(e.value)  # (what it was doing)
        assert proc.wait(600) < 0  # (killed, once described)
    finally:
        reap(proc)
    ended = subprocess.Popen(
        [sys.executable, "-c", "import json; print(json.dumps({'event': 'a'}))"],
        stdout=pipe, text=True,
    )  # fmt: skip
    with pytest.raises(AssertionError, match=r"no 'done' line before the end"):
        json_lines_until(ended, "done")
    reap(ended)


def test_said_refuses_a_process_whose_output_is_not_a_pipe() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL)
    proc.wait()
    with pytest.raises(ValueError, match="the probe: its output is not a pipe"):
        Said(proc, "the probe")


def test_describe_says_each_thread_of_a_live_process_and_that_a_gone_one_is_gone() -> None:
    with _started("import threading; print('up', flush=True); input()") as said:
        said.wait_for("up", 90)
        pid = said.proc.pid
        text = describe(pid, spy=False)
    lines = text.splitlines()
    assert lines[0].startswith(f"process {pid}: {sys.executable} -c import threading")
    assert re.match(rf"  thread {pid} \({_COMM}\): state \S \([^)]*\), wchan \S+, kernel stack: ",
                    lines[1]), lines  # fmt: skip
    assert describe(pid, spy=False) == f"process {pid}: gone"  # (reaped above)


@pytest.mark.skipif(py_spy() is None, reason="py-spy is not installed (it is optional)")
def test_describe_shows_a_python_processs_own_stack_where_py_spy_is_installed() -> None:
    code = "def waiting_for_input():\n    input()\nprint('up', flush=True)\nwaiting_for_input()"
    with _started(code) as said:
        said.wait_for("up", 90)
        text = describe(said.proc.pid)
    assert "py-spy dump:" in text
    assert "waiting_for_input" in text


@needs_lab
@pytest.mark.netns
def test_a_lab_process_says_it_is_ready_and_its_lines_are_read_on() -> None:
    code = "print('up 1', flush=True); print(input(), flush=True); input()"
    with Lab(1) as lab:
        said = lab.start(0, [sys.executable, "-c", code], ready="up", stdin=subprocess.PIPE)
        assert said.lines == ["up 1"]
        assert said.proc.stdin is not None
        said.proc.stdin.write("again\n")
        said.proc.stdin.flush()
        assert said.wait_for("again", 90) == "again"
    assert said.proc.returncode is not None  # (the lab's close ended it)


@needs_lab
@pytest.mark.netns
def test_a_lab_process_that_never_says_it_is_ready_fails_with_what_it_does_and_is_ended() -> None:
    with Lab(1) as lab:
        code = "print('step one', flush=True); input()"
        with pytest.raises(NeverSaid) as raised:
            lab.start(0, [sys.executable, "-c", code], ready="up", name="the probe", bound=0.2,
                      stdin=subprocess.PIPE)  # fmt: skip
        message = str(raised.value)
        assert message.startswith("the probe never said 'up': not within 0.2 s; it said:")
        # What it was doing: still `ip netns exec` or the Python it became, its threads' states.
        proc = raised.value.proc
        assert proc is not None
        assert f"process {proc.pid}: " in message
        assert "state " in message
        assert proc.wait(90) == -9  # (ended: killed)
        with pytest.raises(NeverSaid, match=r"the probe never said 'up': ended \(exit 4\)"):
            lab.start(0, [sys.executable, "-c", "raise SystemExit(4)"], ready="up",
                      name="the probe")  # fmt: skip
