"""A test's aim (:class:`~p2p_nertz.testing.silences.SilenceAim`) governs the abandon too, the
other decision a node times on a silence (session 44): a real-node test that aims its node's
silence votes at the member it stopped must not see that node abandon another member a loaded
machine starved, and must see it abandon the one it stopped.

Two cores over the in-memory pump of ``tests/test_peer_leave.py``; seat 1 goes away for good,
and seat 0 listens for 40 s (past ``drop_after``, 30 s) before it is asked. Before session 44
``Membership.gone_for`` read the silence timer itself: the aim did not reach an abandon, and an
unaimed member was abandoned as on the honest timer. Had it gone through the seam's "never"
(``inf``), the abandon answer's seconds would have been infinite, and the table's words for
them raise ``OverflowError`` (``math.ceil``): asserted here on the words a person reads.
"""

from __future__ import annotations

import math

import pytest
from test_peer_leave import _pair, _pump, _ticks

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.local import Refusal
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.testing.silences import SilenceAim
from p2p_nertz.ui.refusals import abandon_words
from p2p_nertz.ui.view import Gone


def _gone_for_40_s() -> tuple[list[Peer], SilenceAim]:
    """Two cores in play, seat 0's silences aimed (at nobody yet), seat 1 silent from 2 s to
    41 s while seat 0 ticks (listening without a break)."""
    peers = _pair()
    aim = SilenceAim(peers[0]._membership)
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 4)
    for second in range(3, 42):
        peers[0].tick(float(second))
    return peers, aim


def test_an_unaimed_silence_is_no_abandon_and_its_answer_is_said_in_finite_seconds() -> None:
    peers, _ = _gone_for_40_s()
    peer = peers[0]
    answer = peer.abandon_answer(41.0)
    assert answer.refusal is Refusal.HEARD and answer.partner == 1
    drop_after = peer.config.drop_after
    # Counted as heard when asked: gone drop_after from now, never yet.
    assert math.isfinite(answer.silent) and math.isfinite(answer.wait)
    assert answer.wait == pytest.approx(drop_after)
    # The words a person reads, as the table's key and its refusal say them (no OverflowError).
    said = abandon_words(answer, lambda s: f"p{s}")
    assert said == f"p1 was heard lately; you can abandon in {math.ceil(drop_after)} s"
    waiting = Gone(1, "p1", answer.silent, answer.wait).waiting()
    assert waiting is not None and waiting.endswith(f"you can abandon in {math.ceil(drop_after)} s")
    with pytest.raises(LocalProtocolError, match="silence"):
        peer.abandon(41.0)
    assert peer.final.phase is not Phase.OVER


def test_an_aimed_silence_is_abandoned_as_the_core_timer_says() -> None:
    peers, aim = _gone_for_40_s()
    peer = peers[0]
    aim.at({1})  # (the test's signal: seat 1's silence is its own)
    answer = peer.abandon_answer(41.0)
    assert answer.why is None and answer.partner == 1 and answer.wait == 0
    assert answer.silent == pytest.approx(41.0 - 1.2)  # (last heard at the last pump, 1.2 s)
    peer.abandon(41.0)
    state = peer.final
    assert state.phase is Phase.OVER and 1 in state.dropped
