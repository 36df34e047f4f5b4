"""What ``scripts/bench_link_window.py``'s figures stand on (the ROUTER's mark is sized from
them, docs/protocol.md §9.7): the most messages in any window of a length."""

from __future__ import annotations

from tests.script_helpers import load_script


def test_most_in_window_counts_the_densest_half_open_span() -> None:
    most = load_script("bench_link_window").most_in_window
    stamps = [0.0, 0.5, 0.9, 1.0, 5.0, 5.1, 5.2, 5.3]
    assert most(stamps, 1.0) == 4  # 5.0-5.3 (and 0.0-0.9: 3; 1.0 is out of [0, 1))
    assert most(stamps, 1.01) == 4
    assert most(stamps, 6.0) == 8
    assert most(stamps, 4.0) == 4  # [1.0, 5.0) holds one; [1.5, 5.5) four
    assert most([], 6.0) == 0
