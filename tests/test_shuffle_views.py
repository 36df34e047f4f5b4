"""A shuffle game seen from outside (issue 19): ``nertz replay`` and ``replay --web`` step through
its logs, and ``nertz watch`` (the spectator, its terminal screen and its browser table) follows
it live; every card the table has not opened is drawn face down (docs/shuffle.md §10.2: a
*sealed* card, ``??``), the deal's face-up places included until the members' shares open them,
and every card opened is the one the players' folds opened.

The game is a simulated one of two bots (``audit_helpers.played``), its logs written as files,
or what its members push a watcher; the browser test runs the real ``nertz replay --web`` in
Debian's headless chromium, skipped where it is missing, as the other browser tests are.
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path
from typing import Any

import pytest

from p2p_nertz.audit import LogSource
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.rules import Card, Rules, Tableau
from p2p_nertz.rules.cards import sealed_position
from p2p_nertz.sim import SimConfig, Simulation
from p2p_nertz.testing.said import first_line
from p2p_nertz.ui import Tracker, render
from p2p_nertz.ui.view import card_text
from p2p_nertz.web.model import card_json, view_json
from p2p_nertz.web.replay import ReplayStepper
from tests.audit_helpers import Game, played
from tests.cli_helpers import cli_popen, foreground
from tests.test_spectator import watched
from tests.test_web_replay import _interrupt
from tests.web_helpers import ROOT, browser_missing, open_browser, wait_for


def _game() -> Game:
    return played(players=2, seed=3, rounds=1, deal=Deal.SHUFFLE)


def _replay(game: Game) -> Replay:
    files = game.files()
    loaded = load([LogSource.from_bytes(f"p{i}.log", b) for i, b in enumerate(files)])
    assert isinstance(loaded, Replay)
    return loaded


def _shown(tableau: Tableau) -> list[Card]:
    """The cards a tableau shows face up: its Nerts top, every work pile's cards, the waste's
    top three."""
    nerts = tableau.nerts[-1:]
    return [*nerts, *(c for pile in tableau.work for c in pile), *tableau.waste[-3:]]


def _drawn(tableau: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The same places as the page draws them (``None``: face down)."""
    nerts = [tableau["nerts"]["top"]] if tableau["nerts"]["count"] else []
    return [*nerts, *(c for pile in tableau["work"] for c in pile), *tableau["waste"]["top"]]


def _sealed_steps(replay: Replay) -> list[int]:
    """The steps after which some tableau shows a sealed card face up."""
    out = []
    for at in range(len(replay) + 1):
        table = replay.state_at(at).table
        if table is not None and any(
            sealed_position(c) is not None for t in table.tableaux for c in _shown(t)
        ):
            out.append(at)
    return out


