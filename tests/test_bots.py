"""Bots: the strategy registry, pacing, and the lookahead strategy (legal, finite, deterministic,
uses only what a player could know, and stronger than the greedy bot over paired deals)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Iterator, Sequence

import pytest
from helpers_rules import IDLE, check_invariants, table_from

from p2p_nertz.bots import STRATEGIES, Pacing, Strategy, make_strategy, register
from p2p_nertz.bots import base as bots_base
from p2p_nertz.bots.greedy import Greedy
from p2p_nertz.bots.lookahead import Lookahead, Weights
from p2p_nertz.match import Player, play_round, round_decks
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Lake, Move, RoundStatus, Rules, Table, Tableau

# -- helpers --------------------------------------------------------------------------------


class Checked(Strategy):
    """Wraps a strategy and checks every move it makes against the table it was shown.

    The table a bot is shown has the lake as it was a moment ago, so this is the contract: the
    move is legal in what the bot saw (the match then finds out whether it still is).
    """

    def __init__(self, inner: Strategy, counts: list[int]) -> None:
        super().__init__(inner.rng)
        self.inner = inner
        self.counts = counts
        self.name = inner.name

    def choose(self, table: Table, seat: int) -> Move | None:
        move = self.inner.choose(table, seat)
        self.counts[0] += 1
        if move is not None:
            if not table.over:
                assert move in table.legal_moves(seat), f"{move} is not legal for {seat}:\n{table}"
            # Table.play accepts it too (a call or a card in the air at T* included).
            table.play(seat, move, table.clock)
        return move

    def new_round(self) -> None:
        self.inner.new_round()


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Registers ``checked-<name>`` for every strategy; yields the count of decisions."""
    counts = [0]
    for name in list(STRATEGIES):

        def factory(rng: Rng, name: str = name) -> Strategy:
            return Checked(make_strategy(name, rng), counts)

        monkeypatch.setitem(STRATEGIES, f"checked-{name}", factory)
    yield counts


def drive(table: Table, bots: Sequence[Strategy], limit: int = 5000) -> Table:
    """Let the bots take turns on ``table`` (seat order, fresh lake) until the round ends."""
    for step in range(limit):
        seat = step % len(bots)
        if not table.active[seat]:
            continue
        move = bots[seat].choose(table, seat)
        if move is not None:
            table, _ = table.play(seat, move)
        if table.over:
            return table
    raise AssertionError(f"the round did not end in {limit} steps:\n{table}")


# -- the registry and pacing ----------------------------------------------------------------


def test_make_strategy_knows_greedy_and_lookahead() -> None:
    for name, cls in (("greedy", Greedy), ("lookahead", Lookahead)):
        a, b = make_strategy(name, Rng(1)), make_strategy(name, Rng(1))
        assert isinstance(a, cls) and a.name == name
        assert a is not b  # one instance per seat: strategies keep memory


def test_make_strategy_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown strategy 'nope' \(known: .*greedy.*lookahead"):
        make_strategy("nope", Rng(0))


def test_register_makes_a_strategy_available_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bots_base, "STRATEGIES", {})
    monkeypatch.setattr(bots_base, "STRATEGY_NAMES", ("waiter",))  # (the names' one home)

    @register("waiter")
    class Waiter(Strategy):
        def choose(self, table: Table, seat: int) -> Move | None:
            return None

    assert Waiter.name == "waiter"
    bot = bots_base.make_strategy("waiter", Rng(0))
    assert isinstance(bot, Waiter) and repr(bot) == "<Waiter 'waiter'>"
    with pytest.raises(ValueError, match=r"known: waiter\)"):
        bots_base.make_strategy("greedy", Rng(0))


@pytest.mark.parametrize("speed", [0, 11, -1, True, 5.0, "5", None])
def test_pacing_refuses_a_speed_outside_one_to_ten(speed: object) -> None:
    with pytest.raises(ValueError, match=r"speed must be 1\.\.10"):
        Pacing(speed)  # type: ignore[arg-type]


def test_pacing_faster_levels_move_and_react_sooner() -> None:
    levels = [Pacing(s) for s in range(1, 11)]
    assert Pacing().speed == 5
    assert levels[0].mean_delay_ms == 2500 and levels[-1].mean_delay_ms == 250
    for slow, fast in itertools.pairwise(levels):
        assert fast.mean_delay_ms < slow.mean_delay_ms
        assert fast.reaction_ms < slow.reaction_ms
    assert all(p.reaction_ms > 150 for p in levels)  # nobody sees the lake instantly


