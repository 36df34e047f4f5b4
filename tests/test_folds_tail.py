"""The tentative fold folded onto the last one decides exactly as the fold made again.

An event delivered after every held one in the order, and no membership event, is folded onto
the last tentative fold where that fold was its first round's (``Folds._fold_tail``, issue
18). These tests make the fold again from the final one (``Folds._cut_unheld``) every time the
shortcut is taken and compare the two byte for byte: in simulated games with faults (drops,
forks, partitions, crashes, a shuffle deal) and, with Hypothesis, on the events of a game
delivered in any order, with the final fold moving on at random, next to a twin that always
folds again (the same states and the same notices, in the same order).
"""

from __future__ import annotations

import functools
import io
import pickle
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from p2p_nertz.protocol.bodies import NOT_EVENTS, parse_body
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rng import Rng
from p2p_nertz.sim import Faults, SimConfig, run


def _bytes(state: GameState) -> bytes:
    """Everything ``state`` holds, in order, as bytes (its round events are shared by every
    copy of a fold, and named, not written out)."""
    out = io.BytesIO()
    shared = state._round_events

    class _Pickler(pickle.Pickler):
        def persistent_id(self, obj: object) -> str | None:
            return "round-events" if obj is shared else None

    _Pickler(out, protocol=5).dump(state)
    return out.getvalue()


@pytest.fixture
def checked_tail(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Check every fold onto the last one against the fold made again; count both."""
    fast, slow = Folds._fold_tail, Folds._cut_unheld
    seen = {"tail": 0, "events": 0, "refolded": 0}

    def fold_tail(self: Folds, plain: GameState) -> GameState | None:
        events = len(self._tail)
        made = fast(self, plain)
        if made is None:
            return None
        kept = self._plain, self._plain_forks
        exact = slow(self)
        assert _bytes(made) == _bytes(exact)
        assert (kept[0] is made) == (self._plain is exact)  # plain in both, or in neither
        self._plain, self._plain_forks = kept
        seen["tail"] += 1
        seen["events"] += events
        return made

    def cut_unheld(self: Folds) -> GameState:
        seen["refolded"] += 1
        return slow(self)

    monkeypatch.setattr(Folds, "_fold_tail", fold_tail)
    monkeypatch.setattr(Folds, "_cut_unheld", cut_unheld)
    yield seen


GAMES = [
    # (players, seed, faults, deal)
    (2, 1, False, Deal.COMMIT),
    (3, 2, True, Deal.COMMIT),
    (4, 6, True, Deal.COMMIT),  # a member equivocates, is voted out and dropped
    (4, 11, True, Deal.COMMIT),
    (2, 4, True, Deal.SHUFFLE),
]


@pytest.mark.parametrize(("players", "seed", "faulty", "deal"), GAMES)
def test_fold_tail_is_the_fold_made_again_in_games(
    players: int, seed: int, faulty: bool, deal: Deal, checked_tail: dict[str, int]
) -> None:
    faults = Faults.random(Rng(seed), players, horizon=15.0, cheats=True) if faulty else Faults()
    result = run(SimConfig(players=players, seed=seed, faults=faults, max_time=400.0, deal=deal))
    assert result.violations == []
    # The shortcut was taken (and agreed), and the fold made again where it was not.
    assert checked_tail["tail"] > 5
    assert checked_tail["refolded"] > 0
    assert checked_tail["events"] >= checked_tail["tail"]


@functools.cache
def _game() -> tuple[GameSpec, tuple[Event, ...]]:
    """A game with faults (seed 6: a member equivocates, is voted out and dropped) and every
    event of it as its seat 1 holds them, feed by feed in seq order."""
    faults = Faults.random(Rng(6), 4, horizon=15.0, cheats=True)
    result = run(SimConfig(players=4, seed=6, faults=faults, max_time=400.0))
    peer = result.peers[1]
    assert peer is not None and result.violations == []
    n = result.spec.seats
    out = []
    for seat, feed in enumerate(peer._feeds):
        for m in feed:
            body = parse_body(m.kind, m.body, n)
            assert not isinstance(body, NOT_EVENTS)
            out.append(Event(seat, m.seq, m.lamport, m.kind, body, m.id))
    return result.spec, tuple(out)


class _Twin(Folds):
    """Folds that always fold again from the final fold (the rule before the shortcut)."""

    def _fold_tail(self, plain: GameState) -> GameState | None:
        return None


@settings(max_examples=8, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1), moves_on=hs.sampled_from([0.1, 0.5, 0.9]))
def test_fold_tail_and_the_fold_made_again_agree_in_any_order(seed: int, moves_on: float) -> None:
    spec, events = _game()
    order = random.Random(seed)
    folds, twin = Folds(GameState(spec)), _Twin(GameState(spec))
    # Delivered one feed's next event at a time, the feed drawn at random; the final fold
    # moves on (at that rate) to a time drawn at random, never past an event not delivered.
    heads = {q: [e for e in events if e.seat == q] for q in range(spec.seats)}
    stable = 0
    taken = 0
    for _ in events:
        event = heads[order.choice([q for q, feed in heads.items() if feed])].pop(0)
        assert folds.add(event, stable) == twin.add(event, stable)
        if folds._plain is not None and folds._tail:  # (the shortcut: byte for byte)
            taken += 1
            assert _bytes(folds.tentative) == _bytes(twin.tentative)
        else:  # (the same fold made again)
            assert folds.tentative.digest() == twin.tentative.digest()
        top = min((feed[0].lamport for feed in heads.values() if feed), default=1 << 30) - 1
        if top > stable and order.random() < moves_on:
            stable = order.randint(stable + 1, top)
            held = twin.tentative
            folds.final.vote_caps = dict(held.vote_caps)  # (as Finality.advance does)
            twin.final.vote_caps = dict(held.vote_caps)
            excluded = dict(held.dropped)
            moved = folds.advance(stable, excluded, held.gaps)
            assert moved == twin.advance(stable, excluded, held.gaps)  # and the notices
            assert _bytes(folds.final) == _bytes(twin.final)
    assert not any(heads.values())
    assert _bytes(folds.tentative) == _bytes(twin.tentative)
    assert taken > len(events) // 4  # the shortcut was taken
