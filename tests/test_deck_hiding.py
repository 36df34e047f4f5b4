"""Hiding (issue 19): what one member holds says nothing of an unopened card of its own deck.

Everything member ``k`` holds is fixed (its secret, hence its key, its stages and its dealing,
and its identity); only the other members' secrets vary from run to run. The card at a position
of ``k``'s own deck that nobody has opened must then range over every card not yet seen, and
nothing ``k`` can compute from what it holds opens it.
"""

from __future__ import annotations

from p2p_nertz.deck.deal import run_deal
from p2p_nertz.deck.elgamal import decrypt_with
from p2p_nertz.deck.group import ORDER, card_of, mul, sub
from p2p_nertz.deck.keys import MemberKey, joint_key
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules.cards import Card, Suit, card
from tests.deck_helpers import CONTEXT, VssTable, joint_secret, open_by_shares

N = 3
OWNER = 1
#: A deck of 13 cards (the spades) so that a few dozen deals see every card at a place.
CARDS = tuple(card(rank, Suit.SPADES) for rank in range(1, 14))
OPENED = (0, 1, 2, 3)  # positions turned up before, in every run
HIDDEN_AT = 12  # the top of the face-down deck: never opened
#: The runs (fixed keys: the same every time). The 13 cards are all seen at the hidden place
#: by run 31; 64 keeps that margin twice over. A deal whose hidden card the owner's holdings
#: fix shows one card in every run (each stage but the first skipped: one card in 64).
RUNS = 64


def _keys(run: int) -> list[MemberKey]:
    # The owner's secret is the same in every run; the others' change.
    return [
        MemberKey.from_seed(derive_seed("hiding", "owner" if i == OWNER else run, i), CONTEXT)
        for i in range(N)
    ]


def test_deck_hiding_an_unopened_card_of_ones_own_deck_ranges_over_the_unseen() -> None:
    seen_at_hidden: set[Card] = set()
    owner_stage_outputs = set()
    for run in range(RUNS):
        keys = _keys(run)
        transcript = run_deal(keys, [CARDS] * N)
        deck = transcript.final[OWNER]
        opened = {open_by_shares(keys, OWNER, p, deck[p]) for p in OPENED}
        hidden = decrypt_with(joint_secret(keys), deck[HIDDEN_AT])
        assert hidden is not None and hidden not in opened
        seen_at_hidden.add(hidden)
        # What the owner holds of its own deck: its own stage, the deck's first, made on the
        # public initial deck under a joint key that changes with the others' keys only.
        owner_stage_outputs.add(transcript.stages[0][OWNER].to_bytes())
    # Every card shows up at the hidden place over the runs: nothing the owner holds fixes it.
    assert seen_at_hidden == set(CARDS)
    assert len(owner_stage_outputs) == RUNS


def test_deck_hiding_nothing_the_owner_holds_opens_a_hidden_card() -> None:
    n = 5  # enough members for VSS: the owner also holds shares of the others' secrets
    keys = [MemberKey.from_seed(derive_seed("hiding-vss", i), CONTEXT) for i in range(n)]
    owner = 2
    transcript = run_deal(keys, [CARDS] * n)
    c1, c2 = transcript.final[owner][HIDDEN_AT]
    held = VssTable(keys).held_by(owner)
    x = keys[owner].x
    # The owner's own share removed: no card.
    assert card_of(sub(c2, mul(x, c1))) is None
    # Its share plus every VSS share it holds, each taken as if it were the whole secret.
    guess = (x + sum(held.values())) % ORDER
    assert card_of(sub(c2, mul(guess, c1))) is None
    # Its share with each single VSS share it holds of another member (one share is below
    # every threshold): still no card.
    for i, sigma in held.items():
        assert card_of(sub(c2, mul((x + sigma) % ORDER, c1))) is None, f"seat {i}'s secret leaked"
    # Everyone's shares do open it (the test is not vacuous).
    assert card_of(sub(c2, mul(joint_secret(keys), c1))) is not None
    assert joint_key(k.public for k in keys) == transcript.joint
