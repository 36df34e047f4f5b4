"""The only-ahead liar as real nodes meet it, in the simulator (docs/protocol.md §9.2, *only
beats one ahead*; ``tests/test_node_hostile.py``, attack ``only_ahead``).

The last seat, from mid-round on, sends seat 0 nothing beat-like but beats of its own head one
past its last event (never given): its true beats and acks go to the others alone, and it
relays none of theirs to seat 0; its events, wants and answers still go to every member. As a
node does (``runtime/node.py``, ``_Ending``), every member but seat 0 stops for good
:data:`LINGER` seconds after its final fold is over and its own last event final there (or
:data:`GRACE` seconds after it is over), so the words seat 0 lacks exist only as far as they
reached it before.

Nobody votes here: the victim is held only at the game's end. The others relay it, as their
games end, the liar's beats that made their end final (``protocol.last_words``); taken old,
they are the liar's word (``Finality.raises``). Before session 26 the victim took an old beat
only once the fold of the last move of its final fold was over, the final fold itself where no
drop vote is held: the relay came before it and was lost, the others stopped, and the victim,
in ``result``, voted every other member out as silent, alone (``tests/test_sim_freeze_beats.py``
passed only because a vote was held there). Now it takes the relay as its tentative fold is
over, and ends the game alike, nobody voted out. At two players there is no third member: the
victim abandons the liar once it is gone, its result counted, the game's end provisional.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, held_ids
from p2p_nertz.protocol.envelope import Kind, decode_unverified
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.network import Crash, Simulation

VICTIM = 0

#: as a node stops once done (``runtime/node.py``: its ``linger`` and ``grace`` defaults)
LINGER = 1.0
GRACE = 10.0

#: the hostile node test's timers (``tests/hostile_helpers.py``: ``node_config(1 s, 3 s)``), its
#: acks at once, and a short phase timeout (at two players the victim abandons after it)
TIMERS = PeerConfig(
    ack_delay=0.0,
    want_delay=0.02,
    beat_interval=0.25,
    suspect_after=1.0,
    drop_after=3.0,
    phase_timeout=6.0,
)


def _lie_only_ahead(peer: Peer, victim: int, lies: list[bytes]) -> None:
    """Make ``peer`` (a simulated member), from the first input of its in play with a card in
    the lake on, send ``victim`` instead of each beat or ack of its own a beat of its own head
    one past its last event (a test-only cheat: it reaches into the peer's beat path, as
    ``tests/hostile_helpers.py``'s ``HostileNode`` does on a node), and nothing else beat-like;
    its own go to the others alone."""
    flush = peer._flush
    spec = peer.spec
    to = spec.peer_ids[victim]
    others = [pid for s, pid in enumerate(spec.peer_ids) if s not in (victim, peer.seat)]
    started = False

    def lying_flush(now: float) -> list[Effect]:
        nonlocal started
        effects = flush(now)
        table = peer.final.table
        started = started or (
            peer.final.phase is Phase.PLAY and table is not None and any(table.lake.cards())
        )
        if not started:
            return effects
        kept: list[Effect] = []
        beat_due = False
        for effect in effects:
            if isinstance(effect, Send) and effect.to in (None, to):
                kind = decode_unverified(effect.data, game_id=spec.game_id, roster=spec.peer_ids)
                if kind.kind in (Kind.BEAT, Kind.ACK):
                    if effect.to is None:  # (ours: to the others alone, the lie to the victim)
                        kept.extend(Send(effect.data, pid) for pid in others)
                        beat_due = True
                    continue  # (nothing beat-like to the victim: relays neither)
            kept.append(effect)
        if beat_due:
            feeds = [peer.events(q) for q in range(spec.seats)]
            held = [len(f) for f in feeds]
            ids = list(held_ids(feeds, tuple(held)))
            held[peer.seat] += 1  # (an event nobody is given)
            ids[peer.seat] = bytes(ID_PREFIX)
            beat = Beat(held[peer.seat], bytes(32), tuple(held), tuple(ids))
            lies.append(peer._outbox.sign_beat(Kind.BEAT, beat))
            kept.append(Send(lies[-1], to))
        return kept

    peer._flush = lying_flush


@dataclass(slots=True)
class _NodesStop:
    """A :class:`~p2p_nertz.sim.network.Schedule` that holds nothing: every member but
    ``stays`` stops for good as its node would (see the module docstring), looked at as each
    message arrives anywhere (beats come a few times a second)."""

    stays: int
    over_at: dict[int, float] = field(default_factory=dict)
    done_at: dict[int, float] = field(default_factory=dict)
    stopped: dict[int, float] = field(default_factory=dict)

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        for peer in sim.peers:
            if peer is None or peer.seat == self.stays or peer.final.phase is not Phase.OVER:
                continue
            own = peer.events(peer.seat)
            over = self.over_at.setdefault(peer.seat, now)
            if not own or own[-1].lamport <= peer.stable or now - over >= GRACE:
                done = self.done_at.setdefault(peer.seat, now)
                if now - done >= LINGER:
                    self.stopped[peer.seat] = now
                    sim._crash(peer.seat, now, Crash(peer.seat, now, None))
        return False


def _game(players: int, seed: int) -> tuple[Simulation, _NodesStop, list[bytes]]:
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=1),
        peer=TIMERS,
        faults=Faults(delay=0.0005, jitter=0.00025),  # (loopback)
        max_time=120.0,
    )
    schedule = _NodesStop(VICTIM)
    sim = Simulation(config, schedule)
    liar = sim.peers[players - 1]
    assert liar is not None
    lies: list[bytes] = []
    _lie_only_ahead(liar, VICTIM, lies)
    return sim, schedule, lies


@pytest.mark.parametrize(("players", "seed"), [(3, 0), (3, 1), (4, 0), (4, 1)])
def test_sim_only_ahead_a_victim_nobody_votes_for_ends_alike_as_the_others_stop(
    players: int, seed: int
) -> None:
    """Three and four players: the victim ends the game as the others do, on the liar's
    words relayed as their games end, before any of them stops; nobody signs a vote."""
    sim, _, lies = _game(players, seed)
    result = sim.run()
    result.violations = check(result)
    victim = result.peers[VICTIM]
    assert victim is not None
    liar = players - 1
    # The case is built: lies reached the victim, which holds the liar's word of a head past
    # its last event, never given.
    assert lies and victim._finality.claimed[liar][liar] > len(victim.events(liar))
    assert result.finished and result.violations == []
    ended = [p for p in result.peers if p is not None]
    assert all(p.final.phase is Phase.OVER and not p.provisional for p in ended)
    assert len({p.final.digest() for p in ended}) == 1 and not victim.final.dropped
    votes = [m for p in ended for m in p.events(p.seat) if m.kind is Kind.DROP]
    assert votes == []


@pytest.mark.parametrize(("seed", "stops"), [(0, True), (1, False)])
def test_sim_only_ahead_two_players_the_victim_abandons_the_liar_once_it_stopped(
    seed: int, stops: bool
) -> None:
    """Two players: no third member relays. Where the liar's ``result`` came after the
    victim's it covers it and the game ends alike (seed 1). Where it came before (seed 0), the
    victim never has the liar's word on its own ``result``; the liar, over, stops, and the
    victim votes it out and abandons it (docs/protocol.md §9.3): the game ends, the liar out
    at its whole feed, its ``result`` counted, the round scored, provisional (the liar never
    heard the abandon)."""
    sim, schedule, lies = _game(2, seed)
    result = sim.run()
    result.violations = check(result)
    victim = result.peers[VICTIM]
    assert victim is not None
    assert lies and result.violations == []
    assert victim.final.phase is Phase.OVER
    assert len(victim.final.game.history) == 1  # (the round scored)
    results = [m.seq for m in victim.events(1) if m.kind is Kind.RESULT]
    assert bool(schedule.stopped) is stops  # (the case is built)
    if stops:
        assert victim.final.dropped == {1: results[-1]} and victim.provisional
    else:
        assert result.finished and not victim.final.dropped and not victim.provisional
