"""Key files tell a secret key from anything else (docs/key-files.md): new keys are written
named, old raw keys load unchanged with their fingerprint, and a public key (raw, in hex, a
fingerprint) or any other file handed where a secret key is due is refused in one line that
says what the file is and what to give instead. Real files in ``tmp_path`` (conftest gives
each test its own config dir, so the default key and the key store are the test's)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cli_helpers import make_key

from cli.keyfile import default_key_path, keep_key, load_identity, write_key
from cli.keyformat import SECRET_HEADER
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import LogHeader
from p2p_nertz.logfile.store import create_log
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed

ANN = Identity.generate(derive_seed(b"test-key-files", 0))


def _file(tmp_path: Path, data: bytes, name: str = "given.key") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def test_a_new_key_file_names_its_kind_and_fingerprint_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "ann.key"
    write_key(path, ANN)
    lines = path.read_text().splitlines()
    assert lines[0] == SECRET_HEADER
    assert lines[1] == f"fingerprint {ANN.fingerprint}"
    assert base64.b64decode(lines[2]) == ANN.to_bytes()
    assert load_identity(path) == ANN


def test_an_old_raw_key_file_still_loads_unchanged(tmp_path: Path) -> None:
    path = _file(tmp_path, ANN.to_bytes())
    assert load_identity(path).fingerprint == ANN.fingerprint
    assert path.read_bytes() == ANN.to_bytes()  # read, never rewritten


def _log_bytes(tmp_path: Path) -> bytes:
    log = tmp_path / "a.log"
    with create_log(log, LogHeader(game_id=bytes(32), peer_id=bytes(ANN.peer_id), created_at_ms=0)):
        pass
    return log.read_bytes()


def _named(**change: str) -> bytes:
    """ANN's named key file with lines replaced (``header``, ``fp``, ``seed``)."""
    seed = base64.b64encode(ANN.to_bytes()).decode()
    lines = {"header": SECRET_HEADER, "fp": f"fingerprint {ANN.fingerprint}", "seed": seed}
    lines.update(change)
    return "\n".join(lines.values()).encode() + b"\n"


PUBLIC_HEX = bytes(ANN.peer_id).hex()
FP = ANN.fingerprint
WRONG = {
    "empty": (b"", "is empty, not a secret key"),
    "short": (ANN.to_bytes()[:16], "is not a key file (16 bytes"),
    "raw and a newline": (ANN.to_bytes() + b"\n", "is not a key file (33 bytes"),
    "too long": (b"k" * 4096, "too long for a key file"),
    "public hex": (PUBLIC_HEX.encode() + b"\n", f"public key in hex (fingerprint {FP})"),
    "watcher": (f"127.0.0.1:5600#{PUBLIC_HEX}".encode(), f"public key in hex (fingerprint {FP})"),
    "fingerprint": (FP.encode() + b"\n", "holds a fingerprint, not a secret key"),
    "log": (None, "is a game log, not a secret key"),
    "fingerprint lies": (_named(fp="fingerprint aaaa-aaaa-aaaa-aaaa"), "names fingerprint aaaa-"),
    "cut": (_named()[:60], "damaged p2p-nertz secret key"),
    "seed not base64": (_named(seed="!" * 44), "its key line is not 32 bytes"),
    "not text": (SECRET_HEADER.encode() + b"\n\xff\xfe\n", "secret key (not text)"),
    "newer": (_named(header="p2p-nertz secret key v2"), "another version ('p2p-nertz"),
}


@pytest.mark.parametrize("mode", [0o600, 0o644], ids=["private", "as files are made"])
@pytest.mark.parametrize("case", sorted(WRONG))
def test_what_is_not_a_secret_key_is_refused_saying_what_it_is(
    tmp_path: Path, case: str, mode: int
) -> None:
    """Whatever its mode: a file no key, open to others as files are made, was told to be
    made private (``chmod 600``) before it was said to be no key at all (session 43)."""
    data, says = WRONG[case]
    path = _file(tmp_path, _log_bytes(tmp_path) if data is None else data)
    path.chmod(mode)
    before = path.read_bytes()
    with pytest.raises(NertzError) as refused:
        load_identity(path)
    line = str(refused.value)
    assert "\n" not in line and says in line, line
    assert line.startswith(repr(str(path))) and "give your key file" in line, line
    assert path.read_bytes() == before


def test_a_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(NertzError, match=r"cannot read key file .*: Is a directory"):
        load_identity(tmp_path)


def test_the_raw_public_key_of_the_default_key_is_refused_naming_that_file(
    tmp_path: Path,
) -> None:
    mine = make_key()  # (the default key: conftest's config dir)
    path = _file(tmp_path, bytes(mine.peer_id))
    with pytest.raises(NertzError) as refused:
        load_identity(path)
    line = str(refused.value)
    assert f"is the public key of {mine.fingerprint}" in line, line
    assert f"give the key file itself, {str(default_key_path())!r}" in line, line


def test_the_raw_public_key_of_a_kept_key_is_refused_naming_that_file(tmp_path: Path) -> None:
    kept = keep_key(ANN)
    with pytest.raises(NertzError, match=f"public key of {ANN.fingerprint}.*{kept}"):
        load_identity(_file(tmp_path, bytes(ANN.peer_id)))


def test_the_raw_public_key_of_a_player_is_refused_where_the_game_is_known(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, bytes(ANN.peer_id))
    bob = Identity.generate(derive_seed(b"test-key-files", 1))
    assert load_identity(path, players=[bytes(bob.peer_id)]) != ANN  # (unknown: read as a seed)
    with pytest.raises(NertzError, match=f"public key of {ANN.fingerprint}, a player"):
        load_identity(path, players=[bytes(bob.peer_id), bytes(ANN.peer_id)])


def test_the_key_formats_documented_examples_hold() -> None:
    # (cli/ is not among the doctest paths: its examples are run here)
    import doctest

    import cli.keyformat

    failed, tried = doctest.testmod(cli.keyformat)
    assert tried > 0 and failed == 0
