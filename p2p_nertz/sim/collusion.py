"""Two cheaters at once in the simulator: a freeze breaker beside a forker, and withholders.

Until session 25 the coverage term (``held_by``, docs/protocol.md §7.1) was not capped by a
voter's freeze: a voter whose beats announced a member's feed past the count of its vote still
covered those events at every other peer. With every other member holding them, that made
final events of the member past the voter's count; the member then dropped on proof (it
forks), the cut was the lowest count, below final events. It needs two cheaters, and no scan
had played them before session 25's (``scripts/scan_two_cheaters.py``), which broke most such
games; the term is now capped by every standing vote's freeze (§9.2, *the freeze on the
coverage term*; §13, *Two cheaters*; ``tests/test_sim_two_cheaters.py``).

A :class:`FreezeBreaker` is the first of the two, installed on its seat's core as the
simulator installs a shuffle cheat (:func:`install`, again on each restart): at ``at`` it
votes ``target`` out for silence (a modified client that claims it no longer hears it; the
others hear it and never join), never withdraws that vote, and announces, in its beats and
its events' frontiers, every event of ``target`` it holds, past its vote (an honest voter
announces no more than its count, §9.2). The second is a :class:`~p2p_nertz.sim.Equivocation`
of ``target``. A :class:`Withholder` sends one member nothing of its own (the others relay
its events there), beside another withholder or a forker; run as links, withholders are links
that fail one way for a while, and a :class:`LateVote` is an honest member's silence timer
firing at a set time behind one (docs/protocol.md §9.2, *a vote for silence that never
ends*; ``tests/test_sim_vote_never_ends.py``). :func:`simulate` runs a game with
them and checks DESIGN.md §8 for the honest members; :func:`breaker_marks` lists each cheat's
seat among the run's cheaters, so that the invariants do not hold it to the honest rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import DropReason, EventBody, Reveal, RevealWhat
from p2p_nertz.protocol.effects import Effect, Send
from p2p_nertz.protocol.membership import _announced, waits_for
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim.cheats import VoteFlapper
from p2p_nertz.sim.mixes import noisy
from p2p_nertz.sim.network import QUICK_TIMERS, Equivocation, SimConfig, Simulation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from p2p_nertz.protocol.author import Author
    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.sim.network import SimResult

__all__ = [
    "MIXES",
    "FreezeBreaker",
    "LateVote",
    "RevealWithholder",
    "Withholder",
    "breaker_marks",
    "game",
    "install",
    "simulate",
]

#: The mixes of two cheaters :func:`game` draws (``scripts/scan_two_cheaters.py``).
MIXES = ("fork_breaker", "vouch", "two_forks", "mutual", "two_withhold", "withhold_fork")

#: Simulated seconds a :func:`game` may take (``vouch`` seed 0 with its fork alone ends at
#: 10.6 s; a stalled game would otherwise refuse its honest members' moves for minutes).
MAX_TIME = 120.0


@dataclass(frozen=True, slots=True)
class Withholder:
    """Seat ``seat`` sends member ``victim`` nothing of its own from ``at`` on (no event, beat,
    ack or answer), up to ``until`` if given: it talks to every other member as usual, and
    ``victim`` has its events only as the others relay them. (As a link, ``simulate(...,
    links=True)``: the connection from ``seat`` to ``victim`` fails over that span; two, one
    each way, fail the link both ways.)"""

    seat: int
    victim: int
    at: float = 0.0
    until: float | None = None

    def cuts(self, seat: int, now: float) -> bool:
        """Whether ``seat``'s sends to the victim are left out at ``now``."""
        return seat == self.seat and now >= self.at and (self.until is None or now < self.until)


@dataclass(frozen=True, slots=True)
class FreezeBreaker:
    """Seat ``seat`` votes ``target`` out for silence (or ``reason``: *withheld*, a vote no
    majority joins, docs/protocol.md §9.2, *a vote withheld that never ends*) at ``at``
    (simulated seconds), never withdraws it, and announces all it holds of ``target``'s feed
    past its vote (``breaks``; else it keeps its freeze, announcing no more than its vote
    counts, as an honest voter)."""

    seat: int
    target: int
    at: float
    breaks: bool = True
    reason: DropReason = DropReason.SILENT


@dataclass(frozen=True, slots=True)
class RevealWithholder:
    """Seat ``seat`` signs no reveal of its secret (docs/protocol.md §8.8), or only ``late``
    simulated seconds after its final fold entered ``reveal``, and (``votes``) once its final
    fold is in ``reveal`` votes every other member out *withheld* at once, never withdrawing:
    the two sides of a fold parted over a Nerts call at once, the honest majority waiting in
    ``reveal`` for its reveal while its votes freeze its announcements of theirs. Without
    ``votes``, a member slow to reveal (a slow machine, not a liar)."""

    seat: int
    late: float | None = None
    votes: bool = True


