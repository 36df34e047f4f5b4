"""``nertz node``: run one peer of a game on real ZeroMQ sockets until the game is over.

The game is fixed by two files: the player's key (a key file, docs/key-files.md: as
``nertz keygen`` writes it, or the raw 32 bytes of an older key) and the game spec (the bytes of
:meth:`~p2p_nertz.protocol.spec.GameSpec.to_wire`). Every other member's ROUTER endpoint is
given explicitly with ``--peer`` (no broadcast, no discovery). The node binds ``--bind``, plays
with a bot, writes its signed log to ``--log`` and prints the final scores (or JSON lines with
``--json``: one per round, then the final one).

A node that wakes to an empty table (voted out while stopped or asleep, the others gone
home), or hears nobody still in the game for ``3 × --drop-after``, stops waiting: it says why
and exits with status 3 (:data:`~cli.args.EXIT_GONE`, docs/protocol.md §9.9), signing nothing.
One that has heard nobody at all since it started, knowing nothing of its feed past its join,
stops so after ``--drop-after`` with status 5 (:data:`~cli.args.EXIT_UNHEARD`, §9.6): its key
may be playing on another machine. Either is status 0 where the game's end is on its table
(only the others' acks are missing): the game is over, as its log has it.
Unless started ``--fresh`` by the command that made its game and key just now (the bots of
``nertz demo`` and ``play --bots``, cli/bots.py): it then abandons a member silent from the
start.

Ctrl-C or SIGTERM (or SIGHUP, which cli/main.py raises as SIGTERM) leaves the game cleanly
(a signed ``leave`` the others see, waited for at most ``LEAVE_GRACE``, 2 s: a frozen game
does not keep the node running); a second one stops at once. Either way the exit status is
non-zero and there is no traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import trio

from cli.args import (
    EXIT_FAILED,
    EXIT_GONE,
    EXIT_OK,
    EXIT_UNHEARD,
    GoneError,
    bind_endpoint,
    connect_endpoint,
    error_text,
    expected_errors,
    gone_status,
    liveness_from,
    say_if_every_interface,
)
from cli.ended import LEAVE_PENDING, pending_leave, read_ended, say_ended
from cli.files import load_game_spec, load_spec  # (re-exported: the one reader of spec files)
from cli.keyfile import load_identity  # (re-exported: the one reader of key files)
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Effect, OutOfReach, Peer, TableGone
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import ClaimDecided, GameEnded, Phase, RoundScored
from p2p_nertz.protocol.unmet import DropWaits, FeedHeld, Owed, SharesOwed, VoteShort
from p2p_nertz.rules import Outcome
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.signals import as_sent, open_receiver, signal_status
from p2p_nertz.words import counted, plural

__all__ = [
    "EXIT_FAILED",
    "EXIT_GONE",
    "bind_endpoint",
    "connect_endpoint",
    "load_identity",
    "load_game_spec",
    "load_spec",
    "parse_peers",
    "say_gone",
    "say_if_every_interface",
]

_MAX_PEER_LINE = 1024  # characters of a --peers-on-stdin line read at most


def parse_peers(items: list[str], spec: GameSpec, own: PeerId) -> dict[PeerId, str]:
    """Map every other member to its endpoint from ``WHO=ENDPOINT`` items.

    Args:
        items: the ``--peer`` values; WHO is a fingerprint or a seat (from 0, as the table
            and the notation count).
        spec: the game.
        own: our peer id (our own entry may be given; it is ignored).

    Raises:
        NertzError: a malformed item, an unknown member, a repeat, or a member left out.
    """
    endpoints: dict[PeerId, str] = {}
    for item in items:
        who, sep, endpoint = item.partition("=")
        who, endpoint = who.strip(), endpoint.strip()
        if not sep or not who or not endpoint:
            raise NertzError(f"--peer wants WHO=ENDPOINT, not {item!r}")
        try:
            endpoint = connect_endpoint(endpoint)
        except argparse.ArgumentTypeError as exc:
            raise NertzError(f"--peer {item!r}: {exc}") from None
        if who.isdigit():
            seat = int(who)
            if not 0 <= seat < spec.seats:
                raise NertzError(f"--peer {item!r}: no seat {who} (seats 0-{spec.seats - 1})")
            pid = spec.peer_ids[seat]
        else:
            found = [m.peer_id for m in spec.members if m.fingerprint == who.lower()]
            if not found:
                raise NertzError(f"--peer {item!r}: no member has fingerprint {who}")
            pid = found[0]
        if pid in endpoints:
            raise NertzError(f"--peer {item!r}: that member was given twice")
        endpoints[pid] = endpoint
    missing = [
        f"{seat} ({m.fingerprint})"
        for seat, m in enumerate(spec.members)
        if m.peer_id != own and m.peer_id not in endpoints
    ]
    if missing:
        raise NertzError("no --peer for seat " + ", ".join(missing))
    return endpoints


def final_summary(peer: Peer, gone: TableGone | None = None) -> dict[str, Any]:
    """The node's last JSON line; ``gone``: why it stopped waiting, if the table is gone
    (:attr:`PeerNode.gone`)."""
    final = peer.final
    game = final.game
    result = game.result
    return {
        "event": "final",
        "seat": peer.seat,
        "fingerprint": peer.identity.fingerprint,
        "over": final.phase is Phase.OVER,
        "totals": list(game.totals),
        "winners": list(result.winners) if result is not None else [],
        "rounds": len(game.history),
        "digest": final.digest(),
        # An abandon's result the other has not been heard to share (§9.3), or our own leave
        # not final yet: a vote signed without it may still undo it (§9.3, a leave past the
        # cut); ``"leave_pending"`` says which.
        "provisional": final.provisional or pending_leave(peer),
        "leave_pending": pending_leave(peer),
        # The members this node's final fold holds voted out (seats): a member dropped while
        # it was silent may never hear the game's end (``nertz demo`` says so, not "failed").
        "dropped": sorted(final.dropped),
        # Why the node stopped waiting, if nobody still in the game was heard (§9.9): a code
        # ("dropped": voted out while away; "silent": the others left) and the words.
        "gone": None if gone is None else gone.reason.value,
        "why": None if gone is None else gone.why,
        # Whether the game's end is on its table then (only the others' acks missing): the
        # game is over as its log has it, status 0 (``cli.args.gone_status``).
        "ended": None if gone is None else gone.ended,
    }


def say_gone(command: str, gone: TableGone) -> int:
    """The line a node that stopped waiting at an empty table ends with (stderr), and its
    exit status (:func:`~cli.args.gone_status`)."""
    status = gone_status(gone)
    after = (  # (unheard, its log ends noted: a resume learns our feed first, §9.6)
        "resuming on it later learns your events from the others before it signs"
        if status == EXIT_UNHEARD
        else "nothing is left to play"
        if status == EXIT_OK
        else "the log is whole: resuming on it later takes the game up again"
    )
    print(
        f"nertz {command}: {gone.why}. Stopped waiting; nothing was signed for it ({after}).",
        file=sys.stderr,
    )
    return status


def _peer_items(args: argparse.Namespace, node: PeerNode, spec: GameSpec) -> list[str]:
    """``--peer``'s items and, with ``--peers-on-stdin``, those read from standard input after
    saying the endpoint bound (at most one a member, up to an empty line or the end)."""
    items = list(args.peer)
    if args.peers_on_stdin:
        if args.json:
            print(json.dumps({"event": "bound", "endpoint": node.endpoint}), flush=True)
        for _ in spec.peer_ids:
            line = sys.stdin.readline(_MAX_PEER_LINE).strip()
            if not line:
                break
            items.append(line)
    return items


def reach_line(notice: OutOfReach, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """A node's line for an :class:`~p2p_nertz.protocol.reach.OutOfReach` notice (the members
    out of reach leave no majority here, or that is over): its JSON event, its words
    (:func:`~p2p_nertz.ui.view.reach_words`) and its fields. The same for ``node``, ``host``,
    ``join``, ``bot`` and ``resume``."""
    from p2p_nertz.ui.view import reach_words  # (the screens' words: not at every node's start)

    text = " — ".join(reach_words(notice, lambda s: names[s]))
    event = "in_reach" if notice.over else "out_of_reach"
    seats = list(notice.seats)
    return event, text, {"words": text, "seats": seats, "names": [names[s] for s in seats]}


def vote_short_line(notice: VoteShort, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """A node's line for a :class:`~p2p_nertz.protocol.unmet.VoteShort` notice (a vote to drop
    a member stands short of a majority for a while, or no longer does): its JSON event
    (``vote_short``, ``vote_short_over``), its words
    (:func:`~p2p_nertz.ui.view.vote_short_words`) and its fields. The same for ``node``,
    ``host``, ``join``, ``bot`` and ``resume``."""
    from p2p_nertz.ui.view import vote_short_words  # (as reach_line)

    text = " — ".join(vote_short_words(notice, lambda s: names[s]))
    u = notice.unmet
    fields: dict[str, Any] = {
        "words": text,
        "seat": u.seat,
        "name": names[u.seat],
        "reasons": [reason.name.lower() for reason in u.reasons],
        "voters": list(u.voters),
        "voter_names": [names[v] for v in u.voters],
        "votes": len(u.voters),
        "majority": u.majority,
        "members": u.members,
    }
    if notice.ended is None:
        return "vote_short", text, fields
    return "vote_short_over", text, {**fields, "why": notice.ended.value}


def feed_held_line(notice: FeedHeld, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """A node's line for a :class:`~p2p_nertz.protocol.unmet.FeedHeld` notice (a member's
    events wait for events that never came, for a while, or no longer do): its JSON event
    (``held_back``, ``held_back_over``), its words (:func:`~p2p_nertz.ui.view.feed_held_words`)
    and its fields. The same for ``node``, ``host``, ``join``, ``bot`` and ``resume``."""
    from p2p_nertz.ui.view import feed_held_words  # (as reach_line)

    text = " — ".join(feed_held_words(notice, lambda s: names[s]))
    h = notice.held
    fields: dict[str, Any] = {
        "words": text,
        "seat": h.seat,
        "name": names[h.seat],
        "held": h.held,
        "waits": [
            {"seat": f, "name": names[f], "first": first, "last": last}
            for f, first, last in h.waits
        ],
    }
    if notice.ended is None:
        return "held_back", text, fields
    return "held_back_over", text, {**fields, "why": notice.ended.value}


def owed_line(notice: Owed, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """A node's line for an :class:`~p2p_nertz.protocol.unmet.Owed` notice (a member heard
    owes what it alone can give, for a while, or no longer does): its JSON event (``owing``,
    ``owing_over``), its words (:func:`~p2p_nertz.ui.view.owed_notice_words`) and its
    fields. The same for ``node``, ``host``, ``join``, ``bot`` and ``resume``."""
    from p2p_nertz.ui.view import owed_notice_words  # (as reach_line)

    text = " — ".join(owed_notice_words(notice, lambda s: names[s]))
    o = notice.owing
    events = None if o.events is None else {"first": o.events[0], "last": o.events[1]}
    event = o.event
    fields: dict[str, Any] = {
        "words": text,
        "seat": o.seat,
        "name": names[o.seat],
        "events": events,
        "cover": [{"seat": r, "name": names[r], "seq": seq} for r, seq in o.cover],
        "relays": [
            {"seat": r, "name": names[r], "first": first, "last": last}
            for r, first, last in o.relays
        ],
        "phase_event": None
        if event is None
        else {"round": event.number, "phase": event.phase.value},
        "shares": None if o.shares is None else _shares_fields(o.shares),
    }
    if notice.ended is None:
        return "owing", text, fields
    silent = [{"seat": s, "name": names[s]} for s in notice.others]
    return "owing_over", text, {**fields, "why": notice.ended.value, "silent": silent}


def _shares_fields(shares: SharesOwed) -> dict[str, int]:
    """An ``owing`` line's ``shares`` (docs/protocol.md §9.5): the round, and how many of
    each item of its deal the member owes."""
    return {
        "round": shares.number,
        "own": shares.own,
        "partials": shares.partials,
        "answers": shares.answers,
    }


def drop_waits_line(notice: DropWaits, names: list[str]) -> tuple[str, str, dict[str, Any]]:
    """A node's line for a :class:`~p2p_nertz.protocol.unmet.DropWaits` notice (a drop the
    held votes decide has not been final for a while, or waits so no more): its JSON event
    (``drop_waits``, ``drop_waits_over``), its words
    (:func:`~p2p_nertz.ui.view.waits_notice_words`) and its fields: ``on`` names what holds
    it back (``kind`` ``events``: what is known of ``seat``'s feed; ``word``: ``by``'s word on
    ``seat``'s feed; ``vote``: our vote on ``seat``), null for events not held here."""
    from p2p_nertz.protocol.finality import KNOWN, VOTED
    from p2p_nertz.ui.view import waits_notice_words  # (as reach_line)

    text = " — ".join(waits_notice_words(notice, lambda s: names[s]))
    d = notice.pending
    on: dict[str, Any] | None = None
    if d.on is not None:
        by, q = d.on
        kind = "events" if by == KNOWN else "vote" if by == VOTED else "word"
        on = {"kind": kind, "seat": q, "name": names[q]}
        if kind == "word":
            on |= {"by": by, "by_name": names[by]}
    fields: dict[str, Any] = {"words": text, "seat": d.seat, "name": names[d.seat], "on": on}
    if notice.ended is None:
        return "drop_waits", text, fields
    return "drop_waits_over", text, {**fields, "why": notice.ended.value}


def notice_line(
    notice: OutOfReach | VoteShort | FeedHeld | Owed | DropWaits, names: list[str]
) -> tuple[str, str, dict[str, Any]]:
    """The line of a notice of why the table waits (:func:`reach_line`,
    :func:`vote_short_line`, :func:`feed_held_line`, :func:`owed_line`,
    :func:`drop_waits_line`)."""
    if isinstance(notice, OutOfReach):
        return reach_line(notice, names)
    if isinstance(notice, VoteShort):
        return vote_short_line(notice, names)
    if isinstance(notice, Owed):
        return owed_line(notice, names)
    if isinstance(notice, DropWaits):
        return drop_waits_line(notice, names)
    return feed_held_line(notice, names)


def _node_printer(args: argparse.Namespace, names: list[str]) -> Callable[[Effect], None]:
    """What ``nertz node`` prints as the game goes: a line per round scored, the game's end,
    a line when the members out of reach leave no majority here and when that is over, and
    (``--progress``) a line per card to the lake; JSON lines with ``--json``."""

    def on_notice(effect: Effect) -> None:
        if isinstance(effect, (OutOfReach, VoteShort, FeedHeld, Owed, DropWaits)):
            event, text, fields = notice_line(effect, names)
            line = json.dumps({"event": event, **fields}) if args.json else text
            print(line, flush=True)
            return
        if isinstance(effect, ClaimDecided):
            # A card to the lake (--progress: `nertz demo` shows the game's progress by them;
            # opt-in, since a reader that does not drain stdout would stall the node).
            if args.progress and effect.resolution.outcome is not Outcome.LOST:
                seat = effect.resolution.claim.seat
                print(
                    json.dumps({"event": "lake", "round": effect.round, "seat": seat}), flush=True
                )
            return
        if isinstance(effect, GameEnded):
            # The game's end as the final fold has it (again if an abandon's result changes).
            result = effect.result
            if args.json:
                line = json.dumps(
                    {
                        "event": "over",
                        "termination": result.termination.value,
                        "totals": list(result.totals),
                        "winners": list(result.winners),
                    }
                )
            else:
                line = f"game over ({result.termination.value}): totals " + " ".join(
                    map(str, result.totals)
                )
            print(line, flush=True)
            return
        if not isinstance(effect, RoundScored):
            return
        if args.json:
            line = json.dumps(
                {"event": "round", "round": effect.round, "totals": list(effect.totals)}
            )
        else:
            line = f"round {effect.round}: totals " + " ".join(map(str, effect.totals))
        print(line, flush=True)

    return on_notice


def _print_summary(args: argparse.Namespace, spec: GameSpec, summary: dict[str, Any]) -> None:
    """The node's last lines: the final line (``--json``), or the totals, winners and digest."""
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        print(result_lines(summary, [m.name for m in spec.members]))
        print(f"digest: {summary['digest']}")
        if summary["leave_pending"]:
            print(LEAVE_PENDING)
        elif summary["provisional"]:
            print(
                "provisional: the game was abandoned and the other player has not been heard "
                "from since; it may have seen one round more or less scored. Both logs "
                "together decide (nertz audit)."
            )


def result_lines(summary: dict[str, Any], names: list[str]) -> str:
    """The two lines of a node's result (:func:`final_summary`) for a person: the totals
    after the rounds played, and the winners (``nertz node``, ``host``, ``join``, ``bot``,
    ``resume``).

    >>> print(result_lines({"rounds": 1, "totals": [3, -2], "winners": [0]}, ["Ann", "Bob"]))
    final after 1 round: Ann 3  Bob -2
    winner: Ann
    """
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(summary["totals"]))
    winners = summary["winners"]
    who = ", ".join(names[w] for w in winners) or "none"
    return (
        f"final after {counted(summary['rounds'], 'round')}: {totals}\n"
        f"{plural(len(winners), 'winner')}: {who}"
    )


