"""A hostile member among real processes: honest nodes in child processes, the member here.

:func:`run_game` starts one child process per honest member (this file run as a script: a
:class:`~p2p_nertz.runtime.node.PeerNode` of greedy bots on tcp://127.0.0.1, CURVE, its own
log), and runs the hostile member in the calling process: a real node too, with its key, its
log and its bot, beside which an *attack* sends what a member with a valid key can send over
its own CURVE connections (:data:`ATTACKS`). Every node binds a free port first and says it
(no port is picked beforehand for another process to take), and all start together, each
told every endpoint, once all are bound (a loaded machine may take seconds to start a
process). When every child
has finished (or the game's timeout ran out: a child that hangs is killed and reported), the
outcome says what each honest node ended with (its final digest, the members it dropped, its
CPU and peak RSS, whether it wrote a traceback) and what the audit of every log, the hostile
member's included, names.

The attacks start once the hostile member's own fold is in play with cards in the lake (a
round under way) and run until the honest nodes are done. Each is bounded in what it sends per
second only by the hostile process's CPU and zmq's queues (the node's outlets drop what does
not fit). Everything is seeded but timing: two runs of one seed play different games.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from p2p_nertz.audit import LogSource, audit
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Beat,
    Play,
    Want,
    encode_body,
    held_ids,
    kind_of,
)
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Kind, decode_unverified, encode_message, looks_like_beat
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Peer, PeerConfig
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move
from p2p_nertz.runtime.node import PeerNode, node_config
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.said import NeverSaid, first_line

__all__ = [
    "ATTACKS",
    "CONFIG",
    "GameOutcome",
    "HonestResult",
    "Hostile",
    "HostileNode",
    "make_game",
    "run_game",
]

#: The endpoint given for an honest node that ended before it bound (its outcome says so):
#: a port of 127.0.0.1 nobody listens on (1, tcpmux: a port only root may bind).
_NOBODY = "tcp://127.0.0.1:1"

CONFIG: PeerConfig = node_config(suspect_after=1.0, drop_after=3.0)
"""Every node's timers: short, so that a member gone quiet is voted out within seconds."""

HOSTILE_BURST = 64
"""Messages an attack sends between two checkpoints (the hostile node's own loop runs too)."""


def make_game(players: int, seed: int) -> tuple[list[Identity], GameSpec]:
    """Identities in seat order and the spec of a one-round game of ``players`` bots."""
    return bot_game(b"hostile", players, seed)


# -- the honest nodes, one process each -------------------------------------------------------
def child_main(config_path: str, seat: str) -> int:
    """Run honest seat ``seat`` of the game in ``config_path``; write its result next to it."""
    cfg = json.loads(Path(config_path).read_text())
    identities, spec = make_game(cfg["players"], cfg["seed"])
    s = int(seat)
    logdir = Path(cfg["logdir"])
    suspect, drop = cfg["timers"]  # (run_game writes them: CONFIG's, or the test's)
    node = PeerNode(
        identities[s],
        spec,
        logdir / f"peer{s}.log",
        bind="tcp://127.0.0.1:0",  # (any free port, said to run_game, which tells the others)
        strategy="greedy",
        speed=10,
        config=node_config(suspect_after=suspect, drop_after=drop),
        grace=3.0,
        linger=0.5,
    )
    # Bound, then wait for every member to be (run_game): a node that starts seconds before
    # another (a loaded machine starting processes) would vote it out as silent, a 3 s
    # drop_after, and play another game than the test's.
    print("bound", node.bind(), flush=True)
    book = json.loads(sys.stdin.readline(1 << 16))  # every member's endpoint, by seat: go
    endpoints = {spec.peer_ids[i]: e for i, e in enumerate(book)}
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (nobody reads it now)
    started = time.monotonic()

    async def main() -> Peer:
        return await node.run(endpoints)

    peer = trio.run(main)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result = {
        "seat": s,
        "digest": peer.final.digest(),
        "over": peer.final.phase is Phase.OVER,
        "dropped": sorted(peer.final.dropped),
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "wall": time.monotonic() - started,
        "refused": dict(node.refusals.counts),
        # (What each asker's wants got answered, and the pace the budget allows.)
        "answered": peer._delivery.answers.answered,
        "want_interval": peer._delivery.answers._store.want_interval,
    }
    (logdir / f"result{s}.json").write_text(json.dumps(result))
    return 0


