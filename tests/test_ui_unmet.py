"""A vote to drop a member that stands without a majority is told: the table says who is voted
out, by whom and why, how many votes of how many are needed, and that it waits for them
(docs/protocol.md §13, *A claim on a silent member's feed*, session 36).

The view model (``ui/view.py``'s :attr:`TableView.waits`) is read from simulated games at one
seat's inputs: the two liars at four (seed 3185, seat 0 muted for good) whose table waits for
good; a game of two whose one vote for silence stands until the member is heard again and
withdrawn; a game of three whose member gone for good is dropped on two votes of three. Then
the terminal's screen and the page's model of a view that has them, and the real page (a
headless chromium) showing them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.roster import _standing, standing_votes
from p2p_nertz.protocol.unmet import UNMET_AFTER, Unmet, UnmetEnd, UnmetTeller, VoteShort, unmet
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import log_unmet
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Faults, SimConfig, Simulation
from p2p_nertz.ui.render import render
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import TableView
from p2p_nertz.web.model import view_json
from tests.test_sim_blame import _votes
from tests.test_sim_muted_claim import _Muted
from tests.web_helpers import ServedPage, browser_missing, open_browser, texts, wait_for

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: The last row, under the votes (:func:`~p2p_nertz.ui.view.unmet_words`).
WAITS = "no majority yet: the table waits for the votes still needed to drop"
#: (time, the votes short of a majority in the fold, the view's waits, the view)
Seen = list[tuple[float, tuple[Unmet, ...], tuple[str, ...], TableView]]
#: The node's notices at those times (:class:`UnmetTeller`), each as it was made.
Told = list[tuple[float, VoteShort]]


def _watch(sim: Simulation, seat: int, told: Told | None = None) -> Seen:
    """Read ``seat``'s table at its inputs (a tenth of a second apart at least) with the
    front ends' tracker, as the controller does, and tell and log what stands as the node
    does (its notices into ``told``)."""
    seen: Seen = []
    trackers: list[Tracker] = []
    tellers: list[UnmetTeller] = []
    apply: Callable[..., bool] = sim._apply

    def watched(s: int, effects: list, now: float, cut: int | None = None) -> bool:  # type: ignore[type-arg]
        done = apply(s, effects, now, cut)
        peer: Peer | None = sim.peers[s]
        if s == seat and peer is not None and (not seen or now >= seen[-1][0] + 0.1):
            if not trackers:
                trackers.append(Tracker(tuple(m.name for m in peer.spec.members), seat))
                tellers.append(UnmetTeller())
            view = trackers[0].view(peer, now=now)
            for notice in tellers[0].check(peer.tentative, now):  # (as the node at its ticks)
                log_unmet(notice, peer.spec)
                if told is not None:
                    told.append((now, notice))
            seen.append((now, unmet(peer.tentative), view.waits, view))
        return done

    sim._apply = watched  # type: ignore[method-assign]
    return seen


def _vote_rows(waits: tuple[str, ...]) -> tuple[str, ...]:
    """The rows of the votes (since session 39 a member heard that owes has its own row: the
    liar that claims holding the muted member's events owes them, tests/test_ui_table_owing.py)."""
    return tuple(row for row in waits if "heard but not sending" not in row)


def _shown(seen: Seen) -> list[float]:
    return [t for t, _, waits, _ in seen if _vote_rows(waits)]


def test_unmet_two_liars_at_four_the_table_says_why_it_waits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sim = _Muted(None)
    seen = _watch(sim, 2)
    with caplog.at_level(logging.INFO, logger="p2p_nertz.node"):
        result = sim.run()
    assert not result.finished  # (the waiting table: test_sim_muted_claim.py)
    standing = [t for t, found, _, _ in seen if found]
    shown = _shown(seen)
    assert standing and shown
    # Not at once: the others' votes come a beat or two apart; then for as long as it stands.
    assert shown[0] >= standing[0] + UNMET_AFTER
    assert shown[0] < standing[0] + UNMET_AFTER + 1.0
    assert all(_vote_rows(waits) for t, _, waits, _ in seen if t >= shown[0])
    _, found, rows, view = seen[-1]
    waits = _vote_rows(rows)
    roster = sim.peers[2].tentative.roster  # type: ignore[union-attr]
    assert [(t, [v for _, v in b]) for t, b in standing_votes(roster).items()] == list(
        _standing(roster)
    )  # (the votes told are the votes that cap)
    # The honest two's votes on the claimer, two of four; the claimer's core votes each of
    # the others out too (the events it claims never come), one of four each.
    assert Unmet(1, (DropReason.WITHHELD,), (2, 3), 3, 4) in found
    assert {u.voters for u in found if u.seat != 1} == {(1,)}
    ours = f"{view.names[1]} voted out by you and {view.names[3]} (holding the game up): "
    assert waits[-2] == ours + "2 of 3 votes"  # (this peer's vote, nearest the foot)
    assert waits[-1] == WAITS
    assert waits[0].endswith(f"voted out by {view.names[1]} (holding the game up): 1 of 3 votes")
    # The terminal shows this peer's vote and the wait, in 80 columns, under the
    # announcements; the page's model has every row.
    text = render(view, 80, 24).text()
    assert all(row in text for row in waits)
    assert view_json(view)["messages"][-len(rows) :] == list(rows)
    # The node logs each once, as it stands long enough (seat 1's, by seat 2 alone for half a
    # second, not): four, one a member.
    told = [r.getMessage() for r in caplog.records if "no majority for a vote" in r.getMessage()]
    assert len(told) == len(found) == 4
    name = [m.name for m in sim.spec.members]
    assert f"{name[1]} voted out (withheld) by {name[2]}, {name[3]}, 2 of 3 votes" in " ".join(told)


def _game(
    players: int, crash: Crash, seed: int = 4, told: Told | None = None
) -> tuple[Simulation, Seen]:
    faults = Faults(crashes=(crash,))
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=3),
        faults=faults,
        peer=QUICK_TIMERS,
        abandon=False,
        max_time=120.0,
    )
    sim = Simulation(config)
    return sim, _watch(sim, 0, told)


