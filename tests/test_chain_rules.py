"""One home for each chain rule: the audit and the feeds refuse the same events.

The chain rules (``protocol/feeds.py``: the next link, clocks above what an event follows or
acknowledges) are checked by two stores: :class:`~p2p_nertz.protocol.feeds.Feeds` (a peer's,
and a spectator's) and the audit's delivery, which keeps its own feeds
(docs/architecture.md, "Why the audit keeps its own feeds"). Real game logs, tampered with
by the author's own key as in the tamper suite: the audit names the event, and a spectator
fed the same logs, on ``Feeds``, refuses that very event and holds the feed up to it.
"""

from __future__ import annotations

from typing import Any

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.protocol.bodies import Leave
from p2p_nertz.protocol.envelope import Message, decode_message
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.protocol.state import GameState
from p2p_nertz.sim.logfiles import log_file
from tests.audit_helpers import (
    Game,
    Logs,
    append_event,
    events_of,
    played,
    retimed_below_what_it_saw,
    rewrite,
    sign_like,
)

_EVENTS = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)


@pytest.fixture
def game() -> Game:
    return played()


def _watched(game: Game, logs: Logs) -> Spectator:
    """A spectator fed every event of every log."""
    spectator = Spectator(game.spec)
    for log in logs:
        for record in log:
            if record.kind in _EVENTS:
                spectator.feed(record.data)
    return spectator


def _named(game: Game, logs: Logs, kind: FindingKind) -> list[tuple[int | None, int | None]]:
    return [(v.seat, v.seq) for v in game.audit(logs).violations if v.kind is kind]


def test_chain_rules_untouched_logs_pass_both(game: Game) -> None:
    spectator = _watched(game, game.logs)
    assert spectator.rejected == 0
    assert all(
        len(spectator.events(seat)) == len(events_of(game.logs, seat, game.spec))
        for seat in range(game.spec.seats)
    )


def test_chain_rules_a_broken_link_is_refused_by_both(game: Game) -> None:
    logs = game.copy()
    event = events_of(logs, 0, game.spec)[30]
    rewrite(game, logs, 0, event.seq, lambda m: {"prev": bytes(32)}, follow=True)
    assert _named(game, logs, FindingKind.BROKEN_CHAIN) == [(0, event.seq)]
    spectator = _watched(game, logs)
    assert len(spectator.events(0)) == event.seq - 1 and spectator.rejected > 0


def test_chain_rules_a_clock_below_an_acknowledged_event_is_refused_by_both(game: Game) -> None:
    logs = game.copy()
    event = retimed_below_what_it_saw(game, logs)
    assert _named(game, logs, FindingKind.CLOCK_BELOW_ACK)[0] == (1, event.seq)
    spectator = _watched(game, logs)
    assert len(spectator.events(1)) == event.seq - 1 and spectator.rejected > 0


def _own_ack_ahead(message: Message) -> dict[str, Any]:
    """Seat 0's ``message`` with its frontier naming its own event ``seq`` (the lie fuzzer's
    ``frontier_ahead`` on the author's own entry) in place of ``seq - 1``."""
    frontier = message.body[0]  # type: ignore[index]  # (the frontier: [seqs, ids])
    seqs = list(frontier[0])
    seqs[0] = message.seq
    return {"body": [[seqs, list(frontier[1])], *message.body[1:]]}  # type: ignore[index]


def _named_top(game: Game, logs: Logs, event: Message) -> int:
    """The latest time of the events ``event``'s frontier names (it and they in ``logs``)."""
    frontier = event.body[0][0]  # type: ignore[index]  # (the seqs: [seqs, ids])
    feeds = [events_of(logs, q, game.spec) for q in range(game.spec.seats)]
    return max(feeds[q][f - 1].lamport for q, f in enumerate(frontier) if f)


def _counted(state: GameState, seat: int) -> int:
    """The last of ``seat``'s events ``state`` counted."""
    return max((seq for seq, _ in state.counted_ids.items(seat)), default=0)


