"""The one rule for a player's name (p2p_nertz/protocol/names.py) and the front doors that use
it: the game spec, a lobby message, a beacon (sent and received), and ``nertz``'s ``--name``
(a real process: one line on stderr saying what a name may be, nothing made). The lobby host
refusing a stranger's hello with such a name is in tests/test_red_lobby.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import nertz, one_error_line

from p2p_nertz.errors import InvalidRulesError
from p2p_nertz.lobby.beacon import Beacon, BeaconError
from p2p_nertz.lobby.messages import Hello, decode, encode
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.names import MAX_NAME, NAME_RULE, name_fault, skeleton
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.ui.view import distinct_names

ANN, BOB = (Identity.generate(derive_seed(b"test-names", n)) for n in range(2))

GOOD = [
    "Ann",
    "you",
    "bot1",
    "Ann Lee",  # an inner space
    "Zoë",
    "李雷",
    "🙂",
    "n" * MAX_NAME,
    "x",
    "Nguye\u0302\u0303n",  # Vietnamese in decomposed form: two marks on one letter
    "\u0e2a\u0e38\u0e19\u0e35\u0e22\u0e4c",  # Thai, with vowel and tone marks
    "\u0930\u093e\u092e",  # Hindi, a spacing vowel sign
    "\u05e9\u05c1\u05bc\u05b8\u05dc\u05d5\u05b9\u05dd",  # Hebrew: three on the shin
    "\u2764\ufe0f",  # an emoji with its presentation selector
    "\u05e9\u05e8\u05d4",  # Hebrew, right to left: the page and the table isolate it
    "\u0633\u0627\u0631\u0629 2",  # Arabic, then a digit
    "\u0410nn",  # a Cyrillic А: a good name, told apart on the table (distinct_names)
]
BAD = {
    "": "empty",
    " ": "a space at either end",
    "   ": "a space at either end",
    "  Ann  ": "a space at either end",
    " Ann": "a space at either end",
    "Ann ": "a space at either end",
    "n" * (MAX_NAME + 1): f"longer than {MAX_NAME} characters",
    "\u202eAnn": "a character that is not printable",  # right-to-left override
    "Ann\u2066": "a character that is not printable",  # left-to-right isolate
    # (Session 31) Every bidirectional control: the marks, the embeddings, the isolates.
    **{
        f"A{chr(c)}nn": "a character that is not printable"
        for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    },
    "A\u200bnn": "a character that is not printable",  # zero-width space
    "\x1b[2J": "a character that is not printable",
    "Ann\n": "a character that is not printable",
    "\tAnn": "a character that is not printable",
    "\u00a0Ann": "a character that is not printable",  # a no-break space is not ' '
    "Ann\u3000": "a character that is not printable",  # nor an ideographic one
    # (Session 30: printable, yet blank, so "Ann\u3164" read as a second Ann.)
    "Ann\u3164": "a character that shows nothing",  # a Hangul filler
    "\u3164": "a character that shows nothing",
    "\u2800": "a character that shows nothing",  # the blank Braille pattern
    "A\u034fnn": "a character that shows nothing",  # the combining grapheme joiner
    "\u0301": "a combining mark with no character under it",
    "\u0336Ann": "a combining mark with no character under it",
    "Z" + "\u0300\u0301\u0302\u0303" + "o": "more than 3 combining marks on one character",
    "a" + "\u0301" * (MAX_NAME - 1): "more than 3 combining marks on one character",
}


@pytest.mark.parametrize("name", GOOD)
def test_a_good_name_has_no_fault_and_every_front_door_takes_it(name: str) -> None:
    assert name_fault(name) is None
    spec = GameSpec.create([(ANN.peer_id, name), (BOB.peer_id, "Bob")], Rules(), bytes(16))
    assert name in [m.name for m in spec.members]
    hello = decode(encode(ANN, bytes(32), Hello(name, "tcp://127.0.0.1:7790", False)))
    assert hello.body == Hello(name, "tcp://127.0.0.1:7790", False)
    beacon = Beacon(lobby_id=bytes(32), host=ANN.peer_id, port=5670, name=name, taken=1, capacity=2)
    assert Beacon.decode(beacon.encode(ANN)).name == name


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_name_is_refused_by_every_front_door_saying_the_rule(name: str) -> None:
    assert name_fault(name) == BAD[name]
    with pytest.raises(InvalidRulesError, match=NAME_RULE):
        GameSpec.create([(ANN.peer_id, name), (BOB.peer_id, "Bob")], Rules(), bytes(16))
    # What a stranger signs and sends: refused when the host decodes it.
    wire = encode(ANN, bytes(32), Hello(name, "tcp://127.0.0.1:7790", False))
    with pytest.raises(ValueError, match=NAME_RULE):
        decode(wire)
    with pytest.raises(ValueError, match=NAME_RULE):
        Beacon(lobby_id=bytes(32), host=ANN.peer_id, port=5670, name=name, taken=1, capacity=2)


@pytest.mark.parametrize("name", ["  Ann  ", " ", "\u202eAnn"])
def test_a_received_beacon_with_a_bad_name_is_refused(name: str) -> None:
    beacon = Beacon(
        lobby_id=bytes(32), host=ANN.peer_id, port=5670, name="Ann", taken=1, capacity=2
    )
    object.__setattr__(beacon, "name", name)  # (as a host of another make would sign it)
    with pytest.raises(BeaconError, match=NAME_RULE):
        Beacon.decode(beacon.encode(ANN))


def test_name_fault_says_what_a_value_that_is_no_text_is() -> None:
    assert name_fault(None) == "not text"
    assert name_fault(b"Ann") == "not text"


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["play", "--bots", "1", "--seed", "3"], "  Ann  "),  # (was stripped and taken)
        (["play", "--bots", "1", "--seed", "3"], "\u202eAnn"),
        (["host", "--bot", "greedy"], " "),
    ],
)
def test_nertz_refuses_a_bad_name_in_one_line_and_makes_nothing(
    tmp_path: Path, argv: list[str], name: str
) -> None:
    done = nertz(*argv, "--name", name, cwd=tmp_path, home=tmp_path / "home")
    one_error_line(done, "--name", NAME_RULE, repr(name))
    assert done.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_nertz_play_takes_a_name_of_32_past_the_old_limit_of_16(tmp_path: Path) -> None:
    # (with no terminal the quick game stops at its next check, which is not the name's)
    done = nertz("play", "--bots", "1", "--seed", "3", "--name", "n" * MAX_NAME, cwd=tmp_path)
    one_error_line(done, "needs a terminal")


#: Names a person reads as ``Ann``: Cyrillic А, Greek Α, full-width, capitals, a Cyrillic о.
ANN_ALIKES = ["\u0410nn", "\u0391nn", "\uff21\uff4e\uff4e", "ANN", "\u0430nn"]


def test_names_that_look_alike_are_numbered_on_the_table_like_repeats() -> None:
    """(Session 31) "\u0410nn" beside "Ann" read as one player: each look-alike seat is now
    numbered as a repeat is, whatever script made it, and "you" too (the local player's word)."""
    shown = distinct_names(["Ann", *ANN_ALIKES])
    assert shown[0] == "Ann"
    assert [n.rsplit(" ", 1)[-1] for n in shown[1:]] == [f"({k})" for k in range(2, 7)]
    assert len({skeleton(n) for n in shown}) == len(shown)
    assert distinct_names(["Ann", "y\u043eu"], local=0) == ("Ann", "y\u043eu (2)")
    # Names that only share letters, or differ by a mark, are left as they are.
    assert distinct_names(["Ann", "Anna", "Zo\u00eb", "Zoe", "\u05e9\u05e8\u05d4"]) == (
        "Ann",
        "Anna",
        "Zo\u00eb",
        "Zoe",
        "\u05e9\u05e8\u05d4",
    )


def test_a_right_to_left_name_is_drawn_in_its_own_cells_on_the_terminal() -> None:
    """(Session 31) The terminal draws a Hebrew name as it is, in the columns a Latin name of
    its length takes; what follows it on every row (the cell's counts, an announcement's
    words, the status line) stays in the same columns. No bidirectional control is drawn: no
    name holds one (the rule above), and the table adds none (a terminal that knows none would
    draw it as a box, or shift the row)."""
    from helpers_rules import IDLE, table_from

    from p2p_nertz.ui import TableView
    from p2p_nertz.ui.render import render

    def screen(name: str) -> str:
        view = TableView(
            table=table_from(IDLE, IDLE, IDLE),
            seat=0,
            names=("Ann", name, "Bob"),
            rules=Rules(),
            messages=(f"8\u2663 lost to {name} \u2014 back to waste", f"{name} is back"),
            status=f"{name}'s 5\u2665 tied with another card",
        )
        return render(view, 100, 30).text()

    hebrew, latin = "\u05e9\u05e8\u05d4", "Sar"
    drawn = screen(hebrew)
    assert drawn.count(hebrew) >= 4  # (the cell, two announcements, the status line)
    assert drawn.replace(hebrew, latin) == screen(latin)
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in drawn)