@dataclasses.dataclass
class HonestResult:
    """What one honest node ended with (``None`` fields: it never wrote its result)."""

    seat: int
    returncode: int | None
    digest: str | None
    dropped: list[int]
    cpu: float | None
    rss_mb: float | None
    wall: float | None
    traceback: bool
    stderr: str
    #: Wants answered, by asker's seat; and the budget's ``want_interval``.
    answered: dict[int, int] = dataclasses.field(default_factory=dict)
    want_interval: float = 0.0


@dataclasses.dataclass
class GameOutcome:
    """One game with a hostile member (the last seat)."""

    attack: str
    players: int
    honest: list[HonestResult]
    sent: int  # messages the attack handed to the hostile node's sockets
    findings: dict[str, list[int]]  # audit finding code -> seats named
    audit_dropped: list[int]
    audit_digest: str
    timed_out: bool
    lies: int = 0  # beats one ahead sent to the victim (attack ``only_ahead``)

    @property
    def agreed(self) -> bool:
        """Every honest node finished with the same final digest."""
        digests = {h.digest for h in self.honest}
        return len(digests) == 1 and None not in digests


# -- the hostile member -------------------------------------------------------------------------
class HostileNode(PeerNode):
    """A member's real node that an attack may silence: it then sends nothing (its bot plays
    on; what it signs meanwhile is logged, and goes out when asked for after). Or, with
    :attr:`only_ahead` set, keep every beat and ack from one member (``only_ahead``'s first
    item), sending it instead, each time, the lie its second item signs."""

    silent = False
    #: a member it sends nothing of its own to (the others relay its events there)
    withhold_from: PeerId | None = None
    only_ahead: tuple[PeerId, Callable[[], bytes]] | None = None
    lies = 0  # the lies :attr:`only_ahead` sent

    def _send(self, effect: Any) -> None:
        if self.silent:
            return
        if self.only_ahead is not None and looks_like_beat(effect.data):
            victim, lie = self.only_ahead
            kind = decode_unverified(
                effect.data, game_id=self.peer.game_id, roster=self.spec.peer_ids
            ).kind
            if kind in (Kind.BEAT, Kind.ACK) and effect.to in (None, victim):
                if effect.to is None:  # (ours: to the others alone, and the lie to the victim)
                    for pid in self.spec.peer_ids:
                        if pid not in (victim, self.identity.peer_id):
                            super()._send(Send(effect.data, pid))
                    super()._send(Send(lie(), victim))
                    self.lies += 1
                return  # (and nothing beat-like of anyone's to the victim: relays neither)
        victim = self.withhold_from
        if victim is None or (effect.to is not None and effect.to != victim):
            super()._send(effect)
        elif effect.to is None:
            for to in self.peer.spec.peer_ids:
                if to not in (victim, self.peer.spec.peer_ids[self.peer.seat]):
                    super()._send(Send(effect.data, to))


