"""Bad input is refused alike on both builds (sessions 42 and 43, issue 18).

A function of the compiled core whose parameter is annotated ``bytes`` (``int``, ``Kind``...)
has that annotation checked by mypyc at the call: a ``bytearray``, a ``str`` or an ``int``
raises ``TypeError`` there, before the function's own check could give its one-line refusal
(``InvalidKeyError``, ``"not 32 bytes"``, ``LocalProtocolError``...), which the interpreted
build gives. So a parameter that the function checks for its type itself is annotated
``object`` (or the union of what it takes): the check is then the one refusal on both builds.

Two more things mypyc compiles otherwise than the interpreter runs them (session 43): a
``raise`` loses its ``from`` (an error's ``__cause__``, and ``from None``'s suppression of the
context), so the compiled modules raise through :func:`p2p_nertz.errors.chained`; and one name
bound by two ``except`` clauses of one function is one variable of the first clause's type
(the second's exception fails its check: a ``ValueError`` "expected ``InvalidMessageError``"
broke three liar games), so each clause of another type binds a name of its own.

These tests read the source (they run on the default build, where the compiled one's errors
cannot be seen) and call the refusals.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from p2p_nertz.build import source_paths
from p2p_nertz.errors import InvalidRulesError, LocalProtocolError
from p2p_nertz.protocol.envelope import (
    InvalidMessageError,
    Kind,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.identity import (
    Identity,
    InvalidKeyError,
    fingerprint,
    is_valid_peer_id,
    key_fault,
    parse_peer_id,
    signature_fault,
)
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules

ROOT = Path(__file__).resolve().parent.parent


def _checked_types(function: ast.FunctionDef) -> dict[str, set[str]]:
    """The names ``function`` checks with ``type(name) is [not] T`` or ``isinstance(name, T)``,
    each with the ``T``s (as written)."""
    names: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            call = node.left
            if (
                isinstance(call.func, ast.Name)
                and call.func.id == "type"
                and call.args
                and isinstance(call.args[0], ast.Name)
                and isinstance(node.ops[0], ast.Is | ast.IsNot)
            ):
                names.setdefault(call.args[0].id, set()).add(ast.unparse(node.comparators[0]))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
        ):
            names.setdefault(node.args[0].id, set()).add(ast.unparse(node.args[1]))
    return names


#: Annotations that name one type (``X | None`` too), by the type a check of it names.
_ALIASES = {"PeerId": "bytes", "MessageId": "bytes"}


def _narrow_parameters(path: str, tree: ast.Module) -> list[str]:
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        annotated = {a.arg: ast.unparse(a.annotation) for a in arguments if a.annotation}
        for name, types in sorted(_checked_types(function).items()):
            if name not in annotated:
                continue
            one = annotated[name].removesuffix(" | None")
            if "|" not in one and _ALIASES.get(one, one) in {_ALIASES.get(t, t) for t in types}:
                found.append(f"{path}:{function.lineno} {function.name}({name}: {one})")
    return found


def _raises_from(path: str, tree: ast.Module) -> list[str]:
    return [
        f"{path}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise) and node.cause is not None
    ]


def _except_names_of_two_types(path: str, tree: ast.Module) -> list[str]:
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        bound: dict[str, set[str]] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.ExceptHandler) and node.name is not None:
                caught = ast.unparse(node.type) if node.type is not None else "BaseException"
                bound.setdefault(node.name, set()).add(caught)
        found += [
            f"{path}:{function.lineno} {function.name}({name}: {' / '.join(sorted(types))})"
            for name, types in sorted(bound.items())
            if len(types) > 1
        ]
    return found


def _sets_with_keys(path: str, tree: ast.Module) -> list[str]:
    """``a - d.keys()`` (``|``, ``&``, ``^``) where ``a`` is not itself a dict's keys: typeshed
    says ``a``'s type (a ``frozenset``), Python makes a ``set`` (``dict_keys``' reflected
    operator), and a compiled caller typed ``frozenset`` refuses it (sessions 41-43)."""
    return [
        f"{path}:{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub | ast.BitOr | ast.BitAnd | ast.BitXor)
        and _is_keys(node.right)
        and not _is_keys(node.left)
    ]


def _is_keys(node: ast.expr) -> bool:
    """A dict's keys, or an operation of two (a ``set`` either way, as typeshed says)."""
    if isinstance(node, ast.BinOp):
        return _is_keys(node.left) and _is_keys(node.right)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "keys"
        and not node.args
    )


def _compiled_sources() -> list[tuple[str, ast.Module]]:
    return [(path, ast.parse((ROOT / path).read_text(), path)) for path in source_paths(ROOT)]


def test_no_compiled_function_checks_the_type_its_parameter_is_annotated_with() -> None:
    assert [
        hit for path, tree in _compiled_sources() for hit in _narrow_parameters(path, tree)
    ] == []


def test_no_compiled_module_raises_from() -> None:
    assert [hit for path, tree in _compiled_sources() for hit in _raises_from(path, tree)] == []