@pytest.mark.parametrize(
    "down",
    [QUICK_TIMERS.drop_after + UNMET_AFTER / 2, QUICK_TIMERS.drop_after + UNMET_AFTER + 4.0],
    ids=["withdrawn-before-told", "told-then-withdrawn"],
)
def test_unmet_two_players_a_silence_vote_stands_then_is_withdrawn(down: float) -> None:
    # At two players a majority is two votes: the one vote for silence stands alone until
    # the member is heard again and it is withdrawn (the other is its target's: the words
    # point to the abandon, on offer after drop_after).
    told: Told = []
    sim, seen = _game(2, Crash(1, 3.0, down), told=told)
    result = sim.run()
    assert _votes(result, DropReason.SILENT) == [(0, 1)]
    assert _votes(result, DropReason.WITHDRAW) == [(0, 1)]  # (heard again: withdrawn)
    standing = [t for t, found, _, _ in seen if found]
    assert standing  # (the vote for silence stood)
    assert {u.seat for _, found, _, _ in seen for u in found} == {1}
    shown = _shown(seen)
    if down < QUICK_TIMERS.drop_after + UNMET_AFTER:
        assert shown == []  # (withdrawn within the short while: nothing to tell)
        assert told == []  # (nor a notice of the node's)
    else:
        # The node tells it once, as the table first shows it, and its end once, withdrawn,
        # as the table shows it no more.
        assert [(n.unmet.seat, n.unmet.voters, n.ended) for _, n in told] == [
            (1, (0,), None),
            (1, (0,), UnmetEnd.WITHDRAWN),
        ]
        assert told[0][0] == shown[0]
        assert told[1][0] == min(t for t, _, waits, _ in seen if t > shown[0] and not waits)
        assert shown and shown[0] >= standing[0] + UNMET_AFTER
        waits = next(waits for _, _, waits, _ in seen if waits)
        view = next(view for _, _, waits, view in seen if waits)
        assert waits == (
            f"{view.names[1]} voted out by you (silent): 1 of 2 votes",
            "nobody can be dropped from two: wait for them, or end the game",
        )
    # Withdrawn once heard again: gone from the table with the vote.
    assert standing[-1] < seen[-1][0]
    assert all(not waits for t, _, waits, _ in seen if t > standing[-1])


def test_unmet_three_players_a_member_dropped_is_told_no_more() -> None:
    # Seat 2 gone for good: both others vote it out for silence, two of three, a majority;
    # once it is dropped nothing stands, and nothing is told.
    told: Told = []
    sim, seen = _game(3, Crash(2, 3.0, None), told=told)
    result = sim.run()
    assert _votes(result, DropReason.SILENT) == [(0, 2), (1, 2)]
    peer = sim.peers[0]
    assert peer is not None
    assert set(peer.tentative.dropped) == {2}
    standing = [t for t, found, _, _ in seen if found]
    assert all(not waits for t, _, waits, _ in seen if not standing or t > standing[-1])
    assert not seen[-1][2]
    # Told only if the one vote stood the while before the second came; ended dropped if so.
    assert [n.ended for _, n in told] in ([], [None, UnmetEnd.DROPPED])


@pytest.mark.slow
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_unmet_the_page_says_why_the_table_waits(page: ServedPage) -> None:
    # The waiting table's last view at seat 2, as the page's front end sends it to the real
    # page server: the page lists the rows under its announcements.
    sim = _Muted(None)
    seen = _watch(sim, 2)
    sim.run()
    view = seen[-1][3]
    assert len(_vote_rows(view.waits)) == 3
    page.publish(json.dumps(view_json(view), ensure_ascii=False))
    with open_browser() as driver:
        driver.get(page.url)
        shown = wait_for(
            driver,
            lambda d: (
                (rows := texts(d, "#messages li"))[-len(view.waits) :] == list(view.waits) and rows
            ),
            "the votes waiting on a majority, listed",
        )
    assert _vote_rows(tuple(shown))[-1] == WAITS
