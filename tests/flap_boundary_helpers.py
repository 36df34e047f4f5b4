"""A flapper timed against a round's end, for ``tests/test_flaps_boundary.py``.

:class:`BoundaryFlapper` signs its flaps (a vote for silence against ``target`` and its
withdrawal, back to back in one input: one withdrawal each, nothing the honest code withdraws
for it) at chosen points of the game: ``before`` of them in round 1's play, one every
``every`` seconds from ``start``, then ``after`` of them at once at ``when`` (:class:`When`).
:class:`BoundarySim` installs it on its seat (on start and on each restart), and the seat is a
cheater to the invariants (its :class:`~p2p_nertz.sim.cheats.VoteFlapper` marker signs
nothing). :class:`LateFlaps` holds the withdrawals it signs at ``when`` at every receiver
until the receiver's tentative fold has ended round 1 (bounded): the peers see the round end
before those withdrawals, whatever their place in the order.

:func:`reference_fault` is what the fault must be, worked out from the signed events alone
(their order and the event that ended round 1), not by :mod:`p2p_nertz.protocol.flaps`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from p2p_nertz.protocol.bodies import Drop, DropReason, EventBody, Result, parse_body
from p2p_nertz.protocol.envelope import InvalidMessageError, Kind, decode_unverified
from p2p_nertz.protocol.flaps import FLAP_LIMIT
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.sim.network import Schedule, SimConfig, SimResult, Simulation

_W = DropReason.WITHDRAW


class When(enum.Enum):
    """Where the flapper signs its last ``after`` flaps."""

    #: once its tentative fold has left round 1's play (a Nerts call), before its result
    NERTS = "nerts"
    #: right before its own round-1 result, signed once it holds every other member's
    #: (its result ends round 1 in every fold: the flapper's feed ends the round)
    BEFORE_OWN_END = "before-own-end"
    #: right after that last result of its own (the first events of round 2 in every fold)
    AFTER_OWN_END = "after-own-end"
    #: right after its own round-1 result, signed as soon as its final fold asks for it
    #: (others' results may come before or after them in the order)
    AFTER_OWN_RESULT = "after-own-result"
    #: once its final fold is in round 2
    ROUND_TWO = "round-two"


@dataclass(frozen=True, slots=True)
class BoundaryFlapper:
    """The cheat (module docstring). ``out``: that many flaps more, at once, when its final
    fold first has it dropped (those withdrawals never count: past its cut, or in the gap
    its readmission leaves)."""

    seat: int
    target: int
    before: int
    after: int
    when: When
    every: float = 0.05
    start: float = 0.5
    out: int = 0


@dataclass(slots=True)
class _Flapping:
    """What one process of the flapper has done."""

    before: int = 0
    due: float = 0.0
    fired: bool = False
    pending: bool = False  # (AFTER_OWN_*: sign at the end of this input)
    withdrawals: list[int] = field(default_factory=list)  # (the seqs at ``when``)
    out: list[int] = field(default_factory=list)  # (the seqs signed while out)


def install(peer: Peer, cheat: BoundaryFlapper) -> _Flapping:
    """Make ``peer`` flap as ``cheat`` says (the simulator's cheats reach into the core on
    purpose, as :mod:`p2p_nertz.sim.cheats` does)."""
    author = peer._author
    duties = author.duties
    honest_liveness, honest_phase_event = author.liveness, duties.phase_event
    done = _Flapping(due=cheat.start)

    def flap(now: float | None) -> int:
        held = len(author.feeds[cheat.target])
        author.sign_vote(cheat.target, held, DropReason.SILENT, now)
        author.sign(Drop((), cheat.target, 0, _W), now)
        return len(author.feeds[cheat.seat])

    def burst(now: float | None) -> None:
        done.fired, done.pending = True, False
        done.withdrawals += [flap(now) for _ in range(cheat.after)]

    def liveness(now: float) -> None:
        honest_liveness(now)
        final = author.final
        if author.left or cheat.target in final.dropped:
            return
        if cheat.seat in final.dropped:
            if cheat.out and not done.out:
                done.out = [flap(now) for _ in range(cheat.out)]
            return
        if done.before < cheat.before:
            if now >= done.due and final.round.number == 1 and final.phase is Phase.PLAY:
                flap(now)
                done.before += 1
                done.due = now + cheat.every
            return
        if done.fired:
            return
        if done.pending or _due(cheat.when, author.chains.folds.tentative, final):
            burst(now)

    def phase_event(
        final: GameState, ready_through: int | None, tentative: GameState | None = None
    ) -> EventBody | None:
        body = honest_phase_event(final, ready_through, tentative)
        if not isinstance(body, Result) or body.round != 1 or done.fired:
            return body
        if cheat.when is When.AFTER_OWN_RESULT and done.before >= cheat.before:
            done.pending = True
        elif cheat.when in (When.BEFORE_OWN_END, When.AFTER_OWN_END):
            held = author.chains.folds.tentative
            owed = held.round.seats - held.round.results - set(held.dropped) - {cheat.seat}
            if held.round.number == 1 and owed:
                return None  # (not yet: every other member's result first)
            if cheat.when is When.BEFORE_OWN_END:
                burst(None)
            else:
                done.pending = True
        return body

    author.liveness = liveness
    duties.phase_event = phase_event
    return done


def _due(when: When, tentative: GameState, final: GameState) -> bool:
    if when is When.NERTS:
        return tentative.round.number == 1 and tentative.phase is not Phase.PLAY
    if when is When.ROUND_TWO:
        return final.round.number >= 2
    return False


class BoundarySim(Simulation):
    """A run with :class:`BoundaryFlapper` ``flapper`` installed on its seat."""

    def __init__(
        self, config: SimConfig, flapper: BoundaryFlapper, schedule: Schedule | None = None
    ) -> None:
        self.flapper = flapper
        self.flapping: list[_Flapping] = []
        super().__init__(config, schedule)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        if seat == self.flapper.seat and peer is not None:
            self.flapping.append(install(peer, self.flapper))


@dataclass(slots=True)
class LateFlaps:
    """A :class:`~p2p_nertz.sim.network.Schedule`: the flapper's withdrawals signed at its
    ``when`` wait at each receiver until its tentative fold has ended round 1, for at most
    ``bound`` seconds after first offered. ``late``: the receivers that took one so,
    ``(seat, seq)``."""

    deaf: int | None = None
    deaf_for: float = 0.5
    split: tuple[frozenset[int], ...] = ()
    split_for: float = 0.5
    bound: float = 2.0
    late: set[tuple[int, int]] = field(default_factory=set)
    deaf_at: float | None = None
    split_at: float | None = None
    _offered: dict[bytes, float] = field(default_factory=dict)

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        assert isinstance(sim, BoundarySim)
        if seat == self.deaf and self._deaf(sim, seat, now):
            return True
        flapper = sim.flapper.seat
        marked = {s for f in sim.flapping for s in f.withdrawals}
        if self.split and marked and self._split(sim, seat, data, now):
            return True
        if seat == flapper or not marked:
            return False
        try:
            message = decode_unverified(
                data, game_id=sim.spec.game_id, roster=sim.spec.peer_ids, cache=sim.envelopes
            )
        except InvalidMessageError:
            return False
        if message.kind is not Kind.DROP or sim.spec.seat_of(message.author) != flapper:
            return False
        if message.seq not in marked:
            return False
        receiver = sim.peers[seat]
        if receiver is None:
            return False
        ended = receiver.tentative.round.number >= 2
        first = self._offered.setdefault(message.id + bytes([seat]), now)
        if not ended and now - first < self.bound:
            return True
        if ended and receiver.held(flapper) < message.seq:
            self.late.add((seat, message.seq))
        return False

    def _split(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        """Whether ``data`` crosses the partition ``split`` while it lasts: ``split_for``
        seconds from when the flapper signed its withdrawals at ``when``."""
        if self.split_at is None:
            self.split_at = now
        if now - self.split_at >= self.split_for:
            return False
        try:
            message = decode_unverified(
                data, game_id=sim.spec.game_id, roster=sim.spec.peer_ids, cache=sim.envelopes
            )
        except InvalidMessageError:
            return False
        sender = sim.spec.seat_of(message.author)
        return not any(seat in group and sender in group for group in self.split)

    def _deaf(self, sim: Simulation, seat: int, now: float) -> bool:
        """Whether ``seat`` hears nothing now: for ``deaf_for`` seconds from when its
        tentative fold holds every reveal of round 1 and its final fold does not (it has
        announced them; it signs its result only once it hears again)."""
        peer = sim.peers[seat]
        if peer is None:
            return False
        if self.deaf_at is None:
            held = peer.tentative
            if held.round.number != 1 or held.phase is not Phase.RESULT:
                return False
            if peer.final.phase is Phase.RESULT:
                return False
            self.deaf_at = now
        return now - self.deaf_at < self.deaf_for


def withdrawals(result: SimResult, seat: int, target: int) -> list[tuple[int, int, int]]:
    """The order keys ``(lamport, seat, seq)`` of ``seat``'s withdrawals against ``target``, as
    the longest feed of it any peer holds has them."""
    feed = max((p.events(seat) for p in result.peers if p is not None), key=len, default=[])
    keys = []
    for message in feed:
        if message.kind is not Kind.DROP:
            continue
        body = parse_body(message.kind, message.body, result.spec.seats)
        if isinstance(body, Drop) and body.reason is _W and body.seat == target:
            keys.append((message.lamport, seat, message.seq))
    return keys


def round_ends(result: SimResult, final: GameState) -> list[tuple[int, int, int]]:
    """The order key of the event that ended each past round of ``final``, in order: the
    last of the round's results in the order (every round here ends on one)."""
    ends = []
    for rs in final.past_rounds:
        keys = []
        for seat, seq in rs.result_seqs:
            feed = max((p.events(seat) for p in result.peers if p is not None), key=len)
            keys.append((feed[seq - 1].lamport, seat, seq))
        ends.append(max(keys))
    return ends


def reference_fault(
    keys: list[tuple[int, int, int]],
    ends: list[tuple[int, int, int]],
    out: tuple[int, tuple[int, int, int]] | None = None,
) -> int | None:
    """The flap fault the signed events prove, worked out without :mod:`protocol.flaps
    <p2p_nertz.protocol.flaps>`: the seq of the first withdrawal past the limit counted in
    one round, ``keys`` being one member's withdrawals against one member (order keys), each
    in the round whose end (``ends``, in order) it precedes, or the last. ``out``: ``(cut,
    back)``, the member dropped at its event ``cut`` and readmitted at the round that began
    with the event ``back``: its withdrawals past the cut ordered before ``back`` count
    nowhere."""
    rounds: dict[int, list[int]] = {}
    for key in sorted(keys):
        if out is not None and key[2] > out[0] and key < out[1]:
            continue
        number = sum(end < key for end in ends)
        rounds.setdefault(number, []).append(key[2])
        if len(rounds[number]) > FLAP_LIMIT:
            return key[2]
    return None
