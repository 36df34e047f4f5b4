#!/usr/bin/env python3
"""Soak the protocol: thousands of seeded simulated games with random faults.

Prints how many games ran, how many faults were injected (partitions, crashes, equivocating
members, lost and duplicated messages), and how many invariant violations were found (must be
zero). A failing seed is printed with its configuration; ``--seed N --games 1 -v`` replays it
exactly. Equivocating members (a cheater signing two events under one seq) are on by default;
``--no-cheats`` leaves them out.

Every game also has faults of every length around the liveness timers (``Faults.random``'s
``long``): partitions, freezes (a peer asleep) and crashes from a fifth to four times
``drop_after``, and crashes never restarted, so that members are dropped, two-member games are
abandoned and dropped members rejoin; the soak prints how many games saw each. The peers run
with short timers (``--timers quick``: suspect after 1 s, drop after 3 s, phases wait 6 s) so
that a game with a fault four times ``drop_after`` takes seconds; ``--timers default`` keeps
the real ones (30 s) and is about ten times slower; ``--timers node`` runs the peers on the
runtime's own configuration (``NODE_CONFIG``: acks at once, a beat after 0.5 s, the real
liveness timers). ``--short`` leaves the long faults out
(the mix before issue 13). Games have 1 to 3 rounds (``--rounds N`` fixes it), so that a
dropped member has a next round to rejoin.

``--sleeper-forks`` plays another mix instead: in each game one member falls asleep (a
``Freeze`` from a third to ten times ``drop_after``) and a cheater forks while it sleeps,
sending its second version to the sleeper alone, at every table size in ``--players`` (the
class session 9 found: a sleeper that waited for ever, audits that followed the fake, an
honest claim on a foundation the cheater's drop cut read as a cheat).

    python scripts/soak.py [--games 1000] [--seed 0] [--players 2-5] [--workers 2] [--no-cheats]
                           [--variants] [--short] [--timers quick|default] [--rounds N]
                           [--sleeper-forks] [--late-withdrawals] [--deal commit|shuffle]
                           [--deck-cheats] [--liars] [--two-liars] [--join]
                           [--back restore|readmit] [--more-lies] [--lie NAME]...
                           [--shuffle-forks]

``--deal shuffle`` plays every game with the dealerless shuffle (docs/shuffle.md; a game's
deal costs about 100 ms of CPU a member at 4 players, so it is some ten times slower).
``--deck-cheats`` (with ``--deal shuffle``) adds to each game a member that cheats in the
deal of round 1 (:mod:`p2p_nertz.sim.cheats`): it substitutes a card in its last stage of a
deck, sends a share whose proof fails, or withholds its shares, drawn from the seed in turn;
the honest peers must catch it and every invariant hold for them (the audit of the logs
finds errors against the cheater only).

``--liars`` plays another mix instead (:mod:`p2p_nertz.sim.liar_games`, 2 to 4 players unless
``--players`` says otherwise, one round): a member that signs well-formed, validly signed
messages with one field wrong (:mod:`p2p_nertz.sim.liars`: every lie in turn, seed by seed,
from a frontier naming events it does not hold to a Nerts call with cards left, a vote on
itself or a flood of wants), on a noisy network with no other fault; ``--two-liars`` adds a
second liar at 3 and 4 players; ``--join`` makes every liar lie from its join on, and
``--back restore`` or ``--back readmit`` (session 36) from its first chance after it is
restored from its log, or readmitted after a cut that had it voted out (two rounds);
``--lie NAME`` (again for more) draws every liar's lie from those named only (session 37:
a scan of one lie, every seed playing it; a seed's lie is then not the whole mix's).
``--deal shuffle`` (session 42) seats the liars at a shuffle game's table (the same draws).
The lie fuzzer reads none of the fault mix's flags (``--rounds``, ``--timers``,
``--late-withdrawals``...) and the fault mix none of the liars': each is refused with the
other (session 42).
``--shuffle-forks`` (session 42) is ``--liars --two-liars --deal shuffle`` at 3 to 5 players
with the lies of :data:`~p2p_nertz.sim.liars.FORK_LIES`, one each: a liar forks a
``deck_stage`` or ``deck_shares``, the other votes on that fork and forks its vote, so that
the honest votes on the second fork carry the signed parts of votes whose own proof is a real
shuffle fork (docs/protocol.md §4.1); the soak counts the games that hold such a vote
(``nested``). ``--two-liars --lie fetched_leap`` (session 42) seats two liars acting
together (:data:`~p2p_nertz.sim.liars.PACT_LIES`): one signs again an event far ahead and
shows it only on request, the other names it (docs/protocol.md §5.3, *a version fetched*).
Beside the invariants above, the honest members must end the
game within a bounded time where an end is promised, none of them dropped or refused, and
every lie the peers proved must be proven by the audit (a liar whose event the peers refused
as a leap: a ``clock_jump`` in the audit of every log and of its own log alone, session 43),
and a watcher of every member must end
where the honest members end (session 41; the other mixes ask for that watcher with
``--watch``). The soak prints, per lie, the games,
those in which a lie was told, in which the peers refused one of the liar's events, dropped
it, and in which the audit named it.

``--late-withdrawals`` plays another mix instead (:func:`p2p_nertz.sim.mixes.late_withdrawals`,
3 to 5 players unless ``--players`` says otherwise): a member cut off from everyone while
another is cut off from half the others, every link healing at its own time, so that voters
withdraw after a drop (docs/protocol.md §9.2, *a withdrawal after the drop lifts no cap that
decided it*). The soak counts, for every mix, how often that rule was asked, offered a cut
and had a cut kept by a peer or by the audit, how often a fold took the drop decided first
(docs/protocol.md §7.4; :mod:`p2p_nertz.sim.probes`), and in how many games either fired;
and how many hand-ons in play started (§9.2, *Handed on in play*: a peer handing a member's
beats on to a member that voted it out for silence while the peer heard it), in how many
games, and the beats they sent (``sim.probes.count_hand_ons``; one send a beat and voter,
against the mix's sends, where a broadcast counts once).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from p2p_nertz.protocol.flaps import FLAP_LIMIT
from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import NODE_CONFIG
from p2p_nertz.sim import QUICK_TIMERS, Equivocation, Faults, Freeze, SimConfig
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.invariants import outcomes
from p2p_nertz.sim.liar_games import game as liar_game
from p2p_nertz.sim.liar_games import nested_shuffle_proof
from p2p_nertz.sim.liar_games import simulate as liar_simulate
from p2p_nertz.sim.liars import FORK_LIES, LIES, MORE_LIES, Lie
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.probes import count_hand_ons, count_lifted_cuts
from p2p_nertz.sim.watching import run

TIMERS = {"quick": QUICK_TIMERS, "default": PeerConfig(), "node": NODE_CONFIG}


def variant_rules(rng: Rng, players: int, rounds: int) -> Rules:
    """Rules with every variant of RULES.md drawn at random (pairs only where they fit)."""
    return Rules(
        draw=(1, 3)[rng.below(2)],
        work_piles=4 + rng.below(3),
        nerts_bonus=(0, 5, 10, 25)[rng.below(4)],
        nerts_card_penalty=1 + rng.below(2),
        target=None,
        rounds=rounds,
        rotate_alone=rng.below(2) == 1,
        pairs=players % 2 == 0 and players >= 4 and rng.below(2) == 1,
        jokers=rng.below(3),
    )


def sleeper_fork(seed: int, low: int, high: int, peer: PeerConfig) -> SimConfig:
    """The seeded game of ``--sleeper-forks``: seat 1 sleeps, the cheater (the last seat;
    seat 0 at two players) forks while it sleeps and sends its second version to it alone."""
    rng = Rng(seed + 3_000_017)
    players = low + rng.below(high - low + 1)
    at = 3.0 + rng.below(61) / 10  # 3 to 9 s into the game
    lasting = peer.drop_after * (0.3 + rng.below(100) / 10)  # 0.3 to 10.2 x drop_after
    fork = at + lasting * rng.below(101) / 100  # while it sleeps
    cheat = players - 1 if players > 2 else 0
    faults = Faults(
        freezes=(Freeze(1, at, lasting),),
        equivocations=(Equivocation(cheat, fork, frozenset({1})),),
    )
    rounds = 1 + rng.below(2)
    return SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        faults=faults,
        peer=peer,
        max_time=400.0 * rounds + 8 * peer.drop_after + lasting,
    )


def deck_cheat(seed: int, players: int) -> DeckCheat:
    """The shuffle cheat of ``--deck-cheats`` for ``seed``: each kind in turn, by a member
    drawn from the seed."""
    # (An honest dealer's false complaints are not drawn: a seed's cheat stays session 15's.)
    kinds = list(DeckCheatKind)[:5]
    return DeckCheat(Rng(seed + 4_000_037).below(players), kinds[seed % len(kinds)])


def one(
    args: tuple[int, int, int, int, bool, bool, bool, str, bool, str, bool, bool, bool],
) -> tuple[int, int, dict[str, int], list[str], str]:
    seed, low, high, fixed_rounds, cheats, variants, short, timers, sleepers, deal, deck, late = (
        args[:12]
    )
    if sleepers:
        config = sleeper_fork(seed, low, high, TIMERS[timers])
    elif late:
        config = late_withdrawals(
            seed, players=(low, high), rounds=fixed_rounds, peer=TIMERS[timers]
        )
    else:
        config = SimConfig.soak(
            seed,
            players=(low, high),
            rounds=fixed_rounds,
            cheats=cheats,
            long=not short,
            peer=TIMERS[timers],
            rules=(lambda n, r: variant_rules(Rng(seed + 1_000_003), n, r)) if variants else None,
        )
    config = dataclasses.replace(config, deal=Deal(deal))
    if deck:
        cheat = deck_cheat(seed, config.players)
        faults = dataclasses.replace(config.faults, deck_cheats=(cheat,))
        config = dataclasses.replace(config, faults=faults)
    faults, rules, peer, players = config.faults, config.rules, config.peer, config.players
    with count_lifted_cuts() as lifted, count_hand_ons() as hand_ons:
        result = run(config, watch=args[12])
    seen = outcomes(result)
    honest = [
        p for seat, p in enumerate(result.peers) if p is not None and seat not in faults.cheaters
    ]
    peaks = [n for p in honest for q, n in p.final.flaps.peaks.items() if q not in faults.cheaters]
    counts = {
        "partitions": len(faults.partitions),
        "crashes": result.crashes,
        "freezes": result.freezes,
        "cheaters": len(faults.equivocations),
        "deck cheaters": len(faults.deck_cheats),
        "lost": result.lost,
        "duplicated": result.duplicated,
        "messages": result.sent,
        "two": int(players == 2),
        **{f"saw {name}": int(name in seen) for name in ("drop", "abandon", "rejoin")},
        "provisional": int("provisional" in seen),
        "lifted asked": lifted.asked,
        "lifted offered": lifted.offered,
        "lifted kept by a peer": lifted.peer_kept,
        "lifted kept by the audit": lifted.audit_kept,
        "lifted first": lifted.first,
        "lifted fired": int(lifted.fired),
        "most flaps": max(peaks, default=0),
        "hand-ons": hand_ons.started,
        "handed on": hand_ons.messages,
        "handed on games": int(hand_ons.started > 0),
    }
    return seed, players, counts, result.violations, f"{rules!r} {faults!r} {peer!r}"


def liar_one(
    args: tuple[int, int, int, bool, bool, bool, str | None, tuple[str, ...], str, bool],
) -> tuple[int, int, str, dict[str, int], list[str]]:
    """One game of ``--liars``: its seed, players, first liar's lie, tallies and violations."""
    seed, low, high, two, join, more, back, only, deal, paired = args
    lies = tuple(Lie(name) for name in only) if only else MORE_LIES if more else LIES
    if paired:
        lies = FORK_LIES
    config, liars = liar_game(
        seed,
        players=(low, high),
        two=two or paired,
        lies=lies,
        join=join,
        back=back,
        deal=Deal(deal),
        paired=paired,
    )
    run = liar_simulate(config, liars, watch=True)
    result, told = run.result, run.told
    liar = liars[0].seat
    honest = [
        p
        for seat, p in enumerate(result.peers)
        if p is not None and seat not in config.faults.cheaters
    ]
    named = {f.seat for f in result.audit.errors} if result.audit is not None else set()
    counts = {
        "games": 1,
        "told": int(told.get(liar, 0) > 0),
        "refused": int(any(v.seat == liar for p in honest for v in p.final.violations)),
        "dropped": int(any(liar in p.final.dropped for p in honest)),
        "audit names": int(liar in named),
        "held open": int(bool(run.held_open)),
        "readmitted": int("rejoin" in outcomes(result)),
        "failed": int(bool(result.violations)),
        "nested": int(nested_shuffle_proof(result)),
    }
    described = f"{config.faults!r} liars {liars!r}"
    return seed, config.players, str(liars[0].lie), counts, [*result.violations, described]


