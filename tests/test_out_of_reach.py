"""A table split with no majority on our side says so, once, and says when it is over
(protocol/reach.py): a 2|2 split of four stood still with only "P3 is silent" for each."""

from __future__ import annotations

import argparse
import json
from itertools import product

import pytest
from helpers_rules import IDLE, table_from
from peer_helpers import PeerNetwork

from cli.lobby_cmd import _notice_printer, _Out
from cli.node_cmd import _node_printer
from p2p_nertz.protocol.peer import OutOfReach, PeerConfig, Suspected
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, run
from p2p_nertz.sim.network import Crash, Freeze
from p2p_nertz.ui import TableView, Tracker, render
from p2p_nertz.ui.view import reach_words
from p2p_nertz.web.model import view_json

CONFIG = PeerConfig(suspect_after=2.0, drop_after=6.0)


def _split(net: PeerNetwork, *sides: set[int]) -> None:
    """No member of one side hears any member of another."""
    net.blocked = frozenset(
        frozenset((a, b))
        for i, side in enumerate(sides)
        for other in sides[i + 1 :]
        for a, b in product(side, other)
    )


def _notices(net: PeerNetwork, seat: int) -> list[OutOfReach]:
    return [e for e in net.effects[seat] if isinstance(e, OutOfReach)]


def _playing(n: int) -> PeerNetwork:
    net = PeerNetwork(n, seed=26, rules=Rules(target=None, rounds=3), config=CONFIG)
    net.run(lambda net: all(p.final.phase is Phase.PLAY for p in net.peers))
    return net


def test_a_two_two_split_says_once_who_is_out_of_reach_and_when_they_are_back() -> None:
    net = _playing(4)
    _split(net, {0, 1}, {2, 3})
    net.run(lambda net: all(_notices(net, s) for s in range(4)))
    others = {0: (2, 3), 1: (2, 3), 2: (0, 1), 3: (0, 1)}
    for seat in range(4):
        assert _notices(net, seat) == [OutOfReach(others[seat], 4)]
    # Past drop_after each half votes the other out and nothing counts: still one notice.
    until = net.now + 3 * CONFIG.drop_after
    net.run(lambda net: net.now > until)
    assert all(not p.final.dropped for p in net.peers)
    assert all(len(_notices(net, s)) == 1 for s in range(4))
    net.blocked = frozenset()
    net.run(lambda net: all(len(_notices(net, s)) == 2 for s in range(4)))
    for seat in range(4):
        # The first of the other half heard again makes a majority: that is the end of it.
        over = _notices(net, seat)[1]
        assert over.over and over.members == 4
        assert over.seats and set(over.seats) <= set(others[seat])


def test_one_cut_off_from_three_says_so_and_the_three_do_not() -> None:
    net = _playing(4)
    _split(net, {0}, {1, 2, 3})
    net.run(lambda net: all(0 in p.final.dropped for p in net.peers[1:]))
    # Two suspected is no majority already; the third makes it another notice.
    assert _notices(net, 0)[-1] == OutOfReach((1, 2, 3), 4)
    assert len(_notices(net, 0)) <= 2 and not any(n.over for n in _notices(net, 0))
    assert not any(_notices(net, s) for s in (1, 2, 3))  # (a majority: they dropped seat 0)


def test_a_two_player_table_offers_the_abandon_instead() -> None:
    """With two, nobody can ever be dropped: the abandon is on offer, as before (§9.3)."""
    net = _playing(2)
    net.silence(1)
    until = net.now + CONFIG.drop_after + 1.0
    net.run(lambda net: net.now > until)
    assert not _notices(net, 0)
    assert net.peers[0].abandon_answer(net.now).why is None


