"""The tentative fold's first round is grown by the events added after it, not made again
(session 36: ``protocol/folds.py``'s ``_FirstRound``).

The first round folds the final fold with every held event, applied if it counts and observed
if not; made again after each event, it applied every held event again. These tests check the
fast path against its slow twin, the round made from the final fold each time:

- in simulated games (faults, a member that forks and is dropped, late events, a shuffle
  game with a deal cheat), every first round grown is byte for byte the one made afresh;
- over random delivery orders, with the final fold moving on and a fork proven on the way,
  the tentative fold, its capped and uncut drops are those of a twin that never grows it;
- what makes it again (an event before those it folded, an event given up, the final fold
  taking an event with other caps) does.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from test_folds_shared import _bytes, _game

from p2p_nertz.protocol.folds import Folds, _FirstRound
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rng import Rng
from p2p_nertz.sim import Faults, SimConfig, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind


class _Scratch(Folds):
    """Folds whose tentative fold's first round is always made from the final fold (the
    rule before session 36)."""

    def _round(self, *args, grow=False):  # type: ignore[no-untyped-def]
        return super()._round(*args, grow=False)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Every first round made is compared with the one made afresh from the final fold;
    counts the rounds grown from the last one and those made afresh."""
    plain = _FirstRound.grown.__func__  # type: ignore[attr-defined]
    seen = {"grown": 0, "afresh": 0}

    def grown(cls, last, final, caps, held):  # type: ignore[no-untyped-def]
        made = plain(cls, last, final, caps, held)
        reused = last is not None and made.fold is not final and last.fold.vote_caps == caps
        seen["grown" if reused else "afresh"] += 1
        scratch = plain(cls, None, final, caps, held)
        assert made.counts == scratch.counts
        assert _bytes(made.fold) == _bytes(scratch.fold)
        return made

    monkeypatch.setattr(_FirstRound, "grown", classmethod(grown))
    yield seen


@pytest.mark.slow
@pytest.mark.parametrize(
    ("players", "seed", "deal", "cheat"),
    [
        (3, 2, Deal.COMMIT, False),
        (4, 6, Deal.COMMIT, False),  # a member equivocates, is voted out and dropped
        (3, 3, Deal.SHUFFLE, True),  # a dealer's box that does not open: a complaint
    ],
)
def test_every_grown_first_round_is_the_one_made_afresh_in_games(
    players: int, seed: int, deal: Deal, cheat: bool, checked: dict[str, int]
) -> None:
    faults = Faults.random(Rng(seed), players, horizon=15.0, cheats=True)
    if cheat:
        complaint = DeckCheat(players - 1, DeckCheatKind.PLAY_COMPLAINT)
        faults = Faults(deck_cheats=(complaint,), delay=0.005)
    result = run(SimConfig(players=players, seed=seed, faults=faults, max_time=400.0, deal=deal))
    assert result.violations == []
    # Both paths taken, the grown one mostly.
    assert checked["grown"] > checked["afresh"] > 0


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fork_at", [None, 0.4])
def test_the_grown_fold_is_its_twin_s_in_any_order(seed: int, fork_at: float | None) -> None:
    spec, events = _game()
    order = random.Random(seed)
    folds, twin = Folds(GameState(spec)), _Scratch(GameState(spec))
    heads = {q: [e for e in events if e.seat == q] for q in range(spec.seats)}
    stable = 0
    for i, _ in enumerate(events):
        if fork_at is not None and i == int(fork_at * len(events)):
            for f in (folds, twin):
                f.forked_at[2] = 5
        ready = [q for q, feed in heads.items() if feed]
        # Mostly in order (as most events come), sometimes out of it.
        if order.random() < 0.8:
            q = min(ready, key=lambda q: heads[q][0].key)
        else:
            q = order.choice(ready)
        event = heads[q].pop(0)
        assert folds.add(event, stable) == twin.add(event, stable)
        if order.random() < 0.7:  # (read before the next event, or not: two grown at once)
            _same(folds, twin)
        top = min((feed[0].lamport for feed in heads.values() if feed), default=1 << 30) - 1
        if top > stable and order.random() < 0.3:
            stable = top if order.random() < 0.5 else order.randint(stable + 1, top)
            for f in (folds, twin):
                f.final.vote_caps = dict(f.tentative.vote_caps)  # (as Finality.advance does)
            assert folds.advance(stable, {}) == twin.advance(stable, {})
            _same(folds, twin)
    _same(folds, twin)


def _same(folds: Folds, twin: Folds) -> None:
    """The two tentative folds, and the drops they keep undecided, are alike."""
    assert _bytes(folds.tentative) == _bytes(twin.tentative)
    assert folds.capped_drops == twin.capped_drops
    assert folds.uncut_drops == twin.uncut_drops


def _held(spec_events: tuple[Event, ...], seats: int) -> list[Event]:
    """The first three events of each seat, in the total order."""
    return sorted((e for e in spec_events if e.seq <= 3 and e.seat < seats), key=lambda e: e.key)


def test_what_comes_before_the_round_or_leaves_it_makes_it_again() -> None:
    spec, events = _game()
    held = _held(events, spec.seats)
    folds = Folds(GameState(spec))
    for event in held[1:-1]:
        folds.add(event, 0)
    folds.tentative  # noqa: B018 (made: the first round kept)
    first = folds._first
    assert first is not None and len(first.counts) == len(held) - 2
    folds.add(held[-1], 0)  # (after them: grown)
    assert folds._first is first
    folds.tentative  # noqa: B018
    assert folds._first is not first and len(folds._first.counts) == len(held) - 1  # type: ignore[union-attr]
    folds.add(held[0], 0)  # (before them: made again)
    assert folds._first is None
    folds.tentative  # noqa: B018
    assert folds._first is not None and len(folds._first.counts) == len(held)
    # The final fold taking the first with other caps than the round's: made again.
    folds.final.vote_caps = {1: (3, 1 << 63, ())}
    folds.advance(held[0].lamport, {})
    assert folds._first is None
    folds._tentative = None  # (as the next event does: made again from what is held)
    folds.tentative  # noqa: B018
    # Taking them with the round's caps: kept, less the events taken.
    folds.final.vote_caps = {}
    kept = folds._first
    assert kept is not None
    before = len(folds.nonfinal)
    moved, _ = folds.advance(held[-1].lamport - 1, {})
    assert moved > 0 and folds._first is kept and len(kept.counts) == before - moved
    # An event given up, or read by the final fold alone: made again.
    folds = Folds(GameState(spec))
    for event in held:
        folds.add(event, 0)
    folds.tentative  # noqa: B018
    assert folds._first is not None
    folds.forget(held[-1].seat, 0)
    assert folds._first is None
    folds.tentative  # noqa: B018 (given up: made again)
    assert folds._first is not None
    late = next(e for e in events if e.seq == 4)
    folds.add(late, late.lamport)
    assert folds._first is None
