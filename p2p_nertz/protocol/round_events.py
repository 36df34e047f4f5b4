"""The fold of a round's events other than play: the fair deal's, the shuffle's, the results.

:class:`RoundEvents` is the part of :class:`~p2p_nertz.protocol.state.GameState` that checks a
commit, a nonce, a deal shown (``ready``), a secret, a shuffle event (key, stage, shares,
secret opened, complaint, answer) or a result against the phase and the round (DESIGN.md §5),
and hands it to the round (:class:`~p2p_nertz.protocol.rounds.RoundState`'s ``take_*``). It
owns what only those checks need: the local seat and its secrets (its own deal is checked
against its deck). It changes no phase and returns nothing: an event wrong here raises
:class:`~p2p_nertz.protocol.fold_values.Refuse`; the game fold moves the phases
(``GameState._advance``) and records the refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2p_nertz.deck.wire import DeckAnswer, DeckComplain, DeckKey, DeckOpen, DeckShares, DeckStage
from p2p_nertz.protocol.bodies import Commit, DeckEvent, Ready, Result, Reveal, RevealWhat
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Event, Phase, RefusalCode, Refuse
from p2p_nertz.protocol.roster import Roster
from p2p_nertz.protocol.rounds import RoundState
from p2p_nertz.protocol.shuffle import DEALT
from p2p_nertz.rules import Rules

__all__ = ["RoundEvents"]

_C = RefusalCode  # (short: every refusal in this module names one)


@dataclass(frozen=True, slots=True)
class RoundEvents:
    """How the fold takes a round's events but play (module docstring); shared by every copy
    of a fold (it holds nothing an event changes).

    Args:
        rules: the game's rules.
        seat: the local peer's seat, if it plays.
        secrets: for the local peer, a function giving its secret for a round (its own deck is
            then followed with every card known); ``None`` for a spectator or the audit.
    """

    rules: Rules
    seat: int | None = None
    secrets: Callable[[int], bytes] | None = None

    def take(self, event: Event, now: Phase, rs: RoundState, roster: Roster) -> None:
        """Fold ``event`` (of a kind of :data:`KINDS`) into ``rs``, the game being in phase
        ``now``; raise :class:`~p2p_nertz.protocol.fold_values.Refuse` if it is wrong here.
        ``roster``: the fold's, for what a stage's author saw of a cut."""
        if event.kind is Kind.DECK_STAGE:
            seat, frontier = event.seat, event.body.frontier
            self._deck_event(event, now, rs, lambda q: roster.saw_cut(seat, frontier, of=q))
        else:
            _TAKERS[event.kind](self, event, now, rs)

    def _commit(self, event: Event, now: Phase, rs: RoundState) -> None:
        body = event.body
        _not_shuffled(rs)
        assert isinstance(body, Commit)
        _expect(now, rs, Phase.COMMIT, body.round, event.seat)
        rs.fair.take_commit(event.seat, body)

    def _reveal(self, event: Event, now: Phase, rs: RoundState) -> None:
        body = event.body
        _not_shuffled(rs)
        assert isinstance(body, Reveal)
        if body.what is RevealWhat.NONCE:
            _expect(now, rs, Phase.NONCE, body.round, event.seat)
            rs.take_nonce(event.seat, body.value)
        else:
            _expect(now, rs, Phase.REVEAL, body.round, event.seat)
            rs.take_secret(event.seat, body.value)

    def _ready(self, event: Event, now: Phase, rs: RoundState) -> None:
        body = event.body
        _not_shuffled(rs)
        assert isinstance(body, Ready)
        seat = event.seat
        _expect(now, rs, Phase.PLAY, body.round, seat)
        own = seat == self.seat and self.secrets is not None
        rs.take_deal(seat, body.visible, self.rules, self.secrets if own else None)

    def _deck_event(
        self,
        event: Event,
        now: Phase,
        rs: RoundState,
        past_cut: Callable[[int], bool] | None = None,
    ) -> None:
        """An event of the dealerless shuffle (docs/shuffle.md §8.1, §10.7); ``past_cut``, for
        a stage: whether its author held events of a member past the cut a drop made."""
        body = event.body
        assert isinstance(body, DeckEvent)
        if rs.deck is None:
            raise Refuse(_C.WRONG_DEAL, "a shuffle event in a game dealt by commit and reveal")
        message = body.message
        seat = event.seat
        if (
            isinstance(message, DeckKey | DeckStage | DeckComplain | DeckAnswer)
            and message.round == rs.number
            and message.attempt != rs.deck.attempt
        ):
            if message.attempt < rs.deck.attempt:
                # Signed for a deal given up, before its author saw the drop that restarted
                # it: it stays in the log and changes nothing (docs/shuffle.md §8.4).
                return
            raise Refuse(
                _C.WRONG_PHASE,
                f"deal attempt {message.attempt} while the round is at {rs.deck.attempt}",
            )
        if isinstance(message, DeckKey):
            _expect(now, rs, Phase.KEY, message.round, seat)
            rs.deck.take_key(seat, message)
        elif isinstance(message, DeckStage):
            _expect(now, rs, Phase.DEAL, message.round, seat)
            rs.deck.take_stage(seat, message, past_cut)
        elif isinstance(message, DeckShares):
            # Shares come in play, and after it for turn-ups of the moves still in the air.
            if message.round != rs.number or now not in (Phase.PLAY, Phase.OPEN):
                raise Refuse(_C.WRONG_PHASE, f"shares of round {message.round} out of play")
            _expect(now, rs, now, message.round, seat)
            rs.take_shares(seat, message)
        elif isinstance(message, DeckOpen):
            _expect(now, rs, Phase.OPEN, message.round, seat)
            rs.take_deck_secret(seat, message)
        else:
            # A complaint of a box, or its answer: once every key is in, until the round's end
            # (docs/shuffle.md §6.3). One signed in the open phase may land after the last
            # secret: every secret is in then and every dealing re-made (§7.2), so it settles
            # nothing and is read without effect (an honest dealer answering a complaint made
            # late in the open phase was refused there: ``late_complaint``, sim seed 3).
            if message.round == rs.number and now is Phase.RESULT:
                return
            if message.round != rs.number or now not in DEALT:
                raise Refuse(_C.WRONG_PHASE, f"a complaint of round {message.round} out of it")
            _expect(now, rs, now, message.round, seat)
            if isinstance(message, DeckComplain):
                rs.deck.take_complaint(seat, message)
            else:
                rs.deck.take_answer(seat, message)

    def _result(self, event: Event, now: Phase, rs: RoundState) -> None:
        body = event.body
        assert isinstance(body, Result)
        _expect(now, rs, Phase.RESULT, body.round, event.seat)
        if event.seat in rs.results:
            raise Refuse(_C.REPEATED, "a second result")
        assert rs.expected is not None and rs.digest is not None
        rs.results |= {event.seat}
        rs.result_seqs += ((event.seat, event.seq),)
        expected = tuple(p.total for p in rs.expected.players)
        if body.digest != rs.digest or body.scores != expected:
            raise Refuse(
                _C.RESULT_MISMATCH,
                f"its result {list(body.scores)} disagrees with the replay {list(expected)}",
            )


def _not_shuffled(rs: RoundState) -> None:
    if rs.deck is not None:
        raise Refuse(_C.WRONG_DEAL, "a commit-and-reveal event in a shuffle game")


def _expect(now: Phase, rs: RoundState, phase: Phase, number: int, seat: int) -> None:
    if now is not phase or number != rs.number:
        raise Refuse(
            _C.WRONG_PHASE,
            f"round {number} {phase.value} event while the game is in round "
            f"{rs.number} {now.value}",
        )
    if seat not in rs.seats or seat in rs.forfeit:
        raise Refuse(_C.NOT_PLAYING, f"seat {seat} does not play round {number}")


_TAKERS: dict[Kind, Callable[[RoundEvents, Event, Phase, RoundState], None]] = {
    Kind.COMMIT: RoundEvents._commit,
    Kind.REVEAL: RoundEvents._reveal,
    Kind.READY: RoundEvents._ready,
    Kind.RESULT: RoundEvents._result,
    Kind.DECK_KEY: RoundEvents._deck_event,
    Kind.DECK_STAGE: RoundEvents._deck_event,
    Kind.DECK_SHARES: RoundEvents._deck_event,
    Kind.DECK_OPEN: RoundEvents._deck_event,
    Kind.DECK_COMPLAIN: RoundEvents._deck_event,
    Kind.DECK_ANSWER: RoundEvents._deck_event,
}
#: The kinds :meth:`RoundEvents.take` folds.
KINDS = frozenset(_TAKERS)
