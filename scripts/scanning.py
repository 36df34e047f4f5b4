"""What the scans of a fault class share: run the suite's own test of the class on one game
of a grid and say how it failed, and the ranges the scans take on their command line.

Used by ``scan_sleeper_forks.py``, ``scan_drop_cuts.py``, ``scan_node_faults.py`` and
``scan_old_backups.py`` (whose games' result records :func:`game_record` builds); not part
of the suite.
"""

from __future__ import annotations

import json
import shutil
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

Case = TypeVar("Case")


def first_failure(test: Callable[[Case], None], case: Case, precondition: str) -> str | None:
    """How the test failed on ``case``: the failing line and its message; ``""`` when the
    first check that failed is ``precondition`` (the game is not one of the class); ``None``
    when it passed. A crash is a failure of its own kind, named."""
    try:
        test(case)
    except AssertionError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        if precondition in (frame.line or ""):
            return ""
        message = str(exc).splitlines()[-1] if str(exc) else ""
        return f"line {frame.lineno}: {frame.line}" + (f": {message}" if message else "")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def span(text: str) -> range:
    """``"N"`` or ``"N-M"`` (both ends in): a range of seeds or table sizes."""
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


def audit_summary(workdir: Path) -> str:
    """The audit's verdict and its finding kinds: ``valid``, ``valid (log_ends_early 2)``."""
    verdict, kinds = "?", Counter[str]()
    for text in (workdir / "audit.out").read_text().splitlines():
        if text.startswith('{"event": "finding"'):
            finding = json.loads(text)["finding"]
            kinds[f"{finding['kind']}{'!' if finding.get('severity') == 'error' else ''}"] += 1
        elif text.startswith('{"event": "verdict"'):
            verdict = json.loads(text)["verdict"]
    found = " ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    return f"{verdict} ({found})" if found else verdict


def game_record(
    cell: tuple[str, str],
    players: int,
    seed: int,
    game: Any,
    *,
    facts: dict[str, Any],
    problems: list[str],
    notes: Sequence[str] = (),
    said: Sequence[str] = (),
) -> dict[str, Any]:
    """The result record of one real game of a grid (a line of ``results.jsonl``, what
    :func:`play_grid` prints): ``cell`` its key and name (``("fault", "kill")``), ``game`` the
    ``chaos.Game`` played (its start, its notes, its directory's audit), ``facts`` what
    ``chaos.check`` found, ``problems`` every problem, ``notes`` the scan's own before the
    game's, ``said`` the victim's last words."""
    workdir = Path(game.dir)
    key, name = cell
    return {
        key: name,
        "players": players,
        "seed": seed,
        "ok": not problems,
        "problems": problems,
        "notes": [*notes, *game.notes],
        "wall": round(time.monotonic() - game.start, 1),
        "victim_said": list(said),
        "audit": audit_summary(workdir),
        "dir": str(workdir),
        **{k: facts[k] for k in ("exits", "dropped", "played", "finals")},
    }


def play_grid(
    cells: Sequence[str],
    sizes: range,
    play: Callable[[str, int, int, Path], dict[str, Any]],
    *,
    seed: int,
    root: Path,
    keep: bool,
    width: int = 9,
) -> int:
    """Play every cell at every table size (``play(cell, players, seed, root)``, the seeds
    counted up from ``seed``): each result a line of ``root/results.jsonl`` and one printed
    line, its problems under it, a passed game's directory removed unless ``keep``; then the
    counts. The exit status: 1 if a game failed.

    Used by ``scan_node_faults.py`` and ``scan_old_backups.py``."""
    tally: Counter[tuple[str, int, bool]] = Counter()
    with (root / "results.jsonl").open("a") as book:
        for cell in cells:
            for n in sizes:
                result = play(cell, n, seed, root)
                seed += 1
                book.write(json.dumps(result) + "\n")
                book.flush()
                tally[cell, n, result["ok"]] += 1
                verdict = "ok  " if result["ok"] else "FAIL"
                said = f"  victim: {result['victim_said'][0][:90]}" if result["victim_said"] else ""
                print(
                    f"{verdict} {cell:{width}s} {n}p  exits {result['exits']:8s} played "
                    f"{result['played']}r  dropped {result['dropped']}  audit {result['audit']}"
                    f"  {result['wall']:5.1f}s{said}",
                    flush=True,
                )
                for problem in result["problems"]:
                    print(f"        {problem}", flush=True)
                if result["ok"] and not keep:
                    shutil.rmtree(result["dir"])
    total = sum(tally.values())
    failed = sum(v for (_, _, ok), v in tally.items() if not ok)
    print(f"{total} game(s), {total - failed} passed, {failed} failed")
    return 1 if failed else 0


def grid_main(
    argv: Sequence[str] | None,
    *,
    doc: str | None,
    option: str,
    names: Sequence[str],
    players: str,
    seed: int,
    directory: str,
    play: Callable[[str, int, int, Path], dict[str, Any]],
    width: int = 9,
) -> int:
    """The command line of a scan of real games over a grid (``--OPTION`` names its cells,
    ``--players``, ``--seed``, ``--dir``, ``--keep``): :func:`play_grid` of them, with the
    run's own player locks and a clean stop on SIGTERM (``chaos.py``'s)."""
    import argparse
    import signal

    import chaos
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    p = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    p.add_argument(
        f"--{option}s", dest="cells", metavar=f"{option.upper()}S", default=",".join(names)
    )
    p.add_argument("--players", default=players, help=f"table sizes (default {players})")
    p.add_argument("--seed", type=int, default=seed, help="the first game's seed")
    p.add_argument("--dir", type=Path, default=Path(directory))
    p.add_argument("--keep", action="store_true", help="keep the logs of games that passed")
    args = p.parse_args(argv)
    cells = [c for c in args.cells.split(",") if c]
    unknown = sorted(set(cells) - set(names))
    if unknown:
        p.error(f"unknown {option}(s): {', '.join(unknown)}; choose from {', '.join(names)}")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, chaos._interrupt)
    args.dir.mkdir(parents=True, exist_ok=True)
    root: Path = args.dir
    return play_grid(
        cells, span(args.players), play, seed=args.seed, root=root, keep=args.keep, width=width
    )
