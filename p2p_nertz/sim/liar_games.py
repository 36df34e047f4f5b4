"""Seeded games with lying members (:mod:`p2p_nertz.sim.liars`) and what must hold of them.

:func:`game` draws, from a seed, a table of 2 to 4 players, one liar (two at 3-4 players when
asked), the lie of each (every :data:`~p2p_nertz.sim.liars.LIES` in turn unless fixed), when
it starts lying (0 to 8 s into the game; from the start for a lie whose field few events
carry, :data:`~p2p_nertz.sim.liars.SCARCE`) and how often, and a noisy network (delay,
jitter, reordering, a little loss and duplication; no partition, crash or freeze: the liar is
the only fault). :func:`simulate`
plays it and checks DESIGN.md §8 for the honest members
(:func:`~p2p_nertz.sim.invariants.check`, the liars counted as cheaters) and
:func:`check_liars`:

* the game ends within :data:`MAX_TIME` simulated seconds (no freeze) where an end is
  promised: at two players (the honest member abandons a liar it cannot drop, §9.3; unless
  it holds nothing of the liar's feed, whose join it refused: a member that never came) and where
  the honest members are a strict majority (two liars at four players are half: the base
  check's termination only); and the honest peers end alike
  (same final state, same scores; the base check's agreement, split and split brain);
* no honest member is dropped (but by the liars' votes alone: :func:`voted_out_by`), or
  refused an event (a violation), in any honest peer's final fold, and no audit error names
  an honest member (the base check's validity); at two players a liar's abandon of the
  honest member is an end, not a drop (:func:`abandoned_honest`);
* each lie the peers proved is proven by the audit: a violation of a liar's or a flap fault
  in an honest peer's final fold, or a fork of a liar's that the honest peers' logs hold, has
  an audit error naming that liar; and a liar an event of which an honest peer refused as a
  leap (``clock_jump``, the event's verdict and what it names, the same for every reader)
  has a ``clock_jump`` named by the audit of every log and by the audit of the liar's own log
  alone, which holds the event (:func:`leaps_named_alone`; session 43: the members refused a
  ``fetched_leap`` namer's event while the audit of its log named the forker's version
  alone); a refusal the peer took back, the event in its feed in the end (one naming a
  version it fetched since, §5.3), is no verdict (:func:`standing_leaps`, session 44);
* no honest member's runtime would stop waiting, the table gone (§9.9), before its game is
  over, where an end is promised (as above): a real node stops there, where the simulator
  notes the answer (``SimResult.gone``) and plays on; the two once parted over a member left
  alone in the game by a vote on proof (the real scan's seed 81: the node stopped, exit 3;
  the simulator played the round out);
* where asked (``scripts/soak.py --liars`` asks), a watcher of every member (docs/protocol.md
  §9.5), fed what their nodes push it as they push it, ends where the honest members that
  finished end, after the nodes' linger (:func:`~p2p_nertz.sim.invariants.watcher_ends`;
  session 41): the same lake and results, the same drops, over.

``scripts/soak.py --liars`` plays thousands of them; ``tests/test_sim_liars.py`` a few dozen.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import SHUFFLE_KINDS, Kind, Message, decode_message
from p2p_nertz.protocol.evidence import vote_unproven
from p2p_nertz.protocol.local import abandoned_by
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim.cheats import VoteFlapper
from p2p_nertz.sim.invariants import UNION_AGREEMENT, audit_alone, check, forks
from p2p_nertz.sim.liars import LIES, PACT_LIES, SCARCE, Liar, Lie, Pact, _State, install
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.mixes import noisy
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Partition, SimConfig
from p2p_nertz.sim.watching import Watched

if TYPE_CHECKING:
    from p2p_nertz.audit import AuditReport
    from p2p_nertz.protocol.gone import TableGone
    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.protocol.spec import GameSpec
    from p2p_nertz.sim.network import SimResult

__all__ = [
    "MAX_TIME",
    "READMIT_AFTER",
    "RESTORE_AFTER",
    "RETURNS",
    "LiarRun",
    "abandoned_honest",
    "check_liars",
    "game",
    "held_open",
    "holding_open",
    "judge_liars",
    "leaps_named_alone",
    "liars_majority",
    "owed_alone",
    "never_came",
    "standing_leaps",
    "nested_shuffle_proof",
    "simulate",
]

#: Simulated seconds a game with liars may take (one round at the bots' pace takes 15 to 25;
#: a liar voted out takes ``drop_after`` and a phase wait or two more).
MAX_TIME = 150.0

#: Simulated seconds a game goes on, its honest peers done, for them to hold as much of each
#: liar's feed as each other (:class:`_Simulation`).
GRACE = 5.0


class _Simulation(Watched):
    """A simulation whose liars are installed on start (and again on each restart), and
    which, once the honest peers are done, goes on until they hold as much of every liar's
    feed as each other, each of them with every event it holds final, for :data:`GRACE` at
    most: a liar's last event (a result signed after the end, say) may be final at one honest
    peer only, whose fold refused it, a violation the others' folds have not folded yet (soak
    seed 64: the honest ends differed by it)."""

    def __init__(self, config: SimConfig, liars: Sequence[Liar], *, watch: bool = False) -> None:
        self.liars = tuple(liars)  # (before the constructor installs the cheats)
        self.liar_states: dict[int, _State] = {}
        self.done_at: float | None = None
        super().__init__(config, watch=watch)

    def _done(self, now: float) -> bool:
        if not (super()._done(now) or self._abandoned(now)):
            self.done_at = None
            return False
        if self.done_at is None:
            self.done_at = now
        honest = [p for p in self.peers if p is not None and p.seat not in self._cheaters()]
        seats = range(len(self.peers))
        even = all(len({p.held(liar.seat) for p in honest}) == 1 for liar in self.liars) and all(
            p.events(q)[-1].lamport <= p.stable for p in honest for q in seats if p.events(q)
        )
        return even or now >= self.done_at + GRACE

    def _abandoned(self, now: float) -> bool:
        """Whether a game of two is over, settled, at the honest member, which a liar's
        abandon put out (:func:`abandoned_honest`: the base run waits for an honest member
        still in, and there is none)."""
        if len(self.peers) != 2:
            return False
        cheaters = self._cheaters()
        honest = [p for p in self.peers if p is not None and p.seat not in cheaters]
        return all(
            p.final.phase is Phase.OVER
            and not p.provisional
            and p.seat in abandoned_honest(p, cheaters, len(self.peers))
            and self._quiet(p)
            for p in honest
        ) and bool(honest)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        for liar in self.liars:
            if liar.seat == seat and peer is not None:
                self.liar_states[seat] = install(peer, liar, self.liar_states.get(seat))


def marks(liars: Sequence[Liar]) -> tuple[VoteFlapper, ...]:
    """Cheats that do nothing (no flap) but name each liar's seat among the run's cheaters
    (``Faults.cheaters``: the invariants hold cheaters to no honest rule)."""
    return tuple(VoteFlapper(liar.seat, (liar.seat + 1) % 2, flaps=0) for liar in liars)


#: Where a liar may begin to lie besides the game's start (``join``): ``restore``, from its
#: first chance after it is restored from its log; ``readmit``, after it was cut off long
#: enough to be voted out and came back, its rejoin and readmission among its chances.
RETURNS = ("restore", "readmit")

#: How long a liar is down before it is restored (:data:`RETURNS`), in simulated seconds:
#: under the peers' ``suspect_after`` (1 s), between it and ``drop_after`` (3 s), and past
#: ``drop_after`` (voted out, then back: a readmission too).
RESTORE_AFTER = (0.5, 2.0, 6.0)

#: How long a liar is cut off before it comes back to be readmitted: past ``drop_after``
#: (3 s), with and without the phase timeout (6 s) run out.
READMIT_AFTER = (5.0, 9.0)


def game(
    seed: int,
    *,
    players: tuple[int, int] = (2, 4),
    two: bool = False,
    lies: Sequence[Lie] = LIES,
    join: bool = False,
    back: str | None = None,
    deal: Deal = Deal.COMMIT,
    paired: bool = False,
) -> tuple[SimConfig, tuple[Liar, ...]]:
    """The seeded game of ``scripts/soak.py --liars`` for ``seed``: its configuration and its
    liars (one home, so that a test replays a soak's seed). ``two``: a second liar at 3 and 4
    players; ``lies``: the lies drawn from (seed by seed in turn, the second liar's at
    random); ``join``: every liar lies from its first chance on, its join and first beats
    among them (``--join``; the draw is the same, so a seed's table and lies are too).

    ``back`` (one of :data:`RETURNS`, session 36): every liar lies from its first chance
    after it comes back: ``restore``, crashed 1 to 5 s into the game and restored from its
    log a :data:`RESTORE_AFTER` later; ``readmit``, cut off from the others 1 to 5 s in for a
    :data:`READMIT_AFTER` (voted out for silence, or, at two players, abandoned), then heard
    again and readmitted at the next round (two rounds are played). The return's draws come
    from a generator of their own: a seed's table and lies are the same as without.

    ``deal``: how the game deals (session 42: the liars at a shuffle game's table too; the
    draws are the same). ``paired``: the second liar's lie is the one after the first's in
    ``lies``, not drawn (``--shuffle-forks``: one liar forks the deal, the other its vote on
    that fork; the draw is still made, so a seed's table is the same).
    """
    if back is not None and back not in RETURNS:
        raise ValueError(f"back is one of {RETURNS}, not {back!r}")
    rng = Rng(seed * 11 + 7_000_003)
    low, high = players
    n = low + rng.below(high - low + 1)
    seats = list(range(n))
    rng.shuffle(seats)
    count = 2 if two and n >= 3 else 1
    liars = []
    for i in range(count):
        lie = lies[seed % len(lies)] if i == 0 else rng.choice(lies)
        if i and paired:
            lie = lies[(seed + 1) % len(lies)]
        at, rate = rng.random() * 8.0, 0.1 + rng.random() * 0.5
        if lie in SCARCE or join:
            at, rate = 0.0, 1.0  # (its field is in one or two events of a round)
        liars.append(Liar(seats[i], lie, at=at, times=1 + rng.below(3), rate=rate, seed=seed))
    if any(x.lie in PACT_LIES for x in liars):  # (the liars of one table act together)
        pact = Pact()
        liars = [replace(x, pact=pact) if x.lie in PACT_LIES else x for x in liars]
    returns: dict[str, Any] = {}
    if back is not None:
        liars, returns = _coming_back(seed, back, liars, n)
    faults = noisy(
        rng,
        deck_cheats=marks(liars),
        **returns,
    )
    config = SimConfig(
        players=n,
        seed=seed,
        rules=Rules(target=None, rounds=2 if back == "readmit" else 1),
        faults=faults,
        peer=QUICK_TIMERS,
        max_time=MAX_TIME * (2 if back == "readmit" else 1),
        deal=deal,
    )
    return config, tuple(liars)


def _coming_back(
    seed: int, back: str, liars: list[Liar], players: int
) -> tuple[list[Liar], dict[str, Any]]:
    """Each liar's return (:func:`game`'s ``back``) as faults, and the liars lying from it on."""
    rng = Rng(seed * 13 + 9_000_011)
    crashes, partitions, lying = [], [], []
    for liar in liars:
        down = 1.0 + rng.random() * 4.0
        if back == "restore":
            after = RESTORE_AFTER[rng.below(len(RESTORE_AFTER))]
            crashes.append(Crash(liar.seat, down, restart_after=after))
        else:
            after = READMIT_AFTER[rng.below(len(READMIT_AFTER))]
            others = frozenset(range(players)) - {liar.seat}
            partitions.append(Partition(down, down + after, (frozenset({liar.seat}), others)))
        lying.append(replace(liar, at=down + after, rate=1.0))
    return lying, {"crashes": tuple(crashes), "partitions": tuple(partitions)}


@dataclass(slots=True)
class LiarRun:
    """A game with liars, played and checked (:func:`simulate`)."""

    result: SimResult
    #: lies each liar told, by seat (a liar may find no chance: a move lie in a game it left)
    told: dict[int, int]
    #: the liars holding play open at the end (:func:`held_open`: a known gap, not a
    #: violation, docs/protocol.md §13)
    held_open: tuple[int, ...] = ()


def simulate(config: SimConfig, liars: Sequence[Liar], *, watch: bool = False) -> LiarRun:
    """Run ``config`` with ``liars`` (``config``'s faults must list :func:`marks` of them) and
    check the invariants (:func:`check` and :func:`check_liars`); the run's violations leave
    out the end a liar holding play open stops (:func:`held_open`), which the run names.
    ``watch``: a watcher of every member too, held to
    :func:`~p2p_nertz.sim.invariants.watcher_ends` (``scripts/soak.py --liars`` always; a
    test of another invariant leaves it out: it costs ~30% more CPU, a fold of every event)."""
    missing = [liar.seat for liar in liars if liar.seat not in config.faults.cheaters]
    if missing:
        raise ValueError(f"liars not among the run's cheaters (marks): {missing}")
    sim = _Simulation(config, liars, watch=watch)
    result = sim.run()
    problems = check(result) + check_liars(result) + leaps_named_alone(result)
    problems += sim.watched_end(result)  # (the nodes' linger, read by the watcher alone)
    if liars_majority(config.players, config.faults.cheaters):
        problems = [p for p in problems if p != UNION_AGREEMENT] + owed_alone(result)
    holding = held_open(result)
    if holding or never_came(result.peers, config.faults.cheaters):
        problems = [p for p in problems if not p.startswith(("termination:", "freeze:"))]
    result.violations = problems
    told = {seat: state.told for seat, state in sim.liar_states.items()}
    return LiarRun(result, told, holding)


def liars_majority(players: int, cheaters: frozenset[int]) -> bool:
    """Whether the liars are a strict majority of the table (two of three): the one home of
    what the fuzzer holds such a game to (docs/protocol.md §9.3: with fewer than a strict
    majority of the members honest, nothing can be decided safely).

    What an honest member is owed there, and checked: it never forks, no honest peer's fold
    refuses or drops an honest member (but by the liars' votes alone), no audit names one,
    whether of every log or of its own log alone (:func:`owed_alone`), and a lie the peers
    prove the audit proves. Not promised: an end (:func:`judge_liars`), nor that the audit of
    every log, the liars' with the rest, reaches the honest member's state
    (:data:`~p2p_nertz.sim.invariants.UNION_AGREEMENT`): the liars' logs hold what they
    signed, and the union decides (two-liar ``claim_after_leave`` seeds 19, 23, 76, 156,
    161, 164, 171 and 197 at three players, session 38: both liars leave; the union drops
    one below its leave on the two votes against it, which its own votes, signed while cut
    off, cap the other way, a second fixed point of the caps that the honest member's folds
    do not take; the honest member winning alone by its view and sharing the win with that
    liar by the union's; docs/protocol.md §13). At half the table (two of four) the union's
    agreement is still checked: it holds there."""
    return 2 * len(cheaters) > players


def leaps_named_alone(result: SimResult) -> list[str]:
    """Each liar an event of which an honest peer of ``result`` refused as a leap
    (``SimResult.jumps``), the refusal standing (:func:`standing_leaps`): the audit of its
    own log alone, which holds its events, names a leap of it (``clock_jump``) as the members
    did: a reader of that log reaches the members' verdict on the same signed event (session
    43). One audit a liar so refused: most games have none."""
    cheaters = result.config.faults.cheaters
    leapt = standing_leaps(result.peers, result.jumps)
    refused = sorted({q for s, q in leapt if q in cheaters and s not in cheaters})
    if not refused:
        return []
    files = log_files(result)
    problems: list[str] = []
    for seat in refused:
        report = audit([LogSource.from_bytes(f"p{seat + 1}.log", files[seat])])
        if not any(f.kind is FindingKind.CLOCK_JUMP and f.seat == seat for f in report.errors):
            problems.append(
                f"split blame: the honest peers refused seat {seat}'s event as a leap and the "
                "audit of its own log names no leap of it (clock_jump)"
            )
    return problems


def standing_leaps(
    peers: Sequence[Peer | None], jumps: Collection[tuple[int, int, int | None, bytes | None]]
) -> set[tuple[int, int]]:
    """Of ``jumps`` (seat, author seat, seq and id of an event that seat's peer refused as a
    leap, ``SimResult.jumps``), (seat, author seat) of each refusal that stands: the peer's
    feed of the author (``peers`` by seat) does not hold that event in the end. A refusal is
    taken back where the peer delivered the event later (one naming a version of a forked
    feed it fetched since, docs/protocol.md §5.3): its verdict on that signed event is then
    the audit's too, and no leap is owed. Counted where the event or the peer is not known
    (``None``: a peer gone; a refusal that names no event), as before session 44, when the
    refusals did not name the event (and no liar's refusal taken back was met).

    >>> from types import SimpleNamespace as NS
    >>> peer = NS(events=lambda seat: [NS(id=b"a"), NS(id=b"b")])
    >>> sorted(standing_leaps([peer, None], {(0, 1, 2, b"b"), (0, 2, 2, b"x"), (1, 0, 1, b"a")}))
    [(0, 2), (1, 0)]
    """
    standing: set[tuple[int, int]] = set()
    for seat, author, seq, event_id in jumps:
        peer = peers[seat] if seat < len(peers) else None
        if peer is not None and seq is not None and event_id is not None:
            feed = peer.events(author)
            if 0 < seq <= len(feed) and feed[seq - 1].id == event_id:
                continue  # (taken back: delivered since)
        standing.add((seat, author))
    return standing


def owed_alone(result: SimResult) -> list[str]:
    """What each honest member of ``result`` is owed of its own log (:func:`liars_majority`):
    its audit alone names no honest member (never blamed by its own record)."""
    cheaters = result.config.faults.cheaters
    files = log_files(result)
    problems: list[str] = []
    for seat, peer in enumerate(result.peers):
        if peer is None or seat in cheaters:
            continue
        report = audit_alone(result, seat, files, deep=True)
        problems.extend(
            f"owed: the audit of seat {seat}'s own log names honest seat {f.seat}: {f}"
            for f in report.errors
            if f.seat not in cheaters
        )
    return problems


def held_open(result: SimResult) -> tuple[int, ...]:
    """The liars that hold play open at the end of an unfinished run (:func:`holding_open`
    of its peers)."""
    if result.finished:
        return ()
    return holding_open(result.peers, result.config.faults.cheaters)


def holding_open(peers: Sequence[Peer | None], cheaters: frozenset[int]) -> tuple[int, ...]:
    """The liars that hold play open in an unfinished game: every honest peer still in
    (``peers`` by seat, ``None`` for one gone) is in play, its final fold showing every honest
    member in play stuck and these liars in play and not stuck. No rule ends a round one
    member never passes in (a liar whose moves the table refuses, its own view of its tableau
    another, moves on for ever: docs/protocol.md §13, *A member that never passes*); empty if
    the game stopped otherwise. (The simulator's runs and the real nodes'
    (:mod:`p2p_nertz.testing.liar_nodes`) are judged by it alike.)"""
    holding: set[int] = set()
    for seat, p in enumerate(peers):
        if p is None or seat in cheaters or seat in p.final.dropped:
            continue
        final = p.final
        if final.phase is not Phase.PLAY or final.round.table is None:
            return ()
        table = final.round.table
        playing = [q for q, on in enumerate(table.active) if on]
        if any(not table.stuck[q] for q in playing if q not in cheaters):
            return ()
        open_by = {q for q in playing if q in cheaters and not table.stuck[q]}
        if not open_by:
            return ()
        holding |= open_by
    return tuple(sorted(holding))


def never_came(peers: Sequence[Peer | None], cheaters: frozenset[int]) -> bool:
    """Whether a game of two never began at its honest member: it holds nothing of the liar's
    feed, whose every event it refused (a join timed 2^33 ahead, a clock jump: ``--join``
    seed 60). The liar is a member that never came, and the one that came stops unheard
    (docs/protocol.md §9.9): no abandon is on offer before the game began, and no end is
    promised."""
    honest = [p for seat, p in enumerate(peers) if p is not None and seat not in cheaters]
    return (
        len(peers) == 2
        and bool(honest)
        and not any(p.events(c) for p in honest for c in cheaters)
        and all(p.final.phase is Phase.JOINING for p in honest)
    )


def abandoned_honest(peer: Peer, cheaters: frozenset[int], seats: int) -> set[int]:
    """The members that a liar's abandon, held by ``peer``, puts out. The fold cannot check
    that an abandon's target was gone (docs/protocol.md §9.3: nothing stops a player from
    abandoning a live opponent, and the game then ends on the rounds scored); a liar whose
    fold parted from the table's sees the honest member withhold what its own phase waits
    for, and its honest code abandons it (``--liars`` seeds 1209, 1293, 1405). An end, not a
    drop the invariants blame, at any table size: the fold takes an abandon only where its
    author and its target are the last two members (a game of three after a leave: two-liar
    seed 817)."""
    return {q for c in cheaters for q in abandoned_by(peer.events(c), seats)}


def nested_shuffle_proof(result: SimResult) -> bool:
    """Whether an honest peer of ``result`` holds a vote on proof of a fork of a vote whose
    own proof is a fork of a shuffle deal's event (``--shuffle-forks``' case). The outer vote
    carries the inner votes' signed parts, each naming its proof by digest alone; the whole
    inner vote, its proof beside it, is in the logs (a peer's copy of a version it gave up
    too). Only votes whose proof stands count (every fold's rule): a liar's vote may carry a
    proof whose signature does not verify (``quote_proof``), held by the honest members as
    its event, and decoding that proof raised and stopped the whole soak (session 44,
    ``--liars --lie quote_proof``, seed 0 at two players)."""
    spec = result.spec
    roster = frozenset(spec.peer_ids)
    cheaters = result.config.faults.cheaters
    whole: dict[bytes, Message] = {}
    for log in result.logs:
        for wire in log:
            m = decode_message(wire, game_id=spec.game_id, roster=roster)
            if m.kind is Kind.DROP:
                whole[m.id] = m
    for seat, peer in enumerate(result.peers):
        if peer is None or seat in cheaters:
            continue
        for q in range(spec.seats):
            for m in peer.events(q):
                for part in _proven_fork(m, spec):
                    full = whole.get(part.id)
                    inner = () if full is None else _proven_fork(full, spec)
                    if inner and all(p.kind in SHUFFLE_KINDS for p in inner):
                        return True
    return False


def _proven_fork(message: Message, spec: GameSpec) -> tuple[Message, ...]:
    """The two versions ``message`` proves a fork with, if it is a vote on proof whose proof
    stands (:func:`~p2p_nertz.protocol.evidence.vote_unproven`, every fold's rule), else
    ``()``."""
    if message.kind is not Kind.DROP:
        return ()
    body = parse_body(message.kind, message.body, spec.seats)
    if not (isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION):
        return ()
    if vote_unproven(body, game_id=spec.game_id, roster=spec.peer_ids, seats=spec.seats):
        return ()
    return tuple(decode_message(wire, bare=True) for wire in body.proof)  # (verified there)


def voted_out_by(final: GameState, cheaters: frozenset[int]) -> set[int]:
    """The members ``final`` drops on the liars' votes alone: every vote standing against
    them is a liar's. Where the liars are a majority of the others (two of three, two of
    four against an honest member), their votes drop an honest member as any majority's do
    (docs/protocol.md §9.2; two-liar seed 2026: both ``vote_ids`` liars voted seat 0 out for
    silence); nothing can be decided safely then (§9.3), and such a drop is no rule's fault."""
    return {
        q
        for q, ballots in final.roster.votes.items()
        if q in final.dropped and ballots and all(voter in cheaters for voter, _ in ballots)
    }


def check_liars(result: SimResult) -> list[str]:
    """The fuzzer's invariants beyond :func:`check` (the module docstring), on a run
    :func:`check` has audited."""
    cheaters = result.config.faults.cheaters
    honest = [s for s, p in enumerate(result.peers) if p and s not in cheaters]
    return judge_liars(
        result.peers,
        cheaters,
        finished=result.finished,
        time=result.time,
        report=result.audit,
        forked=forks(result, honest),
        gone=[(seat, gone) for _, seat, gone in result.gone],
        jumps=result.jumps,
    )


def judge_liars(
    peers: Sequence[Peer | None],
    cheaters: frozenset[int],
    *,
    finished: bool,
    time: float,
    report: AuditReport | None,
    forked: set[int],
    gone: Sequence[tuple[int, TableGone | None]] = (),
    jumps: Collection[tuple[int, int, int | None, bytes | None]] = (),
) -> list[str]:
    """:func:`check_liars` of a game however played: ``peers`` by seat (``None`` for one
    gone), whether it ``finished`` (by ``time``, seconds into it), the audit's ``report`` of
    every log, and the seats whose forks the honest peers' logs hold
    (:func:`~p2p_nertz.sim.invariants.forks`), and where a peer's runtime stopped waiting,
    the table gone (``gone``: seat and answer; a real node stops there, the simulator notes
    it and plays on), and ``jumps``: (seat, author seat, seq, id) of each event a peer
    refused as a leap (``SimResult.jumps``), counted where the refusal stands
    (:func:`standing_leaps`). The simulator's runs and the real nodes'
    (:mod:`p2p_nertz.testing.liar_nodes`) are judged by it alike."""
    players = len(peers)
    # (With two members the one left ends the game by an abandon; with liars at half the table
    # or more, nothing can be decided safely, docs/protocol.md §9.3: no end is promised, and
    # an honest node may then stop, the table gone: two-liar seed 2181. Nor at two members
    # where the honest one holds nothing of the liar's feed: a liar whose join no peer took,
    # refused, is a member that never came, and the one that came stops unheard, §9.9;
    # ``--join`` seed 60, a join timed 2^33 ahead, refused as a clock jump.)
    promised = (players == 2 and not never_came(peers, cheaters)) or 2 * len(cheaters) < players
    problems = [
        f"gone: seat {seat}'s node stops waiting, its game not over: {answer.why}"
        for seat, answer in gone
        if promised and answer is not None and seat not in cheaters and not answer.ended
    ]
    if not finished and promised:
        problems.append(f"freeze: not finished at t={time:.1f}s")
    proven: set[int] = set()
    for seat, p in enumerate(peers):
        if p is None or seat in cheaters:
            continue
        final = p.final
        excused = abandoned_honest(p, cheaters, players)  # (two left, whatever it began with)
        if not promised:  # (liars at half the table: a majority of the others)
            excused |= voted_out_by(final, cheaters)
        for q in sorted(final.dropped):
            if q not in cheaters and q not in excused:
                problems.append(f"honest dropped: seat {seat}'s final fold dropped seat {q}")
        for v in final.violations:
            if v.seat not in cheaters:
                problems.append(f"honest refused: seat {seat}'s fold refused seat {v.seat} {v}")
            else:
                proven.add(v.seat)
        proven |= {q for q in final.flaps.faults if q in cheaters}
    proven |= forked
    named = {f.seat for f in report.errors} if report is not None else set()
    problems.extend(
        f"unproven: the peers proved seat {q}'s lie and the audit names it in no error"
        for q in sorted(proven - named)
    )
    leapt = {f.seat for f in report.errors if f.kind is FindingKind.CLOCK_JUMP} if report else set()
    problems.extend(
        f"split blame: an honest peer refused seat {q}'s event as a leap and the audit names "
        "no leap of it (clock_jump)"
        for q in sorted(
            {q for s, q in standing_leaps(peers, jumps) if q in cheaters and s not in cheaters}
            - leapt
        )
    )
    return problems
