"""The feed's half of a turn-up's shares outside the feed (docs/shuffle.md §10.14): a member's own
share of a position a move turned up travels in a ``deck_reveal`` beat alone, never in a
``deck_shares`` event (the deal's face-up shares and the partials for a member dropped stay
there); a member is owed a share only while its voter's held fold and share store both lack it;
a ``deck_reveal`` whose share's proof fails is kept as a ``bad_share`` note, which the audit
checks and names its sender on; and the audit's ``withheld_share`` reads only the shares still in
the feed.

Whole simulated honest shuffle games at two, three and four players, and a forged or garbled
note given to ``nertz audit`` (the deck cheats that act on the beats, ``bad_share`` and
``withhold``: ``tests/test_sim_shuffle_cheats.py``)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from cli.main import main
from p2p_nertz.audit import FindingKind
from p2p_nertz.deck.wire import DeckShares
from p2p_nertz.protocol.bodies import DeckEvent, parse_body
from p2p_nertz.protocol.effects import Note, Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.share_notes import BAD_SHARE_NOTE
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules, Tableau
from p2p_nertz.rules.cards import sealed_position
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, SimResult, run
from p2p_nertz.sim.invariants import settled
from p2p_nertz.sim.logfiles import log_files

pytestmark = pytest.mark.slow  # (whole simulated shuffle games)

K = FindingKind


@functools.cache
def _game(players: int, seed: int) -> SimResult:
    """The honest game of ``players`` at ``seed``, its effects recorded (the forged note's
    test takes a beat from them): one game for the tests that read it."""
    return run(
        SimConfig(
            players=players,
            seed=seed,
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            max_time=200.0,
            record_effects=True,
        )
    )


def _face_up(rules: Rules) -> frozenset[int]:
    """The positions of each deck the deal turns up (the same in every deck)."""
    shown = Tableau.sealed(rules).shown
    return frozenset(p for p in map(sealed_position, shown) if p is not None)


def _logged_shares(result: SimResult) -> list[tuple[int, int, int]]:
    """(author's seat, the seat it stands for, position) of every share in a logged
    ``deck_shares`` (each event once; every seat a member of the round: nobody dropped)."""
    seen: dict[bytes, tuple[int, DeckShares]] = {}
    spec = result.spec
    for log in result.logs:
        for wire in log:
            message = decode_message(wire)
            if message.kind is Kind.DECK_SHARES and message.id not in seen:
                body = parse_body(message.kind, message.body, spec.seats)
                assert isinstance(body, DeckEvent) and isinstance(body.message, DeckShares)
                seen[message.id] = (spec.peer_ids.index(message.author), body.message)
    return [(seat, s.of_seat, s.position) for seat, m in seen.values() for s in m.shares]


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 3), (4, 5)])
def test_sim_shuffle_feed_an_honest_game_logs_no_own_turn_up_share(players: int, seed: int) -> None:
    result = _game(players, seed)
    assert result.finished and result.violations == [] and result.rejected == 0
    finals = settled(result)
    assert len(finals) == players and len({f.digest() for f in finals}) == 1
    assert not finals[0].dropped and finals[0].violations == ()
    # Every log audited valid, to the peers' state; nobody named, nobody dropped (the audit
    # of every log that the invariant checks ran, sim.invariants.audit_logs).
    report = result.audit
    assert report is not None and report.valid and report.violations == () and not report.dropped
    assert report.digest == finals[0].digest()
    # The feed holds each member's own shares of the deal's face-up positions and nothing
    # else of its own: a move's turn-up went in beats alone (and no member dropped: no partial).
    logged = _logged_shares(result)
    face_up = _face_up(result.spec.rules)
    assert logged and all(of == maker and p in face_up for maker, of, p in logged)
    assert {(m, p) for m, _, p in logged} == {(m, p) for m in range(players) for p in face_up}
    # Cards were turned up by moves and played: their shares came from the beats, carried.
    deck = finals[0].round.deck
    assert deck is not None
    assert any(p not in face_up for _, p in deck.opened)
    assert None not in deck.opened.values()


def _write(result: SimResult, where: Path) -> list[str]:
    """The logs of ``result`` written in ``where``; their paths."""
    where.mkdir()
    paths = []
    for seat, data in enumerate(log_files(result)):
        path = where / f"p{seat + 1}.log"
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def test_sim_shuffle_feed_a_forged_or_garbled_note_is_a_clear_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _game(2, 1)
    assert result.finished and result.violations == []
    assert main(["audit", *_write(result, tmp_path / "plain")]) == 0
    capsys.readouterr()
    # A right beat of seat 1's (its shares verify): a note of it proves nothing.
    right = next(
        e.data
        for _, seat, e in result.effects
        if seat == 1 and isinstance(e, Send) and decode_message(e.data).kind is Kind.DECK_REVEAL
    )
    cases = {
        "garbled": b"\x00garbage",
        "forged": right[:-1] + bytes([right[-1] ^ 1]),  # (its signature broken)
        "right": right,
    }
    for name, data in cases.items():
        notes = [list(n) for n in result.notes]
        notes[0].append((len(result.logs[0]), Note(BAD_SHARE_NOTE, data)))
        paths = _write(dataclasses.replace(result, notes=notes), tmp_path / name)
        code = main(["audit", *paths])
        out = capsys.readouterr()
        assert code == 1, (name, out)
        assert "Traceback" not in out.out + out.err
        assert "bad_proof" in out.out and "bad_share note" in out.out, (name, out.out)
        assert "bad_share:" not in out.out  # (nobody named bad_share on it)