def liars_main(args: argparse.Namespace, low: int, high: int) -> int:
    """``--liars``: the games, and per lie what the peers and the audit made of it."""
    games, first, workers = args.games, args.seed, args.workers
    jobs = [
        (
            *(seed, low, high, args.two_liars, args.join, args.more_lies, args.back, args.lie),
            *(args.deal, args.shuffle_forks),
        )
        for seed in range(first, first + games)
    ]
    start = time.perf_counter()
    per_lie: dict[str, dict[str, int]] = {}
    bad = 0
    with ProcessPoolExecutor(workers) as pool:
        for seed, players, lie, counts, lines in pool.map(liar_one, jobs, chunksize=4):
            tally = per_lie.setdefault(lie, {})
            for key, value in counts.items():
                tally[key] = tally.get(key, 0) + value
            if counts["failed"]:
                bad += 1
                print(f"seed {seed} ({players} players, {lie}) FAILED: {lines[-1]}", flush=True)
                for v in lines[:-1]:
                    print(f"    {v}", flush=True)
            elif args.verbose:
                print(f"seed {seed} ({players} players, {lie}) ok: {counts}", flush=True)
    elapsed = time.perf_counter() - start
    keys: tuple[str, ...] = ("games", "told", "refused", "dropped", "audit names", "held open")
    keys += ("readmitted", "failed", "nested")
    print(f"{'lie (first liar)':20} " + " ".join(f"{k:>11}" for k in keys))
    for lie, tally in sorted(per_lie.items()):
        print(f"{lie:20} " + " ".join(f"{tally.get(k, 0):>11}" for k in keys))
    print(f"games {games}, invariant violations {bad}, {elapsed:.0f} s")
    return 1 if bad else 0


