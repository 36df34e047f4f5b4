"""A pass on the behalf of a player who plays nothing (RULES.md: everyone stuck; docs/protocol.md
§8.7, *a pass on a member's behalf*, and §13, *a member that never passes*).

A member stuck by its own pass may sign ``P@S`` once S has played no card for ``phase_timeout``
with every other active seat stuck: the table (``Table.play``) counts it only then, and S
stays stuck through rotations until it plays a card. The rules engine's rule first, then the
wire, then real peer cores on the deterministic network of ``peer_helpers`` (the honest
signer's clock, a hostile signer), then the simulator: an idle or stock-turning player at 2,
3 and 4 players, whose games were held open for good before.
"""

from __future__ import annotations

import math

import msgpack  # type: ignore[import-untyped]
import pytest
from helpers_rules import assert_illegal, script, table_from
from peer_helpers import Paused, PeerNetwork, PuppetPeer, log_sources

from p2p_nertz.audit import LogSource, audit
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.bots import BotDriver, Pacing, make_strategy
from p2p_nertz.bots.base import Strategy
from p2p_nertz.errors import NotationError
from p2p_nertz.protocol.bodies import Play, encode_body, held_ids, parse_body
from p2p_nertz.protocol.effects import Rejected, Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Pile, RoundStatus, Rules, Table
from p2p_nertz.sim.invariants import check, log_files
from p2p_nertz.sim.network import QUICK_TIMERS, SimConfig, SimResult, Simulation
from p2p_nertz.ui import TableController
from p2p_nertz.ui.keys import ENTER, PlayMove
from p2p_nertz.ui.tracker import PASSED_FOR_YOU, PASSED_TURNS_FOR_YOU, Tracker, status_line
from p2p_nertz.ui.view import passed_for_words

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: Stuck: no card of it fits anywhere, and nothing in the lake.
STUCK = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 2C 3C 4C | W: 5D 6D"
#: Passed too, with an ace on work pile 2 (``2>L``: a card kept in the lake).
ACE = "N: KS | 1: 2D | 2: AD | 3: 4D | 4: 4H | S: 2C 3C | W: 5D 6D"
#: The idle seat: its ace on work pile 2 would go to the lake, its Nerts 9S onto 10H.
IDLE = "N: QD 9S | 1: 10H | 2: AC | 3: 4D | 4: 4H | S: 5C 6C 7C | W: 2H"


def _passed_for_2() -> Table:
    """Seats 0 and 1 stuck by their own passes, seat 2 then passed for by seat 0."""
    table, plays = script(table_from(STUCK, ACE, IDLE), "0 P", "1 P", "0 P@2")
    assert plays[-1].rotated and plays[-1].seat == 0 and plays[-1].move == Move.pass_for(2)
    return table


# -- the rule (rules engine) ----------------------------------------------------------------


def test_pass_for_counts_only_while_every_other_player_is_stuck_by_its_own_pass() -> None:
    table = table_from(STUCK, ACE, IDLE)
    assert_illegal(table, 0, "P@2", "seat 0 has not passed itself")
    table, _ = script(table, "0 P")
    assert_illegal(table, 0, "P@2", "seat 1 has not passed")
    assert_illegal(table, 2, "P@2", "a seat passes for itself with P")
    assert_illegal(table, 0, "P@5", "seat 5 is not playing this round")
    out = table.with_active(1, False)
    assert_illegal(out, 0, "P@1", "seat 1 is not playing this round")
    table, (play,) = script(table, "1 P @9")
    table, (play,) = script(table, "1 P@2 @10")  # (seat 1 is stuck by its own pass too)
    assert play.rotated and play.ended is None
    assert table.passed_for == (2,) and table.stuck == (False, False, True)
    assert table.rotations == 1 and table.clock == 10


def test_pass_for_in_turn_based_play_counts_only_on_that_seats_turn() -> None:
    # (Session 32 refused it in turn-based play, where a member that never moves then held
    # the table for good: the turn-based tests at the end of this file.)
    table = table_from(STUCK, IDLE, rules=Rules(turn_based=True))
    assert table.turn == 0
    assert_illegal(
        table, 0, "P@1", "it is seat 0's turn: a pass for seat 1 counts only on its turn"
    )


