"""Private key files: where the ``nertz`` commands keep keys, and how they read and write them.

A key file holds an Ed25519 private key (the 32-byte seed, :meth:`Identity.to_bytes`), readable
by its owner only, in one of two forms (docs/key-files.md):

- **Named** (what ``nertz keygen`` and the key store write since session 27): three lines of
  text, ``p2p-nertz secret key v1``, ``fingerprint xxxx-xxxx-xxxx-xxxx`` (the key's own,
  checked on reading) and the seed in base64. The first line says what the file is, so that
  a file of another kind is never read as a secret by mistake.
- **Raw**: the 32 bytes alone, as every key was written before. Such a key still loads,
  unchanged, with its fingerprint. Raw bytes cannot say what they are, and a public key is
  32 bytes too: one that is the public key of a key we can see (the default key, a key in the
  key store, the log's writer for ``nertz resume``) is refused with what it is.

Whatever else the file holds is refused in one line that says what it is (empty, too long, a
public key in hex, a fingerprint, a game log, a damaged named key) and what to give instead.
Two rules hold for every command:

- **Private.** A key file is created with mode 0600 from the start (``os.open`` with the mode,
  never a ``chmod`` after, which would leave a moment in which the umask's mode applies), and a
  key file that group or others may access is refused with the fix, as ssh refuses one.
- **Never beside the logs.** Logs are handed to auditors, so a key a command makes by itself
  (a bot's, the demo's, ``nertz play --bots``'s) is kept in the **key store**,
  ``$XDG_CONFIG_HOME/p2p-nertz/keys/<fingerprint>.key`` (or ``$NERTZ_HOME/keys``, or
  ``~/.config/p2p-nertz/keys``), a directory of mode 0700, where ``nertz resume`` finds it by
  the fingerprint the log names.
"""

from __future__ import annotations

import os
import secrets
import shlex
import stat
from collections.abc import Collection
from pathlib import Path

from cli.files import read_small_file
from cli.keyformat import KEY_FILE_LIMIT, NotASecretKey, decode_secret, encode_secret
from cli.places import config_home, default_key_path, kept_key_path, person_key_path
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import PRIVATE_KEY_SIZE, Identity, fingerprint

__all__ = [
    "config_home",
    "default_key_path",
    "keep_key",
    "kept_key_path",
    "load_identity",
    "replace_key",
    "write_key",
]


def _refuse_open_mode(path: Path, mode: int) -> None:
    # As ssh does: any access by group or others, not only reading, makes a key unsafe to use.
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise NertzError(
            f"key file {str(path)!r} is accessible by others (mode {stat.S_IMODE(mode):04o}); "
            f"a private key must be yours alone: chmod 600 {shlex.quote(str(path))}"
        )


def load_identity(path: Path, *, players: Collection[bytes] = ()) -> Identity:
    """Read a key file (either form, :mod:`cli.keyformat`), refusing one that group or others
    may access, and 32 raw bytes that are the public key of a key at hand (the default key, a
    key in the key store) or of one of ``players`` (the peer ids the command knows of: the
    game's, the log writer's).

    Raises:
        NertzError: the file is missing, unreadable, open to others, or not a secret key; the
            one line says what the file is and what to give instead.
    """
    try:
        raw, mode = read_small_file(path, KEY_FILE_LIMIT)
    except OSError as exc:
        raise NertzError(f"cannot read key file {str(path)!r}: {exc.strerror}") from None
    # What the file is first: a spec, a log or a public key given by mistake (mode 0644, as
    # files are made) was told to be made private, `chmod 600` (session 43), and only then
    # said to be no key at all.
    try:
        identity = decode_secret(raw)
    except NotASecretKey as exc:
        raise NertzError(f"{str(path)!r} {exc}: {_give_instead()}") from None
    if len(raw) == PRIVATE_KEY_SIZE:
        _refuse_a_known_public_key(path, raw, players)
    # The mode of the file we read, not of what the path names a moment later.
    _refuse_open_mode(path, mode)
    return identity


