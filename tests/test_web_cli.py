"""``--web``'s options as a person mistypes them: one clear line, no traceback, nothing left
running."""

from __future__ import annotations

import functools
import socket
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio

from tests.cli_helpers import held_port, nertz, one_error_line
from tests.web_helpers import ROOT


def _nertz(*args: str) -> subprocess.CompletedProcess[str]:
    return nertz(*args, cwd=ROOT, timeout=120)


def test_a_bad_web_bind_is_one_line() -> None:
    for bad in ("nonsense", "127.0.0.1", "300.1.1.1:80", "127.0.0.1:70000"):
        done = _nertz("play", "--web", "--web-bind", bad, "--bots", "1")
        one_error_line(done, "--web-bind")


#: Every command with a page (cli/args.add_web_arguments), without --web.
WITHOUT_WEB = {
    "play": ["play", "--bots", "1"],
    "resume": ["resume", "x.log", "--bot", "greedy"],
    "watch": ["watch", "--spec", "x.spec", "--bind", "127.0.0.1:0"],
    "replay": ["replay", "x.log"],
}


@pytest.mark.parametrize("command", WITHOUT_WEB)
def test_the_page_s_options_without_the_page_are_refused_not_ignored(
    tmp_path: Path, command: str
) -> None:
    """--no-open and --web-bind without --web were ignored, the command run at the terminal
    (replay --text --web: the text, no page), the person's choice dropped silently until
    session 43. Refused before anything is read (x.log, x.spec: not there) or made."""
    argv = WITHOUT_WEB[command]
    cases = [
        (["--no-open"], "--no-open is for the page (--web)"),
        (["--web-bind", "127.0.0.1:0"], "--web-bind is for the page (--web)"),
        (["--no-open", "--web-bind", "127.0.0.1:0"], "--no-open and --web-bind are for"),
    ]
    if command == "replay":
        cases.append((["--text", "--web"], "--text prints the events and exits; --web serves"))
    for more, says in cases:
        done = nertz(*argv, *more, cwd=tmp_path, timeout=60, home=tmp_path / "home")
        line = one_error_line(done, says)
        assert done.returncode == 2 and line.startswith(f"nertz {command}: error: "), line
    assert [p.name for p in tmp_path.iterdir()] == []  # (no key, no log, no directory)


@pytest.mark.parametrize("where", ["in use", "not here"])
def test_a_page_address_it_cannot_serve_is_one_line_before_any_bot_or_file(
    tmp_path: Path, where: str
) -> None:
    """Said once the game's directory, spec and bots were made, status 1, until session 43;
    now tried first (p2p_nertz/web/server.py ``try_address``): status 2, nothing made."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        # (192.0.2.1: TEST-NET-1, documentation's, no machine's address)
        bind = f"127.0.0.1:{taken.getsockname()[1]}" if where == "in use" else "192.0.2.1:0"
        done = _nertz(
            *("play", "--web", "--no-open", "--web-bind", bind),
            *("--bots", "1", "--seed", "5", "--dir", str(tmp_path / "game")),
        )
        line = one_error_line(done, f"cannot serve the page on {bind}")
    assert done.returncode == 2 and line.startswith("nertz play: error: "), line
    assert not (tmp_path / "game").exists()  # (no spec, no bot started, no log begun)


def test_the_page_s_address_is_kept_beside_the_log_for_a_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.web_cmd import _kept, _remember, page_of

    log = tmp_path / "you.log"
    _remember(log, "http://127.0.0.1:4321/tok_en-1/")
    assert page_of(log) == tmp_path / "you.log.page"
    assert page_of(log).stat().st_mode & 0o777 == 0o600  # (as secret as the URL)
    assert _kept(log) == (4321, "tok_en-1")  # (the port not looked at: the server tries it)
    # (Session 30) One left readable by others is made the owner's alone before the token is
    # written; a link planted in its place is not followed, and the token is not kept.
    page_of(log).chmod(0o644)
    _remember(log, "http://127.0.0.1:1/tok_en-2/")
    assert page_of(log).stat().st_mode & 0o777 == 0o600
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("mine")
    page_of(log).unlink()
    page_of(log).symlink_to(elsewhere)
    _remember(log, "http://127.0.0.1:1/tok_en-3/")
    assert elsewhere.read_text() == "mine"
    assert "the page's address is not kept" in capsys.readouterr().err
    page_of(log).unlink()
    # Nothing kept, or not readable: a new address, silently.
    page_of(log).write_text("{")
    assert _kept(log) is None
    assert _kept(tmp_path / "other.log") is None


def test_a_kept_port_taken_before_the_page_binds_it_is_served_on_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The port a game's first run kept, free when the resume reads it and taken by another
    process before its page binds it: the page's server tries it once and falls back on a free
    port, in one step, and says so in one line (it was a look, then a bind: the port taken
    between them stopped the resume with "cannot serve the page")."""
    from cli.web_cmd import _kept, _remember, _taken
    from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

    log = tmp_path / "you.log"
    with held_port() as port:
        _remember(log, f"http://127.0.0.1:{port}/tok_en-1/")
        kept = _kept(log)
        assert kept == (port, "tok_en-1")
        with socket.socket() as other:  # (another process's server, on the port now)
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            other.bind(("127.0.0.1", port))
            other.listen()
            app = WebApp(Page(token=kept[1]), ViewFeed(), lambda action: None)

            async def serve() -> str:
                async with trio.open_nursery() as nursery:
                    url: str = await nursery.start(
                        functools.partial(serve_page, taken=_taken), app, "127.0.0.1", port
                    )
                    nursery.cancel_scope.cancel()
                return url

            url = trio.run(serve)
    served = urlsplit(url)
    assert served.port not in (None, 0, port) and served.path == "/tok_en-1/"
    err = capsys.readouterr().err
    assert err == f"the page's port {port} is taken now: it is served on another\n"
