"""The guard in tests/conftest.py: a test that leaves the pytest process's signal handling
changed fails, and the tests after it find SIGINT as it was (a ``nertz`` child started by a
later test inherits an ignored or blocked SIGINT, and never sees Ctrl-C)."""

from __future__ import annotations

from pathlib import Path

import pytest

LEAKS = """
import ctypes
import signal
from pathlib import Path

# Whatever the runner started this run with: SIGINT as Python sets it up by default.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_leaves_sigint_ignored():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_leaves_sigint_blocked():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def test_leaves_sigint_ignored_behind_pythons_back():
    ctypes.CDLL(None).signal(signal.SIGINT, ctypes.c_void_p(1))  # SIG_IGN, from C


def test_touches_nothing():
    pass


def test_runs_after_them_with_sigint_as_it_was():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, ())
    ignored = next(
        line for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("SigIgn:")
    )
    assert not int(ignored.split()[1], 16) >> (signal.SIGINT - 1) & 1
"""


def test_signal_guard_fails_each_test_that_leaks_and_puts_sigint_back(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (the conftest imports the tests' helpers: the inner run finds them where they are)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makepyfile(test_leaks=LEAKS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, errors=3)
    errors = {
        line.split("::")[1].split(" ")[0]
        for line in result.outlines
        if line.startswith("ERROR test_leaks.py::")
    }
    assert errors == {
        "test_leaves_sigint_ignored",
        "test_leaves_sigint_blocked",
        "test_leaves_sigint_ignored_behind_pythons_back",
    }
    text = result.stdout.str()
    assert "SigIgn +['SIGINT']" in text and "SigBlk +['SIGINT']" in text
