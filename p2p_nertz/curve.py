"""The field of Curve25519 and Ed25519's curve constants (RFC 8032 §5.1), one home for the
two modules that do arithmetic on points by hand: the acceptance rule of a signature
(:mod:`p2p_nertz.protocol.identity`, docs/protocol.md §3.3) and the shuffle's ladder
(:mod:`p2p_nertz.deck.ladder`).
"""

from __future__ import annotations

__all__ = ["D", "P", "SQRT_M1"]

P = 2**255 - 19  # the field prime of Curve25519
D = -121665 * pow(121666, -1, P) % P  # the curve constant d of RFC 8032 §5.1
SQRT_M1 = pow(2, (P - 1) // 4, P)  # a square root of -1 mod p