@dataclass(frozen=True, slots=True)
class LateVote:
    """Seat ``seat``'s honest core votes ``target`` out for silence at ``at``, as its timer
    does when it has heard nothing of ``target`` for ``drop_after`` (a link from ``target``
    failing while ``target`` signs nothing for that long); nothing else of it changes: it
    withdraws the vote when it hears ``target`` again (docs/protocol.md §9.2). Not a cheat.

    With ``phase``: the vote is *withheld*, on ``target``'s event of that phase, cast at the
    first tick from ``at`` on where its final phase is ``phase`` and waits for ``target``, as
    the phase timer does when that wait began ``phase_timeout`` earlier; withdrawn, as the
    honest code does, once the event is held (``Membership.withheld_relieved``)."""

    seat: int
    target: int
    at: float
    phase: Phase | None = None


def breaker_marks(
    cheats: Sequence[FreezeBreaker | Withholder | RevealWithholder],
) -> tuple[VoteFlapper, ...]:
    """Cheats that do nothing (no flap) but name each cheat's seat among the run's cheaters
    (``Faults.cheaters``: the invariants hold cheaters to no honest rule): put them in
    ``Faults.deck_cheats``."""
    return tuple(VoteFlapper(c.seat, _other(c), flaps=0) for c in cheats)


def _other(cheat: FreezeBreaker | Withholder | RevealWithholder) -> int:
    """A member other than the cheat's (the mark's target: it flaps nothing)."""
    if isinstance(cheat, FreezeBreaker):
        return cheat.target
    return cheat.victim if isinstance(cheat, Withholder) else (cheat.seat + 1) % 2


def install(peer: Peer, cheat: FreezeBreaker | LateVote | RevealWithholder) -> None:
    """Make ``peer`` (``cheat.seat``'s core) break its freeze on ``cheat.target`` from now on,
    or vote it out once (a :class:`LateVote`), or withhold its reveal (a
    :class:`RevealWithholder`) (the simulator's cheat reaches into the core on purpose, as
    :mod:`p2p_nertz.sim.cheats`)."""
    if isinstance(cheat, RevealWithholder):
        _withhold_reveal(peer, cheat)
        return
    author = peer._author
    membership = author.membership
    honest_liveness = author.liveness
    once = isinstance(cheat, LateVote)
    reason = cheat.reason if isinstance(cheat, FreezeBreaker) else DropReason.SILENT
    done: list[bool] = []

    def liveness(now: float) -> None:
        honest_liveness(now)
        final = author.final
        if now < cheat.at or author.left or cheat.target in membership.voted or done:
            return
        if cheat.target in final.dropped or peer.seat in final.dropped:
            return
        if isinstance(cheat, LateVote) and cheat.phase is not None:
            if final.phase is cheat.phase and cheat.target in waits_for(final):
                done.append(True)
                _phase_vote(author, cheat.target, now)
            return
        if once:
            done.append(True)  # (and withdrawn as the honest code does)
        else:
            membership.proven_seats.add(cheat.target)  # never withdrawn when heard again
        author.vote(cheat.target, reason, now)

    author.liveness = liveness
    if isinstance(cheat, LateVote) or not cheat.breaks:
        return

    def frontier(feeds: Sequence[Sequence[object]], dropped: dict[int, int]) -> tuple[int, ...]:
        # Every feed's length, as if no vote of ours froze any (past a final drop's cut as
        # an honest member: the lie is the freeze alone).
        held = _announced(feeds, {}, dropped, peer.seat)
        for q, h in enumerate(held):
            membership.announced_held[q] = max(membership.announced_held[q], h)
        return tuple(held)

    membership.frontier = frontier


def _phase_vote(author: Author, target: int, now: float) -> None:
    """``author``'s vote *withheld* on ``target``'s event of its final phase, as
    ``Membership.withholding`` casts it (withdrawn once the event is held)."""
    membership = author.membership
    if Awaited.of(author.final, target).held_in(author.chains.folds.tentative):
        return
    membership.proven_seats.add(target)
    membership.phase_votes[target] = (now, Awaited.of(author.final, target))
    author.vote(target, DropReason.WITHHELD, now)


def _withhold_reveal(peer: Peer, cheat: RevealWithholder) -> None:
    """:class:`RevealWithholder` on ``peer``'s core."""
    author = peer._author
    duties, membership = author.duties, author.membership
    honest_event, honest_liveness = duties.phase_event, author.liveness
    since: list[float] = []  # (when our final fold entered reveal)

    def phase_event(
        final: GameState, ready_through: int | None, tentative: GameState | None = None
    ) -> EventBody | None:
        body = honest_event(final, ready_through, tentative)
        secret = isinstance(body, Reveal) and body.what is RevealWhat.SECRET
        return None if secret else body

    def liveness(now: float) -> None:
        final = author.final
        if final.phase is Phase.REVEAL and not since:
            since.append(now)
        honest_liveness(now)
        late = cheat.late
        if since and late is not None and now >= since[0] + late and not author.left:
            body = honest_event(author.final, None)  # (the reveal, late; None once signed)
            if isinstance(body, Reveal) and body.what is RevealWhat.SECRET:
                author.sign(body, None)
        if not since or not cheat.votes or author.left or peer.seat in final.dropped:
            return
        for q in range(peer.spec.seats):
            if q != peer.seat and q not in membership.voted and q not in final.dropped:
                membership.proven_seats.add(q)  # never withdrawn
                author.vote(q, DropReason.WITHHELD, now)

    duties.phase_event = phase_event
    author.liveness = liveness


