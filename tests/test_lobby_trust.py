"""The lobby trusts nobody (issue 14 §1, docs/lobby.md §6): a lying host, squatting keys and a
flood of bad hellos, each against real hosts and guests over real TCP connections on 127.0.0.1.

The lying host is a test double: a listener that speaks the real lobby stream and messages
(frames of :mod:`p2p_nertz.runtime.lobbylink`, messages signed by its key with the library's own
encoder) and says whatever the test wants.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import trio

from p2p_nertz.errors import TransportBrokenError
from p2p_nertz.lobby.messages import (
    CHALLENGE_SIZE,
    Hello,
    LobbyMessageError,
    Seat,
    Start,
    TableView,
    decode,
    encode,
)
from p2p_nertz.lobby.state import (
    KEY_BURST,
    KEY_RATE,
    NEWCOMER_BURST,
    GuestLobby,
    HostLobby,
    LobbyError,
    Session,
)
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyGuest, LobbyHost, join_lobby
from p2p_nertz.runtime.lobbylink import Link, open_link

pytestmark = pytest.mark.anyio

ANN = Identity.generate(seed=b"A" * 32)
BOB = Identity.generate(seed=b"B" * 32)
CAT = Identity.generate(seed=b"C" * 32)
EVE = Identity.generate(seed=b"E" * 32)
LOBBY = bytes(range(100, 132))
CHALLENGE = bytes(range(40, 72))
"""The host's challenge on the connection of the sans-I/O tests' guests."""
ANN_AT = "tcp://127.0.0.1:7600"
BOB_AT = "tcp://127.0.0.1:7601"
CAT_AT = "tcp://127.0.0.1:7602"


async def until(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    """Wait for ``condition`` (a real-socket test's synchronisation, bounded, not a sleep)."""
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.01)


# -- a lying host --------------------------------------------------------------------------------
class LyingHost:
    """Takes a guest's connections (it connects again if one breaks) and hands on their
    frames, each with the link it came on."""

    def __init__(self) -> None:
        self._send, self._frames = trio.open_memory_channel[tuple[Link, bytes]](100)

    async def serve(self, listener: trio.SocketListener) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                stream = await listener.accept()
                nursery.start_soon(self._read, Link(stream, challenge=os.urandom(CHALLENGE_SIZE)))

    async def _read(self, link: Link) -> None:
        async with link.stream:
            await link.greet()
            with contextlib.suppress(TransportBrokenError):  # the guest has gone
                while True:
                    await self._send.send((link, await link.receive()))

    async def receive(self) -> tuple[Link, bytes]:
        return await self._frames.receive()


@asynccontextmanager
async def lying_host() -> AsyncIterator[tuple[LyingHost, str]]:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    host = LyingHost()
    async with listener, trio.open_nursery() as nursery:
        nursery.start_soon(host.serve, listener)
        yield host, f"tcp://127.0.0.1:{listener.socket.getsockname()[1]}"
        nursery.cancel_scope.cancel()


async def heard(router: LyingHost) -> tuple[Link, object]:
    """The next message a guest sends the lying host: the link it came on and its body."""
    routing, data = await router.receive()
    return routing, decode(data).body


async def say(router: LyingHost, routing: Link, body: object) -> None:
    await routing.send(encode(ANN, LOBBY, body))  # type: ignore[arg-type]


def table(rules: Rules, *seats: tuple[Identity, str, str]) -> TableView:
    return TableView(rules.to_dict(), 4, tuple(Seat(i.peer_id, n, at, True) for i, n, at in seats))


def start(rules: Rules, *seats: tuple[Identity, str, str]) -> Start:
    spec = GameSpec.create([(i.peer_id, n) for i, n, _ in seats], rules, LOBBY)
    return Start(spec.to_wire(), {i.peer_id: at for i, _, at in seats})


