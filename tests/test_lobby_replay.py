"""A lobby message replayed whole, signature and all, on another connection is refused
(docs/lobby.md §3 "Who a connection is"), and the lobby's stream tells another version apart
at once (§3 "The stream").

The host chooses a challenge for each connection (its first frame) and takes a guest's message
only on the connection whose challenge it carries. Real :class:`LobbyHost` and
:class:`LobbyGuest` on 127.0.0.1; the replayer and the old sides are raw connections.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgpack  # type: ignore[import-untyped]
import pytest
import trio

from p2p_nertz.errors import TransportBrokenError
from p2p_nertz.lobby.framing import HEADER, PREAMBLE
from p2p_nertz.lobby.messages import TableView, decode
from p2p_nertz.lobby.state import GuestLobby, HostLobby, LobbyError, Session
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyGuest, LobbyHost, join_lobby
from p2p_nertz.runtime.lobbylink import Link, open_link, split_endpoint

pytestmark = pytest.mark.anyio

ANN, BOB, EVE = (Identity.generate(derive_seed(b"test-lobby-replay", n)) for n in range(3))
ANN_AT, BOB_AT = "tcp://127.0.0.1:7800", "tcp://127.0.0.1:7801"
LOBBY = bytes(range(1, 33))


async def until(condition: object, seconds: float = 15.0) -> None:
    """Wait for ``condition()`` (a real-socket test's synchronisation, bounded)."""
    with trio.fail_after(seconds):
        while not condition():  # type: ignore[operator]
            await trio.sleep(0.01)


@asynccontextmanager
async def serving() -> AsyncIterator[tuple[LobbyHost, str]]:
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7800, lobby_id=LOBBY)
    async with trio.open_nursery() as nursery:
        yield lobby, await nursery.start(lobby.serve)
        nursery.cancel_scope.cancel()


async def captured(endpoint: str) -> tuple[bytes, bytes, bytes]:
    """Bob sits on a connection of his own, says ready for the table of Ann and Bob, and
    leaves with a ``bye``: the three messages as an eavesdropper captured them."""
    bob = GuestLobby(BOB, "Bob", BOB_AT, ready=False, stay_ready=True)
    async with open_link(endpoint) as link:
        bob.challenge = link.challenge
        hello = bob.hello()
        await link.send(hello)
        with trio.fail_after(15):
            assert isinstance(bob.receive(await link.receive()), TableView)
        bob.ready = True
        ready = bob.hello()
        await link.send(ready)
        with trio.fail_after(15):
            view = bob.receive(await link.receive())
        assert isinstance(view, TableView) and [s.ready for s in view.seats] == [True, True]
        bye = bob.bye("back in a moment")
        await link.send(bye)
        await link.close_write()
    return hello, ready, bye


async def frames_until_closed(link: Link) -> list[bytes]:
    """Every frame the host sends on ``link`` until it closes it."""
    got = []
    with trio.fail_after(15):
        while True:
            try:
                got.append(await link.receive())
            except TransportBrokenError:
                return got


async def test_a_replayed_hello_ready_and_bye_are_refused_on_another_connection() -> None:
    async with serving() as (lobby, endpoint):
        hello, ready, bye = await captured(endpoint)
        await until(lambda: [s.name for s in lobby.table.seats] == ["Ann"])  # Bob left
        async with open_link(endpoint) as eve:
            # Bob is away: his hello replayed does not seat him (nor give Eve his answers).
            rejected = lobby.rejected
            await eve.send(hello)
            await until(lambda: lobby.rejected == rejected + 1)
            assert [s.name for s in lobby.table.seats] == ["Ann"]
            # Bob comes back, not ready yet, on a connection of his own.
            guest = LobbyGuest(BOB, "Bob", BOB_AT, endpoint, ready=False, timeout=15)
            sessions: list[Session | None] = []
            async with trio.open_nursery() as nursery:

                async def sit() -> None:
                    sessions.append(await guest.run())

                nursery.start_soon(sit)
                await until(lambda: [s.name for s in lobby.table.seats] == ["Ann", "Bob"])
                # His ready for this very table, his hello and his bye, replayed on Eve's
                # connection: each refused; Bob stays seated and not ready.
                for message in (ready, hello, bye):
                    await eve.send(message)
                await until(lambda: lobby.rejected == rejected + 4)
                assert [(s.name, s.ready) for s in lobby.table.seats] == [
                    ("Ann", True),
                    ("Bob", False),
                ]
                assert lobby.drops.total >= 4
                # Bob says ready himself: the host hears him, and he gets the start.
                guest.set_ready(True)
                await until(lambda: [s.ready for s in lobby.table.seats] == [True, True])
                session = lobby.start()
                await until(lambda: bool(sessions))
                nursery.cancel_scope.cancel()
            assert sessions == [session]
            # Eve got nothing of Bob's (no table, no start) before the host closed her
            # connection for a frame of length 0.
            await eve.stream.send_all(HEADER.pack(0))
            assert await frames_until_closed(eve) == []


