"""The invariants of DESIGN.md §8, checked on a finished simulation.

* **Termination** — every live peer that was not dropped finished the game.
* **Agreement** — those peers hold the same final state (digest), totals and round results.
* **No split brain** — no two peers, dropped ones included, finalized different results for a
  round they both finished.
* **No loss** — every event of every counted feed is held by every surviving peer.
* **Validity and conservation** — the real audit (:func:`p2p_nertz.audit.audit`, deep) reads
  every peer's log as ``nertz audit`` would: it must find no error but against a cheater, and
  reach the same state as the peers; it replays every round with every deck known (from the
  revealed secrets, :func:`~p2p_nertz.protocol.state.replay_round`): each move is legal with
  the real cards, and each player's cards are all somewhere exactly once after every move.
  (:func:`observe` is the simpler outside fold of the same logs, kept for tests and tools:
  the players' own :class:`~p2p_nertz.protocol.folds.Folds` and
  :func:`~p2p_nertz.protocol.finality.settle` holding every event of the union.)

Each failed check is one line in the returned list, naming the seat, the round and the values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from p2p_nertz.audit import AuditReport, LogSource, audit
from p2p_nertz.protocol.bodies import Beat, Want, parse_body
from p2p_nertz.protocol.envelope import InvalidMessageError, Message, decode_message
from p2p_nertz.protocol.finality import settle
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Phase, voted_chain
from p2p_nertz.sim.logfiles import log_files

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.sim.network import SimResult

__all__ = ["audit_logs", "check", "observe", "outcomes"]


def observe(result: SimResult) -> GameState:
    """Fold the union of every peer's log as an outside observer would (no secrets), with
    the players' folds: the final fold a peer holding every event would reach."""
    spec = result.spec
    seats = {pid: s for s, pid in enumerate(spec.peer_ids)}
    events: dict[bytes, Event] = {}
    messages: dict[bytes, Message] = {}
    for log in result.logs:
        for wire in log:
            try:
                message = decode_message(
                    wire, game_id=spec.game_id, roster=seats, cache=result.envelopes
                )
            except InvalidMessageError:
                continue
            if not message.is_event or message.id in events:
                continue
            body = parse_body(message.kind, message.body, spec.seats)
            assert not isinstance(body, Beat | Want)
            seat = seats[message.author]
            messages[message.id] = message
            events[message.id] = Event(
                seat, message.seq, message.lamport, message.kind, body, message.id
            )
    # Members the logs prove to have forked: (seat, seq) held in two versions.
    versions: dict[tuple[int, int], set[bytes]] = {}
    for event in events.values():
        versions.setdefault((event.seat, event.seq), set()).add(event.id)
    forked: dict[int, int] = {}
    for (seat, seq), ids in versions.items():
        if len(ids) > 1:
            forked[seat] = min(forked.get(seat, seq), seq)
    # Which events count (cuts, readmitted members' gaps, capped votes) is the players' rule:
    # the same Folds a peer folds with, holding every event, as a peer restarted from a log of
    # the whole game would. What is left here is which chain of a forked member to hold (a
    # peer's feeds decide it): the one a drop keeps, or the one the counted votes quote
    # (state.voted_chain), until that stops changing.
    kept: dict[int, tuple[int, bytes]] = {}
    for _ in range(2 * spec.seats + 2):  # each round can only settle more
        folds = _fold_union(spec, _chosen(events, messages, kept), forked)
        tentative = folds.tentative
        new_kept = dict(tentative.kept_forks)
        for seat, first in forked.items():
            voted = voted_chain(tentative, seat, first)
            if voted is not None:
                new_kept[seat] = (voted[0], voted[1][voted[0]])
        if new_kept == kept:
            break
        kept = new_kept
    return _final(folds, messages)


def _chosen(
    events: dict[bytes, Event], messages: dict[bytes, Message], kept: dict[int, tuple[int, bytes]]
) -> list[Event]:
    """One version of each (seat, seq), in the total order: of a forked member, the chain
    ``kept`` names (its head's seq and id prefix; walked back by ``prev``), else the version
    timed first."""
    chain: dict[tuple[int, int], bytes] = {}
    for seat, (seq, prefix) in kept.items():
        head = next(
            (
                e
                for e in events.values()
                if (e.seat, e.seq) == (seat, seq) and e.id[: len(prefix)] == prefix
            ),
            None,
        )
        while head is not None:
            chain[(seat, head.seq)] = head.id
            prev = messages[head.id].prev
            head = events.get(prev) if prev is not None else None
    chosen: dict[tuple[int, int], Event] = {}
    for event in sorted(events.values(), key=lambda e: e.key):
        need = chain.get((event.seat, event.seq))
        if need is not None and event.id != need:
            continue
        chosen.setdefault((event.seat, event.seq), event)
    return sorted(chosen.values(), key=lambda e: e.key)


