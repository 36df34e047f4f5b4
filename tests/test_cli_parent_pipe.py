"""The pipe a bot stops with (cli/node_cmd.py ``wait_closed``, ``nertz node
--stop-with-stdin``): its end, which the kernel makes when the command holding the other end
ends however it ends, stops the bot; what the command writes before does not."""

from __future__ import annotations

import os

import trio
import trio.testing

from cli.node_cmd import wait_closed


def test_the_parent_pipe_ends_the_wait_only_when_its_writer_is_gone() -> None:
    read_end, write_end = os.pipe()

    async def main() -> tuple[bool, bool]:
        os.write(write_end, b"0=tcp://127.0.0.1:5\n\n")  # (what the command writes: no end)
        # The mock clock jumps to the deadline once every task waits: no sleep, no timing.
        with trio.move_on_after(3600) as held:
            await wait_closed(read_end)
        os.close(write_end)
        with trio.move_on_after(3600) as ended:
            await wait_closed(read_end)
        return held.cancelled_caught, ended.cancelled_caught

    try:
        clock = trio.testing.MockClock(autojump_threshold=0)
        held, timed_out = trio.run(main, clock=clock)
    finally:
        os.close(read_end)
    assert held, "the wait ended while the writer held the pipe"
    assert not timed_out, "the wait went on after the writer closed the pipe"


def test_the_parent_pipe_on_a_file_reads_it_to_its_end() -> None:
    # `nertz node --stop-with-stdin < /dev/null`: no pipe to wait on; it stops at once.
    fd = os.open(os.devnull, os.O_RDONLY)

    async def main() -> None:
        # (The real clock: a read in a thread looks idle to a mock clock, which would jump.
        # The bound only guards against a hang.)
        with trio.fail_after(120):
            await wait_closed(fd)

    try:
        trio.run(main)
    finally:
        os.close(fd)
