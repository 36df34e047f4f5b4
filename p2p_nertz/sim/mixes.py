"""Fault mixes aimed at one class of fault, for soaks (``scripts/soak.py``) and tests.

:meth:`Faults.random <p2p_nertz.sim.network.Faults.random>` draws faults of every kind, and
some rules of the core need a shape it meets once in tens of thousands of games, or never. A
mix here draws that shape on purpose, with the rest of the game (timings, the network's
noise) random, so that a soak of it says how often the rule fires and whether it holds.
"""

from __future__ import annotations

from typing import Any

from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, Partition, SimConfig

__all__ = ["cut_link", "late_withdrawals", "noisy"]


def noisy(rng: Rng, **faults: Any) -> Faults:
    """A noisy network drawn from ``rng`` (delay 1 to 21 ms, jitter to 10 ms, up to a fifth
    reordered, up to 5 % lost and 5 % duplicated), with the other ``faults`` given: the
    network of the cheat mixes (``sim.collusion``, ``sim.liar_games``), whose only fault is
    their cheat."""
    return Faults(
        delay=0.001 + rng.random() * 0.02,
        jitter=rng.random() * 0.01,
        reorder=rng.random() * 0.2,
        loss=rng.random() * 0.05,
        duplicate=rng.random() * 0.05,
        **faults,
    )


def cut_link(a: int, b: int, start: float, end: float, players: int) -> Partition:
    """A partition that cuts only the link between seats ``a`` and ``b``: two groups, every
    seat but ``b`` and every seat but ``a`` (every other pair shares one)."""
    seats = frozenset(range(players))
    return Partition(start, end, (seats - {b}, seats - {a}))


def late_withdrawals(
    seed: int,
    *,
    players: tuple[int, int] = (3, 5),
    rounds: int = 0,
    peer: PeerConfig = QUICK_TIMERS,
) -> SimConfig:
    """The seeded game of ``scripts/soak.py --late-withdrawals``: voters that withdraw after
    a drop (docs/protocol.md §9.2, *a withdrawal after the drop lifts no cap that decided
    it*).

    A member ``x`` is cut off from every other member at ``start`` (3 to 11 s into the
    game) while a member ``z`` is cut off from at least half of the others (with ``x``, a
    majority): ``x`` votes ``z`` out past the count the others' votes on ``x`` quote, and
    with the others' votes on ``z`` its vote would drop ``z``; the others vote ``x`` out.
    Each link then heals at its own time, so that each voter hears ``x`` again at its own
    moment, some before they hold the votes that complete ``x``'s drop (they withdraw
    theirs, after the drop in the order), some after. Two shapes, drawn per seed:

    * *late*: each link of ``x`` heals 1.1 to 2.6 times ``drop_after`` after it was cut, and
      ``z`` is cut off a little before or after ``x``;
    * *race*: each link of ``x`` heals as the others' silence timers on it fire (0.9 to 1.3
      times ``drop_after``), and ``z`` is cut off from its voters 1 to 1.3 times
      ``drop_after`` after ``x``.

    (The shape of tests/test_folds_late_withdrawal.py, where ``z``'s vote on ``x`` comes
    early enough for ``z``'s voters to count it, and ``x``'s vote on ``z`` past the others'
    count of ``x``, is not among them: a member hears another through the events others
    relay, so ``z`` votes ``x`` out no earlier than the others unless it is cut off from
    all of them, and then they do not hold its vote. See docs/protocol.md §13.)

    The network is noisy (delay, jitter, reordering, a little loss), which moves the
    Lamport times of the votes and withdrawals against each other. No cheater, no crash:
    every peer is honest and alive to the end.

    ``players``: the range of table sizes drawn from; ``rounds``: 1 or 2 drawn if 0.
    """
    rng = Rng(seed + 5_000_011)
    low, high = players
    n = low + rng.below(high - low + 1)
    rounds = rounds or 1 + rng.below(2)
    drop = peer.drop_after
    x = rng.below(n)
    others = [q for q in range(n) if q != x]
    rng.shuffle(others)
    z, rest = others[0], others[1:]
    on_z = rest[: n // 2 + rng.below(len(rest) - n // 2 + 1)]  # (with x's vote, a majority)
    start = 3.0 + rng.random() * 8.0
    late = rng.below(2) == 0
    heal = (1.1, 1.5) if late else (0.9, 0.4)  # (x's links heal late, or as the timers fire)
    cuts = [
        cut_link(x, q, start, start + drop * (heal[0] + heal[1] * rng.random()), n) for q in others
    ]
    z_start = start + drop * (rng.random() - 0.5 if late else 1.0 + 0.3 * rng.random())
    for q in on_z:
        cuts.append(cut_link(z, q, z_start, z_start + drop * (1.1 + 1.5 * rng.random()), n))
    faults = Faults(
        delay=0.001 + rng.random() * 0.02,
        jitter=rng.random() * 0.01,
        reorder=rng.random() * 0.2,
        loss=rng.random() * 0.05,
        partitions=tuple(cuts),
    )
    return SimConfig(
        players=n,
        seed=seed,
        faults=faults,
        peer=peer,
        rules=Rules(target=None, rounds=rounds),
        max_time=400.0 * rounds + 8 * drop,
    )
