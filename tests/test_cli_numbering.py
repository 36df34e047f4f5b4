"""One numbering (issue 15): seats count from 0 everywhere the command line shows or takes
one, as on the table and in the notation (``W>L@2H`` is seat 2's hearts).

Each of these counted from 1 before: ``--peer WHO``'s seat, the JSON ``seat`` and ``winners``
fields, ``start``'s "seat N of M", the lobby's seat numbers (screen, ``x``, ``remove``) and
``nertz replay``'s ``e SEAT:SEQ``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.lobby_cmd import _announce_start, _notice_printer, _Out
from cli.main import build_parser
from cli.node_cmd import parse_peers
from cli.replay_cmd import _event
from p2p_nertz.errors import NertzError
from p2p_nertz.lobby.state import Session
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Suspected
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import MemberDropped
from p2p_nertz.rules import Rules

IDS = [Identity.generate(bytes([n]) * 32) for n in range(3)]
SPEC = GameSpec.create([(i.peer_id, n) for i, n in zip(IDS, ("Ann", "Bob", "Cy"), strict=True)],
                       Rules(), b"numbering")  # fmt: skip
ME = SPEC.peer_ids[0]


def test_peer_who_is_a_seat_from_0() -> None:
    endpoints = parse_peers(["1=127.0.0.1:5001", "2=127.0.0.1:5002"], SPEC, ME)
    assert endpoints == {
        SPEC.peer_ids[1]: "tcp://127.0.0.1:5001",
        SPEC.peer_ids[2]: "tcp://127.0.0.1:5002",
    }
    with pytest.raises(NertzError, match=r"no seat 3 \(seats 0-2\)"):
        parse_peers(["1=127.0.0.1:5001", "3=127.0.0.1:5002"], SPEC, ME)
    with pytest.raises(NertzError, match=r"no --peer for seat 2 "):
        parse_peers(["1=127.0.0.1:5001"], SPEC, ME)


def test_json_seat_fields_count_from_0(capsys: pytest.CaptureFixture[str]) -> None:
    on_notice = _notice_printer(_Out(json_lines=True), [m.name for m in SPEC.members])
    on_notice(Suspected(seat=1, suspected=True))
    on_notice(MemberDropped(seat=2, cut=4, left=True))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    names = [m.name for m in SPEC.members]
    assert [(e["event"], e["seat"], e["name"]) for e in lines] == [
        ("suspected", 1, names[1]),
        ("dropped", 2, names[2]),
    ]


@pytest.mark.parametrize("json_lines", [True, False])
def test_start_says_the_seat_from_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, json_lines: bool
) -> None:
    bob = IDS[[i.peer_id for i in IDS].index(SPEC.peer_ids[1])]
    session = Session(SPEC, {pid: f"tcp://127.0.0.1:{5000 + n}" for n, pid in
                             enumerate(SPEC.peer_ids)})  # fmt: skip
    _announce_start(_Out(json_lines), bob, session, tmp_path / "bob.log")
    out = capsys.readouterr().out
    if json_lines:
        assert json.loads(out)["seat"] == 1
    else:
        assert "you are seat 1 (seats 0-2" in out


@pytest.mark.parametrize(
    ("command", "said"),
    [("node", "(0 = first"), ("play", "its seat from 0"), ("host", "(seats 0+1, 2+3")],
)
def test_the_help_says_seats_count_from_0(
    capsys: pytest.CaptureFixture[str], command: str, said: str
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    assert said in " ".join(capsys.readouterr().out.split())


class _Steps:
    """Stands in for a ``Replay``: ``find`` says which (seat, seq) it was asked for."""

    spec = SPEC

    def __len__(self) -> int:
        return 100

    def find(self, seat: int, seq: int) -> int:
        return seat * 10 + seq


def test_replay_takes_a_seat_from_0_before_the_colon() -> None:
    names = {m.name.lower(): seat for seat, m in enumerate(SPEC.members)}
    steps = _Steps()
    assert _event(steps, names, "0:3") == 3  # type: ignore[arg-type]
    assert _event(steps, names, "2:3") == 23  # type: ignore[arg-type]
    assert _event(steps, names, "3:3") is None  # type: ignore[arg-type]
