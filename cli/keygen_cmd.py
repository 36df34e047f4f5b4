"""``nertz keygen``: make a player's key, or show the fingerprint of one.

A player keeps one key; its short fingerprint is how others recognise them (cli/keyfile.py
reads and writes key files). A module of its own, apart from the lobby's commands
(cli/lobby_cmd.py): making a key needs neither the node, trio nor ZeroMQ, which were
nine-tenths of this command's start.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.keyfile import default_key_path, load_key, replace_key, save_key
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity

__all__: list[str] = []  # (its command, _cmd_keygen, is run by cli/parsers.py)


def _cmd_keygen(args: argparse.Namespace) -> int:
    path: Path = args.key
    if args.show:
        identity = load_key(path)
        print(f"{identity.fingerprint}  {path}")
        # A lobby game's spec exists only once it starts, too late for the members' --watcher:
        # the spectator's key, the one `nertz watch` prints, is this public key.
        print("as a spectator (nertz watch), members push to you with --watcher HOST:PORT#KEY,")
        print(f"KEY: {identity.peer_id.hex()}")
        return 0
    if path.is_dir():  # ("cannot read key file": keygen was asked to write one)
        raise NertzError(
            f"{str(path)!r} is a directory: give the path of the key file to make, "
            f"e.g. {str(path / 'key')!r}"
        )
    if path.exists() and not args.force:
        identity = load_key(path)
        raise NertzError(
            f"{str(path)!r} already holds key {identity.fingerprint}; --force replaces it"
        )
    if path != default_key_path() and not path.parent.is_dir():
        # A typo in --key should not leave a tree of new directories: only the default
        # place (the config directory) is made on demand.
        raise NertzError(
            f"no directory {str(path.parent)!r} for the key: make it first, or leave out "
            f"--key for the default place ({default_key_path()})"
        )
    identity = Identity.generate()
    if path.exists() or path.is_symlink():
        replace_key(path, identity)  # (the old key stays whole if this fails)
    else:
        save_key(path, identity)
    print(f"new key {identity.fingerprint} written to {path}")
    return 0
