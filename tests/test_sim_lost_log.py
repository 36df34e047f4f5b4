"""A player's key in a second process, in the simulator: a node started again mid-game after its
log was lost whole (docs/protocol.md §9.6, *two processes of one player*).

The new process knows nothing of what its key signed: it signs its ``join`` (the same bytes as
the first's) and learns from the others' beats that they hold more of its feed than it signed.
Before session 28 it then signed under a seq the first process had used (its commit, or a drop
vote against the members it took for liars): a fork, the honest player dropped for
equivocation. Now a member's word that it holds more of our feed than we signed holds back
everything we would sign (``recovery.Doubt``) while we ask for our own events past our head;
one arriving, signed by our key, stops the process (``Elsewhere``), having signed nothing new.
The others then drop the seat for silence, as for any node gone. Its log says, last, that it
was begun again short of its feed (a ``recovering`` note, since session 30): the audit of every
log reads that log's end as lost, a notice, not an honest player's log lacking its own events
(an error until then); and a resume of it learns its feed from the others before it signs.

And the other side of the rule: a member that claims more of our feed than exists (a liar)
holds us back once, for ``suspect_after`` at most, and the game goes on; what fell due
meanwhile (the withdrawal of a vote for silence on a member heard again) is signed then.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, Drop, DropReason, held_ids, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_unverified
from p2p_nertz.protocol.peer import Effect, Peer, Recovered, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim import Faults, Partition, SimConfig
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Simulation

SEAT = 1  # the seat whose log is lost


def _lost_log(players: int, seed: int, at: float, *, effects: bool = False) -> Simulation:
    crash = Crash(SEAT, at, 1.0, lose_log=True)
    config = SimConfig(
        players=players, seed=seed, faults=Faults(crashes=(crash,)), peer=QUICK_TIMERS,
        record_effects=effects,
    )  # fmt: skip
    return Simulation(config)


@pytest.mark.parametrize(
    ("players", "seed", "at"), [(2, 1, 5.0), (3, 1, 5.0), (3, 2, 8.0), (4, 1, 5.0), (4, 3, 12.0)]
)
def test_sim_a_node_started_again_without_its_log_stops_without_forking(
    players: int, seed: int, at: float
) -> None:
    sim = _lost_log(players, seed, at)
    result = sim.run()
    problems = check(result)
    # No fork (before session 28: proof of one, the seat dropped for equivocation): the seat
    # is dropped as silent, as any node gone, and the others end the game alike.
    assert result.finished
    assert not any("equivocation" in p or "fork" in p for p in problems), problems
    audit = result.audit
    assert audit is not None
    assert not [f for f in audit.violations if "equivocation" in str(f.kind)]
    assert [(d.seat, d.reasons) for d in audit.drops] == [(SEAT, ("silent",))]
    # The new process learnt that its key signed past its head, and stopped there.
    ((when, seat, seq),) = result.elsewhere
    assert seat == SEAT and when > at and seq > 1
    # It signed nothing but its join, whose bytes the first process had signed already.
    own = [w for w in result.logs[SEAT] if _author_seat(sim, w) == SEAT]
    assert own == _first_feed(sim)[:1]
    # The new log lacks what the lost one held (the first process's events, which every other
    # log holds): a notice naming them, not an error (until session 30: "lacks events its own
    # peer signed"), the feed checked where the others hold it.
    assert problems == []
    assert audit.valid and audit.errors == ()
    lost = [
        (f.seq, f.last_seq)
        for f in audit.violations
        if f.log == f"p{SEAT + 1}.log" and f.seat == SEAT
    ]
    assert lost == [(2, len(_first_feed(sim)))]
    (notice,) = [f for f in audit.violations if f.log == f"p{SEAT + 1}.log" and f.seat == SEAT]
    assert notice.kind is FindingKind.LOG_ENDS_EARLY and "begun again" in notice.detail
    ended = [p for p in result.peers if p is not None]
    assert len(ended) == players - 1
    assert all(p.final.phase is Phase.OVER and SEAT in p.final.dropped for p in ended)
    assert len({p.final.digest() for p in ended}) == 1


@pytest.mark.parametrize(("players", "seed", "at"), [(2, 1, 5.0), (3, 2, 8.0), (4, 1, 5.0)])
def test_sim_a_resume_of_the_log_of_a_node_that_stopped_so_learns_its_feed_first(
    players: int, seed: int, at: float
) -> None:
    """The log the stopped process left, resumed a second later (``nertz resume``): its
    ``recovering`` note makes the resume learn the seat's feed from the others before it
    signs (without it, the log held no sign of a loss: the resume doubted and stopped the same
    way again, the seat lost for the game). It takes the first process's events back and plays
    on without a fork; the audit of every log is clean."""
    sim = _lost_log(players, seed, at, effects=True)
    resumed: list[float] = []

    def resume_once(s: Simulation) -> bool:
        if s.result.elsewhere and not resumed:
            resumed.append(s.result.elsewhere[0][0] + 1.0)
            s._push(resumed[0], s.RESTART, SEAT, bytes(4))  # (its log as it is: nothing lost)
        return False

    result = sim.run(until=resume_once)
    assert len(result.elsewhere) == 1 and resumed  # (the case is built: stopped, resumed)
    # It recovered: the others' copies of its feed taken back, from the first process's join.
    ((first, head),) = [
        (e.first, e.head)
        for when, seat, e in result.effects
        if seat == SEAT and isinstance(e, Recovered) and when >= resumed[0]
    ]
    assert first == 1 and head >= result.elsewhere[0][2]
    problems = check(result)
    assert not any("equivocation" in p or "fork" in p for p in problems), problems
    assert result.finished and problems == []
    own = [w for w in result.logs[SEAT] if _author_seat(sim, w) == SEAT]
    assert own == _first_feed(sim)  # (its log holds its whole feed again, as the others do)


def _author_seat(sim: Simulation, wire: bytes) -> int:
    message = decode_unverified(wire, game_id=sim.spec.game_id, roster=sim.spec.peer_ids)
    return sim.spec.seat_of(message.author)


def _first_feed(sim: Simulation) -> list[bytes]:
    """The lost seat's feed as the others hold it (the first process's events)."""
    for peer in sim.peers:
        if peer is not None and peer.seat != SEAT:
            return [m.wire for m in peer.events(SEAT)]
    return []


def _claim_ours(peer: Peer, victim: int, lies: list[bytes]) -> None:
    """Make ``peer`` (a simulated member) send ``victim``, with each beat of its own once the
    victim signed 5 events, a beat claiming one event more of the victim's feed than exists
    (a test-only cheat reaching into the peer's beat path, as ``test_sim_only_ahead`` does)."""
    flush = peer._flush
    spec = peer.spec
    to = spec.peer_ids[victim]

    def lying_flush(now: float) -> list[Effect]:
        effects = flush(now)
        if len(peer.events(victim)) < 5 or peer.final.phase is not Phase.PLAY:
            return effects
        kept: list[Effect] = []
        for effect in effects:
            if isinstance(effect, Send) and effect.to in (None, to):
                kind = decode_unverified(effect.data, game_id=spec.game_id, roster=spec.peer_ids)
                if kind.kind is Kind.BEAT:
                    feeds = [peer.events(q) for q in range(spec.seats)]
                    held = [len(f) for f in feeds]
                    ids = list(held_ids(feeds, tuple(held)))
                    held[victim] += 1  # (an event of the victim's that does not exist)
                    ids[victim] = bytes(ID_PREFIX)
                    head = peer.events(peer.seat)[-1].id
                    beat = Beat(held[peer.seat], head, tuple(held), tuple(ids))
                    lies.append(peer._outbox.sign_beat(Kind.BEAT, beat))
                    kept.append(Send(lies[-1], to))
                    if effect.to is None:
                        others = [
                            p for s, p in enumerate(spec.peer_ids) if s not in (victim, peer.seat)
                        ]
                        kept.extend(Send(effect.data, pid) for pid in others)
                    continue
            kept.append(effect)
        return kept

    peer._flush = lying_flush


@pytest.mark.parametrize(("players", "seed"), [(3, 0), (4, 1)])
def test_sim_a_member_claiming_more_of_our_feed_than_exists_does_not_stop_us(
    players: int, seed: int
) -> None:
    config = SimConfig(players=players, seed=seed, peer=QUICK_TIMERS, max_time=300.0)
    sim = Simulation(config)
    victim, liar = 0, players - 1
    lies: list[bytes] = []
    peer = sim.peers[liar]
    assert peer is not None
    _claim_ours(peer, victim, lies)
    result = sim.run()
    assert lies and liar in honest_doubt(result, victim)  # (the case is built)
    assert result.elsewhere == []  # nothing forged stops an honest node
    honest = result.peers[victim]
    assert honest is not None and victim not in honest.final.dropped
    assert honest.final.phase is Phase.OVER
    assert not [f for f in check(result) if "equivocation" in f]


def honest_doubt(result: object, victim: int) -> set[int]:
    """The members whose claims of more of ``victim``'s feed than it signed held it back."""
    peer = result.peers[victim]  # type: ignore[attr-defined]
    return set(peer._author.doubt.since) if peer is not None else set()


def _lie_from(peer: Peer, victim: int, start: float, lies: list[bytes]) -> None:
    """:func:`_claim_ours`, from simulated time ``start`` on (``peer`` is honest before it)."""
    honest = peer._flush
    _claim_ours(peer, victim, lies)
    lying = peer._flush
    peer._flush = lambda now: lying(now) if now >= start else honest(now)


@pytest.mark.parametrize("seed", [1, 3])
def test_sim_a_withdrawal_due_while_doubting_our_feed_is_signed_once_the_doubt_ends(
    seed: int,
) -> None:
    """Four players split two and two for twice ``drop_after``: each side votes the other out
    for silence, without a majority. As the split heals, a liar beside the victim claims more
    of its feed than exists: the victim doubts (signs nothing) while the others are heard
    again. Until session 29 its withdrawals, due then, were taken out of its votes and never
    signed: its votes stood, held the others' events back from finality, and the others voted
    the honest victim out (the game stalled or split). They are signed once the doubt ends,
    as after a recovery (§9.6, §9.2)."""
    victim, liar, heal = 0, 3, 12.0
    split = Partition(
        heal - 2 * QUICK_TIMERS.drop_after, heal, (frozenset({0, 3}), frozenset({1, 2}))
    )
    config = SimConfig(
        players=4, seed=seed, faults=Faults(partitions=(split,)), peer=QUICK_TIMERS,
        max_time=300.0,
    )  # fmt: skip
    sim = Simulation(config)
    lies: list[bytes] = []
    peer = sim.peers[liar]
    assert peer is not None
    _lie_from(peer, victim, heal - 0.3, lies)
    result = sim.run()
    assert lies and liar in honest_doubt(result, victim)  # (the case is built)
    honest = result.peers[victim]
    assert honest is not None
    votes: dict[int, list[DropReason]] = {}
    for message in honest.events(victim):
        if message.kind is Kind.DROP:
            body = parse_body(message.kind, message.body, 4)
            assert isinstance(body, Drop)
            votes.setdefault(body.seat, []).append(body.reason)
    # Its votes for silence on the other side, then their withdrawals, once each.
    assert votes == {q: [DropReason.SILENT, DropReason.WITHDRAW] for q in (1, 2)}
    assert result.finished and check(result) == []
    assert all(p is not None and p.final.dropped == {} for p in result.peers)
