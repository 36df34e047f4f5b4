"""Bad input is refused alike on both builds (session 42, issue 18).

A function of the compiled core whose parameter is annotated ``bytes`` has that annotation
checked by mypyc at the call: a ``bytearray`` or a ``str`` raises ``TypeError`` there, before
the function's own check could give its one-line refusal (``InvalidKeyError``, ``"not 32
bytes"``...), which the interpreted build gives. So a parameter that the function checks for
``bytes`` itself is annotated ``object`` (or the union of what it takes): the check is then the
one refusal on both builds. These tests read the source (they run on the default build, where
the compiled one's ``TypeError`` cannot be seen) and call the refusals.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from p2p_nertz.build import source_paths
from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.identity import (
    Identity,
    InvalidKeyError,
    fingerprint,
    is_valid_peer_id,
    key_fault,
    parse_peer_id,
    signature_fault,
)

ROOT = Path(__file__).resolve().parent.parent


def _checked_for_bytes(function: ast.FunctionDef) -> set[str]:
    """The names ``function`` checks with ``type(name) is [not] bytes`` or ``isinstance(name,
    ...bytes...)``."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            call, right = node.left, node.comparators[0]
            if (
                isinstance(call.func, ast.Name)
                and call.func.id == "type"
                and call.args
                and isinstance(call.args[0], ast.Name)
                and isinstance(right, ast.Name)
                and right.id == "bytes"
            ):
                names.add(call.args[0].id)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
            and "bytes" in ast.unparse(node.args[1])
        ):
            names.add(node.args[0].id)
    return names


def _narrow_bytes_parameters() -> list[str]:
    found = []
    for path in source_paths(ROOT):
        tree = ast.parse((ROOT / path).read_text(), path)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
            annotated = {a.arg: ast.unparse(a.annotation) for a in arguments if a.annotation}
            for name in sorted(_checked_for_bytes(function) & annotated.keys()):
                if annotated[name] in ("bytes", "bytes | None", "PeerId"):
                    found.append(f"{path}:{function.lineno} {function.name}({name})")
    return found


def test_no_compiled_function_checks_for_bytes_a_parameter_typed_bytes() -> None:
    assert _narrow_bytes_parameters() == []


def test_the_source_scan_finds_a_parameter_typed_bytes_and_checked() -> None:
    # (the scan above can fail: the shape it looks for, found)
    source = "def f(raw: bytes) -> bool:\n    return type(raw) is not bytes\n"
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert _checked_for_bytes(function) == {"raw"}


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
