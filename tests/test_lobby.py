"""The lobby: beacon codec, signed lobby messages, the host and guest machines, and the runtime
on real sockets (loopback only; the LAN with broadcast is in test_lan.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
import weakref
from collections.abc import Callable

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from p2p_nertz.lobby.beacon import MAX_BEACON, Beacon, BeaconError
from p2p_nertz.lobby.messages import (
    Bye,
    Hello,
    LobbyMessageError,
    Seat,
    Start,
    TableView,
    decode,
    encode,
)
from p2p_nertz.lobby.state import GuestLobby, HostLobby, LobbyError, Session
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import (
    LobbyGuest,
    LobbyHost,
    Offer,
    discover,
    join_lobby,
    route_address,
)

pytestmark = pytest.mark.anyio

ANN = Identity.generate(seed=b"a" * 32)
BOB = Identity.generate(seed=b"b" * 32)
CAT = Identity.generate(seed=b"c" * 32)
EVE = Identity.generate(seed=b"e" * 32)
LOBBY = bytes(range(1, 33))
CHALLENGE = bytes(range(40, 72))
"""The host's challenge on the connection of the sans-I/O tests' guests."""


def beacon() -> Beacon:
    return Beacon(lobby_id=LOBBY, host=ANN.peer_id, port=5670, name="Ann", taken=2, capacity=4)


# -- the beacon ----------------------------------------------------------------------------------
def test_beacon_round_trips_and_is_signed() -> None:
    data = beacon().encode(ANN)
    assert Beacon.decode(data) == beacon()
    assert len(data) <= MAX_BEACON


def test_beacon_signed_by_another_key_is_refused() -> None:
    with pytest.raises(ValueError, match="signed by its host"):
        beacon().encode(BOB)


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d[:10], "too short"),
        (lambda d: d + bytes(300), "too long"),
        (lambda d: b"XXXX" + d[4:], "magic"),
        (lambda d: d[:4] + b"\x09" + d[5:], "version 9"),
        (lambda d: d[:4] + b"\x01" + d[5:], "version 1 is not supported"),  # ZeroMQ's lobby
        (lambda d: d[:-1] + bytes([d[-1] ^ 1]), "signature"),
        (lambda d: d[:40] + bytes([d[40] ^ 1]) + d[41:], "signature|usable"),
        (lambda d: d[:69] + b"\x00\x00" + d[71:], "not a TCP port"),
        (lambda d: d[:71] + b"\x05" + d[72:], "seats taken"),
        (lambda d: d[:73] + b"\x04" + d[74:], "byte name"),
    ],
)
def test_beacon_malformed_is_refused_with_reason(mutate, reason) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BeaconError, match=reason):
        Beacon.decode(mutate(beacon().encode(ANN)))


def test_beacon_carries_a_deal_other_than_commit_in_one_byte() -> None:
    """docs/lobby.md §2: a commit table's beacon is the bytes it always was (no deal byte), a
    shuffle table's one byte longer, signed with it."""
    commit = beacon().encode(ANN)
    assert len(commit) == 74 + len("Ann") + 64  # (version 1's layout, unchanged in 2)
    shuffle = dataclasses.replace(beacon(), deal=Deal.SHUFFLE)
    data = shuffle.encode(ANN)
    assert data[: 74 + 3] == commit[: 74 + 3] and data[74 + 3] == 1 and len(data) == len(commit) + 1
    assert Beacon.decode(data) == shuffle and Beacon.decode(commit).deal is Deal.COMMIT
    assert len(data) <= MAX_BEACON
    # The deal byte is signed: one flipped, or one taken away, and the beacon is refused.
    for bad in (data[:77] + b"\x03" + data[78:], data[:77] + data[78:]):
        with pytest.raises(BeaconError):
            Beacon.decode(bad)


@pytest.mark.parametrize("code", [0, 2, 255])
def test_beacon_with_a_deal_byte_naming_commit_or_no_deal_is_refused(code: int) -> None:
    """One encoding per table: the default deal is never written out (as in the lobby's
    ``table`` and the game spec); a code this version does not know is no deal."""
    body = beacon().encode(ANN)[:-64] + bytes([code])
    data = body + ANN.sign(b"p2p-nertz/v1/beacon\0" + body)
    with pytest.raises(BeaconError, match=f"no deal {code}"):
        Beacon.decode(data)


