"""Turn what a peer reports into what the table shows: announcements, links, the board.

A :class:`Tracker` is fed every notice effect of a :class:`~p2p_nertz.protocol.peer.Peer`
(through :class:`~p2p_nertz.runtime.node.PeerNode`'s notice callback) and keeps what the screen
needs beyond the peer's own state: the announcements ("5♠ lost to Bob — back to waste", a
rotation, a drop, a rejoin, a Nerts call), which members are suspected, and the end-of-round
board. :meth:`Tracker.view` then builds a :class:`~p2p_nertz.ui.view.TableView` from the peer's
tentative state, its table the peer's held view (a card its share store opens drawn face up, as
the player's moves and the bot see it: docs/shuffle.md §10.14), and :meth:`Tracker.may_abandon`
says whether the player may end the game by an abandon now, from the core's answer. Pure: no
clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import Play, parse_body
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.local import AbandonAnswer, MoveAnswer
from p2p_nertz.protocol.peer import Effect, OutOfReach, Rejected, Suspected
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.unmet import DropPending, HeldBack, Owing, UnmetSince
from p2p_nertz.rules import (
    Card,
    Lake,
    MoveKind,
    Outcome,
    Pile,
    PlayerScore,
    RoundScore,
    RoundStatus,
    Table,
    Termination,
)
from p2p_nertz.ui.keys import KeyState
from p2p_nertz.ui.refusals import (
    NO_ABANDON,
    SPECTATOR,
    abandon_words,
    move_words,
    still_answering_words,
)
from p2p_nertz.ui.view import (
    PASS_GONE,
    Board,
    Gone,
    Link,
    Pace,
    TableView,
    card_text,
    cards_up,
    distinct_names,
    drop_words,
    held_words,
    is_stuck_words,
    open_move_words,
    owed_words,
    pass_gone_words,
    passed_for_words,
    pile_name,
    play_words,
    reach_words,
    silent_words,
    stale_pass_words,
    tie_words,
    unmet_words,
    waits_summary,
)

__all__ = [
    "GAME_OVER",
    "LAST_PLAYER",
    "MAX_MESSAGES",
    "NOBODY_ANSWERS",
    "NOTHING_TO_PLAY",
    "PASS_GONE",
    "PASSED_FOR_YOU",
    "PASSED_TURNS_FOR_YOU",
    "PASS_ROTATED",
    "WAITING_ON_YOU",
    "GameSource",
    "Tracker",
    "status_line",
]

PASS_ROTATED = "the stocks rotated (everyone was stuck): look for a card that plays now"
"""The status line once a rotation ended our pass (:attr:`Tracker.rotated`): "stuck again?"
there had a newcomer pass again before looking at the new top card."""

WAITING_ON_YOU = "everyone else is stuck: play a card, or say stuck too and the stocks rotate"
"""The status line while every other player has passed and we have not: the round waits for
us (a newcomer who never passed sat for minutes under "round 1 is dealt — go!" while a bot
waited; RULES.md: everyone stuck)."""

NOBODY_ANSWERS = "nobody is answering: is your network down? The others wait for you a while"
"""Said when every other member still playing has gone silent: the one network down is more
likely ours than each of theirs (:meth:`Tracker._silent`)."""

LAST_PLAYER = "nobody else is left at the table: q leaves the game"
"""Said once the last other member has left or been dropped (:meth:`Tracker.alone`)."""

GAME_OVER = "the game is over"
"""The status line once the game is over (:func:`status_line`)."""

PASSED_TURNS_FOR_YOU = "your turns are passed for you (you did not move): p to take them back"
"""The status line in turn-based play while our turns are passed for (RULES.md: turn-based
play): the table skips them until we pass."""

PASSED_FOR_YOU = (
    "passed for you (you played nothing, everyone else stuck): play a card to take it back"
)
"""The status line while a pass made on our behalf stands (RULES.md: a player who plays
nothing): the stocks rotate without us until we play a card."""

NOTHING_TO_PLAY = "no card can move and the stock is empty: p passes (you are stuck)"
"""The status line that offers the pass (``Table.has_card_move``)."""

MAX_MESSAGES = 50
"""Announcements kept (the screen shows the newest that fit)."""

_PLAY_KINDS = frozenset({Kind.MOVE, Kind.CLAIM, Kind.STUCK, Kind.NERTS})
_LOOKBACK = 16  # events searched back in a feed for its author's last action
_PACED = frozenset({MoveKind.TURN, MoveKind.CARD, MoveKind.SLIDE, MoveKind.ROTATE})
"""The moves a pace counts (:meth:`Tracker._pace`)."""


class GameSource(Protocol):
    """What a view is built from: a :class:`~p2p_nertz.protocol.peer.Peer`, or a spectator's
    :class:`~p2p_nertz.protocol.spectator.Spectator`."""

    @property
    def spec(self) -> GameSpec:
        """The game."""

    @property
    def final(self) -> st.GameState:
        """The final fold."""

    @property
    def tentative(self) -> st.GameState:
        """The fold of every event held."""

    @property
    def view(self) -> Table | None:
        """The table as it is drawn: a peer's held view (its tentative table with the cards
        its share store opens face up, docs/shuffle.md §10.14), a spectator's tentative
        table."""

    @property
    def stable(self) -> int:
        """Events up to this Lamport time are final."""

    def events(self, seat: int) -> list[Message]:
        """The delivered events of one feed."""

    def frozen_piles(self) -> set[Pile]:
        """The local player's piles frozen by a claim in the air (none for a spectator)."""

    def held_back(self) -> tuple[HeldBack, ...]:
        """The members whose events wait here for events not held
        (:func:`~p2p_nertz.protocol.unmet.held_back`)."""

    def drops_waiting(self) -> tuple[DropPending, ...]:
        """The drops decided and not final, each with what holds it back (a peer's
        :meth:`~p2p_nertz.protocol.peer.Peer.drops_waiting`, a spectator's own)."""

    def owing(self, now: float) -> tuple[Owing, ...]:
        """The members heard that owe what they alone can give (a peer's
        :meth:`~p2p_nertz.protocol.peer.Peer.owing`; a spectator's: its phase's event)."""


