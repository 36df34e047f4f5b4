"""The table gone (docs/protocol.md §9.9): a member that hears nobody still in the game for
``gone_after`` while it listens stops waiting, saying why, and signs nothing for it.

Pure tests on a fake clock: the in-memory network of cores (:class:`PeerNetwork`) and the
simulator's partitions. The real processes are in ``tests/test_cli_gone.py``.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
from peer_helpers import PeerNetwork

from p2p_nertz.deck.keys import round_context
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.gone import (
    GoneReason,
    Listening,
    TableGone,
    _why,
    alone_in_game,
    heard_lately,
    table_gone,
)
from p2p_nertz.protocol.local import AbandonAnswer
from p2p_nertz.protocol.peer import Peer, PeerConfig, Send
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rules import Rules, Termination
from p2p_nertz.sim import Faults, Freeze, Partition, SimConfig, Simulation
from p2p_nertz.sim.invariants import check
from p2p_nertz.ui import TableController, TableView, render
from p2p_nertz.ui.controller import Quit
from tests.test_folds_dropped_past_cut import _spec

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)
BEAT = QUICK.beat_interval


def _in_play(net: PeerNetwork) -> bool:
    return all(p.final.phase is Phase.PLAY for p in net.peers) and net.now > 2.0


def _ticks(peer: Peer, start: float, end: float) -> float | None:
    """Tick ``peer`` every beat interval from ``start`` until ``end``, as a runtime does (its
    effects go nowhere: nobody is left); the first time it finds the table gone, if any."""
    now = start
    while now < end:
        peer.tick(now)
        if peer.table_gone(now) is not None:
            return now
        now += BEAT
    return None


def _woken(seed: int) -> tuple[PeerNetwork, Peer, float]:
    """A game of three where seat 2 falls asleep in play (its process runs nothing) while the
    others vote it out and finish the round. Returns the network, the sleeper as it was when
    it fell asleep (a new one each call: the tests feed and tick it), and when the others
    were done."""
    net, inputs = _slept(seed)
    return net, net.clone(2, inputs), net.now


@functools.cache
def _slept(seed: int) -> tuple[PeerNetwork, int]:
    """:func:`_woken`'s game, played once a seed (ten tests read three games; nothing they
    do changes the network): the network and how many inputs seat 2 had taken asleep."""
    net = PeerNetwork(3, seed=seed, rules=Rules(target=None, rounds=1), config=QUICK)
    net.run(_in_play)
    inputs = len(net.inputs[2])
    net.silence(2)
    net.run_until_over()
    assert all(2 in p.final.dropped for p in net.peers[:2])
    return net, inputs


def _waiting(net: PeerNetwork, sleeper: Peer) -> list[bytes]:
    """What waited in the sleeper's sockets: the others' events. (The network's seat 2 ran on
    after the clone's inputs, its sends lost: its own later events are no sleeper's; fed to
    it they are our key's events signed elsewhere, and it stops, recovery.Doubt.)"""
    own = sleeper.spec.peer_ids[sleeper.seat]
    return [wire for wire in net.event_wires() if decode_message(wire).author != own]


@pytest.mark.parametrize("seed", [1, 2, 5])
@pytest.mark.parametrize("all_of_it", [False, True])
def test_table_gone_a_member_woken_after_its_drop_stops_waiting(seed: int, all_of_it: bool) -> None:
    net, sleeper, done = _woken(seed)
    wake = done + 20.0  # the others have gone home meanwhile
    # Asleep, it heard nobody for all that time; the silence it counts starts at the wake:
    # its timer may fire before it reads what waited in its sockets.
    assert sleeper.silent_for(wake) > QUICK.gone_after
    sleeper.tick(wake)
    assert sleeper.table_gone(wake) is None
    # What waited in its sockets arrives as it wakes: the whole game, or (its sockets full)
    # only the start, up to the votes that put it out.
    for wire in _waiting(net, sleeper):
        sleeper.feed(wire, wake)
        if not all_of_it and 2 in sleeper.tentative.dropped:
            break
    assert sleeper.table_gone(wake) is None
    assert 2 in sleeper.tentative.dropped  # it learnt the drop, asks to rejoin: nobody answers
    ended = sleeper.tentative.phase is Phase.OVER
    assert ended is all_of_it
    bound = QUICK.drop_after if ended else QUICK.gone_after  # only the acks are missing
    gone_at = _ticks(sleeper, wake, wake + 2 * QUICK.gone_after)
    assert gone_at is not None
    assert bound <= gone_at - wake < bound + 2 * BEAT
    gone = sleeper.table_gone(gone_at)
    assert gone is not None
    assert gone.reason is GoneReason.DROPPED
    assert gone.seats == (0, 1) and gone.bound == bound and gone.ended is ended
    went = "and ended" if ended else "on"
    assert gone.why.startswith(f"you were voted out while away; the game went {went} without you")
    assert sleeper.final.phase is not Phase.OVER  # (nothing it signed ends anything)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_table_gone_not_when_asked_on_waking_before_any_input(seed: int) -> None:
    # The runtime asks after each input it applies; an input whose log write a SIGSTOP cut
    # in two ends after the wake, and asks then, before the peer has read or ticked anything
    # (chaos seed 1855: a node stopped 16 s, gone_after 12 s, stopped on waking, "nobody
    # heard for 16 s", exit 3, while what waited in its sockets ended the game on its own
    # table). The break is the question's too.
    _, sleeper, done = _woken(seed)
    wake = done + 20.0
    assert sleeper.silent_for(wake) > QUICK.gone_after
    assert sleeper.table_gone(wake) is None
    assert sleeper.table_gone(wake + QUICK.drop_after) is None  # still no input: a break
    # Listening from the wake, with nobody to hear: gone after gone_after, not before.
    gone_at = _ticks(sleeper, wake, wake + 2 * QUICK.gone_after)
    assert gone_at is not None
    assert QUICK.gone_after <= gone_at - wake < QUICK.gone_after + 2 * BEAT


def test_table_gone_listening_asked_after_a_break_counts_from_the_question() -> None:
    ears = Listening(0.0, gap=1.0)
    ears.saw(0.5)
    assert ears.since_at(1.4) == 0.0  # within the gap of the last input
    assert ears.since_at(30.0) == 30.0  # asleep since 0.5: listening starts now
    assert (ears.since, ears.last) == (0.0, 0.5)  # (a question records nothing)


def test_table_gone_the_table_says_why_and_that_q_quits() -> None:
    net, sleeper, done = _woken(1)
    wake = done + 20.0
    for wire in _waiting(net, sleeper):
        sleeper.feed(wire, wake)
        if 2 in sleeper.tentative.dropped:
            break
    gone_at = _ticks(sleeper, wake, wake + 2 * QUICK.gone_after)
    assert gone_at is not None
    gone = sleeper.table_gone(gone_at)
    assert gone is not None
    front = _Shown()
    table = TableController(tuple(m.name for m in net.spec.members), 2, front, symbols=False)
    assert table.node_stopped(gone) == []  # the table stays up to be read
    table.draw(sleeper, gone_at)
    view = front.views[-1]
    assert view.final and view.gone == "you were voted out while away; the game went on without you"
    assert view.messages[-1] == gone.why
    text = render(view, width=100).text()
    assert "q quits: you were voted out while away; the game went on without you" in text
    assert table.press("q", sleeper, gone_at) == [Quit()]


class _Shown:
    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


def test_table_gone_a_member_cut_off_alone_counts_its_silence_while_it_listens() -> None:
    # Seat 2 runs on, cut off alone (the others vote it out and finish): it finds the table
    # gone gone_after after it last heard them, with the reason "silent" (it never learnt its
    # drop), and signs nothing for it.
    net = PeerNetwork(3, seed=3, rules=Rules(target=None, rounds=1), config=QUICK)
    net.run(_in_play)
    net.silence(2)
    cut = net.now
    lonely = net.peers[2]
    heard = max(lonely.silent_for(cut), 0.0)
    net.run(lambda n: lonely.table_gone(n.now) is not None, within=60.0)
    gone = lonely.table_gone(net.now)
    assert gone is not None and gone.reason is GoneReason.SILENT
    assert net.now - cut + heard == pytest.approx(QUICK.gone_after, abs=2 * BEAT)
    names = [m.name for m in net.spec.members]
    who = f"{names[0]} (seat 0) and {names[1]} (seat 1) cannot be reached"
    assert gone.why.startswith(f"the others have left: {who} (nobody still in the game"), gone.why
    signed = len(lonely.events(2))
    lonely.tick(net.now + BEAT)
    assert len(lonely.events(2)) == signed  # the answer signs nothing


def test_table_gone_not_alone_in_the_game_after_a_drop_and_a_leave_it_is_over() -> None:
    # Seat 2 is voted out while cut off, then seat 1 leaves: seat 0 is the only member still
    # in, and the leave ends the game (§9.3, *Left alone*) on the rounds scored, though seat 2
    # talks again and may ask to rejoin at the next round (§9.8): the one left is not made to
    # wait for someone who may never come. Nothing to wait for, so never the table gone.
    net = PeerNetwork(3, seed=6, rules=Rules(target=None, rounds=3), config=QUICK)
    net.run(_in_play)
    net.silence(2)
    alone = net.peers[0]
    net.run(lambda n: all(2 in p.final.dropped for p in n.peers[:2]), within=60.0)
    scored = alone.final.game
    for effect in net.peers[1].leave(net.now):
        net.send(1, effect) if isinstance(effect, Send) else None
    net.run(lambda n: 1 in alone.final.left, within=30.0)
    net.silence(1)  # it went home: its process ends
    net.silenced.discard(2)  # seat 2 is back, talking
    end = net.now + 2 * QUICK.gone_after
    net.run(lambda n: n.now >= end or alone.table_gone(n.now) is not None, within=60.0)
    assert alone.table_gone(net.now) is None
    final = alone.final
    assert final.phase is Phase.OVER and final.left_alone == 1
    assert final.game.result is not None and final.game.result.totals == scored.totals
    assert final.game.history == scored.history and 2 not in final.rejoining
    assert net.peers[1].tentative.game == final.game  # the leaver's own fold ends the same


def test_table_gone_not_while_an_abandon_is_on_offer() -> None:
    # Two players, one gone: the abandon ends the game (§9.3); the table is not "gone" while
    # it is on offer, however long the silence.
    net = PeerNetwork(2, seed=4, rules=Rules(target=None, rounds=3), config=QUICK)
    net.run(_in_play)
    net.silence(1)
    peer = net.peers[0]
    start = net.now
    end = start + 2 * QUICK.gone_after
    net.run(lambda n: n.now >= end, within=60.0)
    assert peer.abandon_answer(net.now).why is None
    assert peer.table_gone(net.now) is None
    net.deliver(0, b"")  # (an input, so that the abandon below is timed now)
    peer.abandon(net.now)
    assert peer.final.phase is Phase.OVER
    assert peer.table_gone(net.now + QUICK.gone_after) is None  # over: nothing to wait for


def test_table_gone_listening_starts_again_after_a_break() -> None:
    ears = Listening(0.0, gap=1.0)
    for now in (0.25, 0.5, 1.4):
        ears.saw(now)
    assert ears.since == 0.0  # pauses up to the gap are no break
    ears.saw(30.0)  # asleep from 1.4 to 30
    assert ears.since == 30.0
    ears.saw(29.0)  # (an input timed earlier changes nothing)
    assert (ears.since, ears.last) == (30.0, 30.0)


# -- the simulator: partitions ---------------------------------------------------------------


def _partitioned(seed: int, length: float) -> Simulation:
    """A game of three where seat 0 is alone on its side of a partition of ``length`` s."""
    sides = (frozenset({0}), frozenset({1, 2}))
    faults = Faults(partitions=(Partition(4.0, 4.0 + length, sides),))
    config = SimConfig(
        players=3,
        seed=seed,
        faults=faults,
        peer=QUICK,
        rules=Rules(target=None, rounds=2),
        max_time=400.0,
    )
    return Simulation(config)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("length", [QUICK.drop_after / 2, QUICK.drop_after + 1.0, 7.0])
def test_table_gone_not_on_the_minority_side_of_a_partition_shorter_than_gone_after(
    seed: int, length: float
) -> None:
    assert length < QUICK.gone_after
    sim = _partitioned(seed, length)
    result = sim.run()
    result.violations = check(result)
    assert result.finished and not result.violations
    assert result.gone == []  # it waited, and heard the others again when it healed


@pytest.mark.parametrize("seed", [0, 1])
def test_table_gone_on_the_minority_side_of_a_longer_partition_and_the_others_go_on(
    seed: int,
) -> None:
    length = QUICK.gone_after + 5.0
    sim = _partitioned(seed, length)
    result = sim.run()
    result.violations = check(result)
    assert not result.violations
    assert [(seat, gone.reason) for _, seat, gone in result.gone] == [(0, GoneReason.SILENT)]
    at = result.gone[0][0]
    assert 4.0 + QUICK.gone_after <= at < 4.0 + length  # during the partition, not after it
    # The majority went on without it (the simulator lets the lone member run on: it only
    # notes when its runtime would have stopped).
    for peer in result.peers[1:]:
        assert peer is not None and peer.final.phase is Phase.OVER


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_table_gone_not_for_a_member_asleep_past_gone_after_that_wakes_to_a_live_table(
    seed: int,
) -> None:
    # Seat 0 sleeps twice gone_after (SIGSTOP) while the others play a game of three rounds:
    # it is voted out, wakes, hears them, rejoins at the next round and finishes with them.
    # Its silence counts from the wake: it never gives up.
    faults = Faults(freezes=(Freeze(0, 4.0, 2 * QUICK.gone_after),))
    config = SimConfig(
        players=3,
        seed=seed,
        faults=faults,
        peer=QUICK,
        rules=Rules(target=None, rounds=3),
        max_time=400.0,
    )
    result = Simulation(config).run()
    result.violations = check(result)
    assert result.finished and not result.violations
    assert result.gone == []
    sleeper = result.peers[0]
    assert sleeper is not None and 0 in sleeper.final.readmitted_at  # it rejoined
    assert all(p is not None and p.final.phase is Phase.OVER for p in result.peers)


def test_table_gone_names_the_members_waited_for_as_a_person_reads_them() -> None:
    names = ["Ann", "Bob", "Cy", "Dee", "Eve"]
    four = _why(GoneReason.SILENT, False, 25.0, [0, 1, 2, 3], names)
    assert four.startswith(
        "the others have left: Ann (seat 0), Bob (seat 1), Cy (seat 2) and Dee (seat 3) cannot"
    ), four
    one = _why(GoneReason.SILENT, False, 25.0, [4], names)
    assert one.startswith("the others have left: Eve (seat 4) cannot be reached"), one


def test_table_gone_heard_lately_counts_only_members_still_in_by_the_final_fold() -> None:
    # The answer after nearly every input: a member still in heard within drop_after says the
    # table is not gone; a member dropped that talks does not, nor do we; with nobody else
    # still in, table_gone looks further (whom it waits for then is its own rule).
    final = GameState(_spec(3))
    ears = Listening(0.0, gap=5.0)
    ask = {"seat": 0, "drop_after": 3.0}
    assert heard_lately(final, [0.0, 0.0, 0.0], ears, 2.9, **ask)  # not listened for long
    assert heard_lately(final, [0.0, 0.0, 0.0], ears, 10.0, **ask)  # a break: listening anew
    for t in range(1, 11):  # inputs without a break (our own ticks): listening since 0
        ears.saw(float(t))
    assert not heard_lately(final, [10.0, 1.0, 7.0], ears, 10.0, **ask)
    assert heard_lately(final, [10.0, 1.0, 7.5], ears, 10.0, **ask)
    final.dropped = {2: 0}
    assert not heard_lately(final, [10.0, 1.0, 9.9], ears, 10.0, **ask)  # seat 2 is out
    final.dropped = {1: 0, 2: 0}
    assert not heard_lately(final, [10.0, 9.9, 9.9], ears, 10.0, **ask)


def test_table_gone_not_for_a_member_alone_after_the_other_left_the_game_is_over() -> None:
    # Two players; seat 1 leaves in play and goes home. Seat 0 is the only member still in:
    # the leave ends the game (§9.3, *Left alone*), the round void, so the one left neither
    # plays on alone nor stops in play with no result (scripts/scan_real_liars.py seeds 45,
    # 73, 101: it stopped there, the table gone, exit 3, until session 32).
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), config=QUICK)
    net.run(_in_play)
    alone = net.peers[0]
    for effect in net.peers[1].leave(net.now):
        net.send(1, effect) if isinstance(effect, Send) else None
    net.run(lambda n: 1 in alone.final.left, within=30.0)
    net.silence(1)
    net.run(
        lambda n: alone.final.phase is Phase.OVER or alone.table_gone(n.now) is not None,
        within=300.0,
    )
    assert alone.table_gone(net.now) is None
    assert alone.final.phase is Phase.OVER
    assert alone.final.left_alone == 1 and alone.final.round.number == 1
    result = alone.final.game.result
    assert result is not None and result.termination is Termination.ABANDONED
    # The round void, no round scored: 0-0, and the leaver forfeits the game (rules.md).
    assert alone.final.game.history == () and result.winners == (0,)


