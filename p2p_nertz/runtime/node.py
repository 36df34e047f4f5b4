"""A peer node: one sans-I/O :class:`~p2p_nertz.protocol.peer.Peer` on real ZeroMQ sockets.

Theory of operation
-------------------
A node is the runtime around one peer core (DESIGN.md §1, §6, §7). It owns:

* **the mesh** (:class:`~p2p_nertz.runtime.mesh.Mesh`): a bound ROUTER, one DEALER per other
  member and per spectator, each DEALER fed by an outlet that never makes the node wait on a
  slow member (a full queue drops the message: gap repair, not the transport, makes delivery
  reliable);
* **the log** (:class:`~p2p_nertz.runtime.nodelog.NodeLog`): if it already holds events, the
  peer is rebuilt with :meth:`Peer.restore` from them and from the highest durable clock note,
  so a killed process continues the game with no seq reused; if the log's tail had to be cut,
  or a recovery noted in it did not finish, or ``recover`` says so, the peer is restored in
  recovery (docs/protocol.md §9.6);
* **three input tasks** — the receive task (bytes in bursts, :meth:`Peer.feed_many`), the timer
  (:meth:`Peer.tick` at :meth:`Peer.next_deadline`; an input that moves the deadline moves
  the timer's wait, earlier or later, without waking it) and the optional bot (a strategy
  choosing moves on the tentative view at a human pace). A task whose last await was its
  checkpoint takes a free lock without another.
* **the guard** (:mod:`p2p_nertz.runtime.guard`): every socket refuses frames above
  :data:`MAX_FRAME` (zmq cuts the sender off), the ROUTER admits only the other members'
  CURVE keys (:mod:`p2p_nertz.runtime.gate`), and the receive task hands the peer only what
  arrives under a routing id of the member whose key sent it, within that member's budget;
  the rest is dropped unread and unverified, counted in :attr:`PeerNode.guard` (which also
  says when one member's key reaches the node over two connections at once). Refusals of the
  guard and of the peer are logged at a bounded rate (:attr:`PeerNode.refusals`), never a
  line each.

The peer is not thread- or task-safe, so every call into it and the application of the effects it
returns happen under one :class:`trio.Lock`. Effects are applied **in order**: consecutive effects
that are written to the log (:func:`~p2p_nertz.runtime.nodelog.durable_record`: events, clock
reservations, proofs, the end of a recovery) are batched into one write that completes before any
:class:`Send` that follows them is handed to a DEALER (a batch holding anything but received events
is synced first: :meth:`NodeLog.write`; on a slow disk in a worker thread, the lock still held, the
node kept heard by :func:`keep_heard`). A batch of received events alone is the
exception: it is written after the sends that follow it, with the next batch or once the input's
effects are applied (in the log's order all the same), so that the ack of a claim is not held back
by its record (a write that costs a woken process tens of µs; docs/latency.md, session 21). It is
not synced either way: a process killed between the two loses the record as a machine crash loses
an unsynced one, and gap repair fetches it again. Other effects (notices) go to an optional
callback, in order. After a broadcast to two members or more the node yields the CPU, so that zmq's
I/O thread sends it before the node goes on.

Time is whatever ``clock`` returns (by default :func:`trio.current_time`, monotonic seconds); the
peer never reads a clock itself. The timer sleeps ``deadline - clock()``, so any clock counting
seconds works.

The node stops by itself (:class:`_Ending`) once the game is over (the final phase is ``OVER``)
and every member holds all our events (our last event is final: :attr:`Peer.stable` reached
its Lamport time), or once ``grace`` seconds passed after the game ended without that; but not
while it still owes the table a vote (:meth:`Peer.judging`: a member claims our feed past its
head, session 40), for ``grace`` plus ``phase_timeout`` at most; or once
the table is gone (:meth:`Peer.table_gone`: nobody still in the game heard, :attr:`PeerNode.gone`
says why; nothing is signed for it); it then
keeps answering for ``linger`` seconds (so the others can finish with our acks) and closes every
socket (``LINGER 0``) and the log. :meth:`PeerNode.leave` is the clean way out mid-game (a
signed ``leave``, then the same wait for the others to hold it, for :data:`LEAVE_GRACE` at
most: in a frozen game nobody will). Cancelling :meth:`PeerNode.run` is an abrupt stop, like a
crash: the log stays valid and a later run on the same log continues the game.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Final

import trio
import zmq

from p2p_nertz.bots import BotDriver, Pacing, make_strategy
from p2p_nertz.defaults import LINGER
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.logfile.store import Recovery
from p2p_nertz.protocol.envelope import looks_like_beat, looks_like_share_beat
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.local import MoveAnswer, MoveRefusal, MoveRefused
from p2p_nertz.protocol.peer import (
    Effect,
    Elsewhere,
    OutOfReach,
    Peer,
    PeerConfig,
    Record,
    Recovered,
    Rejected,
    Send,
    Suspected,
    TableGone,
)
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.protocol.unmet import DropWaits, FeedHeld, Owed, UnmetTeller, VoteShort
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move
from p2p_nertz.runtime.gate import zap_user_id
from p2p_nertz.runtime.guard import (
    BAD_FRAMES,
    OUTSIDER,
    OVER_BUDGET,
    TWIN_AFTER,
    InboundGuard,
    RefusalLog,
    SenderBudget,
    twin_after,
)
from p2p_nertz.runtime.mesh import (
    DEFAULT_BIND,
    MAX_FRAME,
    ROUTER_HWM,
    SEND_QUEUE,
    WATCH_MAX_FRAME,
    WATCH_SPEC_TAG,
    Mesh,
    Outlet,
    routing_id,
)
from p2p_nertz.runtime.nodelog import (
    CLOCK_NOTE,
    ENDPOINTS_NOTE,
    RECOVERED_NOTE,
    RECOVERING_NOTE,
    NodeLog,
    decode_clock_note,
    durable_record,
    encode_clock_note,
    read_session,
    recovery_unfinished,
    resume_point,
    session_notes,
)
from p2p_nertz.runtime.playerlock import PlayerLock
from p2p_nertz.runtime.watchport import WatcherAddress
from p2p_nertz.runtime.zmqtrio import AsyncSocket

__all__ = [
    "BEATS_PER_SUSPICION",
    "BEAT_CHUNK",
    "CLOCK_NOTE",
    "DEFAULT_BIND",
    "LEAVE_GRACE",
    "ENDPOINTS_NOTE",
    "MAX_BURST",
    "MAX_FRAME",
    "NODE_CONFIG",
    "RECOVERED_NOTE",
    "RECOVERING_NOTE",
    "ROUTER_HWM",
    "SEND_QUEUE",
    "IDLE_SYNC",
    "SLOW_SYNC",
    "SPEC_NOTE",
    "WATCH_MAX_FRAME",
    "WATCH_SPEC_TAG",
    "PeerNode",
    "decode_clock_note",
    "encode_clock_note",
    "node_config",
    "read_session",
    "recovery_unfinished",
    "routing_id",
    "serve_peer",
]

LEAVE_GRACE: Final = 2.0
"""Seconds a node that leaves (:meth:`PeerNode.leave`: Ctrl-C, SIGTERM) waits at most for the
others to hold its ``leave``: live members do within a round trip; a frozen game (a member
stopped, a partition) must not keep a node from stopping (issue 13 §2). The ``leave`` is in
the log before it is sent, so the others learn it from whoever holds it, or from a restart."""

NODE_CONFIG: Final = PeerConfig(ack_delay=0.0, want_delay=0.02, beat_interval=0.5)
"""The peer core's configuration on real sockets: acks go out as soon as a burst of received
messages has been taken in (the receive loop hands the peer everything waiting at once, which
coalesces acks under load), instead of after a fixed window: on a LAN the round trip is a few
hundred microseconds, and a 2 ms window would be most of a claim's time to finality. A gap
that a third member's ack reveals is asked for only if it is still open 20 ms later: such an
ack often overtakes the events themselves, on their way from their author, and asking at once
would fetch them twice.

