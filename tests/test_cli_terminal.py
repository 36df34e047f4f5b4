"""The curses table's keyboard once its terminal is gone (cli/terminal.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
import trio
import trio.testing

from cli.terminal import CursesTerminal, keys_of


@pytest.fixture
def hung_up_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Standard input as a terminal that hung up leaves it: always readable, at its end, and
    no longer a terminal (a pipe whose writer is gone is all three)."""
    read_end, write_end = os.pipe()
    os.close(write_end)
    with os.fdopen(read_end, "r") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        yield


@pytest.mark.anyio
@pytest.mark.usefixtures("hung_up_stdin")
async def test_the_keyboard_waits_for_ever_on_a_terminal_that_hung_up() -> None:
    # With SIGHUP ignored (nohup) a table whose terminal closed plays on: its keyboard task
    # looped on the terminal's end, which is always "readable", a core's worth of CPU.
    terminal = object.__new__(CursesTerminal)  # (wait_input reads standard input only)
    returned = False

    async def wait() -> None:
        nonlocal returned
        await terminal.wait_input()
        returned = True

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        assert not returned  # still waiting: no key will come
        nursery.cancel_scope.cancel()


def test_an_arrow_key_curses_did_not_decode_is_an_arrow_not_esc_bracket_a() -> None:
    # A terminal sending ESC [ A for the up arrow where the terminfo entry says ESC O A: read
    # one code at a time it was Esc, "[" and "a", the abandon key (a newcomer's arrow asked
    # to end the game).
    seq = ["\x1b", "[", "A", "\x1b", "O", "B", "\x1b", "[", "C", "\x1b", "[", "D"]
    assert keys_of(seq) == ["UP", "DOWN", "RIGHT", "LEFT"]
    # Another key's sequence (F5: ESC [ 1 5 ~) is no key at all; Esc alone is still Esc, and
    # what follows a sequence is read as it comes.
    assert keys_of(["\x1b", "[", "1", "5", "~", "a", "\x1b"]) == ["a", "ESC"]
    assert keys_of(["\x1b", "q", "\r", "\x03", "\x01"]) == ["ESC", "q", "ENTER", "CTRL-C"]
    assert keys_of(["\x1b", "["]) == []  # (cut short: the rest of it would not be keys either)
