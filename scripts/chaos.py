#!/usr/bin/env python3
"""Real-process chaos: ``nertz node`` games with faults whose lengths straddle the timers.

Each game is a few ``nertz node`` bot processes (2-5 players, 2-3 rounds, short timers:
``--suspect-after 2 --drop-after 8`` by default) over ZeroMQ on 127.0.0.1, or inside a
network-namespace lab (:class:`p2p_nertz.testing.netns.Lab`) when a partition is drawn. From
``--seed`` the script draws, per game, the table size, the rounds, and one or two faults, each
on one node at a point of the game (after the table's k-th card to the lake, or at the end of
round 1) and with a length among those that straddle the timers (``s`` = suspect-after,
``d`` = drop-after):

=================  =====================================================================
``stop-short``     SIGSTOP for ``s / 2`` (below suspicion)
``stop-suspect``   SIGSTOP for ``(s + d) / 2`` (suspected, not voted out)
``stop-under``     SIGSTOP for ``d - 1`` (just under the drop)
``stop-over``      SIGSTOP for ``d + 1.5`` (just over the drop)
``stop-2d``        SIGSTOP for ``2 d``
``stop-gone``      SIGSTOP for ``3 d + 4``: past the table-gone bound (docs/protocol.md §9.9)
``kill``           SIGKILL, then ``nertz resume`` of its log after one of the lengths above
``kill-torn``      the same, with the last few bytes of the log cut first (a torn last
                   record, as a power cut leaves it: the resume recovers, §9.6)
``cut-one``        the node's link cut for one of the lengths (in a lab; ``--lab``)
``cut-halves``     the table split in two halves for one of the lengths (in a lab; ``--lab``)
=================  =====================================================================

Three more kinds are drawn only where ``--kinds`` names them (session 26; the default draw is
the one above, so every earlier seed plays the game it played): ``cut-link``, the link between
the node and one other failed both ways for one of the lengths, each still reaching everyone
else (:meth:`~p2p_nertz.testing.netns.Lab.cut_link`; in a lab); ``cut-oneway``, what the node
sends that other lost, nothing else; ``kill-cut``, a ``kill`` whose log is then cut at a drawn
byte (5 % to all of it: mid-record, a torn tail the resume recovers, or on a frame boundary,
where the log looks whole and the resume is given ``--recover``, as the person who cut it
knows, docs/protocol.md §9.6); ``kill-frame``, the same with the cut moved back to the frame
boundary before it (whole frames lost: a backup restored, always ``--recover``).
``scripts/scan_real_faults.py`` plays them over a grid.

Six more, named only too (session 31): a network bad rather than gone, in a lab, each for one
of the lengths and at a strength drawn apart (``--kinds``, with ``nft``, ``iptables`` and
``tc``): ``lossy``, 5 %, 30 % or 60 % (in 0.5 s bursts) of the frames lost on the victim's
link or, drawn one time in three, between every two members; ``slow``, every packet delayed
50 ms ± 20, 500 ms ± 200 or ``suspect + 0.5`` s ± 40 % (one link or all); ``narrow``, a link
of 256, 32 or 8 kbit/s (one or all); ``reset``, the victim's (or every member's) TCP
connections reset and every segment answered with a reset while it lasts (ZeroMQ reconnects,
what was queued on the old connection lost); ``flap``, the victim's link down and up with a
period of ``s``, ``(s + d) / 2`` or ``d``; ``roll``, a rolling partition from the victim's
seat on (A|BC, AB|C, whole: one step each ``length / (n - 1)``), from three players (at two,
a ``flap``). The checks are the same: a member dropped or finding the table gone counts as
faulted where the fault touched it (a reset is a cut for the checks while it lasts).

At the end of a game it checks: no traceback on any stderr; every node's last process exited
as documented (0 with the game over; 3, the table gone, only for a node that was faulted or
cut off, alone or with others (two faults can leave alone a node neither names), its reason
*dropped* only where every node that finished holds it dropped, or, with "cannot recover our
own events", only for a resume each member it names as silent had ended by then or was cut off
from, §9.6 step 5 and §13 "a recovering peer and a member gone for good"; 5, unheard, only
where no other member ran within its reach for the ``d`` it listened, §9.6 "a second machine
that hears nobody"); every settled
(not provisional) final state the same digest and totals, a provisional one at most a round
from them (§9.3); and ``nertz audit`` of every log VALID. One line per game, then a summary
by fault kind and table size; the exit status is 1 if any game failed. A failed game's
directory is kept (``--dir``), with every log, output and the schedule (``chaos.json``); a
passed one is removed unless ``--keep``. When the nodes that found the table gone leave the
rest too few to decide anything (from three players, no strict majority of the table running:
§13 "A game that cannot end"), the rest wait for good; the script then resumes the gone nodes'
logs, as their message tells a person to, ``4 d`` after the last of them stopped and the
faults over, and the game must end. So too when every node has stopped, some unheard (a
member killed at the game's start for longer than ``d``, at two players: the other, having
heard nothing of it, stops unheard, and so does the killed one's resume, each log its join
alone) and none with the game over: the script resumes the unheard ones at once.

    nice -n 10 python scripts/chaos.py --seed 1 --games 20 [--players 2-5] [--kinds K,...]
                                       [--lab] [--deal shuffle] [--dir DIR] [--keep]

Drawn at random, a kind may miss a table size for many games. ``--cover`` gives seed k's
first fault the (k mod n)-th of the n (kind, size) of ``--kinds`` x ``--players``
(``cut-halves`` from three players), so that one pass (``--games`` left out: n games) draws
every kind at every size, and ``--cover --seed k --games 1`` plays seed k's game again.
``--overlap A+B,...`` makes every game two faults, a pair drawn from the list, the second
starting a drawn time into the first (a stop during a partition: ``cut-one+stop-over``; a
kill during a stop: ``stop-2d+kill``), on a victim drawn apart (the same node, sometimes).
A cut during a kill of its node falls while the node is dead, and its resume comes up cut off
(a stop or a kill of a dead node is missed, and not counted).
``cut-halves+cut-halves`` splits the table two ways at once, the second half not the first:
while both last, a node reaches only those on its side of both (at three players, each alone).
A cut or a kill draws its length from the six above; ``--length NAME,...`` names the ones to
draw from (``short`` … ``gone``, the ``stop-*`` kinds' suffixes), or ``drop``: a partition
that heals as the sides vote each other out or, at two players, abandon each other (from
``d - 0.5`` to ``d + 1.5``), ``wait`` (from ``4 d - 1`` to ``4 d + 1.5``: the heal races the
end of the ``3 d`` a side that abandoned waits on its provisional result), or ``past``
(``4 d + 4``: past an abandon and that wait), or ``long`` (``7 d + 4``, 60 s at the
defaults: far past both): ``--lab --players 2 --kinds cut-one --length past``
plays two players cut apart for longer than either waits (each abandons the other after
``d``; a side whose result is provisional waits ``3 d`` more, then exits 0 with it marked).

``--deal shuffle`` plays every game under the shuffle deal (docs/shuffle.md, protocol version
4: every face-down card opened by the whole table, the turn-up shares sent as ``deck_reveal``
beats, a resumed node's share store empty) with the seed's table and faults; the checks are
the same.

The schedule is a function of the seed alone (``--print-schedule`` shows it without playing);
the processes' timing is real, so a seed's outcome may vary from run to run: a failure is
reproduced by running its seed again, a few times if need be.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ports import introduce

from cli.args import EXIT_GONE, EXIT_UNHEARD
from cli.bots import FREE_PORT
from cli.keyfile import write_key
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import LogDecoder, TailState
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.testing.netns import Lab, impairments_unavailable, unavailable
from p2p_nertz.words import counted

STOPS = ("stop-short", "stop-suspect", "stop-under", "stop-over", "stop-2d", "stop-gone")
KILLS = ("kill", "kill-torn")
CUTS = ("cut-one", "cut-halves")
KINDS = (*STOPS, *KILLS, *CUTS)
#: Kinds drawn only where ``--kinds`` names them (session 26's real-node scan,
#: ``scripts/scan_real_faults.py``), so that every seed of :data:`KINDS` plays the game it
#: played before: ``cut-link`` one link failed both ways (the two ends still reach everyone
#: else), ``cut-oneway`` what one end sends the other lost, ``kill-cut`` a SIGKILL with the
#: log then cut at a drawn byte (mid-record or on a frame boundary; resumed with ``--recover``
#: on a boundary, where the person who cut it knows: docs/protocol.md §9.6), ``kill-frame`` the
#: same cut moved back to the frame boundary before it (whole frames lost, as from a backup).
LINKS = ("cut-link", "cut-oneway")
#: Session 31's degraded network, bad rather than gone (in a lab; named only): ``lossy`` a
#: share of the packets lost (:data:`LOSSES`), ``slow`` every packet delayed, with jitter
#: (:func:`slow_delays`), ``narrow`` a narrow link whose queue delays every message
#: (:data:`RATES`), ``reset`` every TCP connection reset and refused while it lasts, ``flap``
#: the link down and up with a period around the timers (:func:`flap_periods`), ``roll`` a
#: rolling partition (A|BC, AB|C, whole: :meth:`Game.roll`).
DEGRADED = ("lossy", "slow", "narrow", "reset", "flap", "roll")
#: The kinds whose ``everyone`` impairs every member's link (else the victim's alone).
SPREAD = ("lossy", "slow", "narrow", "reset")
NAMED_ONLY = (*LINKS, "kill-cut", "kill-frame", *DEGRADED)
ALL_KINDS = (*KINDS, *NAMED_ONLY)
#: The kinds that need a netns lab.
LAB_KINDS = (*CUTS, *LINKS, *DEGRADED)
#: ``lossy``'s strengths, in % of the packets: from 50 % in bursts (:data:`BURST` s at 1.6 x,
#: then as long at 0.4 x: the same mean; Wi-Fi loses frames in bursts).
LOSSES = (5.0, 30.0, 60.0)
BURST = 0.5
#: ``narrow``'s strengths: the link's rate each way, kbit/s (a queue of up to 4 s: the delay
#: grows with what is sent).
RATES = (256.0, 32.0, 8.0)
LAB_PORT = 7700
EXIT_FAILED = 1
#: Cards to the lake (the whole table's, as the busiest node saw them) before which a fault
#: may start: a 2-round game at speed 10 sends some 40-80.
MAX_TRIGGER = 60


def flap_periods(suspect: float, drop: float) -> tuple[float, ...]:
    """``flap``'s periods (down half of each, up the other half): around the timers."""
    return (suspect, (suspect + drop) / 2, drop)


