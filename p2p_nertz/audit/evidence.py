"""The evidence of cheating: what the logs prove, matched against what needs proof.

An accusation must be proven by the logs (docs/audit.md, "Evidence"). While reading, the pass
collects what proves cheating: two versions of one event and a logged beat an event
contradicts (:class:`~p2p_nertz.audit.delivery.Delivery` sees them), and ``proof`` notes,
verified here by :func:`~p2p_nertz.protocol.evidence.check_proof`; and what needs proof: votes
on proof of cheating (delivered), drops on them, forfeits and their causes (folded). At the end
of the pass, :meth:`Evidence.check` matches them.
"""

from __future__ import annotations

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.delivery import Delivery
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.fold import Fold, out_unproven
from p2p_nertz.audit.logs import Log
from p2p_nertz.logfile.format import Record
from p2p_nertz.protocol.bodies import Drop, DropReason
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
        """Every vote and drop on proof of cheating backed by proof in the logs, every proof
        note's cheat named, every forfeit traced to a cause (docs/audit.md)."""
        if not (self.proofs or delivery.accusations or fold.forfeits):
            return  # the usual game: nothing to back
        proven = self.cheats(delivery)
        self._name_notes(delivery.versions)
        names = self.names
        found = self.found
        for vote in delivery.accusations:
            body = vote.body
            assert isinstance(body, Drop)
            target, fork = body.seat, body.fork_seq
            if any(lo <= fork <= hi for lo, hi in proven.get(target, ())):
                continue
            if self._carried(body) is None:
                continue  # (the fold refuses it and names it: unproven_vote, session 39)
            found.add(
                Finding(
                    FindingKind.UNPROVEN_VOTE,
                    f"a vote to drop {names[target]} for cheating at its event {fork}, which "
                    "no log proves",
                    expected=f"proof of {names[target]}'s event {fork}: two signed versions, "
                    "or a beat it contradicts, in the events or a proof note",
                    found="none",
                    **found.about(vote),
                )
            )
        state = fold.state
        for target in sorted(state.dropped):
            voters = [
                names[voter]
                for voter, v in state.votes.get(target, ())
                if v.reason is DropReason.EQUIVOCATION
            ]
            if not voters or target in state.left or target in proven:
                continue
            if out_unproven(state.roster, target):
                continue  # (out by a majority all the same: the unproven votes are named)
            found.add(
                Finding(
                    FindingKind.UNPROVEN_DROP,
                    f"dropped on proof of cheating by the votes of {', '.join(voters)}, and no "
                    "log holds proof of any cheating of it",
                    expected="two signed versions of one of its events, or a beat it "
                    "contradicts, in the events or a proof note",
                    found="none",
                    **found.who(target),
                )
            )
        self._trace_forfeits(fold, proven)

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

    def _trace_forfeits(self, fold: Fold, proven: dict[int, list[tuple[int, int]]]) -> None:
        """Every forfeit scored has a cause that stands."""
        for number, seat in fold.forfeits:
            causes = fold.causes.get((number, seat), [])
            if any(c != "dropped_on_proof" or seat in proven for c in causes):
                continue
            why = (
                "its only cause is a drop on proof of cheating that no log proves"
                if causes
                else "the logs hold no cause for it"
            )
            self.found.add(
                Finding(
                    FindingKind.UNTRACED_FORFEIT,
                    f"forfeits round {number}, and {why}",
                    expected="a reveal that does not match its commit, a lie in its replay, "
                    "a fault of its shuffle, a leave or a drop that stands",
                    found=", ".join(causes) or "none",
                    round=number,
                    **self.found.who(seat),
                )
            )
