"""GameSpec.in_seat_order: the one place identities are put in seat order (the spec sorts
its roster by key, so the order they were made in is not the seats')."""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules


def test_identities_come_back_in_the_specs_seat_order_and_a_missing_one_is_named() -> None:
    identities = [Identity.generate(derive_seed(b"seats", i)) for i in range(5)]
    spec = GameSpec.create(
        [(ident.peer_id, f"p{i}") for i, ident in enumerate(identities)], Rules(), bytes(16)
    )
    seated = spec.in_seat_order(list(reversed(identities)))
    assert [ident.peer_id for ident in seated] == list(spec.peer_ids)
    assert sorted(id(i) for i in seated) == sorted(id(i) for i in identities)
    with pytest.raises(KeyError):
        spec.in_seat_order(identities[1:])
