"""The lookahead bot: tries each of its card moves on a copy of its layout and plays the best.

Theory of operation
-------------------
Every decision the bot lists its own card moves (the Nerts top, the waste top and the exposed
work-pile cards to the lake; cards and runs onto, under or into work piles), plays each on a
light copy of its layout, and scores the layout after it with :meth:`Lookahead._evaluate`:

* Nerts cards left, heavily (each costs two points and slows the race to call);
* its own cards played to the lake (a point each), more for a card an opponent could also play
  there now (it is face up in front of them: whoever is first gets the point);
* whether the Nerts top card could land with the next move (to the lake, onto or under a work
  pile, into an empty pile) — this is the look ahead: a move that uncovers a place for the
  Nerts top card scores before the card itself moves;
* empty work piles (they take any card: a King from the Nerts pile, most of all);
* work-pile cards ready for the lake, and the waste card the move would uncover, if the bot
  has seen it before;
* a little for each waste card put on a work pile: it stays at hand, and the card under it
  comes up.

The best move is played if it beats turning the stock by ``Weights.turn``; otherwise the bot
turns the stock, and after a whole pass with nothing played it passes (stuck), like the greedy
bot. A second ply (two-move plans that free a blocked Nerts top card) was tried and dropped:
over the same paired deals it made no difference with two players and lost about a point a
round with four, where the lake moves too fast for plans that spend moves to pay off. One ply
also keeps a decision within about three times the greedy bot's time.

The bot uses only what a player at the table could know: it is given the table face up
(:meth:`~p2p_nertz.rules.Table.face_up`: its Nerts pile below the top, its stock and its waste
below the top cannot be read), the lake as it sees it (a little late), and its memory of the
cards it has seen turned up on its waste. Turning the stock and flipping the waste are fixed
permutations, so a player who remembers every card they saw also knows where each of them
lies: the bot keeps that memory as its *cycle* (:class:`_Cycle`), the waste and the stock in
the order the cards come round, each place known or not, and follows it as the counts it sees
change (a card played from the waste, a lost race that puts one back, an everyone-stuck
rotation).

Besides the search, it differs from the greedy bot in three ways:

* it aims a lake card at the last fitting foundation rather than the first, where a naive
  player (the greedy bot) goes, to lose fewer races (a small effect, about a tenth of a point
  a round with four to six players);
* after its Nerts pile is empty it keeps playing cards to the lake for points while that is
  safe (no Nerts bonus at stake, or every opponent still far from calling), then calls;
* when stuck and waiting, it watches the lake: if a card it remembers in its stock has become
  playable and will come up in the next pass, it goes back to turning.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p_nertz.bots.base import Strategy, register
from p2p_nertz.bots.greedy import lake_move
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Card, FoundationId, Lake, Move, Pile, Suit, Table, Tableau, fits_on

__all__ = ["Lookahead", "Weights"]

_CALL = Move.call()
_TURN = Move.turn()
_PASS = Move.pass_()
_WORK = (Pile.W1, Pile.W2, Pile.W3, Pile.W4, Pile.W5, Pile.W6)

# What _best_move may choose from.
_ANY, _PROGRESS, _SCORING = 0, 1, 2
#: Most work-pile-to-work-pile moves in a row: a guard against shuffling cards forever.
MAX_SHUFFLES = 4
#: With a Nerts bonus at stake, play on after emptying the Nerts pile only while every
#: opponent has more than this many Nerts cards left (each needs a move to clear).
PLAY_ON_MARGIN = 3


@dataclass(frozen=True, slots=True)
class Weights:
    """The evaluation's weights, in round points (a card in the lake is worth 1).

    The defaults were tuned by hand, one weight at a time, over paired deals against the greedy
    bot with two and four players (``scripts/bot_strength.py`` measures the result). ``dig``
    and ``nerts`` matter most: with ``dig`` at 0.3 the bot turns the stock instead of building
    from its waste, and barely beats the greedy bot with two players and loses with four;
    ``nerts`` at 4 costs half a point a round with two players, at 2.5 a third of a point with
    four. The others are flat to within a standard error around these values.

    Attributes:
        nerts: each card left in the Nerts pile (its penalty, plus the race to empty it).
        lake: each own card played to the lake.
        contested: extra for playing a lake card an opponent could play there too.
        top_lake: the known Nerts top card can go to the lake next.
        top_pile: it can go onto or under a work pile next.
        top_empty: it can go into an empty work pile next.
        unknown_top: a Nerts top card not yet turned up (its chance to land at once).
        empty: the first empty work pile.
        empty_more: each further empty work pile.
        work_lake: each exposed work-pile card ready for the lake.
        waste_lake: the (known) waste top card is ready for the lake.
        waste_pile: it fits on a work pile.
        dig: playing the waste top onto a work pile (the card stays at hand on the pile and
            the card under it comes up).
        turn: what a move must be worth to be played rather than turning the stock.
    """

    nerts: float = 3.0
    lake: float = 1.0
    contested: float = 1.5
    top_lake: float = 2.0
    top_pile: float = 1.5
    top_empty: float = 1.2
    unknown_top: float = 0.5
    empty: float = 1.0
    empty_more: float = 0.3
    work_lake: float = 0.5
    waste_lake: float = 0.4
    waste_pile: float = 0.2
    dig: float = 0.6
    turn: float = 0.15


# A move in the search: (source, target, count, slide). Built into a Move only when chosen.
_Spec = tuple[Pile, Pile, int, bool]
_Work = tuple[tuple[Card, ...], ...]
# Lake heights the search's own plays opened or took: (suit, rank) pairs, few enough to scan.
_Heights = tuple[tuple[Suit, int], ...]


class _Pos:
    """A light copy of the bot's layout during the search (what it knows of it).

    Attributes:
        nn: cards in the Nerts pile.
        top: the Nerts top card, or ``None`` when unknown (just uncovered) or empty.
        work: the work piles.
        wd: how many waste cards the search has played from the waste top.
        points: own cards played to the lake, plus the extras (contested, dig), in points.
        plus: lake heights the search's own lake plays opened ``(suit, rank)``.
        minus: lake heights the search's own lake plays took.
    """

    __slots__ = ("minus", "nn", "plus", "points", "top", "wd", "work")

    def __init__(  # noqa: PLR0917 - built thousands of times a second: positional is faster
        self,
        nn: int,
        top: Card | None,
        work: _Work,
        wd: int = 0,
        points: float = 0.0,
        plus: _Heights = (),
        minus: _Heights = (),
    ) -> None:
        self.nn = nn
        self.top = top
        self.work = work
        self.wd = wd
        self.points = points
        self.plus = plus
        self.minus = minus


def _set(work: _Work, i: int, pile: tuple[Card, ...]) -> _Work:
    return (*work[:i], pile, *work[i + 1 :])


@register("lookahead")
class Lookahead(Strategy):
    """Plays the card move whose result evaluates best (see the module docstring).

    >>> from p2p_nertz.rules import Rules, shuffled_deck
    >>> table = Table.deal(Rules(), [shuffled_deck(b"a"), shuffled_deck(b"b")])
    >>> bot = Lookahead(Rng(1))
    >>> move = bot.choose(table, 0)
    >>> move in table.legal_moves(0)
    True
    """

    def __init__(self, rng: Rng | None = None, weights: Weights | None = None) -> None:
        super().__init__(rng)
        self.weights = weights or Weights()
        self._cycle = _Cycle()
        self._idle = 0
        self._shuffles = 0
        self._passed = False
        self._pass_lake: Lake | None = None
        self._last_lake: Lake | None = None
        # The decision being made: the table, the seat, and what the search looks up often.
        self._table: Table | None = None
        self._seat = 0
        self._lake = Lake()
        self._waste: tuple[Card, ...] = ()
        self._open: dict[int, bool] = {}
        self._contested: frozenset[tuple[int, int]] | None = None

    def new_round(self) -> None:
        self._cycle = _Cycle()  # cards seen on the waste, where they lie in the stock and waste
        self._idle = 0  # stock turns since the bot last played a card or the lake changed
        self._shuffles = 0  # work-pile-to-work-pile moves in a row
        self._passed = False
        self._pass_lake = None  # the lake when the bot last looked, while stuck
        self._last_lake = None

    # -- the decision ---------------------------------------------------------------------
    def choose(self, table: Table, seat: int) -> Move | None:
        t = table.tableaux[seat]
        lake = table.lake
        self._cycle.look(t, table.rotations)
        if not self._passed and _changed(lake, self._last_lake):
            self._idle = 0  # the lake moved: cards passed over in this pass may play now
        self._last_lake = lake
        if table.can_call(seat):
            move = self._play_on(table, seat)
            return move if move is not None else _CALL
        if self._passed and not table.stuck[seat]:
            # Everyone rotated (or we moved): a fresh pass through the stock.
            self._passed = False
            self._idle = 0
        # While stuck, only progress (a card to the lake, off the Nerts pile or off the waste):
        # there are finitely many such moves in a round, and work-pile moves alone must not
        # keep a round going that everyone else is waiting to end.
        move = self._best_move(table, seat, mode=_PROGRESS if self._passed else _ANY)
        if move is not None:
            if move.target is Pile.LAKE or move.source in (Pile.NERTS, Pile.WASTE):
                self._idle = 0
            return move
        if self._passed:
            return self._while_stuck(table, seat)
        cycle = -(-(len(t.stock) + len(t.waste)) // table.rules.draw) + 1
        if (t.stock or t.waste) and self._idle < cycle:
            self._idle += 1
            self._shuffles = 0
            return _TURN
        self._passed = True
        self._pass_lake = lake
        return _PASS

    def _best_move(self, table: Table, seat: int, *, mode: int = _ANY) -> Move | None:
        """The best card move, or ``None`` if none beats turning the stock.

        ``mode`` limits the moves considered: any (``_ANY``), progress only (``_PROGRESS``:
        to the lake, or from the Nerts pile or the waste) or scoring only (``_SCORING``: to
        the lake or from the Nerts pile).
        """
        t = table.tableaux[seat]
        if table.rules.jokers:
            # A joker goes straight to the lake (declared as whatever fits), like the greedy
            # bot does: it always can, and it never has to be declared on a work pile.
            for pile, card in _tops(t):
                if card.suit is None:
                    return lake_move(table, seat, pile, card)
        self._table, self._seat = table, seat
        self._lake = table.lake
        self._waste = t.waste
        self._open = {}
        self._contested = None
        root = _Pos(len(t.nerts), t.nerts[-1] if t.nerts else None, t.work)
        children = self._children(root)
        if not children:
            return None
        w = self.weights
        best: _Spec | None = None
        best_value = self._evaluate(root) + w.turn
        for spec, pos in children:
            source, target = spec[0], spec[1]
            scores = target is Pile.LAKE or source is Pile.NERTS
            if mode and not scores and (mode == _SCORING or source is not Pile.WASTE):
                continue
            if self._shuffles >= MAX_SHUFFLES and source.is_work and target is not Pile.LAKE:
                continue
            value = self._evaluate(pos)
            if value > best_value:
                best, best_value = spec, value
        if best is None:
            return None
        source, target, count, slide = best
        self._shuffles = self._shuffles + 1 if source.is_work and target is not Pile.LAKE else 0
        if target is Pile.LAKE:
            played = t.top(source)
            assert played is not None and played.suit is not None
            if played.rank == 1:
                return Move.to_lake(source, FoundationId(seat, played.suit, played.joker))
            # The last fitting foundation: a naive player aims at the first one.
            return Move.to_lake(source, table.lake.targets(played)[-1])
        if slide:
            return Move.slide(source, target, count)
        return Move.to_pile(source, target, count)

    # -- calling Nerts, and waiting while stuck -------------------------------------------
    def _play_on(self, table: Table, seat: int) -> Move | None:
        """A scoring move to make before calling Nerts, or ``None`` to call now.

        With no Nerts bonus at stake an opponent calling first costs nothing, so each card
        the bot can still play to the lake is a free point, and its opponents gain less per
        move (their Nerts cards come out at a fraction of a card a move). With a bonus, play
        on only while every opponent is several moves from calling.
        """
        rules = table.rules
        if rules.nerts_bonus:
            team = rules.team_of(seat)
            left = [
                len(t.nerts)
                for s, t in enumerate(table.tableaux)
                if table.active[s] and rules.team_of(s) != team
            ]
            if left and min(left) <= PLAY_ON_MARGIN:
                return None
        return self._best_move(table, seat, mode=_SCORING)

    def _while_stuck(self, table: Table, seat: int) -> Move | None:
        """Stuck and waiting: go back to turning if the lake now takes a card that will come
        up in the next pass through the stock (the bot remembers where its cards are)."""
        lake = table.lake
        if not _changed(lake, self._pass_lake):
            return None
        self._pass_lake = lake
        for card in self._cycle.pass_tops(table.rules.draw):
            if (
                card is not None
                and card.suit is not None
                and (card.rank == 1 or lake.targets(card))
            ):
                self._passed = False
                self._idle = 0
                return _TURN
        return None

    # -- the search -----------------------------------------------------------------------
    def _wants(self, pos: _Pos, card: Card) -> bool:
        """Whether ``card`` (declared) could go to the lake in ``pos``."""
        rank = card.rank
        if rank == 1:
            return True
        suit = card.suit
        for s, r in pos.plus:  # the search's own plays come first
            if s is suit and r == rank:
                return True
        for s, r in pos.minus:
            if s is suit and r == rank:
                return False
        # Cards are looked up many times a decision; the lake does not change meanwhile.
        key = id(card)
        wanted = self._open.get(key)
        if wanted is None:
            wanted = self._open[key] = bool(self._lake.targets(card))
        return wanted

    def _waste_top(self, pos: _Pos) -> Card | None:
        """The waste top in ``pos`` if the bot knows it (it saw the card before)."""
        if pos.wd == 0:
            return self._waste[-1] if self._waste else None
        return self._cycle.below_top(pos.wd)

    def _evaluate(self, pos: _Pos) -> float:
        """The value of a layout in the search, in round points (higher is better)."""
        w = self.weights
        value = w.lake * pos.points - w.nerts * pos.nn
        empties = 0
        tops: list[Card] = []
        for pile in pos.work:
            if not pile:
                empties += 1
                continue
            card = pile[-1]
            if card.suit is None:
                continue
            tops.append(card)
            if self._wants(pos, card):
                value += w.work_lake
        if empties:
            value += w.empty + w.empty_more * (empties - 1)
        top = pos.top
        if top is not None:
            if self._wants(pos, top):
                value += w.top_lake
            elif any(fits_on(top, d) for d in tops) or (
                empties
                and any(p and p[0].suit is not None and fits_on(p[0], top) for p in pos.work)
            ):
                value += w.top_pile
            elif empties:
                value += w.top_empty
        elif pos.nn:
            value += w.unknown_top
        waste = self._waste_top(pos)
        if waste is not None and waste.suit is not None:
            if self._wants(pos, waste):
                value += w.waste_lake
            elif any(fits_on(waste, d) for d in tops):
                value += w.waste_pile
        return value

    def _contest(self) -> frozenset[tuple[int, int]]:
        """Lake heights an opponent could take with a card face up in front of them, as
        ``(rank, id(suit))`` (suits are singletons: their identity is a cheap key)."""
        table, seat = self._table, self._seat
        assert table is not None
        keys = []
        rules = table.rules
        team = rules.team_of(seat)
        for other, t in enumerate(table.tableaux):
            if other != seat and table.active[other] and rules.team_of(other) != team:
                for _, card in _tops(t):
                    if card.suit is not None and card.rank > 1:
                        keys.append((card.rank, id(card.suit)))
        return frozenset(keys)

    def _to_lake(self, pos: _Pos, card: Card) -> tuple[float, _Heights, _Heights]:
        """Points, ``plus`` and ``minus`` after the search plays ``card`` to the lake."""
        suit, rank = card.suit, card.rank
        assert suit is not None
        points = pos.points + 1.0
        if self._contested is None:
            self._contested = self._contest()
        if (rank, id(suit)) in self._contested:
            points += self.weights.contested / self.weights.lake
        minus = pos.minus if rank == 1 else (*pos.minus, (suit, rank))
        plus = pos.plus if rank == 13 else (*pos.plus, (suit, rank + 1))
        return points, plus, minus

    def _children(self, pos: _Pos) -> list[tuple[_Spec, _Pos]]:
        """Every card move the search considers from ``pos``, with the layout after it.

        Undeclared jokers take no part (they go straight to the lake before any search), so
        every move listed is legal without declaring anything.
        """
        out: list[tuple[_Spec, _Pos]] = []
        work = pos.work
        empty = next((i for i in range(len(work)) if not work[i]), -1)
        self._top_children(pos, empty, out)
        self._work_children(pos, empty, out)
        return out

    def _top_children(self, pos: _Pos, empty: int, out: list[tuple[_Spec, _Pos]]) -> None:
        """Add to ``out`` the moves of the Nerts top card and the waste top card: to the lake,
        onto, under or into a pile (``empty``: the first empty work pile, or -1)."""
        work = pos.work
        n = len(work)
        dig = self.weights.dig / self.weights.lake
        for source, card in ((Pile.NERTS, pos.top), (Pile.WASTE, self._waste_top(pos))):
            if card is None or card.suit is None:
                continue
            if source is Pile.NERTS:
                nn, top, wd, bonus = pos.nn - 1, None, pos.wd, 0.0
            else:
                nn, top, wd, bonus = pos.nn, pos.top, pos.wd + 1, dig
            if self._wants(pos, card):
                points, plus, minus = self._to_lake(pos, card)
                out.append(
                    ((source, Pile.LAKE, 1, False), _Pos(nn, top, work, wd, points, plus, minus))
                )
            for j in range(n):
                dest = work[j]
                if not dest:
                    continue
                if dest[-1].suit is not None and fits_on(card, dest[-1]):
                    new = _set(work, j, (*dest, card))
                    spec = (source, _WORK[j], 1, False)
                elif empty >= 0 and dest[0].suit is not None and fits_on(dest[0], card):
                    new = _set(work, j, (card, *dest))
                    spec = (source, _WORK[j], 1, True)
                else:
                    continue
                out.append((spec, _Pos(nn, top, new, wd, pos.points + bonus, pos.plus, pos.minus)))
            if empty >= 0 and source is Pile.NERTS:
                new = _set(work, empty, (card,))
                out.append(
                    (
                        (source, _WORK[empty], 1, False),
                        _Pos(nn, top, new, wd, pos.points, pos.plus, pos.minus),
                    )
                )

    def _work_children(self, pos: _Pos, empty: int, out: list[tuple[_Spec, _Pos]]) -> None:
        """Add to ``out`` the moves of exposed work-pile cards to the lake, and of runs onto
        other piles or into an empty one (``empty``: the first empty work pile, or -1)."""
        work = pos.work
        n = len(work)
        for i in range(n):
            pile = work[i]
            if not pile or pile[0].suit is None:
                continue
            card = pile[-1]
            if self._wants(pos, card):
                points, plus, minus = self._to_lake(pos, card)
                new = _set(work, i, pile[:-1])
                out.append(
                    (
                        (_WORK[i], Pile.LAKE, 1, False),
                        _Pos(pos.nn, pos.top, new, pos.wd, points, plus, minus),
                    )
                )
            size = len(pile)
            base = pile[0]
            for j in range(n):
                dest = work[j]
                if j == i:
                    continue
                if not dest:
                    if j == empty:
                        out += self._uncover(pos, i, j)
                    continue
                exposed = dest[-1]
                if exposed.suit is None:
                    continue
                # A pile is one run, ranks going down from its base: at most one of its cards
                # (the one a rank below ``exposed``) can go onto ``exposed``, with those on it.
                k = base.rank - exposed.rank + 1
                if 0 <= k < size and fits_on(pile[k], exposed):
                    new = _set(_set(work, i, pile[:k]), j, dest + pile[k:])
                    out.append(
                        (
                            (_WORK[i], _WORK[j], size - k, False),
                            _Pos(pos.nn, pos.top, new, pos.wd, pos.points, pos.plus, pos.minus),
                        )
                    )

    def _uncover(self, pos: _Pos, i: int, j: int) -> list[tuple[_Spec, _Pos]]:
        """Moves of the top of pile ``i`` into empty pile ``j`` that uncover a card wanted on
        the lake or by the Nerts top card (others would only spend the empty pile)."""
        out: list[tuple[_Spec, _Pos]] = []
        pile = pos.work[i]
        for k in range(1, len(pile)):
            under = pile[k - 1]
            if self._wants(pos, under) or (pos.top is not None and fits_on(pos.top, under)):
                new = _set(_set(pos.work, i, pile[:k]), j, pile[k:])
                spec = (_WORK[i], _WORK[j], len(pile) - k, False)
                out.append(
                    (spec, _Pos(pos.nn, pos.top, new, pos.wd, pos.points, pos.plus, pos.minus))
                )
        return out


def _changed(lake: Lake, before: Lake | None) -> bool:
    """Whether the lake differs from an earlier look (identity first: it is usually the same
    object, and comparing by value keeps a driver that rebuilds lakes from looping)."""
    return lake is not before and lake != before


def _tops(t: Tableau) -> list[tuple[Pile, Card]]:
    """The cards in play in a layout: Nerts top, exposed work-pile cards, waste top."""
    tops = [(Pile.NERTS, t.nerts[-1])] if t.nerts else []
    tops += [(_WORK[i], pile[-1]) for i, pile in enumerate(t.work) if pile]
    if t.waste:
        tops.append((Pile.WASTE, t.waste[-1]))
    return tops


class _Cycle:
    """What the bot remembers of its stock and waste: the cards it saw, where they lie now.

    The *cycle* is the waste, bottom to top, then the stock, top to bottom: the order in which
    the cards come round. Turning the stock and turning the waste over leave it as it is (only
    how much of it is waste changes); playing the waste top takes a card out of it, a lost race
    puts one back, and an everyone-stuck rotation moves its first card to the end (RULES.md:
    everyone stuck). The bot sees only the counts and the waste top at each look
    (:meth:`look`), as a person does, and follows the cycle by them, remembering each card
    when it is the waste top.

    Attributes:
        cards: each place of the cycle: the card seen there, or ``None`` if never seen.
        waste: how many of them were the waste at the last look.
        rotations: the table's count of rotations at the last look.
    """

    __slots__ = ("cards", "rotations", "waste")

    def __init__(self) -> None:
        self.cards: list[Card | None] | None = None
        self.waste = 0
        self.rotations = 0

    def look(self, t: Tableau, rotations: int) -> None:
        """Follow the cycle to what ``t`` (face up) shows, and remember its waste top."""
        size, waste = len(t.waste) + len(t.stock), len(t.waste)
        cards = self.cards
        if cards is None:
            cards = [None] * size
        else:
            if rotations != self.rotations and rotations:
                # Everyone was stuck: the cycle's first card went to the end, once per rotation
                # (the count starts again from 0 once a card is played).
                turns = rotations - self.rotations if rotations > self.rotations else rotations
                for _ in range(turns % len(cards) if cards else 0):
                    cards.append(cards.pop(0))
            if size == len(cards) - 1 and self.waste:
                del cards[self.waste - 1]  # the waste top was played
            elif size == len(cards) + 1 and waste:
                cards.insert(waste - 1, None)  # a lost race put a card back on the waste
            elif size != len(cards):
                cards = [None] * size  # lost track: forget rather than misplace
        if waste:
            cards[waste - 1] = t.waste[-1]
        self.cards, self.waste, self.rotations = cards, waste, rotations

    def below_top(self, depth: int) -> Card | None:
        """The waste card ``depth`` places under the top, if the bot saw it, else ``None``."""
        i = self.waste - 1 - depth
        return self.cards[i] if self.cards is not None and i >= 0 else None

    def pass_tops(self, draw: int) -> list[Card | None]:
        """The cards that will be the waste top, turn after turn, over the next pass through
        the stock (``None`` where the bot does not know the card)."""
        cards = self.cards or []
        return _cycle_tops(tuple(reversed(cards[self.waste :])), tuple(cards[: self.waste]), draw)


def _cycle_tops(
    stock: tuple[Card | None, ...], waste: tuple[Card | None, ...], draw: int
) -> list[Card | None]:
    """The cards that will be the waste top, turn after turn, over one pass of the stock."""
    s, w = list(stock), list(waste)
    tops = []
    for _ in range(-(-(len(s) + len(w)) // draw) + 1):
        if s:
            n = min(draw, len(s))
            turned = s[-n:]
            del s[-n:]
            w.extend(reversed(turned))
            tops.append(w[-1])
        elif w:
            s, w = w[::-1], []
    return tops
