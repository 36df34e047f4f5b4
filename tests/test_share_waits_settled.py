""":class:`~p2p_nertz.protocol.share_waits.ShareWaits` walks no position that owes nothing
again while what could make it owe stays (the members gone, the complaints, the keys, the
store): at every ask of a simulated shuffle game where a member dies for good and another
withholds its partial shares for it, what it finds is what its slow twin finds, the same waits
walking every position in flight as before."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builds import need_interpreted

from p2p_nertz.protocol.share_waits import ShareWaits
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.network import Crash, Simulation


@pytest.mark.slow
def test_share_waits_skip_only_what_the_walk_of_every_position_finds_owes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain: Any = ShareWaits._shares
    seen = {"asks": 0, "skipped": 0, "owed": 0}

    def shares(self: ShareWaits, *args: Any, store: Any) -> None:
        # The slow twin: the same waits with no position settled, so it walks them all.
        *given, late = args
        twin = copy.copy(self)
        twin._since, twin._gone = list(self._since), dict(self._gone)
        twin._settled, twin._reads = set(), ()
        walked: list[Any] = []
        plain(twin, *given, walked, store=store)
        seen["skipped"] += len(self._settled)
        before = len(late)
        plain(self, *args, store=store)
        assert late[before:] == walked
        seen["asks"] += 1
        seen["owed"] += bool(walked)

    need_interpreted(
        "replaces ShareWaits._shares: a compiled class's methods are read-only",
        "p2p_nertz.protocol.share_waits",
    )
    monkeypatch.setattr(ShareWaits, "_shares", shares)
    config = SimConfig(
        players=3,
        seed=1,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=1),
        peer=QUICK_TIMERS,
        faults=Faults(
            deck_cheats=(DeckCheat(2, DeckCheatKind.WITHHOLD_PARTIAL),),
            crashes=(Crash(0, 4.0, None),),
        ),
        max_time=200.0,
    )
    result = Simulation(config).run()
    assert result.finished
    # The case is built: a member gone, partials owed past their time (the culprit voted out
    # for them), and positions settled meanwhile.
    honest = result.peers[1]
    assert honest is not None and {0, 2} <= honest.final.dropped.keys()
    assert seen["asks"] > 100 and seen["owed"] > 0 and seen["skipped"] > 0