async def guest_against(
    lie: Callable[[LyingHost], object],
) -> tuple[Session | None, LobbyError | None, list[object]]:
    """Run a real guest (``join_lobby``, as ``nertz join`` does) against a host that lies as
    ``lie(router)`` says; return its session or error, and what it sent after the lie."""
    result: list[Session | LobbyError] = []
    async with lying_host() as (router, endpoint):

        async def sit() -> None:
            try:
                result.append(await join_lobby(BOB, "Bob", BOB_AT, endpoint, timeout=15))
            except LobbyError as exc:
                result.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sit)
            await lie(router)  # type: ignore[misc]
            await until(lambda: bool(result))
            after: list[object] = []
            with trio.move_on_after(2.0):  # what the guest says after the lie, if anything
                while not any(type(b).__name__ == "Bye" for b in after):
                    after.append((await heard(router))[1])
            nursery.cancel_scope.cancel()
    (got,) = result
    if isinstance(got, LobbyError):
        return None, got, after
    return got, None, after


async def test_guest_refuses_a_start_before_any_table() -> None:
    async def lie(router: LyingHost) -> None:
        routing, _ = await heard(router)  # the first hello: no table shown yet
        await say(router, routing, start(Rules(), (ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)))

    session, error, after = await guest_against(lie)
    assert session is None
    assert error is not None and "before it showed us any table" in str(error)
    assert any("refused the start" in getattr(b, "reason", "") for b in after)  # told why


async def test_guest_refuses_a_table_switched_just_before_the_start() -> None:
    shown = table(Rules(), (ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT))
    switched = table(Rules(draw=1), (ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT))

    async def lie(router: LyingHost) -> None:
        routing, _ = await heard(router)
        await say(router, routing, shown)
        await heard(router)  # Bob says ready (for the table shown)
        await say(router, routing, switched)  # ... and at once, before Bob can answer:
        await say(router, routing, start(Rules(draw=1), (ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)))

    session, error, after = await guest_against(lie)
    assert session is None
    assert error is not None and "changed the rules" in str(error)
    assert any("refused the start" in getattr(b, "reason", "") for b in after)


async def test_guest_refuses_a_start_without_a_player_it_was_shown() -> None:
    seats = [(ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT), (CAT, "Cat", CAT_AT)]

    async def lie(router: LyingHost) -> None:
        routing, _ = await heard(router)
        await say(router, routing, table(Rules(), *seats))
        await heard(router)
        await say(router, routing, start(Rules(), *seats[:2]))  # Cat left out

    session, error, _ = await guest_against(lie)
    assert session is None
    assert error is not None and "other players" in str(error)


async def test_guest_takes_the_start_of_the_table_it_said_ready_for() -> None:
    # The double as an honest host: the same guest does start (so the refusals above are
    # about the lies, not the double).
    seats = [(ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)]

    async def honest(router: LyingHost) -> None:
        routing, _ = await heard(router)
        await say(router, routing, table(Rules(), *seats))
        while True:
            _, hello = await heard(router)
            if isinstance(hello, Hello) and hello.ready and hello.table:
                break
        await say(router, routing, start(Rules(), *seats))

    session, error, _ = await guest_against(honest)
    assert error is None and session is not None
    assert set(session.spec.peer_ids) == {ANN.peer_id, BOB.peer_id}


# -- ready is for one table ------------------------------------------------------------------------
@asynccontextmanager
async def dealer(identity: Identity, endpoint: str) -> AsyncIterator[Link]:
    """A raw connection to a lobby, for ``identity`` to say what the test wants."""
    async with open_link(endpoint) as link:
        yield link


