"""The table controller: what a person's table does, for any front end.

Theory of operation
-------------------
A front end (the curses terminal of ``nertz play``, a browser next) reads a person's input
and shows a :class:`~p2p_nertz.ui.view.TableView`; the :class:`TableController` sits between
it and the player's node and holds everything else: the keyboard state (:mod:`p2p_nertz.ui.keys`),
the announcements and the end-of-round board (:class:`~p2p_nertz.ui.tracker.Tracker`), the
countdown between rounds, leaving, quitting and signals.

It is sans-I/O, in the manner of the protocol core: no clock (the runner passes ``now``), no
sockets, no event loop. Input goes in as a key (:meth:`TableController.press`), as an action a
pointer built (:meth:`TableController.act`: a drag from a pile to the lake is a
:class:`~p2p_nertz.ui.keys.PlayMove`), as a notice of the node, as a signal, or as the
passing of time (:meth:`TableController.tick`); what the node must do comes out as
:data:`Request` values, which the runner carries out and whose failures it hands back
(:meth:`TableController.refused`, :meth:`TableController.abandon_refused`). The front end is
told to show a new view by :meth:`TableController.draw`.

A second front end needs no change here: it implements :class:`FrontEnd` and turns its input
into keys or actions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.protocol.gone import GoneReason
from p2p_nertz.protocol.local import AbandonAnswer, MoveAnswer, own_held_back
from p2p_nertz.protocol.peer import Effect, Peer, TableGone
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Move, MoveKind, Pile
from p2p_nertz.ui.keys import (
    ENTER,
    Abandon,
    Action,
    CloseBoard,
    Context,
    KeyState,
    Leave,
    PlayMove,
    Status,
    explain,
    illegal_words,
    once_dealt,
    press,
)
from p2p_nertz.ui.refusals import pass_for_early_words
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import NOT_UP, TableView, cards_up
from p2p_nertz.ui.waits import status_wait

__all__ = [
    "BETWEEN_ROUNDS",
    "FrontEnd",
    "Quit",
    "ReleaseReady",
    "Request",
    "TableController",
]

BETWEEN_ROUNDS = 30.0
"""Seconds the end-of-round board stays up before the next round starts by itself (Enter
starts it sooner). The next round's ``ready`` waits meanwhile, well within the protocol's
``phase_timeout`` (60 s), and the bots wait for every player's ``ready``."""

_NOT_TABLE_KEYS = frozenset({"RESIZE", "UP", "DOWN", "LEFT", "RIGHT", "\t"})
CTRL_C = "CTRL-C"
"""The key name a front end gives Ctrl-C when it reads it as a key (it leaves cleanly)."""


class FrontEnd(Protocol):
    """What the controller needs of a front end: where to show the table."""

    def show(self, view: TableView) -> None:
        """Show ``view`` (a terminal renders and paints it; a browser sends it)."""


@dataclass(frozen=True, slots=True)
class ReleaseReady:
    """Let the node sign its ``ready`` of round ``number`` (the board was closed, or its
    countdown ended: docs/pace.md, between rounds)."""

    number: int


@dataclass(frozen=True, slots=True)
class Quit:
    """Stop now: the game is over (or left) and the person is done with the table."""


Request = PlayMove | Abandon | Leave | ReleaseReady | Quit
"""What the runner must do on the node for the controller (leaving: sign a ``leave`` and let
the node finish; quitting: stop the table)."""