@dataclasses.dataclass
class Hostile:
    """What an attack works with: the member's node, key and game, and a Lamport counter."""

    node: HostileNode
    identity: Identity
    spec: GameSpec
    others: list[PeerId]
    sent: int = 0
    lamport: int = 0
    #: The spec's id, worked out once as the node's core does (``GameSpec.game_id`` hashes the
    #: spec at each reading: a tenth of the flood's CPU when read for every want).
    game_id: bytes = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.game_id = self.spec.game_id

    @property
    def peer(self) -> Peer:
        return self.node.peer

    @property
    def seat(self) -> int:
        return self.spec.seats - 1

    def next_lamport(self, above: int = 0) -> int:
        """A Lamport time above all we signed; our core's clock is moved up to it, so that
        what the core signs next is timed above it (else a forged beat and the core's next
        event would be a lie about time, docs/protocol.md §9.4: an attack of its own)."""
        self.lamport = max(self.lamport + 1, self.peer.clock + 1, above)
        outbox = self.peer._outbox  # (a test-only reach into the core, as liar_helpers does)
        outbox.clock = max(outbox.clock, self.lamport)
        return self.lamport

    def sign(
        self,
        kind: Kind,
        body: Any,
        *,
        seq: int = 0,
        prev: bytes | None = None,
        lamport: int | None = None,
    ) -> bytes:
        return encode_message(
            self.identity,
            game_id=self.game_id,
            seq=seq,
            prev=prev,
            # (A time near the counter's end is sent as is: our own clock does not follow it.)
            lamport=self.next_lamport(above=lamport or 0)
            if lamport is None or lamport < 2**62
            else lamport,
            kind=kind,
            body=body,
            version=self.spec.wire_version,
        )

    def beat(
        self,
        *,
        head: int | None = None,
        head_id: bytes | None = None,
        held: tuple[int, ...] | None = None,
        lamport: int | None = None,
    ) -> bytes:
        peer = self.peer
        feeds = [peer.events(q) for q in range(self.spec.seats)]
        own = feeds[self.seat]
        beat = Beat(
            head_seq=len(own) if head is None else head,
            head_id=(own[-1].id if own else None) if head is None else head_id,
            held=tuple(len(f) for f in feeds) if held is None else held,
            held_ids=tuple(f[-1].id[:ID_PREFIX] if f else b"" for f in feeds)
            if held is None
            else tuple(hashlib.sha256(b"%d" % h).digest()[:ID_PREFIX] if h else b"" for h in held),
        )
        return self.sign(Kind.BEAT, encode_body(beat), lamport=lamport)

    def next_event(
        self, move: Move, *, lamport: int | None = None, frontier: tuple[int, ...] | None = None
    ) -> bytes:
        """A pass at the next seq of our feed, chained to our head (a version of our next event
        our core never signs: its own next event will be another). Such a version coming back
        past the core's head is its own fork, not a second process of its player: the core
        is told it is a forger, as the simulator's cheats do (recovery.Doubt)."""
        peer = self.peer
        peer._author.forger = True
        own = peer.events(self.seat)
        held = tuple(peer.held(q) for q in range(self.spec.seats))
        named = tuple(len(own) if q == self.seat else h for q, h in enumerate(held))
        if frontier is not None:
            named = frontier
        ids = tuple(
            b""
            if not h
            else peer.events(q)[h - 1].id[:ID_PREFIX]
            if h <= peer.held(q)
            else hashlib.sha256(b"unseen %d %d" % (q, h)).digest()[:ID_PREFIX]
            for q, h in enumerate(named)
        )
        body = Play(named, peer.tentative.round.number, move, frontier_ids=ids)
        return self.sign(
            kind_of(body),
            encode_body(body),
            seq=len(own) + 1,
            prev=own[-1].id if own else None,
            lamport=lamport,
        )

    async def send(self, data: bytes, to: PeerId | None = None) -> None:
        """Hand ``data`` to our DEALER towards ``to`` (every other member: ``None``)."""
        for pid in self.others if to is None else [to]:
            self.node._mesh.send(data, pid)
            self.sent += 1
            if self.sent % HOSTILE_BURST == 0:
                await trio.sleep(0)


Attack = Callable[[Hostile], Awaitable[None]]


async def attack_none(h: Hostile) -> None:
    await trio.sleep_forever()


WANT_RATE = 2000.0
"""Wants a second the ``wants`` attack sends each member: four times a member's budget (500,
docs/protocol.md §9.7), and few enough that its own events still get through its DEALER (a
flood at line rate fills its own pipe: the member goes quiet, a case of its own)."""


