"""scripts/bench_receive.py (issue 18, session 25): the core's CPU per message received, next
to the bare unpacks and verify of the same messages.

What is checked is what the figures stand on, not their values (no timing is asserted): the
replay is the recorded game's, effect for effect; only the message inputs are counted; the
reference verifies exactly those messages; a recording kept in a file replays the same.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from script_helpers import load_script

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("bench_receive")


@pytest.fixture(scope="module")
def recorded(bench: ModuleType) -> object:
    return bench.record(2)


def test_the_replay_returns_the_games_effects_and_counts_only_the_messages(
    bench: ModuleType, recorded: object
) -> None:
    spent, returned = bench.replay(recorded)
    assert bench.effects_digest(returned) == recorded.effects  # type: ignore[attr-defined]
    messages = recorded.messages  # type: ignore[attr-defined]
    inputs = recorded.inputs  # type: ignore[attr-defined]
    # Seat 0 hears the other member, and also ticks and moves: those are not counted.
    assert 0 < len(messages) < len(inputs)
    assert all(type(m) is bytes for m in messages)
    assert spent > 0


def test_the_reference_verifies_the_messages_and_refuses_a_flipped_bit(
    bench: ModuleType, recorded: object
) -> None:
    messages = recorded.messages  # type: ignore[attr-defined]
    assert bench.reference(messages) > 0
    bad = bytearray(messages[-1])
    bad[-1] ^= 1  # (the signature's last byte)
    with pytest.raises(AssertionError, match="does not verify"):
        bench.reference([*messages[:-1], bytes(bad)])


def test_a_recording_kept_in_a_file_replays_the_same_and_names_its_player_count(
    bench: ModuleType, recorded: object, tmp_path: Path
) -> None:
    path = str(tmp_path / "inputs2.msgpack")
    kept = bench.load_or_record(2, path)  # (records, then keeps)
    again = bench.load_or_record(2, path)  # (reads it back)
    assert again.inputs == kept.inputs and again.effects == kept.effects
    assert again.spec == kept.spec and again.config == kept.config
    assert bench.effects_digest(bench.replay(again)[1]) == again.effects
    with pytest.raises(SystemExit, match="2 players"):
        bench.load_or_record(4, path)


def test_a_file_that_is_no_recording_is_refused_in_one_line(
    bench: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "other.msgpack"
    path.write_bytes(b"\x93not a recording")
    with pytest.raises(SystemExit, match="is not a recording of this script"):
        bench.load_or_record(2, str(path))


def test_the_effects_digest_tells_one_changed_effect(bench: ModuleType, recorded: object) -> None:
    returned = bench.replay(recorded)[1]
    changed = [list(effects) for effects in returned]
    first = next(i for i, effects in enumerate(changed) if effects)
    changed[first] = changed[first][:-1]
    assert bench.effects_digest(changed) != recorded.effects  # type: ignore[attr-defined]


def test_the_figures_put_the_receive_path_beside_its_reference(
    bench: ModuleType, recorded: object
) -> None:
    figures = bench.measure(recorded, 1)
    assert figures.players == 2
    assert figures.messages == len(recorded.messages)  # type: ignore[attr-defined]
    assert figures.core > 0 and figures.floor > 0
    assert figures.ratio == figures.core / figures.floor
