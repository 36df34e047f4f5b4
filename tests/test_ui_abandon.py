"""The abandon key and the rejoin notice at the terminal table.

The key machine is pure (built from the rules notation); what the tracker offers is checked
against real protocol cores (``PeerNetwork``): the key is on offer once the other member is
suspected, says how many seconds of silence the core still wants, and asks exactly when
``Peer.abandon`` takes it; the rejoin of a real dropped member is announced and shown. One
test drives ``cli/table.py``'s table with real nodes on 127.0.0.1 and a fake terminal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from helpers_rules import table_from
from peer_helpers import PeerNetwork

from cli.table import Outcome, run_table
from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.local import AbandonAnswer, AbandonRefused
from p2p_nertz.protocol.peer import PeerConfig, Suspected
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import GameResult, RoundStatus, Rules, Table, Termination
from p2p_nertz.runtime.node import NODE_CONFIG, PeerNode
from p2p_nertz.ui import (
    ABANDON_HELP,
    KEY_HELP,
    Abandon,
    Context,
    KeyState,
    Link,
    Screen,
    TableView,
    Tracker,
    press,
    render,
)
from p2p_nertz.ui.controller import TableController
from p2p_nertz.ui.keys import ENTER, NO_ABANDON, Action
from p2p_nertz.ui.view import Gone

MINE = "N: KH 4C | 1: QH JS 10H | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS"
OTHER = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
NAMES = ("Ann", "Bob")
BOB = Gone(1, "Bob")  # the one other member, gone: the core takes an abandon now
QUICK = PeerConfig(suspect_after=1.0, drop_after=2.0)


def table() -> Table:
    return table_from(MINE, OTHER)


def keys(
    sequence: Iterable[str], state: KeyState | None = None, **ctx: object
) -> tuple[KeyState, list[Action]]:
    state = state or KeyState()
    context = Context(table(), 0, **ctx)  # type: ignore[arg-type]
    actions: list[Action] = []
    for key in sequence:
        state, more = press(state, key, context)
        actions += more
    return state, actions


# -- the key machine ---------------------------------------------------------------------------
def test_abandon_key_not_on_offer_says_why_and_changes_nothing() -> None:
    picked, _ = keys("n")
    for reason in (NO_ABANDON, "Bob is still answering (an abandon needs them gone)"):
        state, actions = keys("a", picked, abandon=reason)
        assert actions == []
        assert state.status == f"cannot abandon: {reason}"
        assert state.selected is picked.selected and state.confirm is None
    # The default context (a front end that says nothing) never offers it.
    state, actions = keys("A")
    assert actions == [] and state.status == f"cannot abandon: {NO_ABANDON}"


@pytest.mark.parametrize("answer", ["a", "A", "y"])
def test_abandon_key_asks_first_then_ends_the_game(answer: str) -> None:
    state, actions = keys("a", abandon=BOB)
    assert actions == [] and "Bob gone" in state.status and "a or y" in state.status
    state, actions = keys(answer, state, abandon=BOB)
    assert actions == [Abandon()]


@pytest.mark.parametrize("other", ["n", "q", ENTER, "x"])
def test_abandon_key_any_other_answer_plays_on(other: str) -> None:
    state, _ = keys("a", abandon=BOB)
    state, actions = keys([other], state, abandon=BOB)
    assert actions == [] and "goes on" in state.status and state.confirm is None


def test_abandon_key_refused_when_the_offer_ends_before_the_answer() -> None:
    state, _ = keys("a", abandon=BOB)
    back = "Bob is still answering (an abandon needs them gone)"
    state, actions = keys("a", state, abandon=back)
    assert actions == [] and state.status == f"cannot abandon: {back}"


def test_abandon_key_works_over_the_round_board_and_not_for_a_spectator() -> None:
    state, actions = keys("aa", board=True, abandon=BOB)
    assert actions == [Abandon()]
    state, actions = press(KeyState(), "a", Context(table(), None, abandon=BOB))
    assert actions == [] and "spectator" in state.status


def test_abandon_typed_word_asks_like_the_key() -> None:
    state, actions = keys([":", *"abandon", ENTER], abandon=BOB)
    assert actions == [] and "a or y" in state.status
    _, actions = keys("y", state, abandon=BOB)
    assert actions == [Abandon()]
    state, actions = keys([":", *"abandon", ENTER], abandon="Bob is still answering")
    assert actions == [] and state.status == "cannot abandon: Bob is still answering"


@pytest.mark.parametrize(("silent", "wait"), [(4.2, 25.8), (1.0, 0.5), (29.99, 0.01)])
def test_abandon_key_pressed_before_the_core_would_take_it_says_how_long(
    silent: float, wait: float
) -> None:
    picked, _ = keys("n")
    early = Gone(1, "Bob", silent=silent, wait=wait)
    for sequence in ("a", "aa"):  # pressed again, it says so again: nothing was asked
        state, actions = keys(sequence, picked, abandon=early)
        assert actions == [] and state.confirm is None and state.selected is picked.selected
        assert state.status == early.waiting()
    _, actions = keys("ay", picked, abandon=early)  # so a "yes" after it is no answer
    assert actions == []
    text = state.status
    assert text.startswith("Bob has been silent ") and "you can abandon in " in text
    assert f"silent {math.floor(silent)} s;" in text and text.endswith(f"in {math.ceil(wait)} s")


def test_abandon_key_answer_while_the_core_wants_more_silence_again_ends_nothing() -> None:
    # Asked while Bob was gone; he was heard, then suspected again before the answer.
    state, _ = keys("a", abandon=BOB)
    again = Gone(1, "Bob", silent=5.0, wait=25.0)
    state, actions = keys("y", state, abandon=again)
    assert actions == [] and state.status == again.waiting() and state.confirm is None


# -- the screen --------------------------------------------------------------------------------
def screen_of(**changes: object) -> Screen:
    t = table()
    fields: dict[str, object] = {"table": t, "seat": 0, "names": NAMES, "rules": t.rules}
    fields.update(changes)
    return render(TableView(**fields))  # type: ignore[arg-type]


def test_render_shows_the_abandon_key_only_while_it_is_on_offer() -> None:
    plain = screen_of()
    assert " ends the game" not in plain.line(plain.height - 1)
    assert ABANDON_HELP[1] not in screen_of(help=True).text()
    offered = screen_of(abandon=BOB)
    hint = offered.line(offered.height - 1)
    assert hint.startswith(f"a ends the game ({NAMES[1]} gone)")
    help_text = screen_of(help=True, abandon=BOB).text()
    assert f"  {ABANDON_HELP[0]}" in help_text and ABANDON_HELP[1] in help_text
    assert all(key.replace("1-6", "1-4") in help_text for key, _ in KEY_HELP)


def test_render_footer_counts_down_until_the_core_takes_an_abandon() -> None:
    early = screen_of(abandon=Gone(1, "Bob", silent=6.5, wait=23.5))
    assert early.line(early.height - 1).startswith("a ends the game in 24 s (Bob silent)")
    assert ABANDON_HELP[1] in screen_of(help=True, abandon=Gone(1, "Bob", wait=1.0)).text()
    now = screen_of(abandon=Gone(1, "Bob", silent=30.0, wait=0.0))
    assert now.line(now.height - 1).startswith("a ends the game (Bob gone)")


def test_render_footer_with_the_abandon_key_keeps_its_keys_whole() -> None:
    # "a ends the game (Bea gone) · n w 1-4 pick, … · p stu": the keys cut at column 80.
    for gone in (BOB, Gone(1, "Bob", silent=6.5, wait=23.5), Gone(1, "B" * 32, wait=30.0)):
        screen = screen_of(abandon=gone)
        footer = screen.line(screen.height - 1).rstrip()
        assert len(footer) <= screen.width and footer.startswith("a ends the game")
        assert footer.endswith(("· ? · q", "· ? help · q leaves", "· ? help")), footer
    assert screen_of(abandon=BOB).line(screen.height - 1).rstrip().endswith("· ? help · q leaves")


def test_render_refusals_of_the_abandon_key_show_as_refusals() -> None:
    def shown(key: str, ctx: Context) -> Screen:  # (as the keys said it: the words, a refusal)
        said = press(KeyState(), key, ctx)[0]
        return screen_of(status=said.status, refused=said.line.refused)

    screen = shown("a", Context(table(), 0, abandon="the game is already over"))
    styles = screen.styles_of("cannot abandon")
    assert styles == shown("2", Context(table(), 0)).styles_of("illegal")  # (an empty pile)
    assert styles != shown("n", Context(table(), 0)).styles_of("picked")  # (a pick: not one)


# -- the tracker against real cores ------------------------------------------------------------
class Follow:
    """A tracker fed every notice seat ``seat``'s peer of ``net`` reports, as the table is."""

    def __init__(self, net: PeerNetwork, seat: int = 0) -> None:
        self.net = net
        self.seat = seat
        self.tracker = Tracker(tuple(m.name for m in net.spec.members), seat)
        self.seen = 0

    def sync(self) -> Tracker:
        effects = self.net.effects[self.seat]
        self.tracker.take(effects[self.seen :], self.net.peers[self.seat].final)
        self.seen = len(effects)
        return self.tracker

    def until(self, check: Callable[[Tracker], bool]) -> None:
        self.net.run(lambda _: check(self.sync()))

    def offer(self) -> Gone | str:
        """What the table offers now: the core's answer at the network's clock, as the table
        controller reads it at the node's."""
        peer = self.net.peers[self.seat]
        return self.sync().may_abandon(peer.abandon_answer(self.net.now))

    def view(self) -> TableView:
        peer = self.net.peers[self.seat]
        return self.sync().view(peer, abandon=peer.abandon_answer(self.net.now))

    def context(self) -> Context:
        peer = self.net.peers[self.seat]
        return Context(peer.view, self.seat, abandon=self.offer())


