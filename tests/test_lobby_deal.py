"""The deal in the lobby (docs/lobby.md §3): a ``table`` carries a deal that is not the default
as a fourth field, a commit table keeps the bytes and digest it always had, a guest sees the
deal and takes a ``start`` only with the deal it was shown."""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from p2p_nertz.lobby.messages import (
    LobbyMessageError,
    Seat,
    Start,
    TableView,
    decode,
    encode,
    table_digest,
)
from p2p_nertz.lobby.state import GuestLobby, HostLobby, Session, StartRefusedError
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.ui.lobby import rules_text

ANN = Identity.generate(seed=b"a" * 32)
BOB = Identity.generate(seed=b"b" * 32)
LOBBY = bytes(range(1, 33))
CHALLENGE = bytes(range(40, 72))
ANN_AT, BOB_AT = "tcp://127.0.0.1:7000", "tcp://127.0.0.1:7001"
SEATS = (Seat(ANN.peer_id, "Ann", ANN_AT, True), Seat(BOB.peer_id, "Bob", BOB_AT, False))


def _body(data: bytes) -> list[Any]:
    """The body fields of a signed lobby message, as sent."""
    fields = msgpack.unpackb(data[:-64], raw=False, strict_map_key=False)
    body: list[Any] = fields[5]
    return body


def _signed_table(body: list[Any]) -> bytes:
    payload: bytes = msgpack.packb([3, "table", LOBBY, ANN.peer_id, b"", body], use_bin_type=True)
    return payload + ANN.sign(b"p2p-nertz/v1/lobby\0" + payload)


def test_a_commit_table_keeps_its_four_fields_and_its_digest() -> None:
    view = TableView({"draw": 1}, 4, SEATS)
    assert view.deal is Deal.COMMIT
    assert len(_body(encode(ANN, LOBBY, view))) == 4  # (the fourth: the version, session 40)
    # The digest of the form before the deal existed, spelt out (docs/lobby.md §3).
    seats = [[bytes(s.peer_id), s.name, s.endpoint] for s in SEATS]
    old = msgpack.packb([LOBBY, [["draw", 1]], 4, seats], use_bin_type=True)
    assert table_digest(LOBBY, view) == hashlib.sha256(b"p2p-nertz/v1/lobby-table\0" + old).digest()


def test_a_shuffle_table_round_trips_with_its_deal_and_another_digest() -> None:
    view = TableView({"draw": 1}, 4, SEATS, Deal.SHUFFLE)
    data = encode(ANN, LOBBY, view)
    assert _body(data)[3:] == [PROTOCOL_VERSION, {"deal": "shuffle"}]
    assert decode(data).body == view
    assert table_digest(LOBBY, view) != table_digest(LOBBY, TableView({"draw": 1}, 4, SEATS))


@pytest.mark.parametrize(
    "options",
    [
        [{"deal": "commit"}],  # the default is never written: one table, one spelling
        [{"deal": "cards"}],
        [{"deal": "shuffle", "more": 1}],
        [{}],
        [{"deal": "shuffle"}, {"deal": "shuffle"}],
        ["shuffle"],
    ],
)
def test_a_table_with_unknown_options_is_refused(options: list[Any]) -> None:
    seats = [[s.peer_id, s.name, s.endpoint, s.ready] for s in SEATS]
    with pytest.raises(LobbyMessageError, match="unknown table options"):
        decode(_signed_table([{}, 4, seats, PROTOCOL_VERSION, *options]))


def _host(deal: Deal) -> HostLobby:
    return HostLobby(ANN, "Ann", ANN_AT, Rules(), lobby_id=LOBBY, capacity=2, deal=deal)


def _seat(table: HostLobby, bob: GuestLobby) -> TableView:
    """Bob sits and says ready for the table he is shown; the table he saw."""
    seen = None
    bob.challenge = CHALLENGE
    for _ in range(3):  # hello, table, hello (ready for it), table
        for out in table.receive(bob.hello(), 0.0, sender=BOB.peer_id, challenge=CHALLENGE):
            seen = bob.receive(out.data)
    assert isinstance(seen, TableView)
    return seen


@pytest.mark.parametrize("deal", list(Deal))
def test_the_host_starts_the_deal_its_guests_were_shown(deal: Deal) -> None:
    table = _host(deal)
    bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=True)
    seen = _seat(table, bob)
    assert seen.deal is deal
    assert table.why_not_start() is None
    session, outs = table.start()
    assert session.spec.deal is deal
    got = bob.receive(outs[0].data)
    assert isinstance(got, Session) and got.spec == session.spec


@pytest.mark.parametrize(
    ("shown", "started"), [(Deal.COMMIT, Deal.SHUFFLE), (Deal.SHUFFLE, Deal.COMMIT)]
)
def test_a_guest_refuses_a_start_with_another_deal_than_shown(shown: Deal, started: Deal) -> None:
    table = _host(shown)
    bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=True)
    _seat(table, bob)
    members = [(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")]
    cheat = GameSpec.create(members, Rules(), LOBBY, deal=started)
    endpoints = {ANN.peer_id: ANN_AT, BOB.peer_id: BOB_AT}
    with pytest.raises(StartRefusedError, match="another deal than it showed"):
        bob.receive(encode(ANN, LOBBY, Start(cheat.to_wire(), endpoints)))
    assert bob.session is None


def test_a_guest_that_stays_ready_leaves_when_the_deal_changes() -> None:
    table = _host(Deal.COMMIT)
    bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=True)
    _seat(table, bob)
    changed = encode(ANN, LOBBY, TableView(Rules().to_dict(), 2, table.seats, Deal.SHUFFLE))
    with pytest.raises(StartRefusedError, match="changed the deal"):
        bob.receive(changed)


def test_a_person_is_not_ready_for_a_table_whose_deal_changed() -> None:
    table = _host(Deal.COMMIT)
    bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=False)
    _seat(table, bob)
    assert table.why_not_start() is None
    table.deal = Deal.SHUFFLE  # (no command changes it; a host that lies could)
    assert table.why_not_start() == "waiting for Bob to be ready"  # his ready named the other
    bob.receive(encode(ANN, LOBBY, table.view()))
    assert not bob.ready and bob.resets == 1


def test_the_rules_shown_say_a_shuffle_deal_and_not_the_default() -> None:
    assert not any("deal" in line for line in rules_text(Rules()))
    assert "shuffle deal" in rules_text(Rules(), Deal.SHUFFLE)[1]
