"""Looking for a private key where it must not be (logs, a demo's directory): in every form
a key file may hold it (cli/keyformat.py), the raw seed and its base64."""

from __future__ import annotations

import base64


def secret_in(data: bytes, seed: bytes) -> bool:
    """Whether ``data`` holds the 32-byte private key ``seed`` raw or as a named key file's
    key line (base64)."""
    assert len(seed) == 32
    return seed in data or base64.b64encode(seed) in data