def test_no_compiled_function_binds_one_name_to_two_kinds_of_exception() -> None:
    found = [
        hit for path, tree in _compiled_sources() for hit in _except_names_of_two_types(path, tree)
    ]
    assert found == []


def test_no_compiled_module_takes_a_dicts_keys_from_a_set() -> None:
    assert [hit for path, tree in _compiled_sources() for hit in _sets_with_keys(path, tree)] == []


def test_the_source_scans_find_what_they_look_for() -> None:
    # (each scan above can fail: the shape it looks for, found)
    source = """
def f(raw: bytes, kind: Kind, n: int | None, key: PeerId, either: int | str) -> bool:
    if isinstance(kind, Kind) and type(n) is int and type(either) is int:
        try:
            return type(raw) is not bytes or type(key) is bytes
        except KeyError as exc:
            raise ValueError("a") from exc
        except ValueError as exc:
            raise ValueError("b") from None
    return False
"""
    tree = ast.parse(source)
    assert _narrow_parameters("f.py", tree) == [
        "f.py:2 f(key: PeerId)",
        "f.py:2 f(kind: Kind)",
        "f.py:2 f(n: int)",
        "f.py:2 f(raw: bytes)",
    ]
    assert _raises_from("f.py", tree) == ["f.py:7", "f.py:9"]
    assert _except_names_of_two_types("f.py", tree) == ["f.py:2 f(exc: KeyError / ValueError)"]
    keys = ast.parse("a = s - d.keys() - e.keys()\nb = d.keys() | e.keys() | f.keys()\n")
    assert _sets_with_keys("k.py", keys) == [
        "k.py:1 s - d.keys() - e.keys()",
        "k.py:1 s - d.keys()",
    ]


def test_an_error_raised_by_the_core_keeps_its_cause_and_hides_its_context() -> None:
    def buggy(body: object) -> None:
        raise KeyError("a bug in a later layer")

    wire = encode_message(
        ALICE, game_id=bytes(32), seq=1, prev=None, lamport=1, kind=Kind.JOIN, body=[]
    )
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(wire, validators={Kind.JOIN: buggy})
    assert isinstance(caught.value.__cause__, KeyError)
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(wire[:-1])  # (refused ``from None``: no context shown)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


ALICE = Identity.generate(seed=bytes(32))

BAD_FIELDS: dict[str, dict[str, object]] = {
    "kind-int": {"kind": 1},
    "kind-str": {"kind": "join"},
    "version-str": {"version": "9"},
    "game-id-str": {"game_id": "0" * 32},
    "seq-float": {"seq": 1.0},
    "prev-str": {"prev": "0" * 32},
    "lamport-float": {"lamport": 1.0},
}


@pytest.mark.parametrize("changes", BAD_FIELDS.values(), ids=BAD_FIELDS.keys())
def test_a_field_of_the_wrong_type_is_the_encoders_one_refusal(changes: dict[str, object]) -> None:
    fields: dict[str, object] = {
        "game_id": bytes(32),
        "seq": 1,
        "prev": None,
        "lamport": 1,
        "kind": Kind.JOIN,
        "body": [],
        **changes,
    }
    with pytest.raises(LocalProtocolError):
        encode_message(ALICE, **fields)  # type: ignore[arg-type]


def test_a_deal_that_is_no_deal_is_the_specs_one_refusal() -> None:
    members = [(Identity.generate(seed=bytes([i]) * 32).peer_id, f"p{i}") for i in range(2)]
    with pytest.raises(InvalidRulesError, match="unknown deal 'shuffle'"):
        GameSpec.create(members, Rules(), b"label", deal="shuffle")


NOT_BYTES: list[object] = [bytearray(32), memoryview(bytes(32)), "0" * 32, 32, None]


@pytest.mark.parametrize("raw", NOT_BYTES, ids=lambda value: type(value).__name__)
def test_a_key_that_is_not_bytes_gets_the_one_refusal(raw: object) -> None:
    assert key_fault(raw) == "not 32 bytes"
    assert not is_valid_peer_id(raw)
    assert signature_fault(raw, bytes(64)) == "the key is not 32 bytes"
    assert signature_fault(bytes(32), raw) == "the signature is not 64 bytes"
    with pytest.raises(InvalidKeyError, match="not a usable Ed25519 key"):
        parse_peer_id(raw)
    with pytest.raises(InvalidKeyError, match="fingerprint needs a 32-byte peer id"):
        fingerprint(raw)
    with pytest.raises(InvalidKeyError, match="private key is 32 bytes"):
        Identity.from_bytes(raw)
    if raw is not None:  # (no seed: a fresh identity)
        with pytest.raises(InvalidKeyError, match="private key is 32 bytes"):
            Identity.generate(seed=raw)


@pytest.mark.parametrize(
    "game_id", [bytearray(32), "0" * 64, 32], ids=lambda value: type(value).__name__
)
def test_an_expected_game_id_that_is_not_bytes_is_the_callers_error(game_id: object) -> None:
    with pytest.raises(LocalProtocolError, match="expected game id must be 32 bytes"):
        decode_message(b"", game_id=game_id)