async def test_host_does_not_count_a_ready_given_for_an_older_table() -> None:
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7610, auto_start=3)
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        async with dealer(BOB, endpoint) as bob_socket:
            # Bob sits and says ready for the table of Ann and Bob, then says nothing more.
            bob = GuestLobby(BOB, "Bob", BOB_AT, ready=True, stay_ready=True)
            bob.challenge = bob_socket.challenge  # (what the runtime guest does)
            await bob_socket.send(bob.hello())
            with trio.fail_after(15):
                bob.receive(await bob_socket.receive())
            await bob_socket.send(bob.hello())
            await until(lambda: [s.ready for s in lobby.table.seats] == [True, True])
            # Cat sits and is ready: three ready players, but Bob's ready named another table.
            cat: list[Session] = []

            async def cat_sits() -> None:
                cat.append(await join_lobby(CAT, "Cat", CAT_AT, endpoint, timeout=15))

            nursery.start_soon(cat_sits)
            await until(lambda: [s.ready for s in lobby.table.seats] == [True, False, True])
            assert lobby.table.started is None
            assert lobby.table.why_not_start() == "waiting for Bob to be ready"
            # Once Bob says ready for the table as it is, the game starts.
            with trio.fail_after(15):
                while bob.table is None or len(bob.table.seats) < 3:
                    bob.receive(await bob_socket.receive())
            await bob_socket.send(bob.hello())
            hosted = await lobby.wait_started()
            await until(lambda: bool(cat))
        nursery.cancel_scope.cancel()
    assert set(hosted.spec.peer_ids) == {ANN.peer_id, BOB.peer_id, CAT.peer_id}
    assert cat[0] == hosted


async def test_a_person_is_not_ready_any_more_when_the_table_changes() -> None:
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7620)
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        bob = LobbyGuest(BOB, "Bob", BOB_AT, endpoint, ready=True, timeout=15)
        sessions: list[Session | None] = []

        async def bob_sits() -> None:
            sessions.append(await bob.run())

        nursery.start_soon(bob_sits)
        await until(lambda: [s.ready for s in lobby.table.seats] == [True, True])
        cat = LobbyGuest(CAT, "Cat", CAT_AT, endpoint, ready=True, stay_ready=True, timeout=15)
        nursery.start_soon(cat.run)
        # Cat came: Bob (a person) said ready for a table without Cat, so he is not any more.
        await until(lambda: len(lobby.table.seats) == 3 and lobby.table.seats[2].ready)
        await until(lambda: not bob.ready)
        await until(lambda: not lobby.table.seats[1].ready)
        with pytest.raises(LobbyError, match="waiting for Bob"):
            lobby.start()
        bob.set_ready(True)
        await until(lambda: lobby.table.why_not_start() is None)
        hosted = lobby.start()
        await until(lambda: bool(sessions))
        nursery.cancel_scope.cancel()
    assert sessions == [hosted]


# -- squatters -------------------------------------------------------------------------------------
async def test_an_invite_only_table_refuses_other_keys_and_starts_with_the_invited() -> None:
    lobby = LobbyHost(
        ANN, "Ann", Rules(), address="127.0.0.1", game_port=7630, auto_start=2,
        invited=[BOB.fingerprint],
    )  # fmt: skip
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        with pytest.raises(LobbyError, match="invite-only"):
            await join_lobby(EVE, "Eve", "tcp://127.0.0.1:7631", endpoint, timeout=15)
        session = await join_lobby(BOB, "Bob", BOB_AT, endpoint, timeout=15)
        nursery.cancel_scope.cancel()
    assert set(session.spec.peer_ids) == {ANN.peer_id, BOB.peer_id}
    assert [s.name for s in lobby.table.seats] == ["Ann", "Bob"]


async def test_the_host_removes_a_seat_and_the_key_cannot_sit_again() -> None:
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7640, auto_start=3)
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        errors: list[LobbyError] = []

        async def eve_sits() -> None:
            try:
                await join_lobby(EVE, "Eve", "tcp://127.0.0.1:7641", endpoint, timeout=15)
            except LobbyError as exc:
                errors.append(exc)

        nursery.start_soon(eve_sits)
        await until(lambda: len(lobby.table.seats) == 2)
        lobby.remove(EVE.peer_id)
        await until(lambda: bool(errors))
        assert "removed you" in str(errors[0])
        assert [s.name for s in lobby.table.seats] == ["Ann"]
        with pytest.raises(LobbyError, match="removed you"):
            await join_lobby(EVE, "Eve", "tcp://127.0.0.1:7641", endpoint, timeout=15)
        # The table goes on without Eve: Bob and Cat sit, and the game starts.
        bob = join_lobby(BOB, "Bob", BOB_AT, endpoint, timeout=15)
        nursery.start_soon(lambda: bob)
        cat = await join_lobby(CAT, "Cat", CAT_AT, endpoint, timeout=15)
        nursery.cancel_scope.cancel()
    assert set(cat.spec.peer_ids) == {ANN.peer_id, BOB.peer_id, CAT.peer_id}
    assert any("Eve" in line and "removed" in line for line in lobby.table.log)