def test_pass_for_stands_through_rotations_and_the_blocked_count_runs() -> None:
    table = _passed_for_2()
    cycle = max(len(t.stock) + len(t.waste) for t in table.tableaux)
    rotations = table.rotations
    while not table.over:
        # The others rotate at their own pace: the idle seat needs no new pass.
        table, (_, second) = script(table, "0 P", "1 P")
        assert second.rotated and table.passed_for == (2,)
        rotations += 1
        assert table.rotations == rotations
    assert table.status is RoundStatus.BLOCKED and rotations == cycle


def test_pass_for_is_not_withdrawn_by_what_plays_no_card_of_the_seat() -> None:
    table = _passed_for_2()
    # Its stock turned, a false call, the pass made again: no card played.
    table, _ = script(table, "2 S", "2 X", "0 P", "0 P@2")
    assert table.passed_for == (2,) and table.stuck == (True, False, True)
    # Another seat's lake card: the others' own passes go stale (RULES.md), not this one.
    table, (kept,) = script(table, "1 2>L")
    assert kept.unstuck == (0,)
    assert table.passed_for == (2,) and table.stuck == (False, False, True)


@pytest.mark.parametrize("move", ["2>L", "N>1"])
def test_pass_for_is_withdrawn_by_a_card_of_the_seat(move: str) -> None:
    table, _ = script(_passed_for_2(), "0 P")
    table, (play,) = script(table, f"2 {move}")
    assert table.passed_for == () and table.stuck[2] is False
    assert table.rotations == 0  # a card played: the blocked count starts again
    assert play.unstuck == ((0,) if move == "2>L" else ())


def test_pass_for_signed_only_by_a_seat_stuck_by_its_own_pass() -> None:
    table, _ = script(_passed_for_2(), "0 P")
    # Seat 2 is stuck only by a pass made for it: it cannot pass for seat 1.
    assert_illegal(table, 2, "P@1", "seat 2 is stuck by a pass on its behalf")
    table, (play,) = script(table, "0 P@1")
    assert play.rotated and table.passed_for == (1, 2)
    # Everyone but seat 0 stuck by passes on their behalf: nobody may pass for seat 0.
    assert_illegal(table, 1, "P@0", "seat 1 is stuck by a pass on its behalf")
    table, (play,) = script(table, "0 P")
    assert play.rotated and table.stuck == (False, True, True)


def test_pass_for_ends_when_the_seat_leaves_and_a_repeat_changes_nothing() -> None:
    table = _passed_for_2()
    again, (play,) = script(table, "1 P@2")
    assert not play.rotated and again.passed_for == table.passed_for
    assert again == Table.parse(str(table).replace("clock=3", f"clock={again.clock}"))
    out = table.with_active(2, False)
    assert out.passed_for == () and out.stuck == (False, False, False)


def test_pass_for_shown_at_the_table() -> None:
    table = _passed_for_2()
    assert status_line(table, 2, "") == PASSED_FOR_YOU
    assert status_line(table, 2, "illegal move: W>L", refused=True) == "illegal move: W>L"
    assert status_line(table, 0, "") != PASSED_FOR_YOU


def test_pass_for_in_the_notation() -> None:
    assert str(Move.parse("p@3")) == "P@3" and Move.parse("P@3") == Move.pass_for(3)
    assert Move.pass_for(3).behalf == 3 and Move.pass_().behalf is None
    with pytest.raises(NotationError, match="not a move"):
        Move.parse("P@")
    table = _passed_for_2()
    assert "2> passed " in str(table)
    assert Table.parse(str(table)) == table


# -- the wire (the stuck body's optional seat) ---------------------------------------------


def _wire(body: Play) -> object:
    """``body`` encoded and decoded as the envelope does (arrays as tuples)."""
    return msgpack.unpackb(msgpack.packb(encode_body(body)), use_list=False)