def slow_delays(suspect: float) -> tuple[float, ...]:
    """``slow``'s strengths: each packet's delay (s), ± 0.4 of it (50 ms ± 20, 500 ms ± 200,
    and ``suspect + 0.5``: on average over the suspect timer)."""
    return (0.05, 0.5, suspect + 0.5)


JITTER = 0.4


def strength(kind: str, suspect: float, drop: float, rng: random.Random) -> float:
    """A strength for a :data:`DEGRADED` kind (0 for the others)."""
    table = {
        "lossy": LOSSES,
        "slow": slow_delays(suspect),
        "narrow": RATES,
        "flap": flap_periods(suspect, drop),
    }
    return rng.choice(table[kind]) if kind in table else 0.0


def lengths(suspect: float, drop: float) -> dict[str, float]:
    """The fault lengths, by the ``stop-*`` kind that uses them (the others draw one)."""
    return {
        "stop-short": suspect / 2,
        "stop-suspect": (suspect + drop) / 2,
        "stop-under": drop - 1.0,
        "stop-over": drop + 1.5,
        "stop-2d": 2 * drop,
        "stop-gone": 3 * drop + 4,
    }


#: ``--length``'s names: the ``stop-*`` lengths by their suffix; ``drop``, a length drawn from
#: ``drop - 0.5`` to ``drop + 1.5``: the partition heals (the node comes back) while the sides
#: vote each other out or abandon (§9.2, §9.3), each a beat or two after ``drop`` of silence,
#: so that a vote or an abandon and the healing race; and ``past``, ``4 drop + 4``: past an
#: abandon (``drop``) and the wait on its provisional result (``gone_after`` = ``3 drop``);
#: and ``wait``, drawn from ``4 drop - 1`` to ``4 drop + 1.5``: the partition heals as a side
#: that abandoned (after ``drop``) stops waiting on its provisional result (``3 drop`` more).
#: And ``long``, ``7 drop + 4`` (60 s at the scan's timers): a partition far past either side's
#: abandon and wait at two players, and past a member's drop and its table gone from three
#: (session 27's two-player scan).
#: A cut ends when the link is back; the nodes hear each other again when TCP retransmits,
#: which it backs off while the link is down: two ends beating every 0.25 s across a lab link
#: cut for 7.5-9.5 s heard each other again 0.7-0.8 s after the heal one way and 13.5 s after
#: the cut began the other (4 s: 0.2 s and 7.1 s). So a ``drop`` heal races the vote or the
#: abandon on one side, and the other side hears it some seconds later.
LENGTHS = (
    "short",
    "suspect",
    "under",
    "over",
    "2d",
    "gone",
    "drop",
    "wait",
    "past",
    "long",
)
DROP_RACE = (-0.5, 1.5)
WAIT_RACE = (-1.0, 1.5)


def named_length(name: str, suspect: float, drop: float, rng: random.Random) -> float:
    """The length ``--length`` calls ``name`` (``drop``, ``wait``: one drawn with ``rng``)."""
    if name == "drop":
        return drop + rng.uniform(*DROP_RACE)
    if name == "wait":
        return 4 * drop + rng.uniform(*WAIT_RACE)
    if name == "past":
        return 4 * drop + 4
    if name == "long":
        return 7 * drop + 4
    return lengths(suspect, drop)[f"stop-{name}"]


@dataclass(frozen=True)
class Fault:
    """One fault of a game's schedule."""

    kind: str
    victim: int  # a seat (cut-halves: the first seat of the cut-off half)
    trigger: int  # cards to the lake before it starts; -1: at the end of round 1
    length: float  # seconds stopped, dead or cut off
    torn: int = 0  # bytes cut off the log's tail (kill-torn)
    half: tuple[int, ...] = ()  # cut-halves: the seats on the other side from seat 0
    during: float = -1.0  # >= 0: starts this many seconds into the previous fault, not at trigger
    other: int = -1  # cut-link, cut-oneway: the link's other end (the victim's sends to it lost)
    keep: float = -1.0  # kill-cut, kill-frame: the part of the log kept (of its size)
    strength: float = 0.0  # lossy: % lost; slow: delay (s); narrow: kbit/s; flap: period (s)
    everyone: bool = False  # SPREAD kinds: every member's link, not the victim's alone

    def describe(self) -> str:
        at = "r1-end" if self.trigger < 0 else f"lake {self.trigger}"
        if self.during >= 0:
            at = f"+{self.during:g}s into the last"
        who = f"P{self.victim + 1}" if not self.half else "+".join(f"P{s + 1}" for s in self.half)
        if self.other >= 0:
            who += ("->" if self.kind == "cut-oneway" else "-") + f"P{self.other + 1}"
        torn = f" torn {self.torn}B" if self.torn else ""
        if self.keep >= 0:
            torn = f" kept {self.keep:.0%}"
        if self.strength:
            unit = {"lossy": "%", "slow": "s delay", "narrow": "kbit/s", "flap": "s period"}
            torn = f" {self.strength:g}{unit[self.kind]}"
        if self.everyone:
            who = "all"
        return f"{self.kind}@{who}({at}, {self.length:g}s{torn})"