async def attack_wants(h: Hostile) -> None:
    """Valid-signed wants for everything, every feed, to every member, ``WANT_RATE`` a second
    (``wants_flat``: as fast as we sign)."""
    started = trio.current_time()
    for n, seat in enumerate(itertools.cycle(range(h.spec.seats)), 1):
        await h.send(h.sign(Kind.WANT, encode_body(Want(seat, 1, 2**62))))
        ahead = n / WANT_RATE - (trio.current_time() - started)
        if ahead > 0.005:
            await trio.sleep(ahead)


async def attack_wants_flat(h: Hostile) -> None:
    for seat in itertools.cycle(range(h.spec.seats)):
        await h.send(h.sign(Kind.WANT, encode_body(Want(seat, 1, 2**62))))


async def attack_clocks(h: Hostile) -> None:
    """Beats announcing a head far ahead of our feed and holding events nobody has, and events
    timed near the counter's maximum whose frontiers name events that do not exist."""
    for n in itertools.count():
        held = tuple(h.peer.held(q) + 1000 for q in range(h.spec.seats))
        head = len(h.peer.events(h.seat)) + 1000
        await h.send(h.beat(head=head, head_id=bytes(32), held=held))
        if n % 50 == 0:
            await h.send(h.next_event(Move.pass_(), lamport=2**63 - 2, frontier=held))
            await h.send(h.next_event(Move.pass_(), frontier=held))
        if n % 10 == 0:
            await trio.sleep(0.001)


async def attack_clock_split(h: Hostile) -> None:
    """Beats to the first member only, each timed just under the clock-jump limit above the
    last (docs/protocol.md §4.5): that member's clock runs ahead of the others' by as much as
    it takes beats."""
    target = h.others[0]
    while True:
        base = max(h.lamport, h.peer.clock)
        await h.send(h.beat(lamport=base + MAX_CLOCK_JUMP - 1), target)
        await trio.sleep(0.01)