def test_pass_for_on_the_wire() -> None:
    frontier, ids = (3, 4, 5), (b"\x01" * 8, b"\x02" * 8, b"\x03" * 8)
    own = Play(frontier, 1, Move.pass_(), frontier_ids=ids)
    behalf = Play(frontier, 1, Move.pass_for(2), frontier_ids=ids)
    assert len(encode_body(own)) == 2  # an own pass is the bytes it always was
    assert encode_body(behalf)[2] == 2
    assert parse_body(Kind.STUCK, _wire(behalf), 3) == behalf  # type: ignore[arg-type]
    assert parse_body(Kind.STUCK, _wire(own), 3) == own  # type: ignore[arg-type]
    head = _wire(own)
    assert isinstance(head, tuple)
    for bad, words in [(3, "the seat passed for"), ("2", "the seat passed for"), (-1, "seat")]:
        with pytest.raises(ValueError, match=words):
            parse_body(Kind.STUCK, (*head, bad), 3)
    with pytest.raises(ValueError, match="a stuck body"):
        parse_body(Kind.STUCK, (*head, 1, 1), 3)


# -- real peer cores: who signs it, and when (protocol/behalf.py) --------------------------

ONE_ROUND = Rules(target=None, rounds=1)
TIMEOUT = QUICK_TIMERS.phase_timeout


def _dealt(factories: dict[int, type[Peer]] | None = None) -> PeerNetwork:
    """Three members dealt in, their bots paused (the test plays every move)."""
    bots: dict[int, Strategy] = {s: Paused(Rng(derive_seed("pass-for", s))) for s in range(3)}
    net = PeerNetwork(
        3, seed=7, rules=ONE_ROUND, strategies=bots, config=QUICK_TIMERS, factories=factories
    )
    net.run(
        lambda n: all(
            p.final.phase is Phase.PLAY and len(p.final.round.ready) == 3 for p in n.peers
        )
    )
    return net


def _table(peer: Peer) -> Table:
    table = peer.final.round.table
    assert table is not None
    return table


def _body(net: PeerNetwork, seat: int, move: Move) -> Play:
    """``seat``'s event body for ``move`` in round 1, with what its peer holds as frontier."""
    feeds = [net.peers[seat].events(q) for q in range(net.n)]
    frontier = tuple(len(f) for f in feeds)
    return Play(frontier, 1, move, frontier_ids=held_ids(feeds, frontier))


def _passes_for(net: PeerNetwork) -> list[tuple[int, int]]:
    """(signer, seat passed for) of every pass on another's behalf in the members' feeds."""
    held = {m for p in net.peers for q in range(net.n) for m in p.events(q)}
    return sorted(
        (net.spec.seat_of(m.author), m.body[2])
        for m in held
        if m.kind is Kind.STUCK and len(m.body) == 3
    )


def test_pass_for_signed_by_honest_members_only_after_phase_timeout_then_withdrawn() -> None:
    net = _dealt()
    net.play(0, Move.pass_())
    net.play(1, Move.pass_())
    # The first moment a member's final fold shows everyone but seat 2 stuck: no member's
    # clock can have run phase_timeout on it before then.
    net.run(lambda n: any(_table(p).stuck == (True, True, False) for p in n.peers))
    first = net.now
    while not _passes_for(net):
        assert net.step() and net.now < first + TIMEOUT + 5.0, "nobody passed for seat 2"
    assert net.now >= first + TIMEOUT
    assert {seat for _, seat in _passes_for(net)} == {2}
    net.run(lambda n: all(_table(p).passed_for == (2,) for p in n.peers))
    for p in net.peers:
        table = _table(p)
        assert table.rotations == 1 and table.stuck == (False, False, True)
        assert p.final.violations == ()
    # What the players read: the one passed for, and the others.
    names = tuple(m.name for m in net.spec.members)
    idle, other = Tracker(names, 2), Tracker(names, 0)
    idle.take(net.effects[2], net.peers[2].final)
    other.take(net.effects[0], net.peers[0].final)
    assert any("passed for you (play a card to take it back)" in m for m in idle.messages)
    said = f"{names[2]} has played nothing for a while, everyone else stuck: "
    assert any(m.startswith(said) and m.endswith(f"passed for {names[2]}") for m in other.messages)
    # Seat 2 plays a card: the pass made for it is withdrawn at every member.
    net.run(lambda n: not n.peers[2].player.rotation_pending())
    for _ in range(60):
        view = net.peers[2].view
        assert view is not None
        cards = [m for m in view.card_moves(2) if m.is_lake or m.source in (Pile.NERTS, Pile.WASTE)]
        if cards:
            net.play(2, cards[0])
            break
        net.play(2, Move.turn())
    else:
        raise AssertionError("seat 2 never had a card to play")
    net.run(lambda n: all(_table(p).passed_for == () for p in n.peers))
    for p in net.peers:
        assert not _table(p).stuck[2] and p.final.violations == ()


