"""An honest member's ``debt`` note names nobody (docs/audit.md, *Evidence*;
``audit.debt_notes``): the one note of the eight games of the effect digest."""

from __future__ import annotations

from p2p_nertz.audit import FindingKind
from p2p_nertz.protocol.debts import DEBT_NOTE, owed_head, read_note
from p2p_nertz.sim import SimConfig, run


def test_an_honest_members_debt_note_whose_head_came_later_names_nobody() -> None:
    """Game 6 of ``scripts/effect_digest.py --games 8 --players 2-4`` (four players, no
    cheater): a peer took a member's beat past a vote of the member's that the peer still
    held standing, and announcing a head of the member's own feed the peer did not hold yet,
    and noted it. The head came (the member's beat had overtaken its event): every log holds
    it, and the audit of every log names nobody."""
    result = run(SimConfig.soak(6, players=(2, 4)))
    assert not result.config.faults.cheaters and result.violations == []
    spec = result.spec
    noted = []
    for notes in result.notes:
        for _, note in notes:
            if note.name == DEBT_NOTE:
                message, beat = read_note(
                    note.data, game_id=spec.game_id, roster=spec.peer_ids,
                    versions=spec.read_versions, seats=spec.seats,
                )  # fmt: skip
                author = spec.peer_ids.index(message.author)
                noted.append((author, owed_head(author, beat)))
    assert noted  # (the case is built: an honest member's beat, noted)
    for author, head in noted:
        assert all(len(p.events(author)) >= head for p in result.peers if p is not None)
    report = result.audit
    assert report is not None and not report.errors
    assert FindingKind.UNGIVEN_HEAD not in {f.kind for f in report.violations}
