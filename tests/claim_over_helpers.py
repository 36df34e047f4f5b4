"""The claim on an over member's feed (docs/protocol.md §9.2, session 39: two liars at five
players, seed 3), for the simulator's test and the real nodes' (session 40).

:func:`claim_past_result` makes a liar's core (told nothing by its own lie) ack, in an honest
beat, the result of the first other member whose feed it holds up to its result, then claim
in each later beat that member's feed one event past it (an id nobody signed).
"""

from __future__ import annotations

import dataclasses
import hashlib

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, DeckReveal, DeckWant, Want
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.sim.cheats import signed_as


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
        target = acked[0]
        held, ids = list(body.held), list(body.held_ids)
        held[target] = peer.held(target) + 1
        ids[target] = hashlib.sha256(b"never signed").digest()[:ID_PREFIX]
        lamport = outbox.clock + tick
        outbox.clock += tick
        told.append(target)
        lie = dataclasses.replace(body, held=tuple(held), held_ids=tuple(ids))
        return signed_as(peer, kind, lie, lamport)

    outbox.sign_beat = sign_beat  # type: ignore[method-assign]


def ended_at_result(peer: Peer, q: int) -> bool:
    """Whether ``peer`` holds member ``q``'s feed up to a last event that is its result."""
    events = peer.events(q)
    return bool(events) and events[-1].kind is Kind.RESULT


def claim_on_arrival(peer: Peer, target: int, told: list[int]) -> None:
    """Wrap ``peer``'s announcements so that ``target`` takes the claim before its game can
    be over (a real node stops once its game is over and its last event final; of two beats
    of one member in one burst only the later counts, so the simulator's order, an ack then
    the claim a beat later, races that end on real sockets).

    Until ``peer`` holds ``target``'s feed up to a result, it announces it as it is; from then
    its frontiers count that feed one short of the result (understating is no lie) and each
    beat claims it one event past the result (an id nobody signed), so that ``target`` lacks
    our cover of its result and its game cannot be over. Once ``target`` asks us for that
    event (a want: the claim is taken), the next beat is the honest ack of the result, which
    completes the cover (claims are kept at their highest: the claim stands), and every beat
    after it claims again. Each lying beat appends ``target`` to ``told``."""
    author, outbox = peer._author, peer._outbox
    honest_frontier, honest_beat, answer = author.frontier, outbox.sign_beat, peer._answer_want
    stage: list[str] = []  # "asked" once target wanted the event claimed, "acked" once covered

    def frontier() -> tuple[int, ...]:
        counts = list(honest_frontier())
        if ended_at_result(peer, target) and "acked" not in stage:
            counts[target] = min(counts[target], peer.held(target) - 1)
        return tuple(counts)

    def sign_beat(
        kind: Kind, body: Beat | Want | DeckReveal | DeckWant, *, tick: bool = True
    ) -> bytes:
        if not isinstance(body, Beat) or not ended_at_result(peer, target):
            return honest_beat(kind, body, tick=tick)
        held, ids = list(body.held), list(body.held_ids)
        if stage == ["asked"]:
            stage.append("acked")
            held[target] = peer.held(target)
            ids[target] = peer.events(target)[-1].id[:ID_PREFIX]
            return honest_beat(
                kind, dataclasses.replace(body, held=tuple(held), held_ids=tuple(ids)), tick=tick
            )
        held[target] = peer.held(target) + 1
        ids[target] = hashlib.sha256(b"never signed").digest()[:ID_PREFIX]
        lamport = outbox.clock + tick
        outbox.clock += tick
        told.append(target)
        lie = dataclasses.replace(body, held=tuple(held), held_ids=tuple(ids))
        return signed_as(peer, kind, lie, lamport)

    def answer_want(to: PeerId, want: Want) -> None:
        if to == peer.spec.peer_ids[target] and want.seat == target and told and not stage:
            stage.append("asked")
        answer(to, want)

    author.frontier = frontier  # type: ignore[method-assign]
    outbox.sign_beat = sign_beat  # type: ignore[method-assign]
    peer._answer_want = answer_want  # type: ignore[method-assign]