A member beats after half a second without sending anything, not a quarter. No claim waits for
a beat: every event but a move, and a move a claim waits for, is acked at once, so a beat
announces only moves nobody waits for (docs/protocol.md §7.2), and a peer that plays or acks
more often than its beat interval never beats. At a quarter of a second a bot table beat
between moves: beats were a third of the messages per claim at 2 peers and a quarter at 4
(``scripts/bench_lan.py --kinds``); at half a second a table of bots in play sends few or
none. What waits longer: a move's finality when no claim follows it (a ``nerts`` call's, at
times), a lost announcement's repeat, the gap a beat shows, a recovering peer's wants. The
liveness timers do not move (a member is still heard ten times within ``suspect_after``;
:func:`node_config` keeps four)."""

BEATS_PER_SUSPICION: Final = 4
"""Beats a member sends at least within ``suspect_after`` when idle (the soak's timers beat
four times within theirs): :func:`node_config` shortens the beat interval to keep it."""


def node_config(*, suspect_after: float, drop_after: float) -> PeerConfig:
    """:data:`NODE_CONFIG` with this node's liveness timers, its beat interval at most
    ``suspect_after`` / :data:`BEATS_PER_SUSPICION`, so that a short ``suspect_after`` does not
    take an idle member for a silent one.

    >>> node_config(suspect_after=5.0, drop_after=30.0) == NODE_CONFIG
    True
    >>> node_config(suspect_after=1.0, drop_after=3.0).beat_interval
    0.25
    """
    beat = min(NODE_CONFIG.beat_interval, suspect_after / BEATS_PER_SUSPICION)
    return dataclasses.replace(
        NODE_CONFIG, suspect_after=suspect_after, drop_after=drop_after, beat_interval=beat
    )


MAX_BURST: Final = 256
"""Most messages taken from the ROUTER and held unfed (events are fed at once, beats in chunks)."""

SLOW_SYNC: Final = 0.25
"""A sync of the log that took longer than this share of the beat interval moves the next
ones to a worker thread, the node kept heard meanwhile (:func:`keep_heard`): on a
normal disk (~1 ms a sync) they stay on trio's thread, the claim's fast path
(docs/latency.md, session 29)."""
IDLE_SYNC: Final = 5.0
"""The first sync of the log after this many seconds without one goes to a worker thread, the
node kept heard meanwhile, alone (:meth:`~p2p_nertz.runtime.nodelog.SyncPace.beside`): a disk
idle that long may have gone to sleep, and the sync that wakes it may take longer than the
drop timer. A hand-off each idle gap, never on a run of claims (docs/latency.md, session 30)."""

BEAT_CHUNK: Final = 4
"""Beats fed to the peer at a time before the ROUTER is looked at again for events."""

log = logging.getLogger("p2p_nertz.node")

_GUARD_DETAILS: Final = {  # what the log says of a frame the guard dropped, by reason
    OUTSIDER: "a frame under a routing id not its key's member's",
    OVER_BUDGET: "a member's connection over its budget",
    BAD_FRAMES: "a message of more than one frame",
}

_MIN_WAIT: Final = 0.001  # seconds: the least the timer waits when a tick left its deadline due
#: Seconds within which the waits are told after an input (their ends: a member gave what it
#: owed, a vote joined; session 43): coalesced, as a tell reads every member (~0.2 ms).
#: Their starts are told when due (``UnmetTeller.due``), not at the silence timers' ticks,
#: which a long ``--suspect-after`` makes rare (an owing told 36 s late, its end "over").
TELL_GAP: Final = 0.2


class _Telling:
    """When a node tells the table's waits (:class:`UnmetTeller`; session 43): within
    :data:`TELL_GAP` of an input (what it ended), and when the next wait found will have
    lasted the while (``UnmetTeller.due``), a deadline of the timer task beside the core's."""

    def __init__(self) -> None:
        self.teller = UnmetTeller()
        self.told_at = -math.inf  # when the waits were last told (the node's clock)
        self.at = math.inf  # when they are told next

    def after_input(self) -> None:
        """An input was taken: tell what it ended within :data:`TELL_GAP`."""
        self.at = min(self.at, self.told_at + TELL_GAP)

    def due(self, core: float | None) -> float | None:
        """When the timer task wakes next: the core's deadline ``core`` or the telling,
        whichever is first (``None``: neither)."""
        if core is None:
            return None if self.at == math.inf else self.at
        return min(core, self.at)

    def tell(self, peer: Peer, now: float, notice: Callable[[Effect], None]) -> None:
        """Hand ``notice`` the notices of the waits now (:meth:`UnmetTeller.tell`); tell next
        when one is due."""
        for told in self.teller.tell(peer, now):
            notice(told)
        self.told_at, self.at = now, self.teller.due


