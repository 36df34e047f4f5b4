"""The evidence of cheating: what the logs prove, matched against what needs proof.

An accusation must be proven by the logs (docs/audit.md, "Evidence"). While reading, the pass
collects what proves cheating: two versions of one event and a logged beat an event
contradicts (:class:`~p2p_nertz.audit.delivery.Delivery` sees them), and ``proof`` notes,
verified here by :func:`~p2p_nertz.protocol.evidence.check_proof`, and the proofs the votes on
proof carry; and what needs a cause: forfeits (folded). At the end of the pass,
:meth:`Evidence.check` names each proof note's cheat and traces each forfeit to its cause.
"""

from __future__ import annotations

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.delivery import Delivery
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.fold import Fold
from p2p_nertz.audit.logs import Log
from p2p_nertz.logfile.format import Record
from p2p_nertz.protocol.bodies import Drop
from p2p_nertz.protocol.evidence import (
    InvalidProofError,
    Proof,
    ProofKind,
    check_pair,
    check_proof,
    vote_unproven,
)
from p2p_nertz.protocol.flaps import FLAP_LIMIT

__all__ = ["Evidence"]


class Evidence:
    """The proof notes of one pass, and the matching of every accusation to its proof."""

    def __init__(self, found: Collector, game_id: bytes) -> None:
        self.found = found
        spec = found.spec
        self.game_id = game_id
        self.seats = spec.seats
        self.peer_ids = spec.peer_ids
        self.names = [m.name for m in spec.members]
        self.notes: dict[bytes, None] = {}  # the data of every proof note read
        self.proofs: list[tuple[Proof, str, int]] = []  # verified notes: proof, log, record
        self.proven: dict[int, list[tuple[int, int]]] | None = None  # see cheats

    def note(self, log: Log, record: Record) -> None:
        """A ``proof`` note: verify both signatures and the contradiction (or say why not)."""
        data = bytes(record.data)
        if data in self.notes:
            return  # the same proof, logged by another peer (or twice)
        self.notes[data] = None
        try:
            proof = check_proof(
                data, game_id=self.game_id, roster=self.found.roster, seats=self.seats
            )
        except InvalidProofError as exc:
            self.found.add(
                Finding(
                    FindingKind.BAD_PROOF,
                    f"a proof note that proves nothing: {exc}",
                    log=log.name,
                    record=log.count,
                    expected="two signed messages of one author that contradict each other",
                    found=exc.problem.value,
                )
            )
            return
        self.proofs.append((proof, log.name, log.count))

    def noted_forks(self) -> dict[int, int]:
        """The members the proof notes prove cheated, from the first seq proven."""
        forked: dict[int, int] = {}
        for proof, _, _ in self.proofs:
            seat = self.found.roster[proof.author]
            forked[seat] = min(forked.get(seat, proof.seq), proof.seq)
        return forked

    def cheats(self, delivery: Delivery) -> dict[int, list[tuple[int, int]]]:
        """Per seat, the seq ranges at which the logs prove it cheated: two signed versions of
        an event read, a logged beat its event contradicts, or a verified proof note (once
        every log is read)."""
        if self.proven is not None:
            return self.proven
        proven = delivery.proven()
        self.proven = proven
        roster = self.found.roster
        for proof, _, _ in self.proofs:
            proven.setdefault(roster[proof.author], []).append(proof.span)
        for vote in delivery.accusations:
            # A vote on proof carries its proof (session 39): one that stands proves its
            # member's cheat wherever the vote is read.
            carried = self._carried(vote.body)
            if carried is not None:
                proven.setdefault(roster[carried.author], []).append(carried.span)
        return proven

    def _carried(self, body: object) -> Proof | None:
        """The proof a vote on proof carries, if it proves what the vote says."""
        assert isinstance(body, Drop)
        if vote_unproven(body, game_id=self.game_id, roster=self.peer_ids, seats=self.seats):
            return None
        return check_pair(*body.proof, game_id=self.game_id, roster=self.peer_ids, seats=self.seats)

    def check(self, delivery: Delivery, fold: Fold) -> None:
        """Every proof note's cheat named, every forfeit traced to a cause (docs/audit.md).

        (A vote or drop on proof needs no check here: every vote on proof a fold counts
        carries a proof that verifies, and one that does not is refused by the fold and named
        ``unproven_vote`` (state._refuse_vote, session 39); logs of versions 1-4, whose votes
        carried none, are refused at their first record. Session 40 removed the checks that
        could no longer fire, and their finding ``unproven_drop``.)"""
        if not (self.proofs or delivery.accusations or fold.forfeits):
            return  # the usual game: nothing to back
        self.cheats(delivery)  # (first: it adds to the versions the kept one of a fork)
        self._name_notes(delivery.versions)
        self._trace_forfeits(fold)

    def name_flaps(self, fold: Fold) -> None:
        """Name every member the fold found at a flap fault (:mod:`p2p_nertz.protocol.flaps`):
        the fold reads its withdrawals as every peer's does, so the proof is the events."""
        found = self.found
        for seat, seq in sorted(fold.state.flaps.faults.items()):
            found.once(
                ("flaps", seat, seq),
                Finding(
                    FindingKind.FLAP_FAULT,
                    f"withdrew its votes against one member more than {FLAP_LIMIT} times in "
                    f"one round, the last at its event {seq}: a flap fault",
                    expected=f"at most {FLAP_LIMIT} withdrawals against one member a round",
                    found=f"withdrawal {FLAP_LIMIT + 1} at event {seq}",
                    seq=seq,
                    **found.who(seat),
                ),
            )

    def _name_notes(self, versions: dict[tuple[int, int], set[bytes]]) -> None:
        """A proof note names its cheat even where the events read show nothing of it (a peer
        logs one version of a forked event, and no beat)."""
        found = self.found
        shown = {(v.seat, v.seq) for v in found.violations if v.kind is FindingKind.EQUIVOCATION}
        for proof, log, record in self.proofs:
            seat = found.roster[proof.author]
            second = proof.second
            if proof.kind is ProofKind.EQUIVOCATION:
                if (seat, proof.seq) in shown or len(versions.get((seat, proof.seq), ())) > 1:
                    continue
                shown.add((seat, proof.seq))
                found.once(
                    ("fork", seat, proof.seq, second.id),
                    Finding(
                        FindingKind.EQUIVOCATION,
                        f"two different signed events with seq {proof.seq} (a proof note): "
                        "the author forked its feed",
                        log=log,
                        record=record,
                        expected=f"event {proof.first.id.hex()[:16]}…",
                        found=f"event {second.id.hex()[:16]}…",
                        **found.about_message(second),
                    ),
                )
            else:
                beat = proof.first
                found.once(
                    ("beat", seat, proof.seq),
                    Finding(
                        FindingKind.CLOCK_BELOW_ACK,
                        f"timed {second.lamport}, at or below the clock {beat.lamport} its "
                        f"author announced with head {proof.head} (a proof note)",
                        log=log,
                        record=record,
                        expected=f"lamport > {beat.lamport}",
                        found=str(second.lamport),
                        **found.about_message(second),
                    ),
                )

    def _trace_forfeits(self, fold: Fold) -> None:
        """Every forfeit scored has a cause (a drop on proof among them: its proof is the
        vote's own, checked by the fold)."""
        for number, seat in fold.forfeits:
            causes = fold.causes.get((number, seat), [])
            if causes:
                continue
            self.found.add(
                Finding(
                    FindingKind.UNTRACED_FORFEIT,
                    f"forfeits round {number}, and the logs hold no cause for it",
                    expected="a reveal that does not match its commit, a lie in its replay, "
                    "a fault of its shuffle, a leave or a drop that stands",
                    found=", ".join(causes) or "none",
                    round=number,
                    **self.found.who(seat),
                )
            )
