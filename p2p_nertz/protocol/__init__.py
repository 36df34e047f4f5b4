"""The protocol core (pure, sans-I/O): identities and the signed message envelope.

See DESIGN.md §2-§3. Nothing here does I/O or reads a clock; bytes and times are passed in.
"""

from __future__ import annotations

from p2p_nertz.protocol.envelope import (
    GAME_ID_SIZE,
    MAX_BODY_DEPTH,
    MAX_COUNTER,
    MAX_MESSAGE_SIZE,
    MESSAGE_ID_SIZE,
    PROTOCOL_VERSION,
    SIGNATURE_DOMAIN,
    Body,
    BodyValidator,
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    Message,
    MessageId,
    RejectReason,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.identity import (
    PEER_ID_SIZE,
    PRIVATE_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    InvalidKeyError,
    PeerId,
    fingerprint,
    has_full_order,
    is_valid_peer_id,
    key_fault,
    parse_peer_id,
    verify,
)

__all__ = [
    "GAME_ID_SIZE",
    "MAX_BODY_DEPTH",
    "MAX_COUNTER",
    "MAX_MESSAGE_SIZE",
    "MESSAGE_ID_SIZE",
    "PEER_ID_SIZE",
    "PRIVATE_KEY_SIZE",
    "PROTOCOL_VERSION",
    "SIGNATURE_DOMAIN",
    "SIGNATURE_SIZE",
    "Body",
    "BodyValidator",
    "EnvelopeCache",
    "Identity",
    "InvalidKeyError",
    "InvalidMessageError",
    "Kind",
    "Message",
    "MessageId",
    "PeerId",
    "RejectReason",
    "decode_message",
    "encode_message",
    "fingerprint",
    "has_full_order",
    "is_valid_peer_id",
    "key_fault",
    "parse_peer_id",
    "verify",
]
