"""``nertz watch``: the spectator folds the members' signed events; the real program follows a game.

The pure part is checked against an in-memory game (``PeerNetwork``): fed every message the
members sent to all (events, beats and acks, as they push them to a watcher) in any order, with
duplicates and garbage, the spectator reaches the players' final state. The real
program is then run in a pseudo-terminal next to ``nertz play --watcher ENDPOINT#KEY``, while
strangers (no key, a key not the table's) knock at its port.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import zmq
from cli_helpers import make_key, nertz, one_error_line
from hypothesis import given, settings
from hypothesis import strategies as hs
from peer_helpers import PeerNetwork
from stranger_helpers import zmtp_stranger_floods_and_resets
from test_cli_play import Tty, watched_to_the_leave

from cli.keyfile import write_key
from cli.main import build_parser
from cli.play import bots_game
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Send
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.protocol.state import Phase, RoundScored
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.gate import client_keys, server_keys
from p2p_nertz.ui import Tracker, render


@pytest.fixture(scope="module")
def network() -> PeerNetwork:
    net = PeerNetwork(3, seed=4, rules=Rules(target=None, rounds=1))
    net.run_until_over()
    return net


def test_spectator_reaches_the_players_final_state(network: PeerNetwork) -> None:
    spectator = Spectator(network.spec)
    tracker = Tracker(tuple(m.name for m in network.spec.members))
    scored = []
    for wire in network.sent:
        notices = spectator.feed(wire)
        tracker.take(notices, spectator.final)
        scored += [n for n in notices if isinstance(n, RoundScored)]
    player = network.peers[0].final
    assert spectator.final.phase is Phase.OVER
    assert spectator.final.digest() == player.digest()
    assert spectator.final.game.totals == player.game.totals
    assert [s.totals for s in scored] == [player.game.totals]
    assert tracker.board is not None and tracker.board.lake.digest() == (
        player.round.table.lake.digest() if player.round.table is not None else b""
    )
    view = tracker.view(spectator)
    text = render(view).text()
    assert "spectator" in text.splitlines()[0] and "round 1 over" in text


@settings(max_examples=10, deadline=None)
@given(hs.randoms(use_true_random=False))
def test_spectator_any_order_duplicates_and_garbage_give_the_same_state(
    network: PeerNetwork, random: object
) -> None:
    wires = network.event_wires()
    beats = network.beat_wires()
    mixed = [*wires, *beats, *wires[: len(wires) // 3], b"garbage", wires[0][:-1] + b"\x00"]
    random.shuffle(mixed)  # type: ignore[attr-defined]
    spectator = Spectator(network.spec)
    for wire in mixed:
        spectator.feed(wire)
    assert spectator.final.digest() == network.peers[0].final.digest()
    assert spectator.rejected >= 2
    assert spectator.held() == len(wires)


def test_spectator_mid_game_shows_every_tableau_as_revealed(network: PeerNetwork) -> None:
    wires = network.event_wires()
    spectator = Spectator(network.spec)
    for wire in wires[: len(wires) // 2]:
        spectator.feed(wire)
    table = spectator.tentative.table
    assert table is not None
    text = render(Tracker(tuple(m.name for m in network.spec.members)).view(spectator)).text()
    for seat, member in enumerate(network.spec.members):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"{seat} {member.name}"))
        assert f"N {len(table.tableaux[seat].nerts):2d}" in line


def _spectator_after_a_leave(players: int, leaver: int) -> Spectator:
    """A spectator fed a game's messages up to a member's leave in play, which that member
    pushed last (nothing follows: a spectator whose only pushing member left)."""
    net = PeerNetwork(players, seed=6, rules=Rules(target=None, rounds=1))
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers), within=60.0)
    leave = [e.data for e in net.peers[leaver].leave(net.now) if isinstance(e, Send)]
    spectator = Spectator(net.spec)
    for wire in [*net.sent, *leave]:
        spectator.feed(wire)
    assert leaver in spectator.tentative.left
    return spectator


def test_a_spectator_whose_pushing_member_left_says_so_not_playing() -> None:
    """Session 32: the one member pushing to a spectator left, the game went on without it,
    and the spectator showed "playing" over a table that would never move again. It says
    whom it followed, that they left, who plays on, and that nothing more will show here."""
    spectator = _spectator_after_a_leave(3, 0)
    names = tuple(m.name for m in spectator.spec.members)
    tracker = Tracker(names)
    tracker.followed = {0}
    view = tracker.view(spectator)
    header = render(view).text().splitlines()[0]
    assert f"{names[0]} left: not followed here" in header and "playing" not in header, header
    assert view.status == (
        f"{names[0]} left; no one else pushes the game here: {names[1]}, {names[2]} play on "
        "unseen · q quits"
    )
    # A member still in pushes too: the game is followed, and play is on.
    tracker.followed = {0, 2}
    view = tracker.view(spectator)
    assert view.unfollowed is None and "playing" in view.heading(), view.heading()


def test_a_spectator_whose_pushing_member_ended_the_game_by_leaving_says_it_is_over() -> None:
    """With two players the leave ends the game (§9.3, left alone): the spectator says the
    game is over, as any end, not that it goes on unseen."""
    spectator = _spectator_after_a_leave(2, 1)
    tracker = Tracker(tuple(m.name for m in spectator.spec.members))
    tracker.followed = {1}
    view = tracker.view(spectator)
    assert view.unfollowed is None and "game over" in view.heading(), view.heading()


def test_watch_without_a_terminal_says_so_first_and_names_web(tmp_path: Path) -> None:
    """Run by a script (no terminal), ``nertz watch`` printed where members push to it, then
    failed on the screen it could not open: it refuses first, in one line naming ``--web``."""
    spec = bots_game(build_parser("play").parse_args(["play", "--bots", "1", "--seed", "1"]))[1]
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    make_key(tmp_path / "spy.key")
    done = nertz("watch", "--spec", str(tmp_path / "game.spec"), "--bind", "127.0.0.1:0",
                 "--key", str(tmp_path / "spy.key"))  # fmt: skip
    line = one_error_line(done, "needs a terminal", "--web")
    assert line.startswith("nertz watch: error: ") and "--watcher" not in done.stdout + line


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_watch_follows_a_live_game_pushed_by_a_player_and_refuses_strangers(
    tmp_path: Path,
) -> None:
    spy = Identity.generate(derive_seed(b"test-cli-watch-spy"))
    key = tmp_path / "spy.key"
    write_key(key, spy)
    player, watcher, endpoint, text = _player_and_watcher(tmp_path, key, spy)
    assert "spectator" in watcher.line(0)
    # Its help lists a spectator's keys: it listed the players' ("pick a card", "q leave the
    # game (asks first)"), which only say "a spectator only watches" here.
    watcher.send("?")
    helped = watcher.wait("stop watching")
    assert "pick a card" not in helped and "leave the game" not in helped, helped
    watcher.send("\x1b")  # (any other key closes it)
    closed = watcher.wait(lambda t: "stop watching" not in t)
    assert re.search(r"^\d bot1 ", closed, re.M), closed  # (the table again)
    # Every tableau is followed: each player's row, then its piles.
    for name in ("you", "bot1", "bot2"):
        row = re.search(rf"^\d {name} +N +\d+ .*$\n^   N \S+ S \d+ +1:", text, re.M)
        assert row, text
    # Strangers knock: one with no key floods it (ZMTP, PINGs) and resets; one with a key of
    # its own (and the spectator's) sends. Both are refused at the handshake.
    zmtp_stranger_floods_and_resets(endpoint)
    _keyed_stranger_is_refused(endpoint, spy)
    # The spectator lives, and the bots play on: the lake fills in on its screen.
    watched_to_the_leave(player, watcher)
    refused = re.search(
        rb"refused \d+ connection\(s\): \d+ without a key, \d+ with a key not the table's",
        watcher.raw,
    )
    assert refused, watcher.raw[-400:]


def _player_and_watcher(tmp_path: Path, key: Path, spy: Identity) -> tuple[Tty, Tty, str, str]:
    """``nertz watch`` on a port it binds itself (``--bind 127.0.0.1:0``), then ``nertz play``
    pushing to the address it printed: the player, the watcher, the watcher's endpoint and
    its first screen showing the table.

    The spectator needs the game's spec before anyone connects (it admits the members' keys
    only), and the player needs the spectator's address: the spec is the one ``nertz play``
    makes from these arguments (its ``--seed``), made here first. (A port picked beforehand
    and bound afterwards could be taken in between by another worker's process: a flake.)"""
    args = ["play", "--bots", "2", "--speed", "10", "--seed", "12", "--rounds", "1"]
    spec = bots_game(build_parser("play").parse_args(args))[1]
    spec_path = tmp_path / "watched.spec"
    spec_path.write_bytes(spec.to_wire())
    watch = ["watch", "--spec", str(spec_path), "--key", str(key), "--bind", "127.0.0.1:0"]
    watcher = Tty(watch)
    said = _said(watcher, rb"members push here with: --watcher (tcp://127\.0\.0\.1:(\d+))#(\w+)")
    endpoint = said.group(1).decode()
    assert int(said.group(2)) != 0 and said.group(3).decode() == spy.peer_id.hex(), said.group(0)
    address = f"{endpoint}#{spy.peer_id.hex()}"
    game = tmp_path / "game"
    player = Tty([*args, "--dir", str(game), "--watcher", address])
    player.wait("[n] Nerts")
    assert (game / "game.spec").read_bytes() == spec.to_wire()  # the game the spectator admits
    text = watcher.wait(lambda t: re.search(r"^\d bot1 ", t, re.M) is not None)
    return player, watcher, endpoint, text


def _said(tty: Tty, pattern: bytes, timeout: float = 30.0) -> re.Match[bytes]:
    """Wait until ``tty``'s program has written ``pattern`` (before its screen, on stderr)."""
    deadline = time.monotonic() + timeout
    while (found := re.search(pattern, tty.raw)) is None:
        if time.monotonic() > deadline or not tty.pump(0.1):
            raise AssertionError(f"never said {pattern!r}: {tty.raw[-400:]!r}")
    return found


def _keyed_stranger_is_refused(endpoint: str, spy: Identity) -> None:
    """A stranger with a key of its own, knowing the spectator's, sends; return once the
    spectator's port has refused it (its handshake failed at the ZAP reply)."""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        sock = ctx.socket(zmq.DEALER)
        sock.set(zmq.LINGER, 0)
        stranger = Identity.generate(derive_seed(b"test-cli-watch-stranger"))
        client_keys(server_keys(stranger), spy.peer_id).apply(sock)
        monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
        sock.connect(endpoint)
        sock.send(b"let me in")
        assert monitor.poll(20_000), "the keyed stranger was not refused in 20 s"
        monitor.close(linger=0)
        sock.close(linger=0)
    finally:
        ctx.destroy(linger=0)
