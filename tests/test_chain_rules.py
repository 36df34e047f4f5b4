"""One home for each chain rule: the audit and the feeds refuse the same events.

The chain rules (``protocol/feeds.py``: the next link, clocks above what an event follows or
acknowledges) are checked by two stores: :class:`~p2p_nertz.protocol.feeds.Feeds` (a peer's,
and a spectator's) and the audit's delivery, which keeps its own feeds
(docs/architecture.md, "Why the audit keeps its own feeds"). Real game logs, tampered with
by the author's own key as in the tamper suite: the audit names the event, and a spectator
fed the same logs, on ``Feeds``, refuses that very event and holds the feed up to it.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.logfile import RecordKind
from p2p_nertz.protocol.spectator import Spectator
from tests.audit_helpers import Game, Logs, events_of, played, retimed_below_what_it_saw, rewrite

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