def dealt(net: PeerNetwork) -> bool:
    return all(p.tentative.phase is Phase.PLAY for p in net.peers)


def test_tracker_offers_abandon_exactly_when_the_core_may_take_it() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=5), config=QUICK)
    net.run(dealt)
    ann = Follow(net)
    peer = net.peers[0]
    # Both playing: not on offer, and the core refuses too.
    reason = ann.offer()
    assert isinstance(reason, str) and "p1 is still answering" in reason
    with pytest.raises(LocalProtocolError):
        peer.abandon(net.now)
    state, actions = press(KeyState(), "a", ann.context())
    assert actions == [] and state.status == f"cannot abandon: {reason}"
    assert ann.sync().view(peer).abandon is None
    # Seat 1 goes silent: once it is suspected, the key is on offer, with the seconds of
    # silence the core still wants before it takes an abandon.
    net.silence(1)
    ann.until(lambda tracker: 1 in tracker.suspected)
    early = ann.offer()
    assert isinstance(early, Gone) and early.seat == 1 and early.name == "p1"
    assert 0 < early.wait <= QUICK.drop_after - QUICK.suspect_after
    assert early.silent + early.wait == pytest.approx(QUICK.drop_after)
    view = ann.view()
    assert view.abandon == early and view.link(1) is Link.SUSPECTED
    screen = render(view)
    assert screen.line(screen.height - 1).startswith(
        f"a ends the game in {math.ceil(early.wait)} s (p1 silent)"
    )
    # Pressed now, the key says how long is left and asks nothing; the core would refuse too.
    state, actions = press(KeyState(), "a", ann.context())
    assert actions == [] and state.confirm is None
    assert state.status == early.waiting()
    assert re.fullmatch(r"p1 has been silent \d+ s; you can abandon in \d+ s", state.status)
    with pytest.raises(LocalProtocolError, match="silence"):
        peer.abandon(net.now)
    # The moment the core would take it, the key asks, and the abandon goes through.

    def takes_it(_: PeerNetwork) -> bool:
        offer = ann.offer()
        return isinstance(offer, Gone) and offer.wait == 0

    net.run(takes_it)
    screen = render(ann.view())
    assert screen.line(screen.height - 1).startswith("a ends the game (p1 gone)")
    state, actions = press(KeyState(), "a", ann.context())
    assert actions == [] and state.status.startswith("p1 gone: end the game on the totals?")
    state, actions = press(state, "a", ann.context())
    assert actions == [Abandon()]
    ann.tracker.take(peer.abandon(net.now), peer.final)  # the tracker shows the standings
    board = ann.tracker.board
    assert board is not None and board.result is not None
    assert board.result.termination is Termination.ABANDONED
    assert "the game was abandoned" in ann.tracker.messages[-1]
    assert ann.tracker.messages[-2] == "p1 was dropped (silent too long)"
    assert ann.offer() == "the game is already over"
    text = render(ann.tracker.view(peer)).text()
    assert "game over — winner: " in text and "(ended early)" in text
    assert "void: the game was abandoned" in text


