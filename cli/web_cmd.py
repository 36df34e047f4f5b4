"""``--web``: the table in a browser instead of the terminal (issue 17), for ``nertz play`` and
``nertz replay``.

:func:`run_in_browser` plays a node from the page its own process serves
(:func:`p2p_nertz.web.table.run_web_table`), prints the page's URL on a line of its own and
opens it in the default browser unless ``--no-open`` (by way of a private file, so that no
command line shows the token: cli/page_file.py). The options are
:func:`cli.args.add_web_arguments`'s.

Where the table's page is served is kept beside the game's log (``LOG.page``: the address and
the token, mode 0600, as secret as the URL), so that ``nertz resume LOG --web`` serves it at
the same URL and the pages still open on it reconnect by themselves (``web/static/table.js``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import webbrowser
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import trio

from cli.args import error_text, expected_errors
from cli.page_file import write_page_file
from cli.table import Outcome
from p2p_nertz.audit.replay import Replay
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.signals import Signals, note_terminated
from p2p_nertz.ui.controller import BETWEEN_ROUNDS
from p2p_nertz.web.replay import run_web_replay
from p2p_nertz.web.server import serve_page
from p2p_nertz.web.table import run_web_table
from p2p_nertz.web.terminal import PageTerminal

__all__ = [
    "browser_opener",
    "lobby_left",
    "page_of",
    "resume_in_page",
    "replay_in_browser",
    "run_in_browser",
    "serve_lobby_page",
    "table_in_page",
]


def browser_opener(bind: tuple[str, int], *, open_page: bool) -> Callable[[str], None]:
    """What to do with the page's URL: print it on a line of its own (scripts and tests read
    it), warn when it is served beyond this machine, and open it unless ``--no-open``."""

    def on_url(url: str) -> None:
        print(url, flush=True)  # on a line of its own: scripts and tests read it
        if bind[0] not in ("127.0.0.1", "localhost"):
            print(
                f"the page is served on {bind[0]}: anyone who learns this URL can use it",
                file=sys.stderr,
            )
        if open_page:
            if _has_a_screen():
                _open_privately(url)
            else:
                print("no display here: open the URL above in a browser", file=sys.stderr)

    return on_url


def _open_privately(url: str) -> None:
    """Open ``url`` in the browser by way of a file only this user reads, so that the
    browser's command line, which every user sees, holds no token (cli/page_file.py)."""
    try:
        target = write_page_file(url).as_uri()
    except OSError as exc:
        why = f"the browser is not opened (no private file for it: {exc.strerror})"
        print(f"{why}: open the URL above in a browser", file=sys.stderr)
        return
    # (On a thread: a browser that runs in the foreground must not stop the peer.)
    threading.Thread(target=webbrowser.open, args=(target,), daemon=True).start()


def _has_a_screen() -> bool:
    """Whether a graphical browser can open here (else ``webbrowser`` would pick a text one,
    which takes over the terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def replay_in_browser(replay: Replay, *, bind: tuple[str, int], open_page: bool) -> None:
    """Serve the replay's page until ``q`` in it (Ctrl-C, SIGTERM: ``nertz`` says
    "interrupted", with the signal's status).

    Raises:
        NertzError: the page cannot be served there.
        KeyboardInterrupt: a SIGTERM stopped it (noted as one: cli/args.py).
    """
    try:
        signum = trio.run(
            partial(
                run_web_replay,
                replay,
                host=bind[0],
                port=bind[1],
                on_url=browser_opener(bind, open_page=open_page),
            )
        )
    except BaseExceptionGroup as group:
        errors = expected_errors(group)
        raise NertzError(error_text(errors[0])) from None
    if signum is not None:
        note_terminated()
        raise KeyboardInterrupt


def page_of(log: Path) -> Path:
    """Where the page's address is kept for the game whose log is ``log``."""
    return log.with_name(log.name + ".page")


def _remember(log: Path, url: str) -> None:
    """Keep the page's address and token beside the log (not kept: the page is only not
    found again by a resume, which says so)."""
    parts = urlsplit(url)
    data = {"port": parts.port, "token": parts.path.strip("/")}
    try:
        # Not through a link planted there, and 0600 even if it was left readable by others
        # (the mode of ``open`` applies only to a file it creates).
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(page_of(log), flags, 0o600)
        with os.fdopen(fd, "w") as out:
            os.fchmod(out.fileno(), 0o600)
            json.dump(data, out)
    except OSError as exc:
        print(f"the page's address is not kept ({exc.strerror})", file=sys.stderr)