@given(st.binary(max_size=400))
def test_beacon_decoder_raises_only_beacon_error(data: bytes) -> None:
    with contextlib.suppress(BeaconError):
        Beacon.decode(data)


# -- messages ------------------------------------------------------------------------------------
def test_lobby_message_round_trips() -> None:
    body = Hello("Bob", "tcp://127.0.0.1:7000", True)
    message = decode(encode(BOB, LOBBY, body))
    assert (message.lobby_id, message.sender, message.body) == (LOBBY, BOB.peer_id, body)


@pytest.mark.parametrize("deal", list(Deal))
def test_lobby_hello_and_table_carry_the_game_protocol_version(deal: Deal) -> None:
    """Each carries the version it was made with (envelope.py's, by default): another is read
    as it is, for the other side to refuse in words."""
    for version in (PROTOCOL_VERSION, 4, 255):
        hello = Hello("Bob", "tcp://127.0.0.1:7000", True, b"", version)
        assert decode(encode(BOB, LOBBY, hello)).body == hello
        seat = Seat(ANN.peer_id, "Ann", "tcp://127.0.0.1:7000", True)
        table = TableView({}, 2, (seat,), deal, version)
        assert decode(encode(ANN, LOBBY, table)).body == table
    assert Hello("Bob", "tcp://127.0.0.1:7000", True).version == PROTOCOL_VERSION
    assert host().view().version == PROTOCOL_VERSION


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "too short"),
        (bytes(70), "not msgpack|not a lobby message"),
        (b"\x00" * 40000, "at most"),
    ],
)
def test_lobby_garbage_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LobbyMessageError, match=reason):
        decode(data)


def test_lobby_message_with_a_flipped_bit_is_refused() -> None:
    data = bytearray(encode(BOB, LOBBY, Hello("Bob", "tcp://127.0.0.1:7000", True)))
    data[20] ^= 0x01
    with pytest.raises(LobbyMessageError):
        decode(bytes(data))


V = PROTOCOL_VERSION
SESSION_41_VERSION = 7
"""The lobby version of a build of session 41 (this one's is 9 since session 42)."""


def _signed(identity: Identity, fields: list[object]) -> bytes:
    payload: bytes = msgpack.packb(fields, use_bin_type=True)
    return payload + identity.sign(b"p2p-nertz/v1/lobby\0" + payload)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ([9, "hello", LOBBY, None, ["Bob", "tcp://127.0.0.1:7000", True, b""]], "version 9"),
        ([2, "hello", LOBBY, None, ["Bob", "tcp://127.0.0.1:7000", True, b""]], "version 2"),
        ([3, "hello", LOBBY, None, b"x", ["Bob", "tcp://127.0.0.1:7000", True, b""]], "challenge"),
        ([3, "shout", LOBBY, None, b"", []], "'shout'"),
        ([3, "hello", LOBBY, None, b"", ["", "tcp://127.0.0.1:7000", True, b"", V]], "name"),
        ([3, "hello", LOBBY, None, b"", ["Bob", "tcp://0.0.0.0:7000", True, b"", V]], "endpoint"),
        ([3, "hello", LOBBY, None, b"", ["Bob", "ipc:///tmp/x", True, b"", V]], "endpoint"),
        ([3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:0", True, b"", V]], "endpoint"),
        (
            [3, "hello", b"short", None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", V]],
            "32 bytes",
        ),
        ([3, "table", LOBBY, None, b"", [{}, 9, [], V]], "seats"),
        ([3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True]], "bad 'hello'"),
        ([3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"x", V]], "digest"),
        # The game protocol version (session 40): missing, or not a version.
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b""]],
            "no protocol version",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", "5"]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", True]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", None]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", 0]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", 256]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", -5]],
            "protocol version is",
        ),
        (
            [3, "hello", LOBBY, None, b"", ["Bob", "tcp://127.0.0.1:7000", True, b"", V, V]],
            "bad 'hello'",
        ),
        ([3, "table", LOBBY, None, b"", [{}, 2, []]], "no protocol version"),
        ([3, "table", LOBBY, None, b"", [{}, 2, [], {"deal": "shuffle"}]], "no protocol version"),
        ([3, "table", LOBBY, None, b"", [{}, 2, [], 2.5]], "protocol version is"),
        ([3, "table", LOBBY, None, b"", [{}, 2, [], b"\x05"]], "protocol version is"),
    ],
)
def test_lobby_bad_fields_are_refused(fields: list[object], reason: str) -> None:
    fields[3] = BOB.peer_id
    with pytest.raises(LobbyMessageError, match=reason):
        decode(_signed(BOB, fields))