def _fold_union(spec: GameSpec, chosen: list[Event], forked: dict[int, int]) -> Folds:
    """The players' folds holding every chosen event, none final yet."""
    folds = Folds(GameState(spec))
    folds.forked_at = dict(forked)
    for event in chosen:
        folds.add(event, 0)  # (every event is timed above 0: held, not final)
    return folds


def _final(folds: Folds, messages: dict[bytes, Message]) -> GameState:
    """The final fold of ``folds``, made final as the players' peers make it: the members out
    as :func:`~p2p_nertz.protocol.finality.settle` decides, with nothing left to wait for
    (every member holds every event), and the events taken by :meth:`Folds.advance`."""
    feeds: list[list[Message]] = [[] for _ in range(folds.final.spec.seats)]
    for event in sorted(folds.nonfinal, key=lambda e: (e.seat, e.seq)):
        feed = feeds[event.seat]
        if event.seq == len(feed) + 1:  # (each feed as far as it runs without a hole)
            feed.append(messages[event.id])
    everything = max((e.lamport for e in folds.nonfinal), default=0) + 1

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return everything

    stable = 0
    while folds.nonfinal:
        tentative = folds.tentative
        folds.final.vote_caps = dict(tentative.vote_caps)
        excluded, reached = settle(folds.final, tentative, feeds, bound, stable)
        if reached <= stable:
            break
        stable = reached
        folds.advance(stable, excluded, tentative.gaps)
    return folds.final


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
    seen: dict[tuple[bytes, int], bytes] = {}
    forked: set[tuple[int, int]] = set()
    seats = {pid: s for s, pid in enumerate(result.spec.peer_ids)}
    logs = result.logs if among is None else [result.logs[seat] for seat in among]
    for log in logs:
        for wire in log:
            try:
                message = decode_message(
                    wire, game_id=result.spec.game_id, roster=seats, cache=result.envelopes
                )
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
    peers = [
        (seat, p) for seat, p in enumerate(result.peers) if p is not None and seat not in cheaters
    ]
    counted = [(seat, p) for seat, p in peers if seat not in p.final.dropped]
    # (A provisional result, an abandoned game whose absent member has not been heard to
    # agree, §9.3, may differ: the union of the logs decides it, and every settled result
    # must be that one.)
    finished = [
        (seat, p) for seat, p in counted if p.final.phase is Phase.OVER and not p.provisional
    ]
    problems = _forks_dropped(result, peers)
    problems += _termination(result, peers, counted)
    problems += _agreement(finished)
    problems += _no_split_brain(peers)
    problems += _no_loss(result, peers, counted)
    # Validity and conservation, from the logs alone: the real audit reads every log, as
    # `nertz audit` would, and replays every finished round with every deck known (deep).
    report = audit_logs(result)
    # (A cheater's own faults are evidence against it, not a fault of the protocol.)
    problems.extend(f"validity: {f}" for f in report.errors if f.seat not in cheaters)
    if finished and report.digest != finished[0][1].final.digest():
        problems.append("agreement: an audit of every log reaches another state")
    return problems


def _forks_dropped(result: SimResult, peers: _Seats) -> list[str]:
    """Every honest peer that finished dropped every member it could prove forked."""
    cheaters = result.config.faults.cheaters
    problems = []
    for seat, p in peers:
        if p.final.phase is not Phase.OVER:
            continue
        # (What the members still in could prove: the other version of a fork sent only to
        # a member asleep, who was dropped before it woke, never reached one of them, and a
        # fork that reached no one has no effect on the game.)
        still_in = [
            q for q in range(result.spec.seats) if q not in p.final.dropped and q not in cheaters
        ]
        for cheat in sorted(forks(result, still_in)):
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
    """The audit of every peer's log of a run (``p1.log`` ... in seat order), deep."""
    files = log_files(result)
    sources = [LogSource.from_bytes(f"p{seat + 1}.log", data) for seat, data in enumerate(files)]
    return audit(sources, deep=True)