def _cmd_node(args: argparse.Namespace) -> int:
    config = dataclasses.replace(liveness_from(args), fresh=args.fresh)  # (cli/parsers.py)
    identity = load_identity(args.key)
    spec = load_game_spec(args.spec)  # (a member's log too: a bot resumed from its log)
    if identity.peer_id not in spec.peer_ids:
        load_identity(args.key, players=spec.peer_ids)  # (a player's public key: says so)
        raise NertzError(f"key {identity.fingerprint} is not a member of this game")
    if not args.peers_on_stdin:  # (checked before binding; from stdin, after)
        parse_peers(args.peer, spec, identity.peer_id)
    seat = spec.seat_of(identity.peer_id)
    ended = read_ended(args.log, identity, spec)
    if ended is not None and ended.left_round is not None:  # left: no node (cli/ended.py)
        return say_ended("node", args.log, spec, ended, as_json=args.json)
    # (Over: the node runs, as before: it acks the end for members still waiting on us, then
    # prints its final line.)

    on_notice = _node_printer(args, [m.name for m in spec.members])

    node = PeerNode(
        identity,
        spec,
        args.log,
        bind=args.bind,
        strategy=args.bot,
        speed=args.speed,
        practice=args.practice,
        on_notice=on_notice,
        watchers=args.watcher,
        config=config,
    )
    try:
        node.bind()
    except NertzError as exc:
        raise NertzError(str(exc)) from None
    say_if_every_interface("node", args.bind)
    if not args.json:
        print(
            f"seat {seat} ({identity.fingerprint}) on {node.endpoint}, "
            f"game {spec.game_id.hex()[:12]}, log {args.log}",
            flush=True,
        )
    endpoints = parse_peers(_peer_items(args, node, spec), spec, identity.peer_id)
    try:
        peer, signum = trio.run(_run_node_watched, node, endpoints, parent_fd(args))
    except NertzError as exc:
        print(f"nertz node: error: {error_text(exc)}", file=sys.stderr)
        return EXIT_GONE if isinstance(exc, GoneError) else EXIT_FAILED
    except BaseExceptionGroup as group:
        errors = expected_errors(group)
        print(f"nertz node: error: {error_text(errors[0])}", file=sys.stderr)
        return EXIT_GONE if isinstance(errors[0], GoneError) else EXIT_FAILED
    if peer is None:
        print("nertz node: stopped before the game started", file=sys.stderr)
        return signal_status(signum or signal.SIGINT)
    summary = final_summary(peer, node.gone)
    _print_summary(args, spec, summary)
    if signum is not None:
        print(f"nertz node: left the game on signal {signum}", file=sys.stderr)
        return signal_status(signum)
    if node.gone is not None:
        return say_gone("node", node.gone)
    if not summary["over"]:
        print("nertz node: the game did not finish", file=sys.stderr)
        return EXIT_FAILED
    return 0


