"""The browser table on cue: what a live game cannot be made to do when a test wants it.

A network of real peer cores (``peer_helpers.PeerNetwork``, the moment of a race found as in
``test_peer_in_the_air``), one seat's real :class:`TableController` shown by the real page
server in headless chromium; the page's drops come back to the test, which plays them on that
seat's peer and delivers the messages when it chooses. So a claim stays in the air until the
test lets the others hear of it, and a rival's earlier claim beats it.
"""

from __future__ import annotations

import queue
from typing import Any

import pytest

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move, Rules
from p2p_nertz.ui import PlayMove, TableController
from p2p_nertz.ui.tracker import WAITING_ON_YOU
from p2p_nertz.ui.view import is_stuck_words, page_status
from p2p_nertz.web.model import Drop, KeyPress
from p2p_nertz.web.picture import picture_of
from p2p_nertz.web.table import WebFront
from tests.peer_helpers import Paused, PeerNetwork
from tests.test_peer_in_the_air import Race, _network
from tests.web_helpers import ServedPage, browser_missing, open_browser, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


class _ToPage:
    """The feed a :class:`WebFront` publishes to, on the page server's thread."""

    def __init__(self, page: ServedPage) -> None:
        self.page = page

    def publish(self, text: str) -> None:
        self.page.publish(text)


class Seat:
    """One seat of ``net`` at the page: its controller, fed its peer's notices."""

    def __init__(self, net: PeerNetwork, seat: int, page: ServedPage) -> None:
        self.net = net
        self.seat = seat
        self.front = WebFront(_ToPage(page), final=lambda: net.peers[seat].final)  # type: ignore[arg-type]
        names = tuple(m.name for m in net.spec.members)
        self.table = TableController(names, seat, self.front, between_rounds=600.0)
        self.page = page
        self.seen = 0

    @property
    def peer(self) -> Peer:
        return self.net.peers[self.seat]

    def draw(self) -> None:
        """The notices since the last draw, then the view, to the page."""
        effects = self.net.effects[self.seat]
        for effect in effects[self.seen :]:
            self.table.notice(effect, self.peer.final, self.net.now)
        self.seen = len(effects)
        self.table.draw(self.peer, self.net.now)

    def take_action(self) -> None:
        """Carry out the next thing the page sends (as the browser runner does)."""
        try:
            action = self.page.actions.get(timeout=30)
        except queue.Empty:
            raise AssertionError("the page sent nothing") from None
        if isinstance(action, KeyPress):
            requests = self.table.press(action.key, self.peer, self.net.now)
        else:
            assert isinstance(action, Drop)
            requests = self.table.drop(action.source, action.targets, self.peer, self.net.now)
        for request in requests:
            if isinstance(request, PlayMove):
                try:
                    self.net.play(self.seat, request.move)
                except (IllegalMoveError, LocalProtocolError) as exc:
                    self.table.refused(str(exc))
        if isinstance(action, Drop):
            self.front.ack = action.id
        self.draw()


def _open(driver: Any, seat: Seat) -> None:
    seat.draw()
    driver.get(seat.page.url)
    wait_for(driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "the deal")


def _paused_in_play(page: ServedPage) -> tuple[PeerNetwork, Seat]:
    """Three players whose bots never move (seed 4, one round), in play, seat 0 on ``page``."""
    paused = {s: Paused() for s in range(3)}
    net = PeerNetwork(3, seed=4, rules=Rules(rounds=1, target=None), strategies=paused)
    net.run(lambda n: all(p.phase is Phase.PLAY for p in n.peers))
    return net, Seat(net, 0, page)


def _key(race: Race) -> str:
    return str(int(race.pile))