@dataclass(frozen=True)
class Schedule:
    """A game: its table, rounds and faults, drawn from its seed."""

    seed: int
    players: int
    rounds: int
    faults: tuple[Fault, ...]
    deal: str = "commit"  # the spec's deal (``--deal``; not drawn: the seed's game either way)

    @property
    def lab(self) -> bool:
        return any(f.kind in LAB_KINDS for f in self.faults)


def schedule(
    seed: int,
    *,
    players: Sequence[int],
    kinds: Sequence[str],
    suspect: float,
    drop: float,
    first: str | None = None,
    pairs: Sequence[tuple[str, str]] = (),
    spans: Sequence[str] = (),
    deal: str = "commit",
) -> Schedule:
    """The game of ``seed``: deterministic, whatever the machine.

    ``first`` forces the first fault's kind (``--cover``); ``pairs`` makes every game two
    faults, a pair drawn from them, the second starting while the first lasts (``--overlap``);
    ``spans`` (names of :data:`LENGTHS`) the lengths a cut or a kill draws from (``--length``;
    drawn apart, so the rest of the game is the seed's game without it); ``deal`` the spec's
    deal (``--deal``: drawn from nothing, so a seed's faults are the same under either deal).
    """
    rng = random.Random(derive_seed(b"chaos-schedule", seed))
    n = rng.choice(list(players))
    rounds = rng.choice((2, 3))
    stops = lengths(suspect, drop)
    apart = random.Random(derive_seed(b"chaos-length", seed))
    faults: list[Fault] = []
    trigger = 0
    count = rng.choice((1, 1, 2))
    pair = rng.choice(list(pairs)) if pairs else None
    for number in range(2 if pair else count):
        kind = rng.choice(list(kinds))
        if pair is not None:
            kind = pair[number]
        elif number == 0 and first is not None:
            kind = first
        if kind == "cut-halves" and n < 3:
            kind = "cut-one"
        if kind == "roll" and n < 3:
            kind = "flap"
        victim = rng.randrange(n)
        trigger = (
            -1
            if number == 0 and rng.random() < 0.2
            else rng.randint(trigger, trigger + MAX_TRIGGER)
        )
        length = stops[kind] if kind in stops else rng.choice(list(stops.values()))
        if spans and kind not in stops:
            length = named_length(apart.choice(list(spans)), suspect, drop, apart)
        torn = rng.randint(1, 12) if kind == "kill-torn" else 0
        half: tuple[int, ...] = ()
        if kind == "cut-halves":
            half = tuple(sorted(rng.sample(range(1, n), rng.randint(1, n // 2))))
            while pair is not None and number == 1 and half == faults[0].half:
                # Two splits at once (``cut-halves+cut-halves``) of different halves: the
                # second not the first again (at three players, the other of the two).
                half = tuple(sorted(rng.sample(range(1, n), rng.randint(1, n // 2))))
            victim = half[0]
        during = -1.0
        if pair is not None and number == 1:
            # Inside the first fault: it starts while the first lasts (it may outlast it).
            during = round(rng.uniform(0.2, 0.6) * faults[0].length, 2)
        other, keep, power, everyone = -1, -1.0, 0.0, False
        if kind in NAMED_ONLY:  # (its own stream: the draws above stay the seed's)
            extra = random.Random(derive_seed(b"chaos-named-only", seed, number))
            other = extra.choice([s for s in range(n) if s != victim]) if kind in LINKS else -1
            keep = round(extra.uniform(0.05, 1.0), 4) if "kill" in kind else -1.0
            power = strength(kind, suspect, drop, extra)
            everyone = kind in SPREAD and extra.random() < 0.3
        args = (kind, victim, trigger, round(length, 2), torn, half, during, other, keep)
        faults.append(Fault(*args, power, everyone))
        trigger = max(trigger, 0) + 10
    return Schedule(seed, n, rounds, tuple(faults), Deal(deal).value)


def cover(players: Sequence[int], kinds: Sequence[str]) -> list[tuple[str, int]]:
    """Every (kind, table size) a game can have: ``cut-halves`` needs three players."""
    return [(k, n) for k in kinds for n in players if not (k == "cut-halves" and n < 3)]


def game_spec(plan: Schedule) -> tuple[GameSpec, list[Identity]]:
    """The game of ``plan``: its spec (the plan's rounds and deal) and its members' keys, in
    seat order (P1 is seat 0), all from the seed."""
    ids = [Identity.generate(derive_seed(b"chaos-key", plan.seed, k)) for k in range(plan.players)]
    ids.sort(key=lambda i: i.peer_id)  # the spec's seat order: P1 is seat 0, P2 seat 1…
    spec = GameSpec.create(
        [(i.peer_id, f"P{k + 1}") for k, i in enumerate(ids)],
        Rules(target=None, rounds=plan.rounds),
        derive_seed(b"chaos-game", plan.seed)[:16],
        deal=Deal(plan.deal),
    )
    return spec, ids


# -- running a game ----------------------------------------------------------------------------
@dataclass
class Run:
    """One process of a node: the first ``node``, or a later ``resume``."""

    proc: subprocess.Popen[bytes]
    out: Path
    err: Path
    files: list[IO[bytes]]
    started: float
    ended: float | None = None
    killed: bool = False  # by us (SIGKILL)

    def poll(self, now: float) -> int | None:
        code = self.proc.poll()
        if code is not None and self.ended is None:
            self.ended = now
            for f in self.files:
                f.close()
        return code

    def lines(self) -> list[dict[str, Any]]:
        found = []
        for line in self.out.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    found.append(json.loads(line))
        return found

    def final(self) -> dict[str, Any] | None:
        return next((e for e in reversed(self.lines()) if e.get("event") == "final"), None)


@dataclass
class Node:
    seat: int
    key: Path
    log: Path
    runs: list[Run] = field(default_factory=list)
    faulted: bool = False
    argv: list[str] = field(default_factory=list)  # its first command (``nertz node``)

    @property
    def name(self) -> str:
        return f"P{self.seat + 1}"

    @property
    def last(self) -> Run:
        return self.runs[-1]


class Game:
    """The processes of one game, and the faults done to them."""

    def __init__(self, plan: Schedule, workdir: Path, suspect: float, drop: float) -> None:
        self.plan = plan
        self.dir = workdir
        self.timers = ["--suspect-after", f"{suspect:g}", "--drop-after", f"{drop:g}"]
        self.drop = drop
        self.lab: Lab | None = None
        self.nodes: list[Node] = []
        self.notes: list[str] = []
        self.start = time.monotonic()
        #: The ends of the faults going on: (when, order, what), soonest first.
        self.ends: list[tuple[float, int, Callable[[], None]]] = []
        #: The ``cut-one`` faults going on, by seat: two on one node (``--overlap``) heal it
        #: when the later-ending one ends, not the first (which left the second a stub).
        self.cuts: Counter[int] = Counter()
        #: The halves of the ``cut-halves`` going on, each cut off from seat 0's side: two at
        #: once (``--overlap cut-halves+cut-halves``) leave a seat only those on its side of both.
        self.halves: list[tuple[int, ...]] = []
        #: Who could reach whom, from when: (time, each seat's side of the LAN), at every cut
        #: and heal (:meth:`was_apart`).
        self.links: list[tuple[float, tuple[int, ...]]] = [(self.start, (0,) * plan.players)]
        #: The links cut (``cut-link``, ``cut-oneway``): [from, until, one end, the other].
        self.broken: list[list[float]] = []
        #: The stops: [from, until (``inf`` while it lasts), seat] (:meth:`within_reach`).
        self.stops: list[list[float]] = []
        #: The nodes resumed after they found the table gone (:meth:`revive_stalled`).
        self.revived: list[str] = []
        #: The steps of faults scheduled so far (:meth:`later`).
        self.order = 0

    # -- processes -------------------------------------------------------------------------
    def _spawn(
        self, node: Node, argv: list[str], stem: str, *, stdin: int = subprocess.DEVNULL
    ) -> None:
        out, err = self.dir / f"{stem}.out", self.dir / f"{stem}.err"
        files: list[IO[bytes]] = [out.open("wb"), err.open("wb")]
        kw: dict[str, Any] = {"stdin": stdin, "stdout": files[0], "stderr": files[1]}
        if self.lab is not None:
            proc = self.lab.popen(node.seat, argv, **kw)
        else:
            proc = subprocess.Popen(argv, **kw)
        node.runs.append(Run(proc, out, err, files, time.monotonic()))

    def begin(self, lab: Lab | None) -> None:
        self.lab = lab
        n = self.plan.players
        spec, ids = game_spec(self.plan)
        (self.dir / "game.spec").write_bytes(spec.to_wire())
        # On loopback each node binds port 0 and says the port it got (scripts/ports.py: a port
        # picked and bound later could be taken meanwhile, a harness's fault read as the
        # game's); a lab's namespaces each have their own ports, nothing else in them.
        if lab is None:
            endpoints = [FREE_PORT] * n
        else:
            endpoints = [f"tcp://{lab.address(s)}:{LAB_PORT}" for s in range(n)]
        by_seat = {spec.seat_of(i.peer_id): i for i in ids}
        assert [m.name for m in spec.members] == [f"P{s + 1}" for s in range(n)]
        for seat in range(n):
            node = Node(seat, self.dir / f"p{seat + 1}.key", self.dir / f"p{seat + 1}.log")
            write_key(node.key, by_seat[seat])
            self.nodes.append(node)
        for node in self.nodes:
            node.argv = self._node_argv(node, endpoints, told=lab is None)
            self._spawn(
                node, node.argv, f"p{node.seat + 1}",
                stdin=subprocess.PIPE if lab is None else subprocess.DEVNULL,
            )  # fmt: skip
        if lab is None:
            runs = [node.runs[0] for node in self.nodes]
            try:
                endpoints = introduce(
                    spec, [r.proc for r in runs], [r.out for r in runs], [r.err for r in runs]
                )
            except NertzError as exc:  # (the nodes told nothing stop: the check says so)
                self.notes.append(f"the game did not start: {exc}")
                return
            for node in self.nodes:  # started again without a log: the port it had
                node.argv = self._node_argv(node, endpoints, told=False)

    def _node_argv(self, node: Node, endpoints: list[str], *, told: bool) -> list[str]:
        """A node's ``nertz node``: bound to ``endpoints[seat]`` and given the others' (or, told,
        to be given them on stdin once it said its own)."""
        argv = [
            sys.executable, "-m", "cli", "node", "--key", str(node.key),
            "--spec", str(self.dir / "game.spec"), "--bind", endpoints[node.seat],
            "--log", str(node.log), "--json", "--progress", "--speed", "10", *self.timers,
        ]  # fmt: skip
        if told:
            return [*argv, "--peers-on-stdin"]
        for other in range(len(endpoints)):
            if other != node.seat:
                argv += ["--peer", f"{other}={endpoints[other]}"]
        return argv

    def restart(self, node: Node, *, recover: bool = False) -> None:
        """Start a killed node again as a person would: ``nertz resume`` of its log (with
        ``--recover`` where the person cut it on a frame boundary), or, killed before it made
        one (at the game's first moment: seed 3031 of session 21), its first command again
        (``nertz resume`` of no log exits 2, rightly)."""
        if node.log.exists():
            self.resume(node, recover=recover)
        else:
            self.notes.append(f"{node.name} had no log: started again")
            self._spawn(node, node.argv, f"p{node.seat + 1}.again{len(node.runs)}")

    def resume(self, node: Node, *, recover: bool = False) -> None:
        argv = [
            sys.executable, "-m", "cli", "resume", str(node.log), "--key", str(node.key),
            "--bot", "greedy", "--json", *self.timers, *(["--recover"] * recover),
        ]  # fmt: skip
        self._spawn(node, argv, f"p{node.seat + 1}.resume{len(node.runs)}")

    def poll(self) -> bool:
        """Whether every node's last process has ended."""
        now = time.monotonic()
        # Every node polled (no short cut): each end is noted when it comes.
        codes = [node.last.poll(now) for node in self.nodes]
        return all(code is not None for code in codes)

    def progress(self) -> tuple[int, int]:
        """(cards to the lake, rounds scored) as the busiest first process printed them."""
        lake = rounds = 0
        for node in self.nodes:
            seen = node.runs[0].lines()
            lake = max(lake, sum(e.get("event") == "lake" for e in seen))
            rounds = max(rounds, sum(e.get("event") == "round" for e in seen))
        return lake, rounds

    def stop_all(self) -> None:
        for node in self.nodes:
            for run in node.runs:
                if run.proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        run.proc.send_signal(signal.SIGCONT)
                        run.proc.kill()
                run.proc.wait()
                run.poll(time.monotonic())

    # -- faults ----------------------------------------------------------------------------
    def wait_trigger(self, fault: Fault, deadline: float, since: float) -> bool:
        """Wait until the fault's point of the game (``during``: that long after ``since``, the
        last fault's start), ending the faults due meanwhile; ``False`` if the game or the
        victim's process ended first. A cut needs no process: it falls on a node this script
        killed and has not resumed yet, whose resume then comes up cut off (its namespace
        outlives it; ``--overlap kill+cut-one`` on one node, which was always missed before)."""
        while time.monotonic() < deadline:
            self.end_due()
            victim = self.nodes[fault.victim].last
            dead = victim.proc.poll() is not None and not (
                fault.kind in LAB_KINDS and victim.killed
            )
            if self.poll() or dead:
                return False
            if fault.during >= 0:
                if time.monotonic() >= since + fault.during:
                    return True
            else:
                lake, rounds = self.progress()
                if (fault.trigger < 0 and rounds >= 1) or (
                    fault.trigger >= 0 and lake >= fault.trigger
                ):
                    return True
            time.sleep(0.05 if fault.during >= 0 else 0.1)
        return False

    def end_due(self, *, all_of_them: bool = False) -> None:
        """Call the ends of the faults whose time has come (all: waiting for each)."""
        while self.ends:
            due, _, end = self.ends[0]
            wait = due - time.monotonic()
            if wait > 0:
                if not all_of_them:
                    return
                # Polling meanwhile: a process's end is noted when it comes (the checks
                # compare them), not when the fault is over.
                self.poll()
                time.sleep(min(wait, 0.1))
                continue
            heapq.heappop(self.ends)
            end()

    def inflict(self, fault: Fault) -> Callable[[], None]:
        """Start the fault; what ends it (to call ``fault.length`` seconds later)."""
        node = self.nodes[fault.victim]
        run = node.last
        self.notes.append(f"{fault.kind} at {time.monotonic() - self.start:.1f}s")
        if fault.kind in STOPS:
            node.faulted = True
            run.proc.send_signal(signal.SIGSTOP)
            stop = [time.monotonic(), float("inf"), fault.victim]
            self.stops.append(stop)

            def cont() -> None:
                # The run stopped, not the node's last: a kill during the stop resumes a new one.
                run.proc.send_signal(signal.SIGCONT)
                stop[1] = time.monotonic()

            return cont
        if fault.kind in (*KILLS, "kill-cut", "kill-frame"):
            node.faulted = True
            run.killed = True
            run.proc.send_signal(signal.SIGKILL)
            run.proc.wait()
            run.poll(time.monotonic())
            recover = False
            if fault.torn and node.log.exists():  # (none yet: nothing to tear)
                size = node.log.stat().st_size
                os.truncate(node.log, max(0, size - fault.torn))
            if fault.keep >= 0 and node.log.exists():
                recover = cut_log(node.log, fault.keep, on_frame=fault.kind == "kill-frame")
                self.notes.append(
                    f"log cut to {node.log.stat().st_size}B" + " (--recover)" * recover
                )
            return lambda: self.restart(node, recover=recover)
        assert self.lab is not None
        lab = self.lab
        if fault.kind in DEGRADED:
            return self.degrade(fault)
        if fault.kind in LINKS:
            node.faulted = self.nodes[fault.other].faulted = True
            lab.cut_link(fault.victim, fault.other, one_way=fault.kind == "cut-oneway")
            span = [time.monotonic(), float("inf"), fault.victim, fault.other]
            self.broken.append(span)

            def mend() -> None:
                lab.heal_link(fault.victim, fault.other)
                span[1] = time.monotonic()

            return mend
        if fault.kind == "cut-one":
            node.faulted = True
            if not self.cuts[fault.victim]:
                lab.cut(fault.victim)
            self.cuts[fault.victim] += 1
            self._links_changed()
            return lambda: self._heal(fault.victim)
        for seat in fault.half:
            self.nodes[seat].faulted = True
        self.halves.append(fault.half)
        lab.split(self._lan_sides())
        self._links_changed()

        def rejoin() -> None:
            self.halves.remove(fault.half)
            lab.split(self._lan_sides())
            self._links_changed()

        return rejoin

    def later(self, delay: float, what: Callable[[], None]) -> None:
        """Call ``what`` ``delay`` seconds from now, among the faults' ends (a fault's steps)."""
        self.order += 1
        heapq.heappush(self.ends, (time.monotonic() + delay, 1000 + self.order, what))

    def degrade(self, fault: Fault) -> Callable[[], None]:
        """Start a :data:`DEGRADED` fault (its later steps among :attr:`ends`); what ends it."""
        assert self.lab is not None
        lab, n = self.lab, self.plan.players
        seats = list(range(n)) if fault.everyone else [fault.victim]
        if fault.kind == "roll":
            return self.roll(fault)
        if fault.kind == "flap":
            return self.flap(fault)
        for seat in seats:
            self.nodes[seat].faulted = True
        if fault.kind == "narrow":
            for seat in seats:
                lab.throttle(seat, int(fault.strength))
            return lambda: self.undo(lab.throttle, seats)
        if fault.kind == "slow":  # (every member's: half each, a packet passing two)
            late = fault.strength / (2 if fault.everyone else 1)
            for seat in seats:
                lab.delay(seat, late, JITTER * late, seed=self.plan.seed * 100 + seat)
            return lambda: self.undo(lab.delay, seats)
        if fault.kind == "reset":
            now = time.monotonic()
            spans = [[now, float("inf"), s, o] for s in seats for o in range(n) if o != s]
            self.broken += spans  # (refused while it lasts: apart, for the checks)
            for seat in seats:
                lab.reset(seat)

            def reconnect() -> None:
                for seat in seats:
                    lab.reset(seat, False)
                for span in spans:
                    span[1] = time.monotonic()

            return reconnect
        # lossy: every member's link losing 1 - sqrt(1 - p) each way loses p between two.
        share = fault.strength / 100
        share = 1 - (1 - share) ** 0.5 if fault.everyone else share

        def level(bad: bool) -> None:
            lost = share * (1.6 if bad else 0.4) if fault.strength >= 50 else share
            for seat in seats:
                lab.lose(seat, min(100.0, 100 * lost))

        level(True)
        if fault.strength >= 50:
            for k in range(1, int(fault.length / BURST)):
                self.later(k * BURST, lambda bad=k % 2 == 0: level(bad))
        return lambda: self.undo(lab.lose, seats)

    @staticmethod
    def undo(impair: Callable[[int, int], None], seats: Sequence[int]) -> None:
        """``impair(seat, 0)`` for each seat: the impairment lifted."""
        for seat in seats:
            impair(seat, 0)

    def flap(self, fault: Fault) -> Callable[[], None]:
        """The victim's link down for half of ``fault.strength``, up for the other half, and
        again, for ``fault.length`` (ending up)."""
        seat, half = fault.victim, fault.strength / 2
        down = [False]

        def toggle() -> None:
            if down[0]:
                self._heal(seat)
            else:
                if not self.cuts[seat]:
                    assert self.lab is not None
                    self.lab.cut(seat)
                self.cuts[seat] += 1
                self._links_changed()
            down[0] = not down[0]

        toggle()
        self.nodes[seat].faulted = True
        for k in range(1, int(fault.length / half - 1e-9) + 1):
            if k * half < fault.length:
                self.later(k * half, toggle)
        return lambda: toggle() if down[0] else None

    def roll(self, fault: Fault) -> Callable[[], None]:
        """A rolling partition from the victim's seat on, ``fault.length`` in all: the first
        seat apart from the rest, then the first two, … (one step each), then whole."""
        assert self.lab is not None
        lab, n = self.lab, self.plan.players
        order = [(fault.victim + i) % n for i in range(n)]
        halves = [tuple(sorted(order[k + 1 :])) for k in range(n - 1)]
        step = fault.length / len(halves)

        def phase(k: int) -> None:
            if k:
                self.halves.remove(halves[k - 1])
            if k < len(halves):
                self.halves.append(halves[k])
            lab.split(self._lan_sides())
            self._links_changed()

        phase(0)
        for k in range(1, len(halves)):
            self.later(k * step, lambda k=k: phase(k))
        return lambda: phase(len(halves))

    def _lan_sides(self) -> list[int]:
        """Each seat's side of the splits going on: which of their halves hold it (a bit each)."""
        return [
            sum(1 << k for k, half in enumerate(self.halves) if seat in half)
            for seat in range(self.plan.players)
        ]

    def _links_changed(self) -> None:
        """Note who can reach whom now, and mark faulted every node the cuts going on leave
        alone: two faults together can cut off a node neither names (a half of two, its other
        member cut off: seed 19103), and a node alone may find the table gone (§9.9)."""
        lan = self._lan_sides()
        sides = tuple(
            -1 - seat if self.cuts[seat] else lan[seat] for seat in range(self.plan.players)
        )
        self.links.append((time.monotonic(), sides))
        for seat, side in enumerate(sides):
            if sides.count(side) == 1:
                self.nodes[seat].faulted = True

    def was_apart(self, a: int, b: int, since: float, until: float) -> bool:
        """Whether seats ``a`` and ``b`` were cut off from each other at some time from
        ``since`` to ``until``."""
        for start, end, one, two in self.broken:
            if {a, b} == {one, two} and start <= until and end >= since:
                return True
        for k, (when, sides) in enumerate(self.links):
            later = self.links[k + 1][0] if k + 1 < len(self.links) else float("inf")
            if when <= until and later >= since and sides[a] != sides[b]:
                return True
        return False

    def was_down(self, seat: int, since: float, until: float) -> bool:
        """Whether seat ``seat`` had no process running at some moment from ``since`` to
        ``until`` (one ended, the next not started yet, or none after it)."""
        runs = self.nodes[seat].runs
        for run, after in zip(runs, [*runs[1:], None], strict=True):
            stopped = run.ended if run.ended is not None else float("inf")
            restarted = after.started if after is not None else float("inf")
            if stopped < restarted and stopped <= until and restarted >= since:
                return True
        return False

    def revive_stalled(self) -> bool:
        """Resume the nodes that found the table gone once those still running are too few to
        decide anything (from three players, fewer than a strict majority of the table: no drop,
        no abandon; §13 "A game that cannot end"), every fault is over and the last node to
        end did so ``4 drop`` ago (``gone_after`` and a vote: time for a smaller roster to
        decide what it can; and not a game ending, its nodes one by one: seed 19111): a
        person would resume them, as the gone message says ("resuming on it later takes the
        game up again"). Or, every process ended, resume those that stopped unheard if none
        ended with the game over (their message says the same). Once a game."""
        if self.revived or self.ends:
            return False
        running = [n for n in self.nodes if n.last.proc.poll() is None]
        unheard = [n for n in self.nodes if n.last.proc.returncode == EXIT_UNHEARD]
        if unheard and not running and not any(n.last.proc.returncode == 0 for n in self.nodes):
            # Every process ended, some unheard (§9.6: each knew nothing of its feed past its
            # join and heard nobody, its log its join alone: at two players, a member killed
            # at the game's start for longer than ``drop``, the other stopped unheard before it
            # came back), none with the game over: a person resumes them, as their message says.
            return self._resume_all(unheard)
        if self.plan.players < 3:
            return False
        gone = [n for n in self.nodes if n.last.proc.returncode == EXIT_GONE]
        if not running or not gone or len(running) > self.plan.players // 2:
            return False
        last = max(n.last.ended or 0.0 for n in self.nodes)
        if time.monotonic() - last < 4 * self.drop:
            return False
        return self._resume_all(gone)

    def _resume_all(self, nodes: Sequence[Node]) -> bool:
        for node in nodes:
            self.notes.append(f"resumed {node.name} at {time.monotonic() - self.start:.1f}s")
            self.revived.append(node.name)
            self.resume(node)
        return True

    def within_reach(self, seat: int, since: float, until: float) -> list[int]:
        """The other seats that had a process running within ``seat``'s reach all the time
        from ``since`` to ``until`` (never down, stopped or cut off from it)."""
        stopped = {int(s) for start, end, s in self.stops if start <= until and end >= since}
        return [
            other
            for other in range(self.plan.players)
            if other != seat
            and other not in stopped
            and not self.was_down(other, since, until)
            and not self.was_apart(seat, other, since, until)
        ]

    def _heal(self, seat: int) -> None:
        """End one ``cut-one`` of ``seat``: its link comes back when none is left."""
        self.cuts[seat] -= 1
        if not self.cuts[seat]:
            assert self.lab is not None
            self.lab.heal(seat)
            self._links_changed()


def cut_log(log: Path, keep: float, *, on_frame: bool = False) -> bool:
    """Cut ``log`` to its first ``keep`` part (``kill-cut``; ``on_frame``, ``kill-frame``: back
    to the frame boundary before that, the header's end at least): whether the cut fell on a
    frame boundary (the log then looks whole: the resume needs ``--recover``, §9.6)."""
    at = round(log.stat().st_size * keep)
    decoder = LogDecoder()
    decoder.feed(log.read_bytes()[:at])
    summary = decoder.close()
    if on_frame and summary.header is not None:
        at = summary.good_end
    os.truncate(log, at)
    return summary.header is not None and (on_frame or summary.tail is TailState.CLEAN)


# -- checks ------------------------------------------------------------------------------------
def provisional_apart(finals: dict[int, dict[str, Any]]) -> list[str]:
    """The provisional results (by seat: the nodes' final lines) further than the last round
    from a settled one: a side that abandoned without hearing what the other saw counts at
    most one round more or less than the union (§9.3, "What the protocol guarantees")."""
    settled = sorted({f.get("rounds", 0) for f in finals.values() if not f.get("provisional")})
    return [
        f"P{seat + 1}: provisional on {counted(f.get('rounds', 0), 'round')}, settled on {settled}"
        for seat, f in sorted(finals.items())
        if f.get("provisional") and any(abs(f.get("rounds", 0) - r) > 1 for r in settled)
    ]


def silent_named(message: str) -> list[int]:
    """The seats a ``nertz resume`` that gave up its recovery names as silent.

    >>> silent_named("nertz resume: error: cannot recover our own events: P1, P4 silent for 4 s")
    [0, 3]
    """
    _, _, tail = message.partition("cannot recover our own events:")
    names = tail.partition(" silent for")[0]
    return [int(n.strip()[1:]) - 1 for n in names.split(",") if n.strip()[1:].isdigit()]


def play_out(game: Game, deadline: float, rounds: int) -> list[str]:
    """Wait for the game to end, by ``deadline`` (monotonic; a minute a round later for each
    stalled node revived); the names of the nodes still running then."""
    while time.monotonic() < deadline:
        if game.revive_stalled():
            deadline += 60.0 * rounds
        elif game.poll():
            break
        time.sleep(0.2)
    return [n.name for n in game.nodes if n.last.proc.poll() is None]


def unheard_wrongly(game: Game, node: Node, run: Run) -> str | None:
    """What is wrong with ``run`` of ``node`` if it stopped unheard (exit 5, §9.6, session 29;
    exit 0 where its log held the game's end, session 33; a process resumed since is checked
    too): fine only where no other member played within its reach for the ``drop`` it
    listened before it stopped."""
    code = run.proc.returncode
    final = run.final() if code in (0, EXIT_UNHEARD) else None
    if code == 0 and (final is None or final.get("gone") != "unheard"):
        return None
    if code not in (0, EXIT_UNHEARD):
        return None
    if final is None or final.get("gone") != "unheard":
        return f"{node.name}: exit {EXIT_UNHEARD} without an 'unheard' final line"
    until = run.ended or time.monotonic()
    near = game.within_reach(node.seat, max(run.started, until - game.drop), until)
    if near:
        heard = ", ".join(f"P{s + 1}" for s in near)
        return f"{node.name}: stopped unheard while {heard} played within reach"
    return None


def check(game: Game, running: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """The failures of a finished game (empty: it passed) and facts for its line; ``running``:
    the nodes still running at the deadline."""
    problems: list[str] = []
    facts: dict[str, Any] = {}
    if running:
        problems.append(f"did not finish in time: {', '.join(running)} still running")
    for node in game.nodes:
        for run in node.runs:
            text = run.err.read_text(errors="replace")
            if "Traceback" in text:
                problems.append(f"{node.name}: traceback in {run.err.name}")
    finals: dict[int, dict[str, Any]] = {}
    exits: list[str] = []
    ended = [n.last.ended or 0.0 for n in game.nodes]
    for node in game.nodes:
        run = node.last
        code = run.proc.returncode
        exits.append(str(code))
        final = run.final()
        err = run.err.read_text(errors="replace").strip().splitlines()
        last_err = err[-1] if err else ""
        if code == 0 and final is not None and final.get("gone") is not None:
            # Stopped waiting with the game's end on its table (an old copy of a finished
            # game's log heard by nobody; the others gone home before the end was final here:
            # cli/args.py gone_status): the game over as its log has it, not settled here (its
            # final fold lacks the others' acks); unheard_wrongly checks the rest.
            if not final.get("ended"):
                problems.append(f"{node.name}: exit 0, {final['gone']}, without the game over")
        elif code == 0:
            if final is None or not final.get("over"):
                problems.append(f"{node.name}: exit 0 without the game over ({run.out.name})")
            else:
                finals[node.seat] = final
        elif code == EXIT_GONE and "cannot recover our own events" in last_err:
            # A recovery that every member it waits for left unanswered: it signs nothing and
            # stops, exit 3 like a table gone (docs/protocol.md §9.6 step 5, §13 "a member gone for
            # good"). Fine for each member it names that had ended by then, or was cut off from
            # it while it recovered (silence it cannot tell from gone: seed 19111), or had no
            # process running at some moment of it (between a stop and its resume: seed 26003,
            # a member gone and resumed by revive_stalled 2 s before the recovery gave up);
            # not for one that still played within its reach.
            named = silent_named(last_err)
            until = run.ended or time.monotonic()
            within = [
                seat
                for seat in named
                if not (ended[seat] and ended[seat] <= (run.ended or 0.0))
                and not game.was_apart(node.seat, seat, run.started, until)
                and not game.was_down(seat, run.started, until)
            ]
            if not named or within:
                problems.append(f"{node.name}: its recovery gave up while others ran: {last_err}")
        elif code == EXIT_GONE:
            if final is None or final.get("gone") is None:
                problems.append(f"{node.name}: exit 3 without a 'gone' final line")
            elif not node.faulted:
                problems.append(f"{node.name}: found the table gone ({final['gone']}) unfaulted")
            elif final.get("over"):
                # Gone is for a game not over here (§9.9): a node that stops on it and then
                # prints the game over gave up before reading what waited (seed 1855).
                problems.append(f"{node.name}: exit 3, the table gone, with the game over")
        elif code is not None and code != EXIT_UNHEARD:
            problems.append(f"{node.name}: exit {code}: {last_err}")
    problems += [
        p for node in game.nodes for run in node.runs if (p := unheard_wrongly(game, node, run))
    ]
    for node in game.nodes:
        final = node.last.final()
        if node.last.proc.returncode == EXIT_GONE and final and final.get("gone") == "dropped":
            holders = [f for f in finals.values() if not f.get("provisional")]
            if not all(node.seat in f.get("dropped", ()) for f in holders):
                problems.append(f"{node.name}: gone as 'dropped' but not dropped by all who ended")
    settled = {s: f for s, f in finals.items() if not f.get("provisional")}
    if len({(f["digest"], tuple(f["totals"])) for f in settled.values()}) > 1:
        said = "; ".join(
            f"P{s + 1} {f['digest'][:12]} {f['totals']}" for s, f in sorted(settled.items())
        )
        problems.append(f"settled finals disagree: {said}")
    problems += provisional_apart(finals)
    facts["exits"] = ",".join(exits)
    facts["at"] = game.notes
    facts["revived"] = game.revived
    facts["ended"] = [round(e - game.start, 1) if e else None for e in ended]
    facts["provisional"] = sorted(s for s, f in finals.items() if f.get("provisional"))
    facts["gone"] = {
        n.seat: (n.last.final() or {}).get("gone")
        for n in game.nodes
        if n.last.proc.returncode == EXIT_GONE
    }
    facts["dropped"] = sorted({d for f in finals.values() for d in f.get("dropped", ())})
    facts["played"] = max((f.get("rounds", 0) for f in finals.values()), default=0)
    # Each node's own last word, for reading a game back (a passed game's logs are removed).
    facts["finals"] = {
        n.name: {k: f.get(k) for k in ("over", "rounds", "dropped", "provisional", "gone")}
        | {"digest": str(f.get("digest", ""))[:12]}
        for n in game.nodes
        if (f := n.last.final()) is not None
    }
    logs = [str(n.log) for n in game.nodes if n.log.exists()]
    audit = subprocess.run(
        [sys.executable, "-m", "cli", "audit", "--json", *logs],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    (game.dir / "audit.out").write_text(audit.stdout + audit.stderr)
    if audit.returncode != 0:
        findings = [
            json.loads(line)["finding"]
            for line in audit.stdout.splitlines()
            if line.startswith('{"event": "finding"')
        ]
        codes = Counter(str(f.get("code", f.get("kind", "?"))) for f in findings)
        problems.append(f"audit exit {audit.returncode}: {dict(codes) or audit.stderr.strip()}")
    return problems, facts


def play(plan: Schedule, root: Path, suspect: float, drop: float, keep: bool) -> dict[str, Any]:
    workdir = root / f"seed{plan.seed}"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / "chaos.json").write_text(json.dumps(asdict(plan), indent=1))
    game = Game(plan, workdir, suspect, drop)
    # Generous: the bots' pace on a loaded machine, the faults' lengths, the gone bound.
    budget = 90.0 * plan.rounds + sum(f.length for f in plan.faults) + 4 * drop
    deadline = time.monotonic() + budget
    missed: list[str] = []
    with Lab(plan.players) if plan.lab else contextlib.nullcontext() as lab:
        game.begin(lab)
        try:
            since = time.monotonic()
            for number, fault in enumerate(plan.faults):
                if game.wait_trigger(fault, deadline, since):
                    since = time.monotonic()
                    end = game.inflict(fault)
                    heapq.heappush(game.ends, (since + fault.length, number, end))
                    if fault is plan.faults[-1] or plan.faults[number + 1].during < 0:
                        game.end_due(all_of_them=True)  # one fault at a time, as before
                else:
                    missed.append(fault.kind)
            game.end_due(all_of_them=True)
            running = play_out(game, deadline, plan.rounds)
        finally:
            game.stop_all()
    wall = time.monotonic() - game.start
    problems, facts = check(game, running)
    result = {
        "seed": plan.seed,
        "players": plan.players,
        "rounds": plan.rounds,
        "deal": plan.deal,
        "faults": [f.describe() for f in plan.faults],
        "kinds": [f.kind for f in plan.faults],
        "missed": missed,
        "ok": not problems,
        "problems": problems,
        "wall": round(wall, 1),
        **facts,
    }
    (workdir / "result.json").write_text(json.dumps(result, indent=1))
    if not problems and not keep:
        shutil.rmtree(workdir)
    return result


def line(result: dict[str, Any]) -> str:
    verdict = "ok  " if result["ok"] else "FAIL"
    extra = []
    if result["missed"]:
        extra.append(f"missed {','.join(result['missed'])}")
    if result["dropped"]:
        extra.append("dropped " + ",".join(f"P{s + 1}" for s in result["dropped"]))
    if result["gone"]:
        # (No reason: a resume that could not recover its own events, exit 3 too, §9.6 step 5.)
        gone = result["gone"].items()
        extra.append("gone " + ",".join(f"P{int(s) + 1}:{g or 'unrecovered'}" for s, g in gone))
    if result.get("deal", "commit") != "commit":
        extra.append(f"{result['deal']} deal")
    if result.get("revived"):
        extra.append("resumed after gone " + ",".join(result["revived"]))
    if result["provisional"]:
        extra.append("provisional " + ",".join(f"P{s + 1}" for s in result["provisional"]))
    text = (
        f"{verdict} seed {result['seed']:5d}  {result['players']}p "
        f"{result['played']}/{result['rounds']}r  "
        f"{' + '.join(result['faults']):60s} exits {result['exits']:10s} "
        f"{result['wall']:6.1f}s  {'  '.join(extra)}"
    )
    for problem in result["problems"]:
        text += f"\n      {problem}"
    return text


def _range(text: str) -> list[int]:
    low, _, high = text.partition("-")
    values = list(range(int(low), int(high or low) + 1))
    if not values or not all(2 <= v <= 8 for v in values):
        raise argparse.ArgumentTypeError(f"players 2-8, not {text!r}")
    return values


def _kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in ALL_KINDS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown kind(s) {bad}; choose from {', '.join(ALL_KINDS)}"
        )
    return kinds


def _lengths(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in LENGTHS]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown length(s) {bad}; choose from {', '.join(LENGTHS)}"
        )
    return names


def _pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in (i.strip() for i in text.split(",") if i.strip()):
        first, plus, second = item.partition("+")
        if not plus or first not in ALL_KINDS or second not in ALL_KINDS:
            raise argparse.ArgumentTypeError(
                f"{item!r} is not KIND+KIND; kinds: {', '.join(ALL_KINDS)}"
            )
        pairs.append((first, second))
    if not pairs:
        raise argparse.ArgumentTypeError("no pair given")
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--seed", type=int, default=1, help="the first game's seed")
    p.add_argument("--games", type=int, help="games to play (seeds from --seed; default 1)")
    p.add_argument("--players", type=_range, default=_range("2-5"), help="e.g. 3 or 2-5")
    p.add_argument("--kinds", type=_kinds, help="the fault kinds to draw from (default: all)")
    p.add_argument(
        "--cover",
        action="store_true",
        help="seed k's first fault: the (k mod n)-th of the n (kind, size) of --kinds x"
        " --players (--games defaults to n: one of each)",
    )
    p.add_argument(
        "--overlap",
        type=_pairs,
        metavar="A+B,...",
        help="two faults a game, a pair drawn from these: B starts while A lasts"
        " (e.g. cut-one+stop-over,stop-2d+kill)",
    )
    p.add_argument(
        "--length",
        type=_lengths,
        metavar="NAME,...",
        help="the lengths every cut and kill draws from: short, suspect, under, over, 2d, gone"
        " (those of the stop-* kinds), drop (healing as the sides vote or abandon,"
        " drop-0.5 to drop+1.5 s), wait (healing as an abandoned side stops waiting on its"
        " provisional result, 4 drop-1 to 4 drop+1.5 s) or past (4 drop + 4: past an abandon"
        " and its provisional wait) or long (7 drop + 4: far past them)",
    )
    p.add_argument(
        "--deal",
        choices=[d.value for d in Deal],
        default=Deal.COMMIT.value,
        help="how every game deals its decks (default commit; shuffle: docs/shuffle.md)",
    )
    p.add_argument("--lab", action="store_true", help="also partitions, in a netns lab (root)")
    p.add_argument("--suspect-after", type=float, default=2.0)
    p.add_argument("--drop-after", type=float, default=8.0)
    p.add_argument("--dir", type=Path, default=Path("chaos-runs"), help="where games are kept")
    p.add_argument("--keep", action="store_true", help="keep the logs of games that passed")
    p.add_argument("--print-schedule", action="store_true", help="show the games; play none")
    args = p.parse_args(argv)
    kinds = args.kinds or [k for k in KINDS if args.lab or k not in CUTS]
    pairs = args.overlap or []
    if args.cover and pairs:
        p.error("--cover and --overlap draw the first fault each their own way: choose one")
    cells = cover(args.players, kinds) if args.cover else []
    games = args.games if args.games is not None else len(cells) or 1
    plans = []
    for seed in range(args.seed, args.seed + games):
        # By the seed, not the game's place in the run: ``--cover --seed S --games 1`` plays
        # game S again, and any len(cells) seeds in a row cover every cell.
        first, players = cells[seed % len(cells)] if cells else (None, args.players)
        plans.append(
            schedule(
                seed,
                players=[players] if isinstance(players, int) else players,
                kinds=kinds,
                suspect=args.suspect_after,
                drop=args.drop_after,
                first=first,
                pairs=pairs,
                spans=args.length or (),
                deal=args.deal,
            )
        )
    if args.print_schedule:
        for plan in plans:
            faults = " + ".join(f.describe() for f in plan.faults)
            dealt = "" if plan.deal == Deal.COMMIT else f"  ({plan.deal} deal)"
            print(f"seed {plan.seed:5d}  {plan.players}p {plan.rounds}r  {faults}{dealt}")
        return 0
    # A schedule is printed anywhere; played, its partitions need the lab.
    if any(k in LAB_KINDS for k in kinds) or any(k in LAB_KINDS for p in pairs for k in p):
        why = unavailable()
        if why is not None:
            p.error(f"partitions need a netns lab: {why}")
    if any(k in DEGRADED for k in kinds) or any(k in DEGRADED for p in pairs for k in p):
        why = impairments_unavailable()
        if why is not None:
            p.error(f"a degraded network needs: {why}")
    # Stopped by Ctrl-C or SIGTERM, even started in the background (SIGINT ignored there): the
    # game's processes are continued and killed and the lab's namespaces removed on the way out.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    with (args.dir / "results.jsonl").open("a") as book:
        for plan in plans:
            result = play(plan, args.dir, args.suspect_after, args.drop_after, args.keep)
            results.append(result)
            book.write(json.dumps(result) + "\n")
            book.flush()
            print(line(result), flush=True)
    print(summary(results))
    return 0 if all(r["ok"] for r in results) else EXIT_FAILED


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def summary(results: Sequence[dict[str, Any]]) -> str:
    by_kind: Counter[tuple[str, int, bool]] = Counter()
    for r in results:
        # The faults done: one whose point the game never reached (missed) is not counted.
        for kind in (Counter(r["kinds"]) - Counter(r["missed"])).elements():
            by_kind[(kind, r["players"], r["ok"])] += 1
    sizes = sorted({r["players"] for r in results})
    rows = ["kind          " + "".join(f"  {n}p ok/all" for n in sizes)]
    for kind in ALL_KINDS:
        cells = []
        for n in sizes:
            good, bad = by_kind[(kind, n, True)], by_kind[(kind, n, False)]
            cells.append(f"  {good:4d}/{good + bad:<5d}" if good + bad else "           -")
        if any(by_kind[(kind, n, ok)] for n in sizes for ok in (True, False)):
            rows.append(f"{kind:14s}" + "".join(cells))
    failed = [r["seed"] for r in results if not r["ok"]]
    rows.append(
        f"{counted(len(results), 'game')}, {len(results) - len(failed)} passed"
        + (f"; FAILED seeds: {' '.join(map(str, failed))}" if failed else "")
    )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
