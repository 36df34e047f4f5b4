"""Games of bots made from a seed, for the tests and scripts that run real nodes."""

from __future__ import annotations

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

__all__ = ["bot_game"]


def bot_game(
    label: bytes,
    players: int,
    seed: int,
    *,
    rules: Rules | None = None,
    deal: Deal = Deal.COMMIT,
) -> tuple[list[Identity], GameSpec]:
    """Identities in seat order and the spec of a game of ``players`` bots named ``bot1``…:
    the same for the same ``label`` and ``seed`` (member ``i``'s key from ``(label, seed, i)``,
    the game's label from ``(label + b"-game", seed)``), of one round with no target unless
    ``rules`` are given.

    >>> identities, spec = bot_game(b"doc", 2, 0)
    >>> spec.seats, [spec.seat_of(i.peer_id) for i in identities]
    (2, [0, 1])
    """
    identities = [Identity.generate(derive_seed(label, seed, i)) for i in range(players)]
    spec = GameSpec.create(
        [(ident.peer_id, f"bot{i + 1}") for i, ident in enumerate(identities)],
        Rules(target=None, rounds=1) if rules is None else rules,
        derive_seed(label + b"-game", seed)[:16],
        deal=deal,
    )
    return spec.in_seat_order(identities), spec