class _Simulation(Simulation):
    """A simulation whose freeze breakers (and late votes) are installed on start and on each
    restart, and whose withholders' sends to their victims are left out."""

    def __init__(
        self,
        config: SimConfig,
        breakers: Sequence[FreezeBreaker | LateVote | RevealWithholder],
        withholders: Sequence[Withholder] = (),
    ) -> None:
        self.breakers = tuple(breakers)  # (before the constructor installs the cheats)
        self.withholders = tuple(withholders)
        super().__init__(config)

    def _apply(self, seat: int, effects: list[Effect], now: float, cut: int | None = None) -> bool:
        victims = {w.victim for w in self.withholders if w.cuts(seat, now)}
        if victims:
            ids = self.spec.peer_ids
            others = [ids[q] for q in range(len(ids)) if q != seat and q not in victims]
            kept: list[Effect] = []
            for effect in effects:
                if not isinstance(effect, Send):
                    kept.append(effect)
                elif effect.to is None:
                    kept.extend(Send(effect.data, to) for to in others)
                elif self.spec.seat_of(effect.to) not in victims:
                    kept.append(effect)
            effects = kept
        return super()._apply(seat, effects, now, cut)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        for cheat in self.breakers:
            if cheat.seat == seat and peer is not None:
                install(peer, cheat)


def simulate(
    config: SimConfig,
    cheats: Sequence[FreezeBreaker | Withholder | LateVote | RevealWithholder],
    *,
    links: bool = False,
) -> SimResult:
    """Run ``config`` with ``cheats`` (breakers installed, withholders withholding) and check
    the invariants (``config``'s faults must list :func:`breaker_marks` of them, so that they
    count as cheaters). ``links``: the withholders are no cheaters but links that fail one
    way (the withholder's connection to its victim, docs/protocol.md §4.7), and the late votes
    an honest member's timer, every member held to the honest members' rules (``config`` marks
    none of them)."""
    from p2p_nertz.sim.invariants import check

    marked = set(config.faults.cheaters)
    if links:
        if marked or any(isinstance(c, FreezeBreaker) for c in cheats):
            raise ValueError("a run of failing links has no cheater")
    else:
        missing = [c.seat for c in cheats if c.seat not in marked and not isinstance(c, LateVote)]
        if missing:
            raise ValueError(f"cheaters not among the run's (breaker_marks): {missing}")
    breakers = [c for c in cheats if isinstance(c, FreezeBreaker | LateVote | RevealWithholder)]
    withholders = [c for c in cheats if isinstance(c, Withholder)]
    result = _Simulation(config, breakers, withholders).run()
    result.violations = check(result)
    return result


def _others(rng: Rng, players: int, but: Sequence[int]) -> frozenset[int]:
    """A random non-empty set of seats, none of ``but``."""
    seats = [s for s in range(players) if s not in but]
    rng.shuffle(seats)
    return frozenset(seats[: 1 + rng.below(len(seats))])


def game(
    mix: str, seed: int, low: int, high: int
) -> tuple[SimConfig, tuple[FreezeBreaker | Withholder, ...]]:
    """The seeded game of ``mix`` (:data:`MIXES`, ``scripts/scan_two_cheaters.py``) for
    ``seed``, at ``low`` to ``high`` players: its configuration and its freeze breakers and
    withholders (one home, so that a test replays a scan's seed)."""
    rng = Rng(seed * 7 + 5_000_011 + MIXES.index(mix))
    players = low + rng.below(high - low + 1)
    seats = list(range(players))
    rng.shuffle(seats)
    a, b = seats[0], seats[1]
    at = 2.0 + rng.below(61) / 10  # 2 to 8 s into the game
    later = at + 0.5 + rng.below(76) / 10  # 0.5 to 8 s after it
    breakers: tuple[FreezeBreaker | Withholder, ...] = ()  # (and withholders)
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
    elif mix == "two_withhold":
        # a withholds from one member, b from another (a third member relays to each).
        breakers = (Withholder(a, seats[2], at), Withholder(b, seats[-1], later))
    elif mix == "withhold_fork":
        # b withholds from a third member; a forks later, its second version to it alone.
        breakers = (Withholder(b, seats[2], at),)
        forks = (Equivocation(a, later, frozenset({seats[2]})),)
    else:
        raise ValueError(f"unknown mix {mix!r}; one of {', '.join(MIXES)}")
    faults = noisy(
        rng,
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