def test_the_terminal_and_the_page_show_it_and_its_end() -> None:
    tracker = Tracker(("you", "P2", "P3", "P4"), seat=0)
    tracker.take([Suspected(2, True), Suspected(3, True), OutOfReach((2, 3), 4)])
    out = reach_words(OutOfReach((2, 3), 4), tracker.name)
    assert out[0] == "half the table is out of reach: P3, P4"
    assert "nobody can be dropped without a majority" in out[1]
    assert all(len("» " + line) <= 80 for line in out)  # a row of the terminal each
    table = table_from(IDLE, IDLE, IDLE, IDLE)
    names, messages = ("you", "P2", "P3", "P4"), tuple(tracker.messages)
    view = TableView(table=table, seat=0, names=names, rules=Rules(), messages=messages)
    text = render(view, 80, 24).text()
    assert all(line in text for line in out), text
    assert all(line in view_json(view)["messages"] for line in out)
    tracker.take([Suspected(2, False), OutOfReach((2,), 4, over=True)])
    assert tracker.messages[-1] == "P3 is back: the table has a majority again"


@pytest.mark.parametrize("json_lines", [True, False])
def test_the_bot_and_the_node_print_it_and_its_end(
    capsys: pytest.CaptureFixture[str], json_lines: bool
) -> None:
    """``nertz bot``/``host``/``join``/``resume`` and ``nertz node`` printed nothing for a
    2|2 split but "P3 is silent" (the bot) or nothing at all (``node --json --progress``)."""
    names = ["P1", "P2", "P3", "P4"]
    bot = _notice_printer(_Out(json_lines), names)
    node = _node_printer(argparse.Namespace(json=json_lines, progress=True), names)
    for on_notice in (bot, node):
        on_notice(OutOfReach((2, 3), 4))
        on_notice(OutOfReach((2, 3), 4, over=True))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[:2] == lines[2:]  # (the same from either)
    out, back = lines[:2]
    if json_lines:
        assert json.loads(out)["event"] == "out_of_reach"
        assert json.loads(out)["seats"] == [2, 3] and json.loads(out)["names"] == ["P3", "P4"]
        out = json.loads(out)["words"]
        assert json.loads(back)["event"] == "in_reach"
        back = json.loads(back)["words"]
    assert out.startswith("half the table is out of reach: P3, P4 — nobody can be dropped")
    assert back == "P3 and P4 are back: the table has a majority again"


def _woken(*dead: int) -> list[tuple[float, OutOfReach]]:
    """Four players, seed 1, quick timers: seat 0 asleep from 3 s for 2 s (past
    ``suspect_after``, short of the drop); ``dead`` die as it falls asleep, for good. Seat 0's
    notices, with their times, and when it woke."""
    crashes = tuple(Crash(seat, 3.0, restart_after=None) for seat in dead)
    result = run(
        SimConfig(
            players=4,
            seed=1,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            faults=Faults(freezes=(Freeze(0, 3.0, 2.0),), crashes=crashes),
            record_effects=True,
            max_time=60.0,
        )
    )
    return [(at, e) for at, seat, e in result.effects if seat == 0 and isinstance(e, OutOfReach)]


def test_a_member_woken_from_a_sleep_says_nothing_out_of_reach_while_it_reads_the_others() -> None:
    """A waker suspects every member at its first input and clears each as it reads it: it said
    "most of the table is out of reach" and "back" at one instant (soak seed 1, 2-4 players,
    seat 2 at 33.03 s). It says nothing new until it has listened for ``suspect_after``."""
    assert _woken() == []


def test_a_member_woken_to_half_the_table_gone_says_so_once_it_has_listened() -> None:
    """The rule holds a notice back, it does not drop it: with two members dead while it slept,
    the waker says they are out of reach, ``suspect_after`` after it woke at the latest."""
    said = _woken(2, 3)
    assert [n for _, n in said] == [OutOfReach((2, 3), 4)]
    woke = 5.0
    assert woke + QUICK_TIMERS.suspect_after <= said[0][0] <= woke + 2 * QUICK_TIMERS.suspect_after