def _give_instead() -> str:
    return (
        f"give your key file ({default_key_path()} unless you chose another; "
        f"`nertz keygen --key FILE` makes a new one)"
    )


def _refuse_a_known_public_key(path: Path, raw: bytes, players: Collection[bytes]) -> None:
    """Refuse the raw 32 bytes of ``path`` if they are a public key we can name: a file of a
    raw key reads any 32 bytes as a secret, a public key's too (another identity, silently)."""
    name = fingerprint(raw)
    for where in (kept_key_path(name), default_key_path()):
        if where != path and _peer_id_at(where) == raw:
            raise NertzError(
                f"{str(path)!r} is the public key of {name} (32 raw bytes), not a secret key: "
                f"give the key file itself, {str(where)!r}"
            )
    if raw in players:
        raise NertzError(
            f"{str(path)!r} is the public key of {name}, a player of this game (32 raw bytes), "
            f"not a secret key: give the key file of {name}"
        )


def _peer_id_at(path: Path) -> bytes | None:
    """The peer id of the key file at ``path``, or ``None`` if there is none to read (only
    to name what another file is: its mode and form are judged when it is itself loaded)."""
    try:
        raw, _ = read_small_file(path, KEY_FILE_LIMIT)
        return bytes(decode_secret(raw).peer_id)
    except (OSError, NertzError):
        return None


def write_key(path: Path, identity: Identity) -> None:
    """Write ``identity``'s private key, named (:func:`cli.keyformat.encode_secret`), to a new
    file readable by its owner only.

    The file is created with mode 0600 (and ``O_EXCL``, which also refuses to follow a
    symbolic link planted there), so the key is never readable by others, not even for a
    moment.

    Raises:
        NertzError: the file exists or cannot be written.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise NertzError(f"cannot create key file {str(path)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encode_secret(identity))
    except OSError as exc:
        path.unlink(missing_ok=True)  # no half key left behind
        raise NertzError(f"cannot write key file {str(path)!r}: {exc.strerror}") from None


def replace_key(path: Path, identity: Identity) -> None:
    """Replace the key file at ``path`` by ``identity``'s (``nertz keygen --force``): the new
    key is written beside it (mode 0600, :func:`write_key`) and renamed over it, so a failure
    leaves the old key whole, never no key or half a key.

    Raises:
        NertzError: ``path`` is not a regular file (a directory, say), or the new key cannot
            be written or renamed there.
    """
    if path.is_dir() or (path.exists() and not path.is_file()):
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise NertzError(f"{str(path)!r} is {kind}, not a key file: give a file's path")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.new")
    write_key(temp, identity)
    try:
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise NertzError(f"cannot replace key file {str(path)!r}: {exc.strerror}") from None


def keep_key(identity: Identity, *, person: bool = False) -> Path:
    """Keep ``identity`` in the key store (if it is not there already); return its file: a
    bot's key, or (``person``) the key a quick game made for its person, kept apart
    (:func:`~cli.places.person_key_path`).

    Raises:
        NertzError: the store cannot be written, or holds another key under this name.
    """
    path = (person_key_path if person else kept_key_path)(identity.fingerprint)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(path.parent)!r}: {exc.strerror}") from None
    if path.exists():
        if load_identity(path) != identity:
            raise NertzError(f"{str(path)!r} holds another key than {identity.fingerprint}")
        return path
    write_key(path, identity)
    return path


def load_key(path: Path, *, players: Collection[bytes] = ()) -> Identity:
    """The key at ``path``, or one line saying how to make it (:func:`load_identity`).

    Raises:
        NertzError: no key there, or not a usable key file.
    """
    if not path.exists():
        raise NertzError(f"no key file at {str(path)!r}; make one with: nertz keygen --key {path}")
    return load_identity(path, players=players)


def save_key(path: Path, identity: Identity) -> None:
    """Write a new key to ``path``, making its directory (mode 0700) first.

    Raises:
        NertzError: the directory or the file cannot be made.
    """
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(path.parent)!r}: {exc.strerror}") from None
    write_key(path, identity)