@given(st.binary(max_size=600))
def test_lobby_decoder_raises_only_lobby_message_error(data: bytes) -> None:
    with contextlib.suppress(LobbyMessageError):
        decode(data)


# -- the host's table and a guest's seat (sans-I/O) ----------------------------------------------
def host(capacity: int = 4, rules: Rules | None = None) -> HostLobby:
    return HostLobby(
        ANN, "Ann", "tcp://127.0.0.1:7000", rules or Rules(), lobby_id=LOBBY, capacity=capacity
    )


def guest(
    identity: Identity, name: str, port: int, *, ready: bool = True, stay_ready: bool = True
) -> GuestLobby:
    seat = GuestLobby(identity, name, f"tcp://127.0.0.1:{port}", ready=ready, stay_ready=stay_ready)
    seat.challenge = CHALLENGE
    return seat


_SEATED: weakref.WeakKeyDictionary[HostLobby, list[GuestLobby]] = weakref.WeakKeyDictionary()


def _exchange(table: HostLobby, g: GuestLobby, now: float) -> list[object]:
    seated = _SEATED.setdefault(table, [])
    got = []
    g.challenge = CHALLENGE  # (every guest here says everything on one connection)
    for out in table.receive(g.hello(), now, sender=g.identity.peer_id, challenge=CHALLENGE):
        if out.to is None:
            for other in seated:
                if other is not g and other.identity.peer_id in {s.peer_id for s in table.seats}:
                    other.receive(out.data)
        if out.to in (None, g.identity.peer_id):
            got.append(g.receive(out.data))
    if g not in seated:
        seated.append(g)
    return got


def deliver(table: HostLobby, g: GuestLobby, now: float = 0.0) -> list[object]:
    """Send ``g``'s hello to the host, pass every answer on to the guests it is addressed to
    (a broadcast to every guest seated so far); then let every seated guest say what it now
    says for the table, as a runtime guest does at once; return what ``g`` got first."""
    got = _exchange(table, g, now)
    seated = _SEATED[table]
    for _ in range(20):
        keys = {s.peer_id for s in table.seats}
        due = [x for x in seated if x.hello_due() and x.identity.peer_id in keys]
        if not due:
            break
        for x in due:
            _exchange(table, x, now)
    return got


def test_lobby_guests_are_seated_in_order_and_see_the_table() -> None:
    table = host()
    bob, cat = guest(BOB, "Bob", 7001), guest(CAT, "Cat", 7002)
    deliver(table, bob)
    (view,) = deliver(table, cat)
    assert isinstance(view, TableView)
    assert [s.name for s in view.seats] == ["Ann", "Bob", "Cat"]
    assert bob.lobby_id == LOBBY and bob.host == ANN.peer_id
    assert table.log == [f"Bob ({BOB.fingerprint}) sat down", f"Cat ({CAT.fingerprint}) sat down"]


def test_lobby_start_gives_every_member_the_same_game() -> None:
    table = host()
    bob, cat = guest(BOB, "Bob", 7001), guest(CAT, "Cat", 7002)
    deliver(table, bob)
    deliver(table, cat)
    session, outs = table.start()
    sessions = [g.receive(outs[0].data) for g in (bob, cat)]
    assert all(s == session for s in sessions)
    assert isinstance(session, Session)
    assert set(session.spec.peer_ids) == {ANN.peer_id, BOB.peer_id, CAT.peer_id}
    assert session.endpoints[BOB.peer_id] == "tcp://127.0.0.1:7001"
    # A guest asking again after the start gets the start again; a stranger is refused.
    (again,) = deliver(table, bob)
    assert again == session
    with pytest.raises(LobbyError, match="the game has started"):
        deliver(table, guest(EVE, "Eve", 7009))


