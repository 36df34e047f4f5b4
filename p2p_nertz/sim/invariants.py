"""The invariants of DESIGN.md §8, checked on a finished simulation.

* **Termination** — every live peer that was not dropped finished the game.
* **Agreement** — those peers hold the same final state (digest), totals and round results.
* **No split brain** — no two peers, dropped ones included, finalized different results for a
  round they both finished, nor different drops where both made final the point of the order
  it was decided at (:func:`_split`: a game whose groups of peers part there never finishes
  for one of them, and only the peers that finished are compared for agreement).
* **No loss** — every event of every counted feed is held by every surviving peer.
* **Validity and conservation** — the real audit (:func:`p2p_nertz.audit.audit`, deep) reads
  every peer's log as ``nertz audit`` would: it must find no error but against a cheater, and
  reach the same state as the peers; it replays every round with every deck known (from the
  revealed secrets, :func:`~p2p_nertz.protocol.state.replay_round`): each move is legal with
  the real cards, and each player's cards are all somewhere exactly once after every move.
  The game the logs hold is the audit's (:func:`audit_logs`; its report's ``state`` for tests
  and tools): the simulator keeps no fold of its own, so that which events count has one rule,
  the players' (:class:`~p2p_nertz.protocol.folds.Folds`), and one outside reader.

Each failed check is one line in the returned list, naming the seat, the round and the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from p2p_nertz.audit import AuditReport, LogSource, audit
from p2p_nertz.protocol.envelope import InvalidMessageError, decode_message
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.sim.logfiles import log_files

if TYPE_CHECKING:
    from p2p_nertz.protocol.envelope import EnvelopeCache
    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.protocol.spec import GameSpec
    from p2p_nertz.sim.network import SimResult

__all__ = ["UNION_AGREEMENT", "audit_logs", "check", "outcomes", "settled", "watcher_ends"]

#: The problem :func:`check` reports where the audit of every log reaches another state than
#: the honest peers that finished (a guarantee a liars' majority cannot be held to:
#: :func:`p2p_nertz.sim.liar_games.liars_majority`).
UNION_AGREEMENT = "agreement: an audit of every log reaches another state"


def outcomes(result: SimResult) -> set[str]:
    """Which membership faults a run saw, by any peer's final fold: ``drop`` (a member voted
    out), ``abandon`` (a two-member game ended by an abandon), ``rejoin`` (a dropped member
    readmitted), ``provisional`` (a result still provisional at the end)."""
    seen: set[str] = set()
    for p in result.peers:
        if p is None:
            continue
        final = p.final
        if final.abandoned is not None:
            seen.add("abandon")
        if p.provisional:
            seen.add("provisional")
        if final.readmitted_at or final.rejoining:
            seen.add("rejoin")
        absent = final.abandoned[1] if final.abandoned is not None else None
        if any(s != absent and s not in final.left for s in final.dropped) or final.gaps:
            seen.add("drop")
    return seen


def forks(result: SimResult, among: Iterable[int] | None = None) -> set[int]:
    """Seats that signed two different events under one seq, as the logs show (the logs of
    the seats ``among`` only, if given: a fork whose other version reached only a member
    dropped before it woke, or nobody, is proven by no member still in)."""
    return {seat for seat, _ in forked_events(result, among)}


def forked_events(result: SimResult, among: Iterable[int] | None = None) -> set[tuple[int, int]]:
    """The (seat, seq) of every event signed in two versions, as the logs show (of the seats
    ``among`` only, if given: :func:`forks`)."""
    logs = result.logs if among is None else [result.logs[seat] for seat in among]
    return forked_in(logs, result.spec, result.envelopes)


def forked_in(
    logs: Iterable[Iterable[bytes]], spec: GameSpec, cache: EnvelopeCache | None = None
) -> set[tuple[int, int]]:
    """The (seat, seq) of every event of ``spec``'s game signed in two versions among the
    messages ``logs`` hold (a real node's log read too: :mod:`p2p_nertz.testing.liar_nodes`)."""
    seen: dict[tuple[bytes, int], bytes] = {}
    forked: set[tuple[int, int]] = set()
    seats = {pid: s for s, pid in enumerate(spec.peer_ids)}
    for log in logs:
        for wire in log:
            try:
                message = decode_message(wire, game_id=spec.game_id, roster=seats, cache=cache)
            except InvalidMessageError:
                continue
            key = (message.author, message.seq)
            if seen.setdefault(key, message.id) != message.id:
                forked.add((seats[message.author], message.seq))
    return forked


def _final_count(peer: Peer, author: int) -> int:
    """How many of ``author``'s events are final at ``peer`` (their times increase along the
    feed)."""
    return sum(1 for m in peer.events(author) if m.lamport <= peer.stable)


def _can_end(peer: Peer, able: set[int]) -> bool:
    """Whether the protocol can end this game for ``peer``, with the seats in ``able`` alive
    and honest: a strict majority of the members still in by the votes it holds must be (they
    vote the others out, and all those drops become final together, §7.4), or its final fold
    must have two members left, one of them able (it abandons the other, §9.3). With fewer, no
    drop can be decided, and a drop not final cannot be the ground for an abandon (a member
    never heard again may have voted or withdrawn before it, in the order: soak seeds 1315,
    1520); a lone honest member with a cheater and a member gone for good waits (seed 224), and
    so does one whose held votes leave it alone with a member gone for good that was needed to
    make those drops final (``--variants`` seed 98, docs/protocol.md §13)."""
    final = peer.final
    members = [q for q in range(final.spec.seats) if q not in peer.tentative.dropped]
    ready = [q for q in members if q in able]
    left = [q for q in range(final.spec.seats) if q not in final.dropped]
    return len(ready) * 2 > len(members) or (len(left) == 2 and any(q in able for q in left))


_Seats = list[tuple[int, "Peer"]]  # (seat, peer) pairs


def check(result: SimResult) -> list[str]:
    """Check every invariant on a finished run; returns one line per violation."""
    cheaters = result.config.faults.cheaters
    peers = _honest(result)
    counted = [(seat, p) for seat, p in peers if seat not in p.final.dropped]
    finished = _finished(counted)
    problems = _forks_dropped(result, peers)
    problems += _termination(result, peers, counted)
    problems += _agreement(finished)
    problems += _no_split_brain(peers)
    problems += _split(peers)
    problems += _no_loss(result, peers, counted)
    problems += _no_honest_flaps(peers, cheaters)
    # Validity and conservation, from the logs alone: the real audit reads every log, as
    # `nertz audit` would, and replays every finished round with every deck known (deep).
    report = result.audit = audit_logs(result)
    # (A cheater's own faults are evidence against it, not a fault of the protocol.)
    problems.extend(f"validity: {f}" for f in report.errors if f.seat not in cheaters)
    if finished and report.digest != finished[0][1].final.digest():
        problems.append(UNION_AGREEMENT)
    return problems


def settled(result: SimResult) -> list[GameState]:
    """The final folds of the honest peers still in that finished the game on a settled
    result, in seat order: the peers the agreement check holds to one state, and the audit of
    every log to it (the reference, independent of the audit, that its tests compare with)."""
    peers = _honest(result)
    counted = [(seat, p) for seat, p in peers if seat not in p.final.dropped]
    return [p.final for _, p in _finished(counted)]


def watcher_ends(final: GameState, ends: Sequence[str]) -> list[str]:
    """A watcher of every member (docs/protocol.md §9.5), fed what their nodes push it, ends
    where the honest members that finished end (``final``: its final fold): over, on the same
    state (the lake, the results, the drops: :meth:`GameState.digest`). ``ends``: those
    members' digests at the game's end (:func:`settled`); the watcher is read after the
    nodes' linger (a member left alone at the end acks the last events then: spect40, session
    40). Nothing is asked of a watcher where no honest member finished (a freeze is the
    peers' fault, told by :func:`check`)."""
    if not ends:
        return []
    if final.phase is not Phase.OVER:
        return [
            f"watcher: stalled at {final.phase.value}, round {final.round.number}, where the "
            f"honest members are over"
        ]
    if final.digest() not in ends:
        return [f"watcher: ends on another state than the honest members: {final.game.result}"]
    return []


def _honest(result: SimResult) -> _Seats:
    """The peers of a run that are not cheaters (and not crashed for good at the end)."""
    cheaters = result.config.faults.cheaters
    return [
        (seat, p) for seat, p in enumerate(result.peers) if p is not None and seat not in cheaters
    ]


def _no_honest_flaps(peers: _Seats, cheaters: frozenset[int]) -> list[str]:
    """No honest peer's final fold finds an honest member at a flap fault
    (:mod:`p2p_nertz.protocol.flaps`: the limit is one no honest member reaches)."""
    return [
        f"flaps: seat {seat}'s fold finds honest seat {q} at a flap fault (its event {at})"
        for seat, p in peers
        for q, at in sorted(p.final.flaps.faults.items())
        if q not in cheaters
    ]


def _finished(counted: _Seats) -> _Seats:
    """Of the peers still in, those that finished the game on a settled result. (A provisional
    result, an abandoned game whose absent member has not been heard to agree, §9.3, may
    differ: the union of the logs decides it, and every settled result must be that one.)"""
    return [(seat, p) for seat, p in counted if p.final.phase is Phase.OVER and not p.provisional]


def _forks_dropped(result: SimResult, peers: _Seats) -> list[str]:
    """Every honest peer that finished dropped every member it could prove forked."""
    cheaters = result.config.faults.cheaters
    problems = []
    proven: dict[tuple[int, ...], set[int]] = {}  # (most peers end with the same members in)
    for seat, p in peers:
        if p.final.phase is not Phase.OVER:
            continue
        # (What the members still in could prove: the other version of a fork sent only to
        # a member asleep, who was dropped before it woke, never reached one of them, and a
        # fork that reached no one has no effect on the game.)
        still_in = tuple(
            q for q in range(result.spec.seats) if q not in p.final.dropped and q not in cheaters
        )
        if still_in not in proven:
            proven[still_in] = forks(result, still_in)
        for cheat in sorted(proven[still_in]):
            if cheat not in p.final.dropped:
                problems.append(f"equivocation: seat {seat} did not drop forking seat {cheat}")
    return problems


def _termination(result: SimResult, peers: _Seats, counted: _Seats) -> list[str]:
    """The run finished, or every counted peer's game is over or cannot end."""
    # (A game over on a provisional result counts as finished: a side of a partition that
    # never healed cannot learn what the other saw, and says so, §9.3.)
    # (And only a game that can end: see _can_end.)
    live = {seat for seat, _ in peers}
    if result.finished or all(
        p.final.phase is Phase.OVER or not _can_end(p, live) for _, p in counted
    ):
        return []
    phases = {seat: p.final.phase.value for seat, p in peers}
    return [f"termination: not finished at t={result.time:.1f}s (phases {phases})"]


def _agreement(finished: _Seats) -> list[str]:
    """The peers that finished on a settled result hold the same final state and totals."""
    if not finished:
        return []
    problems = []
    ref_seat, ref = finished[0]
    for seat, p in finished[1:]:
        if p.final.digest() != ref.final.digest():
            problems.append(f"agreement: seat {seat} and seat {ref_seat} differ")
        if p.final.game.totals != ref.final.game.totals:
            problems.append(
                f"agreement: totals {p.final.game.totals} (seat {seat}) vs "
                f"{ref.final.game.totals} (seat {ref_seat})"
            )
    return problems


def _no_split_brain(peers: _Seats) -> list[str]:
    """Round results agree wherever two peers both have them."""
    problems = []
    by_round: dict[int, tuple[int, tuple[bytes, tuple[int, ...]]]] = {}
    for seat, p in peers:
        for number, digest, scores in p.final.history:
            seen = by_round.setdefault(number, (seat, (digest, scores)))
            if seen[1] != (digest, scores):
                problems.append(
                    f"split brain: round {number}: seat {seat} has {scores}, "
                    f"seat {seen[0]} has {seen[1][1]}"
                )
    return problems


def _split(peers: _Seats) -> list[str]:
    """No two peers made final different drops: each drop one peer's final fold decided (the
    member, its cut and the Lamport time of the vote that decided it, ``drop_at``) at or below
    the other's stable time is in the other's final fold too, dropped there or readmitted
    since from that cut (a gap from it, §9.8). One line per pair of peers that part.

    A peer that stopped early (crashed for good, cut off, dropped and never told, or waiting
    in a game that cannot end) made final less, not otherwise, and is compared only up to its
    stable time. The member an abandon ended the game without is left out: each side of a
    partition that never healed may abandon the other, on a provisional result (§9.3), and
    the union of the logs decides which result stands (the audit's check).

    Soak seed 14017 (session 15): two groups of peers made final seat 1 out at Lamport 231
    and seat 4 out at 228, and one of them never finished, so the agreement of the finished
    peers never compared them."""
    views = [(seat, p.final, p.stable) for seat, p in peers]
    problems = []
    for i, (seat, final, stable) in enumerate(views):
        for other, final2, stable2 in views[i + 1 :]:
            upto = min(stable, stable2)
            parted = _drops_missing(final, final2, upto) or _drops_missing(final2, final, upto)
            if parted is not None:
                member, cut, at = parted
                problems.append(
                    f"split: seats {seat} (stable {stable}, dropped {dict(final.dropped)}) and "
                    f"{other} (stable {stable2}, dropped {dict(final2.dropped)}) both made final "
                    f"Lamport {upto}, and only one of them seat {member} out at {cut} (at {at})"
                )
    return problems


def _drops_missing(final: GameState, other: GameState, upto: int) -> tuple[int, int, int] | None:
    """The first drop of ``final`` (member, cut, decided at) decided at or below ``upto``
    that ``other`` does not hold (dropped there at the same time, or readmitted since from
    that cut); ``None`` if there is none. Abandons are left out (:func:`_split`)."""
    absent = final.abandoned[1] if final.abandoned is not None else None
    for member, cut in sorted(final.dropped.items()):
        at = final.drop_at.get(member, 0)
        if at > upto or member == absent:
            continue
        if other.dropped.get(member) == cut and other.drop_at.get(member) == at:
            continue
        if any(lo == cut for lo, _ in other.gaps.get(member, ())):
            continue
        return member, cut, at
    return None


def _no_loss(result: SimResult, peers: _Seats, counted: _Seats) -> list[str]:
    """Every counted event is held by every surviving peer (of a game that could end: in one
    that cannot, a peer may wait on a chain it can never take, a cheater's)."""
    cheaters = result.config.faults.cheaters
    live = {seat for seat, _ in peers}
    problems = []
    for seat, p in counted:
        if p.final.phase is not Phase.OVER and not _can_end(p, live):
            continue
        for author in range(len(result.peers)):
            cut = p.final.dropped.get(author)
            source = result.peers[author]
            if author in cheaters:
                # DESIGN.md §8: what honest peers sent. Of a cheater's feed, what counts:
                # what an honest peer made final (the run does not wait for the rest to
                # spread, and it may never have been sent: variants seed 993).
                length = max((_final_count(q, author) for _, q in peers), default=0)
            elif source is not None:
                length = source.held(author)
            else:
                length = max((q.held(author) for _, q in peers), default=0)
            need = length if cut is None else min(cut, length)
            if p.held(author) < need:
                problems.append(
                    f"no loss: seat {seat} holds {p.held(author)} of seat {author}'s {need} events"
                )
    return problems


def audit_logs(result: SimResult) -> AuditReport:
    """The audit of every peer's log of a run (``p1.log`` ... in seat order), deep
    (:func:`audit_result`)."""
    return audit_result(result, deep=True)


def audit_result(
    result: SimResult,
    files: Sequence[bytes] | None = None,
    *,
    seats: Iterable[int] | None = None,
    **kw: Any,
) -> AuditReport:
    """The audit of log files of a finished run, with the run's codec memo: the peers parsed
    and verified these messages already, and the audit's own checks of the same bytes would
    answer as they did (bytes the run never saw, a tampered or made-up message, are parsed
    and verified as a stranger's would be). The one home of a test's or a check's audit of a
    run: a new memo would verify every signature of the run again.

    Args:
        result: the run.
        files: the log files, in seat order (:func:`log_files` of the run if not given; a
            test may add a log or change one).
        seats: the seats whose files are audited (every one if not given), each named
            ``p{seat + 1}.log``.
        **kw: passed on to :func:`~p2p_nertz.audit.audit` (``deep``, ``spec``, ``strict``...).

    Not for a check of the audit's own reading of bytes from disk, such as how many
    signatures it verifies: that wants a memo of its own, as a stranger's audit has.
    """
    files = log_files(result) if files is None else files
    chosen = range(len(files)) if seats is None else seats
    sources = [LogSource.from_bytes(f"p{seat + 1}.log", files[seat]) for seat in chosen]
    return audit(sources, envelopes=result.envelopes, **kw)


def audit_alone(
    result: SimResult, seat: int, files: Sequence[bytes] | None = None, **kw: Any
) -> AuditReport:
    """The audit of one seat's log of a run read alone (:func:`audit_result`): what its
    member's own record proves."""
    return audit_result(result, files, seats=(seat,), **kw)
