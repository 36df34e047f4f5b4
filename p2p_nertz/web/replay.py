"""``nertz replay --web``: step through a finished game in the browser table.

:class:`ReplayStepper` (pure) holds where the replay is and turns the page's keys into steps;
:func:`run_web_replay` serves the page and sends the table after each step, drawn by the same
page as a live game (every tableau, as every peer saw them: face-down cards stay face down).

Keys (the page's buttons send them too): ``n``, Enter or space the next event, ``b`` the one
before, ``N``/``B`` ten at a time, ``]``/``[`` the next or this round's start, ``0`` the start,
``e`` the end, ``q`` stops the replay.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable
from typing import Any

import trio

from p2p_nertz.audit.replay import STEP_LEGEND, Replay, step_line
from p2p_nertz.signals import open_receiver
from p2p_nertz.ui.view import TableView
from p2p_nertz.web.model import KEYS_ONLY, KeyPress, PageAction, view_json
from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

__all__ = ["ReplayStepper", "run_web_replay"]

_STEPS = {"n": 1, " ": 1, "ENTER": 1, "b": -1, "N": 10, "B": -10}


class ReplayStepper:
    """Where a replay is (step ``at`` of ``len(replay)``), moved by keys.

    Args:
        replay: the audited game.
        symbols: suit symbols in the words.
    """

    def __init__(self, replay: Replay, *, symbols: bool = True) -> None:
        self.replay = replay
        self.symbols = symbols
        self.at = 0
        self.done = False

    def key(self, key: str) -> None:
        """Move by one key (see the module docstring); other keys do nothing."""
        total = len(self.replay)
        target = self.at
        if key in _STEPS:
            target = self.at + _STEPS[key]
        elif key == "0":
            target = 0
        elif key == "e":
            target = total
        elif key == "]":  # the next round's start
            target = next((s for s in self._starts() if s > self.at), self.at)
        elif key == "[":  # this round's start (at it already: the one before)
            target = max((s for s in self._starts() if s < self.at), default=0)
        elif key == "q":
            self.done = True
        self.at = max(0, min(total, target))

    def _starts(self) -> list[int]:
        """The step before each round's first event."""
        rounds = sorted({step.round for step in self.replay.steps})
        found = (self.replay.round_start(number) for number in rounds)
        return [start for start in found if start is not None]

    def view(self) -> dict[str, Any]:
        """The page's view of the table after step :attr:`at`."""
        replay, at = self.replay, self.at
        state = replay.state_at(at)
        names = tuple(m.name for m in replay.spec.members)
        line = "before the first event" if at == 0 else step_line(replay.steps[at - 1], replay.spec)
        recent = [step_line(s, replay.spec) for s in replay.steps[max(0, at - 8) : at]]
        view = TableView(
            table=state.table,
            seat=None,
            names=names,
            rules=replay.spec.rules,
            round=state.round.number or 1,
            phase=state.phase.value,
            totals=state.game.totals,
            messages=tuple(recent),
            status=f"step {at}/{len(replay)}: {line}",
        )
        data = view_json(view, symbols=self.symbols)
        data["replay"] = {
            "at": at,
            "total": len(replay),
            "verdict": replay.report.verdict,
            "legend": " ".join(line.strip() for line in STEP_LEGEND),  # (what L13, T* are)
        }
        return data


async def run_web_replay(
    replay: Replay,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_url: Callable[[str], None],
    symbols: bool = True,
) -> int | None:
    """Serve the replay's page until ``q`` is pressed in it (or the process is stopped).

    Returns:
        ``None`` after ``q``; SIGTERM's number after a SIGTERM, once the pages are told
        (``nertz`` then says "interrupted" with SIGTERM's status, as at a SIGTERM anywhere:
        cli/web_cmd.py). Taken here, at a checkpoint: ``nertz``'s own SIGTERM handler raised
        KeyboardInterrupt anywhere inside trio when SIGINT was ignored (a command started in
        the background), and trio's tasks spilled tracebacks.

    Raises:
        NertzError: the page cannot be served on ``host:port``.
    """
    stepper = ReplayStepper(replay, symbols=symbols)
    feed = ViewFeed()
    send, receive = trio.open_memory_channel[PageAction](64)

    def on_action(action: PageAction) -> None:
        assert isinstance(action, KeyPress)  # (the server takes nothing else: KEYS_ONLY)
        with contextlib.suppress(trio.WouldBlock):  # (a flood: dropped, as keys typed ahead)
            send.send_nowait(action)

    feed.publish(json.dumps(stepper.view(), ensure_ascii=False))
    async with trio.open_nursery() as nursery:
        app = WebApp(Page(), feed, on_action, takes=KEYS_ONLY)
        # (Ours before the URL is out: a SIGTERM sent as soon as it is read reached nertz's
        # own handler, which raised inside trio, and a traceback spilled on a loaded machine.)
        with trio.CancelScope() as steps, open_receiver(signal.SIGTERM) as sigterm:
            nursery.start_soon(_cancel_on_sigterm, sigterm, steps)
            url = await nursery.start(serve_page, app, host, port)
            on_url(url)
            async for action in receive:
                assert isinstance(action, KeyPress)
                stepper.key(action.key)
                if stepper.done:
                    break
                feed.publish(json.dumps(stepper.view(), ensure_ascii=False))
        await app.close_pages("the replay is closed: its terminal is free again")
        nursery.cancel_scope.cancel()
    return signal.SIGTERM if steps.cancelled_caught else None


async def _cancel_on_sigterm(received: AsyncIterator[int], scope: trio.CancelScope) -> None:
    """Cancel ``scope`` at the first SIGTERM ``received``."""
    async for _signum in received:
        scope.cancel()
        return
