"""The words a person sees at the table, where a newcomer met the protocol's or nothing
(session 27): the abandon key's refusals (players, not members), the lake's owner digits
(said in its heading, not only under ``?``), the browser's lake. The real terminal last."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from peer_helpers import PeerNetwork
from test_cli_play import HEIGHT, Tty, leave
from test_ui_render import make_table, row_starting, view_of

from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.local import AbandonAnswer, AbandonRefused
from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.ui import TableController, TableView, render
from p2p_nertz.ui.refusals import NO_ABANDON, abandon_words

NAMES = ("Ann", "Bob", "Cy", "Di")
#: The protocol's words, which a person at the table does not know.
CORE_WORDS = re.compile(r"\b(members?|events?|final|frontier|drops?|seat)\b")
STATIC = Path(__file__).parents[1] / "p2p_nertz" / "web" / "static"


def _name(seat: int) -> str:
    return "you" if seat == 0 else NAMES[seat]


def _answer(refusal: Refusal, **fields: object) -> AbandonAnswer:
    return AbandonAnswer(
        "an abandon needs exactly one other member left", refusal=refusal, **fields
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("refusal", list(Refusal))
def test_ui_words_every_abandon_refusal_is_said_without_the_protocols_words(
    refusal: Refusal,
) -> None:
    answer = _answer(refusal, partner=1, others=(1, 2), pending=(2,), wait=4.25)
    words = abandon_words(answer, _name)
    assert words and words != answer.why
    assert not CORE_WORDS.search(words), words
    assert len(f"cannot abandon: {words}") <= 80  # (the terminal's status row, whole)


def test_ui_words_the_refusals_name_the_players_and_count_the_others() -> None:
    two = abandon_words(_answer(Refusal.OTHERS, others=(1, 2)), _name)
    assert two == "2 others are still playing (only when one other is left)"
    three = abandon_words(_answer(Refusal.OTHERS, others=(1, 2, 3), pending=(2, 3)), _name)
    assert three == "3 others are still playing (wait: Cy and Di being voted out)"
    held = abandon_words(_answer(Refusal.HELD_BACK, others=(1,), pending=(2,)), _name)
    assert held == "Cy's vote out waits on Bob, who has gone: wait, or leave (q)"
    heard = abandon_words(_answer(Refusal.HEARD, partner=3, wait=4.25), _name)
    assert heard == "Di was heard lately; you can abandon in 5 s"
    # A core that gave no code (a test's fake): its words as they are; no answer: the rule.
    assert abandon_words(AbandonAnswer("no"), _name) == "no"
    assert not CORE_WORDS.search(NO_ABANDON)


def test_ui_words_the_abandon_key_among_three_says_how_many_others_play() -> None:
    """A real game of three (the newcomer's ``nertz play --bots 2``): the key and the core's
    refusal, caught by the front end, say the same player's words."""
    net = PeerNetwork(3, seed=4, rules=Rules(target=None, rounds=5), config=PeerConfig())
    net.run(lambda n: all(p.tentative.phase is Phase.PLAY for p in n.peers))
    peer = net.peers[0]
    shown: list[TableView] = []

    class Front:
        def show(self, view: TableView) -> None:
            shown.append(view)

    table = TableController(tuple(m.name for m in peer.spec.members), 0, Front())
    assert table.press("a", peer, net.now) == []
    said = "cannot abandon: 2 others are still playing (only when one other is left)"
    assert table.keys.status == said
    with pytest.raises(AbandonRefused) as refused:
        peer.abandon(net.now)
    assert "member" in str(refused.value)  # (the core keeps its words, for its log)
    table.abandon_refused(refused.value.answer)
    assert table.keys.status == said


@pytest.mark.parametrize(("width", "height"), [(80, 24), (132, 40)])
def test_ui_words_the_lake_heading_says_what_the_digits_after_a_card_are(
    width: int, height: int
) -> None:
    screen = render(view_of(make_table()), width, height)
    row = row_starting(screen, "─ lake ")
    assert row is not None
    heading = screen.line(row)
    assert "the digits after a card: its owners' seats, ace first · * in the air" in heading
    assert len(heading) <= width and heading.rstrip().endswith("─")
    # (The lake under it does show a top card and then its owners' seats: "4♠* 0102".)
    assert any(re.search(r"[♠♥♦♣]\*? \d+\b", screen.line(r)) for r in range(row + 1, height))


def test_ui_words_the_browser_lake_says_what_a_cards_border_and_number_are() -> None:
    page = (STATIC / "index.html").read_text()
    lake = re.search(r'<section id="lake"[^>]*><h2>(.*?)</h2>', page)
    assert lake is not None
    heading = re.sub(r"<[^>]+>", "", lake[1])
    assert "a card's border: the colour of the player who laid it" in heading
    assert "(dashed: in the air)" in heading
    assert "the small number at its corner: how many cards the pile holds" in heading
    script = (STATIC / "table.js").read_text()
    # (each border's colour is the player's, as the players' swatches are; the tooltip names)
    assert "c.style.borderColor = `var(--p${f.top_owner % 8})`" in script
    assert "laid by ${owner ? owner.name" in script


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_ui_words_at_the_terminal_the_lake_and_the_abandon_key_say_it_in_words(
    tmp_path: Path,
) -> None:
    tty = Tty(["play", "--bots", "2", "--speed", "1", "--seed", "5", "--dir", str(tmp_path / "g")])
    text = tty.wait("[n] Nerts")
    lake = next(line for line in text.splitlines() if line.startswith("─ lake "))
    assert "the digits after a card: its owners' seats, ace first" in lake
    tty.send("a")
    text = tty.wait("cannot abandon: ")
    status = next(line for line in text.splitlines() if "cannot abandon: " in line)
    assert (
        status.strip() == "cannot abandon: 2 others are still playing (only when one other is left)"
    )
    assert "member" not in tty.line(HEIGHT - 2)
    leave(tty)
