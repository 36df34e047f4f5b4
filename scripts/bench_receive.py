#!/usr/bin/env python3
"""The core's CPU per message received, against the bare work of the same messages.

Issue 18 (docs/latency.md, session 25): of a claim's CPU at 4 peers, about a third is the
core's Python per message received. This prints that cost, measured so that it can be
compared across branches on a loaded machine, next to a floor measured in the same run:

* **the receive path**: seat 0's inputs of a fault-free simulated game (as
  ``bench_protocol.py`` records them: every message, tick and move, with its time) replayed
  into a fresh peer with a codec memo of its own, each input followed by what the node asks
  after it (``next_deadline``, ``table_gone``); the CPU of the message inputs alone
  (``Peer.feed`` and those two asks: the decode, the verify, the delivery, finality, the fold,
  the acks, the timers), per message. The effects must be the game's, byte for byte.
* **the reference**: for each of the same messages, what no receiver can skip: the frame and
  the payload unpacked by msgpack and the signature verified once by libsodium
  (``crypto_sign_open``, as the core calls it).

Each figure is the median over ``--repeats`` runs of its CPU (``time.process_time``) per
message, the two alternated run by run; the ratio and the difference ("the core's own") are
what to compare between branches. Deterministic figures, which the load does not move: the
same replay under ``valgrind --tool=callgrind`` (instructions: a run with ``--replays 1`` less
one with ``--replays 0``, ``--inputs FILE`` so that neither records the game under valgrind),
and ``bench_protocol.py --opcodes``.

    python scripts/bench_receive.py [--players 2,4,8] [--repeats 15]
    valgrind --tool=callgrind python scripts/bench_receive.py --players 4 --replays 1 \\
        --inputs /tmp/inputs4.pkl
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import msgpack
from nacl._sodium import ffi, lib

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_protocol import recorded_inputs  # (a script beside this one)

from p2p_nertz import build
from p2p_nertz.protocol.envelope import SIGNATURE_DOMAIN, EnvelopeCache
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Move

Inputs = list[tuple[str, tuple[object, ...]]]


@dataclass(frozen=True, slots=True)
class Recorded:
    """Seat 0's inputs of a simulated game, what each returned, and what makes its peer."""

    identity: bytes  # (Identity.to_bytes: an Identity is not pickled)
    spec: GameSpec
    config: PeerConfig
    inputs: Inputs
    effects: str  # (the digest of what each input returned: effects_digest)

    @property
    def messages(self) -> list[bytes]:
        """The messages among the inputs, in order."""
        return [args[0] for name, args in self.inputs if name == "feed"]  # type: ignore[misc]


def record(players: int) -> Recorded:
    """Seat 0's inputs of ``bench_protocol.py``'s fault-free game at ``players`` peers."""
    sim, inputs, returned = recorded_inputs(players)
    return Recorded(
        sim.identities[0].to_bytes(), sim.spec, sim.config.peer, inputs, effects_digest(returned)
    )


def _plain(value: object) -> object:
    """An effect as plain values: its type's name and its fields', recursively (sets sorted)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (
            type(value).__name__,
            tuple((f.name, _plain(getattr(value, f.name))) for f in fields),
        )
    if isinstance(value, tuple | list):
        return tuple(_plain(item) for item in value)
    if isinstance(value, frozenset | set):
        return ("set", tuple(sorted(repr(_plain(item)) for item in value)))
    return value


def effects_digest(returned: list[list[Effect]]) -> str:
    """A digest of what every input returned, field by field (the same on either build)."""
    return hashlib.sha256(repr(_plain(returned)).encode()).hexdigest()


def _to_file(recorded: Recorded) -> bytes:
    inputs = [
        [name, [{"move": str(a)} if isinstance(a, Move) else a for a in args]]
        for name, args in recorded.inputs
    ]
    packed: bytes = msgpack.packb(
        {
            "identity": recorded.identity,
            "spec": recorded.spec.to_wire(),
            "config": dataclasses.asdict(recorded.config),
            "inputs": inputs,
            "effects": recorded.effects,
        },
        use_bin_type=True,
    )
    return packed


def _from_file(data: bytes) -> Recorded:
    kept = msgpack.unpackb(data, raw=False)
    inputs: Inputs = [
        (name, tuple(Move.parse(a["move"]) if isinstance(a, dict) else a for a in args))
        for name, args in kept["inputs"]
    ]
    return Recorded(
        kept["identity"],
        GameSpec.from_wire(kept["spec"]),
        PeerConfig(**kept["config"]),
        inputs,
        kept["effects"],
    )


def load_or_record(players: int, path: str | None) -> Recorded:
    """:func:`record`, kept in ``path`` (read from it if it is there: a callgrind run then
    counts no recording)."""
    if path is not None and os.path.exists(path):
        with open(path, "rb") as f:
            try:
                recorded = _from_file(f.read())
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"{path} is not a recording of this script ({e})") from None
        if len(recorded.spec.members) != players:
            raise SystemExit(f"{path} holds a game of {len(recorded.spec.members)} players")
        return recorded
    recorded = record(players)
    if path is not None:
        with open(path, "wb") as f:
            f.write(_to_file(recorded))
    return recorded


def replay(recorded: Recorded) -> tuple[float, list[list[Effect]]]:
    """The inputs fed to a fresh peer as the node feeds them: the CPU (seconds) of the
    message inputs, each with the node's asks after it, and what every input returned."""
    peer = Peer(
        Identity.from_bytes(recorded.identity),
        recorded.spec,
        0.0,
        recorded.config,
        envelopes=EnvelopeCache(),
    )
    clock = time.process_time
    spent = 0.0
    returned = []
    for name, args in recorded.inputs:
        feed = name == "feed"
        start = clock() if feed else 0.0
        returned.append(getattr(peer, name)(*args))
        peer.next_deadline()  # (what PeerNode._apply and its end check ask after each input)
        peer.table_gone(args[-1])  # type: ignore[arg-type]
        if feed:
            spent += clock() - start
    return spent, returned


