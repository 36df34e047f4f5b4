"""A real LAN whose link is slower than ZMTP's own heartbeat, but not than the drop timer.

Session 31 found it (docs/protocol.md §9.5, *a degraded network*; §13): every packet 2.5 s ±
1 late each way between two players made both abandon in four runs of five, though every
packet still arrived. A member's DEALER gave its connection up when its PING's answer came
more than ``HEARTBEAT_TIMEOUT_MS`` (5 s) late; what was queued on it was lost, and the
reconnect's TCP and CURVE handshakes took several round trips more, after which the same
happened again: the members heard nothing of each other for longer than the drop timer.
Since session 32 a member's DEALER waits as long as the drop timer
(:func:`~p2p_nertz.runtime.mesh.link_timeout_ms`): the protocol's timers, not the
transport's, judge a slow member.

Here one member's link holds every packet 3 s each way, no jitter: a round trip of 6 s or
more, certainly past the 5 s, and well under the drop timer (16 s). The delay lasts 30 s
from the member's 10th event and is then lifted: long enough that the old heartbeat gave the
link up and could not make it again in time (a reconnect takes four round trips or more,
24 s), so the tests failed on main's code (the members abandoned or dropped each other). A
round trip past the drop timer still drops, as a cut link does.

Session 33: in CI the game of two did not end within the old bound, 90 s after the delay was
lifted; it had not stalled. Played 11 times here (load 11-42), the game went on 9 to 99 s
after the lift at ``nertz bot``'s default pace (2 moves a second; how long is the deal's),
never standing still more than 1.1 s. The bots now play at full pace (7-51 s after the lift),
the wait is a hang's (:func:`tests.test_lan.check_finished_and_agreed`), and the delayer says
how many packets it held and how late it was (at most 0.11 s past their time at load 42).

Session 37: the game of two dropped its slow member once at load ~33 (the delayer 0.21 s
late), under a drop timer of 12 s. The test's reckoning of how long a member may go unheard
over this link, since session 32, is two one-way delays and two suspect timers (2 × 3 + 2 × 2
= 10 s; a reckoning, not a measurement): the timer left 2 s of 12 (17 %) for a loaded machine's
lateness. The drop timer is now 16 s, a quarter and more (6 s) past the reckoning; the delay is
unchanged, so the test still says the same thing: a link slower than the heartbeat and under
the drop timer drops nobody. (A shorter delay could not give the room: one just past ZMTP's
5 s round trip reckons past 9 s, less than a quarter of 12 left.) The code before session 32
fails it all the same by the reckoning above: its reconnect at a 6 s round trip takes 24 s or
more, past 16.

Each test builds its own :class:`~p2p_nertz.testing.netns.Lab` and needs root, nftables and
the netfilter queue the delay uses (skipped with the reason where missing; CI runs as root).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from p2p_nertz.testing.netns import Lab, impairments_unavailable, unavailable
from tests import test_lan as lan

_WHY = unavailable() or impairments_unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"needs a netns lab with nft: {_WHY}"),
]

#: Each way on the slow member's link (so a round trip of twice this, and more under load).
LATE = 3.0
#: The delay's length: the old heartbeat gives the link up ~6 s in, and a reconnect at a 6 s
#: round trip takes 24 s or more; past the drop timer either way.
SPAN = 30.0
#: The timers: ``DROP`` a quarter at least past what a member may go unheard over this link
#: (:data:`UNHEARD`), for a loaded machine (CI's suite: 8 workers on 2 cores; session 37).
SUSPECT, DROP = 2.0, 16.0
#: The reckoning of how long a member may go unheard over the slow link: two one-way delays
#: and two suspect timers (not a measurement; the room past it is for the load's lateness).
UNHEARD = 2 * LATE + 2 * SUSPECT
#: Every player's options: the timers, and the bots at full pace (at ``nertz bot``'s default,
#: 2 moves a second, a game of two went on 9 to 99 s after the delay was lifted, load 11-42:
#: past the old 90 s bound in CI, moving all along; session 33).
TIMERS = ("--suspect-after", f"{SUSPECT:g}", "--drop-after", f"{DROP:g}", "--speed", "10")


@pytest.mark.parametrize("players", [2, 3])
def test_lan_link_slower_than_the_heartbeat_under_the_drop_timer_drops_nobody(
    tmp_path: Path, players: int
) -> None:
    assert 2 * LATE > 5.0 and UNHEARD <= 0.75 * DROP  # past ZMTP's, a quarter under ours
    with Lab(players) as lab:
        gamers = lan.start_lan_game(lab, tmp_path, players, *TIMERS)
        slow = gamers[1]
        lan.wait_until("host 1 is playing", lambda: lan.own_events(slow) >= 10, gamers, 60)
        lab.delay(1, LATE)
        # The fault's length, not a wait for something (play goes on meanwhile, or ends).
        end = time.monotonic() + SPAN
        lan.wait_until(
            "the delay's span is over", lambda: time.monotonic() >= end, gamers, SPAN + 5
        )
        held = lab.delay(1, 0)
        assert held is not None and held.held > 0, held  # (it held the game's packets)
        # Its own lateness, said with a drop: a delayer starved of the CPU for 1 s would make
        # the round trip the drop timer's, the lab's fault (0.11 s at most at load 42).
        late = f"the delayer let packets go up to {held.late:.2f} s past their {LATE:g} s"
        final = lan.check_finished_and_agreed(gamers)
    # Nobody was dropped nor abandoned: the link was slow, never gone.
    assert [p.event("dropped") for p in gamers] == [None] * players, late
    lan.check_nothing_lost(gamers)
    assert all(p.event("final")["dropped"] == [] for p in gamers)  # type: ignore[index]
    assert final["rounds"] >= 1 and not final["provisional"]
    verdict = lan.audited_valid(gamers)
    assert verdict["totals"] == final["totals"] and verdict["errors"] == 0


def test_lan_link_slower_than_the_drop_timer_still_drops(tmp_path: Path) -> None:
    # Two players, every packet 5 s late each way for good, the drop timer 3 s: each hears the
    # other at least 5 s late, past its timer, so each abandons the other as a cut does
    # (tests/test_lan.py: one settled result, the audit of both logs valid).
    with Lab(2) as lab:
        gamers = lan.start_lan_game(lab, tmp_path, 2, "--suspect-after", "1", "--drop-after", "3")
        lan.wait_until("host 1 is playing", lambda: lan.own_events(gamers[1]) >= 10, gamers, 60)
        lab.delay(1, 5.0)
        final = lan.check_finished_and_agreed(gamers)
    assert not final["provisional"]
    assert all(p.event("final")["dropped"] for p in gamers)  # type: ignore[index]
    verdict = lan.audited_valid(gamers)
    assert verdict["totals"] == final["totals"] and verdict["dropped"] and verdict["errors"] == 0
