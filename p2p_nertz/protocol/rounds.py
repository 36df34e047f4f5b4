"""One round of the game's fold: its fair deal, its play, and its replay against the decks.

Theory of operation
-------------------
:class:`RoundState` owns what the fold knows of the round being played (DESIGN.md §5): the
fair deal (its commits, nonces and ``R`` are a :class:`~p2p_nertz.protocol.fair_deal.FairDeal`'s,
the secrets revealed the round's), the table with the other seats' hidden cards
followed as :data:`~p2p_nertz.rules.cards.HIDDEN` and filled in as moves reveal them, the log of
the round's play, and the score once every secret is in. Its methods take one event's worth of
the round each (a commit, a nonce, a deal shown, a play, a secret) and either change the round
or raise :class:`~p2p_nertz.protocol.fold_values.Refuse`; the phase machine around them, which
says *when* each may come, is :class:`~p2p_nertz.protocol.state.GameState`'s.

When the last secret is in, every seat's play is replayed against the deck its secret gives
(:func:`replay_seat`): every card a move showed, every card a claim took and every move must be
the deck's (:meth:`RoundState.score`). The audit and the simulator replay every finished round
the same way, with conservation of cards too (:func:`replay_round`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

from p2p_nertz.deck.check import Fault, FaultKind
from p2p_nertz.deck.group import scalar_bytes
from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.wire import DeckOpen, DeckShares
from p2p_nertz.errors import IllegalMoveError, chained
from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.fair_deal import (
    FairDeal,
    deck_seed,
    local_nonce,
    local_secret,
    nonce_hash,
    round_randomness,
    secret_hash,
)
from p2p_nertz.protocol.fold_values import (
    ClaimDecided,
    Event,
    Notice,
    PassedFor,
    PassesStale,
    Reason,
    RefusalCode,
    Refuse,
    Rotated,
    RoundEnded,
)
from p2p_nertz.protocol.roster import Roster, voted_past_cut
from p2p_nertz.protocol.shuffle import DeckRound, Opened
from p2p_nertz.rules import (
    NERTS_PILE_SIZE,
    Card,
    FoundationId,
    Move,
    MoveKind,
    Outcome,
    Resolution,
    RoundScore,
    RoundStatus,
    Rules,
    Table,
    Tableau,
    new_deck,
)
from p2p_nertz.rules.cards import HIDDEN, is_unknown, sealed_position
from p2p_nertz.rules.lake import OUTCOME_TIED, Claim
from p2p_nertz.rules.moves import MOVE_CALL, MOVE_PASS, MOVE_TURN
from p2p_nertz.rules.table import STATUS_NERTS
from p2p_nertz.rules.table import Play as TablePlay

__all__ = [
    "DeckProblem",
    "RoundState",
    "deck_seed",
    "local_nonce",
    "local_secret",
    "nonce_hash",
    "replay_round",
    "replay_seat",
    "round_randomness",
    "seat_deck",
    "secret_hash",
]

_C = RefusalCode  # (short: every refusal in this module names one)


@dataclass(slots=True)
class RoundState:
    """The round being played, as the fold knows it (module docstring): immutable values but
    for the dicts and the play log, which :meth:`copy` copies.

    Its methods take one event's worth of the round (``fair.take_commit``, ``take_nonce``,
    ``take_deal``, :meth:`play`, ``take_secret``), once the game fold has checked that the
    phase is the event's, and raise :class:`~p2p_nertz.protocol.fold_values.Refuse` for an
    event wrong here; :meth:`deal` and :meth:`score` are the round's own steps when every
    nonce, then every secret, is in.
    """

    number: int
    seats: frozenset[int]
    #: the commits, nonces and ``R`` of a commit game's deal
    fair: FairDeal = field(default_factory=FairDeal)
    ready: frozenset[int] = frozenset()
    table: Table | None = None
    # The round's play, for the replay against the decks: (seat, move, card, reveals, lost)
    # per play event, and None for an everyone-stuck rotation. A list, appended to by every
    # move (a tuple grown by one for each would copy the whole round's play every time).
    log: list[tuple[int, Move, Card | None, tuple[Card, ...], bool] | None] = field(
        default_factory=list
    )
    seen: dict[int, frozenset[Card]] = field(default_factory=dict)
    top_events: dict[FoundationId, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    secrets: dict[int, bytes] = field(default_factory=dict)
    dealt: dict[int, tuple[Card, ...]] = field(default_factory=dict)
    forfeit: frozenset[int] = frozenset()
    #: the seats dealt in (a seat dropped or gone after its deal forfeits the round, §8.9)
    playing: frozenset[int] = frozenset()
    #: seat -> seq of the pass that made it stuck (replaced, never changed in place)
    passes: dict[int, int] = field(default_factory=dict)
    #: seat -> (seat, seq) of the pass on its behalf that stands (replaced, as ``passes``)
    passed_by: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: seat -> seq of its latest play event that counted this round (replaced, as ``passes``)
    latest: dict[int, int] = field(default_factory=dict)
    #: (seat, seq) of the events that made the latest everyone-stuck rotation: every stuck
    #: seat's pass (or the pass on its behalf), and the drop that left only stuck seats, if
    #: that set it off
    rotation_seen: tuple[tuple[int, int], ...] | None = None
    expected: RoundScore | None = None
    digest: bytes | None = None
    results: frozenset[int] = frozenset()
    #: (seat, seq) of every result folded, in fold order: an abandon reads which rounds its
    #: author had seen scored from its frontier (§9.3)
    result_seqs: tuple[tuple[int, int], ...] = ()
    #: a shuffle game's deal (docs/shuffle.md §10): keys, stages, shares, secrets; ``None``
    #: in a commit game
    deck: DeckRound | None = None
    #: seats that lost a move to a drop's cut (:meth:`_lost_to_cut`): their later moves
    #: built on it
    astray: frozenset[int] = frozenset()

    def copy(self) -> RoundState:
        """An independent copy (the fold's copy; the peer copies folds often: built from the
        fields in one call, which is several times quicker than :func:`copy.copy`)."""
        new = RoundState(*_FIELDS(self))
        new.fair = self.fair.copy()
        new.log = list(self.log)
        new.seen = dict(self.seen)
        new.top_events = dict(self.top_events)
        new.secrets = dict(self.secrets)
        new.dealt = dict(self.dealt)
        if self.deck is not None:
            new.deck = self.deck.copy()
        return new

    # -- the fair deal (DESIGN.md §5.2): the caller has checked the phase --------------------
    def take_nonce(self, seat: int, nonce: bytes) -> None:
        """``seat`` reveals its nonce; one that does not match its commit forfeits the round."""
        if not self.fair.take_nonce(seat, nonce):
            self.forfeit |= {seat}
            raise Refuse(
                _C.NONCE_MISMATCH,
                "the nonce does not match its commit: the seat forfeits the round",
            )

    def take_secret(self, seat: int, secret: bytes) -> None:
        """``seat`` reveals its secret once play is over; one that does not match its commit
        (a stacked deck) forfeits the round."""
        if seat in self.secrets:
            raise Refuse(_C.REPEATED, "a second secret")
        if not self.fair.secret_matches(seat, secret):
            self.forfeit |= {seat}
            raise Refuse(
                _C.SECRET_MISMATCH,
                "the secret does not match its commit (a stacked deck): the seat forfeits",
            )
        self.secrets[seat] = secret

    def take_deck_secret(self, seat: int, message: DeckOpen) -> None:
        """``seat`` reveals its round secret once play is over (a shuffle game); one that is
        not its key's forfeits the round (docs/shuffle.md §7.4), as a stacked deck does."""
        assert self.deck is not None
        try:
            self.deck.take_open(seat, message)
        except Refuse as exc:
            if exc.reason.code is _C.WRONG_SECRET:
                self.forfeit |= {seat}
            raise
        self.secrets[seat] = scalar_bytes(message.secret)

    def _shuffle_faults(self) -> list[tuple[int, Reason]]:
        """The checks after the round of a shuffle game: the seats at fault, with why (a
        stage that is not its secret's, a secret that is not its key's; none revealed is a
        forfeit already)."""
        deck = self.deck
        assert deck is not None
        caught: dict[int, Reason] = {}
        deck.found = tuple(deck.faults())
        for fault in deck.found:
            if fault.kind is FaultKind.UNREVEALED:
                continue
            caught.setdefault(deck.members[fault.seat], _fault_reason(fault))
        return sorted(caught.items())

    def deal(self, rules: Rules, seats: int, dropped: dict[int, int]) -> None:
        """Every nonce is in: ``R``, and a table of hidden tableaux for the seats dealt in."""
        playing = sorted(self.seats - self.forfeit - set(dropped))
        self.playing = frozenset(playing)
        self.fair.draw(playing)
        hidden = Tableau(
            (HIDDEN,) * NERTS_PILE_SIZE,
            tuple(() for _ in range(rules.work_piles)),
            (),
            (),
        )
        active = [s in playing for s in range(seats)]
        self.table = Table.from_tableaux(rules, [hidden] * seats, active=active, number=self.number)

    # -- the dealerless shuffle (docs/shuffle.md §10) ----------------------------------------
    def deal_sealed(self, rules: Rules, seats: int) -> None:
        """Every stage is in: a table of sealed tableaux for the round's members, every seat
        dealt in, and the deal's face-up positions of every deck turned up."""
        deck = self.deck
        assert deck is not None
        deck.finish_deal()
        self.playing = frozenset(deck.members)
        self.ready = self.playing
        dealt = Tableau.sealed(rules)
        hidden = Tableau((HIDDEN,) * NERTS_PILE_SIZE, ((),) * rules.work_piles, (), ())
        active = [s in self.playing for s in range(seats)]
        tableaux = [dealt if s in self.playing else hidden for s in range(seats)]
        self.table = Table.from_tableaux(rules, tableaux, active=active, number=self.number)
        shown = [p for p in map(sealed_position, dealt.shown) if p is not None]
        for d in range(len(deck.members)):
            self._put(deck.turn_up(d, shown))
        deck.face_up = deck.turned_set

    def take_shares(self, seat: int, message: DeckShares) -> None:
        """``seat``'s decryption shares; the cards they open go face up where they lie."""
        assert self.deck is not None
        if self.table is None or self.deck.final is None:
            raise Refuse(_C.WRONG_PHASE, "decryption shares before the deal is over")
        self._put(self.deck.take_shares(seat, message))

    def _put(self, opened: list[Opened]) -> None:
        """Cards opened, each in place of its sealed card. A position that opens to no card
        stays sealed (nobody can play it); the checks after the round name the stage at
        fault."""
        deck = self.deck
        assert deck is not None and self.table is not None
        by_seat: dict[int, dict[int, Card]] = {}
        for o in opened:
            if o.card is None:
                continue
            seat = deck.members[o.deck]
            by_seat.setdefault(seat, {}).setdefault(o.position, o.card)
            self.seen[seat] = self.seen.get(seat, frozenset()) | {o.card.physical}
        for seat, cards in by_seat.items():  # (each tableau rebuilt once, not once a card)
            self.table = self.table.with_tableau(seat, self.table.tableaux[seat].opened_at(cards))

    def take_deal(
        self,
        seat: int,
        visible: tuple[Card, ...],
        rules: Rules,
        secrets: Callable[[int], bytes] | None,
    ) -> None:
        """``seat`` shows its dealt face-up cards (``ready``). ``secrets``: the local seat's
        (its own deal is then checked against its deck, and followed with every card known),
        ``None`` for another seat's."""
        if seat in self.ready:
            raise Refuse(_C.REPEATED, "a second ready")
        assert self.table is not None and self.fair.randomness is not None
        if len(visible) != 1 + rules.work_piles:
            raise Refuse(
                _C.BAD_DEAL, f"a deal shows the Nerts top and {rules.work_piles} work piles"
            )
        physical = {c.physical for c in visible}
        if len(physical) != len(visible) or any(c.is_joker and c.declared for c in visible):
            raise Refuse(_C.BAD_DEAL, "the dealt cards repeat a card or declare a joker")
        if secrets is not None:
            tableau = Tableau.deal(
                self.fair.deck(secrets(self.number), self.number, rules.jokers), rules
            )
            if tableau.shown != visible:
                raise Refuse(
                    _C.DEAL_NOT_DECK, "the dealt cards are not the ones this seat's deck deals"
                )
        else:
            tableau = Tableau.followed(visible, rules)
        self.table = self.table.with_tableau(seat, tableau)
        self.ready |= {seat}
        self.seen[seat] = frozenset(physical)
        self.dealt[seat] = visible

    # -- play --------------------------------------------------------------------------------
    def play(self, event: Event, rules: Rules, roster: Roster, notices: list[Notice]) -> bool:
        """Fold a play event (move, claim, stuck, Nerts) of ``event``'s seat: the cards it
        turns up, the claim it makes, the move on the table; whether it ended the round (the
        caller moves the game to the reveal).

        A claim's race is the lake's (:meth:`Table.play <p2p_nertz.rules.Table.play>`), but
        for a claim whose author cannot have seen what it goes on (:meth:`_claim_unseen`).
        """
        body = event.body
        assert isinstance(body, Play)
        if body.opens and self.deck is None:
            raise Refuse(_C.WRONG_DEAL, "an opening in a game dealt by commit and reveal")
        table = self.table
        if table is None or body.round < self.number:
            return False  # a late move of a finished round: it does not count
        if not self._counts(event, body, table):
            return False
        if body.opens:
            table = take_opening(self, body.opens)
        seat = event.seat
        move = body.move
        before = table.tableaux[seat]
        deck = self.deck
        if deck is None:
            seen = self.seen.get(seat, frozenset())
            tableau, seen = _fill_reveals(seen, before, move, body.reveals, rules)
            turned: list[int] = []
        elif body.reveals:
            raise Refuse(_C.REVEAL_COUNT, "a shuffle game's move names no card it turns up")
        else:
            tableau, seen = before, self.seen.get(seat, frozenset())
            turned = _turned_up(before, move, rules)
        try:
            unseen = move.is_lake and self._claim_unseen(event, body, tableau, roster)
        except Refuse:  # (its card is not there)
            if not self._lost_to_cut(event, body, needs=True, roster=roster):
                raise
            self._lose_unseen(event, body, filled=(before, tableau, seen), notices=notices)
            return False  # (its card never left: nothing turns up)
        if unseen:
            self._lose_unseen(event, body, filled=(before, tableau, seen), notices=notices)
            if turned:  # a turn-up stands even if its claim loses
                assert deck is not None
                self._put(deck.turn_up(deck.member(seat), turned))
            return False
        try:
            # (With the hidden cards the move showed filled in, if it showed any.)
            shown = tableau if tableau is not before else None
            new, play = table.play(seat, move, event.lamport, shown=shown)
        except IllegalMoveError as exc:
            if self._lost_to_cut(event, body, needs=_needs_unseen(before, move), roster=roster):
                return False  # a race lost to a drop's cut: the move does not count
            raise chained(Refuse(_C.ILLEGAL_MOVE, str(exc)), None)
        self.table = new
        self.seen[seat] = seen
        self.latest = {**self.latest, seat: event.seq}
        if turned:
            assert deck is not None
            self._put(deck.turn_up(deck.member(seat), turned))
        self._record(event, body, play, notices)
        track_passes(self, event, move, play, notices)
        return self._ended(event, move, new, play, notices)

    def _counts(self, event: Event, body: Play, table: Table) -> bool:
        """Whether a play event of this round counts here (the round still played, as its
        author saw it); raise if it is not this round's or comes before its seat's deal."""
        if body.round != self.number:
            raise Refuse(_C.WRONG_ROUND, f"round {body.round} is not being played")
        seat = event.seat
        if seat not in self.ready:
            raise Refuse(_C.BEFORE_DEAL, "a move before the seat's deal (ready)")
        if table.over and not (
            table.status is STATUS_NERTS and table.cut is not None and event.lamport <= table.cut
        ):
            return False  # made before its author knew the round was over: it does not count
        # Not made before its author saw the everyone-stuck rotation that comes before it in
        # the order: else it had not seen every pass that made it (its own pass may have been
        # the last, with another's still on the way), so it meant another table. It does not
        # count then, as a move after T* does not.
        made = self.rotation_seen
        if made is not None and not all(s == seat or body.frontier[s] >= q for s, q in made):
            return False
        # In turn-based play, a move of a seat whose turn was passed for (P@S) while it was on
        # its way, not seeing that pass: a race, it does not count (no blame; §8.7).
        by = self.passed_by.get(seat) if table.rules.turn_based else None
        if by is not None and body.frontier[by[0]] < by[1] and body.move.kind is not MOVE_CALL:
            return False
        # A pass on another's behalf made without seeing a move that counted before it in
        # the order (a race: that seat, or another, moved meanwhile) does not count either.
        if body.move.behalf is not None:
            return all(s == seat or body.frontier[s] >= q for s, q in self.latest.items())
        return True

    def _claim_unseen(self, event: Event, body: Play, tableau: Tableau, roster: Roster) -> bool:
        """Whether a claim's author never saw the card this one would go on: it cannot win
        the race (the card returns). Raise if the seat does not show the claimed card where the
        claim takes it from."""
        move = body.move
        assert move.source is not None and move.foundation is not None
        top = tableau.top(move.source)
        decl = move.declare
        played = top
        if top is not None and not top.declared and top.is_joker and decl is not None:
            assert decl.suit is not None
            played = top.declare(decl.rank, decl.suit)
        if played is None or body.card is None or played != body.card:
            raise Refuse(
                _C.CARD_NOT_THERE,
                f"claims {body.card} from {move.source!r}, where the seat shows {top}",
            )
        # A foundation below rank - 1: the card this one was built on looked kept when it
        # was played and lost in the final order (or was our own pending claim, which
        # DESIGN.md §4 lets a player build on). Honest, and a lost race. A foundation that
        # never existed is no race: the fold refuses it below, unless its author held
        # events of a member that a drop has since cut (a forker's cards, which counted
        # nowhere in the end: a claim on them is a race lost to the cut, not a cheat).
        assert self.table is not None
        lake = self.table.lake
        if move.foundation in lake:
            below = lake.height(move.foundation) < body.card.rank - 1
        else:
            below = body.card.rank > 1 and _saw_cut(roster, event, body)
        return below or not self._saw_foundation(event, move.foundation, body.card)

    def _lost_to_cut(self, event: Event, body: Play, *, needs: bool, roster: Roster) -> bool:
        """Whether a move refused here is a race lost to a drop's cut, not a cheat
        (docs/shuffle.md §9): in a shuffle game, its author held events of a member past the
        cut a drop made (:meth:`Roster.saw_cut`), whose shares opened, in its tentative fold,
        a card sealed here; and the move ``needs`` a card sealed or not there, or its author
        lost a move so before, which this one built on. Then it does not count, without blame.
        """
        seat = event.seat
        if self.deck is None or not roster.saw_cut(seat, body.frontier):
            return False
        if not needs and seat not in self.astray:
            return False
        self.astray |= {seat}
        return True

    def _lose_unseen(
        self,
        event: Event,
        body: Play,
        *,
        filled: tuple[Tableau, Tableau, frozenset[Card]],
        notices: list[Notice],
    ) -> None:
        """A claim that cannot win (:meth:`_claim_unseen`) loses: the card stays, the cards
        the move showed (``filled``: the tableau before and after them, and the seat's cards
        seen) are known."""
        seat = event.seat
        move = body.move
        assert move.source is not None and move.foundation is not None and body.card is not None
        res = Resolution(
            Claim(seat, body.card, move.source, move.foundation, event.lamport),
            Outcome.LOST,
            None,
        )
        before, tableau, seen = filled
        self.log.append((seat, move, body.card, body.reveals, True))
        self.seen[seat] = seen
        if tableau is not before:
            assert self.table is not None
            self.table = self.table.with_tableau(seat, tableau)
        notices.append(ClaimDecided(res, self.number))

    def _record(self, event: Event, body: Play, play: TablePlay, notices: list[Notice]) -> None:
        """Log the move for the replay; a claim decided, and the events on top of its
        foundation (what the next claim there must have seen)."""
        move = body.move
        resolution = play.resolution
        lost = resolution is not None and not resolution.kept
        self.log.append((event.seat, move, body.card, body.reveals, lost))
        if resolution is not None:
            notices.append(ClaimDecided(resolution, self.number))
            if resolution.kept:
                fid = move.foundation
                assert fid is not None
                entry = (event.seat, event.seq)
                if resolution.outcome is OUTCOME_TIED:
                    self.top_events[fid] = (*self.top_events.get(fid, ()), entry)
                else:
                    self.top_events[fid] = (entry,)

    def _ended(
        self, event: Event, move: Move, new: Table, play: TablePlay, notices: list[Notice]
    ) -> bool:
        """Whether the move ended the round (Nerts at ``T*``, or blocked), reported."""
        if play.ended is not None:
            assert new.cut is not None or play.ended is RoundStatus.BLOCKED
            cut = new.cut if new.cut is not None else event.lamport
            notices.append(RoundEnded(self.number, play.ended, cut, new.callers))
            return True
        if move.kind is MOVE_CALL and new.status is STATUS_NERTS and not play.false_call:
            # A simultaneous call at T*: the round already ended; report the new caller set.
            assert new.cut is not None
            notices.append(RoundEnded(self.number, STATUS_NERTS, new.cut, new.callers))
        return False

    def _saw_foundation(self, event: Event, fid: FoundationId, card: Card) -> bool:
        """Whether the claim's frontier holds an event that put a card at ``rank - 1`` on
        ``fid`` (DESIGN.md §3: a claim must have seen what it goes on)."""
        if card.rank == 1:
            return True
        table = self.table
        assert table is not None
        if table.lake.height(fid) != card.rank - 1:
            return True  # not a contest of this kind: the lake decides (tie or loss)
        body = event.body
        frontier = body.frontier
        return any(frontier[s] >= seq for s, seq in self.top_events.get(fid, ()))

    # -- a member gone, and the end of the round ---------------------------------------------
    def take_out(
        self, seat: int, *, playing: bool, lamport: int, by: tuple[int, int], notices: list[Notice]
    ) -> bool:
        """``seat`` is out of the game (dropped, gone or abandoned) by the event ``by`` (seat,
        seq) at Lamport time ``lamport``: its tableau leaves the table. ``playing``: the game is
        in its play phase. Whether that ended the round (the caller moves to the reveal)."""
        if self.deck is not None and self.deck.final is not None:
            # The others open its shares for it from now on (docs/shuffle.md §6.4).
            self._put(self.deck.drop(seat))
        table = self.table
        if table is None or not table.active[seat]:
            return False
        table = table.with_active(seat, False)
        if playing and self.deck is not None and not self.deck.can_open:
            # Too few members left to open a card of the member gone: the round ends blocked
            # (docs/shuffle.md §6.4).
            self.table = table = table.blocked(lamport)
            notices.append(RoundEnded(self.number, RoundStatus.BLOCKED, table.clock, ()))
            return True
        self.table = table
        if not (
            playing
            and table.status is RoundStatus.PLAYING
            and any(table.active)
            and all(s or not a for s, a in zip(table.stuck, table.active, strict=True))
        ):
            return False
        # Everyone left is stuck, and was waiting for the one gone: they rotate now,
        # as if the last of them had passed (RULES.md: everyone stuck).
        # (In turn-based play the seat on turn: only it may move.)
        first = table.turn if table.rules.turn_based else table.active.index(True)
        table, play = table.play(first, Move.pass_(), max(lamport, table.clock))
        self.table = table
        if play.rotated:
            self.log.append(None)
            self.rotation_seen = (*self.passes.items(), *self.passed_by.values(), by)
            self.passes = {}
            notices.append(Rotated(self.number))
        self.passed_by = {s: e for s, e in self.passed_by.items() if s in table.passed_for}
        if play.ended is not None:
            notices.append(RoundEnded(self.number, play.ended, table.clock, table.callers))
            return True
        return False

    def score(self, rules: Rules, dropped: dict[int, int]) -> list[tuple[int, Reason]]:
        """Every secret is in: replay each seat against its deck, then score the round (a seat
        caught by the replay, or whose secret is missing, forfeits; so does a seat dealt in and
        dropped since). The seats caught, with why, in seat order."""
        table = self.table
        assert table is not None
        caught: list[tuple[int, Reason]] = []
        if self.deck is not None:
            caught = self._shuffle_faults()
        else:
            assert self.fair.randomness is not None
            for seat in sorted(self.secrets):
                problem = replay_seat(rules, self, seat, seat_deck(rules, self, seat))
                if problem is not None:
                    caught.append((seat, problem))
        cheated = {seat for seat, _ in caught}
        # A seat dealt in and then dropped (silent, withholding, or gone) forfeits too: going
        # silent before the reveal must never cost less than being caught by it.
        gone = self.playing & set(dropped)
        forfeits = (self.forfeit | cheated | (self.seats - set(self.secrets))) - set(dropped)
        forfeits = (forfeits | gone) & self.seats
        self.forfeit = frozenset(forfeits)
        score = table.score()
        if forfeits:
            players = tuple(
                table.forfeit_score(p.seat) if p.seat in forfeits else p for p in score.players
            )
            score = RoundScore(players, score.teams, score.status, score.callers)
        self.expected = score
        self.digest = table.lake.digest()
        return caught