def _kept(log: Path) -> tuple[int, str] | None:
    """The port and token a game's first run served its page at (``None``: none kept). The
    port is not looked at here: the page's server tries it and falls back on a free one
    (:func:`_taken`), in one step another process cannot come between."""
    try:
        data = json.loads(page_of(log).read_text())
        return int(data["port"]), str(data["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _taken(port: int) -> None:
    print(f"the page's port {port} is taken now: it is served on another", file=sys.stderr)


async def resume_in_page(
    node: PeerNode, endpoints: Mapping[PeerId, str], *, bind: tuple[str, int], open_page: bool
) -> Outcome:
    """``nertz resume LOG --web``: the table in the page, at the URL the game's first run
    served it on (when kept and ``--web-bind`` gives no port), so its open pages reconnect;
    where that port is taken now, on another (its old pages will not find it)."""
    kept = _kept(node.log_path) if bind[1] == 0 else None
    port, token = kept if kept is not None else (bind[1], None)
    on_url = _keeping(node.log_path, browser_opener(bind, open_page=open_page))
    taken = _taken if kept is not None else None  # (a port asked for: taken is an error)
    done = await run_web_table(
        node, endpoints, host=bind[0], port=port, on_url=on_url, token=token, taken=taken
    )
    return Outcome(done.peer, done.left, done.signal, gone=node.gone, log=node.log_path)


def _keeping(log: Path, on_url: Callable[[str], None]) -> Callable[[str], None]:
    def told(url: str) -> None:
        _remember(log, url)
        on_url(url)

    return told


def run_in_browser(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    bind: tuple[str, int],
    open_page: bool,
    symbols: bool = True,
    hint: str | None = None,
) -> Outcome:
    """Play ``node`` from a browser page until the game is over and read, or left; the
    runtime's expected failures are returned in :attr:`Outcome.errors`. The page's address
    is kept beside the node's log (:func:`page_of`). ``node`` holds its first ``ready``
    (``make_node(first_waits=True)``): round 1 is dealt once the page is connected, or after
    the between-rounds countdown's 30 s."""

    on_url = _keeping(node.log_path, browser_opener(bind, open_page=open_page))

    async def main() -> Outcome:
        done = await run_web_table(
            node, endpoints, host=bind[0], port=bind[1], on_url=on_url, symbols=symbols,
            hint=hint, first_deal=BETWEEN_ROUNDS,
        )  # fmt: skip
        return Outcome(done.peer, done.left, done.signal, gone=node.gone)

    try:
        return trio.run(main)
    except BaseExceptionGroup as group:
        return Outcome(errors=expected_errors(group))


async def serve_lobby_page(
    nursery: trio.Nursery, terminal: PageTerminal, *, bind: tuple[str, int], open_page: bool
) -> None:
    """Serve the lobby's page (``nertz play --web`` with neither ``--bots`` nor ``--spec``) in
    ``nursery``; its URL printed, and opened unless ``--no-open``."""
    terminal.url = await nursery.start(serve_page, terminal.app, *bind)
    browser_opener(bind, open_page=open_page)(terminal.url)


async def lobby_left(terminal: object) -> None:
    """The person left the lobby without a game: its page, if it is one, is told so (and
    stops trying to reconnect)."""
    if isinstance(terminal, PageTerminal):
        await terminal.app.close_pages("you left the lobby: your nertz program has stopped")


async def table_in_page(
    node: PeerNode, endpoints: Mapping[PeerId, str], terminal: PageTerminal, signals: Signals
) -> Outcome:
    """The game the lobby started, on the lobby's page (the same URL, kept beside the log for
    ``nertz resume --web``), reading the lobby's ``signals`` (held across the hand-over)."""
    if terminal.url is not None:
        _remember(node.log_path, terminal.url)
    done = await run_web_table(
        node, endpoints, on_url=lambda url: None, app=terminal.app, signals=signals
    )
    return Outcome(done.peer, done.left, done.signal, gone=node.gone)