def test_lobby_does_not_start_until_everyone_is_ready() -> None:
    table = host()
    bob = guest(BOB, "Bob", 7001, ready=False)
    deliver(table, bob)
    assert table.why_not_start() == "waiting for Bob to be ready"
    with pytest.raises(LobbyError, match="waiting for Bob"):
        table.start()
    bob.ready = True
    deliver(table, bob)
    assert table.why_not_start() is None


def test_lobby_does_not_start_with_a_roster_the_rules_refuse() -> None:
    table = host(rules=Rules(pairs=True))
    deliver(table, guest(BOB, "Bob", 7001))
    deliver(table, guest(CAT, "Cat", 7002))
    reason = table.why_not_start()
    assert reason is not None and "pair" in reason
    assert table.started is None


def test_lobby_full_table_refuses_another_guest() -> None:
    table = host(capacity=2)
    deliver(table, guest(BOB, "Bob", 7001))
    with pytest.raises(LobbyError, match="full"):
        deliver(table, guest(CAT, "Cat", 7002))
    assert len(table.seats) == 2


@pytest.mark.parametrize("other", [SESSION_41_VERSION, PROTOCOL_VERSION + 1])
def test_lobby_host_seats_no_guest_of_another_protocol_version(other: int) -> None:
    """The host refuses the guest in words that name both versions, tells its person once
    (not at each of the guest's hellos), and its table is as it was: a guest of its own
    version sits after."""
    table = host()
    bob = GuestLobby(BOB, "bot2", "tcp://127.0.0.1:7001", stay_ready=True, version=other)
    for _ in range(3):
        with pytest.raises(LobbyError) as refused:
            deliver(table, bob)
        assert str(refused.value) == (
            f"the host refused us: this table speaks protocol version {PROTOCOL_VERSION}; "
            f"bot2 speaks {other}"
        )
    assert [s.name for s in table.seats] == ["Ann"]
    assert table.log == [
        f"bot2 ({BOB.fingerprint}) speaks protocol version {other}; this nertz speaks "
        f"{PROTOCOL_VERSION}: not seated"
    ]
    assert bob.table is None and bob.accepted is None
    deliver(table, guest(CAT, "Cat", 7002))
    assert [s.name for s in table.seats] == ["Ann", "Cat"]


@pytest.mark.parametrize("other", [SESSION_41_VERSION, PROTOCOL_VERSION + 1])
def test_lobby_guest_sits_at_no_table_of_another_protocol_version(other: int) -> None:
    """A host of another version (one that seats anybody: not this nertz) shows its table:
    the guest leaves in one line naming both, and says ready for no table."""
    table = HostLobby(
        ANN, "Ann", "tcp://127.0.0.1:7000", Rules(), lobby_id=LOBBY, capacity=2, version=other
    )
    bob = guest(BOB, "Bob", 7001)
    seated = table.receive(
        encode(BOB, LOBBY, Hello("Bob", "tcp://127.0.0.1:7001", True, b"", other), CHALLENGE),
        0.0,
        sender=BOB.peer_id,
        challenge=CHALLENGE,
    )
    (shown,) = [out.data for out in seated]
    with pytest.raises(LobbyError) as left:
        bob.receive(shown)
    assert str(left.value) == (
        f"Ann speaks protocol version {other}; this nertz speaks {PROTOCOL_VERSION}: not joined"
    )
    assert bob.table is None and bob.accepted is None
    said = decode(bob.hello()).body
    assert isinstance(said, Hello) and said.table == b""  # (ready for no table)


def test_lobby_refuses_a_taken_endpoint() -> None:
    table = host()
    with pytest.raises(LobbyError, match="already taken"):
        deliver(table, GuestLobby(BOB, "Bob", "tcp://127.0.0.1:7000"))
    assert len(table.seats) == 1


