"""The dealerless shuffle: decks nobody can read, their owners included (issue 19; docs/shuffle.md).

Theory of operation
-------------------
Pure, like the protocol core: values and functions, randomness derived from the secrets passed
in, no clock, no I/O. Its parts, from the bottom:

- :mod:`~p2p_nertz.deck.group`: Ed25519's prime-order group through libsodium, scalars, the
  checks of every received point and scalar, and each card as a hashed point;
- :mod:`~p2p_nertz.deck.proofs`: Schnorr's proof of a key and Chaum–Pedersen's of a share;
- :mod:`~p2p_nertz.deck.keys`: a member's round secret ``x_i`` and key ``X_i = x_i·G``; the
  joint key ``X = Σ X_i``;
- :mod:`~p2p_nertz.deck.elgamal`: the encrypted deck and one member's shuffle stage, derived
  from its secret so that it can be re-run once the secret is revealed;
- :mod:`~p2p_nertz.deck.deal`: the pipelined deal (N decks, N members, N stages);
- :mod:`~p2p_nertz.deck.shares`: decryption shares, proven, and the card they open;
- :mod:`~p2p_nertz.deck.vss`: Feldman VSS of each secret, so the members left can open a dropped
  member's share;
- :mod:`~p2p_nertz.deck.check`: the checks once the secrets are revealed, and whose fault;
- :mod:`~p2p_nertz.deck.wire`: the messages, as msgpack-ready values.

Nothing here is wired into the peer yet: the new event kinds (docs/shuffle.md §7) come with the
protocol version after 2.
"""

from __future__ import annotations

from p2p_nertz.deck.check import Fault, FaultKind
from p2p_nertz.deck.deal import DealTranscript, run_deal, schedule
from p2p_nertz.deck.elgamal import Deck, initial_deck, shuffle_stage
from p2p_nertz.deck.group import DeckError, card_of, card_point
from p2p_nertz.deck.keys import MemberKey, joint_key, round_context
from p2p_nertz.deck.shares import Share, make_share, open_card, verify_share
from p2p_nertz.deck.vss import Dealing, deal_shares, open_share, threshold

__all__ = [
    "DealTranscript",
    "Dealing",
    "Deck",
    "DeckError",
    "Fault",
    "FaultKind",
    "MemberKey",
    "Share",
    "card_of",
    "card_point",
    "deal_shares",
    "initial_deck",
    "joint_key",
    "make_share",
    "open_card",
    "open_share",
    "round_context",
    "run_deal",
    "schedule",
    "shuffle_stage",
    "threshold",
    "verify_share",
]