def track_passes(
    rs: RoundState, event: Event, move: Move, play: TablePlay, notices: list[Notice]
) -> None:
    """The passes that made seats stuck (a pass on a seat's behalf too), and the everyone-stuck
    rotation they made, after ``event``'s ``move`` counted in ``rs`` (its table the new one)."""
    seat = event.seat
    passes, passed_by = rs.passes, rs.passed_by
    new = rs.table
    assert new is not None
    behalf = move.behalf
    if behalf is not None:
        if behalf in new.passed_for and behalf not in passed_by:
            passed_by = {**passed_by, behalf: (seat, event.seq)}
            notices.append(PassedFor(rs.number, behalf, seat))
    elif move.kind is MOVE_PASS and seat not in passes:
        # The pass that made the seat stuck; passing again while stuck changes nothing,
        # and a move made without seeing that repeat meant the same table.
        passes = {**passes, seat: event.seq}
    if play.unstuck:
        # The rule is the table's (Table.play); the fold only tells the passers.
        notices.append(PassesStale(rs.number, play.unstuck, seat))
    if play.rotated:
        rs.log.append(None)
        rs.rotation_seen = (*passes.items(), *passed_by.values())
        passes = {}
        notices.append(Rotated(rs.number))
    elif passes and not all(new.stuck[s] for s in passes):
        passes = {s: q for s, q in passes.items() if new.stuck[s]}
    if passed_by and any(s not in new.passed_for for s in passed_by):
        passed_by = {s: e for s, e in passed_by.items() if s in new.passed_for}
    rs.passes, rs.passed_by = passes, passed_by


