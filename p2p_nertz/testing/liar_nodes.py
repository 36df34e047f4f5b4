"""The simulator's liars on real nodes: every lie through the runtime (session 32).

:class:`LiarNode` is a real :class:`~p2p_nertz.runtime.node.PeerNode` whose core lies as a
:class:`~p2p_nertz.sim.liars.Liar` says: the liar is installed on its core as the simulator
installs it (:func:`~p2p_nertz.sim.liars.install`, wrapping the outbox's signing and the core's
flush), before the core starts, its ``at`` counted from the node's start. Only tests and
``scripts/scan_real_liars.py`` build one: no argument of the ``nertz`` commands reaches it.

:func:`play` plays one game in one trio run: every member a real node on tcp://127.0.0.1 (port
0, read back), with its own log file, real signatures and a greedy bot at speed 10, the liars
among them. It returns when every honest node has ended (the liars, which may watch a game
they were voted out of until the table is gone, are then cancelled), when no honest node's
fold has moved for ``still`` seconds (a freeze), or when ``bound`` seconds have passed (a
game that moves but never ends; a hang's bound). A freeze is judged by progress, not by the
game's length (session 41): on a loaded machine a liar's first chance may fall in the lobby
(its commit, seconds after its start where an idle machine is in play within one), and the
game left to the honest members, another deal, takes 40 to 120 s where the game with the
liar in play takes 7; at load 40-50 on 2 cores 7 of 455 games outlasted the 120 s that was
then the game's bound, every one still moving (its folds never still for 5 s) and dealt
without the liar.

:func:`check` judges the game as the fuzzer judges the simulator's
(:func:`~p2p_nertz.sim.liar_games.judge_liars` on the nodes' cores, the audit of every log
file, the forks the honest logs hold), and the base invariants that concern real nodes:
no node raised, every honest node ended with the game over and one final state, the audit of
every log reaches that state (where no result is provisional) and names no honest member.
An honest node that stops waiting, the table gone (docs/protocol.md §9.9), before its game
is over fails, as a simulated peer whose runtime would stop there does: until session 33
the one left alone in the game by a vote on proof at two players (the liar quiet: its beats,
timed below the lie, are old news) stopped in play, exit 3, where the simulator, which notes
the answer and never stops a peer, played the round out; now it plays the round out and the
game ends there (§9.9, *alone in the game*).
A game whose liar holds play open (:func:`~p2p_nertz.sim.liar_games.holding_open`: a member
that never passes, docs/protocol.md §13) is named, not failed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from p2p_nertz.audit import AuditReport, LogSource, audit
from p2p_nertz.logfile import RecordKind, Recovery, read_log
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.gone import TableGone
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode, node_config
from p2p_nertz.sim.invariants import UNION_AGREEMENT, forked_in
from p2p_nertz.sim.liar_games import game, holding_open, judge_liars, liars_majority
from p2p_nertz.sim.liars import LIES, Liar, Lie, _State, install
from p2p_nertz.testing.games import bot_game

__all__ = [
    "BOUND",
    "CONFIG",
    "LABEL",
    "NO_TIMED_VOTES",
    "STILL",
    "WITHHELD_ONLY",
    "LiarNode",
    "PlayLiarNode",
    "RealLiarRun",
    "audit_logs",
    "check",
    "draw",
    "messages",
    "play",
]

CONFIG: PeerConfig = dataclasses.replace(
    node_config(suspect_after=1.0, drop_after=3.0), phase_timeout=6.0
)
"""Every node's timers: the simulator's quick ones (``QUICK_TIMERS``), so that a liar is
voted out within seconds, as in the fuzzer's games. Under load they can drop an honest
member too: a node's own log sync that stalls past ``drop_after`` twice over (it is kept
heard for one, :func:`~p2p_nertz.runtime.node.keep_heard`) is a real silence, 8 s at a load
of 40 on 2 cores (session 41); a test that must hold under any load takes
:data:`WITHHELD_ONLY` and :data:`NO_TIMED_VOTES`."""

BOUND = 240.0
"""Seconds a game may take at most (a game that moves but never ends): one round of bots at
speed 10 takes 7 to 30 at three players, and up to 120 for the two left by a liar voted out
in the lobby on a loaded machine (the module docstring)."""

WITHHELD_ONLY: PeerConfig = dataclasses.replace(
    node_config(suspect_after=2.0, drop_after=2 * BOUND), phase_timeout=CONFIG.phase_timeout
)
"""Honest nodes' timers under which no silence drops anybody within a game (session 42):
``drop_after`` past :data:`BOUND`, so no vote for silence and no table gone; only a member
heard that withholds what it alone can give is voted out, after the quick ``phase_timeout``
(*withheld*, docs/protocol.md §9.2), and, the other of two, counts as gone then
(``Membership.gone_for``: a bot abandons it; :func:`play`'s ``abandon=False`` goes with these
timers). With the liar on :data:`NO_TIMED_VOTES` and no bot abandoning, the honest members
are the only voters, so no load can drop one of them: a drop takes a strict majority of the
roster, and a member never votes itself out; at three that is both honest members' votes,
which only the liar can have against it, and at two no vote drops anyone. (More than
sixteen withdrawals of votes *withheld* on one member in one round, each after a stall past
``phase_timeout``, would be a flap fault, docs/protocol.md §9.4: over 100 s of stalls in one
round of seconds.) A stall only slows such a game; a node that never comes back is a freeze
(:data:`STILL`)."""

NO_TIMED_VOTES: PeerConfig = dataclasses.replace(WITHHELD_ONLY, phase_timeout=2 * BOUND)
"""A liar's timers beside :data:`WITHHELD_ONLY`'s: none of them votes within a game, so the
liar votes nobody out but by its lie, or on proof (session 42: its votes *withheld*, cast
before its lie on an honest member whose sync a loaded machine stalled, were the majority's
second)."""

STILL = 30.0
"""Seconds the honest nodes' folds may stand still before the game counts as frozen: past
every timer of :data:`CONFIG` (a vote after ``drop_after`` or ``phase_timeout``, the end's
``grace``) several times over; the longest still stretch of a game that ended, at load 50 on
2 cores, was under 5 s."""

#: The label of the games' keys (:func:`~p2p_nertz.testing.games.bot_game`).
LABEL = b"real-liars"


class LiarNode(PeerNode):
    """A real node whose core lies as ``liar`` says (the module docstring); ``state`` is what
    its liar did (:attr:`told`)."""

    def __init__(
        self, identity: Identity, spec: GameSpec, log_path: Path, *, liar: Liar, **kwargs: Any
    ) -> None:
        super().__init__(identity, spec, log_path, **kwargs)
        self.liar = liar
        self.state: _State | None = None

    @property
    def told(self) -> int:
        """Lies told so far (a chance taken whose message went out)."""
        return self.state.told if self.state is not None else 0

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        if recovery.records:  # (a restart: the honest core restored, then lying again)
            effects = super()._make_peer(recovery)
            self.state = install(self.peer, self._liar_now(), self.state)
            return effects
        now = self._clock()
        self._peer = Peer(self.identity, self.spec, now, self._config)
        self.state = install(self._peer, self._liar_now(), self.state)
        return self._peer.start(now)

    def _liar_now(self) -> Liar:
        """The liar, its start counted from now on the node's clock (the simulator's from 0)."""
        return dataclasses.replace(self.liar, at=self._clock() + self.liar.at)


class PlayLiarNode(LiarNode):
    """A :class:`LiarNode` whose lies wait for its own deal to be public (its ``ready``
    signed: its next event is one of play) as well as for ``at``: a test of a lie in play
    whose first chance must not fall in the lobby or the deal when a loaded machine makes
    those last longer than ``at`` (the module docstring: the liar voted out at its commit, the
    game is another deal of the two left, six times longer)."""

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        effects = super()._make_peer(recovery)
        state, peer, lies, seat = self.state, self.peer, self.liar.times, self.liar.seat

        def dealt() -> bool:
            return any(e.kind is Kind.READY for e in peer.events(seat))

        assert state is not None
        if state.told == 0 and not dealt():
            state.left = 0  # (none until its deal is public)
            lying = peer._flush

            def flush(now: float) -> list[Effect]:
                if state.told == 0 and state.left == 0 and dealt():
                    state.left = lies
                return lying(now)

            peer._flush = flush
        return effects


def draw(
    seed: int, *, players: tuple[int, int] = (2, 4), lies: Sequence[Lie] = LIES
) -> tuple[GameSpec, list[Identity], tuple[Liar, ...]]:
    """The game of ``seed``: its spec, its members' identities in seat order, and its liars,
    drawn as the simulator's fuzzer draws its game of that seed (:func:`~p2p_nertz.sim.
    liar_games.game`: the table size, the liar's seat, lie, start, rate and count; the
    network is the real one)."""
    config, liars = game(seed, players=players, lies=lies)
    identities, spec = bot_game(LABEL, config.players, seed)
    return spec, identities, liars


@dataclass(slots=True)
class RealLiarRun:
    """A game with liars on real nodes (:func:`play`)."""

    spec: GameSpec
    liars: tuple[Liar, ...]
    logs: list[Path]
    #: every node's core at the end, by seat (``None``: it never started)
    peers: list[Peer | None]
    #: whether each node's run returned (the liars' may have been cancelled)
    ended: list[bool]
    #: every honest node ended within the bound
    finished: bool
    wall: float
    #: lies each liar told, by seat
    told: dict[int, int]
    #: what each node refused, by reason (:attr:`PeerNode.refusals`)
    refused: list[dict[str, int]]
    #: what a node raised (none should: a traceback would reach a person)
    raised: list[str] = field(default_factory=list)
    #: why each node stopped waiting, the table gone (:attr:`PeerNode.gone`), by seat
    gone: list[TableGone | None] = field(default_factory=list)
    #: the game's pace as the honest nodes saw it, looked at every second: (seconds, what
    #: their tentative folds held: events, phases) (:attr:`longest_still`)
    progress: list[tuple[float, tuple[object, ...]]] = field(default_factory=list)

    @property
    def cheaters(self) -> frozenset[int]:
        return frozenset(liar.seat for liar in self.liars)

    @property
    def longest_still(self) -> float:
        """The longest stretch of seconds in which no honest node's fold moved (a stall
        shorter than the bound: what a slow game spent its time on)."""
        longest, since, last = 0.0, 0.0, None
        for at, seen in self.progress:
            if seen != last:
                since, last = at, seen
            longest = max(longest, at - since)
        return longest


async def play(
    spec: GameSpec,
    identities: Sequence[Identity],
    liars: Sequence[Liar],
    logdir: Path,
    *,
    config: PeerConfig = CONFIG,
    liar_config: PeerConfig | None = None,
    bound: float = BOUND,
    still: float = STILL,
    liar_node: type[LiarNode] = LiarNode,
    grace: float = 3.0,
    abandon: bool = True,
) -> RealLiarRun:
    """Play ``spec``'s game on real nodes, ``liars`` among them (the module docstring), each
    liar a ``liar_node`` (a test's lie the fuzzer's liar does not tell: a subclass), every
    node waiting ``grace`` at most for the others to hold its last events; frozen once no
    honest node's fold has moved for ``still`` seconds, or after ``bound``. Every node's
    timers are ``config``, the liars' ``liar_config`` if given (:data:`NO_TIMED_VOTES`);
    ``abandon=False``: no node's bot abandons a game of two (:data:`WITHHELD_ONLY`)."""
    by_seat = {liar.seat: liar for liar in liars}
    logs = [logdir / f"p{seat + 1}.log" for seat in range(spec.seats)]
    kwargs: dict[str, Any] = {
        "bind": "tcp://127.0.0.1:0", "strategy": "greedy", "speed": 10, "config": config,
        "grace": grace, "linger": 0.5,
    }  # fmt: skip
    lying = kwargs if liar_config is None else {**kwargs, "config": liar_config}
    nodes = [
        liar_node(identity, spec, logs[seat], liar=by_seat[seat], **lying)
        if seat in by_seat
        else PeerNode(identity, spec, logs[seat], **kwargs)
        for seat, identity in enumerate(identities)
    ]
    for node in nodes if not abandon else ():
        if node._bot is not None:
            node._bot.abandon = _stays  # type: ignore[method-assign]
    endpoints: dict[PeerId, str] = {
        pid: node.bind() for pid, node in zip(spec.peer_ids, nodes, strict=True)
    }
    honest = [seat for seat in range(spec.seats) if seat not in by_seat]
    ended = [False] * spec.seats
    raised: list[str] = []
    all_honest = trio.Event()
    start = trio.current_time()

    async def run(seat: int) -> None:
        try:
            await nodes[seat].run(endpoints)
        except Exception as exc:  # (the check says so: nothing may raise out of a node)
            raised.append(f"raised: seat {seat}'s node: {type(exc).__name__}: {exc}")
        ended[seat] = True
        if all(ended[s] for s in honest):
            all_honest.set()

    progress: list[tuple[float, tuple[object, ...]]] = []

    with trio.move_on_after(bound):
        async with trio.open_nursery() as nursery:
            for seat in range(spec.seats):
                nursery.start_soon(run, seat)
            honest_nodes = [nodes[s] for s in honest]
            nursery.start_soon(_watch, honest_nodes, start, progress, still, nursery.cancel_scope)
            await all_honest.wait()
            nursery.cancel_scope.cancel()  # (a liar voted out may watch until the table is gone)
    wall = trio.current_time() - start
    peers = [node._peer for node in nodes]
    return RealLiarRun(
        spec=spec,
        liars=tuple(liars),
        logs=logs,
        peers=peers,
        ended=ended,
        finished=all(ended[s] for s in honest),
        wall=wall,
        told={s: n.told for s, n in enumerate(nodes) if isinstance(n, LiarNode)},
        refused=[dict(node.refusals.counts) for node in nodes],
        raised=raised,
        progress=progress,
        gone=[node.gone for node in nodes],
    )


def _stays(peer: Peer, now: float) -> list[Effect] | None:
    """A bot's abandon that never abandons (:func:`play`'s ``abandon=False``)."""
    return None


async def _watch(
    nodes: Sequence[PeerNode],
    start: float,
    progress: list[tuple[float, tuple[object, ...]]],
    still: float,
    cancel: trio.CancelScope,
) -> None:
    """Note the pace of the honest ``nodes`` every second in ``progress`` (what their
    tentative folds hold: events, phase), and end the game (``cancel``) once it has stood
    still for ``still`` seconds: a freeze, the run not finished."""
    since, last = 0.0, None
    while True:
        seen = tuple(
            (sum(len(peer.events(q)) for q in range(peer.spec.seats)), str(peer.tentative.phase))
            for peer in (node._peer for node in nodes)
            if peer is not None
        )
        at = trio.current_time() - start
        progress.append((at, seen))
        if seen != last:
            since, last = at, seen
        elif at - since >= still:
            cancel.cancel()
        await trio.sleep(1.0)


def messages(path: Path) -> list[bytes]:
    """The messages a log file holds (the events it sent and received), in its order."""
    if not path.exists():
        return []
    with read_log(path) as reader:
        return [
            r.data for r in reader if r.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
        ]


def audit_logs(run: RealLiarRun) -> AuditReport:
    """The audit of every log file of ``run``, deep (as ``nertz audit`` reads them)."""
    return audit([LogSource.from_path(p) for p in run.logs if p.exists()], deep=True)


def check(run: RealLiarRun, report: AuditReport | None = None) -> tuple[list[str], tuple[int, ...]]:
    """The problems of ``run`` (the module docstring), and the liars holding play open (a
    known gap: then a freeze is not a problem). ``report``: the audit of every log, if made
    already (:func:`audit_logs`)."""
    cheaters = run.cheaters
    report = audit_logs(run) if report is None else report
    honest = [s for s in range(run.spec.seats) if s not in cheaters]
    holding = () if run.finished else holding_open(run.peers, cheaters)
    problems = list(run.raised)
    forked = {s for s, _ in forked_in((messages(run.logs[s]) for s in honest), run.spec)}
    problems += judge_liars(
        run.peers,
        cheaters,
        finished=run.finished,
        time=run.wall,
        report=report,
        forked=forked,
        gone=list(enumerate(run.gone)),
    )
    problems += [f"validity: {f}" for f in report.errors if f.seat not in cheaters]
    finals = []
    for seat in honest:
        peer = run.peers[seat]
        if peer is None or not run.ended[seat]:
            continue
        if peer.final.phase is not Phase.OVER:
            problems.append(f"unfinished: seat {seat} ended with its game in {peer.final.phase}")
        finals.append(peer)
    if len({p.final.digest() for p in finals}) > 1:
        problems.append("agreement: the honest nodes ended with different final states")
    settled = [p for p in finals if not p.provisional and p.final.phase is Phase.OVER]
    union = not liars_majority(len(run.peers), cheaters)  # (no promise there, §9.3)
    if union and settled and run.finished and report.digest != settled[0].final.digest():
        problems.append(UNION_AGREEMENT)
    if holding:
        problems = [p for p in problems if not p.startswith(("freeze:", "unfinished:"))]
    return problems, holding
