"""The bytes of a key file: the named form written since session 27, the raw form read still,
and words for whatever else a person may hand ``--key`` (docs/key-files.md).

Pure functions, no files: :mod:`cli.keyfile` reads and writes the files and adds what only
the file system can tell (whose public key a raw 32 bytes are).

>>> from p2p_nertz.protocol.identity import Identity
>>> key = Identity.from_bytes(bytes(32))
>>> print(encode_secret(key).decode(), end="")
p2p-nertz secret key v1
fingerprint copd-sqhg-jnkj-c4ra
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
>>> decode_secret(encode_secret(key)) == key, decode_secret(bytes(32)) == key
(True, True)
>>> decode_secret(bytes.hex(bytes(key.peer_id)).encode())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cli.keyformat.NotASecretKey: holds a public key in hex (fingerprint copd-sqhg-jnkj-c4ra), ...
"""

from __future__ import annotations

import base64
import binascii
import re

from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import MAGIC as LOG_MAGIC
from p2p_nertz.protocol.identity import PRIVATE_KEY_SIZE, Identity, fingerprint

__all__ = ["KEY_FILE_LIMIT", "SECRET_HEADER", "NotASecretKey", "decode_secret", "encode_secret"]

SECRET_HEADER = "p2p-nertz secret key v1"
"""The first line of a named key file: what the file is, and the version of its form."""

_KIND = "p2p-nertz secret key v"

KEY_FILE_LIMIT = 256
"""The largest key file read (a named key is about 100 bytes; more is not a key file)."""

_HEX_KEY = re.compile(rb"(?:^|#)([0-9a-fA-F]{64})\s*$")  # (also `nertz watch`'s ENDPOINT#KEY)
_FINGERPRINT = re.compile(rb"\s*[a-zA-Z2-7]{4}(-[a-zA-Z2-7]{4}){3}\s*")


class NotASecretKey(NertzError, ValueError):
    """Raised when the bytes of a file are not a secret key; the message says what they are
    (to follow the file's name: "holds a public key in hex ...")."""


def encode_secret(identity: Identity) -> bytes:
    """The named key file of ``identity``: the header line, its fingerprint, its seed in base64
    (not hex, so that the secret never looks like the hex public keys people pass around)."""
    seed = base64.b64encode(identity.to_bytes()).decode("ascii")
    return f"{SECRET_HEADER}\nfingerprint {identity.fingerprint}\n{seed}\n".encode("ascii")


def decode_secret(data: bytes) -> Identity:
    """The key of a key file's bytes: the named form, or the raw 32 bytes of an older key.

    Raises:
        NotASecretKey: ``data`` is neither; the message says what it is.
    """
    if data.startswith(_KIND.encode()):
        return _decode_named(data)
    if len(data) == PRIVATE_KEY_SIZE:
        return Identity.from_bytes(data)
    raise NotASecretKey(_what_else(data))


def _decode_named(data: bytes) -> Identity:
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise NotASecretKey("is a damaged p2p-nertz secret key (not text)") from None
    words = [line.strip() for line in lines if line.strip()]
    if words[0] != SECRET_HEADER:
        raise NotASecretKey(f"is a p2p-nertz secret key of another version ({words[0]!r}) than "
                            f"this nertz reads ({SECRET_HEADER!r})")  # fmt: skip
    if len(words) != 3 or not words[1].startswith("fingerprint "):
        raise NotASecretKey("is a damaged p2p-nertz secret key (want 3 lines)")
    try:
        seed = base64.b64decode(words[2], validate=True)
    except binascii.Error:
        seed = b""
    if len(seed) != PRIVATE_KEY_SIZE:
        raise NotASecretKey("is a damaged p2p-nertz secret key (its key line is not 32 bytes)")
    identity = Identity.from_bytes(seed)
    named = words[1].removeprefix("fingerprint ").strip()
    if named != identity.fingerprint:
        raise NotASecretKey(
            f"is a damaged p2p-nertz secret key (it names fingerprint {named}, its key is "
            f"{identity.fingerprint})"
        )
    return identity


def _what_else(data: bytes) -> str:
    """What bytes that are not a secret key are, in words."""
    if not data:
        return "is empty, not a secret key"
    if len(data) > KEY_FILE_LIMIT:
        return f"is too long for a key file (more than {KEY_FILE_LIMIT} bytes)"
    if data.startswith(LOG_MAGIC):
        return "is a game log, not a secret key"
    hex_key = _HEX_KEY.search(data.strip())
    if hex_key:
        name = fingerprint(bytes.fromhex(hex_key[1].decode()))
        return f"holds a public key in hex (fingerprint {name}), not a secret key"
    if _FINGERPRINT.fullmatch(data):
        return "holds a fingerprint, not a secret key"
    return (
        f"is not a key file ({len(data)} bytes: neither a {SECRET_HEADER!r} file nor 32 raw bytes)"
    )