def test_core_refusal_names_the_player_and_numbers_seats_from_one() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=5), config=QUICK)
    net.run(dealt)
    peer = net.peers[0]
    net.silence(1)
    net.run(lambda n: peer.silent_for(n.now) >= QUICK.suspect_after)  # not yet drop_after
    other = net.spec.members[1].name
    with pytest.raises(LocalProtocolError) as refused:
        peer.abandon(net.now)
    message = str(refused.value)
    match = re.fullmatch(
        rf"{other} \(seat 1\) was heard (\d+\.\d) s ago; an abandon needs (\S+) s of "
        r"silence \((\d+\.\d) s more\)",
        message,
    )
    assert match is not None, message
    heard, needs, more = float(match[1]), float(match[2]), float(match[3])
    assert needs == QUICK.drop_after
    assert heard == pytest.approx(peer.silent_for(net.now), abs=0.05)
    assert more == pytest.approx(QUICK.drop_after - peer.silent_for(net.now), abs=0.05)
    assert "seat 0 " not in message  # seat 0 is the one refusing: it is not named as silent


def test_tracker_offers_abandon_to_the_last_two_of_three() -> None:
    net = PeerNetwork(3, seed=4, rules=Rules(target=None, rounds=5), config=QUICK)
    net.run(dealt)
    ann = Follow(net)
    peer = net.peers[0]
    net.silence(2)
    # One silent of three: the two left can vote it out, so no abandon is offered.
    ann.until(lambda tracker: 2 in tracker.suspected)
    # (The player's words: players, not the core's members.)
    assert ann.offer() == "2 others are still playing (only when one other is left)"
    with pytest.raises(AbandonRefused, match="exactly one other member") as refused:
        peer.abandon(net.now + QUICK.drop_after)
    assert refused.value.answer.refusal is Refusal.OTHERS and refused.value.answer.others == (1, 2)
    ann.until(lambda _: 2 in peer.final.dropped)
    assert ann.sync().links(peer)[2] is Link.DROPPED
    # Then the last other member goes too: now the key is on offer, and the core takes it.
    net.silence(1)
    ann.until(lambda tracker: 1 in tracker.suspected)
    offer = ann.offer()
    assert isinstance(offer, Gone) and offer.seat == 1 and offer.wait > 0
    quiet = net.now + QUICK.drop_after
    net.run(lambda n: n.now >= quiet)
    offer = ann.offer()
    assert isinstance(offer, Gone) and offer.wait == 0
    ann.tracker.take(peer.abandon(net.now), peer.final)
    assert peer.final.phase is Phase.OVER
    assert ann.offer() == "the game is already over"