def _turned_up(before: Tableau, move: Move, rules: Rules) -> list[int]:
    """The sealed positions ``move`` turns up on ``before`` (the rules say which)."""
    return [p for p in map(sealed_position, before.reveals(move, rules)) if p is not None]


def take_opening(rs: RoundState, shares: tuple[Share, ...]) -> Table:
    """An opening taken into the round ``rs`` of a shuffle game (docs/shuffle.md §10.14): the
    shares checked (one wrong refuses them all, ``bad_share``, and nothing is taken) and kept,
    the cards they open put in place; the table then. The fold takes a move's before it
    judges the move (the shares stand whatever the move's fate: they are facts, as a turn-up
    is); a peer's share store puts its own in a copy of its held round (the held view). Not
    re-exported by ``protocol.state``: the fold and the store are its only callers."""
    assert rs.deck is not None and rs.table is not None
    if rs.deck.final is None:
        raise Refuse(_C.WRONG_PHASE, "an opening before the deal is over")
    rs._put(rs.deck.take_carried(shares))
    return rs.table


def put_opened(rs: RoundState, opened: list[Opened]) -> Table:
    """Cards ``opened`` put in place of their sealed cards in ``rs`` (:meth:`RoundState._put`),
    its table then: a peer's share store puts the cards it opened before in a copy of its held
    round (``ShareStore.held_table``). Not re-exported by ``protocol.state``."""
    assert rs.deck is not None and rs.table is not None
    rs._put(opened)
    return rs.table