def test_web_a_claim_is_marked_in_the_air_and_a_lost_race_returns_the_card(
    page: ServedPage,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    net, race = _network()
    seat = Seat(net, race.claimer, page)
    pile = seat.peer.tentative.table.tableaux[race.claimer].work[race.pile - 1]  # type: ignore[union-attr]
    card = str(pile[-1])
    rival = net.spec.members[race.rival].name
    # The rival claims the same place first (an earlier clock); nobody has heard of it yet.
    net.play(race.rival, Move.to_lake(race.rival_source, race.foundation))
    with open_browser() as driver:
        _open(driver, seat)
        source = driver.find_element(
            "css selector", f'#mine .pile[data-pile="{_key(race)}"] [data-code="{card}"]'
        )
        lake = driver.find_element("css selector", "#lake")
        ActionChains(driver, duration=50).click_and_hold(source).move_by_offset(
            12, 12
        ).move_to_element(lake).release().perform()
        seat.take_action()  # the drop: our claim, in the air (nothing delivered yet)
        mine = f'#foundations .card[data-code="{card}"][data-owner="{race.claimer}"]'
        wait_for(driver, lambda d: d.find_elements("css selector", mine + ".air"), "in the air")
        assert not driver.find_elements(
            "css selector", f'#mine .pile[data-pile="{_key(race)}"] [data-code="{card}"]'
        )
        # Now the claims are delivered: the rival's came first, ours lost.
        net.run(lambda n: not seat.peer.player.pending_claims())
        seat.draw()
        wait_for(
            driver,
            lambda d: d.find_elements(
                "css selector", f'#mine .pile[data-pile="{_key(race)}"] [data-code="{card}"]'
            ),
            "the card back in its pile",
        )
        assert not driver.find_elements("css selector", mine)
        toast = driver.find_element("css selector", "#toast")
        assert f"lost to {rival}" in toast.text, toast.text
        messages = driver.find_element("css selector", "#messages").text
        assert f"lost to {rival} — back to the work pile {int(race.pile)}" in messages, messages


def test_web_the_round_board_shows_each_player_s_score_and_its_countdown(
    page: ServedPage,
) -> None:
    # Four players (the README's game): their board scrolled at 1280×720, its picture below.
    net = PeerNetwork(4, seed=5, rules=Rules(rounds=2, target=None))
    net.run(lambda n: n.peers[0].phase is Phase.PLAY)
    seat = Seat(net, 0, page)
    with open_browser(1280, 720) as driver:
        _open(driver, seat)
        net.run(lambda n: len(n.peers[0].final.game.history) >= 1, within=600.0)
        seat.draw()
        seat.table.tick(net.now)  # the board is up: its countdown starts
        seat.draw()
        board = wait_for(
            driver, lambda d: (b := d.find_element("css selector", "#board")).is_displayed() and b,
            "the board",
        )  # fmt: skip
        shown = seat.table.tracker.board
        assert shown is not None and shown.round == 1
        assert board.find_element("css selector", "h2").text.startswith("Round 1 over")
        rows = {
            int(r.get_attribute("data-seat")): r.text
            for r in board.find_elements("css selector", "tr[data-seat]")
        }
        assert sorted(rows) == [0, 1, 2, 3]
        # Whole on a laptop's screen: nothing to scroll, the picture's legend in sight.
        fits = driver.execute_script(
            "const b = arguments[0], r = b.getBoundingClientRect();"
            "const l = b.querySelector('.round-picture figcaption').getBoundingClientRect();"
            "return [b.scrollHeight, b.clientHeight, r.bottom, l.bottom, window.innerHeight];",
            board,
        )
        assert fits[0] <= fits[1] and max(fits[2], fits[3]) <= fits[4], fits
        headings = [h.text for h in board.find_elements("css selector", "th")]
        assert headings[:3] == ["player", "in the lake (+1 each)", "left in Nerts (−2 each)"]
        assert headings[-2:] == ["this round", "game total"] and "bonus" not in headings
        for player in shown.score.players:
            words = rows[player.seat]  # the +1s of the lake, the −2s of the Nerts cards left
            assert f"+{player.lake}" in words, words
            penalty = player.nerts_card_penalty * player.nerts_left  # (0, not "−0": session 35)
            assert f"{'−' if penalty else ' '}{penalty} ({player.nerts_left})" in words, words
            assert words.endswith(f" {shown.totals[player.seat]}"), words
        assert "next round in 600 s" in board.text, board.text
        # The round's picture: a line per player, the races as the signed events tell them.
        picture = picture_of(seat.peer.final, 1)
        assert picture is not None
        lines = board.find_elements("css selector", ".round-picture path.line")
        assert sorted(int(p.get_attribute("data-seat")) for p in lines) == [0, 1, 2, 3]
        for item in board.find_elements("css selector", ".round-picture .legend"):
            s = int(item.get_attribute("data-seat"))
            won, lost = len(picture.won[s]), len(picture.lost[s])
            assert f"races won {won}, lost {lost}" in item.text, item.text
        # Its button is Enter: the board closes and the table is back.
        board.find_element("css selector", "button").click()
        seat.take_action()
        wait_for(
            driver, lambda d: not d.find_element("css selector", "#board").is_displayed(), "closed"
        )
        assert seat.table.tracker.board is None


def test_web_buttons_say_stuck_and_call_nerts_and_the_page_greys_when_its_peer_stops(
    page: ServedPage,
) -> None:
    # (Only the keys p and x did this before: a phone could not say stuck nor call Nerts.)
    net, seat = _paused_in_play(page)
    with open_browser(390, 844) as driver:
        _open(driver, seat)
        shown = {b.text: b for b in driver.find_elements("css selector", "#actions button")}
        assert [t for t, b in shown.items() if b.is_displayed()] == [
            "stuck",
            "Nerts!",
            "how to play",
        ]
        shown["stuck"].click()
        seat.take_action()
        assert seat.peer.tentative.table.stuck[0]  # type: ignore[union-attr]
        status = driver.find_element("css selector", "#status")
        said = seat.table.view(seat.peer, net.now).status  # (with a card move open, it is named)
        assert is_stuck_words(said), said
        wait_for(driver, lambda d: status.text == said, "stuck, said on the page")
        shown["Nerts!"].click()
        seat.take_action()
        asked = seat.table.view(seat.peer, net.now).status
        assert "x again to call anyway" in asked  # (cards are left: the controller asks first)
        # (The page's words name its button: ui/view.page_status.)
        wait_for(driver, lambda d: status.text == page_status(asked), "the controller's question")
        # The peer stops (no last word: it may be back): the page says so and tries again,
        # and nothing on it can be picked up meanwhile.
        page.close()
        wait_for(driver, lambda d: "reconnecting" in d.find_element("id", "link").text, "down")
        lost = "the connection to the nertz program was lost: reconnecting…"
        assert status.text == lost, status.text
        assert not shown["stuck"].is_displayed()
        nerts = driver.find_element("css selector", "#mine .nerts .card")
        assert (
            driver.execute_script("return getComputedStyle(arguments[0]).pointerEvents", nerts)
            == "none"
        )


def test_web_the_page_says_when_everyone_else_is_stuck_and_waits_for_us(
    page: ServedPage,
) -> None:
    # A newcomer who never passed sat under "round 1 is dealt — go!" while the bot waited.
    net, seat = _paused_in_play(page)
    with open_browser(390, 844) as driver:
        _open(driver, seat)
        status = driver.find_element("css selector", "#status")
        for other in (1, 2):
            net.play(other, Move.pass_())
        net.run(lambda n: all(n.peers[0].tentative.table.stuck[1:]))  # type: ignore[union-attr]
        seat.draw()
        wait_for(driver, lambda d: status.text == WAITING_ON_YOU, "the round waits for us")
        heads = [h.text for h in driver.find_elements("css selector", "#others .player h3")]
        assert len(heads) == 2 and all(h.count("stuck") == 1 for h in heads), heads


def test_web_a_page_refused_for_too_many_open_says_so(page: ServedPage) -> None:
    import socket
    from urllib.parse import urlsplit

    from p2p_nertz.web.server import MAX_CONNECTIONS

    page.publish('{"type": "view"}')
    host, path = urlsplit(page.url).netloc, urlsplit(page.url).path
    address, port = host.split(":")
    handshake = (
        f"GET {path}ws HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        f"Origin: http://{host}\r\n\r\n"
    ).encode()
    held = [socket.create_connection((address, int(port))) for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in held:  # (the other tabs)
            sock.sendall(handshake)
            assert sock.recv(12) == b"HTTP/1.1 101"
        with open_browser() as driver:
            driver.get(page.url)
            wait_for(
                driver,
                lambda d: "not connected" in (e := d.find_element("id", "link")).text and e,
                "the refusal explained",
            )
            status = driver.find_element("id", "status").text
            assert "too many pages open (close its other tabs)" in status, status
    finally:
        for sock in held:
            sock.close()


def test_web_the_page_names_players_and_their_moves_in_words(page: ServedPage) -> None:
    # (Once "2 bot1": a seat number glued to a name; and the others' last moves in notation,
    # "W>3", "S".)
    net = PeerNetwork(3, seed=5, rules=Rules(rounds=1, target=None))
    net.run(lambda n: n.peers[0].phase is Phase.PLAY)
    names = [m.name for m in net.spec.members]
    seat = Seat(net, 0, page)
    with open_browser() as driver:
        _open(driver, seat)
        net.run(lambda n: any(seat.table.view(seat.peer, n.now).last[1:]), within=600.0)
        seat.draw()
        last = seat.table.view(seat.peer, net.now).last
        heads = wait_for(
            driver,
            lambda d: (
                (h := [e.text for e in d.find_elements("css selector", "#others .player h3")])
                and any(last[s] in h[s - 1] for s in (1, 2) if last[s])
                and h
            ),
            "the others' last moves",
        )
        for s in (1, 2):
            assert heads[s - 1].startswith(f"{names[s]} (seat {s}) · "), heads
            if last[s]:
                assert heads[s - 1].endswith(f" · {last[s]}"), heads
                assert ">" not in last[s] and last[s] not in ("S", "P", "X", "R"), last
        net.run(lambda n: n.peers[0].final.phase is Phase.OVER, within=600.0)
        seat.draw()
        result = wait_for(
            driver,
            lambda d: next(iter(d.find_elements("css selector", "#board .result")), None),
            "the game's result",
        )
        game = seat.peer.final.game.result
        assert game is not None
        winners = ", ".join(f"{names[w]} (seat {w})" for w in game.winners)
        # How it was decided, in words (once "(rounds)", which a newcomer could not read).
        expected = f"Game over — winner: {winners} with {max(game.totals)} (after 1 round)"
        assert result.text.startswith(expected), result.text
