"""Write the golden game logs in tests/data/golden/ (run again if the wire format changes).

Each game is a real game of bots played by the deterministic simulator (real peer cores, real
Ed25519 signatures), so the same command always writes the same bytes. Every peer's log is
written in the log file format with the game spec as its first note, and ``game.json`` records
what the peers themselves finished with (the final totals and round digests), which the CI test
compares with what the audit recomputes from the logs alone.

    .venv/bin/python scripts/make_golden_logs.py            # rewrite tests/data/golden/
    .venv/bin/python scripts/make_golden_logs.py --check    # exit 1 if they would change
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, SimConfig, Simulation
from p2p_nertz.sim.logfiles import log_files

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "golden"
CREATED_AT_MS = 1_700_000_000_000

GAMES = {
    "two-players": SimConfig(players=2, seed=1, rules=Rules(target=None, rounds=2)),
    "three-players-lossy": SimConfig(
        players=3,
        seed=5,
        rules=Rules(target=None, rounds=1),
        faults=Faults(loss=0.05, duplicate=0.1, reorder=0.2),
    ),
}


def build() -> dict[str, dict[str, bytes]]:
    """Every golden file's bytes, by game directory and file name."""
    out: dict[str, dict[str, bytes]] = {}
    for name, config in GAMES.items():
        result = Simulation(config).run()
        if not result.finished:
            raise SystemExit(f"{name}: the game did not finish")
        files = {
            f"p{seat + 1}.log": data
            for seat, data in enumerate(log_files(result, created_at_ms=CREATED_AT_MS))
        }
        peer = next(p for p in result.peers if p is not None)
        facts = {
            "players": config.players,
            "seed": config.seed,
            "game_id": result.spec.game_id.hex(),
            "totals": list(peer.final.game.totals),
            "rounds": [
                {"round": n, "digest": d.hex(), "scores": list(s)} for n, d, s in peer.final.history
            ],
        }
        files["game.json"] = (json.dumps(facts, indent=2) + "\n").encode()
        out[name] = files
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the files are current")
    args = parser.parse_args()
    stale = []
    total = 0
    for game, files in build().items():
        folder = ROOT / game
        for name, data in files.items():
            path = folder / name
            total += len(data)
            if args.check:
                if not path.is_file() or path.read_bytes() != data:
                    stale.append(str(path))
                continue
            folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"wrote {path} ({len(data)} bytes)")
    if args.check:
        for path in stale:
            print(f"stale: {path}")
        print(f"{len(stale)} stale file(s); {total} bytes in all")
        return 1 if stale else 0
    print(f"{total} bytes in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