class SignedElsewhereError(NertzError):
    """Our key signed this game's event ``seq`` elsewhere (another process plays as us, or
    this node's log was lost or is an older copy): the node stopped, having signed nothing new
    (:class:`~p2p_nertz.protocol.peer.Elsewhere`, docs/protocol.md §9.6)."""

    def __init__(self, seq: int) -> None:
        super().__init__(
            f"your key has signed this game's events elsewhere (seq {seq}): another nertz "
            "plays as you, or this node's log was lost or is an older copy; this one stopped "
            "without signing anything new. Let the other play on; once it has stopped, `nertz "
            "resume` its log, or this one (it learns your events from the others before it "
            "signs)"
        )
        self.seq = seq


NoticeCallback = Callable[[Effect], None]
Clock = Callable[[], float]


async def _acquire(lock: trio.Lock) -> None:
    """Take ``lock``; when it is free, without a trip through the scheduler (a schedule point
    is a task step and a look at the sockets, ~0.1 ms on a woken process): only for a caller
    whose last await, just before, was its checkpoint."""
    try:
        lock.acquire_nowait()
    except trio.WouldBlock:
        await lock.acquire()


def _on_trio_clock(due: float | None, clock: Clock) -> float:
    """The deadline ``due``, on ``clock``, on trio's clock (``None``: never)."""
    return math.inf if due is None else trio.current_time() + (due - clock())


def _log_reach(effect: Suspected | OutOfReach, spec: GameSpec) -> None:
    """Log who is silent and heard again, and when those out of reach leave no majority here
    and when that is over (docs/protocol.md §9.5): what a person reads with ``nertz -v``, the
    front ends saying it in their own words."""
    if isinstance(effect, Suspected):
        heard = "is silent" if effect.suspected else "is heard again"
        log.info("seat %d %s", effect.seat, heard)
        return
    names = ", ".join(spec.members[s].name for s in effect.seats)
    if effect.over:
        log.info("a majority again: %s", f"{names} heard again" if names else "the roster changed")
    else:
        log.info("no majority here: %s out of reach, nobody can be dropped", names)


def _bot_driver(strategy: str | None, rng: Rng, speed: int, practice: bool) -> BotDriver | None:
    """The bot that plays for the node (``None``: a person plays), its strategy's randomness
    forked from the node's."""
    if strategy is None:
        return None
    return BotDriver(make_strategy(strategy, rng.fork(0)), Pacing(speed), practice=practice)


def log_unmet(notice: VoteShort | FeedHeld | Owed | DropWaits, spec: GameSpec) -> None:
    """Log a vote to drop a member that stands without a majority for a while, or a member
    held back (or heard and owing) as long, and its end
    (:class:`~p2p_nertz.protocol.unmet.UnmetTeller`, the front ends'
    :attr:`TableView.waits <p2p_nertz.ui.view.TableView.waits>`), as *no majority here*
    is (:func:`_log_reach`): the table waits on it, and ``nertz -v`` says why."""
    names = spec.members
    if isinstance(notice, (Owed, DropWaits)):
        from p2p_nertz.ui.view import waits_notice_words  # (words only when one is told)

        log.info("%s", " — ".join(waits_notice_words(notice, lambda s: names[s].name)))
        return
    if isinstance(notice, FeedHeld):
        h = notice.held
        if notice.ended is not None:
            log.info("%s is held back no more: %s", names[h.seat].name, notice.ended.value)
            return
        log.info(
            "the table waits on %s: its events wait for %s, not held",
            names[h.seat].name,
            ", ".join(f"{names[f].name}'s #{a}-{b}" for f, a, b in h.waits),
        )
        return
    u = notice.unmet
    if notice.ended is not None:
        log.info(
            "a vote short of a majority ends: %s voted out by %s, %s",
            names[u.seat].name,
            ", ".join(names[v].name for v in u.voters),
            notice.ended.value,
        )
        return
    log.info(
        "no majority for a vote: %s voted out (%s) by %s, %d of %d votes; "
        "the table waits for the votes still needed",
        names[u.seat].name,
        ", ".join(reason.name.lower() for reason in u.reasons),
        ", ".join(names[v].name for v in u.voters),
        len(u.voters),
        u.majority,
    )


