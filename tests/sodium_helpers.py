"""The core's calls into libsodium, counted alike on both builds (issue 18, session 43).

Every signature check of the core ends in libsodium's ``crypto_sign_open`` and every check of
a key in ``crypto_core_ed25519_is_valid_point``, which :mod:`p2p_nertz.protocol.identity`
reaches through its module global ``_lib`` at each call, interpreted and compiled alike (a
compiled module reads a global of its own from its namespace, where a spy on a *function*
of the core is never called by its compiled callers: tests/builds.py). So a test that counts
the signature checks a path makes, or the keys it checks, puts a counting stand-in for
``_lib`` there: what it counts is what libsodium was asked, not what a Python function of the
core was called with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from p2p_nertz.protocol import identity

_SIGNATURE_SIZE = 64


class _CountingLib:
    """``identity._lib`` with the calls of ``counted`` noted, every other name handed on."""

    def __init__(self, lib: Any, counted: dict[str, Callable[..., None]]) -> None:
        self._lib = lib
        self._counted = counted

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._lib, name)
        note = self._counted.get(name)
        if note is None:
            return real

        def noted(*args: Any) -> Any:
            note(*args)
            return real(*args)

        return noted


def signature_checks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, bytes]]:
    """From now on (to the test's end), note every signature libsodium checks for the core:
    ``(key, signature)`` in the order asked."""
    checks: list[tuple[bytes, bytes]] = []

    def note(out: object, length: object, signed: bytes, size: int, key: bytes) -> None:
        checks.append((bytes(key), bytes(signed[:_SIGNATURE_SIZE])))

    _count(monkeypatch, crypto_sign_open=note)
    return checks


def key_checks(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """From now on, note every key libsodium checks for the core (a peer id's, a roster
    key's: :func:`~p2p_nertz.protocol.identity.key_fault`), in the order asked."""
    keys: list[bytes] = []

    def note(raw: bytes) -> None:
        keys.append(bytes(raw))

    _count(monkeypatch, crypto_core_ed25519_is_valid_point=note)
    return keys


def _count(monkeypatch: pytest.MonkeyPatch, **counted: Callable[..., None]) -> None:
    lib = identity._lib
    if isinstance(lib, _CountingLib):  # (a second count in one test: both note)
        counted = {**lib._counted, **counted}
        lib = lib._lib
    monkeypatch.setattr(identity, "_lib", _CountingLib(lib, counted))