async def attack_equivocate(h: Hostile) -> None:
    """Two versions of our next event, one to each half of the others; then different beat
    streams to each member (each a head of its own)."""
    first = h.next_event(Move.pass_())
    second = h.next_event(Move.pass_(), lamport=h.lamport + 1)
    half = max(1, len(h.others) // 2)
    for pid in h.others[:half]:
        await h.send(first, pid)
    for pid in h.others[half:]:
        await h.send(second, pid)
    while True:
        for i, pid in enumerate(h.others):
            await h.send(
                h.beat(
                    head=len(h.peer.events(h.seat)) + 1 + i,
                    head_id=hashlib.sha256(b"%d" % i).digest(),
                ),
                pid,
            )
        await trio.sleep(0.01)


async def attack_replay(h: Hostile) -> None:
    """Another game's valid messages (the same members' keys) and our own old ones, fast."""
    _, other_spec = make_game(h.spec.seats, 10_000 + h.spec.seats)
    foreign = [
        encode_message(
            h.identity,
            game_id=other_spec.game_id,
            seq=0,
            prev=None,
            lamport=n,
            kind=Kind.BEAT,
            body=encode_body(Beat(0, None, (0,) * h.spec.seats)),
            version=h.spec.wire_version,
        )
        for n in range(1, 101)
    ]
    old: list[bytes] = []
    for n in itertools.count():
        if n % 100 == 0:
            old = [m.wire for m in h.peer.events(h.seat)] + [h.beat() for _ in range(3)]
        await h.send(foreign[n % len(foreign)])
        if old:
            await h.send(old[n % len(old)])


async def attack_silent(h: Hostile) -> None:
    """Quiet for a while mid-round (nothing sent, no move), then a flood of wants and our whole
    feed again on return."""
    h.node.silent = True
    await trio.sleep(2 * CONFIG.suspect_after)
    h.node.silent = False
    await attack_replay_own_and_wants(h)


async def attack_withhold_one(h: Hostile) -> None:
    """Nothing of our own to the first member from now on (no event, beat, ack or answer),
    all as usual to the others, which relay our events to it (session 25: in the simulator
    this holds that member in ``result`` for good, docs/protocol.md §13)."""
    h.node.withhold_from = h.others[0]
    await trio.sleep_forever()


async def attack_replay_own_and_wants(h: Hostile) -> None:
    for n in itertools.count():
        own = h.peer.events(h.seat)
        if own:
            await h.send(own[n % len(own)].wire)
        await h.send(h.sign(Kind.WANT, encode_body(Want(n % h.spec.seats, 1, 2**62))))


async def attack_only_ahead(h: Hostile) -> None:
    """From mid-round on, the first member hears from us no beat or ack: ours go to the
    others alone, and the first member gets instead, each time, a beat of our own feed's head
    one past our last event, which we never give (docs/protocol.md §9.2, *only beats one
    ahead*). Our events, wants and answers still go to every member."""

    def lie() -> bytes:
        peer = h.peer
        feeds = [peer.events(q) for q in range(h.spec.seats)]
        held = [len(f) for f in feeds]
        ids = list(held_ids(feeds, tuple(held)))
        held[h.seat] += 1  # (an event nobody is given)
        ids[h.seat] = bytes(ID_PREFIX)
        beat = Beat(held[h.seat], bytes(32), tuple(held), tuple(ids))
        return h.sign(Kind.BEAT, encode_body(beat))

    h.node.only_ahead = (h.others[0], lie)
    await trio.sleep_forever()


async def attack_garbage(h: Hostile) -> None:
    """Malformed frames under our key and routing id: bytes that are no message, messages of
    the largest size with a broken body, and frames just over the size limit."""
    rnd = random.Random(h.spec.seats)
    big = b"\x92" + bytes(5000)
    for n in itertools.count():
        kind = n % 4
        if kind == 0:
            data = rnd.randbytes(rnd.randint(1, 4096))
        elif kind == 1:
            data = h.beat()[:-1] + bytes([rnd.randrange(256)])  # a bad signature of ours
        elif kind == 2:
            data = b"\x95" + rnd.randbytes(4000)
        else:
            data = big if n % 400 == 3 else rnd.randbytes(64)
        await h.send(data)


ATTACKS: dict[str, Attack] = {
    "none": attack_none,
    "wants": attack_wants,
    "wants_flat": attack_wants_flat,
    "clocks": attack_clocks,
    "clock_split": attack_clock_split,
    "equivocate": attack_equivocate,
    "replay": attack_replay,
    "silent": attack_silent,
    "garbage": attack_garbage,
    "withhold_one": attack_withhold_one,
    "only_ahead": attack_only_ahead,
}


def _mid_round(peer: Peer) -> bool:
    table = peer.final.table
    return peer.final.phase is Phase.PLAY and table is not None and any(table.lake.cards())


async def _hostile_side(
    h: Hostile,
    endpoints: dict[PeerId, str],
    attack: Attack,
    children: list[subprocess.Popen[bytes]],
    timeout: float,
) -> bool:
    """Run the hostile node and its attack until every child exited; whether it timed out."""
    with trio.move_on_after(timeout) as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(h.node.run, endpoints)

            async def attack_mid_round() -> None:
                while h.node._peer is None or not _mid_round(h.peer):
                    await trio.sleep(0.01)
                await attack(h)

            nursery.start_soon(attack_mid_round)
            async with trio.open_nursery() as waits:
                for child in children:
                    waits.start_soon(
                        functools.partial(
                            trio.to_thread.run_sync, child.wait, abandon_on_cancel=True
                        )
                    )
            nursery.cancel_scope.cancel()
    return scope.cancelled_caught


def run_game(
    attack: str,
    players: int,
    seed: int,
    workdir: Path,
    *,
    timeout: float = 90.0,
    timers: tuple[float, float] | None = None,
    hostile_timers: tuple[float, float, float] | None = None,
) -> GameOutcome:
    """One game of ``players`` with the last seat hostile; see the module docstring. Every
    node's ``timers`` (``suspect_after``, ``drop_after``) are :data:`CONFIG`'s unless given;
    the hostile node's own (its honest code's votes and abandons: ``suspect_after``,
    ``drop_after``, ``phase_timeout``) ``hostile_timers``, if given."""
    identities, spec = make_game(players, seed)
    logdir = workdir / f"{attack}-{players}-{seed}"
    logdir.mkdir(parents=True)
    suspect, drop = timers or (CONFIG.suspect_after, CONFIG.drop_after)
    cfg = {"players": players, "seed": seed, "logdir": str(logdir), "timers": [suspect, drop]}
    cfg_path = logdir / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    errs = [(logdir / f"stderr{s}.txt").open("wb") for s in range(players - 1)]
    children = [
        subprocess.Popen(
            [sys.executable, __file__, str(cfg_path), str(s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errs[s],
        )
        for s in range(players - 1)
    ]
    bound: list[str] = []
    for s, c in enumerate(children):
        try:
            said = first_line(c, f"the node of seat {s}").split()  # bound ENDPOINT
        except NeverSaid:
            if c.poll() is None:  # (alive and silent: said what it is doing; all ended)
                for each in children:
                    each.kill()
                    each.wait()
                raise
            said = []  # (gone: its outcome says so)
        bound.append(said[1] if said[:1] == ["bound"] else _NOBODY)
    hostile_seat = players - 1
    node = HostileNode(
        identities[hostile_seat],
        spec,
        logdir / f"peer{hostile_seat}.log",
        bind="tcp://127.0.0.1:0",
        strategy="greedy",
        speed=10,
        config=(
            node_config(suspect_after=suspect, drop_after=drop)
            if hostile_timers is None
            else dataclasses.replace(
                node_config(suspect_after=hostile_timers[0], drop_after=hostile_timers[1]),
                phase_timeout=hostile_timers[2],
            )
        ),
    )
    h = Hostile(node, identities[hostile_seat], spec, list(spec.peer_ids[:hostile_seat]))
    endpoints = [*bound, node.bind()]
    book = dict(zip(spec.peer_ids, endpoints, strict=True))
    for c in children:  # every member is bound: go, all at once, told every endpoint
        assert c.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            c.stdin.write(json.dumps(endpoints).encode() + b"\n")
            c.stdin.flush()
        with contextlib.suppress(BrokenPipeError):
            c.stdin.close()
    try:
        timed_out = trio.run(_hostile_side, h, book, ATTACKS[attack], children, timeout)
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
            c.wait()
            if c.stdout is not None:
                c.stdout.close()
        for e in errs:
            e.close()
    honest = []
    for s, c in enumerate(children):
        path = logdir / f"result{s}.json"
        result = json.loads(path.read_text()) if path.exists() else {}
        stderr = (logdir / f"stderr{s}.txt").read_text(errors="replace")
        honest.append(
            HonestResult(
                s,
                c.returncode,
                result.get("digest"),
                result.get("dropped", []),
                result.get("cpu"),
                result.get("rss_mb"),
                result.get("wall"),
                "Traceback" in stderr,
                stderr[-2000:],
                {int(k): v for k, v in result.get("answered", {}).items()},
                result.get("want_interval", 0.0),
            )
        )
    report = audit([LogSource.from_path(logdir / f"peer{s}.log") for s in range(players)])
    findings: dict[str, list[int]] = {}
    for f in report.violations:
        findings.setdefault(str(f.kind), []).append(-1 if f.seat is None else f.seat)
    return GameOutcome(
        attack,
        players,
        honest,
        h.sent,
        findings,
        [s for s, _ in report.dropped],
        report.digest,
        timed_out,
        node.lies,
    )


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1], sys.argv[2]))
