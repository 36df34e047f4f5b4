"""Damage to one member's log, and a member's edits of its own: the audit never blames another.

The smallest telling cases of ``scripts/scan_log_damage.py`` (docs/audit.md, *Damage and
blame*): real game logs (the simulator's, real signatures), one log damaged as an accident
leaves it or edited by its own peer with its own key, audited with the others and alone. The
audit may name the file, or the editor; a finding that accuses a member (``FindingKind.
accuses``) never names one whose signed events are what it signed.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from cli.audit_cmd import format_report
from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.logfile.format import MAGIC
from p2p_nertz.protocol.bodies import ID_PREFIX, NOT_EVENTS, encode_body, parse_body
from p2p_nertz.protocol.envelope import Message, decode_message
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.sim.logfiles import log_file
from tests.audit_helpers import Game, events_of, played, rewrite, vote

K = FindingKind


def _accused(report: AuditReport) -> set[int | None]:
    """The members the report's errors accuse of a fault their signature proves."""
    return {v.seat for v in report.errors if v.kind.accuses}


def _events(log: list[Record], seat_id: bytes, *, own: bool) -> list[int]:
    """Indexes of the log's event records by ``seat_id`` (``own``) or by the others."""
    return [
        i
        for i, r in enumerate(log)
        if r.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
        and (decode_message(r.data).author == seat_id) is own
    ]


