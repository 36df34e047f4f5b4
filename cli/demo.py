"""``nertz demo``: a bots-only game of separate processes over ZeroMQ on 127.0.0.1.

The demo plays the part of a lobby: it makes one identity per player (from ``--seed``, or a
random seed it prints), the game spec, a free TCP port on loopback per player, keeps the keys
in the key store (cli/keyfile.py: never beside the logs) and writes the spec into its working
directory. It then starts one
``python -m cli node`` process per player, each given every other member's endpoint
explicitly (no broadcast or multicast), shows the rounds as the first player sees them, waits
for all of them, checks that they agree on the final state (the digest) and prints the
scoreboard and where the signed logs are.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from cli.args import EXIT_FAILED, EXIT_GONE, deal_from, liveness_argv, players_from, rules_from
from cli.bots import (
    LEAVE_PATIENCE,
    NodeChild,
    introduce_children,
    start_node_child,
    stop_children,
)
from cli.files import make_directory
from cli.keyfile import write_key  # (write_key re-exported for the tests)
from cli.made import Made
from cli.parsers import DEFAULT_TIMEOUT, TARGET_TIMEOUT
from cli.places import on_its_own_line, self_command
from p2p_nertz import __version__
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Game, Rules
from p2p_nertz.signals import children_signalled, let_go_of_unread_streams
from p2p_nertz.words import counted, plural, seat_named

__all__ = ["write_key"]

_POLL = 0.1  # seconds between looks at the children
_PROGRESS = 3.0  # seconds between two progress lines while the game goes on


def game_dir(given: Path | None, kind: str, spec: GameSpec) -> tuple[Path, Path, str]:
    """:func:`made_game_dir`'s directory, spec path and line, without what it made."""
    workdir, spec_path, note, _ = made_game_dir(given, kind, spec)
    return workdir, spec_path, note


def made_game_dir(given: Path | None, kind: str, spec: GameSpec) -> tuple[Path, Path, str, Made]:
    """The directory of a game made on this machine, created, with no logs in it yet, and the
    game's spec written there; the spec's path; and a line for the person when the directory
    is not the one they would expect (else ``""``).

    ``given`` (``--dir``) is used as it is: a person who names a directory holding logs is
    told so. Without it the game gets a directory of its own, ``nertz-logs/KIND-<id>``, or
    ``KIND-<id>-2``, ``-3``… when that is taken: the game id comes from ``--seed``, so the
    same seed played again is the same id, and a directory is only ever this run's if this
    run created it (``mkdir`` that refuses an existing one: two runs of one seed started
    together never share one, and an earlier game's logs are never added to). The two games
    share the game id and the keys (the deal comes from them): their logs audited together
    read as every member signing two feeds, so the line says to audit them apart.

    Raises:
        NertzError: it cannot be created, already holds logs (``given``), or the spec cannot
            be written there.
    """
    note = ""
    if given is None:
        first = Path("nertz-logs") / f"{kind}-{spec.game_id.hex()[:12]}"
        made = Made.before_making(first.parent)
        try:
            workdir = _fresh_game_dir(first)
        except NertzError:
            made.take_back()
            raise
        made = made.made_only(workdir)
        if workdir != first:
            note = (
                f"{str(first)!r} holds another game of this seed (an earlier one, or one still "
                f"running): this one goes in {str(workdir)!r} (the same game id: audit each "
                "one's logs apart)"
            )
    else:
        workdir = given
        made = Made.before_making(workdir)
        try:
            make_directory(workdir, "game directory", "--dir")
        except NertzError:
            made.take_back()
            raise
        if any(workdir.glob("*.log")):
            raise NertzError(
                f"{str(workdir)!r} already holds game logs; remove them or choose another --dir"
            )
    spec_path = workdir / "game.spec"
    if spec_path.is_file() and spec_path.read_bytes() != spec.to_wire():
        # (another game's, perhaps one starting there now: its spec is not to be replaced)
        raise NertzError(
            f"{str(workdir)!r} already holds another game (its game.spec); choose another "
            "--dir or remove it"
        )
    try:
        spec_path.write_bytes(spec.to_wire())
    except OSError as exc:  # (a full disk, a directory of that name: no half spec left)
        if spec_path.is_file():
            spec_path.unlink()
        made.take_back()  # (and no directory this run made: session 43 left it, empty)
        raise NertzError(f"cannot write {str(spec_path)!r}: {exc.strerror}") from None
    return workdir, spec_path, note, made


