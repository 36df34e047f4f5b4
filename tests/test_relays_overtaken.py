"""A beat handed on in play that overtakes its head (docs/protocol.md §9.2, *Handed on in
play*: *a beat ahead of its head*; ``protocol/relays.py``).

A relayer forwards the member's beats as it takes them, straight to the voter; the member's
events reach the voter only by gap repair (announced, wanted, answered: two one-way delays
or more later). So a forwarded beat often names a head the voter does not hold yet. It is
new there (the voter took none of the member's since the link failed), and the voter keeps
it as it keeps any early beat (``Finality.early``: one per member, the one of the highest
head), hears the member by it at once, and takes its cover once the head is delivered. This
pins that: a forwarded beat is not lost for coming before its head.

``two_withhold`` seed 416's first withholder as a link (three players, the link from seat 2
to seat 0 failing one way from 6.3 s; ``tests/test_sim_withhold_in_play.py``).
"""

from __future__ import annotations

import dataclasses

import pytest
from builds import need_interpreted

from p2p_nertz.protocol.bodies import Beat
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.sim.collusion import Withholder, game, simulate

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

VOTER, MEMBER = 0, 2


def test_relays_a_handed_on_beat_that_overtakes_its_head_is_taken_once_the_head_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    early: list[tuple[int, int]] = []  # (lamport, head) of the member's beats come early
    taken: list[tuple[int, int]] = []  # ... and of those taken with their head held
    take_beat = Finality.take_beat

    def spy(self: Finality, seat: int, lamport: int, beat: Beat) -> object:
        if self.seat == VOTER and seat == MEMBER:
            held = beat.head_seq <= len(self._feeds[seat])
            (taken if held else early).append((lamport, beat.head_seq))
        return take_beat(self, seat, lamport, beat)

    need_interpreted(
        "spies on Finality.take_beat: a compiled class's methods are read-only",
        "p2p_nertz.protocol.finality",
    )
    monkeypatch.setattr(Finality, "take_beat", spy)
    config, cheats = game("two_withhold", 416, 3, 3)
    config = dataclasses.replace(
        config, faults=dataclasses.replace(config.faults, deck_cheats=()), max_time=120.0
    )
    link = cheats[0]
    assert isinstance(link, Withholder) and (link.seat, link.victim) == (MEMBER, VOTER)
    result = simulate(config, [Withholder(link.seat, link.victim, link.at, None)], links=True)
    assert result.finished and result.violations == []
    voter = result.peers[VOTER]
    assert voter is not None and voter.final.dropped == {}
    # The member's beats reached the voter only handed on, some before their heads; the one
    # kept (the highest head pending) was taken once its head was delivered, the last too.
    assert early
    assert any(e in taken for e in early)
    assert early[-1] in taken and early[-1][1] <= len(voter.events(MEMBER))