def sealed_needed(tableau: Tableau, move: Move) -> list[int]:
    """The sealed positions among the cards ``move`` takes or builds on in ``tableau`` (the
    top of the work pile it goes on): the cards whose opening it must carry in a shuffle game
    (docs/shuffle.md §10.14), in the order they lie. Not re-exported by ``protocol.state``.

    >>> t = Tableau.sealed(Rules())  # (a deal no card of which is open yet)
    >>> sealed_needed(t, Move.parse("N>1")), sealed_needed(t, Move.parse("S"))
    ([39, 38], [])
    """
    source, target = move.source, move.target
    if source is None:
        return []
    try:
        taken = tableau.pile(source)[-move.count :]
        under = tableau.pile(target)[-1:] if target is not None and target.is_work else ()
    except IllegalMoveError:
        return []
    return [p for p in map(sealed_position, (*taken, *under)) if p is not None]


def _saw_cut(roster: Roster, event: Event, body: Play) -> bool:
    """Whether a claim on a foundation never started here may rest on the cards of a member
    that a drop has since cut: its author held events of a member past the cut
    (:meth:`Roster.saw_cut`), or voted the foundation's owner out at the cut and so announced
    none of its events past it, though its fold may have shown them
    (:func:`~p2p_nertz.protocol.roster.voted_past_cut`)."""
    assert body.move.foundation is not None
    owner = body.move.foundation.owner
    return roster.saw_cut(event.seat, body.frontier) or voted_past_cut(
        roster, event.seat, body.frontier, owner, event.key
    )