_MAX_AGAIN = 10_000  # games of one seed in one nertz-logs before the person is asked to tidy


def _fresh_game_dir(first: Path) -> Path:
    """``first``, or ``first-2``, ``first-3``…: the first of them this call creates itself.

    Raises:
        NertzError: the parent cannot be made, or none can be created.
    """
    parent = first.parent
    make_directory(parent, "log directory", "--dir")
    for n in range(1, _MAX_AGAIN + 1):
        path = first if n == 1 else first.with_name(f"{first.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise NertzError(
                f"cannot create game directory {str(path)!r}: {exc.strerror}"
            ) from None
        return path
    raise NertzError(
        f"{str(parent)!r} holds {_MAX_AGAIN} games of this seed; remove some or give --dir"
    )


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.rounds is None and args.target is None:
        args.rounds = 1
    rules = rules_from(args)  # (--players, the seats and the bots: checked by cli/parsers.py)
    players = players_from(args, args.strategy)
    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT if rules.racing_demon else TARGET_TIMEOUT
    seed: int = args.seed if args.seed is not None else secrets.randbits(32)

    identities = [
        Identity.generate(derive_seed(b"nertz-demo-key", seed, n)) for n in range(args.players)
    ]
    identities.sort(key=lambda i: i.peer_id)  # seat order (the roster sits by key): P0 is seat 0
    spec = GameSpec.create(
        [(i.peer_id, seat_named("P", n)) for n, i in enumerate(identities)],
        rules,
        derive_seed(b"nertz-demo-game", seed)[:16],
        deal=deal_from(args),
    )
    game = spec.game_id.hex()
    workdir, spec_path, note, made_here = made_game_dir(args.dir, "demo", spec)
    made: Made | None = made_here  # (taken back by a refusal until the game begins)
    goal = f"target {rules.target}" if rules.rounds is None else counted(rules.rounds, "round")
    print(f"p2p-nertz {__version__} - demo: {args.players} bot processes over ZeroMQ on 127.0.0.1")
    deal = "" if spec.deal is Deal.COMMIT else f"  deal {spec.deal}"
    print(f"game {game[:16]}  seed {seed}  {goal}{deal}")
    print(on_its_own_line("its logs and output", str(workdir)))
    if note:
        print(note)

    children: list[NodeChild] = []
    try:  # (from the first child on: a closed stdout or a Ctrl-C leaves none behind)
        for seat, (identity, player) in enumerate(zip(identities, players, strict=True)):
            start_node_child(
                workdir,
                spec_path,
                spec,
                identity,
                seat=seat,
                name=seat_named("P", seat),
                stem=seat_named("p", seat),
                endpoint_of=None,  # it binds a free port itself, then hears the others'
                strategy=player.strategy,
                speed=str(player.speed),
                # A line per card to the lake (the progress shown), and the demo's timers.
                options=["--progress", *liveness_argv(args)],
                into=children,
            )
        by_id = introduce_children(children, spec, {})
        made = None  # (the game has begun: what it made is its, refusal or not)
        # (Headed: a newcomer asked what "524y-txym-jbdw-woqx" was.)
        width = len(children[0].name)
        print(f"  {'':<{width}}  {'fingerprint (key)':<{len(children[0].fingerprint)}}  bot")
        for child, identity, player in zip(children, identities, players, strict=True):
            endpoint = by_id[identity.peer_id]
            print(f"  {child.name}  {child.fingerprint}  {player.strategy:<9} on {endpoint}")
        sys.stdout.flush()
        dropped = _wait(children, args.timeout, spec.deal, Game(rules, args.players))
    except KeyboardInterrupt:
        # A Ctrl-C reached the children too: give them time to leave cleanly first. A SIGTERM
        # did not: they are sent one now, and leave as cleanly. (Its words to streams nobody
        # reads go nowhere: p2p_nertz/signals.py.)
        let_go_of_unread_streams()
        stop_children(children, patience=LEAVE_PATIENCE if children_signalled() else 0.0)
        print(f"nertz demo: stopped; the logs so far are in {workdir}", file=sys.stderr)
        raise
    except NertzError:  # (a refusal before the game began: nothing of it left behind)
        stop_children(children)
        if made is not None:
            made.take_back()
        raise
    finally:
        stop_children(children)
    return _report(children, dropped, workdir, rules)


