"""The claim on an over member's feed (docs/protocol.md §9.2, session 39: two liars at five
players, seed 3), for the simulator's test and the real nodes' (session 40).

:func:`claim_past_result` makes a liar's core (told nothing by its own lie) ack, in an honest
beat, the result of the first other member whose feed it holds up to its result, then claim
in each later beat that member's feed one event past it (an id nobody signed).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, DeckReveal, DeckWant, EventBody, Result, Want
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import GameState
from p2p_nertz.sim.cheats import signed_as

#: How far :func:`claim_on_arrival`'s liar moves its clock on before signing its result.
LEAP = 1000


def _claim_one_past(
    peer: Peer, kind: Kind, body: Beat, q: int, told: list[int], *, tick: bool
) -> bytes:
    """``body`` signed as a beat that claims ``q``'s feed one event past what ``q`` signed (an
    id nobody signed), ``q`` appended to ``told``: the lie of both liars here."""
    outbox = peer._outbox
    held, ids = list(body.held), list(body.held_ids)
    held[q] = peer.held(q) + 1
    ids[q] = hashlib.sha256(b"never signed").digest()[:ID_PREFIX]
    lamport = outbox.clock + tick
    outbox.clock += tick
    told.append(q)
    lie = dataclasses.replace(body, held=tuple(held), held_ids=tuple(ids))
    return signed_as(peer, kind, lie, lamport)


def claim_past_result(peer: Peer, told: list[int], *, ack_first: bool = True) -> None:
    """Wrap ``peer``'s beat signing so that it lies as the module docstring says; each lying
    beat appends the member claimed to ``told``. (The liar reaches into the core on purpose.)"""
    seat, outbox = peer.seat, peer._outbox
    honest = outbox.sign_beat
    acked: list[int] = []  # (the member whose result an honest beat of ours covered)

    def sign_beat(
        kind: Kind, body: Beat | Want | DeckReveal | DeckWant, *, tick: bool = True
    ) -> bytes:
        if not isinstance(body, Beat):
            return honest(kind, body, tick=tick)
        if not acked:
            ended = [q for q in range(peer.spec.seats) if q != seat and ended_at_result(peer, q)]
            acked.extend(ended[:1])
            if ack_first or not acked:
                return honest(kind, body, tick=tick)
        return _claim_one_past(peer, kind, body, acked[0], told, tick=tick)

    outbox.sign_beat = sign_beat


def ended_at_result(peer: Peer, q: int) -> bool:
    """Whether ``peer`` holds member ``q``'s feed up to a last event that is its result."""
    events = peer.events(q)
    return bool(events) and events[-1].kind is Kind.RESULT


def claim_on_arrival(peer: Peer, told: list[int]) -> None:
    """Wrap ``peer``'s announcements so that the member it claims takes the claim before its
    game can be over (a real node stops once its game is over and its last event final; of
    two beats of one member in one burst only the later counts, so the simulator's order, an
    ack then the claim a beat later, races that end on real sockets).

    While ``peer`` does not hold every member's result, its frontiers and beats count each
    other member's feed one short of its result (understating is no lie): nobody's result is
    covered, no game can be over; and it signs its own result only once it holds all the
    others, its clock moved :data:`LEAP` on (a leap within the bound, docs/protocol.md
    §5.3), so that it is timed after every other. It then picks the member whose result is
    first in the total order (every other honest member, capped on that member's feed,
    cannot make the liar's result final, and its game is not over) and claims
    in each beat that member's feed one event past its result (an id nobody signed), the
    others' as they are. Once that member asks us for the event (a want: the claim is taken),
    the next beat is the honest ack of its result, which completes the cover (claims are
    kept at their highest: the claim stands), and every later beat claims again. Each lying
    beat appends the member claimed to ``told``."""
    membership, outbox, duties = peer._membership, peer._outbox, peer._duties
    honest_frontier, honest_beat, answer = membership.frontier, outbox.sign_beat, peer._answer_want
    honest_event = duties.phase_event
    seat, seats = peer.seat, peer.spec.seats
    target: list[int] = []  # (the member claimed, once picked)
    stage: list[str] = []  # "asked" once it wanted the event claimed, "acked" once covered

    def pick() -> None:
        if target or not all(ended_at_result(peer, q) for q in range(seats)):
            return
        times = sorted((peer.events(q)[-1].lamport, q) for q in range(seats))
        first = [q for lamport, q in times if q != seat and lamport < times[-1][0]]
        target.extend(first[:1])

    def phase_event(
        final: GameState, ready_through: int | None, tentative: GameState | None = None
    ) -> EventBody | None:
        body = honest_event(final, ready_through, tentative)
        if not isinstance(body, Result):
            return body
        if not all(ended_at_result(peer, q) for q in range(seats) if q != seat):
            return None  # (our result waits for every other one: then it is timed last)
        outbox.clock += LEAP
        return body

    def frontier(feeds: Sequence[Sequence[object]], dropped: dict[int, int]) -> tuple[int, ...]:
        counts = list(honest_frontier(feeds, dropped))
        for q in range(seats):
            covered = target and (q != target[0] or "acked" in stage)
            if q != seat and ended_at_result(peer, q) and not covered:
                counts[q] = min(counts[q], peer.held(q) - 1)
        return tuple(counts)

    def sign_beat(
        kind: Kind, body: Beat | Want | DeckReveal | DeckWant, *, tick: bool = True
    ) -> bytes:
        pick()
        if not isinstance(body, Beat) or not target:
            return honest_beat(kind, body, tick=tick)
        q = target[0]
        held, ids = list(body.held), list(body.held_ids)
        if stage == ["asked"]:
            stage.append("acked")
            held[q] = peer.held(q)
            ids[q] = peer.events(q)[-1].id[:ID_PREFIX]
            ack = dataclasses.replace(body, held=tuple(held), held_ids=tuple(ids))
            return honest_beat(kind, ack, tick=tick)
        return _claim_one_past(peer, kind, body, q, told, tick=tick)

    def answer_want(to: PeerId, want: Want) -> None:
        asked = target and to == peer.spec.peer_ids[target[0]] and want.seat == target[0]
        if asked and told and not stage:
            stage.append("asked")
        answer(to, want)

    membership.frontier = frontier
    outbox.sign_beat = sign_beat
    peer._answer_want = answer_want
    duties.phase_event = phase_event
