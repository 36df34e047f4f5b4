"""``nertz play --web``'s first round waits for the person's page (``run_web_table``'s
``first_deal``): the person's node holds its ``ready`` of round 1 (``hold_ready=0``) until the
page's live connection is accepted (:attr:`WebApp.page_seen`), or until the bound passes; the
bot, which plays a round only once every player has its deal, waits with it.

Real parts: a person's node and a bot's on tcp://127.0.0.1 in one trio process, the real page
server, a real WebSocket client (trio-websocket); no browser. Synchronised on the game's own
state (polled), never on a sleep; bounded by ``trio.fail_after``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from trio_websocket import open_websocket_url

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.testing.games import bot_game
from p2p_nertz.web.table import run_web_table

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(150)]

GUARD = 120.0  # seconds: against a hang, not a timing (a loaded machine is slow to deal)
PERSON, BOT = 0, 1


async def _until(what: Callable[[], bool]) -> None:
    """Wait until ``what`` holds, looking again each time trio runs other tasks a while."""
    while not what():
        await trio.sleep(0.01)


def _nodes(tmp_path: Path, deal: Deal = Deal.COMMIT) -> tuple[PeerNode, PeerNode]:
    identities, spec = bot_game(b"test-web-first-deal", 2, 1, deal=deal)
    person = PeerNode(
        identities[PERSON], spec, tmp_path / "you.log", bind="tcp://127.0.0.1:0", hold_ready=0
    )
    bot = PeerNode(
        identities[BOT], spec, tmp_path / "bot.log", bind="tcp://127.0.0.1:0",
        strategy="greedy", speed=10,
    )  # fmt: skip
    person.bind(), bot.bind()
    return person, bot


def _start(
    nursery: trio.Nursery,
    person: PeerNode,
    bot: PeerNode,
    on_url: Callable[[str], None],
    first_deal: float,
) -> None:
    """The bot's node, and the person's played from the page (``run_web_table``)."""
    nursery.start_soon(bot.run, {person.identity.peer_id: person.endpoint})
    nursery.start_soon(
        lambda: run_web_table(
            person, {bot.identity.peer_id: bot.endpoint}, on_url=on_url, signals=False,
            first_deal=first_deal,
        )
    )  # fmt: skip


def _page(url: str) -> Any:
    """The page's live connection (a WebSocket client, as the page's script opens it)."""
    host = url.split("/")[2]
    return open_websocket_url(
        url.replace("http://", "ws://") + "ws", extra_headers=[("Origin", f"http://{host}")]
    )


def _ready(node: PeerNode, seat: int) -> bool:
    try:
        return seat in node.peer.tentative.round.ready
    except RuntimeError:  # (not started yet)
        return False


async def test_web_the_first_deal_waits_for_the_page(tmp_path: Path) -> None:
    person, bot = _nodes(tmp_path)
    urls: list[str] = []
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            _start(nursery, person, bot, urls.append, GUARD * 10)
            # The round is in play here (the bot's deal has come), and the person's waits:
            # no page yet. The bot does not play meanwhile.
            await _until(lambda: _ready(person, BOT))
            assert not _ready(person, PERSON)
            assert not person.peer.tentative.round.log  # (no move of anyone's)
            # The page connects: the person's deal is signed, and the page shows it.
            (url,) = urls
            async with _page(url) as ws:
                await _until(lambda: _ready(person, PERSON))
                view = json.loads(await ws.get_message())
                while view["status"] != "round 1 is dealt — go!":
                    view = json.loads(await ws.get_message())
                assert view["seat"] == PERSON and view["round"] == 1, view
                # Said once, and not as a wait for the others (it was the page's).
                assert not any("round 1" in m for m in view["messages"]), view["messages"]
                await _until(lambda: bool(person.peer.tentative.round.log))  # the bot plays
            nursery.cancel_scope.cancel()


async def test_web_the_first_deal_waits_no_longer_than_its_bound(tmp_path: Path) -> None:
    # No page ever connects (`--no-open`, the URL never opened): the bound passes and the
    # round is dealt all the same (30 s in `nertz play --web`; none here).
    person, bot = _nodes(tmp_path)
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            _start(nursery, person, bot, lambda url: None, 0.0)
            await _until(lambda: _ready(person, PERSON))
            await _until(lambda: bool(person.peer.tentative.round.log))  # the bot plays
            nursery.cancel_scope.cancel()


def _keyed(node: PeerNode, seat: int) -> bool:
    """Whether ``node``'s fold holds ``seat``'s key of round 1's deal (a shuffle game)."""
    try:
        deck = node.peer.tentative.round.deck
    except RuntimeError:  # (not started yet)
        return False
    return deck is not None and seat in {deck.members[i] for i in deck.keys}


async def test_web_a_shuffle_game_s_first_deal_waits_for_the_page_too(tmp_path: Path) -> None:
    # A shuffle game has no `ready`: the person's node holds its key, the deal's first event
    # (before: signed at once, and the bot played round 1 before the page was there).
    person, bot = _nodes(tmp_path, Deal.SHUFFLE)
    urls: list[str] = []
    assert not person.started.is_set()
    with trio.fail_after(GUARD):
        async with trio.open_nursery() as nursery:
            _start(nursery, person, bot, urls.append, GUARD * 10)
            await person.started.wait()
            assert person.peer.spec is person.spec  # (the peer is there once started is set)
            await _until(lambda: _keyed(person, BOT))
            assert not _keyed(person, PERSON)
            assert person.peer.tentative.phase is Phase.KEY
            (url,) = urls
            async with _page(url):
                await _until(lambda: _keyed(person, PERSON))
                await _until(lambda: bool(person.peer.tentative.round.log))  # the bot plays
            nursery.cancel_scope.cancel()