@dataclass
class Tracker:
    """Announcements and link states of one table (see the module docstring).

    Attributes:
        names: each seat's name.
        seat: the local seat (``None`` for a spectator).
        symbols: suit symbols in announcements (else letters).
        messages: announcements, oldest first.
        suspected: seats currently suspected.
        board: the latest end-of-round board, until the player closes it.
        rejected: messages refused so far (counted, not announced one by one).
        turning: the round whose deal said the player's cards are turning up, until they
            show (:meth:`follow_deal`); ``told``: it has said they are turning up.
    """

    names: tuple[str, ...]
    seat: int | None = None
    symbols: bool = True
    messages: list[str] = field(default_factory=list)
    suspected: set[int] = field(default_factory=set)
    board: Board | None = None
    rejected: int = 0
    changes: int = 0
    started: dict[int, float] = field(default_factory=dict)
    stale_names: list[str] = field(default_factory=list)
    stale_count: int = 0
    stale_line: str | None = None
    rotated: bool = False
    ended: dict[int, float] = field(default_factory=dict)
    back: set[int] = field(default_factory=set)
    turning: int | None = None
    told: bool = False
    followed: set[int] = field(default_factory=set)
    """A spectator's: the seats whose node pushes the game to it (``nertz watch``)."""
    unmet: UnmetSince = field(default_factory=UnmetSince)
    """Since when each vote held stands without a majority (:attr:`TableView.waits`)."""

    def __post_init__(self) -> None:
        self.names = distinct_names(self.names, self.seat)

    def name(self, seat: int | None) -> str:
        """A seat's name for announcements (``"you"`` for the local seat)."""
        if seat is None:
            return "someone"
        if seat == self.seat:
            return "you"
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def say(self, text: str) -> None:
        """Add an announcement (a repeat of the latest one counts it instead: ``(×3)``)."""
        if self.messages and self.messages[-1].split(" (×")[0] == text:
            head, _, count = self.messages[-1].partition(" (×")
            times = int(count.rstrip(")") or 1) + 1
            self.messages[-1] = f"{head} (×{times})"
            self.changes += 1
            return
        self.messages.append(text)
        del self.messages[:-MAX_MESSAGES]
        self.changes += 1

    def dealt(self, number: int, *, up: bool = True, out: bool = False) -> str:
        """The words of round ``number``'s deal: its announcement, and the status line it
        leaves (:meth:`~p2p_nertz.ui.controller.TableController.view`). While the last round's
        board is still up before a player, the round waits for them to close it
        (docs/pace.md): "go!" there, under "next round in 30 s", had them look for a table
        that was not theirs yet. ``up``: the player's own cards show (:func:`cards_up`). A
        table may open before they do, which a busy machine may take seconds over: in a
        commit deal the tentative fold opens play before the deal is final and the player's
        ``ready`` folded (docs/protocol.md §8.3), in a shuffle deal each card turns up once
        the others' shares arrive (docs/shuffle.md §10.14). "go!" over ``??`` and stock 0
        had them press keys the core refused (:meth:`follow_deal` says "go!" once they are
        up). ``out``: the player sits the round out (dropped, or out of a tiebreak): a
        resumed player, back from the next round, read "go!" over keys that answered "you
        are not playing this round". A spectator read "go!" too."""
        if self._board_first():
            return f"round {number} is dealt — it starts once everyone has closed the board (Enter)"
        if self.seat is None:  # (a spectator: nobody to send off)
            return f"round {number} is dealt: play is on"
        if out:
            return f"round {number} is dealt without you: you sit this one out"
        if not up:
            return f"round {number} is dealt: turning your cards up (waiting for the others)"
        return f"round {number} is dealt — go!"

    def _dealt(self, number: int, final: st.GameState | None) -> None:
        """Round ``number``'s play opened: "go!" if the player's cards show in the final fold
        that reported it; else :meth:`follow_deal` says whether they show in the held view,
        which the share store may open sooner (the board's words meanwhile, if it is up)."""
        up = final is None or final.round.number != number or cards_up(final.round.table, self.seat)
        table = final.round.table if final is not None and final.round.number == number else None
        out = table is not None and self.seat is not None and not table.active[self.seat]
        self.turning, self.told = (None, False) if up else (number, False)
        if up or self._board_first():
            self.say(self.dealt(number, up=up, out=out))

    def _board_first(self) -> bool:
        """The last round's board is still up before the player: a deal waits for its close."""
        return self.board is not None and self.seat is not None and self.board.result is None

    def follow_deal(self, source: GameSource) -> None:
        """Once the board is closed, say whether the player's cards of the round whose deal
        is waiting for them (:attr:`turning`) show in ``source``'s view: "go!" once they do,
        else (once) that they are turning up (before each view, and before a key is taken).
        Not while the player's own ``ready`` is held (``nertz play --web``'s first round waits
        for the page: the words said "waiting for the others" of a wait that was theirs)."""
        if self.turning is None or self.board is not None:
            return
        view = source.view
        out = view is not None and self.seat is not None and not view.active[self.seat]
        if source.tentative.round.number != self.turning:
            self.turning = None  # (that round is gone: its own deal spoke for the next)
        elif view is not None and cards_up(view, self.seat):
            self.say(self.dealt(self.turning, out=out))
            self.turning = None
        elif not self.told and (out or self.seat in source.tentative.round.ready):
            self.say(self.dealt(self.turning, up=False, out=out))
            self.told = True

    def card(self, card: Card) -> str:
        return card_text(card, symbols=self.symbols)

    # -- input -----------------------------------------------------------------------------
    def take(
        self, effects: Iterable[Effect], final: st.GameState | None = None, now: float | None = None
    ) -> None:
        """Take notice effects (others are ignored); ``final`` (the final fold that reported
        them) gives the end-of-round board its lake; ``now`` (the caller's clock, in seconds)
        times the rounds for the player's pace on the board."""
        for effect in effects:
            self.notice(effect, final, now)
        if final is not None:
            self.follow_rejoins(final)

    def notice(
        self, effect: Effect, final: st.GameState | None = None, now: float | None = None
    ) -> None:
        """Take one effect (see :meth:`take`)."""
        if isinstance(effect, st.ClaimDecided):
            self._claim(effect)
        elif isinstance(effect, st.Rotated):
            self.say("everyone was stuck: every stock rotated (top card to the bottom)")
            self.rotated = True
        elif isinstance(effect, st.PassedFor):
            turns = final is not None and final.rules.turn_based
            self.say(passed_for_words(self.name(effect.seat), self.name(effect.by), turns=turns))
        elif isinstance(effect, st.PassesStale):
            if self.seat in effect.seats:
                self.rotated = False
                self._stale(self.name(effect.by))
        elif isinstance(effect, st.RoundEnded):
            self._round_ended(effect, now)
        elif isinstance(effect, st.RoundScored):
            lake = _round_lake(final, effect.round) if final is not None else Lake()
            pace = self._pace(final, effect.round, effect.score)
            self.board = Board(effect.round, effect.score, effect.totals, lake, pace=pace)
            self.changes += 1
        elif isinstance(effect, st.GameEnded):
            self._game_ended(effect, final)
        elif isinstance(effect, st.MemberDropped):
            self._dropped(effect, final)
        elif isinstance(effect, st.MemberRejoined):
            # A fresh start: whatever was heard of it before its drop no longer stands.
            self.suspected.discard(effect.seat)
            if effect.seat in self.back:  # (its return was said: now it plays)
                self.back.discard(effect.seat)
                verb = "play" if effect.seat == self.seat else "plays"
                self.say(f"{self.name(effect.seat)} {verb} again from round {effect.round}")
            else:
                verb = "are" if effect.seat == self.seat else "is"
                self.say(f"{self.name(effect.seat)} {verb} back from round {effect.round}")
        elif isinstance(effect, st.PhaseChanged):
            if effect.phase is st.Phase.PLAY and now is not None:
                self.started.setdefault(effect.round, now)
            if effect.phase is st.Phase.PLAY:
                self.stale_names, self.stale_count, self.stale_line = [], 0, None
                self.rotated = False
                self._dealt(effect.round, final)
        elif isinstance(effect, Suspected):
            if effect.suspected:
                self._silent(effect.seat, final)
            elif effect.seat in self.suspected:
                self.suspected.discard(effect.seat)
                self.say(f"{self.name(effect.seat)} is back")
        elif isinstance(effect, OutOfReach):
            for line in reach_words(effect, self.name):
                self.say(line)
        elif isinstance(effect, st.Refused):
            v = effect.violation
            self.say(f"refused: {self.name(v.seat)}'s event {v.seq}: {v.reason}")
        elif isinstance(effect, Rejected):
            self.rejected += 1

    def follow_rejoins(self, final: st.GameState) -> None:
        """Say once that a dropped member came back (resumed, it asked to rejoin): it sits out
        the rest of the round and plays again from the next (DESIGN.md §6). Its request is no
        notice of the fold, so the table asks the fold (after a batch of notices, and before
        each view): a newcomer saw "bot1 was dropped" and then nothing for the rest of the
        round while bot1 was back."""
        for seat in sorted(final.rejoining):
            if seat in self.back or seat not in final.dropped or seat in final.left:
                continue
            self.back.add(seat)
            number = final.round.number + 1
            verb = "are" if seat == self.seat else "is"
            self.say(f"{self.name(seat)} {verb} back from the next round (round {number})")

    def _stale(self, name: str) -> None:
        """A lake card made our pass stale: one line for all of them this round, moved to
        the newest place, its players newest first, with a count (:func:`stale_pass_words`):
        line after line alternating between the bots read as news each time."""
        if self.stale_line is not None and self.stale_line in self.messages:
            last = len(self.messages) - 1 - self.messages[::-1].index(self.stale_line)
            del self.messages[last]
        self.stale_names = [name, *(n for n in self.stale_names if n != name)]
        self.stale_count += 1
        self.stale_line = stale_pass_words(self.stale_names, self.stale_count)
        self.say(self.stale_line)

    def _silent(self, seat: int, final: st.GameState | None) -> None:
        """``seat`` went silent: what happened and what it does to the game; and when every
        other member still playing has, the likelier cause (:data:`NOBODY_ANSWERS`)."""
        self.suspected.add(seat)
        gone = set() if final is None else set(final.dropped) | set(final.left)
        others = [s for s in range(len(self.names)) if s != self.seat and s not in gone]
        for line in silent_words(self.name(seat), others=len(others)):
            self.say(line)
        if self.seat is not None and len(others) > 1 and self.suspected.issuperset(others):
            self.say(NOBODY_ANSWERS)

    def _round_ended(self, effect: st.RoundEnded, now: float | None) -> None:
        if now is not None:
            self.ended.setdefault(effect.round, now)
        if effect.status is RoundStatus.NERTS:
            who = ", ".join(self.name(c) for c in effect.callers)
            self.say(f"Nerts! called by {who} — the round is over")
        else:
            self.say("the round is blocked: nobody can play — it is over")

    def _game_ended(self, effect: st.GameEnded, final: st.GameState | None) -> None:
        """The board gets the game's result (a void round's board if it was abandoned)."""
        abandoned = effect.result.termination is Termination.ABANDONED
        board = self.board
        if final is not None and abandoned:
            # The round in progress is void: the board shows it, with the totals of the
            # rounds counted (an abandon between rounds shows the last one scored).
            board = _void_board(final) or _last_board(final)
        elif board is None and final is not None:
            board = _last_board(final)
        if board is not None:
            self.board = replace(board, totals=effect.result.totals, result=effect.result)
            self.changes += 1
        leaver = None if final is None else final.left_alone
        if final is not None and leaver is not None:
            # The leave left one member in: the game is over (§9.3), said with who left and
            # why the leaver does not win (rules.md: leaving the game).
            self.say(
                f"{self.name(leaver)} left the game — the game is over: {self._won(final)} "
                "(a player who leaves forfeits the game)"
            )
        elif final is not None and final.unopposed:
            # One tied team was left to play the extra round: the tie is decided (§8.9), the
            # round void, said with why the others lost it (rules.md: the game).
            self.say(
                f"{self._who_won(final)} the tie: the other tied players are out of the extra "
                "round (voted out, or forfeiting it) — the game is over"
            )
        elif abandoned:
            self.say(
                "the game was abandoned: the round in progress is void, the totals of the "
                "rounds scored decide"
            )
        else:
            self.say("the game is over")

    def _won(self, final: st.GameState) -> str:
        """``Ann wins with 12 on the rounds scored``: a game ended early, in words (the
        winners' total, which a leaver's may pass: it forfeits the game)."""
        result = final.game.result
        assert result is not None
        total = result.totals[result.winners[0]]
        return f"{self._who_won(final)} with {total} on the rounds scored"

    def _who_won(self, final: st.GameState) -> str:
        """``Ann wins``, ``you win``, ``team 1 and team 2 win``: the game's winners."""
        result = final.game.result
        assert result is not None
        who = [f"team {w + 1}" if final.rules.pairs else self.name(w) for w in result.winners]
        verb = "win" if len(who) > 1 or who == ["you"] else "wins"
        return f"{' and '.join(who)} {verb}"

    def _dropped(self, effect: st.MemberDropped, final: st.GameState | None) -> None:
        self.suspected.discard(effect.seat)
        if effect.left and final is not None and final.left_alone == effect.seat:
            return  # (the game's end says it: "Bea left the game — the game is over")
        alone = final is not None and effect.seat != self.seat and self._alone(final)
        if effect.left:
            how = "left the game"
        else:
            how = f"{self._was(effect.seat)} dropped (silent too long)"
            over = final is not None and final.phase is st.Phase.OVER
            if effect.seat != self.seat and not alone and not over:
                how += ": the game goes on without them"
        self.say(f"{self.name(effect.seat)} {how}")
        if alone:
            self.say(LAST_PLAYER)

    def _pace(self, final: st.GameState | None, number: int, score: RoundScore) -> Pace | None:
        """The local player's pace over round ``number``: its moves in the fold's log of the
        round (signed events), its cards kept in the lake (the score), over the round's time
        on the caller's clock (``None`` when not known)."""
        start, end = self.started.get(number), self.ended.get(number)
        if self.seat is None or final is None or start is None or end is None:
            return None
        rs = next((r for r in (*final.past_rounds, final.round) if r.number == number), None)
        if rs is None:
            return None
        # Passes and calls are not counted: a person who is stuck may press p again and
        # again while waiting, which says nothing of their pace.
        moves = sum(
            1
            for entry in rs.log
            if entry is not None and entry[0] == self.seat and entry[1].kind in _PACED
        )
        cards = next((p.lake for p in score.players if p.seat == self.seat), 0)
        return Pace(moves=moves, cards=cards, seconds=max(0.0, end - start))

    def alone(self, peer: GameSource) -> bool:
        """Whether every other member has left or been dropped, in a game not over: the
        table then says so and that ``q`` leaves (issue 15: no silent freeze)."""
        return self._alone(peer.final)

    def _alone(self, final: st.GameState) -> bool:
        if self.seat is None or final.phase is st.Phase.OVER or self.seat in final.dropped:
            return False
        gone = set(final.dropped) | set(final.left)
        return all(seat in gone for seat in range(len(self.names)) if seat != self.seat)

    def _was(self, seat: int) -> str:
        return "were" if seat == self.seat else "was"

    def _claim(self, notice: st.ClaimDecided) -> None:
        res = notice.resolution
        claim = res.claim
        card = self.card(claim.card)
        if claim.seat == self.seat:
            if res.outcome is Outcome.LOST:
                where = "back to " + ("" if claim.source is Pile.WASTE else "the ")
                where += pile_name(claim.source)
                if res.winner is not None:
                    self.say(f"{card} lost to {self.name(res.winner)} — {where}")
                else:
                    self.say(f"{card} lost the race — {where}")
            elif res.outcome is Outcome.TIED:
                self.say(tie_words(f"your {card}"))
        elif res.outcome is Outcome.TIED:
            self.say(tie_words(f"{self.name(claim.seat)}'s {card}"))

    def close_board(self) -> None:
        """The player closed the end-of-round board."""
        self.board = None
        self.changes += 1

    # -- output ----------------------------------------------------------------------------
    def links(self, peer: GameSource) -> tuple[Link, ...]:
        """Each seat's link state as the peer sees it."""
        final = peer.final
        links = []
        for seat in range(peer.spec.seats):
            if seat in final.left:
                links.append(Link.LEFT)
            elif seat in final.dropped:
                links.append(Link.REJOINING if seat in final.rejoining else Link.DROPPED)
            elif seat in self.suspected:
                links.append(Link.SUSPECTED)
            else:
                links.append(Link.OK)
        return tuple(links)

    def may_abandon(self, answer: AbandonAnswer | None) -> Gone | str:
        """Whether the player may end the game by an abandon (DESIGN.md §6): the one other
        member left, once it has gone (suspected: silent past the suspicion timeout), with how
        long the core still wants it gone; else why not, in words.

        ``answer`` is the core's own (:meth:`~p2p_nertz.protocol.peer.Peer.abandon_answer`
        now; ``None``: there is no core to ask, as for a spectator): who the other member is,
        how long it has been gone and how much longer the core waits are its. The table adds
        only when the key is on offer: from the suspicion on (or once the core takes an
        abandon, a member that talks while the game waits for it), with :attr:`Gone.wait`
        saying how long is left until the core takes it.
        """
        if self.seat is None:
            return SPECTATOR
        if answer is None:
            return NO_ABANDON
        other = answer.partner
        if other is None:
            assert answer.why is not None  # (no partner: the core says why)
            return self.abandon_words(answer)
        if other not in self.suspected and answer.wait > 0:
            # (Heard, but holding the game back past the core's wait counts as gone.)
            return still_answering_words(self.name(other))
        back = tuple(self.name(s) for s in answer.back if s != other)
        return Gone(other, self.name(other), answer.silent, answer.wait, back)

    def move_words(self, answer: MoveAnswer) -> str:
        """Why the core refuses a move now, in the player's words
        (:func:`~p2p_nertz.ui.refusals.move_words`)."""
        return move_words(answer, self.name, self.card)

    def abandon_words(self, answer: AbandonAnswer) -> str:
        """Why the core refuses an abandon, in the player's words (:mod:`~p2p_nertz.ui.refusals`:
        the core speaks of members, a person of players)."""
        return abandon_words(answer, self.name)

    def view(
        self,
        peer: GameSource,
        keys: KeyState | None = None,
        *,
        final: bool = False,
        abandon: AbandonAnswer | None = None,
        now: float | None = None,
    ) -> TableView:
        """The view of the peer's table now, with the keyboard's state; ``final``: the node
        has stopped (the game is over, or we left); ``abandon``: the core's answer, as for
        :meth:`may_abandon`; ``now``: the time, for the votes waiting on a majority (none
        told without it)."""
        keys = keys or KeyState()
        self.follow_rejoins(peer.final)
        self.follow_deal(peer)
        tentative = peer.tentative
        table = peer.view  # (the held view: what the player plays on, as the core checks it)
        spec = peer.spec
        last = tuple(self._last_action(peer, seat) for seat in range(spec.seats))
        board = self.board
        offer = None if final else self.may_abandon(abandon)
        unfollowed = unfollowed_words(tentative, self.followed, self.names)
        unmet = () if now is None or final else self.unmet.standing(tentative, now)
        held = () if now is None or final else self.unmet.held(peer.held_back(), now)
        owed = () if now is None or final else self.unmet.owed(peer.owing(now), now)
        drops = () if now is None or final else self.unmet.pending(peer.drops_waiting(), now)
        if unfollowed is not None and not keys.status:
            status = unfollowed[1]
        else:
            over = tentative.phase is st.Phase.OVER or (
                board is not None and board.result is not None
            )
            status = status_line(
                table,
                self.seat,
                keys.status,
                refused=keys.line.refused,
                asking=keys.confirm is not None or keys.selected is not None,
                rotated=self.rotated,
                symbols=self.symbols,
                over=over,
            )
        return TableView(
            table=table,
            seat=self.seat,
            names=self.names,
            rules=spec.rules,
            round=tentative.round.number or 1,
            phase=tentative.phase.value,
            totals=tentative.game.totals,
            stable=peer.stable,
            frozen=frozenset(peer.frozen_piles()) if self.seat is not None else frozenset(),
            links=self.links(peer),
            last=last,
            messages=tuple(self.messages),
            board=board,
            status=status,
            refused=keys.line.refused and status == keys.status,
            selected=keys.selected,
            command=keys.command,
            help=keys.help,
            help_page=keys.help_page,
            final=final,
            abandon=offer if isinstance(offer, Gone) else None,
            provisional=peer.final.provisional,
            alone=not final and self.alone(peer),
            unfollowed=unfollowed[0] if unfollowed is not None else None,
            waits=unmet_words(unmet, self.name, self.seat)
            + held_words(held, self.name)
            + owed_words(owed, self.name)
            + drop_words(drops, self.name),
            waits_line=waits_summary(unmet, held, self.name, owed=owed, drops=drops),
        )

    def _last_action(self, peer: GameSource, seat: int) -> str:
        events = peer.events(seat)
        for message in reversed(events[-_LOOKBACK:]):
            if message.kind in _PLAY_KINDS:
                body = parse_body(message.kind, message.body, peer.spec.seats)
                if isinstance(body, Play):
                    false = message.kind is Kind.NERTS and _false_call(peer, seat, body.round)
                    return play_words(body.move, body.card, symbols=self.symbols, false_call=false)
        return ""


