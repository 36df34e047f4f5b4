"""The abandon key's offer says whom it shuts out (newcomer31): with Cy dropped and readmitted
to play from the next round, and Bea gone, the table offered "a ends the game (Bea gone)",
and pressing it ended the game before Cy was back. The core's answer names the members due
back (``AbandonAnswer.back``, docs/protocol.md §9.3, §9.8), and the footer and the question
say so. On the in-memory network of cores (tests/test_abandon_readmitted.py's game: seat 0
dropped and readmitted, gone again; seats 1 and 2 cut off from each other).
"""

from __future__ import annotations

from p2p_nertz.ui import TableController, render
from p2p_nertz.ui.controller import Abandon
from tests.test_abandon_readmitted import QUICK, _last_two
from tests.test_table_gone import _Shown


def test_abandon_offer_names_the_member_due_back_that_it_shuts_out() -> None:
    net, a, b = _last_two(2, 3, pending=True)
    peer = net.peers[a]
    assert 0 in peer.final.rejoining  # (the game: seat 0 back from the next round)
    end = net.now + 4 * QUICK.drop_after
    net.run(lambda net: net.peers[a].abandon_answer(net.now).why is None or net.now > end)
    answer = peer.abandon_answer(net.now)
    assert answer.why is None and answer.partner == b
    assert answer.back == (0,)

    names = ("Cy", "Ann", "Bea")
    front = _Shown()
    table = TableController(names, a, front, symbols=False)
    table.draw(peer, net.now)
    footer = render(front.views[-1], width=80).text().splitlines()[-1]
    assert "a ends the game (Bea gone) before Cy is back" in footer
    assert table.press("a", peer, net.now) == []  # (it asks first)
    table.draw(peer, net.now)
    status = front.views[-1].status
    assert status.startswith("end the game before Cy is back (Bea gone)?"), status
    assert len(status) <= 80
    assert table.press("y", peer, net.now) == [Abandon()]