def test_tracker_game_over_brings_back_the_closed_board_with_the_result() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=3), config=QUICK)
    ann = Follow(net)
    ann.until(lambda tracker: tracker.board is not None)  # round 1 is scored
    peer = net.peers[0]
    ann.tracker.close_board()  # read; the game goes on, then is abandoned between rounds
    totals = peer.final.game.totals
    result = GameResult((totals.index(max(totals)),), totals, Termination.ABANDONED)
    ann.tracker.notice(st.GameEnded(result), peer.final)
    board = ann.tracker.board
    assert board is not None and board.result == result
    assert board.round == 1 and board.score == peer.final.scores[-1]
    (first,) = [r.table for r in (*peer.final.past_rounds, peer.final.round) if r.number == 1]
    assert first is not None and board.lake == first.lake
    text = render(ann.tracker.view(peer)).text()
    assert "game over — winner: " in text and "(ended early)" in text


# -- a member back from a drop -----------------------------------------------------------------
def test_tracker_announces_a_rejoin_in_the_house_style() -> None:
    tracker = Tracker(("Ann", "Bob", "Cy"), seat=0)
    tracker.notice(Suspected(1, True))
    tracker.notice(st.MemberDropped(1, 7, False))
    assert (
        tracker.messages[-1] == "Bob was dropped (silent too long): the game goes on without them"
    )
    tracker.notice(Suspected(2, True))  # a stale suspicion of a member dropped, then back
    tracker.notice(st.MemberRejoined(2, 3))
    assert tracker.messages[-1] == "Cy is back from round 3"
    assert 2 not in tracker.suspected
    tracker.notice(st.MemberRejoined(1, 4))
    assert tracker.messages[-1] == "Bob is back from round 4"
    # The local player, dropped and back, reads it in the second person.
    me = Tracker(("Ann", "Bob"), seat=0)
    me.notice(st.MemberDropped(0, 3, False))
    me.notice(st.MemberRejoined(0, 2))
    assert me.messages == ["you were dropped (silent too long)", "you are back from round 2"]