async def _stop_with(parent: int) -> None:
    await wait_closed(parent)
    raise ParentGone(
        "the command that started it has ended (killed?): stopped with it, signing "
        "nothing more; its log is whole (resuming on it takes the game up again)"
    )


#: How long a recovery may take before the command says whom it waits for.
RECOVERY_QUIET = 1.0


async def watch_recovery(
    node: PeerNode, names: list[str], say: Callable[[tuple[int, ...]], None] | None = None
) -> None:
    """While the peer restored from a cut log recovers its own events, tell ``say`` whom it
    waits for (seats), and stop the command with a clear error (:class:`GoneError`, status 3)
    if every one of them has been silent for the drop timeout: it must not sign anything (the
    seq may be one it used), so waiting longer cannot help. Returns at once for a peer that
    does not recover."""
    while True:
        try:
            peer = node.peer
        except RuntimeError:
            await trio.sleep(0.05)
            continue
        break
    started = node.clock()
    shown: tuple[int, ...] | None = None
    while peer.recovering:
        now = node.clock()
        waiting = peer.awaiting()
        if say is not None and waiting != shown and now >= started + RECOVERY_QUIET:
            shown = waiting
            say(waiting)
        if peer.recovery_hopeless(now):
            if say is not None and waiting != shown:
                # Whom we waited for is said before we give up, however soon that came (the
                # silence is counted from before this watch: a loaded machine reached the end
                # first, and the waiting line was never said).
                say(waiting)
            who = ", ".join(names[s] for s in waiting)
            raise GoneError(
                f"cannot recover our own events: {who} silent for "
                f"{peer.config.drop_after:g} s and may hold events we signed. Nothing was "
                "signed: resume again if they are still playing (a game they have finished "
                "ended without this log's last events)"
            )
        await trio.sleep(0.1)


