"""``nertz rules`` (the rule book as the package ships it) and ``nertz match`` (an in-process
match of bots, no network)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from cli.args import EXIT_OK, players_from, rules_from
from p2p_nertz import __version__
from p2p_nertz.rules.book import RULE_BOOK, rule_book
from p2p_nertz.words import seat_named

__all__ = ["RULES_FILE", "rules_text"]


RULES_FILE = RULE_BOOK
"""Where the rule book ships: package data of the rules engine (docs/rules.md points there)."""


def rules_text() -> str:
    """The rule book, as the installed package holds it."""
    return rule_book()


def _cmd_rules(args: argparse.Namespace) -> int:
    from p2p_nertz.rules.book import reflow, rule_topic

    text = rule_topic(" ".join(args.topic)) if args.topic else rules_text()
    if sys.stdout.isatty():  # (a terminal narrower than the book: its words whole)
        text = reflow(text, shutil.get_terminal_size().columns)
    sys.stdout.write(text)
    return EXIT_OK


def _cmd_match(args: argparse.Namespace) -> int:
    from p2p_nertz.match import RoundResult, play_match
    from p2p_nertz.rules import Game, RoundStatus
    from p2p_nertz.ui.view import decided_by  # (the screens' words: not for `nertz rules`)

    rules = rules_from(args)
    players = players_from(args)
    names = [f"{p.name}:{p.strategy}" for p in players]
    if not args.json:
        rounds = f"{rules.rounds} round{'s' if rules.rounds != 1 else ''}"
        goal = rounds if rules.racing_demon else f"target {rules.target}"
        print(
            f"p2p-nertz {__version__} - in-process match (no network): {len(players)} bots, "
            f"seed {args.seed}, {goal}"
        )
        print("players: " + "  ".join(names))

    def on_round(result: RoundResult, game: Game) -> None:
        score = result.score
        if args.json:
            print(
                json.dumps(
                    {
                        "round": result.number,
                        "ended": score.status.value,
                        "callers": list(score.callers),
                        "scores": [p.total if p.played else None for p in score.players],
                        "totals": list(game.totals),
                        "moves": result.actions,
                        "lost_races": result.lost_races,
                        "seconds": round(result.duration_ms / 1000, 1),
                    }
                ),
                flush=True,
            )
            return
        how = (
            "Nerts by " + ",".join(seat_named("P", c) for c in score.callers)
            if score.status is RoundStatus.NERTS
            else "blocked"
        )
        cells = "  ".join(
            seat_named("P", p.seat) + (f" {p.total:+4d}" if p.played else "    -")
            for p in score.players
        )
        totals = " ".join(f"{t:4d}" for t in game.totals)
        print(f"round {result.number:3d}  {how:<12} {cells}  | totals {totals}", flush=True)

    result = play_match(rules, players, args.seed, on_round=on_round)
    final = result.game.result
    assert final is not None
    winners = ", ".join(
        f"team {w + 1}" if rules.pairs else seat_named("P", w) for w in final.winners
    )
    if args.json:
        print(
            json.dumps(
                {
                    "winners": list(final.winners),
                    "totals": list(final.totals),
                    "termination": final.termination.value,
                    "rounds": len(result.rounds),
                }
            )
        )
    else:
        decided = decided_by(final.termination, rules)  # (words, as at the table)
        print(f"winner: {winners} with {final.winning_total} ({decided})")
    return EXIT_OK