def test_tracker_shows_a_real_member_dropped_then_back_as_playing_again() -> None:
    """Dropped, then back (it asked to rejoin): the table says so at once, and that it plays
    from the next round ("rejoining" on its row), then that it plays; a spectator fed the same
    messages says the same words (``nertz watch``)."""
    config = PeerConfig(suspect_after=0.5, drop_after=1.0, phase_timeout=5.0)
    net = PeerNetwork(3, seed=6, rules=Rules(target=None, rounds=3), config=config)
    net.run(dealt)
    ann = Follow(net)
    peer = net.peers[0]
    net.silence(2)
    ann.until(lambda _: 2 in peer.final.dropped)
    dropped_in = peer.final.round.number
    assert ann.sync().links(peer)[2] is Link.DROPPED
    assert ann.tracker.messages[-1] == (
        "p2 was dropped (silent too long): the game goes on without them"
    )
    net.silenced.discard(2)  # it comes back, learns it was dropped, asks to rejoin
    ann.until(lambda tracker: any("back from the next round" in m for m in tracker.messages))
    (back,) = [m for m in ann.tracker.messages if "back from" in m]
    match = re.fullmatch(r"p2 is back from the next round \(round (\d+)\)", back)
    assert match is not None and int(match[1]) == peer.final.round.number + 1 > dropped_in
    assert ann.tracker.links(peer) == (Link.OK, Link.OK, Link.REJOINING)
    row = _row(render(ann.view()), "2 p2")
    assert " rejoining " in row and "dropped" not in row
    ann.until(lambda tracker: any("plays again" in m for m in tracker.messages))
    (plays,) = [m for m in ann.tracker.messages if "plays again" in m]
    assert plays == f"p2 plays again from round {match[1]}"
    assert [m for m in ann.tracker.messages if "back from" in m] == [back]  # said once
    assert ann.tracker.links(peer) == (Link.OK, Link.OK, Link.OK)
    t = table_from(MINE, OTHER, OTHER)
    view = TableView(
        table=t,
        seat=0,
        names=("p0", "p1", "p2"),
        rules=t.rules,
        links=ann.tracker.links(peer),
        messages=tuple(ann.tracker.messages),
    )
    screen = render(view)
    row = _row(screen, "2 p2")
    assert " ok " in row and "dropped" not in row
    assert back in screen.text() and plays in screen.text()
    # A spectator, fed everything the members sent in order, follows it in the same words.
    spectator = Spectator(net.spec)
    watcher = Tracker(tuple(m.name for m in net.spec.members))
    for wire in net.sent:
        watcher.take(spectator.feed(wire), spectator.final)
    said = [m for m in watcher.messages if m.startswith("p2 ")]
    assert said[-3:] == [
        "p2 was dropped (silent too long): the game goes on without them",
        back,
        plays,
    ]


class Shown:
    """A front end that keeps the last view it is shown."""

    def __init__(self) -> None:
        self.last: TableView | None = None

    def show(self, view: TableView) -> None:
        self.last = view


def _row(screen: Screen, start: str) -> str:
    return next(screen.line(i) for i in range(screen.height) if screen.line(i).startswith(start))


