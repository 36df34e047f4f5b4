"""quick_init: the same object as the dataclass's own __init__ makes, or a refusal."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from p2p_nertz.protocol.bodies import Play as PlayBody
from p2p_nertz.protocol.fold_values import ClaimDecided, Event
from p2p_nertz.rules.lake import LakeCard, Resolution
from p2p_nertz.rules.table import Play, Table
from p2p_nertz.rules.tableau import Tableau
from p2p_nertz.slots import quick_init


@dataclass(frozen=True, slots=True)
class _Plain:
    a: int
    b: str
    c: tuple[int, ...] = ()
    d: object = None


@quick_init
@dataclass(frozen=True, slots=True)
class _Quick:
    a: int
    b: str
    c: tuple[int, ...] = ()
    d: object = None


def _fields(value: object) -> tuple[object, ...]:
    return tuple(getattr(value, f.name) for f in dataclasses.fields(value))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1, "x"), {}), ((1, "x", (2, 3)), {}), ((1,), {"b": "y", "d": 4}), ((), {"b": "z", "a": 5})],
)
def test_quick_init_sets_what_the_dataclass_init_sets(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    quick, plain = _Quick(*args, **kwargs), _Plain(*args, **kwargs)  # type: ignore[arg-type]
    assert _fields(quick) == _fields(plain)
    assert quick == _Quick(*args, **kwargs)  # type: ignore[arg-type]
    assert hash(quick) == hash(_Quick(*args, **kwargs))  # type: ignore[arg-type]
    assert dataclasses.replace(quick, a=9).a == 9
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.a = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1, "x", (), None, 5), {}), ((1,), {"a": 2, "b": "x"}), ((1, "x"), {"e": 1})],
)
def test_quick_init_refuses_the_calls_the_dataclass_init_refuses(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(TypeError):
        _Plain(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _Quick(*args, **kwargs)  # type: ignore[arg-type]


def test_quick_init_keeps_the_signature_of_each_hot_value() -> None:
    # (The parameters by name and default, as the dataclass's __init__ had them.)
    for cls in (Event, Play, Table, Tableau, PlayBody, LakeCard, Resolution, ClaimDecided):
        expected = [(f.name, f.default) for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        code = cls.__init__.__code__
        names = code.co_varnames[1 : code.co_argcount]
        defaults = cls.__init__.__defaults__ or ()
        got = list(
            zip(
                names,
                [dataclasses.MISSING] * (len(names) - len(defaults)) + list(defaults),
                strict=True,
            )
        )
        assert got == expected, cls


def test_quick_init_refuses_what_it_cannot_make() -> None:
    @dataclass(slots=True)
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class After:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = field(kw_only=True)

    @dataclass(frozen=True, slots=True)
    class Hidden:
        a: int = field(init=False, default=0)

    class NotADataclass:
        pass

    for cls in (Mutable, NoSlots, After, Factory, KeywordOnly, Hidden, NotADataclass):
        with pytest.raises(TypeError):
            quick_init(cls)