async def _run_node_watched(
    node: PeerNode, endpoints: dict[PeerId, str], parent: int | None = None
) -> tuple[Peer | None, int | None]:
    """:func:`run_node`, stopped with :class:`GoneError` if its log's tail was cut and no
    member answers the recovery (:func:`watch_recovery`): ``nertz node`` on a torn log."""
    names = [m.name for m in node.spec.members]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_recovery, node, names)
        result = await run_node(node, endpoints, parent)
        nursery.cancel_scope.cancel()
        return result


class ParentGone(GoneError):
    """The command that started this node (``--stop-with-stdin``) has ended without stopping
    it: killed (SIGKILL, the kernel out of memory) or crashed. The node stops at once, as its
    machine would have, signing nothing more (no ``leave``: its log stays resumable, and
    ``nertz resume`` of the person's log starts it again from there)."""


def parent_fd(args: argparse.Namespace) -> int | None:
    """Standard input's descriptor if ``--stop-with-stdin`` was given (``nertz node``,
    ``nertz bot``), else ``None``."""
    return sys.stdin.fileno() if getattr(args, "stop_with_stdin", False) else None


async def wait_closed(fd: int) -> None:
    """Return once the pipe ``fd`` reads its end: every writer has closed it, which the
    kernel does for a process however it ends. The command that starts a bot holds the
    other end and writes nothing more after the peers' endpoints, so what comes is the end
    (anything else is read and ignored). What trio cannot wait for (a file, ``/dev/null``, a
    pipe where the loop polls sockets only) is read in a thread."""
    while True:
        try:
            data = await _read_some(fd)
        except BlockingIOError:  # (someone else read it first)
            continue
        except OSError:  # (closed under us: as good as the end)
            return
        if not data:
            return