class TableController:
    """One person's table over one node (see the module docstring).

    Args:
        names: each seat's name.
        seat: the person's seat.
        front: where to show the table.
        symbols: suit symbols (else letters).
        hint: a first announcement (how to change the bots' speed, say).
        between_rounds: seconds the end-of-round board stays up (:data:`BETWEEN_ROUNDS`).

    Attributes:
        tracker: the announcements, links and board.
        keys: the keyboard's state.
        stopped: the node's run has returned (the game is over, or we left, or the table is
            gone).
        left: the person left the game (a key, or a signal).
        signal: the signal that made it leave, if one did.
        gone: why the node stopped waiting, if the table is gone (nobody still in the game
            heard: docs/protocol.md §9.9); the table says so and that ``q`` quits.
    """

    def __init__(
        self,
        names: tuple[str, ...],
        seat: int,
        front: FrontEnd,
        *,
        symbols: bool = True,
        hint: str | None = None,
        between_rounds: float = BETWEEN_ROUNDS,
    ) -> None:
        self.tracker = Tracker(names, seat, symbols)
        self.seat = seat
        self.front = front
        self.symbols = symbols
        self.between_rounds = between_rounds
        self.keys = KeyState()
        self.stopped = False
        self.left = False
        self.signal: int | None = None
        self.gone: TableGone | None = None
        self._released = 1  # the last round whose ready the node may sign
        self._countdown_end: float | None = None  # while a board is up: when the next starts
        self._board_round: int | None = None  # the round whose board holds the next ready
        self._dealt = 0  # the last round whose table the status line has said is dealt
        self._up = 0  # the last round whose dealt cards have shown (``cards_up``)
        if hint is not None:
            self.tracker.say(hint)

    # -- input ---------------------------------------------------------------------------------
    def notice(self, effect: Effect, final: GameState, now: float) -> None:
        """A notice effect of the node (its listener), with the final fold it came from."""
        self.tracker.notice(effect, final, now)

    def press(self, key: str, peer: Peer | None, now: float) -> list[Request]:
        """A key the person pressed (names as :mod:`p2p_nertz.ui.keys` wants; ``CTRL-C``);
        ``peer``: the node's peer (``None`` before it started)."""
        if key in _NOT_TABLE_KEYS:
            return []
        if key == CTRL_C:
            return self._leave()
        if self.stopped and key.lower() == "q":
            return [Quit()]
        if peer is None:
            return []
        self._deal_seen(peer)  # (a key on a new round's table: its words, not the deal's)
        self.keys, actions = press(self.keys, key, self._context(peer, now))
        return self._actions(self._not_early(actions, peer, now))

    def _not_early(self, actions: list[Action], peer: Peer, now: float) -> list[Action]:
        """``actions`` without a typed pass on another's behalf (``P@S``) made before the
        minute the game waits for (the core counts it: ``LocalPlayer.pass_for_wait``): the
        status line says how long is left. (Made early it counted, and passed for a player
        the table says is given a minute.)"""
        kept: list[Action] = []
        for action in actions:
            behalf = action.move.behalf if isinstance(action, PlayMove) else None
            wait = peer.player.pass_for_wait(now) if behalf is not None else None
            if wait is not None and wait[0] == behalf and wait[1] > 0:
                words = pass_for_early_words(self.tracker.name(behalf), wait[1])
                self.keys = replace(self.keys, line=Status.refusing(words))
                continue
            kept.append(action)
        return kept

    def drop(
        self,
        source: str,
        targets: Sequence[str],
        peer: Peer | None,
        now: float,
        *,
        count: int = 0,
    ) -> list[Request]:
        """A card a pointer dropped: picked from ``source`` and let go near ``targets`` (pile
        keys as :mod:`p2p_nertz.ui.keys` names them: ``n``, ``w``, ``1``-``6``, ``l``; the
        nearest first).

        Each target is tried as the two keys that pick the source and name it (so a drop
        means exactly what those keys mean at the terminal, with the same reasons): the
        first that makes a move wins (aim assist: a drop near several piles goes to the
        nearest one that fits). None fits: the status says why the nearest did not, and
        nothing else changes (the page draws the card back where the view has it). A drop
        back on its own pile changes nothing (the same key twice would mean "to the lake").

        ``count``: the run grabbed, in cards from the top of a work pile (a card picked from
        the middle of a pile, with those above it; 0: as the keys choose). Then the drop moves
        exactly that run, never another part of the pile: onto a work pile as that many
        cards (a move, else a slide-under), typed as the move's notation on the keys' command
        line (so it is checked, and refused with its reason, as a typed move is); only a
        pile's top card goes to the lake.
        """
        targets = [t for t in targets if t != source]
        if peer is None or not targets or self.tracker.board is not None:
            return []
        self._deal_seen(peer)
        ctx = self._context(peer, now)
        first: KeyState | None = None
        for target in targets:
            keys, _ = press(KeyState(), source, ctx)
            if keys.selected is None:  # the source itself cannot move (empty, frozen)
                first = keys
                break
            if count > 0 and keys.selected.is_work:
                keys, actions = self._drop_run(keys.selected, target, count, ctx)
            else:
                keys, actions = press(keys, target, ctx)
            if any(isinstance(a, PlayMove) for a in actions):
                self.keys = keys
                return self._actions(actions)
            first = first or keys
        assert first is not None
        self.keys = KeyState(line=first.line)
        return []

    @staticmethod
    def _drop_run(
        source: Pile, target: str, count: int, ctx: Context
    ) -> tuple[KeyState, list[Action]]:
        """The run of ``count`` cards from the top of work pile ``source`` dropped on
        ``target`` (see :meth:`drop`)."""
        if target == "l":
            if count == 1:
                return press(KeyState(selected=source), target, ctx)
            return KeyState(
                line=Status.refusing("illegal: only a pile's top card goes to the lake")
            ), []
        to = _WORK_KEYS.get(target)
        if to is None or ctx.table is None or ctx.seat is None:
            return press(KeyState(selected=source), target, ctx)  # (the keys say why not)
        moves = [
            m
            for m in ctx.table.legal_moves(ctx.seat)
            if m.source is source and m.target is to and m.count == count and m.plays_card
        ]
        if not moves:  # (the engine's reason, worded as a typed move's: the keys' one home)
            return KeyState(line=Status.refusing(explain(ctx, Move.to_pile(source, to, count)))), []
        # As the keys prefer: a move over a slide-under, an undeclared one over a joker's.
        moves.sort(key=lambda m: (m.kind is not MoveKind.CARD, m.declare is not None))
        return press(KeyState(command=str(moves[0])), ENTER, ctx)

    def act(self, action: Action, peer: Peer | None) -> list[Request]:
        """An action a pointer built (a card dragged to the lake, a click on "leave")."""
        if peer is None and not isinstance(action, Leave):
            return []
        return self._actions([action])

    def signal_received(self, signum: int) -> list[Request]:
        """SIGINT or SIGTERM: leave cleanly; a second one (or one after the game) stops."""
        if self.signal is not None or self.stopped:
            return [Quit()]
        self.signal = signum
        return self._leave()

    def node_stopped(self, gone: TableGone | None = None) -> list[Request]:
        """The node's run returned: the table stays up to be read, unless the person was
        leaving (then it is done). ``gone``: the node stopped waiting because the table is
        gone (:attr:`PeerNode.gone`): the table says why, and that ``q`` quits."""
        self.stopped = True
        if gone is not None and not self.left:
            self.gone = gone
            self.tracker.say(gone.why)
        return [Quit()] if self.left else []

    def farewell(self) -> str:
        """How the table ended, in words, for a front end that outlives the node (the browser
        page, which then stops trying to reconnect): the person left, the table went on
        without them, or the game is over."""
        if self.left:
            return "you left the game: your nertz program has stopped"
        if self.gone is not None:
            return f"{_GONE_HINT[self.gone.reason]}: your nertz program has stopped"
        if self.stopped:
            return "the game is over: your nertz program has stopped"
        return "your nertz program has stopped: its terminal says why"

    def refused(self, why: str | MoveAnswer | IllegalMoveError) -> None:
        """The node refused a move: the status line says why, the core's answer in the
        player's words (:meth:`Tracker.move_words`), the engine's reason worded
        (:func:`~p2p_nertz.ui.keys.illegal_words`), or words."""
        if isinstance(why, MoveAnswer):
            self.keys = KeyState(line=Status.refusing(self.tracker.move_words(why), why))
        elif isinstance(why, IllegalMoveError) and why.reason is not None:
            words = illegal_words(why.reason, self.seat, symbols=self.symbols)
            self.keys = KeyState(line=Status.refusing(words))
        else:
            self.keys = KeyState(line=Status.refusing(f"illegal: {why}"))

    def abandon_refused(self, why: str | AbandonAnswer) -> None:
        """The core refused an abandon (the other has not been silent long enough, say): its
        answer, said in the player's words (:meth:`Tracker.abandon_words`), or words."""
        answer = why if isinstance(why, AbandonAnswer) else None
        if answer is not None:
            why = self.tracker.abandon_words(answer)
        self.keys = KeyState(line=Status.refusing(f"cannot abandon: {why}", answer))

    def abandoned(self) -> None:
        """The node took the abandon."""
        self.keys = replace(self.keys, line=Status("you abandoned the game"))

    def tick(self, now: float) -> list[Request]:
        """Time passed: between rounds, the next round's ready is released once the board
        is closed or its countdown ended (then the board closes by itself)."""
        board = self.tracker.board
        if self.stopped:
            return []
        if board is not None and board.result is None and board.round >= self._released:
            if self._board_round != board.round or self._countdown_end is None:
                self._board_round, self._countdown_end = board.round, now + self.between_rounds
            if now < self._countdown_end:
                return []
            self.tracker.close_board()
        elif self._board_round is None:
            return []
        self._released = self._board_round + 1
        self._board_round = self._countdown_end = None
        return [ReleaseReady(self._released)]

    # -- output --------------------------------------------------------------------------------
    def view(self, peer: Peer, now: float) -> TableView:
        """The table as it is now."""
        self._deal_seen(peer)
        self._board_seen()
        if peer.view is not None:
            self.keys = once_dealt(self.keys)
        self._wait_over(peer, now)
        view = self.tracker.view(
            peer, self.keys, final=self.stopped, abandon=peer.abandon_answer(now), now=now
        )
        if self.gone is not None:
            view = replace(view, gone=_GONE_HINT[self.gone.reason])
        board = view.board
        if self._countdown_end is not None and board is not None and board.result is None:
            view = replace(view, countdown=math.ceil(max(0.0, self._countdown_end - now)))
        return view

    def draw(self, peer: Peer | None, now: float) -> None:
        """Show the table on the front end (nothing before the node started)."""
        if peer is not None:
            self.front.show(self.view(peer, now))

    # -- inside --------------------------------------------------------------------------------
    def _deal_seen(self, peer: Peer) -> None:
        """A new round's table, met here first (drawn, or a key or a drop on it): the status
        line says the round is dealt (:meth:`Tracker.dealt`, the words of its announcement)
        instead of what it said in the last round ("played A♥ to the lake" over a fresh
        table, when the board closed by its countdown), and a pile picked then is let go. A
        question waiting for its answer ("leave the game?") stays. Not while the last round's
        board is up: the new table is seen once it closes."""
        table, number = peer.view, peer.tentative.round.number
        self.tracker.follow_deal(peer)
        if table is None or table.over or self.tracker.board is not None:
            return
        out = self.seat is not None and not table.active[self.seat]
        if number > self._up and cards_up(table, self.seat):
            self._up = number
            if self.keys.status in ("", NOT_UP, self.tracker.dealt(number, up=False)):
                self.keys = replace(self.keys, line=Status(self.tracker.dealt(number, out=out)))
        if number <= self._dealt:
            return
        self._dealt = number
        if self.keys.confirm is None:
            words = self.tracker.dealt(number, up=self._up >= number, out=out)
            self.keys = replace(self.keys, selected=None, line=Status(words))

    def _board_seen(self) -> None:
        """The round's board is up: a pile picked on the round's table is let go, with its
        words. "7♦ picked: l to the lake, 1-4 onto a work pile" stayed under the board of a
        round that was over (and hid "the game is over" at the game's end, a pick counting as
        a question asked), naming keys that no longer play."""
        if self.tracker.board is not None and self.keys.selected is not None:
            self.keys = replace(self.keys, selected=None, line=Status())

    def _wait_over(self, peer: Peer, now: float) -> None:
        """A refusal on the status line that says to wait for something that ends by itself
        (:mod:`~p2p_nertz.ui.waits`: a card in the air, the stocks turning over, a vote, a
        resumed peer's own moves coming back, an abandon's silence): once it has ended, the
        status line says so and what to do now, where the refusal's words stayed until the
        next key, no longer true (session 32's CI read "still getting your own moves back"
        for 60 s after they were; a move refused meanwhile is made again by the person).
        The refusal is the status line's own (:attr:`KeyState.refusal`): whatever replaced
        the line since (a key, the deal) took it away."""
        wait = status_wait(self.keys.line, self.seat, self.tracker.name)
        words = None if wait is None else wait(peer, now)
        if words is not None:
            self.keys = replace(self.keys, line=Status(words))

    def _context(self, peer: Peer, now: float) -> Context:
        answer = peer.abandon_answer(now)
        return Context(
            peer.view,
            self.seat,
            frozenset(peer.frozen_piles()),
            board=self.tracker.board is not None,
            symbols=self.symbols,
            abandon=self.tracker.may_abandon(answer),
            alone=self.tracker.alone(peer),
            up=self._shown(peer),
            held_back=self.seat is not None
            and own_held_back(peer.tentative, peer.final, self.seat) is not None,
            rotating=peer.player.rotation_pending(),
            answer=answer,
        )

    def _shown(self, peer: Peer) -> bool:
        """Whether the player's dealt cards of the round have shown (or there is no table
        to wait on): until then the table keys say so (:data:`NOT_UP`)."""
        table = peer.view
        return table is None or table.over or self._up >= peer.tentative.round.number

    def _actions(self, actions: Iterable[Action]) -> list[Request]:
        requests: list[Request] = []
        for action in actions:
            if isinstance(action, CloseBoard):
                self.tracker.close_board()
            elif isinstance(action, Leave):
                if self.stopped:
                    return [*requests, Quit()]
                requests += self._leave()
            else:
                requests.append(action)
        return requests

    def _leave(self) -> list[Request]:
        self.left = True
        self.tracker.say("leaving the game: waiting for the others to hold our leave…")
        return [Leave()]


#: The footer once the table is gone, by why (:attr:`TableView.gone`).
_GONE_HINT = {
    GoneReason.DROPPED: "you were voted out while away; the game went on without you",
    GoneReason.SILENT: "the others have left",
}

#: The work piles by their keys.
_WORK_KEYS = {str(n): Pile(n) for n in range(1, 7)}