def test_pass_for_made_early_or_for_oneself_is_refused_by_every_fold_and_named() -> None:
    net = _dealt({0: PuppetPeer})
    net.play(0, Move.pass_())
    net.run(lambda n: all(_table(p).stuck[0] for p in n.peers))
    net.emit(0, _body(net, 0, Move.pass_for(2)))  # seat 1 has not passed
    net.emit(0, _body(net, 0, Move.pass_for(0)))
    net.run(lambda n: all(len(p.final.violations) == 2 for p in n.peers))
    for p in net.peers:
        early, own = p.final.violations
        assert early.seat == own.seat == 0
        assert "P@2: seat 1 has not passed" in early.reason
        assert "P@0: a seat passes for itself with P" in own.reason
        table = _table(p)
        assert table.passed_for == () and table.stuck == (True, False, False)
        assert table.rotations == 0
    # A copy of the first one with its signature changed is no event of seat 0's at all.
    wire = next(m.wire for m in net.peers[0].events(0) if m.kind is Kind.STUCK and len(m.body) == 3)
    forged = wire[:-1] + bytes([wire[-1] ^ 1])
    held = len(net.peers[1].events(0))
    effects = net.deliver(1, forged)
    assert any(isinstance(e, Rejected) for e in effects)
    assert len(net.peers[1].events(0)) == held
    # The audit of the members' logs names seat 0, for those two passes, and nobody else.
    report = audit(log_sources(net))
    assert {f.seat for f in report.errors} == {0}
    assert any("P@2" in f.detail for f in report.errors)


# -- the simulator: a player who never plays, whose games were held open for good ----------


class Idle(Strategy):
    """A player who looks at the board and never moves (nor passes)."""

    def choose(self, table: Table, seat: int) -> Move | None:
        return None


class StockTurner(Strategy):
    """A client that turns its stock for ever, legally, and plays no card."""

    def choose(self, table: Table, seat: int) -> Move | None:
        t = table.tableaux[seat]
        return Move.turn() if t.stock or t.waste else None


class _OneSlow(Simulation):
    """A simulation whose last seat plays with ``strategy`` instead of the usual bot."""

    def __init__(self, config: SimConfig, strategy: Strategy) -> None:
        super().__init__(config)
        pacing = Pacing(config.speed)
        self.bots[config.players - 1] = BotDriver(strategy, pacing, wait_for_deals=False)


def _stuck_sent(result: SimResult) -> list[tuple[float, int, int | None]]:
    """(time, signer, seat passed for or ``None``) of every pass first sent, in time order."""
    seen: dict[bytes, tuple[float, int, int | None]] = {}
    for at, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.data not in seen:
            m = decode_message(effect.data)
            if m.kind is Kind.STUCK and result.spec.seat_of(m.author) == seat:
                seen[effect.data] = (at, seat, m.body[2] if len(m.body) == 3 else None)
    return sorted(seen.values())


@pytest.mark.parametrize(
    ("players", "seed", "slow"),
    [(2, 2, Idle), (3, 10, Idle), (4, 10, Idle), (2, 2, StockTurner)],
)
def test_pass_for_ends_a_game_one_player_never_plays_a_card_in(
    players: int, seed: int, slow: type[Strategy]
) -> None:
    config = SimConfig(players=players, seed=seed, peer=QUICK_TIMERS, record_effects=True)
    result = _OneSlow(config, slow(Rng(seed))).run()
    assert check(result) == [] and result.finished  # (the audit of every log included)
    assert result.audit is not None and result.audit.valid
    idle = players - 1
    sent = _stuck_sent(result)
    passed_for = [(at, signer) for at, signer, behalf in sent if behalf is not None]
    assert passed_for and all(behalf in (None, idle) for _, _, behalf in sent)
    for at, signer in passed_for:
        # Signed by a member stuck itself, phase_timeout at least after the last pass that
        # left only the idle seat loose (its final fold held that pass later still).
        assert signer != idle
        last = max(t for t, s, behalf in sent if behalf is None and t < at)
        assert at - last >= TIMEOUT