def _needs_unseen(tableau: Tableau, move: Move) -> bool:
    """Whether ``move`` needs a card that ``tableau`` does not show: a card face down
    (sealed) among those it takes or on the work pile it builds on, or fewer cards than it
    takes.

    >>> t = Tableau.parse("N: ?? | 1: 2H | 2: - | 3: KS | 4: KH QS | S: 9H | W: 4H")
    >>> _needs_unseen(t, Move.parse("N>4")), _needs_unseen(t, Move.parse("2>3"))
    (True, True)
    >>> _needs_unseen(t, Move.parse("W>3")), _needs_unseen(t, Move.parse("1>4"))
    (False, False)
    """
    source, target = move.source, move.target
    if source is None:
        return False
    try:
        taken = tableau.pile(source)[-move.count :]
        under = tableau.pile(target) if target is not None and target.is_work else ()
    except IllegalMoveError:
        return False  # no such pile: no card of it is missing
    return len(taken) < move.count or any(map(is_unknown, (*taken, *under[-1:])))


def _fill_reveals(
    seen: frozenset[Card],
    tableau: Tableau,
    move: Move,
    reveals: tuple[Card, ...],
    rules: Rules,
) -> tuple[Tableau, frozenset[Card]]:
    """The tableau of a seat that has shown the cards ``seen``, with the cards ``move``
    turns face up (:meth:`Tableau.reveals`) filled in from ``reveals``, checked against
    what the tableau already shows; and the cards seen then. Raise
    :class:`~p2p_nertz.protocol.fold_values.Refuse` for reveals wrong here."""
    current = tableau.reveals(move, rules)  # (with HIDDEN where not known yet)
    if not current:
        if reveals:
            raise Refuse(
                _C.REVEAL_COUNT, f"{move} turns up no card, the event shows {len(reveals)}"
            )
        return tableau, seen
    if len(reveals) != len(current):
        raise Refuse(
            _C.REVEAL_COUNT,
            f"{move} turns up {len(current)} card(s), the event shows {len(reveals)}",
        )
    if current == reveals:
        return tableau, seen  # nothing hidden here: every card was known and matches
    filled = []
    added: set[Card] = set()
    for now, card in zip(current, reveals, strict=True):
        if now is HIDDEN:
            if card.physical in seen or card.physical in added:
                raise Refuse(
                    _C.REVEAL_REPEATED, f"reveals {card}, which this seat has already shown"
                )
            if card.is_joker and card.declared:
                raise Refuse(_C.HIDDEN_DECLARED, f"a face-down joker cannot be declared ({card})")
            added.add(card.physical)
            filled.append(card)
        elif now != card:
            raise Refuse(_C.REVEAL_WRONG, f"reveals {card} where the seat's card is {now}")
        else:
            filled.append(now)
    if move.kind is MOVE_TURN:
        stock = tableau.stock[: -len(filled)] + tuple(reversed(filled))
        new = Tableau(tableau.nerts, tableau.work, stock, tableau.waste)
    else:
        nerts = (*tableau.nerts[:-2], filled[0], tableau.nerts[-1])
        new = Tableau(nerts, tableau.work, tableau.stock, tableau.waste)
    return new, seen | added