def test_removing_an_invited_key_refuses_it_until_invited_again() -> None:
    table = HostLobby(
        ANN, "Ann", ANN_AT, Rules(), lobby_id=LOBBY, invited=[BOB.fingerprint, CAT.fingerprint]
    )
    bob = GuestLobby(BOB, "Bob", BOB_AT)
    bob.challenge = CHALLENGE
    table.receive(bob.hello(), 0.0, sender=BOB.peer_id, challenge=CHALLENGE)
    outs = table.remove(BOB.peer_id, "squatting")
    with pytest.raises(LobbyError, match="removed you from this table: squatting"):
        bob.receive(outs[0].data)
    (refusal,) = table.receive(bob.hello(), 1.0, sender=BOB.peer_id, challenge=CHALLENGE)
    assert table.refusals[-1][1] == "removed"
    with pytest.raises(LobbyError, match="removed"):
        GuestLobby(BOB, "Bob", BOB_AT).receive(refusal.data)
    assert table.invite(BOB.fingerprint.upper()) == BOB.fingerprint
    table.receive(bob.hello(), 2.0, sender=BOB.peer_id, challenge=CHALLENGE)
    assert [s.name for s in table.seats] == ["Ann", "Bob"]
    with pytest.raises(LobbyError, match="not a guest"):
        table.remove(EVE.peer_id)


# -- rates -----------------------------------------------------------------------------------------
def test_the_host_takes_a_few_messages_a_second_from_each_key() -> None:
    table = HostLobby(ANN, "Ann", ANN_AT, Rules(), lobby_id=LOBBY)
    bob = GuestLobby(BOB, "Bob", BOB_AT)
    bob.challenge = CHALLENGE

    def answered(now: float, count: int) -> int:
        n = 0
        for _ in range(count):
            try:
                table.receive(bob.hello(), now, sender=BOB.peer_id, challenge=CHALLENGE)
                n += 1
            except LobbyMessageError as exc:
                assert exc.code == "rate-limited"
        return n

    assert answered(0.0, 3 * KEY_BURST) == KEY_BURST
    assert answered(1.0, 3 * KEY_BURST) == KEY_RATE
    # The limit is checked before the signature: a flood of forged bytes costs no verify.
    with pytest.raises(LobbyMessageError, match="messages a second"):
        table.receive(b"\x00" * 200, 1.0, sender=BOB.peer_id, challenge=CHALLENGE)


def test_keys_not_seated_share_one_bucket() -> None:
    table = HostLobby(ANN, "Ann", ANN_AT, Rules(), lobby_id=LOBBY, capacity=2)
    strangers = [Identity.generate(seed=bytes([n]) * 32) for n in range(1, 3 * NEWCOMER_BURST)]
    taken = 0
    for n, who in enumerate(strangers):
        seat = GuestLobby(who, f"s{n}", f"tcp://127.0.0.1:{8000 + n}")
        seat.challenge = CHALLENGE
        hello = seat.hello()
        try:
            table.receive(hello, 0.0, sender=who.peer_id, challenge=CHALLENGE)
            taken += 1
        except LobbyMessageError as exc:
            assert exc.code == "rate-limited"
    assert taken == NEWCOMER_BURST
    assert len(table.seats) == 2  # one sat; the others were refused: the table is full


