"""Where a game made on this machine (``nertz demo``, ``nertz play --bots``) keeps its spec and
logs (``cli.demo.game_dir``): the default directory is named from the game id, which comes from
``--seed``, so the same seed played again must get a directory of its own, never the first's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.demo import game_dir
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules


def _spec(seed: int) -> GameSpec:
    keys = [Identity.generate(derive_seed(b"game-dir-key", seed, n)) for n in range(2)]
    return GameSpec.create(
        [(k.peer_id, f"P{n + 1}") for n, k in enumerate(keys)],
        Rules(target=None, rounds=1),
        derive_seed(b"game-dir-game", seed)[:16],
    )


def _files(place: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(place.iterdir())}


def test_the_same_seed_again_gets_a_directory_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _spec(5)
    first, first_spec, note = game_dir(None, "demo", spec)
    assert note == ""
    assert first == Path("nertz-logs") / f"demo-{spec.game_id.hex()[:12]}"
    (first / "p1.log").write_bytes(b"the first game's log")
    before = _files(first)

    second, second_spec, note = game_dir(None, "demo", spec)
    assert second == first.with_name(first.name + "-2")
    assert second_spec == second / "game.spec" and second_spec.read_bytes() == spec.to_wire()
    assert repr(str(first)) in note and repr(str(second)) in note and "\n" not in note
    assert "audit each one's logs apart" in note
    assert "another game of this seed" in note
    assert _files(first) == before  # the first game's files: not one byte added or changed
    # A directory is a run's only if that run made it: one made but not yet written to (a run
    # of the same seed starting at the same moment) is not shared either.
    # Its note says "another" game, not "an earlier" one: the first may still be running.
    third, _, note = game_dir(None, "demo", spec)
    assert third == first.with_name(first.name + "-3")
    assert "another game of this seed" in note and "earlier game" not in note
    assert first_spec.read_bytes() == spec.to_wire()


def test_a_named_dir_holding_logs_is_refused_and_left_alone(tmp_path: Path) -> None:
    place = tmp_path / "mine"
    place.mkdir()
    (place / "p1.log").write_bytes(b"a game's log")
    with pytest.raises(NertzError, match="already holds game logs; remove them or choose"):
        game_dir(place, "demo", _spec(5))
    assert _files(place) == {"p1.log": b"a game's log"}


def test_a_file_where_the_logs_go_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("nertz-logs").write_bytes(b"x")
    with pytest.raises(NertzError, match="'nertz-logs': it names a file, not a directory"):
        game_dir(None, "play", _spec(6))
    assert Path("nertz-logs").read_bytes() == b"x"
