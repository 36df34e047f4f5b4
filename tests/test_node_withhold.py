"""A member that sends one member nothing of its own, on real nodes (session 25).

The simulator's case (``tests/test_sim_two_cheaters.py``, docs/protocol.md §13 *A member
that sends one member nothing of its own*) among real processes (:mod:`hostile_helpers`,
attack ``withhold_one``): three members; mid-round the hostile one (the last seat) stops
sending seat 0 anything of its own and talks to seat 1 as usual, which relays its events to
seat 0. Its beats reach seat 0 only as seat 1 relays them at its game's end (last_words):
before that relay (session 25, load about 20) seat 1 ended the game (``over``) and seat 0's
node stopped with its game not over, in another state (digests differ). Each
direction of a pair is its own connection in the mesh (§4.7), so a link failing one way
alone is the same case without a cheater.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_helpers import run_game

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

GAME_TIMEOUT = 120.0


def test_a_member_withholding_from_one_member_lets_every_honest_member_end_alike(
    tmp_path: Path,
) -> None:
    outcome = run_game("withhold_one", 3, 1, tmp_path, timeout=GAME_TIMEOUT)
    for honest in outcome.honest:
        assert not honest.traceback, honest.stderr
    # The other honest member ends the game: the withholder talks to it.
    assert outcome.honest[1].digest is not None
    # What must hold: the member withheld from ends the same game.
    assert outcome.agreed
    assert outcome.honest[0].digest == outcome.audit_digest
