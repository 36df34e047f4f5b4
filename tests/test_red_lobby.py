"""What a stranger signs and sends a lobby host, repeated in the host's log (session 27's red
team): a name or an endpoint of 30,000 characters, a kind that is no kind, a name with a
right-to-left override or a terminal escape, a name of spaces or one padded with them (the name
rule: p2p_nertz/protocol/names.py). The host refuses each without changing its table, seats a
real guest after, and the line it logs stays one short line with nothing in it a terminal
would act on. Real :class:`LobbyHost` on 127.0.0.1; the stranger is a raw TCP
connection that answers the host's challenge, its messages signed with its own key.
"""

from __future__ import annotations

import logging

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from test_lobby_floods import a_guest_sits_and_the_game_starts, challenge_of, serving, stranger

from p2p_nertz.lobby.framing import PREAMBLE, frame
from p2p_nertz.lobby.messages import _DOMAIN, VERSION, Hello, encode
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed

pytestmark = pytest.mark.anyio

MAL = Identity.generate(derive_seed(b"test-red-lobby", 0))
HUGE = 30_000  # (a frame holds 32,768 bytes: the largest a stranger can send)


def _hello(lobby_id: bytes, challenge: bytes, name: str, endpoint: str) -> bytes:
    return encode(MAL, lobby_id, Hello(name, endpoint, False, b""), challenge)


def _kind(lobby_id: bytes, challenge: bytes, kind: str) -> bytes:
    payload = msgpack.packb(
        [VERSION, kind, lobby_id, bytes(MAL.peer_id), challenge, []], use_bin_type=True
    )
    return bytes(payload + MAL.sign(_DOMAIN + payload))


CASES = {
    "a name of 30,000 characters": lambda i, c: _hello(i, c, "n" * HUGE, "tcp://127.0.0.1:7790"),
    "an endpoint of 30,000": lambda i, c: _hello(i, c, "Mal", "tcp://" + "9" * HUGE),
    "a kind of 30,000": lambda i, c: _kind(i, c, "k" * HUGE),
    "a right-to-left name": lambda i, c: _hello(i, c, "\u202eAnn", "tcp://127.0.0.1:7790"),
    "a name with an escape": lambda i, c: _hello(i, c, "\x1b[2J", "tcp://127.0.0.1:7790"),
    "a name of spaces": lambda i, c: _hello(i, c, " ", "tcp://127.0.0.1:7790"),
    "a padded name": lambda i, c: _hello(i, c, "  Ann  ", "tcp://127.0.0.1:7790"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_strangers_signed_nonsense_is_refused_in_one_short_line(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="p2p_nertz")
    async with serving(auto_start=2) as (lobby, endpoint):
        stream = await stranger(endpoint)
        challenge = await challenge_of(stream)
        message = CASES[case](lobby.table.lobby_id, challenge)
        await stream.send_all(PREAMBLE + frame(message))
        with trio.fail_after(15):
            while lobby.rejected < 1:
                await trio.sleep(0.01)
        assert [s.name for s in lobby.table.seats] == ["Ann"]
        await a_guest_sits_and_the_game_starts(lobby, endpoint)
    lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert lines, caplog.text
    for line in lines:
        assert len(line) < 300, line[:400]
        assert line.isprintable(), repr(line)