async def _read_some(fd: int) -> bytes:
    try:
        await trio.lowlevel.wait_readable(fd)
    except OSError:  # (not pollable here: a thread waits instead)
        return await trio.to_thread.run_sync(os.read, fd, 4096, abandon_on_cancel=True)
    return os.read(fd, 4096)


async def run_node(
    node: PeerNode, endpoints: dict[PeerId, str], parent: int | None = None
) -> tuple[Peer | None, int | None]:
    """Run the node; on the first SIGINT/SIGTERM leave cleanly, on the second stop at once.

    Args:
        node: the node.
        endpoints: the other members' endpoints.
        parent: a pipe whose end means the command that started this node is gone
            (:func:`parent_fd`): the node stops at once, without a ``leave``.

    Returns:
        The peer (``None`` if stopped before it started) and the signal that stopped it.

    Raises:
        ParentGone: ``parent`` reached its end.
    """
    received: list[int] = []
    result: list[Peer] = []
    with open_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def play() -> None:
                result.append(await node.run(endpoints))
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                async for signum in signals:
                    received.append(as_sent(signum))
                    if len(received) > 1:
                        nursery.cancel_scope.cancel()
                        return
                    try:
                        await node.leave()
                    except RuntimeError:  # the peer has not started yet: just stop
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(play)
            nursery.start_soon(watch)
            if parent is not None:
                nursery.start_soon(_stop_with, parent)
    signum = received[0] if received else None
    if result:
        return result[0], signum
    try:
        return node.peer, signum
    except RuntimeError:
        return None, signum