@pytest.mark.parametrize(
    "refused",
    ["own_ack_early", "own_ack_late", "clock_below_ack", "clock_along_feed", "clock_jump"],
)
def test_chain_rules_a_refused_link_counts_for_neither(game: Game, refused: str) -> None:
    # An event the chain rule refuses is never delivered by a peer, nor any later event of
    # its feed (they follow it): the audit folds neither, as the spectator (session 39; lie
    # fuzzer readmit seeds 28 and 112: a liar's withdrawals after such an event, which only
    # its own log held, moved a drop in the audit alone). Its frontier naming its own seq
    # (the fuzzer's ``frontier_ahead`` on the author's entry), early in play or among the
    # feed's last events; its clock below an event it acknowledges, or not above the
    # author's event before it (the fuzzer's ``lamport_back``); or leaping more than 2^32
    # past the events it names (the fuzzer's ``lamport_leap``: the audit folded it and what
    # followed until session 40).
    logs = game.copy()
    if refused == "clock_jump":
        seat, kind = 0, FindingKind.CLOCK_JUMP
        event = events_of(logs, seat, game.spec)[30]
        leap = {"lamport": _named_top(game, logs, event) + 2 + MAX_CLOCK_JUMP}
        rewrite(game, logs, seat, event.seq, lambda m: leap, follow=True)
    elif refused == "clock_below_ack":
        seat, kind = 1, FindingKind.CLOCK_BELOW_ACK
        event = retimed_below_what_it_saw(game, logs, seat)
    elif refused == "clock_along_feed":
        seat, kind = 0, FindingKind.LAMPORT_ORDER
        feed = events_of(logs, seat, game.spec)
        event, before = feed[30], feed[29]
        rewrite(game, logs, seat, event.seq, lambda m: {"lamport": before.lamport}, follow=True)
    else:
        seat, kind = 0, FindingKind.BROKEN_CHAIN
        feed = events_of(logs, seat, game.spec)
        event = feed[-4] if refused == "own_ack_late" else feed[30]
        rewrite(game, logs, seat, event.seq, _own_ack_ahead, follow=True)
    report = game.audit(logs)
    assert (seat, event.seq) in [(v.seat, v.seq) for v in report.violations if v.kind is kind]
    spectator = _watched(game, logs)
    assert len(spectator.events(seat)) == event.seq - 1
    assert report.state is not None
    assert _counted(report.state, seat) == _counted(spectator.tentative, seat) < event.seq


def _step_and_follower(game: Game, over: int) -> tuple[Logs, Message, Message]:
    """Seat 0's event ``step``, appended, timed ``MAX_CLOCK_JUMP`` past every event (it
    names them all: no leap), and seat 1's ``follower`` naming it, timed ``over`` past it:
    more than 2^32 past every event but ``step``. Seat 2's log alone, holding ``follower``
    first (its peer received it before ``step``), then ``step``."""
    logs = game.copy()
    last = max(m.lamport for q in range(3) for m in events_of(logs, q, game.spec))
    wire = append_event(game, logs, 0, Leave(()), to=[0])
    step = decode_message(
        rewrite(
            game, logs, 0, decode_message(wire).seq, lambda m: {"lamport": last + MAX_CLOCK_JUMP}
        )
    )
    wire = append_event(game, logs, 1, Leave(()), to=[1])
    follower = decode_message(wire)
    follower = decode_message(
        rewrite(game, logs, 1, follower.seq, lambda m: {"lamport": step.lamport + over})
    )
    logs[2] += [Record.received_event(follower.wire), Record.received_event(step.wire)]
    return [logs[2]], step, follower


@pytest.mark.parametrize(
    ("over", "taken"), [(1 + MAX_CLOCK_JUMP, True), (2 + MAX_CLOCK_JUMP, False)]
)
@pytest.mark.parametrize("first", ["follower", "step"])
def test_chain_rules_a_leap_is_judged_from_every_event_it_names(
    game: Game, over: int, taken: bool, first: str
) -> None:
    # A peer judges a leap when the event's causal past is held (Feeds.chain_problem); the
    # audit reads an event as its log holds it, maybe before an event it names: an event
    # leaping past what was read so far waits for what it names (else it was refused for
    # the order of a log: an honest event after a liar's step within the bound). In either
    # order, the follower is taken up to the bound from the step it names, and refused past.
    one, step, follower = _step_and_follower(game, over)
    if first == "step":
        one[0][-2:] = [one[0][-1], one[0][-2]]
    report = game.audit(files=[log_file(game.spec, 2, one[0])])
    jumps = [(v.seat, v.seq) for v in report.violations if v.kind is FindingKind.CLOCK_JUMP]
    assert jumps == ([] if taken else [(1, follower.seq)])
    spectator = _watched(game, one)
    assert len(spectator.events(0)) == step.seq
    assert len(spectator.events(1)) == follower.seq - (not taken)
    assert report.state is not None
    assert _counted(report.state, 1) == _counted(spectator.tentative, 1)


def test_chain_rules_an_event_naming_a_forked_event_leaps_from_the_version_it_names(
    game: Game,
) -> None:
    # Seat 0 signs its last event in two versions: the step (at the bound past what it names,
    # taken) to seat 1, another at the next tick to seat 2; seat 1 names the step, timed two
    # above it. The audit reads both versions (an equivocation) and judges seat 1's event
    # from the version its frontier names by id, the step: no leap. (It left the forked
    # entry out, and refused the event every honest peer took that held the step or did not
    # yet know the fork, until session 40's fuzzer ``brink_fork`` found it.)
    _, step, follower = _step_and_follower(game, 2)
    other = sign_like(game.identities[0], step, lamport=step.lamport - MAX_CLOCK_JUMP + 1)
    logs = game.copy()
    logs[0].append(Record.sent_event(step.wire))
    logs[1] += [Record.received_event(step.wire), Record.sent_event(follower.wire)]
    logs[2] += [Record.received_event(other), Record.received_event(follower.wire)]
    kinds = {(v.kind, v.seat) for v in game.audit(logs).violations}
    assert (FindingKind.EQUIVOCATION, 0) in kinds
    assert (FindingKind.CLOCK_JUMP, 1) not in kinds