# -- turn-based play: a member that never moves on its turn (RULES.md: turn-based play) -----

TURNS = Rules(turn_based=True)


def test_turn_passed_for_skips_the_seat_until_it_passes_itself_back() -> None:
    table = table_from(STUCK, STUCK, IDLE, rules=TURNS)
    assert table.turn == 0
    assert_illegal(table, 1, "P@2", "it is seat 0's turn: a pass for seat 2 counts only")
    table, (play,) = script(table, "1 P@0")
    assert play.seat == 1 and not play.rotated
    assert table.passed_for == (0,) and table.stuck == (True, False, False) and table.turn == 1
    again, _ = script(table, "2 P@0")  # a repeat: it stands already
    assert again.passed_for == (0,) and again.turn == 1
    # Seat 0's turns are skipped: 1, 2, 1, ...
    table, _ = script(table, "1 S", "2 S")
    assert table.turn == 1
    assert_illegal(table, 0, "S", "it is seat 1's turn")  # (a card move out of turn: no)
    assert_illegal(table, 0, "P@1", "seat 0 is stuck by a pass on its behalf")
    # Its own pass, out of turn, takes its turns back; the turn stays where it is.
    table, (back,) = script(table, "0 P")
    assert back.seat == 0 and not back.rotated
    assert table.passed_for == () and table.stuck == (True, False, False) and table.turn == 1
    table, _ = script(table, "1 S", "2 S")
    assert table.turn == 0


def test_turn_passed_for_at_two_players_the_other_plays_on_and_rotates() -> None:
    table = table_from(STUCK, STUCK, rules=TURNS)
    table, _ = script(table, "1 P@0")
    assert table.turn == 1 and table.passed_for == (0,)
    table, (_, play) = script(table, "1 S", "1 P")  # seat 1 moves turn after turn
    assert play.rotated and table.stuck == (True, False) and table.passed_for == (0,)
    assert table.turn == 1


def _plays_sent(result: SimResult) -> list[float]:
    """When each move, claim or own pass (not one on another's behalf) was first sent."""
    seen: dict[bytes, float] = {}
    for at, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.data not in seen:
            m = decode_message(effect.data)
            own = m.kind is not Kind.STUCK or len(m.body) != 3
            ours = result.spec.seat_of(m.author) == seat
            if m.kind in (Kind.MOVE, Kind.CLAIM, Kind.STUCK) and own and ours:
                seen[effect.data] = at
    return sorted(seen.values())


class Frozen(Strategy):
    """A member that never moves at all, connected and beating: no move, no pass."""

    def choose(self, table: Table, seat: int) -> Move | None:
        return None

    def decide(self, table: Table, seat: int) -> Move | None:
        return None


class AwayOnce(Strategy):
    """Away until its turn is passed for, then back: a pass, and the greedy bot's moves."""

    def __init__(self, rng: Rng) -> None:
        super().__init__(rng)
        self.bot = make_strategy("greedy", rng)
        self.back = False

    def choose(self, table: Table, seat: int) -> Move | None:
        return self.bot.choose(table, seat)

    def decide(self, table: Table, seat: int) -> Move | None:
        self.back = self.back or seat in table.passed_for
        return super().decide(table, seat) if self.back else None


