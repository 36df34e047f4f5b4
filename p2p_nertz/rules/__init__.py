"""The Nertz rules engine: pure values and transitions, no I/O, no clock, no global randomness.

Everything here implements ../shared/RULES.md; see each module for the notation it parses.

>>> from p2p_nertz.rules import Card, Move, Rules, Table, shuffled_deck
>>> table = Table.deal(Rules(), [shuffled_deck(b"alice"), shuffled_deck(b"bob")])
>>> Move.parse("S") in table.legal_moves(0)
True
"""

from __future__ import annotations

from p2p_nertz.rules.cards import (
    HIDDEN,
    RANK_NAMES,
    SUITS,
    Card,
    Suit,
    card,
    format_cards,
    is_unknown,
    new_deck,
    parse_cards,
    sealed,
    sealed_position,
    shuffled_deck,
)
from p2p_nertz.rules.config import NERTS_PILE_SIZE, Rules
from p2p_nertz.rules.game import Game, GameResult, Termination
from p2p_nertz.rules.lake import Claim, Lake, LakeCard, Outcome, Resolution, resolve
from p2p_nertz.rules.moves import FoundationId, Move, MoveKind, Pile
from p2p_nertz.rules.reasons import Illegality, Why, why_illegal
from p2p_nertz.rules.table import LegalMoves, Play, PlayerScore, RoundScore, RoundStatus, Table
from p2p_nertz.rules.tableau import Tableau, fits_on

__all__ = [
    "HIDDEN",
    "NERTS_PILE_SIZE",
    "RANK_NAMES",
    "SUITS",
    "Card",
    "Claim",
    "FoundationId",
    "Game",
    "GameResult",
    "Illegality",
    "Lake",
    "LakeCard",
    "LegalMoves",
    "Move",
    "MoveKind",
    "Outcome",
    "Pile",
    "Play",
    "PlayerScore",
    "Resolution",
    "RoundScore",
    "RoundStatus",
    "Rules",
    "Suit",
    "Table",
    "Tableau",
    "Termination",
    "Why",
    "card",
    "fits_on",
    "format_cards",
    "is_unknown",
    "new_deck",
    "parse_cards",
    "resolve",
    "sealed",
    "sealed_position",
    "shuffled_deck",
    "why_illegal",
]