def test_replay_of_a_shuffle_game_draws_each_card_face_down_until_the_table_opens_it() -> None:
    replay = _replay(_game())
    stepper = ReplayStepper(replay)
    sealed_seen = opened_seen = 0
    for at in range(len(replay) + 1):
        assert stepper.at == at
        view = stepper.view()
        table = replay.state_at(at).table
        if table is not None:
            for seat, player in enumerate(view["players"]):
                cards = _shown(table.tableaux[seat])
                drawn = _drawn(player["tableau"])
                assert drawn == [card_json(c) for c in cards], (at, seat)
                for card, face in zip(cards, drawn, strict=True):
                    if sealed_position(card) is not None:
                        assert face is None  # sealed: face down, whatever it will open to
                        sealed_seen += 1
                    else:
                        assert face is not None and face["code"] == str(card)
                        opened_seen += 1
        stepper.key("n")
    # The deal's face-up cards came sealed, and were opened by the members' shares.
    first = _sealed_steps(replay)[0]
    table = replay.state_at(first).table
    assert table is not None
    for tableau in table.tableaux:
        assert all(sealed_position(c) is not None for c in _shown(tableau))
    assert sealed_seen and opened_seen
    assert stepper.view()["phase"] == "over"


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_web_replay_of_a_shuffle_game_shows_sealed_cards_face_down(tmp_path: Path) -> None:
    game = _game()
    replay = _replay(game)
    first = _sealed_steps(replay)[0]  # the deal over, its face-up cards still sealed
    table = replay.state_at(first).table
    assert table is not None
    sealed = sum(
        sealed_position(c) is not None for t in table.tableaux for pile in t.work for c in pile
    )
    assert sealed
    logs = []
    for seat, data in enumerate(game.files()):
        logs.append(tmp_path / f"p{seat}.log")
        logs[-1].write_bytes(data)
    proc = cli_popen(
        foreground("replay", "--web", "--no-open", *map(str, logs)),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = first_line(proc, "the replay's page")
        assert url.startswith("http://127.0.0.1:"), url
        with open_browser() as driver:
            driver.get(url)

            def at(d: object) -> str:
                return str(driver.find_element("css selector", "#replay-at").text)

            def backs(d: Any) -> int:
                return len(d.find_elements("css selector", "#others .pile.work .card.back"))

            wait_for(driver, lambda d: at(d).startswith("step 0 of "), "the replay's start")
            button = {
                b.get_attribute("data-key"): b
                for b in driver.find_elements("css selector", "#replay button")
            }
            for _ in range(first):
                button["n"].click()
            wait_for(driver, lambda d: at(d).startswith(f"step {first} of"), "the deal's end")
            wait_for(driver, lambda d: backs(d) == sealed, f"{sealed} sealed cards face down")
            button["e"].click()
            wait_for(driver, lambda d: at(d).startswith(f"step {len(replay)} of"), "the end")
            assert "audit: valid" in at(driver)
            wait_for(driver, lambda d: backs(d) == 0, "every card face up at the end")
            faces = driver.find_elements("css selector", "#others .pile.work .card[data-code]")
            assert faces, "the work piles' cards"
            driver.find_element("css selector", "#quit").click()  # stop
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finally:
        _interrupt(proc)


def _row(tableau: Tableau) -> str:
    """A tableau's second row on the spectator's screen (``render``'s ``all_tableaux``): the
    Nerts top, the stock's size, each work pile in short."""
    texts = [card_text(c) for c in tableau.nerts[-1:]] or ["-"]
    row = f"   N {texts[0]} S {len(tableau.stock)} "
    for k, pile in enumerate(tableau.work, 1):
        cards = [card_text(c) for c in pile]
        run = " ".join(cards) if len(cards) <= 2 else f"{cards[0]}…{cards[-1]}"
        row += f" {k}:{run or '-'}"
    return row


def test_a_watcher_of_a_shuffle_game_sees_sealed_cards_face_down_and_opened_ones_right() -> None:
    """``nertz watch``'s spectator fed what the members push it (events, beats and acks): after
    every message, its screen and its browser table's view draw each tableau's face-up places
    as its fold holds them, a sealed card as ``??`` (face down in the browser); it ends on the
    players' final fold, each position opened to the card the players opened."""
    config = SimConfig(players=2, seed=3, deal=Deal.SHUFFLE, rules=Rules(target=None, rounds=1))
    result = Simulation(dataclasses.replace(config, record_effects=True)).run()
    spectator = Spectator(result.spec)
    names = tuple(m.name for m in result.spec.members)
    tracker = Tracker(names)
    sealed_seen = opened_seen = 0
    for wire in watched(result):
        tracker.take(spectator.feed(wire), spectator.final)
        table = spectator.tentative.table
        if table is None or tracker.board is not None:
            continue
        view = tracker.view(spectator)
        lines = render(view).text().splitlines()
        drawn = view_json(view)["players"]
        for seat, tableau in enumerate(table.tableaux):
            at = next(i for i, ln in enumerate(lines) if ln.startswith(f"{seat} {names[seat]}"))
            assert lines[at + 1].rstrip() == _row(tableau).rstrip()
            if tableau.nerts and sealed_position(tableau.nerts[-1]) is not None:
                assert lines[at + 1].startswith("   N ?? ")  # (face down, no position shown)
            cards = _shown(tableau)
            faces = _drawn(drawn[seat]["tableau"])
            assert faces == [card_json(c) for c in cards]
            for card, face in zip(cards, faces, strict=True):
                if sealed_position(card) is not None:
                    assert face is None
                    sealed_seen += 1
                else:
                    opened_seen += 1
    assert sealed_seen and opened_seen
    ours = spectator.final
    for peer in result.peers:
        assert peer is not None and peer.final.digest() == ours.digest()
        theirs = peer.final.past_rounds[-1] if peer.final.past_rounds else peer.final.round
        mine = ours.past_rounds[-1] if ours.past_rounds else ours.round
        assert theirs.deck is not None and mine.deck is not None
        assert mine.deck.opened == theirs.deck.opened and mine.deck.opened
