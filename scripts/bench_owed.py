"""Benchmark of the shuffle's owed-share bookkeeping with a member dropped (session 25).

A peer asks what is owed at every input: its duties ask ``DeckRound.owed`` of its final fold
and of its held one, its waits and votes ``DeckRound.partials_owed`` of each position in
flight; and it refolds its held view from a copy of its final fold whenever that changes. With
a member dropped every position turned up and not opened is walked, and since a move's own
shares travel outside the feed (docs/shuffle.md §10.14) most positions stay that way. The
round now keeps those answers (:mod:`p2p_nertz.protocol.shuffle_owed`). This script builds
one such round at ``--members`` (8 by default: real keys, dealings, shares and partials, the
stages left unshuffled since nothing here reads them), a member dropped, and prints, as the
median CPU time (``time.process_time``) of ``--reps`` alternated repetitions:

* **refold**: copy the final fold's round, take a move's turn-up and three members' partials
  into the copy (the held view of one input), then ask what every member still in owes and
  what every position owes, of the copy and of the final round, twice (the duties, then the
  waits and votes);
* **ask again**: the same asks of the final round, unchanged since the last asks (a beat);

each beside its **reference** in the same run: the same work with every answer walked
(``tests.deck_helpers.walk_owed`` and ``walk_partials_owed``, the round's code before it kept
them). The answers are compared once, and said to be equal or not.

    .venv/bin/python scripts/bench_owed.py [--reps 7] [--members 8] [--turned 24]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_nertz.deck.deal import member_at  # noqa: E402
from p2p_nertz.deck.elgamal import initial_deck  # noqa: E402
from p2p_nertz.deck.keys import MemberKey, joint_key  # noqa: E402
from p2p_nertz.deck.proofs import prove_equal  # noqa: E402
from p2p_nertz.deck.shares import Share, make_share, share_context  # noqa: E402
from p2p_nertz.deck.vss import deal_shares, share_for, threshold  # noqa: E402
from p2p_nertz.deck.wire import DeckKey, DeckShares, DeckStage  # noqa: E402
from p2p_nertz.protocol.shuffle import DeckRound  # noqa: E402
from p2p_nertz.protocol.shuffle_owed import Partials  # noqa: E402
from p2p_nertz.rules.cards import new_deck  # noqa: E402
from tests.deck_helpers import (  # noqa: E402
    CONTEXT,
    box_keys,
    member_keys,
    walk_owed,
    walk_partials_owed,
)

#: positions of each deck the deal turned up: their own shares travel in the feed (opened)
FACE_UP = 8

Asks = Callable[[DeckRound], object]


def _partial(
    keys: list[MemberKey], j: int, of: int, where: tuple[int, int], deck: DeckRound
) -> Share:
    assert deck.final is not None
    d, p = where
    sigma = share_for(keys[of], j, len(keys))
    context = share_context(CONTEXT, j, of, d, p)
    point, proof = prove_equal(sigma, deck.final[d][p][0], context)
    return Share(j, of, d, p, point, proof)


def build(n: int, turned: int) -> tuple[DeckRound, list[tuple[int, tuple[Share, ...]]], int]:
    """The final round: ``n`` members dealt, ``turned`` positions of each deck turned up (the
    first :data:`FACE_UP` opened), the last member dropped and the first ``t − 1`` of the
    others' partials for it in; and one input's events (three members' partials of eight
    positions each). The member dropped."""
    keys = member_keys(n, "bench owed")
    publics, _ = box_keys(n)
    deck = DeckRound(tuple(range(n)), CONTEXT, 0)
    for i, key in enumerate(keys):
        deck.take_key(i, DeckKey(1, key.public, key.proof(i), deal_shares(key, i, publics)))
    initial = initial_deck(new_deck(), joint_key(k.public for k in keys))
    for s in range(n):
        for d in range(n):
            deck.take_stage(member_at(stage=s, deck=d, members=n), DeckStage(1, d, s, initial))
    deck.finish_deal()
    assert deck.final is not None
    for k in range(turned):
        for d in range(n):
            deck.turn_up(d, [k])
    for i, key in enumerate(keys):
        own = [make_share(key, i, d, k, deck.final[d][k]) for d in range(n) for k in range(FACE_UP)]
        deck.take_shares(i, DeckShares(1, i, tuple(own)))
    gone = n - 1
    deck.drop(gone)
    t = threshold(n)
    assert t is not None
    sealed = [w for w in deck.turned if w not in deck.opened]
    for j in range(t - 1):
        made = tuple(_partial(keys, j, gone, w, deck) for w in sealed)
        deck.take_shares(j, DeckShares(1, j, made))
    events = [
        (j, tuple(_partial(keys, j, gone, w, deck) for w in sealed[8 * e : 8 * e + 8]))
        for e, j in enumerate(range(t - 1, n - 1))
    ][:3]
    return deck, events, gone


def refold(final: DeckRound, events: list[tuple[int, tuple[Share, ...]]], asks: Asks) -> None:
    """One input's held view: the final round copied, a move's turn-up and ``events`` taken,
    then what is owed asked of it and of the final round, twice."""
    held = final.copy()
    held.turn_up(0, [len(final.turned) // len(final.members) + 1])
    for seat, shares in events:
        held.take_shares(seat, DeckShares(1, seat, shares))
    for _ in range(2):
        asks(final)
        asks(held)


def kept(deck: DeckRound) -> tuple[list[list[tuple[int, int, int]]], list[list[Partials]]]:
    live = [s for s in deck.members if deck.member(s) not in deck.gone]
    return [deck.owed(s) for s in live], [deck.partials_owed(w) for w in deck.turned]


def walked(deck: DeckRound) -> tuple[object, object]:
    live = [s for s in deck.members if deck.member(s) not in deck.gone]
    return [walk_owed(deck, s) for s in live], [walk_partials_owed(deck, w) for w in deck.turned]


def _same(deck: DeckRound) -> bool:
    owed, partials = kept(deck)
    slow_owed, slow_partials = walked(deck)
    lists = [[(m, list(owing)) for m, owing in at] for at in partials]
    return owed == slow_owed and lists == slow_partials


def _time(fn: Callable[[], object], number: int) -> float:
    started = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - started) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--turned", type=int, default=24, help="positions turned up a deck")
    args = parser.parse_args()
    started = time.process_time()
    final, events, gone = build(args.members, args.turned)
    built = time.process_time() - started
    sealed = sum(w not in final.opened for w in final.turned)
    print(
        f"{args.members} members, member {gone} dropped; {len(final.turned)} positions turned up, "
        f"{sealed} not opened; one input: a turn-up and {sum(len(s) for _, s in events)} "
        f"partials in {len(events)} events (built in {built:.1f} s of CPU)"
    )
    refold(final, events, kept)  # (the shares' checks answered once, as the memo does)
    held = final.copy()
    for seat, shares in events:
        held.take_shares(seat, DeckShares(1, seat, shares))
    print(f"answers equal to the walk's: {_same(final) and _same(held)}")
    figures: dict[str, list[float]] = {}
    for _ in range(args.reps):
        for name, fn in (
            ("refold, kept", lambda: refold(final, events, kept)),
            ("refold, walked (reference)", lambda: refold(final, events, walked)),
            ("ask again, kept", lambda: kept(final)),
            ("ask again, walked (reference)", lambda: walked(final)),
        ):
            figures.setdefault(name, []).append(_time(fn, 5))
    median = {name: statistics.median(values) for name, values in figures.items()}
    for what in ("refold", "ask again"):
        fast, slow = median[f"{what}, kept"], median[f"{what}, walked (reference)"]
        print(
            f"{what:10} kept {fast * 1e3:8.3f} ms   walked {slow * 1e3:8.3f} ms   "
            f"ratio {fast / slow:.3f}"
        )


if __name__ == "__main__":
    main()