class _Ending:
    """When the node may stop (see the module docstring): it knows when the game ended or we
    left, and how long to wait for the others; :meth:`check` sets :attr:`done`."""

    def __init__(self, grace: float, provisional_wait: float) -> None:
        self.grace = grace
        self.provisional_wait = provisional_wait
        self.done = trio.Event()
        self.leaving = False
        self.gone: TableGone | None = None  # why we stopped waiting, if the table is gone
        self._left_at: float | None = None  # when we left (the wait is LEAVE_GRACE at most)
        self._over_at: float | None = None  # when the game ended, or we left
        self._provisional_since: float | None = None  # when it ended on a provisional result
        self._judged_at = -math.inf  # when we last still owed the table a vote (Peer.judging)

    def leave(self, now: float) -> None:
        """We leave the game (our ``leave`` is being signed)."""
        self.leaving = True
        if self._left_at is None:
            self._left_at = now

    def notes(self) -> list[LogRecord]:
        """What the log says last once done, the table gone (:attr:`TableGone.notes`: the
        core's; stopped unheard, a ``recovering`` note, §9.6)."""
        notes = self.gone.notes if self.gone is not None else ()
        return [LogRecord.note(note.name, note.data) for note in notes]

    def check(self, peer: Peer, now: float) -> None:
        """Set :attr:`done` if the node may stop now."""
        if self.done.is_set():
            return
        if peer.final.phase is Phase.OVER and peer.provisional and not self.leaving:
            # An abandoned game whose result the other member may not share yet (it may have
            # seen one round more or less scored, docs/protocol.md §9.3): wait a while for it
            # to come back and settle it, then stop with the result marked provisional.
            if self._provisional_since is None:
                self._provisional_since = now
            if now - self._provisional_since < self.provisional_wait:
                return
        if not self.leaving:
            gone = peer.table_gone(now)
            if gone is not None:
                # Nobody still in the game is heard (docs/protocol.md §9.9): a member woken
                # after the others finished without it, or a restart after everyone went home
                # (then only the acks finality needs are missing). Nothing is signed for it;
                # the log stays as it was, and a run on it later takes the game up again.
                log.info("the table is gone: %s", gone.why)
                self.gone = gone
                self.done.set()
                return
        if peer.final.phase is Phase.OVER and peer.silent_for(now) >= peer.config.drop_after:
            self.done.set()  # over, and nobody left to hold our last events: nothing to wait for
            return
        if peer.final.phase is not Phase.OVER and not self.leaving:
            return
        if self.leaving and peer.recovering:
            self.done.set()  # it signed nothing (Peer.leave): nobody needs to hold anything
            return
        if self._over_at is None:
            self._over_at = now
        # A member claims our feed past its head: our vote *withheld* may be the one the
        # majority lacks (docs/protocol.md §9.2), due ``phase_timeout`` after the claim began.
        # We stay for it; a claim that comes and goes holds us no longer than that past
        # ``grace``. (Left, we vote no more.)
        staying = now - self._over_at < self.grace + peer.config.phase_timeout
        if staying and not self.leaving and peer.judging():
            self._judged_at = now  # (``grace`` for the others to hold our vote from here)
            return
        own = peer.events(peer.seat)
        waited = now - max(self._over_at, self._judged_at)
        if not own or own[-1].lamport <= peer.stable or waited >= self.grace:
            self.done.set()
        elif self._left_at is not None and now - self._left_at >= min(self.grace, LEAVE_GRACE):
            # Leaving, and the others do not all hold our leave yet: frozen members, or gone.
            log.info("left without every member holding our leave (it is in our log)")
            self.done.set()


async def keep_heard(
    peer: Peer | None,
    clock: Clock,
    send: Callable[[Send], None],
    reserved: int,
) -> None:
    """While a sync in a worker thread makes a node's latest records durable (a slow disk:
    :class:`~p2p_nertz.runtime.nodelog.SyncPace`), its lock held: keep it heard, a want each
    beat interval (:meth:`Peer.keep_heard`), for ``drop_after`` at most (a sync longer than
    that leaves it silent for the rest, as every sync did before; session 29,
    docs/latency.md). ``reserved``: the clock the log holds durably reserved."""
    if peer is None:
        return  # (a write before the peer is made: a recovery's first note)
    config = peer.config
    for _ in range(max(1, math.floor(config.drop_after / config.beat_interval))):
        await trio.sleep(config.beat_interval)
        wire = peer.keep_heard(clock(), reserved)
        if wire is None:
            return
        send(Send(wire))  # (through the node's hook, as every send of its)


def _say_twin(spec: GameSpec, member: bytes) -> None:
    """Tell the person that a member's key (its routing id ``member``) reaches this node over
    two connections at once (:attr:`~p2p_nertz.runtime.guard.InboundGuard.twins`)."""
    name = next((m.name for m in spec.members if routing_id(m.peer_id) == member), "a member")
    log.warning(
        "%s's key reaches this node from two places at once: it may be in use on another "
        "machine too (a copy of the key file, or of the log, resumed there); the copy that "
        "hears nobody signs nothing and stops (docs/key-files.md §4)",
        name,
    )


