"""Real proofs for hand-built votes on proof (docs/protocol.md §9.2, *a vote on proof carries
its proof*, session 39).

The fold tests build their events by hand, unsigned. A vote on proof counts only with a proof
that verifies: two signed versions of the target's event ``fork_seq``. :func:`proven` gives
each vote on proof of a list of events that carries none such a proof, signed with the
member's key (the tests' specs make their keys with :func:`key_of`'s seeds), so that the
rules under test (caps, cuts, the roster's drops) meet real votes on proof.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from p2p_nertz.protocol.bodies import Drop, DropReason, Leave, encode_body
from p2p_nertz.protocol.envelope import Kind, encode_message
from p2p_nertz.protocol.fold_values import Event
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec

__all__ = ["fork_proof", "key_of", "proven"]


def key_of(spec: GameSpec, seat: int) -> Identity:
    """The key of ``seat`` in a test's spec whose members' keys are seeded ``[i + 1] * 32``."""
    for i in range(8):
        identity = Identity.generate(bytes([i + 1]) * 32)
        if identity.peer_id == spec.peer_ids[seat]:
            return identity
    raise LookupError(f"seat {seat}'s key is not one of the tests' seeded keys")


def fork_proof(
    spec: GameSpec, seat: int, seq: int, identity: Identity | None = None
) -> tuple[bytes, bytes]:
    """Two signed versions of ``seat``'s event ``seq``: a proof of its fork there."""
    key = key_of(spec, seat) if identity is None else identity
    n = spec.seats
    body = encode_body(Leave((0,) * n, (b"",) * n))
    return tuple(  # type: ignore[return-value]
        encode_message(
            key,
            game_id=spec.game_id,
            seq=seq,
            prev=None if seq == 1 else bytes(32),
            lamport=1_000_000 + i,
            kind=Kind.LEAVE,
            body=body,
            version=spec.wire_version,
        )
        for i in range(2)
    )


def proven(spec: GameSpec, events: Sequence[Event]) -> list[Event]:
    """``events``, each vote on proof without a proof given one of its fork."""
    out = []
    for event in events:
        body = event.body
        if isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION and not body.proof:
            # (A row that names no fork, which the wire's schema refuses, is read as one just
            # past its count, where an honest voter's cut is.)
            fork = body.fork_seq or body.last_seq + 1
            proof = fork_proof(spec, body.seat, fork)
            body = dataclasses.replace(body, fork_seq=fork, proof=proof)
            out.append(dataclasses.replace(event, body=body))
        else:
            out.append(event)
    return out
