"""The tentative fold's rounds go on from the passes of the last making (``Folds.passes``,
session 40): a pass goes on from one kept only where it would fold the same.

A liar made every honest peer make its tentative fold again at every event, each making trying
the same cuts over every held event again (two liars, readmit seed 171: ~13x the CPU of the
game before session 39's cap rule). :class:`~p2p_nertz.protocol.folds.Passes` keeps each
round's pass, keyed by what it is folded with; a round with the same key, from the same final
fold not moved since, over held events that begin with the very events that pass folded, folds
only the events held since. These tests fold every round of whole games twice, once as the
peers do and once from scratch with nothing kept, and require the same fold, byte for byte,
and the same next round (so the same verdict of every trial cut); and check by hand that a
pass kept is not taken where the final fold moved or an event came in earlier in the order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from builds import need_interpreted

from p2p_nertz.protocol.folds import Folds, Passes, Round
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rng import Rng
from p2p_nertz.sim import Faults, SimConfig, run
from p2p_nertz.sim.liar_games import game, simulate

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)

_Made = tuple[GameState, Callable[[], Round | None]]


def _same(a: object, b: object, path: str = "fold") -> None:
    """Fail unless ``a`` and ``b`` hold the same values, attribute by attribute, wherever they
    are met (a pass gone on from a copy holds equal values that are not the same objects, a
    member's cap in ``vote_caps`` and in ``past_caps``, which a pickle writes otherwise); but
    a roster's ``memo``, shared by every copy of a fold (what the folds of the membership
    events keep, each entry checked against the events before any use, ``roster._Memo``)."""
    if a is b:
        return
    assert type(a) is type(b), path
    if isinstance(a, dict):
        assert isinstance(b, dict)
        assert list(a) == list(b), path
        for key, value in a.items():
            _same(value, b[key], f"{path}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple))
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif hasattr(a, "__dict__") or hasattr(type(a), "__slots__"):
        names = [*getattr(a, "__dict__", ())]
        names += [n for c in type(a).__mro__ for n in getattr(c, "__slots__", ())]
        for name in names:
            if name not in {"memo", "_round_events", "__weakref__", "__dict__"}:
                _same(getattr(a, name, None), getattr(b, name, None), f"{path}.{name}")
    else:
        assert a == b, path


@pytest.fixture
def twice(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Make every round of :meth:`Folds._round` twice: as the peer does (a pass kept may go
    on) and from scratch (nothing kept), and fail unless both give the same fold and the same
    next round. Counts the rounds and those that went on from a pass kept."""
    plain = Folds._round
    resume = Passes.resume
    seen = {"rounds": 0, "resumed": 0}

    def counted(self: Passes, *args: object) -> object:
        made = resume(self, *args)  # type: ignore[arg-type]
        seen["resumed"] += made is not None
        return made

    def checked(self: Folds, *args: object) -> _Made:
        kept = self.passes
        t, next_round = plain(self, *args)  # type: ignore[arg-type]
        self.passes = Passes()  # (nothing kept: the pass from the first event held)
        try:
            fresh, fresh_next = plain(self, *args)  # type: ignore[arg-type]
        finally:
            self.passes = kept
        seen["rounds"] += 1
        _same(t, fresh)
        assert next_round() == fresh_next()
        return t, next_round

    need_interpreted(
        "replaces Passes.resume and Folds._round: a compiled class's methods are read-only",
        "p2p_nertz.protocol.folds",
    )
    monkeypatch.setattr(Passes, "resume", counted)
    monkeypatch.setattr(Folds, "_round", checked)
    return iter([seen])


# Two liars, readmit (scripts/soak.py --liars --two-liars --back readmit): games whose honest
# peers make their tentative fold again and again over the same trial cuts.
@pytest.mark.parametrize("seed", [4, 3])  # (three players, four)
def test_passes_kept_fold_as_a_pass_from_scratch_in_liar_games(
    seed: int, twice: Iterator[dict[str, int]]
) -> None:
    seen = next(twice)
    config, liars = game(seed, players=(3, 4), two=True, back="readmit")
    result = simulate(config, liars).result
    assert result.violations == []
    assert seen["resumed"] > 0
    assert seen["resumed"] < seen["rounds"]


@pytest.mark.parametrize("players", [2, 3])
def test_passes_kept_fold_as_a_pass_from_scratch_in_a_faulty_game(
    players: int, twice: Iterator[dict[str, int]]
) -> None:
    seen = next(twice)
    faults = Faults.random(Rng(5), players, horizon=15.0, cheats=True)
    result = run(SimConfig(players=players, seed=5, faults=faults, max_time=400.0))
    assert result.violations == []
    assert seen["resumed"] > 0


class _Fold:
    """A stand-in for a pass's fold: :class:`Passes` only copies it."""

    def copy(self) -> _Fold:
        return _Fold()


def _kept(held: list[object]) -> tuple[Passes, object, object]:
    """Passes keeping one pass over ``held`` from a final fold; the passes, the key, the final."""
    passes, final, key = Passes(), object(), ("cuts", "gaps", "caps", "forks")
    passes.keep(key, final, held, _Fold(), counted=held[:1], skipped=held[1:])  # type: ignore[arg-type]
    return passes, key, final


def test_a_pass_kept_goes_on_over_the_events_held_since() -> None:
    a, b, c = object(), object(), object()
    passes, key, final = _kept([a, b])
    made = passes.resume(key, final, [a, b, c])  # type: ignore[arg-type]
    assert made is not None
    fold, done, counted, skipped = made
    assert isinstance(fold, _Fold)
    assert (done, counted, skipped) == (2, [a], [b])
    counted.append(c)  # (new lists: the pass kept is not changed)
    assert passes.resume(key, final, [a, b])[2] == [a]  # type: ignore[arg-type,index]


def test_a_pass_kept_is_not_taken_where_it_would_fold_otherwise() -> None:
    a, b, c = object(), object(), object()
    passes, key, final = _kept([a, b])
    assert passes.resume(("other",), final, [a, b]) is None  # type: ignore[arg-type]
    assert passes.resume(key, object(), [a, b]) is None  # type: ignore[arg-type]
    assert passes.resume(key, final, [a, c, b]) is None  # type: ignore[arg-type]
    assert passes.resume(key, final, [a]) is None  # type: ignore[arg-type]
    passes.epoch += 1  # (the final fold moved)
    assert passes.resume(key, final, [a, b]) is None  # type: ignore[arg-type]


def test_passes_keep_the_last_two_makings_only() -> None:
    a = object()
    passes, key, final = _kept([a])
    passes.turn()
    assert passes.resume(key, final, [a]) is not None  # type: ignore[arg-type]
    passes.turn()
    assert passes.resume(key, final, [a]) is None  # type: ignore[arg-type]