def test_table_gone_never_for_the_one_member_still_in_it_finishes_the_game() -> None:
    # The rule (§9.9, *alone in the game*): every other member voted out (at two players the
    # other one on proof, §9.4: the real scan's seed 81, which stopped there, exit 3, until
    # session 33) leaves nobody to wait for: the one left plays the round out and the fold
    # ends the game. Silence then says nothing; with a member still in, it still does, and so
    # it does for a member that is out itself.
    ears = Listening(0.0, gap=5.0)
    for t in range(1, 101):  # listening without a break for 100 s
        ears.saw(float(t))
    no = AbandonAnswer("no partner")

    def gone(final: GameState, seat: int = 0) -> TableGone | None:
        heard = [0.0] * final.spec.seats
        return table_gone(
            final, lambda: final, heard, ears, 100.0, seat=seat, drop_after=3.0,
            gone_after=9.0, names="ABC", abandon=lambda: no,
        )  # fmt: skip

    two = GameState(_spec(2))
    two.dropped = {1: 20}
    assert alone_in_game(two, 0) and gone(two) is None
    three = GameState(_spec(3))
    three.dropped = {1: 20}  # seat 2 still in, and silent
    assert not alone_in_game(three, 0)
    answer = gone(three)
    assert answer is not None and answer.seats == (2,)
    three.dropped = {1: 20, 2: 30}
    assert alone_in_game(three, 0) and gone(three) is None
    out = GameState(_spec(2))
    out.dropped = {0: 5, 1: 20}  # we are out too: nobody holds the game for us
    assert not alone_in_game(out, 0) and gone(out) is not None
    # The same in a game of the dealerless shuffle (session 34; it stopped there before):
    # the one left is never waiting on anybody's shares, a round nobody left can open
    # ends blocked at once and a deal of two that loses a member ends the game.
    spec = _spec(2)
    shuffled = GameState(dataclasses.replace(spec, deal=Deal.SHUFFLE))
    context = round_context(spec.game_id, 1)
    shuffled.round.deck = DeckRound((0, 1), context, spec.rules.jokers, spec.peer_ids)
    shuffled.dropped = {1: 20}
    assert alone_in_game(shuffled, 0) and gone(shuffled) is None
