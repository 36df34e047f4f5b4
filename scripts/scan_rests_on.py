#!/usr/bin/env python3
"""The soak, with the two readings of what *the drop decided first*'s new drop rests on
compared at every refusal test (docs/protocol.md §9.2, *not on events its voters never
held*; §13, seed 264, sessions 42-44).

``folds._rests_unannounced`` reads the member's *membership* events past its cut timed up to
the new drop's ``finality.decided_at`` (session 42); session 43 argued the exact reading is
finality's: its events *of any kind* up to ``finality.decided``. This plays
``scripts/soak.py`` with its arguments, each call of the rule computed four ways (kinds:
membership or any; date: ``decided_at`` or ``decided``; the first is the rule's, checked
equal to it), and appends a line to ``--out`` for each call where they do not all agree,
and one to ``--out``.calls for each call. The events of any kind are read from the trial's
``Unheld.times`` (each event's time and frontier: its seq is one past its own entry), which
``folds.decided_first`` holds. Nothing here changes what the rule decides.

    python scripts/scan_rests_on.py --out FILE [soak.py's arguments...]
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable
from typing import Any

from p2p_nertz.protocol import folds
from p2p_nertz.protocol.finality import decided, decided_at
from p2p_nertz.protocol.roster import gone_unheld_at
from p2p_nertz.protocol.state import GameState

_first: Callable[..., Any] = folds.decided_first
_rule: Callable[..., Any] = folds._rests_unannounced
_held: dict[str, folds.Unheld] = {}


def _reading(
    before: GameState, seat: int, fold: GameState, *, any_kind: bool, exact_date: bool
) -> tuple[int, int] | None:
    """``_rests_unannounced`` with its late events read of any kind and/or up to
    ``decided``."""
    at = decided(fold, seat) if exact_date else decided_at(fold, seat)
    for q, cut in before.dropped.items():
        if folds.cut_made(fold, q, cut):
            continue
        upto = fold.dropped.get(q, 1 << 63)
        if any_kind:
            times = _held["unheld"].times[q]
            late = [f[q] + 1 for lamport, f in times if cut < f[q] + 1 <= upto and lamport <= at]
        else:
            late = [
                s
                for (author, s, _), (lamport, _, _) in zip(
                    fold.roster.read, fold.roster.read_keys, strict=True
                )
                if author == q and cut < s <= upto and lamport <= at
            ]
        if not late:
            continue
        place = gone_unheld_at(before.roster, q, decided(before, q), max(late), fold.dropped.keys())
        if place is not None:
            return q, place
    return None


def main(out: str, soak_args: list[str]) -> None:
    def first(fold_with: Any, trial: folds.Trial, imposed: Any, dated: Any = None) -> Any:
        _held["unheld"] = trial.unheld
        return _first(fold_with, trial, imposed, dated)

    def rests(before: GameState, seat: int, fold: GameState) -> tuple[int, int] | None:
        rule = _rule(before, seat, fold)
        got = {
            (k, d): _reading(before, seat, fold, any_kind=k, exact_date=d)
            for k in (False, True)
            for d in (False, True)
        }
        assert got[False, False] == rule, (got, rule)
        with open(out + ".calls", "a") as calls:
            calls.write(f"{os.getpid()} {rule}\n")
        if len(set(got.values())) > 1:
            with open(out, "a") as parted:
                parted.write(
                    f"seat={seat} before={dict(before.dropped)} new={dict(fold.dropped)} "
                    f"decided={decided(fold, seat)} decided_at={decided_at(fold, seat)} "
                    f"(kinds any?, date decided?) -> {got}\n"
                )
        return rule

    folds.decided_first = first  # type: ignore[assignment]
    folds._rests_unannounced = rests
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)  # (soak.py's own imports, as when run itself)
    sys.argv = ["soak.py", *soak_args]
    runpy.run_path(os.path.join(here, "soak.py"), run_name="__main__")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--out":
        sys.exit(__doc__)
    main(sys.argv[2], sys.argv[3:])