async def test_a_flood_of_bad_hellos_writes_a_bounded_number_of_log_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="p2p_nertz.lobby")
    every = 0.5
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7650, summary_every=every)
    senders = [Identity.generate(seed=bytes([0x40 + n]) * 32) for n in range(3)]
    per_sender = 1000
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)
        began = trio.current_time()

        async def flood(who: Identity) -> None:
            good = GuestLobby(who, "Mal", "tcp://127.0.0.1:7651").hello()
            forged = good[:-1] + bytes([good[-1] ^ 1])  # a hello whose signature fails
            async with dealer(who, endpoint) as sock:
                for n in range(per_sender):
                    await sock.send(forged if n % 2 else b"\x93garbage")
                await until(lambda: lobby.rejected >= len(senders) * per_sender, 60)

        async with trio.open_nursery() as flooders:
            for who in senders:
                flooders.start_soon(flood, who)
        elapsed = trio.current_time() - began
        # The summary of the last window comes (the tick writes it), then nothing more.
        summary = re.compile(r"dropped [\d,]+ .* messages from [123] senders? in the last")
        await until(lambda: any(summary.match(r.getMessage()) for r in caplog.records))
        nursery.cancel_scope.cancel()
    lines = [r.getMessage() for r in caplog.records if r.name == "p2p_nertz.lobby"]
    kinds = {line.split(" message")[0].split(" ", 2)[-1] for line in lines}
    # At most one line per kind per window, plus the first of each: never one per message.
    assert len(lines) <= len(kinds) * (2 + (elapsed + 2 * every) / every), lines
    assert len(lines) < len(senders) * per_sender / 10
    assert lobby.rejected == len(senders) * per_sender
    assert [s.name for s in lobby.table.seats] == ["Ann"]


# -- the guest's checks, sans-I/O -----------------------------------------------------------------
def shown_to(guest: GuestLobby, view: TableView) -> None:
    guest.receive(encode(ANN, LOBBY, view))


def test_a_guest_takes_no_start_for_a_roster_switched_before_it_said_ready() -> None:
    two = [(ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)]
    three = [*two, (EVE, "Eve", "tcp://127.0.0.1:7603")]
    for stay_ready in (True, False):
        bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=stay_ready)
        bob.hello()
        shown_to(bob, table(Rules(), *two))
        bob.hello()  # ready for Ann and Bob
        shown_to(bob, table(Rules(), *three))  # Eve sits: Bob has not said ready for that
        assert bob.hello_due()
        assert bob.ready is stay_ready  # a person must say it again; a bot will
        assert bob.resets == (0 if stay_ready else 1)
        with pytest.raises(LobbyError, match=r"other players|not said ready"):
            bob.receive(encode(ANN, LOBBY, start(Rules(), *three)))
        assert bob.session is None


def test_a_guest_takes_the_start_of_an_earlier_table_it_said_ready_for() -> None:
    # An honest host whose table went back to what it was (Eve came and went) may start it
    # before it hears Bob again: Bob said ready for it, so he takes it.
    two = [(ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)]
    three = [*two, (EVE, "Eve", "tcp://127.0.0.1:7603")]
    bob = GuestLobby(BOB, "Bob", BOB_AT, stay_ready=True)
    bob.hello()
    for view in (table(Rules(), *two), table(Rules(), *three)):
        shown_to(bob, view)
        bob.hello()  # ready for each
    shown_to(bob, table(Rules(), *two))  # Eve left; the host starts before Bob answers
    session = bob.receive(encode(ANN, LOBBY, start(Rules(), *two)))
    assert isinstance(session, Session)


def test_a_guest_that_is_not_ready_takes_no_start() -> None:
    two = [(ANN, "Ann", ANN_AT), (BOB, "Bob", BOB_AT)]
    bob = GuestLobby(BOB, "Bob", BOB_AT, ready=False)
    bob.hello()
    shown_to(bob, table(Rules(), *two))
    bob.hello()
    with pytest.raises(LobbyError, match="not said ready"):
        bob.receive(encode(ANN, LOBBY, start(Rules(), *two)))