def _node_log(path: Path, config: PeerConfig) -> NodeLog:
    """The node's log, its syncs paced by ``config`` (:data:`SLOW_SYNC`, :data:`IDLE_SYNC`)."""
    return NodeLog(path, slow_after=config.beat_interval * SLOW_SYNC, idle_after=IDLE_SYNC)


def _members_guard(spec: GameSpec, identity: Identity, budget: SenderBudget | None) -> InboundGuard:
    """The guard of our ROUTER: each other member's routing id prefix and the ZAP user id of
    its connections, within ``budget``; a key heard from two places at once said in words."""
    routes = {routing_id(p): zap_user_id(p) for p in spec.peer_ids if p != identity.peer_id}
    try:
        after = twin_after(os.environ)  # (the tests' shorter wait, TWIN_AFTER_ENV)
    except ValueError as bad:
        log.warning("%s: it waits %g s", bad, TWIN_AFTER)
        after = TWIN_AFTER
    return InboundGuard(routes, budget, on_twin=partial(_say_twin, spec), twin_after=after)


class PeerNode:
    """One peer on real sockets; see the module docstring.

    Typical use binds first (so the endpoints of every member can be gathered), then runs::

        node = PeerNode(identity, spec, "game.log", strategy="greedy")
        endpoint = node.bind()
        ...  # learn the other members' endpoints
        peer = await node.run(endpoints)

    Args:
        identity: this peer's key; it must be in ``spec``'s roster.
        spec: the game agreed in the lobby.
        log_path: the log file; created if missing, continued (restart) if it holds events.
        bind: the ROUTER's endpoint (port 0 for an ephemeral one).
        strategy: a bot strategy name (see :func:`~p2p_nertz.bots.make_strategy`), or ``None``
            for no bot (moves only through :meth:`play`).
        speed: the bot's pacing level, 1 to 10.
        practice: the bot waits for the slowest other player (no more moves this round than
            every other playing seat, :func:`~p2p_nertz.bots.keeps_pace`), so that a person
            learning the keys sets the pace (``nertz play --practice``).
        hold_ready: the last round whose ``ready`` the node signs by itself, later ones when
            :meth:`release_ready` says so (a person's board, or page: ``ready_through``).
        seed: the bot's randomness; by default derived from the peer id.
        config: the peer core's timers and limits; by default :data:`NODE_CONFIG`.
        clock: the time source passed to the peer as ``now``, in seconds.
        on_notice: called, in order, with every effect that is not a Send, Record, Reserve or Note
            (notices, rejections, suspicions). It runs with the peer locked: it may read the
            peer but must not call into it.
        linger: seconds to keep answering after the node is done, before closing.
        grace: seconds after the game is over to wait for every member to hold our events.
        ctx: a zmq context to use (the caller terminates it); by default the node makes its own
            and terminates it when :meth:`run` returns.
        watchers: spectators' addresses (``nertz watch``: endpoint and key): a CURVE DEALER to
            each pushes it the game spec (:data:`WATCH_SPEC_TAG`), then every message received
            and broadcast (our events once durable, and beats); it verifies the signatures.
        recover: restore the peer in recovery even if the log's tail is clean (a log that may
            have lost its end, say from a backup): it learns its own feed from the others before
            it signs (:meth:`Peer.restore`); a log whose tail had to be cut always is.
        cut_damaged_tail: cut a damaged (not merely torn) tail of the log instead of refusing
            it (:func:`~p2p_nertz.logfile.store.open_for_append`); the peer then recovers.
        budget: how many messages each member may send us (:mod:`~p2p_nertz.runtime.guard`).

    Raises:
        ValueError: an unknown strategy or a bad speed.
    """

    def __init__(
        self,
        identity: Identity,
        spec: GameSpec,
        log_path: str | os.PathLike[str],
        *,
        bind: str = DEFAULT_BIND,
        strategy: str | None = None,
        speed: int = 10,
        practice: bool = False,
        hold_ready: int | None = None,
        seed: int | bytes | None = None,
        config: PeerConfig | None = None,
        clock: Clock = trio.current_time,
        on_notice: NoticeCallback | None = None,
        linger: float = LINGER,
        grace: float = 10.0,
        ctx: zmq.Context[zmq.Socket[bytes]] | None = None,
        watchers: Sequence[WatcherAddress] = (),
        recover: bool = False,
        cut_damaged_tail: bool = False,
        budget: SenderBudget | None = None,
    ) -> None:
        self.identity = identity
        self.spec = spec
        self.log_path = Path(log_path)
        self._hold_ready = hold_ready
        rng_seed = seed if seed is not None else derive_seed(b"node-bot", identity.peer_id)
        self._rng = Rng(rng_seed)
        self._bot = _bot_driver(strategy, self._rng, speed, practice)
        self._config = config if config is not None else NODE_CONFIG
        self._clock = clock
        self._on_notice = on_notice
        self._listeners: list[NoticeCallback] = []
        self._linger = linger
        self._mesh = Mesh(
            identity,
            spec.peer_ids,
            bind=bind,
            ctx=ctx,
            watchers=watchers,
            outlet=self._outlet,
            drop_after=self._config.drop_after,
            suspect_after=self._config.suspect_after,
        )
        self._log = _node_log(self.log_path, self._config)
        self._player_lock = PlayerLock.of_seat(spec, identity)
        self._peer: Peer | None = None
        self._lock = trio.Lock()
        # The timer task's wait (None while it runs), its deadline: inputs move it (_apply).
        self._timer: trio.CancelScope | None = None
        self._timer_due: float | None = None
        self._ending = _Ending(grace, provisional_wait=self._config.gone_after)
        self._waits = _Telling()
        self._ran = False
        self._recover = recover
        self._cut_damaged_tail = cut_damaged_tail
        self.restored = False
        """Whether :meth:`run` rebuilt the peer from an existing log."""
        self.started = trio.Event()
        """Set once :meth:`run` has started the peer (:attr:`peer` there); never if it fails."""
        self.guard = _members_guard(spec, identity, budget)
        """What the ROUTER lets through to the peer: members' connections, within a budget."""
        self.refusals = RefusalLog(log)
        """Every message refused (by the guard or the peer), counted by reason; logged at a
        bounded rate."""

    # -- introspection -------------------------------------------------------------------------
    @property
    def peer(self) -> Peer:
        """The peer core (once :meth:`run` has started it).

        Raises:
            RuntimeError: before :meth:`run` created it.
        """
        if self._peer is None:
            raise RuntimeError("the node has not started its peer yet")
        return self._peer

    @property
    def endpoint(self) -> str:
        """The ROUTER's resolved endpoint (after :meth:`bind`).

        Raises:
            RuntimeError: before :meth:`bind`.
        """
        return self._mesh.endpoint

    @property
    def clock(self) -> Clock:
        """The time source the peer is given as ``now`` (for a front end that compares with
        the peer's timers, e.g. :meth:`~p2p_nertz.protocol.peer.Peer.silent_for`)."""
        return self._clock

    @property
    def done(self) -> bool:
        """Whether the game is over (or we left) and all hold our events (or ``grace`` ran out)."""
        return self._ending.done.is_set()

    @property
    def gone(self) -> TableGone | None:
        """Why the node stopped waiting if the table is gone (:meth:`Peer.table_gone`)."""
        return self._ending.gone

    @property
    def dropped(self) -> int:
        """Messages dropped because a member's send queue was full."""
        return self._mesh.dropped

    @property
    def recovery(self) -> Recovery | None:
        """What reopening the log found (once :meth:`run` has opened it)."""
        return self._log.recovery

    @property
    def provisional_wait(self) -> float:
        """How long a game ended on a provisional result waits for the other to come back."""
        return self._ending.provisional_wait

    @provisional_wait.setter
    def provisional_wait(self, seconds: float) -> None:
        self._ending.provisional_wait = seconds

    # -- lifecycle -----------------------------------------------------------------------------
    async def leave(self) -> None:
        """Leave the game cleanly: sign a ``leave``, then stop once the others hold it.

        :meth:`run` returns after every member holds our events (or ``grace`` seconds, and at
        most :data:`LEAVE_GRACE`, whatever the state of the game) and ``linger`` more. Use it
        for Ctrl-C and SIGTERM; cancelling :meth:`run` instead is a crash (the others suspect,
        then drop us, unless we restart from the log).

        Raises:
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            peer = self.peer
            self._ending.leave(self._clock())
            await self._apply(peer.leave(self._clock()))

    async def play(self, move: Move) -> None:
        """Play a move of the local player (a human at the keyboard, or any caller).

        The move takes the same path as a bot's: the peer signs it, and its effects (log
        first, then the sends) are applied before this returns.

        Raises:
            IllegalMoveError: the move is illegal now; nothing changes.
            LocalProtocolError: the round is not in play, the pile is frozen by a claim in the
                air, or we have left the game.
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            peer = self.peer
            if self._ending.leaving:
                raise MoveRefused(f"{move}: we have left the game", MoveAnswer(MoveRefusal.LEFT))
            await self._apply(peer.play(move, self._clock()))

    def add_listener(self, callback: NoticeCallback) -> None:
        """Call ``callback`` too with every notice effect, after ``on_notice`` (same rules:
        it runs with the peer locked and may read it but must not call into it)."""
        self._listeners.append(callback)

    async def abandon(self) -> None:
        """End a game of two whose other member has gone (:meth:`Peer.abandon`).

        A node playing with a bot does this by itself once it may.

        Raises:
            LocalProtocolError: the game does not allow it now (the message says why).
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            await self._apply(self.peer.abandon(self._clock()))

    async def release_ready(self, number: int) -> None:
        """Sign our ``ready`` of round ``number`` now (with ``hold_ready``: the player closed
        the last round's board, or its countdown ended; round 1: the person's page is up).

        Raises:
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            await self._apply(self.peer.release_ready(number, self._clock()))

    def bind(self) -> str:
        """Create and bind the ROUTER (idempotent); return its resolved endpoint.

        Raises:
            TransportBrokenError: the endpoint cannot be bound (port in use, bad address).
        """
        return self._mesh.bind()

    async def run(
        self,
        endpoints: Mapping[PeerId, str],
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> Peer:
        """Play the game until done (see the module docstring); return the peer.

        Binds first if :meth:`bind` was not called. Reports the ROUTER's endpoint through
        ``task_status`` once the peer has started. Always closes the sockets and the log.

        Args:
            endpoints: every other member's ROUTER endpoint (our own entry is ignored).
            task_status: for :meth:`trio.Nursery.start`.

        Raises:
            RuntimeError: when run a second time.
            KeyError: a member has no endpoint.
            LogFormatError: the log belongs to another game or peer, or is damaged.
            BlockingIOError: another process here plays this player in this game (or has the log).
            TransportBrokenError: a socket cannot be bound or connected.
        """
        if self._ran:
            raise RuntimeError("a PeerNode runs once; make a new one to restart")
        self._ran = True
        mesh = self._mesh
        try:
            self._player_lock.acquire()  # (before anything is connected or signed)
            mesh.connect(endpoints)
            recovery = self._log.open(
                self.spec, self.identity.peer_id, cut_damaged_tail=self._cut_damaged_tail
            )
            if not recovery.records:
                book = {**endpoints, self.identity.peer_id: self.endpoint}
                self._log.hold(session_notes(self.spec, book))  # (synced with our join)
            elif not recovery.cut and self._recover and not recovery_unfinished(recovery.records):
                await self._write([LogRecord.note(RECOVERING_NOTE)])
            effects = self._make_peer(recovery)
            async with trio.open_nursery() as nursery:
                mesh.serve_outlets(nursery, self.spec.to_wire())
                async with self._lock:
                    await self._apply(effects)
                assert mesh.router is not None
                nursery.start_soon(self._receive_loop, mesh.router)
                nursery.start_soon(self._timer_loop)
                if self._bot is not None:
                    nursery.start_soon(self._bot_loop)
                self.started.set()
                task_status.started(self.endpoint)
                await self._ending.done.wait()
                await self._write(self._ending.notes())  # (stopped unheard: a recovering note)
                await trio.sleep(self._linger)  # keep acking so the others can finish too
                nursery.cancel_scope.cancel()
            return self.peer
        finally:
            self.refusals.flush(self._clock(), force=True)
            self._log.close()
            self._mesh.close()
            self._player_lock.release()

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        now = self._clock()
        resume = resume_point(recovery, recover=self._recover)
        if resume is not None:
            # A cut tail may have held an event we had sent: learn our feed before signing.
            self._peer, effects = Peer.restore(
                self.identity,
                self.spec,
                resume.wires,
                now,
                self._config,
                reserved=resume.reserved,
                recover=resume.recover,
                debts=resume.debts,
            )
            self.restored = True
            log.info("rebuilt from %s: %d events", self.log_path, len(resume.wires))
            return effects
        self._peer = Peer(self.identity, self.spec, now, self._config)
        if self._hold_ready is not None:  # (a restored peer signs what it had: no board up)
            self._peer.player.ready_through = self._hold_ready
        return self._peer.start(now)

    # -- effects -------------------------------------------------------------------------------
    async def _apply(self, effects: list[Effect]) -> None:
        """Carry out the peer's effects in order; the caller holds the lock."""
        durable: list[LogRecord] = []
        must_sync = False  # whether ``durable`` holds anything but received events
        watched: list[bytes] = []
        watching = self._mesh.watched
        last = effects[-1] if effects else None  # (our feed goes on elsewhere: written, we stop)
        stop = last if isinstance(last, Elsewhere) else None
        for effect in effects if stop is None else effects[:-1]:
            if isinstance(effect, Send):
                if must_sync:
                    await self._write(durable)
                    durable, must_sync = [], False
                # (Received events alone wait for the next write, or the end: the ack of a
                # claim is not held back by its record, see the module docstring.)
                self._send(effect)
                if effect.to is None and watching:
                    watched.append(effect.data)  # our beats tell a spectator what is final
                continue
            record = durable_record(effect)
            if record is not None:
                durable.append(record)
                must_sync = must_sync or record.kind is not RecordKind.RECEIVED_EVENT
                if isinstance(effect, Record) and watching:
                    watched.append(effect.data)
                if not isinstance(effect, Recovered):
                    continue
            self._notice(effect)
        if durable:
            await self._write(durable)
        if stop is not None:
            raise SignedElsewhereError(stop.seq)
        self._mesh.watch(watched)  # durable by now, like everything we send
        self._waits.after_input()
        timer = self._timer
        if timer is not None:
            due = self._waits.due(self.peer.next_deadline())
            if due != self._timer_due:
                # Move the timer's wait, without waking it: after most inputs the next
                # deadline moves later (heard from, sent to), and a wake-up at the old one, to
                # find nothing due, is a task step and a trip through the scheduler (~0.3 ms
                # of CPU on a woken process); an earlier one makes the wait end sooner.
                self._timer_due = due
                timer.deadline = _on_trio_clock(due, self._clock)
        self._check_done()

    def _notice(self, effect: Effect) -> None:
        """Log a notice effect as it deserves, then hand it to the callbacks."""
        if isinstance(effect, Rejected):
            # Counted; logged at a bounded rate (a flood is not a line per message).
            self.refusals.refused(effect.reason, effect.detail, self._clock())
        elif isinstance(effect, (Suspected, OutOfReach)):
            _log_reach(effect, self.spec)
        elif isinstance(effect, (VoteShort, FeedHeld, Owed, DropWaits)):
            log_unmet(effect, self.spec)
        elif not isinstance(effect, Recovered):
            log.debug("%s", effect)
        if self._on_notice is not None:
            self._on_notice(effect)
        for listener in self._listeners:
            listener(effect)

    async def _write(self, records: list[LogRecord]) -> None:
        await self._log.write(records, partial(keep_heard, self._peer, self._clock, self._send))

    def _send(self, effect: Send) -> None:
        self._mesh.send(effect.data, effect.to)

    def _outlet(self, dealer: AsyncSocket) -> Outlet:
        """The outlet of a DEALER (a hook for instrumentation: ``scripts/bench_lan.py``)."""
        return Outlet(dealer)

    def _check_done(self) -> None:
        self._ending.check(self.peer, self._clock())

    # -- tasks ---------------------------------------------------------------------------------
    async def _receive_loop(self, router: AsyncSocket) -> None:
        # Events before beats: a claim queued behind the others' acks is delivered, and acked,
        # before their signatures are checked (at 8 peers a claim's receiver often has six
        # acks ahead of it, ~0.3 ms each). Beats wait in ``beats``, in order, and are fed
        # BEAT_CHUNK at a time, with the socket looked at again in between; the socket is
        # only read while fewer than MAX_BURST wait, so its HWM still bounds what is held.
        # A share beat (deck_reveal, deck_want) is on a turn-up's path, as an event is on a
        # claim's: it goes with the events (docs/shuffle.md §9, session 21: behind the beats,
        # a deck_reveal reached the mover in 66-69 ms at 4 peers, with them in 19-23).
        beats: collections.deque[bytes] = collections.deque()
        while True:
            if beats:
                await trio.lowlevel.checkpoint()  # the bot and the timers get their turn
                first = router.try_recv_multipart()
                batch = [] if first is None else [first]
            else:
                batch = [await router.recv_multipart()]
            while len(batch) + len(beats) < MAX_BURST:
                more = router.try_recv_multipart()
                if more is None:
                    break
                batch.append(more)
            messages = self._admit(batch)
            self._mesh.watch(messages)  # the others' beats and events, for the spectators
            events: list[bytes] = []
            for message in messages:
                beat = looks_like_beat(message) and not looks_like_share_beat(message)
                (beats if beat else events).append(message)
            if not events and not beats:
                continue
            await _acquire(self._lock)  # (the recv above was this task's checkpoint)
            try:
                if events:
                    await self._apply(self.peer.feed_many(events, self._clock()))
                if beats:
                    chunk = [beats.popleft() for _ in range(min(BEAT_CHUNK, len(beats)))]
                    await self._apply(self.peer.feed_many(chunk, self._clock()))
            finally:
                self._lock.release()

    def _admit(self, batch: Sequence[list[bytes]]) -> list[bytes]:
        """What of ``batch`` the guard lets through (the rest logged); the mesh hears from whom."""
        now = self._clock()
        self._mesh.heard({frames[-1] for frames in batch})
        messages, refused = self.guard.admit_many(batch, now)
        for reason, n in refused.items():
            self.refusals.refused(reason, _GUARD_DETAILS[reason], now, n)
        return messages

    async def _timer_loop(self) -> None:
        last_due: float | None = None
        while True:
            deadline = self._waits.due(self.peer.next_deadline())
            wait = math.inf if deadline is None else deadline - self._clock()
            if deadline is not None and deadline == last_due:
                wait = max(wait, _MIN_WAIT)  # a tick left this deadline due: do not spin
            if wait > 0:
                # Until the deadline, which inputs move (:meth:`_apply`) without waking us.
                with trio.CancelScope(deadline=trio.current_time() + wait) as waiting:
                    self._timer, self._timer_due = waiting, deadline
                    await trio.sleep_forever()
                self._timer = None
                deadline = self._waits.due(self.peer.next_deadline())
                if deadline is None or deadline > self._clock():
                    continue  # (a clock other than trio's, a hair behind it)
                await _acquire(self._lock)
            else:
                await self._lock.acquire()  # a checkpoint: this turn of the loop had none
            try:
                last_due = deadline
                if (due := self.peer.next_deadline()) is not None and due <= self._clock():
                    await self._apply(self.peer.tick(self._clock()))  # (else the waits' alone)
                self._waits.tell(self.peer, self._clock(), self._notice)
                self.refusals.flush(self._clock())  # the last summary of a flood that ended
                if self._bot is not None and not self._ending.leaving:
                    abandoned = self._bot.abandon(self.peer, self._clock())
                    if abandoned is not None:
                        await self._apply(abandoned)
                self._check_done()
            finally:
                self._lock.release()

    async def _bot_loop(self) -> None:
        bot = self._bot
        assert bot is not None
        while True:
            await trio.sleep(bot.delay(self._rng))
            await _acquire(self._lock)  # (the sleep was the checkpoint)
            try:
                if self._ending.leaving:
                    return
                peer = self.peer
                move = bot.choose(peer)
                if move is None:
                    continue
                effects = bot.play(peer, move, self._clock())
                if effects is not None:
                    await self._apply(effects)
            finally:
                self._lock.release()


async def serve_peer(
    identity: Identity,
    spec: GameSpec,
    endpoints: Mapping[PeerId, str],
    bind: str,
    log_path: str | os.PathLike[str],
    *,
    strategy: str | None = None,
    speed: int = 10,
    config: PeerConfig | None = None,
    clock: Clock = trio.current_time,
    on_notice: NoticeCallback | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> Peer:
    """Run one peer node until its game is done; return the peer (see :class:`PeerNode`).

    Args:
        identity: this peer's key.
        spec: the game.
        endpoints: every member's ROUTER endpoint (ours is ignored; we bind ``bind``).
        bind: our ROUTER's endpoint.
        log_path: the log file (continued if it holds events: a restart).
        strategy: a bot strategy name, or ``None``.
        speed: the bot's pacing, 1 to 10.
        config: the peer core's timers and limits.
        clock: the time source.
        on_notice: called with every notice effect.
        task_status: reports the bound endpoint to :meth:`trio.Nursery.start`.
    """
    node = PeerNode(
        identity,
        spec,
        log_path,
        bind=bind,
        strategy=strategy,
        speed=speed,
        config=config,
        clock=clock,
        on_notice=on_notice,
    )
    return await node.run(endpoints, task_status=task_status)
