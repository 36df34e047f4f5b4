"""Whether a log's game is done for its player: it signed a ``leave``, or the game is over.

``nertz resume LOG`` and ``nertz node --log LOG`` on such a log start no node and no table
(docs/protocol.md §9.3: a member that left cannot rejoin and signs nothing more; a game over
has nothing left to play): they say so in one line, with the score as the log knows it and the
``nertz audit`` command, and exit with :data:`~cli.args.EXIT_LEFT` (left) or 0 (over).

The log is read back by :meth:`Peer.restore`, the node's own restore path, offline: nothing is
sent, nothing is written, and the effects it returns are dropped.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from cli.args import EXIT_LEFT, EXIT_OK
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile import Record as LogRecord
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase, leave_pending
from p2p_nertz.words import counted

_EVENTS = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)

#: What a node, the table and ``nertz resume`` say of our own leave not final yet
#: (:func:`pending_leave`, §9.3).
LEAVE_PENDING = (
    "provisional: you left, and the others have not been heard holding your leave; a vote to "
    "drop you that one of them signed without it may still undo it (you would then forfeit "
    "the round, not the game). Every log together decides (nertz audit)."
)


def pending_leave(peer: Peer) -> bool:
    """Whether ``peer``'s own ``leave`` is held and not final yet, so that what it decided
    (the game's end at two players, its forfeit) is provisional
    (:func:`~p2p_nertz.protocol.state.leave_pending`, docs/protocol.md §9.3)."""
    return leave_pending(peer.final, peer.tentative, peer.seat)


@dataclass(frozen=True, slots=True)
class Ended:
    """A game its log's player is done with, and the score as the log knows it."""

    left_round: int | None
    """The round we left in (from 1), or ``None``: we did not leave, the game is over."""
    leave_seq: int
    """The seq of our ``leave`` in our feed (0 if we did not leave)."""
    rounds: int
    """Rounds scored, as the log's fold has them (the table's, not only the final)."""
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    over: bool
    """Whether the game is over on the table (the log's fold)."""
    final: bool
    """Whether the log alone shows the end final (the others' acks of it are rarely logged)."""
    leave_pending: bool = False
    """Whether the log alone does not show our leave final (:func:`pending_leave`): what
    it decided is provisional."""


def ended_game(
    identity: Identity, spec: GameSpec, records: list[LogRecord], *, over: bool = True
) -> Ended | None:
    """What ``records`` (a whole log of ``identity`` in ``spec``'s game) say of a game done
    for us, or ``None``: the game goes on for us (or the log cannot tell; the node then reads
    it as it always does and reports any problem itself). ``over``: look for a game over too
    (the log read back whole); without it, only for a ``leave`` of ours, which reads our own
    events alone unless it finds one (a node about to start reads the log back itself)."""
    leave = _own_leave(records)
    if leave is None and not over:
        return None
    wires = [r.data for r in records if r.kind in _EVENTS]
    try:
        peer, _ = Peer.restore(identity, spec, wires, 0.0)
        # The table's fold: a restored peer has heard no beat yet, so its final fold is short
        # of an end the others' acks made final (acks are in no log).
        table = peer.tentative
        if leave is None and table.phase is not Phase.OVER:
            return None
        left_round = None
        if leave is not None:
            # The rounds scored when we signed it, as our log then held them.
            upto = [r.data for r in records[: leave[0] + 1] if r.kind in _EVENTS]
            before, _ = Peer.restore(identity, spec, upto, 0.0)
            left_round = len(before.tentative.game.history) + 1
    except (NertzError, ValueError):
        return None
    result = table.game.result
    return Ended(
        left_round=left_round,
        leave_seq=0 if leave is None else leave[1],
        rounds=len(table.game.history),
        totals=tuple(table.game.totals),
        winners=tuple(result.winners) if result is not None else (),
        over=table.phase is Phase.OVER,
        final=peer.final.phase is Phase.OVER,
        leave_pending=pending_leave(peer),
    )


def _own_leave(records: list[LogRecord]) -> tuple[int, int] | None:
    """Where our ``leave`` is in ``records`` (its index, its seq), or ``None``: none."""
    for index, record in enumerate(records):
        if record.kind is RecordKind.SENT_EVENT:
            try:
                message = decode_message(record.data)
            except (NertzError, ValueError):
                continue  # (the node's read back says what is wrong with it)
            if message.kind is Kind.LEAVE:
                return index, message.seq
    return None


def read_ended(path: Path, identity: Identity, spec: GameSpec) -> Ended | None:
    """:func:`ended_game` of the log at ``path``, a leave only (a node on a game over runs, to
    ack the end); ``None`` if there is no log, or it is not whole (the node's own reading of
    it says what is wrong, or recovers its tail)."""
    try:
        with read_log(path) as reader:
            records = list(reader)
            header = reader.header
            summary = reader.summary()
    except (OSError, NertzError):
        return None
    if header is None or summary.fatal is not None or summary.problems or summary.tail_bytes:
        return None
    if header.peer_id != identity.peer_id or header.game_id != spec.game_id:
        return None
    return ended_game(identity, spec, records, over=False)


def say_ended(command: str, path: Path, spec: GameSpec, ended: Ended, *, as_json: bool) -> int:
    """Say that the game of the log at ``path`` is done for us (one line; with ``--json`` one
    JSON line), with the score and how to check it; the exit status."""

    names = [m.name for m in spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(ended.totals))
    audit = f"nertz audit {shlex.quote(str(path.parent))}/*.log"
    if ended.left_round is not None:
        what = f"you left this game in round {ended.left_round} and cannot rejoin"
        status = EXIT_LEFT
    else:
        what = "this game is over" + ("" if ended.final else " (as this log's table has it)")
        status = EXIT_OK
    winners = ", ".join(names[w] for w in ended.winners)
    score = f"after {counted(ended.rounds, 'round')}: {totals}"
    score += f", won by {winners}" if winners else ""
    if as_json:
        line = {
            "event": "ended",
            "left": ended.left_round is not None,
            "game_id": spec.game_id.hex(),
            "log": str(path),
            "round": ended.left_round,
            "seq": ended.leave_seq,
            "over": ended.over,
            "final": ended.final,
            "rounds": ended.rounds,
            "totals": list(ended.totals),
            "winners": list(ended.winners),
            "provisional": ended.leave_pending,
        }
        print(json.dumps(line), flush=True)
    else:
        said = f"nertz {command}: {what}; {score}. Nothing was started. Check it: {audit}"
        print(said + (f" ({LEAVE_PENDING})" if ended.leave_pending else ""))
    sys.stdout.flush()
    return status