def unfollowed_words(
    tentative: st.GameState, followed: Iterable[int], names: tuple[str, ...]
) -> tuple[str, str] | None:
    """A spectator's words once every member that pushed the game to it has gone (left, or
    voted out) in a game that goes on: the header's few words and the status line's (a row
    of 80 columns for three short names), which say whom it followed, that the game goes on
    unseen here, and that ``q`` quits. ``None``
    while one of them is still in, before anyone pushed, or once the game is over (its end
    says so). A spectator whose only pushing member left read "playing" over a table that
    never moved again (session 32).
    """
    seats = sorted(set(followed))
    gone = set(tentative.dropped) | set(tentative.left)
    if not seats or tentative.phase is st.Phase.OVER or not all(s in gone for s in seats):
        return None
    who = ", ".join(names[s] for s in seats)
    how = "left" if all(s in tentative.left for s in seats) else "left or were voted out"
    if len(seats) == 1:
        how = "left" if seats[0] in tentative.left else "was voted out"
    still = [names[s] for s in range(len(names)) if s not in gone]
    playing = f"{', '.join(still)} play on" if still else "the game goes on"
    return (
        f"{who} {how}: not followed here",
        f"{who} {how}; no one else pushes the game here: {playing} unseen · q quits",
    )


def _false_call(peer: GameSource, seat: int, number: int) -> bool:
    """Whether ``seat``'s Nerts call in round ``number`` was false: the round is this one and
    its table does not count the seat among its callers (a false call costs, play goes on)."""
    rs = peer.tentative.round
    table = rs.table
    return rs.number == number and table is not None and seat not in table.callers