#: the refusal code of each fault the checks after a shuffle round find (docs/shuffle.md §7.2)
_FAULT_CODES = {
    FaultKind.BAD_STAGE: _C.BAD_SHUFFLE,
    FaultKind.BAD_DEALING: _C.BAD_DEALING,
    FaultKind.BAD_SHARE: _C.BAD_SHARE,
    FaultKind.WRONG_SECRET: _C.WRONG_SECRET,
}


def _fault_reason(fault: Fault) -> Reason:
    return Reason(_FAULT_CODES[fault.kind], f"the checks after the round: {fault}")


#: every field of a RoundState, in order (RoundState.copy)
_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(RoundState)))


# -- a round replayed against its decks ----------------------------------------------------
# The one replay, for the fold (each seat when the last secret is in: RoundState.score), the
# audit and the simulator's invariants (every finished round, with conservation).


@dataclass(frozen=True, slots=True)
class DeckProblem:
    """What the replay of a seat's round against its deck found (:func:`replay_round`)."""

    round: int
    seat: int
    reason: Reason

    def __str__(self) -> str:
        return f"round {self.round} seat {self.seat}: {self.reason}"


def seat_deck(rules: Rules, rs: RoundState, seat: int) -> tuple[Card, ...]:
    """The deck ``seat`` was dealt in round ``rs``, from its revealed secret and ``R``."""
    return rs.fair.deck(rs.secrets[seat], rs.number, rules.jokers)


