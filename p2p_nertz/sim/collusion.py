"""Two cheaters at once in the simulator: a member that breaks its freeze beside one that forks.

docs/protocol.md §9.2 (*Not enforced on the coverage term*) leaves the coverage term
(``held_by``, §7.1) uncapped by a voter's freeze: a voter whose beats announce a member's feed
past the count of its vote still covers those events at every other peer. With every other
member holding them, that can make final an event of the member past the voter's count; if
the member is then dropped on proof (it forks), the cut is the lowest count, below a final
event. It needs two cheaters, and no scan had played them.

A :class:`FreezeBreaker` is the first of the two, installed on its seat's core as the
simulator installs a shuffle cheat (:func:`install`, again on each restart): at ``at`` it
votes ``target`` out for silence (a modified client that claims it no longer hears it; the
others hear it and never join), never withdraws that vote, and announces, in its beats and
its events' frontiers, every event of ``target`` it holds, past its vote (an honest voter
announces no more than its count, §9.2). The second is a :class:`~p2p_nertz.sim.Equivocation`
of ``target``. :func:`simulate` runs a game with both and checks DESIGN.md §8 for the honest
members; :func:`breaker_marks` lists the breaker among the run's cheaters, so that the
invariants do not hold it to the honest members' rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.membership import _announced
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim.cheats import VoteFlapper
from p2p_nertz.sim.network import QUICK_TIMERS, Equivocation, Faults, SimConfig, Simulation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.sim.network import SimResult

__all__ = ["MIXES", "FreezeBreaker", "breaker_marks", "game", "install", "simulate"]

#: The mixes of two cheaters :func:`game` draws (``scripts/scan_two_cheaters.py``).
MIXES = ("fork_breaker", "vouch", "two_forks", "mutual")

#: Simulated seconds a :func:`game` may take (``vouch`` seed 0 with its fork alone ends at
#: 10.6 s; a stalled game would otherwise refuse its honest members' moves for minutes).
MAX_TIME = 120.0


@dataclass(frozen=True, slots=True)
class FreezeBreaker:
    """Seat ``seat`` votes ``target`` out for silence at ``at`` (simulated seconds), never
    withdraws it, and announces all it holds of ``target``'s feed past its vote."""

    seat: int
    target: int
    at: float


def breaker_marks(breakers: Sequence[FreezeBreaker]) -> tuple[VoteFlapper, ...]:
    """Cheats that do nothing (no flap) but name each breaker's seat among the run's cheaters
    (``Faults.cheaters``: the invariants hold cheaters to no honest rule): put them in
    ``Faults.deck_cheats``."""
    return tuple(VoteFlapper(b.seat, b.target, flaps=0) for b in breakers)


def install(peer: Peer, cheat: FreezeBreaker) -> None:
    """Make ``peer`` (``cheat.seat``'s core) break its freeze on ``cheat.target`` from now on
    (the simulator's cheat reaches into the core on purpose, as :mod:`p2p_nertz.sim.cheats`)."""
    author = peer._author
    membership = author.membership
    honest_liveness = author.liveness

    def liveness(now: float) -> None:
        honest_liveness(now)
        final = author.final
        if now < cheat.at or author.left or cheat.target in membership.voted:
            return
        if cheat.target in final.dropped or peer.seat in final.dropped:
            return
        membership.proven_seats.add(cheat.target)  # never withdrawn when heard again
        author.vote(cheat.target, DropReason.SILENT, now)

    def frontier(feeds: Sequence[Sequence[object]], dropped: dict[int, int]) -> tuple[int, ...]:
        # Every feed's length, as if no vote of ours froze any (past a final drop's cut as
        # an honest member: the lie is the freeze alone).
        held = _announced(feeds, {}, dropped, peer.seat)
        for q, h in enumerate(held):
            membership.announced_held[q] = max(membership.announced_held[q], h)
        return tuple(held)

    author.liveness = liveness  # type: ignore[method-assign]
    membership.frontier = frontier  # type: ignore[method-assign]


class _Simulation(Simulation):
    """A simulation whose freeze breakers are installed on start and on each restart."""

    def __init__(self, config: SimConfig, breakers: Sequence[FreezeBreaker]) -> None:
        self.breakers = tuple(breakers)  # (before the constructor installs the cheats)
        super().__init__(config)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        for cheat in self.breakers:
            if cheat.seat == seat and peer is not None:
                install(peer, cheat)


def simulate(config: SimConfig, breakers: Sequence[FreezeBreaker]) -> SimResult:
    """Run ``config`` with ``breakers`` installed and check the invariants (``config``'s
    faults must list :func:`breaker_marks` of them, so that the breakers count as cheaters)."""
    from p2p_nertz.sim.invariants import check

    marked = set(config.faults.cheaters)
    missing = [b.seat for b in breakers if b.seat not in marked]
    if missing:
        raise ValueError(f"breakers not among the run's cheaters (breaker_marks): {missing}")
    result = _Simulation(config, breakers).run()
    result.violations = check(result)
    return result


def _others(rng: Rng, players: int, but: Sequence[int]) -> frozenset[int]:
    """A random non-empty set of seats, none of ``but``."""
    seats = [s for s in range(players) if s not in but]
    rng.shuffle(seats)
    return frozenset(seats[: 1 + rng.below(len(seats))])


def game(mix: str, seed: int, low: int, high: int) -> tuple[SimConfig, tuple[FreezeBreaker, ...]]:
    """The seeded game of ``mix`` (:data:`MIXES`, ``scripts/scan_two_cheaters.py``) for
    ``seed``, at ``low`` to ``high`` players: its configuration and its freeze breakers (one
    home, so that a test replays a scan's seed)."""
    rng = Rng(seed * 7 + 5_000_011 + MIXES.index(mix))
    players = low + rng.below(high - low + 1)
    seats = list(range(players))
    rng.shuffle(seats)
    a, b = seats[0], seats[1]
    at = 2.0 + rng.below(61) / 10  # 2 to 8 s into the game
    later = at + 0.5 + rng.below(76) / 10  # 0.5 to 8 s after it
    breakers: tuple[FreezeBreaker, ...] = ()
    forks: tuple[Equivocation, ...] = ()
    if mix in ("fork_breaker", "vouch"):
        # b breaks its freeze on a; a forks later.
        breakers = (FreezeBreaker(b, a, at),)
        to = frozenset({b}) if mix == "vouch" else _others(rng, players, (a,))
        forks = (Equivocation(a, later, to),)
    elif mix == "two_forks":
        forks = (
            Equivocation(a, at, _others(rng, players, (a,))),
            Equivocation(b, later, _others(rng, players, (b,))),
        )
    elif mix == "mutual":
        breakers = (FreezeBreaker(a, b, at), FreezeBreaker(b, a, at + rng.below(11) / 10))
        forks = (Equivocation(a, later, _others(rng, players, (a,))),)
    else:
        raise ValueError(f"unknown mix {mix!r}; one of {', '.join(MIXES)}")
    faults = Faults(
        delay=0.001 + rng.random() * 0.02,
        jitter=rng.random() * 0.01,
        reorder=rng.random() * 0.2,
        loss=rng.random() * 0.05,
        duplicate=rng.random() * 0.05,
        equivocations=forks,
        deck_cheats=breaker_marks(breakers),
    )
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=1),
        faults=faults,
        peer=QUICK_TIMERS,
        max_time=MAX_TIME,
    )
    return config, breakers