def status_line(
    table: Table | None,
    seat: int | None,
    status: str,
    *,
    refused: bool = False,
    asking: bool = False,
    rotated: bool = False,
    symbols: bool = True,
    over: bool = False,
) -> str:
    """The status line kept true for ``seat`` at ``table``: "stuck: waiting" only while the
    pass stands; with nothing else to say and nothing left to play, it offers the pass; with
    every other player stuck, it says the round waits for us, unless it is answering a key
    (``refused``: it says why something was not done, :attr:`~p2p_nertz.ui.keys.Status.refused`;
    ``asking``: a question waits for its answer key, or a picked card for where it goes; as
    the keys made it, never read back from the words). ``over``: the game is over, and the
    line says so, as the board and the header do, unless it asks a question (a newcomer read
    the deal's "round 1 is dealt — go!" under the board's "game over — winner: …").

    >>> from p2p_nertz.rules import Rules, Table, Tableau
    >>> t = Tableau.parse("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -")
    >>> status_line(Table.from_tableaux(Rules(), [t, t]), 0, "") == NOTHING_TO_PLAY
    True
    """
    if over and not asking:
        return GAME_OVER
    if seat is None or table is None or table.over or not table.active[seat]:
        return status
    if not cards_up(table, seat):  # (nothing can move yet: the deal says why)
        return status
    if is_stuck_words(status) and not table.stuck[seat]:
        # The messages say which (the notices come from the final fold, after this table);
        # ``rotated``: the last to end our pass was a rotation, as far as they have said.
        if rotated:
            return PASS_ROTATED
        return pass_gone_words(open_move_words(table, seat, symbols=symbols))
    tableau = table.tableaux[seat]
    if (
        not status
        and not table.stuck[seat]
        and not (tableau.stock or tableau.waste)
        and not table.has_card_move(seat)
    ):
        return NOTHING_TO_PLAY
    keep = refused or asking  # (an answer to a key: the person reads it first)
    if seat in table.passed_for and not keep:
        return PASSED_TURNS_FOR_YOU if table.rules.turn_based else PASSED_FOR_YOU
    others = [s for s in range(table.seats) if s != seat and table.active[s]]
    if others and not keep and not table.stuck[seat] and all(table.stuck[s] for s in others):
        return WAITING_ON_YOU
    return status


def _last_board(final: st.GameState) -> Board | None:
    """The board of the last round scored, as a final fold holds it (``None``: none was)."""
    if not final.scores or not final.history:
        return None
    number = final.history[-1][0]
    return Board(number, final.scores[-1], final.game.totals, _round_lake(final, number))


def _void_board(final: st.GameState) -> Board | None:
    """The board of the round an abandon voided (``None``: it ended between rounds)."""
    rs = final.round
    table = rs.table
    if table is None or any(number == rs.number for number, _, _ in final.history):
        return None
    standing = table.score()
    void = RoundScore(
        tuple(
            PlayerScore(p.seat, 0, 0, p.nerts_card_penalty, played=p.seat in rs.playing)
            for p in standing.players
        ),
        standing.teams,
        RoundStatus.PLAYING,
        (),
    )
    return Board(rs.number, void, final.game.totals, table.lake)


def _round_lake(final: st.GameState, number: int) -> Lake:
    """The final lake of round ``number`` as a final fold holds it."""
    for rs in (*final.past_rounds, final.round):
        if rs.number == number and rs.table is not None:
            table: Table = rs.table
            return table.lake
    return Lake()