# -- the table of cli/table.py with real nodes --------------------------------------------------
class FakeTerminal:
    """A terminal for :func:`cli.table.run_table`: keys pushed by the test, screens kept."""

    def __init__(self) -> None:
        self.screen: Screen | None = None
        self.keys: list[str] = []
        self._input = trio.Event()
        self._painted = trio.Event()

    def size(self) -> tuple[int, int]:
        return 80, 24

    def paint(self, screen: Screen) -> None:
        self.screen = screen
        self._painted.set()

    def read_keys(self) -> list[str]:
        out, self.keys = self.keys, []
        self._input = trio.Event()
        return out

    async def wait_input(self) -> None:
        if not self.keys:
            await self._input.wait()

    def resized(self) -> None:
        """Nothing to re-read."""

    def press(self, keys: str) -> None:
        self.keys += list(keys)
        self._input.set()

    async def wait_for(self, check: Callable[[str], bool]) -> str:
        """Wait until a painted screen passes ``check``; its text."""
        while True:
            if self.screen is not None and check(self.screen.text()):
                return self.screen.text()
            self._painted = trio.Event()
            await self._painted.wait()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_table_abandon_pressed_early_says_how_long_is_left_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    work = tmp_path
    identities = [Identity.generate(derive_seed(b"test-ui-abandon", s)) for s in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, name) for i, name in zip(identities, ("me", "bot"), strict=True)],
        Rules(target=None, rounds=3),
        b"ui-abandon",
    )
    # Suspected soon, but the core wants an hour of silence: the table says how long is left.
    config = replace(NODE_CONFIG, suspect_after=1.0, drop_after=3600.0)
    human = PeerNode(identities[0], spec, work / "me.log", strategy=None, config=config, grace=0.5)
    bot = PeerNode(identities[1], spec, work / "bot.log", strategy="greedy", speed=1)
    endpoints = {i.peer_id: n.bind() for i, n in zip(identities, (human, bot), strict=True)}
    others = {identities[0].peer_id: endpoints[identities[0].peer_id]}
    terminal = FakeTerminal()

    with trio.fail_after(45):
        async with trio.open_nursery() as nursery:
            bot_scope = trio.CancelScope()

            async def run_bot() -> None:
                with bot_scope:
                    await bot.run(others)

            nursery.start_soon(run_bot)
            done: list[Outcome] = []

            async def table() -> None:
                mine = {identities[1].peer_id: endpoints[identities[1].peer_id]}
                done.append(await run_table(human, mine, terminal=terminal, signals=False))

            nursery.start_soon(table)
            await terminal.wait_for(lambda text: "[n] Nerts" in text)
            terminal.press("a")
            text = await terminal.wait_for(lambda text: "cannot abandon: " in text)
            assert "bot is still answering" in text
            bot_scope.cancel()  # the bot's process is gone for good
            text = await terminal.wait_for(lambda text: "(bot silent)" in text)
            footer = text.splitlines()[-1]
            match = re.match(r"a ends the game in (\d+) s \(bot silent\)", footer)
            assert match is not None and 3500 < int(match[1]) <= 3600, footer
            terminal.press("a")
            text = await terminal.wait_for(lambda text: "you can abandon in" in text)
            status = text.splitlines()[-2]
            assert re.fullmatch(r"bot has been silent \d+ s; you can abandon in \d+ s", status)
            # Nothing was asked: the next key is an ordinary one.
            assert human.peer.final.phase is not Phase.OVER
            assert human.peer.view is not None
            assert human.peer.view.status is RoundStatus.PLAYING
            terminal.press("q")
            await terminal.wait_for(lambda text: "leave the game?" in text)
            terminal.press("y")
    assert [outcome.left for outcome in done] == [True]


def test_tracker_offers_the_key_by_the_core_answer_alone() -> None:
    # The table restates no rule of its own: who the other member is, how long it has been
    # gone and how long the core still waits are the core's answer; the table adds only that
    # the key waits for a suspicion while the core still waits too.
    tracker = Tracker(("Ann", "Bob"), 0)
    recovering = AbandonAnswer("still recovering our own events from the others")
    assert tracker.may_abandon(recovering) == recovering.why
    taken = AbandonAnswer(None, partner=1, silent=31.0)
    assert tracker.may_abandon(taken) == Gone(1, "Bob", silent=31.0)
    early = AbandonAnswer("Bob (seat 1) was heard 6.0 s ago", partner=1, silent=6.0, wait=24.0)
    assert tracker.may_abandon(early) == "Bob is still answering (an abandon needs them gone)"
    tracker.suspected.add(1)
    assert tracker.may_abandon(early) == Gone(1, "Bob", silent=6.0, wait=24.0)
    assert Tracker(("Ann", "Bob"), None).may_abandon(taken) == "a spectator only watches"


def test_a_table_opened_on_a_round_the_player_sits_out_does_not_say_go() -> None:
    """A player dropped, then back (``nertz resume``: a fresh table on the round it is out
    of), read "round 1 is dealt — go!" while every key answered "you are not playing this
    round": the status line says it sits the round out."""
    config = PeerConfig(suspect_after=0.5, drop_after=1.0, phase_timeout=5.0)
    net = PeerNetwork(3, seed=6, rules=Rules(target=None, rounds=3), config=config)
    net.run(dealt)
    cy = net.peers[2]
    net.silence(2)
    net.run(lambda _: 2 in net.peers[0].final.dropped)
    net.silenced.discard(2)  # it comes back, learns it was dropped, asks to rejoin
    net.run(lambda _: 2 in cy.final.dropped and 2 in cy.final.rejoining)
    number = cy.tentative.round.number
    assert cy.view is not None and not cy.view.active[2]
    table = TableController(tuple(m.name for m in net.spec.members), 2, Shown(), symbols=False)
    status = table.view(cy, net.now).status
    assert status == f"round {number} is dealt without you: you sit this one out"
    # The players still in read "go!" on a table opened on the same round.
    ann = TableController(tuple(m.name for m in net.spec.members), 0, Shown(), symbols=False)
    assert ann.view(net.peers[0], net.now).status == f"round {number} is dealt — go!"