def unplayed_flag(args: argparse.Namespace) -> str:
    """The first flag the chosen mix would ignore, as the parser's error, or ``""``.

    The lie fuzzer (``--liars``, ``--shuffle-forks``) reads none of the fault mix's flags and
    the fault mix none of the liars': a scan asked for with one of the other's ran the other
    scan in silence (session 42: ``--liars --late-withdrawals`` played ``--liars`` alone)."""
    mix = (
        ("--no-cheats", args.no_cheats),
        ("--variants", args.variants),
        ("--short", args.short),
        ("--rounds", args.rounds != 0),
        ("--timers", args.timers != "quick"),
        ("--sleeper-forks", args.sleeper_forks),
        ("--late-withdrawals", args.late_withdrawals),
        ("--deck-cheats", args.deck_cheats),
    )
    liars = (
        ("--two-liars", args.two_liars),
        ("--join", args.join),
        ("--back", args.back is not None),
        ("--more-lies", args.more_lies),
        ("--lie", bool(args.lie)),
    )
    if args.liars:
        for flag, given in mix:
            if given:
                return f"{flag} plays the soak's fault mix, not --liars (nor --shuffle-forks)"
    else:
        for flag, given in liars:
            if given:
                return f"{flag} needs --liars"
    return ""


def table_sizes(parser: argparse.ArgumentParser, text: str) -> tuple[int, int]:
    """``--players``' range, ``N`` or ``N-M`` from 2 to 8, or the parser's error (exit 2).

    >>> table_sizes(argparse.ArgumentParser(), "3-5")
    (3, 5)
    """
    low, _, high = text.partition("-")
    try:
        lo, hi = int(low), int(high or low)
    except ValueError:
        parser.error(f"--players wants N or N-M, not {text!r}")
    if not 2 <= lo <= hi <= 8:
        parser.error(f"--players wants table sizes from 2 to 8, not {text!r}")
    return lo, hi


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument(
        "--players",
        default=None,
        help="range of table sizes, e.g. 2-5 (default 2-5; 3-5 for --late-withdrawals)",
    )
    parser.add_argument(
        "--rounds", type=int, default=0, help="rounds per game (default: 1 to 3, drawn per game)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--no-cheats", action="store_true", help="no equivocating members in the fault mix"
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="draw the rules' variants per game (draw, work piles, scoring, rotate alone, "
        "pairs, jokers) instead of the standard game",
    )
    parser.add_argument(
        "--short",
        action="store_true",
        help="only the short faults (no drop, abandon or rejoin ever happens)",
    )
    parser.add_argument(
        "--timers",
        choices=sorted(TIMERS),
        default="quick",
        help="the peers' liveness timers: quick (drop after 3 s), default (30 s) or node "
        "(the runtime's configuration: drop after 30 s, beat after 0.5 s)",
    )
    parser.add_argument(
        "--sleeper-forks",
        action="store_true",
        help="another mix: a member asleep, a cheater forking to it alone while it sleeps",
    )
    parser.add_argument(
        "--late-withdrawals",
        action="store_true",
        help="another mix: a member cut off while another is cut off from half the others, "
        "the links healing one by one (voters withdrawing after a drop)",
    )
    parser.add_argument(
        "--deal",
        choices=[d.value for d in Deal],
        default=Deal.COMMIT.value,
        help="how every game deals: commit and reveal, or the dealerless shuffle",
    )
    parser.add_argument(
        "--deck-cheats",
        action="store_true",
        help="with --deal shuffle: a member substitutes a card, sends a bad share or "
        "withholds its shares (one kind per game, in turn)",
    )
    parser.add_argument(
        "--liars",
        action="store_true",
        help="another mix: a member that signs messages with one field wrong "
        "(every lie in turn), one round at 2 to 4 players",
    )
    parser.add_argument(
        "--two-liars", action="store_true", help="with --liars: a second liar at 3-4 players"
    )
    parser.add_argument(
        "--join",
        action="store_true",
        help="with --liars: every liar lies from its first chance on (its join, first beats)",
    )
    parser.add_argument(
        "--back",
        choices=("restore", "readmit"),
        default=None,
        help="with --liars: every liar lies from its first chance after it comes back: "
        "restored from its log (restore), or readmitted after a cut past drop_after (readmit)",
    )
    parser.add_argument(
        "--shuffle-forks",
        action="store_true",
        help="another mix: --liars at a shuffle game's table, two liars (3-5 players): one "
        "forks a deck_stage or deck_shares, the other its vote on proof of that fork",
    )
    parser.add_argument(
        "--more-lies",
        action="store_true",
        help="with --liars: the first liar's lie drawn from the kinds added in session 35",
    )
    parser.add_argument(
        "--lie",
        action="append",
        default=[],
        choices=[lie.value for lie in Lie],
        metavar="NAME",
        help="with --liars: every liar tells this lie (again for more: drawn from those)",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="a watcher of every member too, which must end where the honest members end "
        "(--liars always has one; ~30%% more CPU)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    args.lie = tuple(args.lie)
    if args.shuffle_forks:
        args.liars, args.deal = True, Deal.SHUFFLE.value
    if args.players is None:
        args.players = (
            "3-5" if args.late_withdrawals or args.shuffle_forks else "2-4" if args.liars else "2-5"
        )
    lo, hi = table_sizes(parser, args.players)
    mixed = unplayed_flag(args)
    if mixed:
        parser.error(mixed)
    if args.deck_cheats and args.deal != Deal.SHUFFLE.value:
        parser.error("--deck-cheats needs --deal shuffle")
    if args.liars:
        return liars_main(args, lo, hi)
    cheats = not args.no_cheats
    jobs = [
        (
            seed,
            lo,
            hi,
            args.rounds,
            cheats,
            args.variants,
            args.short,
            args.timers,
            args.sleeper_forks,
            args.deal,
            args.deck_cheats,
            args.late_withdrawals,
            args.watch,
        )
        for seed in range(args.seed, args.seed + args.games)
    ]
    start = time.perf_counter()
    totals: dict[str, int] = {}
    bad = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for seed, players, counts, violations, faults in pool.map(one, jobs, chunksize=4):
            for key, value in counts.items():
                total = totals.get(key, 0)
                totals[key] = max(total, value) if key == "most flaps" else total + value
            if violations:
                bad += 1
                print(f"seed {seed} ({players} players) FAILED: {faults}", flush=True)
                for v in violations:
                    print(f"    {v}", flush=True)
            elif args.verbose:
                print(f"seed {seed} ({players} players) ok: {counts}", flush=True)
    elapsed = time.perf_counter() - start
    kinds = ("partitions", "crashes", "freezes", "cheaters", "deck cheaters")
    injected = sum(totals.get(k, 0) for k in kinds)
    injected += totals.get("lost", 0) + totals.get("duplicated", 0)
    print(
        f"games {args.games} ({totals.get('two', 0)} of two players), faults injected "
        f"{injected} (partitions {totals.get('partitions', 0)}, crashes "
        f"{totals.get('crashes', 0)}, freezes {totals.get('freezes', 0)}, "
        f"equivocating members {totals.get('cheaters', 0)}, "
        f"shuffle cheaters {totals.get('deck cheaters', 0)}, "
        f"lost {totals.get('lost', 0)}, duplicated {totals.get('duplicated', 0)} "
        f"of {totals.get('messages', 0)} messages)"
    )
    print(
        f"games that saw a drop {totals.get('saw drop', 0)}, an abandon "
        f"{totals.get('saw abandon', 0)}, a rejoin {totals.get('saw rejoin', 0)}; "
        f"ended provisional {totals.get('provisional', 0)}"
    )
    print(
        "the rule of a withdrawal after the drop: asked {}, offered {} cuts, kept {} by a "
        "peer and {} by the audit; the drop decided first taken {} times; fired in {} "
        "games".format(
            *(totals.get(f"lifted {k}", 0) for k in ("asked", "offered", "kept by a peer")),
            totals.get("lifted kept by the audit", 0),
            totals.get("lifted first", 0),
            totals.get("lifted fired", 0),
        )
    )
    print(
        f"the most withdrawals of an honest member's votes against one member in one round: "
        f"{totals.get('most flaps', 0)} (a flap fault past {FLAP_LIMIT})"
    )
    print(
        f"hand-ons in play (§9.2): {totals.get('hand-ons', 0)} started in "
        f"{totals.get('handed on games', 0)} games, {totals.get('handed on', 0)} beats handed "
        f"on of {totals.get('messages', 0)} messages"
    )
    print(
        f"invariant violations {bad}, {elapsed:.0f} s ({args.games / elapsed:.1f} games/s, "
        f"timers {args.timers})"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
