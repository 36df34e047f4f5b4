"""A liar's event past the game's end, withheld from one member (docs/protocol.md §9.2, *an
event past the end, withheld*; §13, *A member that sends one member nothing of its own*).

The liar of ``tests/test_sim_only_ahead.py`` (the last seat, from mid-round on, beats the
victim only its own head one past its last event, its true beats and acks to the others
alone) goes on signing after its ``result``: one more event (a ``leave``, a vote, or a second
``result`` the fold refuses), given to every member but the victim, who gets it only from the
others. As nodes do, every member but the victim stops for good a second after its end.

* Signed once the liar's game is over (it holds every event of the game), the event is its
  word on all of them: the victim needs nothing else of it. But once another member announces
  holding it, the victim counts nothing of the liar's feed past its last held event until it
  holds it too (``Finality.bounds``). Gap repair asked whoever announced the most, and the
  liar's lie (its head one past the event) was the most: the victim asked the liar alone, for
  good, and stayed in ``result`` once the others stopped (3 players seed 1, 4 players seed 3,
  main e28bab6). Now a member asked for the next event that has not come is not asked again
  while another announces it (``Feeds.gap``).
* Signed as the liar's ``result`` is (before it holds the victim's), the event does not
  cover the victim's ``result``; the liar's true beats after it do, relayed. A relay that came
  before the event would be old at the victim (the lies are later), its head not held, and
  dropped (``Finality.raises``); in these games the victim held the event first (the others
  announce it as they take it), and every peer ends alike.
"""

from __future__ import annotations

import pytest
from test_sim_only_ahead import VICTIM
from test_sim_only_ahead import _game as only_ahead_game

from p2p_nertz.protocol.bodies import DropReason, Leave, Result, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_unverified
from p2p_nertz.protocol.peer import Effect, Peer, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim.invariants import audit_logs, check
from p2p_nertz.sim.network import SimResult

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _sign_past_the_end(peer: Peer, victim: int, what: str, when: str) -> list[int]:
    """Make ``peer`` sign one event past its ``result`` (``what``: ``leave``, ``vote`` on the
    victim, ``again``: its result once more) once its game is over (``when`` ``over``) or as
    its ``result`` is signed (``result``), and send the victim none of its events from there
    on, answers included. Returns the event's seq once signed."""
    flush = peer._flush
    spec = peer.spec
    to, own_id = spec.peer_ids[victim], spec.peer_ids[peer.seat]
    others = [pid for s, pid in enumerate(spec.peer_ids) if s not in (victim, peer.seat)]
    past: list[int] = []

    def signing_flush(now: float) -> list[Effect]:
        effects = flush(now)
        own = peer.events(peer.seat)
        if when == "result":
            due = own[-1].kind is Kind.RESULT
        else:
            due = peer.final.phase is Phase.OVER and own[-1].lamport <= peer.stable
        if not past and due:
            if what == "leave":
                peer._author.emit(Leave(peer._frontier()), now)
            elif what == "vote":
                held = len(peer.events(victim))
                peer._author.sign_vote(victim, held, DropReason.SILENT, now)
            else:
                result = parse_body(own[-1].kind, own[-1].body, spec.seats)
                assert isinstance(result, Result)
                peer._author.sign(result, now)
            past.append(len(peer.events(peer.seat)))
            effects += flush(now)
        if not past:
            return effects
        kept: list[Effect] = []
        for effect in effects:
            if isinstance(effect, Send) and effect.to in (None, to):
                kind = decode_unverified(effect.data, game_id=spec.game_id, roster=spec.peer_ids)
                if kind.kind.is_event and kind.author == own_id and kind.seq >= past[0]:
                    kept.extend(Send(effect.data, pid) for pid in others if effect.to is None)
                    continue
            kept.append(effect)
        return kept

    peer._flush = signing_flush
    return past


def _game(players: int, seed: int, what: str, when: str) -> tuple[SimResult, list[int]]:
    """``test_sim_only_ahead``'s game, its liar signing past its ``result`` too."""
    sim, _, _ = only_ahead_game(players, seed)
    liar = sim.peers[players - 1]
    assert liar is not None
    past = _sign_past_the_end(liar, VICTIM, what, when)
    return sim.run(), past


def _ended_alike(result: SimResult, liar: int, past: list[int]) -> None:
    """Every member over on one state, the victim holding the event withheld from it and
    voting nobody out, and the audit of every log reaching that state."""
    ended = [p for p in result.peers if p is not None]
    victim = result.peers[VICTIM]
    assert victim is not None
    assert past and len(victim.events(liar)) >= past[0]  # (the case built; the event came)
    assert all(p.final.phase is Phase.OVER for p in ended)
    assert len({p.final.digest() for p in ended}) == 1
    assert [m for m in victim.events(VICTIM) if m.kind is Kind.DROP] == []
    report = audit_logs(result)
    assert report.digest == victim.final.digest()
    assert {error.seat for error in report.errors} <= {liar}


@pytest.mark.parametrize("what", ["leave", "vote"])
@pytest.mark.parametrize(("players", "seed"), [(3, 0), (3, 1), (4, 0), (4, 3)])
def test_sim_end_beat_an_event_signed_once_over_and_withheld_is_fetched_from_the_others(
    players: int, seed: int, what: str
) -> None:
    """Signed once the liar's game is over. On main the victim asked the liar alone for it
    and stayed in ``result`` at 3 players seed 1 and 4 players seed 3 (the others stopped);
    now every member ends alike, nobody voted out by the victim."""
    result, past = _game(players, seed, what, "over")
    assert result.finished and check(result) == []
    _ended_alike(result, players - 1, past)


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (4, 1), (4, 2), (4, 5)])
def test_sim_end_beat_an_event_signed_with_the_result_and_withheld_is_fetched_too(
    players: int, seed: int
) -> None:
    """Signed as the liar's ``result`` is (its ``result`` again, which every fold refuses:
    only the liar is named), before it holds the victim's: the event does not cover the
    victim's ``result``, the liar's true beats after it do, and reach the victim relayed only.
    Every member ends alike, the victim holding the event (on main it asked the liar alone,
    and ended without it)."""
    liar = players - 1
    result, past = _game(players, seed, "again", "result")
    assert result.finished
    _ended_alike(result, liar, past)
    victim = result.peers[VICTIM]
    assert victim is not None
    assert [v.seq for v in victim.final.violations if v.seat == liar] == past
