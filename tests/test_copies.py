"""The copies of the fold and its parts take every attribute their class has (session 42).

``GameState.copy``, ``Roster.copy``, ``CountedIds.copy``, ``Abandonment.copy`` and the new
lake of ``Lake.apply`` make their instance without ``__init__`` (a class ``__new__`` of
their own, so that the same text works compiled with mypyc, docs/latency.md) and then set
each attribute by name: a second list of the attributes beside ``__init__``'s. These tests
check each list against its class, on the folds of a played game: every attribute that
``__init__`` sets (``vars`` of a fresh instance) or that the class declares in
``__slots__`` is set on the copy, none other, each the very object of the original or an
equal copy of it (compared pickled, as tests/test_folds_shared.py compares folds).
"""

from __future__ import annotations

import pickle

import pytest

from p2p_nertz.protocol.abandonment import Abandonment
from p2p_nertz.protocol.roster import CountedIds, Roster
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules.lake import Lake
from p2p_nertz.sim import SimConfig, run


def _slots(cls: type) -> set[str]:
    return {name for c in cls.__mro__ for name in vars(c).get("__slots__", ())}


def _attributes(value: object) -> dict[str, object]:
    """Every attribute set on ``value``: its ``__dict__``, or each of its slots that is set."""
    if hasattr(value, "__dict__"):
        return dict(vars(value))
    return {name: getattr(value, name) for name in _slots(type(value)) if hasattr(value, name)}


def _same(original: object, copy: object, declared: set[str]) -> None:
    assert type(copy) is type(original)
    theirs, ours = _attributes(original), _attributes(copy)
    assert set(theirs) == declared, "the original has attributes its class does not declare"
    assert set(ours) == declared, f"not copied: {sorted(declared - set(ours))}"
    assert list(ours) == list(theirs)  # (a __dict__ in __init__'s order: a fold pickles alike)
    for name, value in theirs.items():
        mine = ours[name]
        assert mine is value or pickle.dumps(mine) == pickle.dumps(value), name


@pytest.fixture(scope="module")
def final() -> GameState:
    """The final fold of a 3-player game in which members were voted out."""
    config = SimConfig.soak(3, players=(3, 3))
    result = run(config)
    peer = next(p for p in result.peers if p is not None)
    assert peer.final.roster.dropped and peer.final.roster.votes  # (what the copies carry)
    return peer.final


def test_game_state_copy_sets_every_attribute_init_sets(final: GameState) -> None:
    declared = set(vars(GameState(final.spec)))
    assert len(declared) >= 20  # (the fold's attributes, read from a fresh one)
    _same(final, final.copy(), declared)


def test_each_part_copy_sets_every_slot(final: GameState) -> None:
    for original, copy in (
        (final.roster, final.roster.copy()),
        (final.counted_ids, final.counted_ids.copy()),
        (final.abandonment, final.abandonment.copy()),
    ):
        _same(original, copy, _slots(type(original)))
    # The copy the fold makes holds copies of the parts (each checked above), not the parts.
    copy = final.copy()
    assert copy.roster is not final.roster and copy.abandonment is not final.abandonment


def test_a_lake_made_by_apply_sets_every_slot(final: GameState) -> None:
    lake = final.round.table.lake
    assert list(lake.cards())  # (made by apply, the game having played claims)
    assert set(_attributes(lake)) == _slots(Lake) == {"_foundations", "_open"}
    assert set(_attributes(Lake())) == _slots(Lake)


@pytest.mark.parametrize("cls", [GameState, Roster, CountedIds, Abandonment, Lake])
def test_new_without_arguments_makes_a_blank_instance(cls: type) -> None:
    # What each copy starts from: no attribute set (no __init__ run), on both builds.
    assert _attributes(cls.__new__(cls)) == {}