def test_a_message_answering_another_challenge_spends_nothing_of_its_signers() -> None:
    """Sans-I/O: a replay on a connection not bound to a key is refused before it is counted
    against its signer's rate, so a replayer cannot use it up and keep the signer out."""
    table = HostLobby(ANN, "Ann", ANN_AT, Rules(), lobby_id=LOBBY)
    bob = GuestLobby(BOB, "Bob", BOB_AT)
    bob.challenge = bytes(range(32))
    replayed = bob.hello()
    for _ in range(100):
        with pytest.raises(Exception, match="another connection's challenge") as refused:
            table.receive(replayed, 0.0, challenge=bytes(range(1, 33)))
        assert refused.value.code == "replayed"  # type: ignore[attr-defined]
    assert [s.name for s in table.seats] == ["Ann"]
    (answer,) = table.receive(replayed, 0.0, challenge=bytes(range(32)))
    assert [s.name for s in decode(answer.data).body.seats] == ["Ann", "Bob"]  # type: ignore[union-attr]


# -- another version of the stream -------------------------------------------------------------
async def test_a_guest_at_a_lobby_of_an_older_stream_says_so_at_once() -> None:
    """A host of stream version 1 (session 22, before the challenge) sends its preamble and
    waits for a hello: the guest names both versions rather than wait for its timeout."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with listener, trio.open_nursery() as nursery:

        async def old_host() -> None:
            while True:
                nursery.start_soon(greet_and_wait, await listener.accept())

        async def greet_and_wait(stream: trio.SocketStream) -> None:
            async with stream:
                await stream.send_all(PREAMBLE[:7] + b"\x01")
                await trio.sleep_forever()  # (a hello from a guest of version 1 never comes)

        nursery.start_soon(old_host)
        endpoint = f"tcp://127.0.0.1:{listener.socket.getsockname()[1]}"
        # (At once: well before the guest's own timeout, and long enough for a loaded machine.)
        with trio.fail_after(20), pytest.raises(LobbyError) as refused:
            await join_lobby(BOB, "Bob", BOB_AT, endpoint, timeout=60)
        nursery.cancel_scope.cancel()
    assert str(refused.value) == (
        f"{endpoint} is not a lobby we can sit at: it speaks version 1 of the lobby's stream "
        "and this p2p-nertz speaks version 2: upgrade the other side's p2p-nertz"
    )


async def test_a_guest_of_an_older_stream_is_told_the_hosts_version_and_closed() -> None:
    """An old guest (stream version 1) reads the host's preamble first, which names version 2
    (an old guest says "lobby stream version 2 is not supported (this is 1)"); the host counts
    it as a broken stream, closes it, and serves on."""
    async with serving() as (lobby, endpoint):
        stream = await trio.open_tcp_stream(*split_endpoint(endpoint))
        async with stream:
            await stream.send_all(PREAMBLE[:7] + b"\x01")
            got = b""
            with trio.fail_after(15):
                while data := await stream.receive_some(100):
                    got += data
        assert got[: len(PREAMBLE)] == PREAMBLE and PREAMBLE[7] == 2
        await until(lambda: lobby.rejected == 1)
        assert lobby.drops.total == 1
        assert [s.name for s in lobby.table.seats] == ["Ann"]


async def test_a_guest_stops_at_once_at_a_host_whose_messages_are_of_another_version() -> None:
    """A host of this stream whose messages are of version 2 (an implementation that bumped
    one and not the other): the guest says so at its first answer, not after its timeout."""
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with listener, trio.open_nursery() as nursery:

        async def host() -> None:
            link = Link(await listener.accept(), challenge=bytes(range(32)))
            async with link.stream:
                await link.greet()
                await link.receive()  # the guest's hello
                payload: bytes = msgpack.packb(
                    [2, "table", LOBBY, ANN.peer_id, [{}, 2, []]], use_bin_type=True
                )
                await link.send(payload + ANN.sign(b"p2p-nertz/v1/lobby\0" + payload))
                await trio.sleep_forever()

        nursery.start_soon(host)
        endpoint = f"tcp://127.0.0.1:{listener.socket.getsockname()[1]}"
        # (At once: well before the guest's own timeout, and long enough for a loaded machine.)
        with trio.fail_after(20), pytest.raises(LobbyError) as refused:
            await join_lobby(BOB, "Bob", BOB_AT, endpoint, timeout=60)
        nursery.cancel_scope.cancel()
    assert str(refused.value) == (
        "the host speaks another lobby: lobby message version 2 is not supported (this "
        "p2p-nertz speaks 3); upgrade the older side"
    )