def test_lobby_refuses_messages_signed_by_another_key_or_for_another_lobby() -> None:
    table = host()
    hello = guest(BOB, "Bob", 7001).hello()
    with pytest.raises(LobbyMessageError, match="another key"):
        table.receive(hello, 0.0, sender=EVE.peer_id, challenge=CHALLENGE)
    other = encode(BOB, bytes(31) + b"\x07", Hello("Bob", "tcp://127.0.0.1:7001", True), CHALLENGE)
    with pytest.raises(LobbyMessageError, match="another lobby"):
        table.receive(other, 0.0, challenge=CHALLENGE)
    with pytest.raises(LobbyMessageError, match="cannot send start"):
        table.receive(encode(BOB, LOBBY, Start(b"", {}), CHALLENGE), 0.0, challenge=CHALLENGE)
    assert len(table.seats) == 1


def _ticks(table: HostLobby, start: float, end: float) -> list[str]:
    """Tick ``table`` every 0.5 s from ``start`` to ``end`` (both included), as the runtime
    does; the seats' names after the last."""
    for n in range(round((end - start) * 2) + 1):
        table.tick(start + n / 2)
    return [s.name for s in table.seats]


def test_lobby_silent_guest_is_unseated_and_bye_leaves() -> None:
    table = host()
    deliver(table, guest(BOB, "Bob", 7001), now=0.0)
    _ticks(table, 0.5, 3.5)
    cat = guest(CAT, "Cat", 7002)
    deliver(table, cat, now=4.0)  # Bob says ready for the new table at 4.0 too
    assert _ticks(table, 4.0, 8.0) == ["Ann", "Bob", "Cat"]
    _exchange(table, cat, now=8.0)
    assert table.tick(8.5) == [] and table.tick(9.0) == []  # (Bob silent 5 s: not more)
    assert table.tick(9.5) != []
    assert [s.name for s in table.seats] == ["Ann", "Cat"]
    table.receive(cat.bye("gone"), 10.0, challenge=CHALLENGE)
    assert [s.name for s in table.seats] == ["Ann"]
    assert table.log[-1].endswith("left: gone")


def test_lobby_host_woken_from_its_own_stop_reads_before_it_unseats() -> None:
    # Session 35: a host stopped 6 s (SIGSTOP) ticked on waking before it read the hellos
    # that had waited for it, and unseated a live guest for the host's own silence.
    table = host()
    bob = guest(BOB, "Bob", 7001)
    deliver(table, bob, now=0.0)
    assert _ticks(table, 0.5, 1.0) == ["Ann", "Bob"]  # stopped after the tick at 1.0
    assert table.tick(7.0) == []  # woken: Bob unheard for 7 s, all of it the host's stop
    deliver(table, bob, now=7.0)  # then it reads what Bob said meanwhile
    assert not [line for line in table.log if "timed out" in line]
    # Bob silent from then on is unseated 5 s later, as any guest.
    assert _ticks(table, 7.5, 12.0) == ["Ann", "Bob"]
    assert _ticks(table, 12.5, 12.5) == ["Ann"]


def test_lobby_host_woken_unseats_a_guest_gone_meanwhile_once_it_listened() -> None:
    # Stopped 20 s while Bob gave up on it: woken, it listens LISTEN_GAP (2 s: two hellos of a
    # live guest) before it unseats Bob. A pause shorter than that is no stop of its own.
    table = host()
    deliver(table, guest(BOB, "Bob", 7001), now=0.0)
    assert _ticks(table, 0.5, 1.0) == ["Ann", "Bob"]
    assert _ticks(table, 21.0, 23.0) == ["Ann", "Bob"]
    assert _ticks(table, 23.5, 23.5) == ["Ann"]
    assert table.log[-1] == f"Bob ({BOB.fingerprint}) timed out"
    table = host()
    deliver(table, guest(BOB, "Bob", 7001), now=0.0)
    assert _ticks(table, 0.5, 4.0) == ["Ann", "Bob"]
    assert _ticks(table, 5.5, 5.5) == ["Ann"]  # (a pause of 1.5 s: Bob silent 5.5 s)