@pytest.mark.parametrize(("players", "slow"), [(2, Frozen), (3, Frozen), (3, AwayOnce)])
def test_turn_passed_for_ends_a_turn_based_game_a_member_never_moves_in(
    players: int, slow: type[Strategy]
) -> None:
    # On main the table waited for the member's turn for good (the simulation's time ran
    # out with one move in the round's log, the game never over).
    rules = Rules(turn_based=True, target=None, rounds=1)
    config = SimConfig(players=players, seed=2, peer=QUICK_TIMERS, rules=rules, record_effects=True)
    result = _OneSlow(config, slow(Rng(2))).run()
    assert check(result) == [] and result.finished and result.violations == []
    assert result.audit is not None and result.audit.valid
    idle = players - 1
    sent = _stuck_sent(result)
    passed_for = [(at, signer) for at, signer, behalf in sent if behalf is not None]
    assert passed_for and all(behalf in (None, idle) for _, _, behalf in sent)
    assert all(signer != idle for _, signer in passed_for)
    plays = _plays_sent(result)
    for at, _ in passed_for:
        # Signed only once no move was made for phase_timeout (the turn stood still).
        assert at - max(t for t in plays if t < at) >= TIMEOUT
    final = next(p for p in result.peers if p is not None).final
    moved = [e for e in final.round.log if e is not None and e[0] == idle]
    if players == 2:
        # The replay of the logs names it in turn-based words.
        files = log_files(result)
        replay = load([LogSource.from_bytes(f"p{s + 1}.log", d) for s, d in enumerate(files)])
        assert isinstance(replay, Replay)
        notes = [n for step in replay.steps for n in step.notes if n.startswith("passed for")]
        name = result.spec.members[idle].name
        assert notes and notes[0] == f"passed for {name}: its turn stood still"
    if slow is AwayOnce:
        # Back with its own pass, out of turn, then its turns again: moves of its own.
        assert moved[0][1] == Move.pass_() and len(moved) > 1
    else:
        assert moved == []


def test_turn_passed_for_shown_at_the_table() -> None:
    table, _ = script(table_from(STUCK, STUCK, rules=TURNS), "1 P@0")
    assert status_line(table, 0, "") == PASSED_TURNS_FOR_YOU
    assert status_line(table, 1, "") != PASSED_TURNS_FOR_YOU
    said = passed_for_words("you", "Ann", turns=True)
    assert said.startswith("you did not move on your turn") and "p to take them back" in said


class _Shown:
    def show(self, view: object) -> None:
        pass


def test_a_pass_for_typed_at_the_table_before_the_minute_says_how_long_is_left() -> None:
    """Session 32's ``P@S`` typed at the table (``:P@2``): the rules engine alone takes it as
    soon as everyone else has passed, but a player is passed for only after a minute without
    a card (RULES.md). The table asks the core (``LocalPlayer.pass_for_wait``: the wait the
    honest member's own pass counts, protocol/behalf.py), refuses it with how long is left,
    sends nothing, and takes it once the minute is over."""
    net = _dealt()
    net.play(0, Move.pass_())
    net.play(1, Move.pass_())
    net.run(lambda n: all(_table(p).stuck == (True, True, False) for p in n.peers))
    peer = net.peers[0]

    def started(n: PeerNetwork) -> bool:  # (seat 0's wait has begun: counted from a tick)
        wait = peer.player.pass_for_wait(n.now)
        return wait is not None and wait[1] < TIMEOUT

    net.run(started)
    names = tuple(m.name for m in net.spec.members)
    table = TableController(names, 0, _Shown(), symbols=False)

    def typed(now: float) -> list[object]:
        requests: list[object] = []
        for key in (":", "P", "@", "2", ENTER):
            requests += table.press(key, peer, now)
        return requests

    wait = peer.player.pass_for_wait(net.now)
    assert wait is not None and wait[0] == 2 and 0 < wait[1] <= TIMEOUT
    assert typed(net.now) == []
    left = math.ceil(wait[1])
    assert table.keys.status == (
        f"not yet: a pass for {names[2]} counts after a minute without a card; "
        f"in {left} s (the game makes it)"
    )
    assert _table(peer).passed_for == () and _passes_for(net) == []
    # Once the minute has run on the core's clock, the same keys send the pass.
    assert typed(net.now + wait[1]) == [PlayMove(Move.pass_for(2))]
    assert table.keys.status == "passed for seat 2"
    # A pass the rules engine refuses says the reason (it said "illegal: P@1" alone).
    for key in (":", "P", "@", "1", ENTER):
        assert table.press(key, peer, net.now) == []
    assert table.keys.status == (
        "illegal: seat 2 has not passed: P@1 counts only once every other player is stuck"
    ), table.keys.status