def replay_seat(
    rules: Rules, rs: RoundState, seat: int, deck: tuple[Card, ...], *, conserve: bool = False
) -> Reason | None:
    """Replay one seat's round against its deck: the first lie or impossibility, if any.

    In the order of the round's play: the deal the seat showed, the cards each of its moves
    showed (:meth:`Tableau.reveals`), the card each claim took, and every move with the real
    cards. With ``conserve``, also that the seat's cards (its tableau and the lake) stay its
    deck after every move, and that the lake holds the cards its claims kept at the end: a
    check of the rules engine itself, which the fold leaves to the audit and the simulator.
    A seat not dealt in (no ``ready``) has nothing to replay.
    """
    if seat not in rs.ready:
        return None
    tableau = Tableau.deal(deck, rules)
    shown = tableau.shown
    if rs.dealt.get(seat) != shown:
        published = " ".join(map(str, rs.dealt.get(seat, ())))
        return Reason(
            _C.DECK_DEAL,
            f"showed {published} as its deal but the deck deals {' '.join(map(str, shown))}",
        )
    full = sorted(new_deck(rules.jokers), key=Card.sort_key) if conserve else []
    in_lake: list[Card] = []
    for entry in rs.log:
        if entry is None:
            tableau = tableau.rotated()
            continue
        if entry[0] != seat:
            continue
        _, move, card, reveals, lost = entry
        expected = tableau.reveals(move, rules)
        if reveals != expected and tuple(c.physical for c in reveals) != tuple(
            c.physical for c in expected
        ):  # (equal cards are equal physical cards: the first test is the usual answer)
            showed = " ".join(map(str, reveals))
            real = " ".join(map(str, expected))
            return Reason(_C.DECK_REVEAL, f"showed {showed} for {move} but the deck says {real}")
        try:
            if move.is_lake:
                assert move.source is not None and card is not None
                top = tableau.top(move.source)
                if top is None or top.physical != card.physical:
                    return Reason(
                        _C.DECK_CLAIM,
                        f"claimed {card} from {move.source} but the deck has {top} there",
                    )
                if lost:
                    continue  # the card stayed where it was
                _, tableau = tableau.take(move.source)
                in_lake.append(top.physical)
            elif move.plays_card or move.kind in _ON_THE_DECK:
                tableau = tableau.apply(move, rules)
            else:
                continue
        except IllegalMoveError as exc:
            return Reason(_C.DECK_ILLEGAL, f"{move} is illegal with the deck's cards: {exc}")
        if conserve:
            owned = [c.physical for c in tableau.cards()] + in_lake
            if sorted(owned, key=Card.sort_key) != full:
                return Reason(_C.NOT_CONSERVED, f"cards not conserved after {move}")
    if conserve and rs.table is not None:
        lake = [lc.card.physical for lc in rs.table.lake.cards() if lc.owner == seat]
        if sorted(lake, key=Card.sort_key) != sorted(in_lake, key=Card.sort_key):
            return Reason(_C.LAKE_NOT_PLAYED, "the lake holds other cards than played")
    return None


def replay_round(rules: Rules, rs: RoundState) -> list[DeckProblem]:
    """Replay a round with every deck its revealed secrets give: per seat, the first lie, move
    illegal with the real cards, or card not conserved (:func:`replay_seat` with
    ``conserve``). The audit's and the simulator's check of every finished round."""
    if rs.fair.randomness is None or rs.table is None or not rs.secrets:
        return []
    problems: list[DeckProblem] = []
    for seat in sorted(rs.secrets):
        reason = replay_seat(rules, rs, seat, seat_deck(rules, rs, seat), conserve=True)
        if reason is not None:
            problems.append(DeckProblem(rs.number, seat, reason))
    return problems


_ON_THE_DECK = (MoveKind.TURN, MoveKind.ROTATE)  # (moves that change a tableau but play no card)
