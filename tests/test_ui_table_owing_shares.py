"""A shuffle game's member that owes its shares is told before the vote (session 40).

A member heard but not sending its share of a position turned up (a shuffle game,
docs/shuffle.md §10.4) is voted out *withheld* after ``phase_timeout``; until session 40 the
table said nothing of it before that vote (the notices of session 39 read the stall records
and the phase's wait only). Now :meth:`TableWaits.owing
<p2p_nertz.protocol.table_waits.TableWaits.owing>` reads the share waits too
(:meth:`ShareWaits.owing <p2p_nertz.protocol.share_waits.ShareWaits.owing>`: the same items and
times as the vote), so once it has waited :data:`UNMET_AFTER` the node's teller tells it and
the table shows the row: "the table waits on p2, heard but not sending its shares of round 1".
The honest members then vote it out (told ``dropped``; at two players the one left abandons,
told ``over``).

The simulator's ``withhold`` cheat (:class:`~p2p_nertz.sim.cheats.DeckCheatKind`: no
``deck_reveal`` of its own after the deal), the last seat, a phase timer of 20 s. Each game
2-6 CPU-s. At two players and at three: the two ends (the one left abandons; the others vote
it out). Four and five players (25 of the 31 CPU-s) guarded nothing more: with the share rows
undone (``TableWaits._shares``) every size fails alike, and with the debt's excuse undone in
the rows and in the vote (``Debtors.excuse``: tests/test_membership_debtors.py) none does.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.unmet import UNMET_AFTER, Owed, OwedEnd, UnmetTeller
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, SimConfig, Simulation
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import owed_words

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)

TIMEOUT = 20.0  # (the phase timer: well past the teller's while)


class _Watched(Simulation):
    """A simulation whose honest members are read as the node and the table read them, every
    tenth of a second of simulated time (as ``tests/test_ui_table_owing.py``'s watch)."""

    def __init__(self, config: SimConfig, honest: list[int]) -> None:
        super().__init__(config)
        self.honest, self.now = honest, 0.0
        self.told: list[tuple[float, int, Owed]] = []
        self.rows: dict[int, set[str]] = {s: set() for s in honest}
        self._tellers = {s: UnmetTeller() for s in honest}
        names = tuple(m.name for m in self.spec.members)
        self._trackers = {s: Tracker(names, s) for s in honest}
        self._last = -1.0

    def _happen(self, kind: int, seat: int, data: bytes, now: float, plan: dict) -> None:  # type: ignore[type-arg]
        super()._happen(kind, seat, data, now, plan)
        self.now = now
        if now >= self._last + 0.1:
            self.read(now)

    def read(self, now: float) -> None:
        """Read every honest member now (and once more at the end of a run)."""
        self._last = now
        for s in self.honest:
            peer = self.peers[s]
            assert peer is not None
            told = self._tellers[s].tell(peer, now)
            self.told += [(now, s, n) for n in told if isinstance(n, Owed)]
            self.rows[s] |= set(self._trackers[s].view(peer, now=now).waits)

    def of(self, seat: int) -> list[tuple[float, Owed]]:
        return [(t, n) for t, s, n in self.told if s == seat]


def _game(players: int, seed: int) -> _Watched:
    cheat = DeckCheat(players - 1, DeckCheatKind.WITHHOLD)
    config = SimConfig(
        players=players,
        seed=seed,
        deal=Deal.SHUFFLE,
        faults=Faults(deck_cheats=(cheat,)),
        peer=dataclasses.replace(QUICK_TIMERS, phase_timeout=TIMEOUT),
    )
    return _Watched(config, list(range(players - 1)))


def _row(sim: _Watched, owed: Owed) -> str:
    (row,) = owed_words([owed.owing], lambda s: sim.spec.members[s].name)
    return row


@pytest.mark.parametrize("players", [2, 3])
def test_owing_shares_are_told_before_the_vote_and_ended_dropped(players: int) -> None:
    # (At two the vote makes it count as gone and the one left abandons, the round void:
    # docs/shuffle.md's table of faults.)
    sim = _game(players, 0)
    cheater = players - 1
    result = sim.run()
    sim.read(sim.now)  # (the end of the wait, told at the game's end)
    assert result.finished
    for seat in sim.honest:
        peer = result.peers[seat]
        assert peer is not None and cheater in peer.final.dropped
        (told_at, told), (_, ended) = sim.of(seat)
        owing = told.owing
        assert told.ended is None and owing.seat == cheater
        assert owing.shares is not None and owing.shares.own >= 1
        assert owing.events is None and owing.event is None  # (a row of its own)
        # Told once it waited the while, before the vote (the share wait's timer).
        assert owing.since + UNMET_AFTER <= told_at < owing.since + TIMEOUT
        assert ended.ended in (OwedEnd.DROPPED, OwedEnd.OVER) and ended.owing == owing
        name = sim.spec.members[cheater].name
        row = _row(sim, told)
        assert row == (
            f"the table waits on {name}, heard but not sending its shares of round "
            f"{owing.shares.number}"
        )
        assert row in sim.rows[seat]


def test_owing_shares_an_honest_shuffle_game_tells_nothing() -> None:
    # The same game, nobody cheating (and PeerConfig's own timers): no share is owed long.
    config = SimConfig(players=3, seed=0, deal=Deal.SHUFFLE, peer=PeerConfig())
    sim = _Watched(config, [0, 1, 2])
    result = sim.run()
    assert result.finished
    assert sim.told == []
