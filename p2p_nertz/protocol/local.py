"""The local player's actions: what a claim in the air or a rotation not yet final freezes,
and whether the game may be ended by an abandon.

Theory of operation
-------------------
A player plays on the tentative fold, which a late event may still change. Two things keep a
move of ours legal whichever way the race goes (docs/protocol.md §7.3, §8.7): a pile one of our
claims in the air (not final yet) came from is frozen until the claim is decided, so a lost
race can always put the card back (and a slide-under may not count on a pile such a claim
emptied); and while an everyone-stuck rotation the table shows is not final, the waste and the
stock are frozen (an event not held here may still mean that nothing rotates). And while the
tentative fold leaves events of our own uncounted (:func:`own_held_back`: a majority's votes
on us, their withdrawals not held yet), we play nothing: its table is not the one our feed
shows, and a move made on it turns up again cards our feed has shown, a deck mismatch in
every fold that counts our events (§13, *two members' withdrawals held at once*).

An abandon (§9.3, DESIGN.md §6) ends a game of two whose other member has gone:
:func:`abandon_answer` is the one answer to "may this member abandon now, and if not why", as
:meth:`~p2p_nertz.lobby.HostLobby.why_not_start` is for a start. The peer's ``abandon`` takes
it, the table offers the key by it (:meth:`~p2p_nertz.ui.tracker.Tracker.may_abandon`), the
bots of the node and the simulator act on it.

This module owns no state: it reads the folds it is given and returns the move to sign (or
raises, and nothing changes), or the answer. The peer signs it.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.abandonment import NoPartner, Refusal
from p2p_nertz.protocol.bodies import Drop, DropReason, Play, parse_body
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.membership import Membership
from p2p_nertz.protocol.state import Event, GameState, Phase, abandon_partner
from p2p_nertz.rules import Card, Move, MoveKind, Pile, Rules, Table

__all__ = [
    "AbandonAnswer",
    "AbandonRefused",
    "ClaimLost",
    "MoveAnswer",
    "MoveRefusal",
    "MoveRefused",
    "abandon_answer",
    "abandoned_by",
    "claimed_piles",
    "drop_pending",
    "local_move",
    "own_held_back",
    "own_claims",
    "rotation_pending",
    "touches",
]


@dataclass(frozen=True, slots=True)
class AbandonAnswer:
    """Whether the local member may end the game by an abandon now (:func:`abandon_answer`).

    Attributes:
        why: why the core refuses an abandon now, in words; ``None``: it takes one.
        partner: the one other member left, whom an abandon would put out; ``None``: there is
            none now (``why`` says why not).
        silent: seconds ``partner`` has counted as silent: its silence, or as long as the core
            counts it gone when it talks while finality waits for it (``drop_after`` plus
            :meth:`Membership.gone_for`).
        wait: seconds the core still wants ``partner`` gone before it takes an abandon (``0``:
            it takes one now).
        refusal: ``why`` as a code, for a front end to say in its own words (``None`` with
            ``why``: only the words, as from a test's fake core).
        others: the other members still in, that the refusal is about (``OTHERS``: by the
            final fold; ``HELD_BACK``: the one gone).
        pending: members whose drop is not final yet (``OTHERS``, ``HELD_BACK``).
        back: dropped members readmitted to play from the next round (§9.8): an abandon
            ends the game before that round, so it shuts them out too (a front end says so
            in its offer: a newcomer's "a ends the game (Bea gone)" hid it).
    """

    why: str | None
    partner: int | None = None
    silent: float = 0.0
    wait: float = 0.0
    refusal: Refusal | None = None
    others: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()
    back: tuple[int, ...] = ()


class AbandonRefused(LocalProtocolError):
    """Raised when the core refuses an abandon (:meth:`~p2p_nertz.protocol.peer.Peer.abandon`):
    the message is the core's words, :attr:`answer` the whole answer, for a front end's."""

    def __init__(self, answer: AbandonAnswer) -> None:
        super().__init__(answer.why)
        self.answer = answer


class MoveRefusal(enum.Enum):
    """Why the core refuses a move of the local player now, as a code
    (:attr:`MoveAnswer.refusal`): each front end says it in its own words (a person knows
    players and cards, not members, drops and events); the core's words are for logs and
    errors."""

    NOT_IN_PLAY = "not in play"  #: the round is not in play (between rounds, or over)
    NOT_DEALT = "not dealt"  #: our deal is not done yet
    HELD_BACK = "held back"  #: the others' votes cut our own events for now (§13)
    IN_THE_AIR = "in the air"  #: a card from ``pile`` is in the air (§7.3)
    ROTATING = "rotating"  #: the stocks rotate, everyone stuck, and that is not final yet
    DROP_PENDING = "drop pending"  #: the drop of ``seats`` is undecided, and the rotation
    SLIDE = "slide"  #: a slide-under needs ``pile``, empty only while a claim is in the air
    LOST = "lost"  #: ``card`` no longer fits: a claim of ``seats`` (the winner) got there first
    RECOVERING = "recovering"  #: still recovering our own events after a restart (§9.6)
    LEFT = "left"  #: we left the game


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    """Why the core refused a move, for a front end to say in its own words
    (:class:`MoveRefused`, :class:`ClaimLost`).

    Attributes:
        refusal: the reason, as a code.
        seats: the seats it is about (``DROP_PENDING``: the undecided ones; ``LOST``: the
            winner, when the core knows it).
        pile: the pile it is about (``IN_THE_AIR``, ``SLIDE``).
        card: the card it is about (``LOST``).
    """

    refusal: MoveRefusal
    seats: tuple[int, ...] = ()
    pile: Pile | None = None
    card: Card | None = None


class MoveRefused(LocalProtocolError):
    """Raised when the core refuses a move of the local player now (not against the rules,
    but not now): the message is the core's words, :attr:`answer` the reason's code."""

    def __init__(self, message: str, answer: MoveAnswer) -> None:
        super().__init__(message)
        self.answer = answer


class ClaimLost(IllegalMoveError):
    """Raised when a move's card no longer fits because another player's claim won it: an
    illegal move (the table says so), with :attr:`answer` saying who won it."""

    def __init__(self, message: str, answer: MoveAnswer) -> None:
        super().__init__(message)
        self.answer = answer


def abandon_answer(
    final: GameState,
    tentative: GameState,
    membership: Membership,
    now: float,
    *,
    names: Sequence[str],
    recovering: bool,
    left: bool,
    abandoned: Collection[int] = (),
    unheard: bool = False,
) -> AbandonAnswer:
    """Whether ``membership.seat`` may abandon now: who may abandon whom is
    :func:`~p2p_nertz.protocol.state.abandon_partner`'s rule, how long the other has counted
    as gone the membership's (:meth:`Membership.gone_for`); ``names`` are each seat's player,
    ``recovering`` and ``left`` the peer's state (nothing is signed before our own feed is
    known, §9.6, nor after we left); ``abandoned``: the members our feed already abandons
    (:func:`abandoned_by`): an abandon is signed once, and waits to be final, never signed
    again (chaos demo seed 14: one the fold did not show was signed every few ticks);
    ``unheard``: no member has told us what it holds of our feed since we started (§9.6)."""
    if unheard and not recovering:
        why = "no member has been heard since we started: our key may be signing elsewhere"
        return AbandonAnswer(why, refusal=Refusal.UNHEARD)
    if recovering:
        why = "still recovering our own events from the others"
        return AbandonAnswer(why, refusal=Refusal.RECOVERING)
    if left:
        return AbandonAnswer("we left the game", refusal=Refusal.LEFT)
    partner = abandon_partner(final, tentative, membership.seat)
    if isinstance(partner, NoPartner):
        # Left alone with a member that has gone, the drops not final: what the game waits
        # for (held_back_by_gone).
        held = held_back_by_gone(membership, now, final, tentative)
        if held is None:
            refusal, others, pending = partner.refusal, partner.others, partner.pending
            return AbandonAnswer(
                str(partner), None, refusal=refusal, others=others, pending=pending
            )
        away, pending = held
        why = _held_back_words(away, pending, names)
        return AbandonAnswer(why, refusal=Refusal.HELD_BACK, others=(away,), pending=pending)
    if partner in abandoned:
        why = "we abandoned the game already: it ends once that is final"
        return AbandonAnswer(why, partner, refusal=Refusal.ABANDONED)
    drop_after = membership.timers.drop_after
    gone = membership.gone_for(partner, now)
    back = tuple(sorted(s for s in final.rejoining if s not in final.left))
    if gone >= 0:
        return AbandonAnswer(None, partner, drop_after + gone, back=back)
    # Said to the player: the name and the seat, as the table shows them.
    silent = now - membership.heard[partner]
    why = (
        f"{names[partner]} (seat {partner}) was heard {silent:.1f} s ago; an abandon needs "
        f"{drop_after:g} s of silence ({max(drop_after - silent, 0.1):.1f} s more)"
    )
    return AbandonAnswer(why, partner, drop_after + gone, -gone, refusal=Refusal.HEARD, back=back)


def abandoned_by(
    own: Sequence[Message], seats: int, read: dict[bytes, int | None] | None = None
) -> set[int]:
    """The members the abandons in ``own`` (a member's feed) put out (§9.3): the one test of
    "signed already" for the abandon we sign and the one we answer with. ``read``: message id
    -> the member its abandon puts out (``None``: not an abandon), kept by a caller that asks
    again as the feed grows (the table's abandon answer, at every look: the bodies of a
    soak's votes parsed again and again were 8% of its CPU). A drop whose body does not parse
    puts nobody out: an honest peer's feed holds none, a liar's own may (session 39's scan,
    seed 305: a liar's rejoin the schema refuses made its table's abandon answer raise)."""
    out = set()
    for m in own:
        if m.kind is Kind.DROP:
            if read is not None and m.id in read:
                target = read[m.id]
            else:
                target = None
                try:
                    body = parse_body(m.kind, m.body, seats)
                except ValueError:  # (a liar's own feed: what it signed unread, not an abandon)
                    body = None
                if isinstance(body, Drop) and body.reason is DropReason.ABANDON:
                    target = body.seat
                if read is not None:
                    read[m.id] = target
            if target is not None:
                out.add(target)
    return out


def own_claims(nonfinal: Iterable[Event], seat: int) -> list[Event]:
    """The claims of ``seat`` among the held events not final yet ("in the air")."""
    return [e for e in nonfinal if e.seat == seat and e.kind is Kind.CLAIM]


def claimed_piles(claims: Iterable[Event]) -> set[Pile]:
    """The piles ``claims`` came from."""
    piles = set()
    for ev in claims:
        body = ev.body
        assert isinstance(body, Play) and body.move.source is not None
        piles.add(body.move.source)
    return piles


def rotation_pending(tentative: GameState, final: GameState) -> bool:
    """Whether the table shows an everyone-stuck rotation that is not final yet.

    Until it is, an event not held here may still come before the last pass (a seat's move
    after its own pass) and mean that nothing rotates: a move of the waste or the stock made on
    the rotated view would then be refused by every fold (§8.7).
    """
    shown = tentative.round
    if shown.rotation_seen is None:
        return False
    return shown.number != final.round.number or shown.rotation_seen != final.round.rotation_seen


def drop_pending(tentative: GameState, undecided: Collection[int]) -> bool:
    """Whether a member the table still has in play may yet be out in the past: its drop
    only caps or the tentative fold's own cuts keep undecided (``undecided``:
    ``Folds.capped_drops``, ``Folds.uncut_drops``), and a withdrawal not held here decides it.

    Out from its drop on, it no longer holds the everyone-stuck rotation back: the others,
    stuck by then, rotated at its drop or at the last of their passes, where the table shown
    waits for its pass. A move of the waste or the stock made on that table turns up what the
    stock showed before the rotation, and every fold that drops the member refuses it as a deck
    mismatch of an honest member (``scan_late_lift.py --pairs``, three players seed 32:
    docs/protocol.md §13, *two members' withdrawals held at once*).
    """
    table = tentative.table
    return table is not None and any(table.active[q] for q in undecided)


def touches(move: Move) -> set[Pile]:
    """The piles of its player a move takes from or puts on (the lake is nobody's)."""
    if move.kind in (MoveKind.TURN, MoveKind.ROTATE):
        return {Pile.WASTE}
    if move.kind is MoveKind.CALL:
        return {Pile.NERTS}
    touched = set()
    if move.source is not None:
        touched.add(move.source)
    if move.target is not None and move.target is not Pile.LAKE:
        touched.add(move.target)
    return touched


def own_held_back(tentative: GameState, final: GameState, seat: int) -> int | None:
    """The first of ``seat``'s events that the tentative fold holds back though no cut or gap
    of its own skips it, or the first past the seat's own cut there; ``None`` if it counts all
    it holds of the seat that may count.

    A fold may skip a member's events past a cut that it tries (the votes on the member
    counting, a vote of the member capping them in turn: :meth:`Folds._fold`'s rounds) and
    not drop the member in the end; its table then shows the member as it was at the cut.
    Only the events read since the final fold count here (a member readmitted keeps the
    events of its gap uncounted for good).

    >>> from p2p_nertz.protocol.identity import Identity
    >>> from p2p_nertz.protocol.spec import GameSpec
    >>> keys = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(3)]
    >>> final = GameState(GameSpec.create(list(zip(keys, "ABC")), Rules(), b"doc"))
    >>> tentative = final.copy()
    >>> own_held_back(tentative, final, 0) is None
    True
    >>> tentative.roster.uncounted[0] = 42  # (read, and not counted: skipped by a cut tried)
    >>> own_held_back(tentative, final, 0)
    42
    >>> tentative.dropped = {0: 41}  # (past the seat's own cut: it does not count)
    >>> own_held_back(tentative, final, 0)
    42
    """
    first = tentative.roster.uncounted.get(seat)
    if first is None or first == final.roster.uncounted.get(seat):
        return None
    cut = tentative.dropped.get(seat)
    return first if cut is not None or tentative.counts(seat, first) else None


def local_move(
    tentative: GameState,
    final: GameState,
    seat: int,
    move: Move,
    *,
    frozen: set[Pile],
    clock: int,
    rules: Rules,
    held: Table | None = None,
    undecided: Collection[int] = (),
) -> tuple[Move, Card | None, tuple[Card, ...]]:
    """Check a move of the local player at ``seat`` on the tentative fold, with ``frozen``
    the piles its claims in the air came from and ``clock`` our Lamport clock: the move to
    sign (a lake move names its foundation), the card it claims, the cards it turns up.
    ``held``: the table the player chose on, where it is not the tentative fold's (a shuffle
    game's held view, with the cards the peer's share store opens: docs/shuffle.md §10.14).
    ``undecided``: the members whose drop only caps or the tentative fold's own cuts keep
    undecided (:func:`drop_pending`).

    Raises:
        IllegalMoveError: the move is illegal now.
        LocalProtocolError: the game is not in play, or the pile is frozen by a claim in the
            air (or, for the waste and the stock, by a rotation not yet final), or a
            slide-under needs a pile that such a claim emptied.
    """
    table = held if held is not None else tentative.table
    if tentative.phase is not Phase.PLAY or table is None or table.over:
        raise MoveRefused(
            f"{move}: the round is not in play ({tentative.phase.value})",
            MoveAnswer(MoveRefusal.NOT_IN_PLAY),
        )
    if seat not in tentative.round.ready:
        raise MoveRefused(f"{move}: the deal is not done yet", MoveAnswer(MoveRefusal.NOT_DEALT))
    back = own_held_back(tentative, final, seat)
    if back is not None:
        raise MoveRefused(
            f"{move}: the others' votes put us out for now (our moves from event {back} on "
            "are uncounted here); wait until they are withdrawn, or until we rejoin",
            MoveAnswer(MoveRefusal.HELD_BACK),
        )
    _refuse_frozen(
        tentative, final, move, table=table, seat=seat, frozen=frozen, undecided=undecided
    )
    tableau = table.tableaux[seat]
    card = None
    if move.is_lake:
        assert move.source is not None
        foundation = move.foundation or table.lake_target(seat, move.source, move.declare)
        move = Move.to_lake(move.source, foundation, move.declare)
    _, play = table.play(seat, move, max(clock + 1, table.clock))
    if play.resolution is not None:
        if not play.resolution.kept:
            who = play.resolution.winner
            raise ClaimLost(
                f"{move}: {play.resolution.claim.card} no longer fits"
                + (f" (seat {who} got there first)" if who is not None else ""),
                MoveAnswer(
                    MoveRefusal.LOST,
                    seats=() if who is None else (who,),
                    card=play.resolution.claim.card,
                ),
            )
        card = play.resolution.claim.card
    if tentative.round.deck is not None:
        return move, card, ()  # a shuffle game: the table's shares turn cards up (shuffle.md §10.1)
    return move, card, tableau.reveals(move, rules)  # (the rules say what a move shows)


def _refuse_frozen(
    tentative: GameState,
    final: GameState,
    move: Move,
    *,
    table: Table,
    seat: int,
    frozen: set[Pile],
    undecided: Collection[int],
) -> None:
    """Raise :class:`MoveRefused` if ``move`` needs a pile that is not settled yet: one a
    claim in the air came from, the waste while a rotation or a drop is undecided, or the
    empty work pile of a slide-under that a claim in the air emptied (:func:`local_move`)."""
    touched = touches(move)
    if frozen & touched:
        pile = sorted(frozen & touched)[0]
        raise MoveRefused(
            f"{move}: a card from {pile!r} is in the air; wait until its claim is decided",
            MoveAnswer(MoveRefusal.IN_THE_AIR, pile=pile),
        )
    if Pile.WASTE in touched and rotation_pending(tentative, final):
        raise MoveRefused(
            f"{move}: everyone was stuck and the stocks rotate; wait until that is final",
            MoveAnswer(MoveRefusal.ROTATING),
        )
    if Pile.WASTE in touched and drop_pending(tentative, undecided):
        table_now = tentative.table
        assert table_now is not None  # (drop_pending: a table)
        raise MoveRefused(
            f"{move}: a member's drop is undecided, and with it whether the stocks rotated; "
            "wait until it is decided",
            MoveAnswer(
                MoveRefusal.DROP_PENDING,
                seats=tuple(sorted(q for q in undecided if table_now.active[q])),
            ),
        )
    tableau = table.tableaux[seat]
    if move.kind is MoveKind.SLIDE and frozen and tableau.has_empty_work_pile():
        # A slide-under needs an empty work pile, and one emptied by a claim in the air is
        # empty only if the claim wins: the move must be legal either way (§7.3).
        empty = [p for p in tableau.work_piles if not tableau.work[p - 1]]
        if all(p in frozen for p in empty):
            raise MoveRefused(
                f"{move}: a slide-under needs an empty work pile, and pile {empty[0]} is "
                "empty only while its claim is in the air; wait until it is decided",
                MoveAnswer(MoveRefusal.SLIDE, pile=empty[0]),
            )


def held_back_by_gone(
    membership: Membership, now: float, final: GameState, tentative: GameState
) -> tuple[int, tuple[int, ...]] | None:
    """What the game waits for when ``membership``'s held votes leave us alone with a member
    that has gone, and their drops are not final (§13, ``--variants`` soak seed 98): the gone
    member and the members whose drop waits (:func:`_held_back_words` says it); ``None``
    otherwise.

    Those drops are final only once everything up to them is, which needs the gone
    member's events and cover; and it can be removed only by an abandon, which needs them
    final (§9.3). No rule is safe here: it may have signed, unseen, a withdrawal that
    undoes a drop. So the player is told what the game waits for, not only "no".
    """
    held = [q for q in range(membership.n) if q not in tentative.dropped]
    pending = [q for q in range(membership.n) if q in tentative.dropped and q not in final.dropped]
    if final.phase is Phase.OVER or len(held) != 2 or membership.seat not in held or not pending:
        return None
    (other,) = (q for q in held if q != membership.seat)
    if membership.gone_for(other, now) < 0:
        return None
    return other, tuple(pending)


def _held_back_words(other: int, pending: Sequence[int], names: Sequence[str]) -> str:
    """The core's words for :func:`held_back_by_gone`'s answer (``names``: each seat's)."""
    out = ", ".join(f"{names[q]} (seat {q})" for q in pending)
    gone = f"{names[other]} (seat {other})"
    return (
        f"the vote that put {out} out is final only with {gone}'s last events, and "
        f"{gone} has gone: the game goes on if {gone} comes back; you can leave"
    )