def reference(messages: list[bytes]) -> float:
    """The CPU (seconds) of the bare work of ``messages``: each frame and payload unpacked,
    each signature verified once by libsodium; every one must verify."""
    unpack = msgpack.unpackb
    authors = [unpack(unpack(m)[0])[2] for m in messages]  # (outside the figure)
    open_ = lib.crypto_sign_open
    start = time.process_time()
    for data, author in zip(messages, authors, strict=True):
        payload, signature = unpack(data)
        unpack(payload)
        signed = signature + SIGNATURE_DOMAIN + payload
        out = ffi.new("unsigned char[]", len(signed))
        if open_(out, ffi.NULL, signed, len(signed), author) != 0:
            raise AssertionError("a recorded message does not verify")
    return time.process_time() - start


@dataclass(frozen=True, slots=True)
class Figures:
    """Per message received (µs, medians over the repeats) at ``players`` peers."""

    players: int
    messages: int
    core: float  # the receive path (Peer.feed and the node's asks after it)
    floor: float  # the reference: two unpacks and one verify
    core_range: tuple[float, float]
    floor_range: tuple[float, float]

    @property
    def ratio(self) -> float:
        return self.core / self.floor


def measure(recorded: Recorded, repeats: int) -> Figures:
    """:func:`replay` and :func:`reference` alternated ``repeats`` times (after one of each to
    warm them); raises if a replay's effects differ from the game's."""
    messages = recorded.messages
    replay(recorded)
    reference(messages)
    core, floor = [], []
    for _ in range(repeats):
        spent, returned = replay(recorded)
        if effects_digest(returned) != recorded.effects:
            raise AssertionError("the replay's effects differ from the game's")
        core.append(spent / len(messages) * 1e6)
        floor.append(reference(messages) / len(messages) * 1e6)
    return Figures(
        len(recorded.spec.members),
        len(messages),
        statistics.median(core),
        statistics.median(floor),
        (min(core), max(core)),
        (min(floor), max(floor)),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="2,4,8", help="comma-separated (default 2,4,8)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--replays",
        type=int,
        default=None,
        help="only replay the inputs this many times and print nothing else (for callgrind)",
    )
    parser.add_argument(
        "--inputs", default=None, help="a file to keep the recorded inputs in (one --players)"
    )
    args = parser.parse_args()
    players = [int(p) for p in args.players.split(",")]
    if args.inputs is not None and len(players) != 1:
        parser.error("--inputs takes one --players")
    if args.replays is not None:
        recorded = load_or_record(players[0], args.inputs)
        for _ in range(args.replays):
            replay(recorded)
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} at the start; the core {build.describe()}")
    print("CPU per message received by seat 0, its inputs replayed (µs, median of the repeats):")
    print("  peers  messages  receive path (range)      reference (range)    ratio  core's own")
    for n in players:
        f = measure(load_or_record(n, args.inputs), args.repeats)
        print(
            f"  {f.players:5d}  {f.messages:8d}  {f.core:7.1f} ({f.core_range[0]:.1f}-"
            f"{f.core_range[1]:.1f})  {f.floor:7.1f} ({f.floor_range[0]:.1f}-"
            f"{f.floor_range[1]:.1f})  {f.ratio:5.2f}  {f.core - f.floor:7.1f}"
        )
    print(
        "(reference: the frame and payload unpacked and one libsodium verify of each message;"
        " the core's own: the difference)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
