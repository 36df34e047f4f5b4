"""A terminal smaller than 80×24: the table says so and what to do, instead of a table cut
short (your own tableau, at the bottom, was the part lost); the game goes on, and once the
terminal is large enough again the table is back. The real ``nertz play`` in a pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_play import HEIGHT, WIDTH, leave, play

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]


def test_a_terminal_too_small_for_the_table_says_so_and_the_table_comes_back(
    tmp_path: Path,
) -> None:
    tty = play(tmp_path)
    tty.wait("[n] Nerts")  # (the table, at 80×24)
    tty.child.setwinsize(10, 40)  # (the kernel sends the program SIGWINCH)
    tty.screen.resize(10, 40)
    text = " ".join(tty.wait(lambda text: "needs 80×24" in " ".join(text.split())).split())
    assert "This terminal is 40×10; p2p-nertz needs 80×24. Make it larger" in text, text
    assert "[n] Nerts" not in text, text
    tty.child.setwinsize(HEIGHT, WIDTH)
    tty.screen.resize(HEIGHT, WIDTH)
    text = tty.wait("[n] Nerts")
    assert "80×24" not in text, text
    leave(tty)