def _spread(indexes: list[int]) -> list[int]:
    """A few positions across a log: near its start, a quarter, the middle, near its end."""
    n = len(indexes)
    return [indexes[i] for i in sorted({1, n // 4, n // 2, n - 2})]


@pytest.mark.parametrize("deal", [Deal.COMMIT, Deal.SHUFFLE])
def test_audit_damage_a_log_alone_that_lost_a_record_blames_no_member(deal: Deal) -> None:
    # A log alone that lost one event (its peer's own or another's): the events after it that
    # acknowledge it were folded without it, and the fold's refusals of them (a ready "while
    # the game is in round 1 nonce", a result) accused the honest members that signed them.
    game = played(2, deal=deal)
    for seat in range(game.spec.seats):
        me = game.spec.peer_ids[seat]
        log = game.logs[seat]
        for own in (True, False):
            for index in _spread(_events(log, me, own=own)):
                logs = game.copy()
                lost = decode_message(logs[seat][index].data)
                del logs[seat][index]
                report = game.audit(files=[game.files(logs)[seat]])
                where = (seat, own, index)
                assert _accused(report) == set(), (where, [str(v) for v in report.errors])
                missing = [v for v in report.errors if v.kind is K.MISSING_EVENT]
                author = game.spec.seat_of(lost.author)
                assert (missing[0].seat, missing[0].seq) == (author, lost.seq), where
                # The fold stopped before what it cannot judge: not a finished game.
                assert not report.finished, where


def test_audit_damage_a_log_that_lost_a_record_is_a_gap_of_that_log() -> None:
    # With the other logs, the same loss is the damaged log's gap, and nothing else.
    game = played(3)
    seat = 1
    for index in _spread(_events(game.logs[seat], game.spec.peer_ids[0], own=False)):
        logs = game.copy()
        del logs[seat][index]
        report = game.audit(logs)
        # (the last one lost: a log that ends early, a notice)
        assert {v.kind for v in report.errors} <= {K.GAP}, index
        assert report.violations, index
        assert {v.log for v in report.violations if v.kind is not K.INCOMPLETE} == {"p2.log"}


def test_audit_damage_a_forged_event_in_a_log_names_the_file_not_its_author() -> None:
    # A received event whose signature no longer verifies (the holder changed it): the bytes
    # are nobody's in the roster, so the finding is the file's; its named author is accused
    # of nothing, alone or with the others.
    game = played(3)
    seat, author = 2, 0
    index = _events(game.logs[seat], game.spec.peer_ids[author], own=True)[5]
    logs = game.copy()
    data = bytearray(logs[seat][index].data)
    data[-1] ^= 0x01  # the signature's last byte
    logs[seat][index] = Record(kind=RecordKind.RECEIVED_EVENT, data=bytes(data))
    for report in (game.audit(logs), game.audit(files=[game.files(logs)[seat]])):
        assert _accused(report) == set(), [str(v) for v in report.errors]
        bad = [v for v in report.errors if v.kind is K.BAD_SIGNATURE]
        name = "p3.log" if len(report.logs) > 1 else "p1.log"
        assert [(v.log, v.record) for v in bad] == [(name, index + 1)]
        # The readable report says the member a finding about the logs names is not accused.
        text = format_report(report).splitlines()
        lines = [line for line in text if line.startswith("ERROR") and "bot1 seq" in line]
        assert lines and all("(not a cheat of bot1: about the logs)" in x for x in lines), text


@pytest.mark.parametrize("players", [2, 3])
def test_audit_damage_a_member_that_accuses_another_in_its_own_log_is_the_one_named(
    players: int,
) -> None:
    # A member appends to its own log a vote to drop another on proof of cheating it does not
    # have (signed by itself: it can). The vote is its own unproven accusation; the member it
    # accuses is named only as the one dropped without proof.
    game = played(players)
    editor, target = 0, 1
    logs = game.copy()
    vote(game, logs, editor, target, fork_seq=3, to=[editor])
    for report in (game.audit(logs), game.audit(files=[game.files(logs)[editor]])):
        assert _accused(report) == {editor}, [str(v) for v in report.errors]
        kinds = {v.kind: v.seat for v in report.errors}
        assert kinds[K.UNPROVEN_VOTE] == editor


def test_audit_damage_a_member_that_retimes_its_own_log_is_the_one_named() -> None:
    # A member re-signs one of its events timed earlier, and its feed after it, in its own log:
    # with the others' logs it forked; alone its clock lies against what it acknowledged.
    game = played(3)
    editor = 2
    for seq in (12, 30):
        logs = game.copy()
        mine = [logs[editor]]
        rewrite(game, mine, editor, seq, lambda m: {"lamport": m.lamport - 1})
        logs[editor] = mine[0]
        together = game.audit(logs)
        assert _accused(together) == {editor}, [str(v) for v in together.errors]
        alone = game.audit(files=[game.files(logs)[editor]])
        assert _accused(alone) <= {editor}, [str(v) for v in alone.errors]


def _backdated(game: Game, editor: int, seq: int) -> list[list[Record]]:
    """The logs with ``editor``'s own log as it re-signed it: its event ``seq`` timed just
    after its event before and acknowledging only what that one did (it claims it had not
    seen what it had, and moved first), every later event of its feed re-signed on it."""
    logs = game.copy()
    before = events_of(logs, editor, game.spec)[seq - 2]
    seats = game.spec.seats

    def change(message: Message) -> dict[str, object]:
        body = parse_body(message.kind, message.body, seats)
        was = parse_body(before.kind, before.body, seats)
        assert not isinstance(body, NOT_EVENTS) and not isinstance(was, NOT_EVENTS)
        frontier, ids = list(was.frontier), list(was.frontier_ids)
        frontier[editor], ids[editor] = before.seq, before.id[:ID_PREFIX]
        acked = dataclasses.replace(body, frontier=tuple(frontier), frontier_ids=tuple(ids))
        return {"lamport": before.lamport + 1, "body": encode_body(acked)}

    mine = [logs[editor]]
    rewrite(game, mine, editor, seq, change)
    logs[editor] = mine[0]
    return logs


@pytest.mark.parametrize("seq", [31, 41, 51])
def test_audit_damage_a_member_that_backdates_its_claims_in_its_own_log_is_the_one_named(
    seq: int,
) -> None:
    # A consistent lie of a member in its own log: a claim re-signed timed before the other's
    # and acknowledging no more than its event before, its feed re-signed after it. Alone,
    # the other's later events name the claim it really sent (their frontier ids): folded on
    # the lie, the other's signed result read as a result_mismatch of the honest member.
    game = played(2)
    editor = 0
    logs = _backdated(game, editor, seq)
    alone = game.audit(files=[game.files(logs)[editor]])
    assert _accused(alone) <= {editor}, [str(v) for v in alone.errors]
    named = [v for v in alone.errors if v.kind is K.MISSING_EVENT]
    assert named and named[0].seat == 1 - editor, [str(v) for v in alone.errors]
    together = game.audit(logs)
    assert _accused(together) == {editor}, [str(v) for v in together.errors]
    assert K.EQUIVOCATION in {v.kind for v in together.errors}
    # --strict stops at the first error it is sure of: never the other's result either.
    strict = game.audit(files=[game.files(logs)[editor]], strict=True)
    assert strict.errors and _accused(strict) <= {editor}, [str(v) for v in strict.errors]


def test_audit_damage_a_log_of_another_game_among_a_games_logs_is_the_one_named() -> None:
    # The first log given is the member's log of another game (same keys, other rules): the
    # game is the one most logs hold, so that log is the wrong_log, not the two others.
    game = played(3)
    other = played(3, rounds=2)
    files = game.files()
    files[0] = other.files()[0]
    report = game.audit(files=files)
    wrong = [v for v in report.errors if v.kind is K.WRONG_LOG]
    assert [v.log for v in wrong] == ["p1.log"], [str(v) for v in report.errors]
    assert report.spec == game.spec and report.finished


@pytest.mark.parametrize("deal", [Deal.COMMIT, Deal.SHUFFLE])
def test_audit_damage_zero_bytes_name_the_file_never_a_member(deal: Deal) -> None:
    # A disk block lost (a frame's bytes zeroed where they are: the header's, one in the
    # middle, the last) and a crash that kept the file's new size but not its data (a block of
    # zeros after its end): damage of that file, with the other logs and alone; never a
    # member's fault (scripts/scan_log_damage.py, families zeros and pad).
    game = played(2, deal=deal)
    for seat in range(game.spec.seats):
        records = game.logs[seat]
        blob = game.files()[seat]
        head = len(log_file(game.spec, seat, []))  # (each record a frame of its own after it)
        sizes = [len(log_file(game.spec, seat, [r])) - head for r in records]
        ends = list(itertools.accumulate(sizes, initial=head))
        spans = [(len(MAGIC) + 2, head), *itertools.pairwise(ends)]
        damaged = {
            f"zeros {i}": blob[: spans[i][0]]
            + bytes(spans[i][1] - spans[i][0])
            + blob[spans[i][1] :]
            for i in (0, len(spans) // 2, len(spans) - 1)
        }
        damaged["pad"] = blob + bytes(4096)
        for what, bad in damaged.items():
            for alone in (False, True):
                files = game.files()
                files[seat] = bad
                report = game.audit(files=[bad] if alone else files)
                where = (seat, what, alone)
                assert _accused(report) == set(), (where, [str(v) for v in report.errors])
                name = "p1.log" if alone else f"p{seat + 1}.log"
                named = {v.log for v in report.violations if v.kind in _DAMAGE}
                assert named == {name}, (where, [str(v) for v in report.violations])
                if what == "pad":  # (every record whole: a notice, the game whole)
                    assert not report.errors and report.finished, where
                    (torn,) = [v for v in report.violations if v.kind is K.TRUNCATED]
                    assert "ends in 4096 zero bytes" in torn.detail, (where, str(torn))


#: What the audit says of a file's bytes (not of a member).
_DAMAGE = frozenset({K.UNREADABLE, K.LOG_DAMAGE, K.TRUNCATED})