def _wait(
    children: list[NodeChild], timeout: float, deal: Deal, game: Game | None = None
) -> list[NodeChild] | None:
    """Wait for every child, echoing the rounds the first one reports, and the cards to the
    lake every few seconds (:data:`_PROGRESS`) so that a person sees the game go on. Returns
    the children that did not see the game's end as members (below), or ``None`` on timeout.

    A child the others dropped (silent past their ``--drop-after``: stopped, asleep) may wake
    after they have finished and gone: it then finds the table gone and stops by itself
    (``nertz node`` exits with :data:`EXIT_GONE`, docs/protocol.md §9.9, or 0 where the
    game's end is on its table: :func:`_stopped_waiting`), and is returned.
    One still running at the timeout that every child which ended holds dropped (it never
    woke) is stopped and returned too. ``game``: the game before its first round (a round
    the game adds to break a tie is said: "1 round" and then a round 2 read as a fault).
    """
    start = time.monotonic()
    deadline = start + timeout
    shown = 0
    lake: dict[int, int] = {}  # cards to the lake per round, as the first node saw them
    said = start
    while True:
        # (Whether all have ended is looked at before the read: a child that wrote its last
        # round and ended between the read and the look would not have that round echoed.)
        ended = all(c.proc is not None and c.proc.poll() is not None for c in children)
        lines = children[0].out.read_text(errors="replace").splitlines()
        for line in lines[shown:]:
            try:
                data = json.loads(line)
            except ValueError:
                break  # a line still being written
            shown += 1
            if isinstance(data, dict) and data.get("event") == "lake":
                lake[data["round"]] = lake.get(data["round"], 0) + 1
            if isinstance(data, dict) and data.get("event") == "round":
                pairs = game is not None and game.rules.pairs  # (totals: per team with pairs)
                totals = "  ".join(f"{_who(s, pairs)} {t:4d}" for s, t in enumerate(data["totals"]))
                print(f"round {data['round']:3d} over   totals  {totals}", flush=True)
                if game is not None:
                    game, tie = _tiebreak(game, data["totals"])
                    if tie:
                        print(tie, flush=True)
                said = time.monotonic()
        now = time.monotonic()
        if now - said >= _PROGRESS:
            if lake:
                number = max(lake)
                what = f"round {number}: {counted(lake[number], 'card')} to the lake so far"
            else:
                what = "dealing: the nodes connect, " + (
                    "commit and reveal" if deal is Deal.COMMIT else "shuffle every deck"
                )
            print(f"  {now - start:5.1f} s  {what}", flush=True)
            said = now
        if ended:
            return [c for c in children if _stopped_waiting(c)]
        if time.monotonic() > deadline:
            stragglers = _dropped_stragglers(children)
            if not stragglers:
                return None
            stop_children(stragglers)
            return stragglers
        time.sleep(_POLL)


def _tiebreak(game: Game, totals: list[int]) -> tuple[Game, str]:
    """``game`` after a round that ended at ``totals`` (each team's), and the line that says
    an extra round is due, naming who plays it (``""``: none is; the rule is the rules
    engine's, :meth:`~p2p_nertz.rules.Game.teams_next_round`).

    >>> from p2p_nertz.rules import Rules
    >>> _tiebreak(Game(Rules(target=None, rounds=1), 3), [18, 8, 18])[1]
    '  tied at the top: P0 and P2 play an extra round'
    >>> _tiebreak(Game(Rules(target=None, rounds=1), 3), [18, 8, 12])[1]
    ''
    """
    try:
        game = game.record([t - before for t, before in zip(totals, game.totals, strict=True)])
    except ValueError:  # (a line that does not fit this game: nothing to say of it)
        return game, ""
    tied = game.teams_next_round()
    if game.over or len(tied) == game.teams:
        return game, ""
    who = [_who(t, game.rules.pairs) for t in tied]
    return game, f"  tied at the top: {' and '.join(who)} play an extra round"


def _stopped_waiting(child: NodeChild) -> bool:
    """Whether ``child`` ended finding the table gone: status 3, or 0 with the game's end
    on its table but not final there (``cli.args.gone_status``; its final line says
    ``"gone"``)."""
    if child.proc is None or child.proc.returncode not in (0, EXIT_GONE):
        return False
    if child.proc.returncode == EXIT_GONE:
        return True
    final = child.final()
    return final is not None and final.get("gone") is not None