def test_guest_refuses_a_start_that_is_not_the_shown_game() -> None:
    table = host()
    bob = guest(BOB, "Bob", 7001)
    deliver(table, bob)
    cheat = GameSpec.create([(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")], Rules(draw=1), LOBBY)
    endpoints = {ANN.peer_id: "tcp://127.0.0.1:7000", BOB.peer_id: "tcp://127.0.0.1:7001"}
    with pytest.raises(LobbyError, match="other rules"):
        bob.receive(encode(ANN, LOBBY, Start(cheat.to_wire(), endpoints)))
    without = GameSpec.create([(ANN.peer_id, "Ann"), (CAT.peer_id, "Cat")], Rules(), LOBBY)
    with pytest.raises(LobbyError, match="without us"):
        bob.receive(encode(ANN, LOBBY, Start(without.to_wire(), endpoints)))
    moved = {**endpoints, BOB.peer_id: "tcp://127.0.0.1:9999"}
    spec = GameSpec.create([(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")], Rules(), LOBBY)
    with pytest.raises(LobbyError, match="not ours"):
        bob.receive(encode(ANN, LOBBY, Start(spec.to_wire(), moved)))
    assert bob.session is None


def test_guest_ignores_a_table_from_someone_else_than_the_host() -> None:
    bob = guest(BOB, "Bob", 7001)
    table = host()
    deliver(table, bob)
    forged = encode(EVE, LOBBY, Bye("closing"))
    with pytest.raises(LobbyMessageError, match="not the host"):
        bob.receive(forged)
    assert bob.session is None


def test_guest_learns_the_host_closed_the_lobby() -> None:
    table = host()
    bob = guest(BOB, "Bob", 7001)
    deliver(table, bob)
    (out,) = table.close("host went home")
    with pytest.raises(LobbyError, match="host went home"):
        bob.receive(out.data)


# -- on real sockets (loopback) ------------------------------------------------------------------
async def test_lobby_on_loopback_starts_a_game_for_everyone() -> None:
    seen: list[int] = []
    lobby = LobbyHost(
        ANN, "Ann", Rules(), address="127.0.0.1", game_port=7100, auto_start=3,
        on_change=lambda t: seen.append(len(t.seats)),
    )  # fmt: skip
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        sessions: dict[str, Session] = {}

        async def sit(identity: Identity, name: str, port: int) -> None:
            sessions[name] = await join_lobby(
                identity, name, f"tcp://127.0.0.1:{port}", endpoint, timeout=10
            )

        nursery.start_soon(sit, BOB, "Bob", 7101)
        nursery.start_soon(sit, CAT, "Cat", 7102)
        hosted = await lobby.wait_started()
        with trio.fail_after(10):
            while len(sessions) < 2:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert sessions["Bob"] == sessions["Cat"] == hosted
    assert hosted.endpoints[ANN.peer_id] == "tcp://127.0.0.1:7100"
    assert max(seen) == 3


async def test_join_with_nobody_listening_fails_with_a_clear_error() -> None:
    from cli_helpers import held_port

    with held_port() as port, pytest.raises(LobbyError, match="no answer from a lobby"):
        # (held bound, never listening: nobody answers there)
        await join_lobby(BOB, "Bob", "tcp://127.0.0.1:7201", f"tcp://127.0.0.1:{port}", timeout=0.5)


async def test_a_guest_whose_host_dies_leaves_with_a_clear_error() -> None:
    """A host that stops answering (killed: no ``bye``) does not leave its guests waiting."""
    # The game ports are only announced (no game starts); the lobby binds any free port.
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7210)
    errors: list[str] = []

    async def sit(guest: LobbyGuest) -> None:
        with pytest.raises(LobbyError) as raised:
            await guest.run()
        errors.append(str(raised.value))

    async with trio.open_nursery() as nursery:
        async with trio.open_nursery() as hosting:
            endpoint = await hosting.start(lobby.serve)
            # The host's first answer waited for as long as a loaded machine may take (at 1 s
            # the guest gave up before it was seated), then its silence looked for at 1 s.
            guest = LobbyGuest(
                BOB, "Bob", "tcp://127.0.0.1:7211", endpoint, ready=False, timeout=60.0
            )
            nursery.start_soon(sit, guest)
            with trio.fail_after(60):
                while guest.table is None:  # seated: the host has answered
                    await trio.sleep(0.01)
            guest.timeout = 1.0
            hosting.cancel_scope.cancel()  # the host dies without a word
        with trio.fail_after(10):
            while not errors:
                await trio.sleep(0.01)
    assert "has not answered for 1 s" in errors[0]


def test_a_guest_woken_from_its_own_stop_reads_the_host_before_it_leaves() -> None:
    """A guest (and its host: one process here) stopped past the guest's patience, as a lid
    closed on both would: woken, the guest reads the host's answers before it calls the host
    silent (its loop's turn had come before the host's answer was read: it left, session 35).
    Real sockets on 127.0.0.1; the stop is a jump of trio's clock, frozen otherwise."""
    clock = trio.testing.MockClock()
    errors: list[LobbyError] = []
    tables: list[float] = []

    async def sit(guest: LobbyGuest) -> None:
        try:
            await guest.run()
        except LobbyError as exc:
            errors.append(exc)

    async def until(what: Callable[[], bool]) -> None:
        # (Time stands still: real I/O runs; a real bound on a loaded machine, not a timing.)
        end = time.monotonic() + 60
        while not what() and time.monotonic() < end:
            await trio.sleep(0)

    async def main() -> None:
        lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7220)
        async with trio.open_nursery() as nursery:
            endpoint = await nursery.start(lobby.serve)
            guest = LobbyGuest(
                BOB, "Bob", "tcp://127.0.0.1:7221", endpoint, ready=False, timeout=5.0,
                on_table=lambda _: tables.append(trio.current_time()),
            )  # fmt: skip
            nursery.start_soon(sit, guest)
            await until(lambda: bool(tables))
            clock.jump(6.0)  # stopped 6 s: past its patience (5 s), short of LINK_IDLE
            woke = trio.current_time()
            await until(lambda: bool(errors) or tables[-1] >= woke)
            assert not errors, errors
            assert [s.name for s in lobby.table.seats] == ["Ann", "Bob"]
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)


async def test_lobby_host_ignores_garbage_on_its_socket() -> None:
    import zmq

    from p2p_nertz.runtime.zmqtrio import create_socket

    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7300)
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            async with create_socket(ctx, zmq.DEALER, identity=b"L" + EVE.peer_id) as dealer:
                dealer.connect(endpoint)
                await dealer.send_multipart([b"garbage"])
                # A hello signed by Bob on Eve's connection is refused too.
                await dealer.send_multipart([guest(BOB, "Bob", 7301).hello()])
                with trio.fail_after(10):
                    while lobby.rejected < 2:
                        await trio.sleep(0.01)
        finally:
            ctx.term()
        nursery.cancel_scope.cancel()
    assert [s.name for s in lobby.table.seats] == ["Ann"]


async def test_discover_hears_beacons_and_ignores_junk_on_loopback() -> None:
    # Unicast to 127.0.0.1 (never broadcast on this machine's interfaces): the same code path
    # as a broadcast beacon on a LAN, which test_lan.py covers inside network namespaces.
    # Port 0: discover() binds a free UDP port and says which (no port picked, then bound).
    junk: list[str] = []
    heard: list[Offer] = []
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            functools.partial(
                discover, "127.0.0.1", port=0, timeout=10, until=lambda o: True,
                on_offer=heard.append, on_junk=lambda src, why: junk.append(why),
            )
        )  # fmt: skip
        assert port != 0
        # Bound before start() returned: the noise and the beacons that follow all reach it.
        with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as sock:
            await sock.sendto(b"not a beacon", ("127.0.0.1", port))
        lobby = LobbyHost(
            ANN, "Ann", Rules(), address="127.0.0.1", game_port=7400, broadcast="127.0.0.1",
            beacon_port=port,
        )  # fmt: skip
        endpoint = await nursery.start(lobby.serve)
        with trio.fail_after(10):
            while not heard:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    offer = heard[0]
    assert offer.beacon.host == ANN.peer_id and offer.lobby_endpoint == endpoint
    assert offer.address == "127.0.0.1"
    assert junk == ["too short for a beacon: 12 bytes"]


def test_route_address_of_loopback_is_loopback() -> None:
    assert route_address("127.0.0.1") == "127.0.0.1"