@pytest.mark.parametrize("speed", range(1, 11))
def test_pacing_delays_are_jittered_a_quarter_and_seeded(speed: int) -> None:
    pacing = Pacing(speed)
    mean = pacing.mean_delay_ms
    rng1, rng2 = Rng(42), Rng(42)
    first = [pacing.delay_ms(rng1) for _ in range(500)]
    assert first == [pacing.delay_ms(rng2) for _ in range(500)]
    low, high = mean + (-mean // 4), mean + mean // 4  # a quarter either way, floored
    assert all(max(1, low) <= d <= high for d in first)
    assert min(first) < mean < max(first)  # it does jitter
    assert abs(statistics.fmean(first) - mean) < mean / 20


# -- the lookahead bot: legal, finite, deterministic ----------------------------------------

VARIANTS = [
    pytest.param(Rules(), ["lookahead", "greedy"], id="2p"),
    pytest.param(Rules(), ["lookahead"] * 4, id="4 lookahead"),
    pytest.param(Rules(), ["lookahead", "greedy"] * 3, id="6p"),
    pytest.param(Rules(), ["lookahead"], id="solo"),
    pytest.param(Rules(jokers=2), ["lookahead", "greedy", "lookahead"], id="jokers"),
    pytest.param(Rules(jokers=1), ["lookahead"] * 2, id="one joker"),
    pytest.param(Rules(work_piles=5), ["lookahead", "greedy", "lookahead"], id="5 piles"),
    pytest.param(Rules(work_piles=6), ["lookahead", "lookahead", "greedy"], id="6 piles"),
    pytest.param(Rules(draw=1), ["lookahead", "greedy", "lookahead"], id="draw one"),
    pytest.param(Rules(pairs=True), ["lookahead", "greedy"] * 2, id="pairs"),
    pytest.param(Rules(rotate_alone=True), ["lookahead"] * 3, id="rotate alone"),
    pytest.param(Rules(nerts_bonus=10), ["lookahead", "greedy"] * 2, id="bonus"),
    pytest.param(Rules(draw=1, work_piles=6, jokers=2), ["lookahead"] * 8, id="8p mixed"),
]


@pytest.mark.parametrize(("rules", "names"), VARIANTS)
def test_lookahead_only_makes_legal_moves_and_every_round_ends(
    checked: list[int], rules: Rules, names: list[str]
) -> None:
    players = [Player(f"checked-{n}", speed=3 + 2 * (i % 4)) for i, n in enumerate(names)]
    for seed in range(6):
        rnd = play_round(rules, players, seed)
        assert rnd.table.status in (RoundStatus.NERTS, RoundStatus.BLOCKED)
        assert rnd.actions < 3000  # a round is a few hundred moves; no bot dawdles forever
        check_invariants(rnd.table)
    assert checked[0] > 0


def test_lookahead_rounds_are_deterministic_per_seed() -> None:
    rules = Rules(jokers=1)
    players = [Player("lookahead"), Player("greedy", speed=7), Player("lookahead", speed=3)]
    first = play_round(rules, players, seed=11, record=True)
    again = play_round(rules, players, seed=11, record=True)
    other = play_round(rules, players, seed=12, record=True)
    assert first.transcript == again.transcript and first.digest() == again.digest()
    assert first.score == again.score
    assert other.digest() != first.digest()


def test_lookahead_blocked_table_passes_and_the_round_ends_blocked() -> None:
    table = drive(table_from(IDLE, IDLE), [Lookahead(Rng(0)), Lookahead(Rng(1))])
    assert table.status is RoundStatus.BLOCKED


def test_lookahead_new_round_forgets_the_last_one() -> None:
    bot = Lookahead(Rng(0))
    table = table_from(IDLE, IDLE, rules=Rules(draw=1))
    drive(table, [bot, Greedy(Rng(1))])
    assert any(bot._cycle.cards or ()) and bot._passed  # private: the bot's memory
    bot.new_round()
    assert bot._cycle.cards is None and not bot._passed and bot._idle == 0


# -- the lookahead bot: decisions from the notation -----------------------------------------

#: Like IDLE, with no hearts or spades: the other seat, where the lake holds seat 1's hearts
#: and spades.
OTHER = "N: KC | 1: 2D | 2: 2C | 3: 4D | 4: 4C | S: 9D 9C | W: -"


def test_lookahead_plays_the_nerts_top_to_the_lake_first() -> None:
    table = table_from(
        "N: KD 5H | 1: 3S | 2: 9D | 3: 8D 7S | 4: QC | S: 2C 3C 4C | W: -",
        IDLE,
        lake="0H: AH/0 2H/0 3H/0 4H/0; 1S: AS/1 2S/1",
    )
    assert Lookahead(Rng(0)).choose(table, 0) == Move.parse("N>L@0H")


def test_lookahead_uncovers_a_place_for_the_nerts_top_card() -> None:
    # 5H and 7S can both go to the lake; only 7S uncovers the 8D the Nerts top 7C fits on.
    # The greedy bot takes the first lake card it finds (5H); the lookahead bot sees further.
    table = table_from(
        "N: KD 7C | 1: 6S 5H | 2: 9D | 3: 8D 7S | 4: QC | S: 2C 3C 4C | W: -",
        IDLE,
        lake="0H: AH/0 2H/0 3H/0 4H/0; 1S: AS/1 2S/1 3S/1 4S/1 5S/1 6S/1",
    )
    assert Greedy(Rng(0)).choose(table, 0) == Move.parse("1>L@0H")
    bot = Lookahead(Rng(0))
    assert bot.choose(table, 0) == Move.parse("3>L@1S")
    table, _ = table.play(0, Move.parse("3>L@1S"))
    assert bot.choose(table, 0) == Move.parse("N>3")


def test_lookahead_frees_a_pile_for_a_nerts_king() -> None:
    table = table_from("N: 5C KH | 1: 9S | 2: 10H | 3: 4D | 4: 4H | S: 9D 9H | W: -", IDLE)
    bot = Lookahead(Rng(0))
    assert bot.choose(table, 0) == Move.parse("1>2")
    table, _ = table.play(0, Move.parse("1>2"))
    assert bot.choose(table, 0) == Move.parse("N>1")


def test_lookahead_races_a_card_an_opponent_could_play_first() -> None:
    # 3S and 3H both go to the lake; seat 1 has a 3S face up (waste top), nobody a 3H.
    table = table_from(
        "N: KD KS | 1: 3H | 2: 3S | 3: 9D | 4: 9H | S: 2C | W: -",
        "N: KC | 1: 2D | 2: 2C | 3: 4D | 4: 4C | S: 9D | W: 3S",
        lake="1S: AS/1 2S/1; 1H: AH/1 2H/1",
    )
    assert Lookahead(Rng(0)).choose(table, 0) == Move.parse("2>L@1S")


def test_lookahead_aims_at_the_last_fitting_foundation() -> None:
    table = table_from(IDLE.replace("2: 2H", "2: 3C"), IDLE, lake="0C: AC/0 2C/0; 1C: AC/1 2C/1")
    assert Lookahead(Rng(0)).choose(table, 0) == Move.parse("2>L@1C")


def test_lookahead_plays_a_lake_card_before_calling_when_no_bonus_is_at_stake() -> None:
    table = table_from(
        "N: - | 1: 5H | 2: 9D | 3: 4D | 4: 4H | S: 9S | W: -", OTHER, lake="1H: AH/1 2H/1 3H/1 4H/1"
    )
    bot = Lookahead(Rng(0))
    assert bot.choose(table, 0) == Move.parse("1>L@1H")
    table, _ = table.play(0, Move.parse("1>L@1H"))
    assert bot.choose(table, 0) == Move.call()  # nothing left that scores


def test_lookahead_calls_at_once_when_a_bonus_is_at_stake_and_an_opponent_is_close() -> None:
    layout = "N: - | 1: 5H | 2: 9D | 3: 4D | 4: 4H | S: 9S | W: -"
    lake = "1H: AH/1 2H/1 3H/1 4H/1"
    close = OTHER.replace("N: KC", "N: KC 3C")  # two Nerts cards: could call in two moves
    far = OTHER.replace("N: KC", "N: KC 3C 5C 6C")
    bonus = Rules(nerts_bonus=10)
    assert Lookahead().choose(table_from(layout, close, lake=lake, rules=bonus), 0) == Move.call()
    far_table = table_from(layout, far, lake=lake, rules=bonus)
    assert Lookahead().choose(far_table, 0) == Move.parse("1>L@1H")


def test_lookahead_goes_back_to_turning_when_a_remembered_card_becomes_playable() -> None:
    rules = Rules(draw=1)
    table = table_from(
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9C 5S | W: -", OTHER, rules=rules
    )
    bot, greedy = Lookahead(Rng(0)), Greedy(Rng(0))
    while not table.stuck[0]:  # the bot turns through its stock (seeing 5S, 9C), then passes
        move = bot.choose(table, 0)
        assert move in (Move.turn(), Move.pass_())
        greedy.choose(table, 0)
        table, _ = table.play(0, move)
    assert bot.choose(table, 0) is None  # stuck, waiting for the others
    # Seat 1 plays spades up to 4S: the 5S the bot saw in its stock now plays.
    table = dataclasses.replace(table, lake=Lake.parse("1S: AS/1 2S/1 3S/1 4S/1"))
    assert greedy.choose(table, 0) is None  # the greedy bot only looks at its waste top
    assert bot.choose(table, 0) == Move.turn()


def test_lookahead_joker_goes_straight_to_the_lake() -> None:
    table = table_from(
        "N: KD JK1 | 1: 9S | 2: 9D | 3: 4D | 4: 4H | S: 2C | W: -",
        IDLE,
        lake="1S: AS/1 2S/1",
        rules=Rules(jokers=1),
    )
    move = Lookahead().choose(table, 0)
    assert move == Move.parse("N>L@1S=3S")


# -- the lookahead bot only uses what a player could know -----------------------------------


def positions(count: int) -> list[tuple[Table, int]]:
    """Decision points of real rounds (lookahead against greedy, taking turns)."""
    rules = Rules()
    out: list[tuple[Table, int]] = []
    seed = 0
    while len(out) < count:
        table = Table.deal(rules, round_decks(rules, seed, 1, 2))
        bots = [Lookahead(Rng(0)), Greedy(Rng(1))]
        step = 0
        while not table.over and len(out) < count and step < 400:
            seat = step % 2
            out.append((table, seat))
            move = bots[seat].choose(table, seat)
            if move is not None:
                table, _ = table.play(seat, move)
            step += 1
        seed += 1
    return out


def hide(t: Tableau) -> Tableau:
    """The same layout with every face-down card moved about: the Nerts pile below its top
    card, the stock, and the waste below its top card are reversed."""
    return Tableau(
        (*t.nerts[-2::-1], *t.nerts[-1:]) if t.nerts else (),
        t.work,
        t.stock[::-1],
        (*t.waste[-2::-1], *t.waste[-1:]) if t.waste else (),
    )


def test_lookahead_never_peeks_at_face_down_cards() -> None:
    # A fresh bot (no memory yet) must decide the same whatever order the face-down cards
    # are in: it may count them, not look at them.
    changed = 0
    for table, seat in positions(600):
        tableaux = list(table.tableaux)
        tableaux[seat] = hide(tableaux[seat])
        shuffled = dataclasses.replace(table, tableaux=tuple(tableaux))
        changed += shuffled != table
        assert Lookahead(Rng(0)).choose(table, seat) == Lookahead(Rng(0)).choose(shuffled, seat)
    assert changed > 500


# -- the lookahead bot is stronger ----------------------------------------------------------


def paired_differences(rules: Rules, deals: range, a: str, b: str) -> list[float]:
    """Per deal, A's round score minus B's, averaged over both seatings (two players)."""
    diffs = []
    for seed in deals:
        first = play_round(rules, [Player(a), Player(b)], seed).score.players
        second = play_round(rules, [Player(b), Player(a)], seed).score.players
        diffs.append((first[0].total - first[1].total + second[1].total - second[0].total) / 2)
    return diffs


def test_paired_deals_cancel_the_luck_of_the_deal() -> None:
    # A strategy against itself: both seatings play the same games mirrored, so every
    # difference is exactly zero (the decks and the timing depend on the seed alone).
    assert paired_differences(Rules(), range(3), "lookahead", "lookahead") == [0.0] * 3


def test_lookahead_beats_greedy_over_paired_deals() -> None:
    # scripts/bot_strength.py measured the margin at about +3.6 points a round (two players,
    # standard deviation about 6.8 per deal); over 60 deals the standard error is about 0.9,
    # so the mean sits about four standard errors above zero and the test asks for two.
    diffs = paired_differences(Rules(), range(1000, 1060), "lookahead", "greedy")
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs))
    assert mean - 2 * se > 0, f"lookahead - greedy = {mean:+.2f} +- {se:.2f} a round"


def test_weights_are_a_frozen_value() -> None:
    w = Weights()
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.nerts = 1.0  # type: ignore[misc]
    assert Lookahead(weights=Weights(nerts=4.0)).weights.nerts == 4.0