def _dropped_stragglers(children: list[NodeChild]) -> list[NodeChild]:
    """The children still running that every child which has ended holds dropped, once
    those that ended all ended the game (none running otherwise, or none ended)."""
    ended = [c for c in children if c.proc is not None and c.proc.poll() is not None]
    running = [c for c in children if c not in ended]
    if not ended or not running:
        return []
    over = [f for f in map(NodeChild.final, ended) if f is not None and f.get("over")]
    if len(over) < len(ended):
        return []
    if all(c.seat in f.get("dropped", ()) for f in over for c in running):
        return running
    return []


def _report(
    children: list[NodeChild], dropped: list[NodeChild] | None, workdir: Path, rules: Rules
) -> int:
    """The scoreboard, or why the demo failed. ``dropped``: the children that stopped
    without the game's end, as members the others dropped (``None``: the game did not
    finish in time)."""
    if dropped is None:
        print("FAILED: the game did not finish in time; the nodes were stopped", file=sys.stderr)
        return EXIT_FAILED
    theirs = [c.final() for c in children if c not in dropped]
    for c in dropped:
        if not all(f is not None and c.seat in f.get("dropped", ()) for f in theirs):
            # Stopped waiting, but not as a member the others voted out: the game broke.
            print(f"FAILED: node {c.name} stopped: {c.last_error()} (see {c.err})", file=sys.stderr)
            return EXIT_FAILED
    for c in dropped:
        own = c.final()
        why = None if own is None else own.get("why")
        how = (
            f"woke to find the table gone and stopped by itself: {why}"
            if why
            else "never heard its end; it was stopped"
        )
        print(
            f"note: {c.name} was voted out of the game (silent past the others' "
            f"--drop-after) and {how} (see {c.out})",
            file=sys.stderr,
        )
    failed = False
    finals: list[dict[str, Any]] = []
    for c in children:
        assert c.proc is not None
        if c in dropped:
            continue
        final = c.final()
        if c.proc.returncode != 0 or final is None:
            failed = True
            code = c.proc.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            print(
                f"FAILED: node {c.name} {how}: {c.last_error()} (see {c.err})",
                file=sys.stderr,
            )
        elif final is not None:
            finals.append(final)
    if failed:
        return EXIT_FAILED
    digests = {f["digest"] for f in finals}
    totals = {tuple(f["totals"]) for f in finals}
    if len(digests) != 1 or len(totals) != 1:
        print("FAILED: the nodes disagree on the final state:", file=sys.stderr)
        kept = [c for c in children if c not in dropped]
        for c, f in zip(kept, finals, strict=True):
            print(f"  {c.name}: digest {f['digest']} totals {f['totals']}", file=sys.stderr)
        return EXIT_FAILED
    final = finals[0]
    print()
    print(f"scoreboard after {counted(final['rounds'], 'round')}:")
    team_totals: list[int] = final["totals"]
    for c in children:
        team = rules.team_of(c.seat)
        print(f"  {c.name:<4} {c.fingerprint}  {team_totals[team]:5d}")
    who = ", ".join(_who(w, rules.pairs) for w in final["winners"])
    best = max(team_totals[w] for w in final["winners"])  # (not always the highest total)
    print(f"{plural(len(final['winners']), 'winner')}: {who} with {best}")
    # (The digest on a line of its own: after the words, 90 columns wrapped mid-way.)
    agree = (
        f"all {len(finals)} nodes still in agree" if dropped else f"all {len(children)} nodes agree"
    )
    print(on_its_own_line(f"{agree} on the game's digest", final["digest"]))
    logs = f"{shlex.quote(str(workdir))}/p*.log"  # (the glob outside the quotes: the shell's)
    nertz = self_command()
    print(on_its_own_line("signed logs, one per player (spec and output alongside)", logs))
    print(on_its_own_line("audit them", f"{nertz} audit {logs}"))
    replay = f"{nertz} replay --text {shlex.quote(str(workdir / (seat_named('p', 0) + '.log')))}"
    print(on_its_own_line("replay one", replay))
    return 0


def _who(number: int, pairs: bool) -> str:
    """A seat's player as the demo names it (:func:`~p2p_nertz.words.seat_named`: ``P2`` sits
    at seat 2), or with pairs a team (``team 1``: teams count from 1, as the tables say)."""
    return f"team {number + 1}" if pairs else seat_named("P", number)
