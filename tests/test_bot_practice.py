"""Practice bots wait for the person: ``nertz play --practice`` (issue 15, "The first game").

A person's node (no strategy) and a practice bot at the top speed play over real sockets in
one trio process. The person turns the stock only once the bot has caught up; at every notice
the person's node holds, the bot has made at most one move more than the person. Waits are on
the game's own notices, bounded by ``trio.fail_after``: no sleeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from p2p_nertz.bots import keeps_pace
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Move, MoveKind, Rules
from p2p_nertz.runtime.node import PeerNode

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TURNS = 4
FREE = 4  # moves of the free bot between two of the person's


def test_keeps_pace_lets_a_bot_move_only_while_no_other_seat_is_behind() -> None:
    turn, card, stuck = MoveKind.TURN, MoveKind.CARD, MoveKind.PASS
    assert keeps_pace([], 1, {0, 1, 2})
    assert keeps_pace([(1, card)], 1, {0, 1}) is False
    assert keeps_pace([(1, card), (0, turn)], 1, {0, 1})
    # The slowest other seat sets the pace, not the fastest.
    assert keeps_pace([(1, card), (0, turn), (0, turn)], 1, {0, 1, 2}) is False
    # A seat that passed waits for the others: it does not hold the bot up (else nobody moves).
    assert keeps_pace([(1, card), (0, stuck)], 1, {0, 1})
    # A pass made stale (another's card in the lake: no longer in the table's stuck marks)
    # holds the bot up again: a person who said stuck is not left behind for the round.
    ahead = [(1, card), (0, stuck), (1, card)]
    assert keeps_pace(ahead, 1, {0, 1}, standing={0})
    assert keeps_pace(ahead, 1, {0, 1}, standing=()) is False
    # After a rotation everyone plays on: the pass no longer counts as waiting.
    assert keeps_pace([(1, card), (1, turn), (0, stuck), None], 1, {0, 1}) is False


async def test_a_practice_bot_never_gets_more_than_one_move_ahead_of_the_person(
    tmp_path: Path,
) -> None:
    # Three seats: the person, a practice bot, and a free bot at the same speed whose moves
    # are the test's clock: while it makes FREE moves the practice bot could make as many.
    person, bot, free = (Identity.generate(derive_seed(b"test-practice", s)) for s in range(3))
    spec = GameSpec.create(
        [(person.peer_id, "you"), (bot.peer_id, "bot"), (free.peer_id, "free")],
        Rules(target=None, rounds=1),
        derive_seed(b"test-practice-game")[:16],
    )
    mine = PeerNode(person, spec, tmp_path / "you.log", strategy=None)
    nodes = [
        mine,
        PeerNode(bot, spec, tmp_path / "bot.log", strategy="greedy", speed=10, practice=True),
        PeerNode(free, spec, tmp_path / "free.log", strategy="greedy", speed=10),
    ]
    endpoints = {n.identity.peer_id: n.bind() for n in nodes}
    seats = [spec.seat_of(i.peer_id) for i in (person, bot, free)]
    ahead: list[tuple[int, ...]] = []  # the counts whenever the practice bot was too far ahead

    def counts() -> tuple[int, ...]:
        try:
            log = mine.peer.tentative.round.log
        except RuntimeError:  # the node has not started its peer yet
            return 0, 0, 0
        played = [e[0] for e in log if e is not None]
        return tuple(played.count(seat) for seat in seats)

    async def wait_for_the_bots(free_moves: int) -> None:
        # Stock turns raise no notice: look at the round's play as the person's node holds it.
        while True:
            you, practice, other = counts()
            if practice > you + 1:
                ahead.append((you, practice, other))
            if practice >= you + 1 and other >= free_moves:
                return
            await trio.sleep(0.01)

    async def person_plays(cancel: trio.CancelScope) -> None:
        for turn in range(TURNS):
            await wait_for_the_bots(FREE * (turn + 1))
            await mine.play(Move.parse("S"))
        await wait_for_the_bots(FREE * (TURNS + 1))
        cancel.cancel()

    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            for node in nodes:
                nursery.start_soon(node.run, endpoints)
            nursery.start_soon(person_plays, nursery.cancel_scope)
    assert ahead == []
    assert counts()[:2] == (TURNS, TURNS + 1)
