"""A shuffle game's cheaters for the simulator: a member that lies in its deal (issue 19).

A :class:`DeckCheat` makes one member break the dealerless shuffle (docs/shuffle.md §7.4) the
way a modified client would: it signs with its own key, in its own feed, what its honest duties
would have signed, changed.

* ``substitute``: in its last stage of a deck (which fixes where each card ends up, §7.4) it
  puts a fresh encryption of another position's card in place of the card of the first work
  pile's place: that card is dealt face up, its double turns up later (opening to no card,
  §5), and the checks after the round name the stage (``bad_stage``): the member forfeits.
* ``bad_share``: its first ``deck_reveal`` beat (the shares of a move's turn-up travel in
  beats alone, docs/shuffle.md §10.14) carries a point that is not its share (the proof
  fails): every peer refuses it on arrival (``bad_share``) and keeps the signed beat in its
  log as a ``bad_share`` note, which the audit checks and names it on; the position waits for
  a right share that never comes: it is voted out *withheld* and the members left open its
  shares for it (§6.4, §10.4).
* ``withhold``: it sends no ``deck_reveal`` of its own from its first after the deal on, and
  goes on with everything else (the deal's face-up shares included): voted out *withheld* as
  above.
* ``withhold_answer``: it boxes garbage to the first other member in its dealing (that member
  complains, §6.3) and never answers the complaint: voted out *withheld* (from three members;
  with two there is no dealing, and nothing to cheat with).
* ``withhold_partial``: it sends none of its partial shares for a member dropped (§6.4): where
  the position needs them, voted out *withheld*. Only a member dropped mid-round makes it owe
  any (the test crashes one); with two members there are no partials.
* ``late_answer``: as ``withhold_answer`` until its process restarts; restarted, it answers
  rightly (a modified client replaced by an honest one). The answer is delivered after the
  votes cast while it withheld it, which hold it back from finality (each voter's
  announcements of the member's feed froze at its vote): a vote is withdrawn once its voter
  holds the answer (docs/shuffle.md §10.12; soak seed 518's shape, where the simulator
  installed the cheat only after the restarted core had answered).
* ``late_key`` and ``late_secret``: it signs no ``deck_key`` (``deck_open``) of the round
  until its process restarts, then signs it (a modified client replaced by an honest one).
  As for ``late_answer``, the event is delivered after the votes cast while it withheld it,
  which hold it back from finality: a vote is withdrawn once its voter holds the event
  (docs/shuffle.md §10.13). ``late_nonce`` is the same in a commit game (its nonce, once
  every commit is in): the one cheat here for that deal.
* ``wrong_answer``: as ``withhold_answer``, but it answers, with a share that is not the one
  its commitments fix: refused (``bad_dealing``, the signed answer the proof), then voted out
  *withheld* as the complaint stays unanswered; the audit names the wrong answer, and no
  withheld one.
* ``false_complaint`` and ``late_complaint``: it complains of the box of the first other
  member with a dealing, whose box was right, once: as the deal begins, or as the open phase
  does (before its ``deck_open``). The dealer is honest: it answers once its final fold holds
  the complaint, and the audit must not name it (``withheld_answer``, docs/shuffle.md §7.3),
  however late the complaint came. ``play_complaint`` complains so once play has begun,
  after the dealer's last stage. Not among the soak's cheats (``scripts/soak.py``).
* ``unanswered``: it answers no complaint of its box (which it dealt right) and reveals no
  secret, and goes on with everything else, its shares included, holding the complaint: with
  a ``play_complaint`` of another member it signs no stage or secret after the complaint (the
  deal is over; it is voted out *withheld*), and only its shares prove the answer withheld
  (``withheld_answer``, docs/shuffle.md §6.3, §7.3).
* ``silent_dealer``: as ``unanswered``, but its shares wait for the answer as an honest
  dealer's do (``Duties``): once its held fold holds the complaint it signs no share, no
  answer and no secret, and goes on playing its moves until it is voted out *withheld*. With
  a ``play_complaint`` of another member only its moves are left to read: a move whose causal
  past proves its final fold held the complaint proves the answer withheld
  (``withheld_answer``, docs/shuffle.md §7.3).
* ``mute_dealer``: as ``silent_dealer``, but from the moment its held fold holds the
  complaint it signs nothing at all (no move, no vote); its beats and acks go on, so it is
  heard, and voted out *withheld*. No event of its proves the answer withheld: the votes do,
  and the audit's report lists the drop, its reason and the answer owed
  (``AuditReport.drops``, docs/shuffle.md §7.3).
* ``votes_only_dealer``: as ``mute_dealer``, but its votes go on, and ``drop_after`` after its
  final fold held the complaint it votes its complainer out *silent* (a modified client that
  claims it no longer hears it), at the end of an input as such a vote is signed: a vote
  whose causal past proves its final fold held the complaint proves the answer withheld
  (``withheld_answer``, docs/shuffle.md §7.3).
* ``sealed_move``: a voter that moves a card nobody opened. Once a vote of its against a
  member stands that its final fold has not dropped yet, it turns its stock and, in the same
  act, plays its waste top onto its first work pile, before any other share of that card can
  reach it: the card is sealed in every fold, and the voter's frontier (frozen at its vote,
  §9.2 of protocol.md) shows nothing of the member past the cut. The fold refuses it with
  blame (``illegal_move``; docs/shuffle.md §9: a vote is no proof of holding the member's
  events past the cut). Not among the soak's cheats.

A :class:`VoteFlapper` is a member that breaks no deal but floods the membership rules: it
votes a member out for silence and withdraws the vote, ``flaps`` times, one step every
``every`` seconds of its inputs (a vote, then its withdrawal), the member it votes on being
heard all along. Each is an event it signs and pays for as the others do; what it must not buy
is more than its share of the others' CPU (the membership fold's cost per input grows with the
votes and withdrawals read, docs/protocol.md §9.2, *a member that flaps*).

The simulator installs a cheat on the member's peer core (and again on each restart) by
wrapping its duties: the core's rules stay the honest ones, and its own fold reads what it
signed like any other peer's.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.deck.elgamal import Deck, reencrypt
from p2p_nertz.deck.group import ORDER, add, base_mul, hash_scalar
from p2p_nertz.deck.wire import (
    DeckAnswer,
    DeckComplain,
    DeckKey,
    DeckOpen,
    DeckShares,
    DeckStage,
)
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Beat,
    DeckEvent,
    DeckReveal,
    Drop,
    DropReason,
    EventBody,
    Play,
    Reveal,
    RevealWhat,
    Want,
    encode_body,
)
from p2p_nertz.protocol.effects import Effect, Send
from p2p_nertz.protocol.envelope import Kind, encode_message
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import NERTS_PILE_SIZE, Move, Tableau
from p2p_nertz.rules.cards import sealed_position

if TYPE_CHECKING:
    from p2p_nertz.protocol.duties import Duties
    from p2p_nertz.protocol.peer import Peer
    from p2p_nertz.protocol.state import GameState

__all__ = ["DeckCheat", "DeckCheatKind", "VoteFlapper", "install", "signed_as", "signed_beat"]


class DeckCheatKind(enum.StrEnum):
    """What a shuffle cheater does (the module docstring)."""

    SUBSTITUTE = "substitute"
    BAD_SHARE = "bad_share"
    WITHHOLD = "withhold"
    WITHHOLD_ANSWER = "withhold_answer"
    WITHHOLD_PARTIAL = "withhold_partial"
    FALSE_COMPLAINT = "false_complaint"
    WRONG_ANSWER = "wrong_answer"
    LATE_COMPLAINT = "late_complaint"
    LATE_ANSWER = "late_answer"
    LATE_KEY = "late_key"
    LATE_SECRET = "late_secret"
    LATE_NONCE = "late_nonce"
    SEALED_MOVE = "sealed_move"
    PLAY_COMPLAINT = "play_complaint"
    UNANSWERED = "unanswered"
    SILENT_DEALER = "silent_dealer"
    VOTES_ONLY_DEALER = "votes_only_dealer"
    MUTE_DEALER = "mute_dealer"


#: The phase a false complaint is made in, at the first act of the cheater's final fold there.
_COMPLAINT_PHASES = {
    DeckCheatKind.FALSE_COMPLAINT: Phase.DEAL,
    DeckCheatKind.LATE_COMPLAINT: Phase.OPEN,
    DeckCheatKind.PLAY_COMPLAINT: Phase.PLAY,
}


#: The cheats that spoil a box (and answer its complaint wrongly, late or never).
_ANSWER_CHEATS = (
    DeckCheatKind.WITHHOLD_ANSWER,
    DeckCheatKind.WRONG_ANSWER,
    DeckCheatKind.LATE_ANSWER,
)


#: The cheats that never answer, or answer wrongly or late: their shares go as they would
#: without the answer's wait (:func:`_ungated`).
_UNGATED = frozenset({*_ANSWER_CHEATS, DeckCheatKind.UNANSWERED})


#: The dealers that answer no complaint of their box and, once their held fold holds one, sign
#: nothing (``mute_dealer``) or only votes (``votes_only_dealer``): :func:`_muted`.
_MUTED = frozenset({DeckCheatKind.VOTES_ONLY_DEALER, DeckCheatKind.MUTE_DEALER})


#: The dealers that never answer a complaint of their box, nor reveal their secret.
_SILENT = frozenset({DeckCheatKind.UNANSWERED, DeckCheatKind.SILENT_DEALER, *_MUTED})


#: The cheats that withhold a phase event until the process restarts, and which event.
_LATE_EVENTS: dict[DeckCheatKind, type[DeckKey] | type[DeckOpen]] = {
    DeckCheatKind.LATE_KEY: DeckKey,
    DeckCheatKind.LATE_SECRET: DeckOpen,
}


@dataclass(frozen=True, slots=True)
class DeckCheat:
    """Seat ``seat`` cheats in round ``round``'s deal as ``kind`` says."""

    seat: int
    kind: DeckCheatKind
    round: int = 1


@dataclass(frozen=True, slots=True)
class VoteFlapper:
    """Seat ``seat`` votes ``target`` out for silence and withdraws it, ``flaps`` times, one
    vote or withdrawal every ``every`` seconds from ``start`` on (the module docstring)."""

    seat: int
    target: int
    flaps: int
    every: float = 0.05
    start: float = 1.0


def install(peer: Peer, cheat: DeckCheat | VoteFlapper, *, restarted: bool = False) -> None:
    """Make ``peer`` (``cheat.seat``'s core) cheat from now on: its duties' phase events go
    through :func:`_tamper` (a :class:`VoteFlapper`'s liveness through :func:`_flap`).
    ``restarted``: the core is restored from its log (a ``late_answer`` cheater answers
    then)."""
    if isinstance(cheat, VoteFlapper):
        _flap(peer, cheat)
        return
    _tamper(peer, cheat, restarted=restarted)
    if cheat.kind in _MUTED:
        _muted(peer, cheat)
    if cheat.kind is DeckCheatKind.VOTES_ONLY_DEALER:
        _accuse(peer, cheat)


def _tamper(peer: Peer, cheat: DeckCheat, *, restarted: bool) -> None:
    """:func:`install`'s :class:`DeckCheat`: its duties' phase events, changed."""
    duties = peer._duties  # (the simulator's cheat reaches into the core on purpose)
    honest = duties.phase_event
    lied: list[bool] = []  # (a bad share is sent once; a false complaint too)

    def phase_event(
        final: GameState, ready_through: int | None, tentative: GameState | None = None
    ) -> EventBody | None:
        lie = None if lied else _one_lie(peer, final, cheat)
        if lie is not None:
            lied.append(True)
            return lie
        # (an answer's cheat: its shares do not wait for the answer it owes, _ungated)
        ungated = _ungated(duties, final, tentative) if cheat.kind in _UNGATED else None
        body = ungated or honest(final, ready_through, tentative)
        if cheat.kind in _SILENT:
            return _unanswered(duties, body, cheat)
        if cheat.kind is DeckCheatKind.LATE_NONCE:
            nonce = isinstance(body, Reveal) and body.what is RevealWhat.NONCE
            return None if nonce and not restarted else body
        if cheat.kind in _COMPLAINT_PHASES or cheat.kind is DeckCheatKind.SEALED_MOVE:
            return body  # (its complaint, or its move, is its one lie)
        if not isinstance(body, DeckEvent) or getattr(body.message, "round", 0) != cheat.round:
            return body
        message = body.message
        if cheat.kind in _LATE_EVENTS:
            if isinstance(message, _LATE_EVENTS[cheat.kind]) and not restarted:
                return None  # (not marked done: signed once the process restarts)
            return body
        if cheat.kind is DeckCheatKind.SUBSTITUTE and isinstance(message, DeckStage):
            return dataclasses.replace(body, message=_substituted(message, final))
        if cheat.kind in _ANSWER_CHEATS:
            if isinstance(message, DeckAnswer):
                if cheat.kind is DeckCheatKind.LATE_ANSWER and restarted:
                    return body
                if cheat.kind is DeckCheatKind.WRONG_ANSWER:
                    wrong = (message.share + 1) % ORDER
                    return dataclasses.replace(
                        body, message=dataclasses.replace(message, share=wrong)
                    )
                duties.mark_done(Kind.DECK_ANSWER, body)  # (never sent: on to what is next)
                return None
            if isinstance(message, DeckKey) and message.dealing is not None:
                return dataclasses.replace(body, message=_garbage_box(message))
            return body
        if not isinstance(message, DeckShares) or cheat.kind is DeckCheatKind.SUBSTITUTE:
            return body
        return _tampered_shares(peer, body, message, cheat, lied)

    duties.phase_event = phase_event
    if cheat.kind in (DeckCheatKind.BAD_SHARE, DeckCheatKind.WITHHOLD):
        _tamper_reveals(duties, cheat, lied)


def _tamper_reveals(duties: Duties, cheat: DeckCheat, lied: list[bool]) -> None:
    """``bad_share`` and ``withhold`` on the beats (docs/shuffle.md §10.14): the shares of a
    move's turn-up travel in ``deck_reveal`` beats alone (:meth:`Duties.reveals`). In the
    cheat's round a withholder sends none (each marked sent, so it goes on with the rest), and
    a bad sharer's first beat carries a point that is not its share (the proof fails)."""
    honest = duties.reveals

    def reveals(final: GameState, tentative: GameState | None) -> list[DeckReveal]:
        beats = honest(final, tentative)
        if not beats or beats[0].round != cheat.round:
            return beats
        if cheat.kind is DeckCheatKind.WITHHOLD:
            return []
        if lied:
            return beats
        lied.append(True)
        first = beats[0]
        share = first.shares[0]
        bad = dataclasses.replace(share, point=add(share.point, base_mul(1)))
        return [dataclasses.replace(first, shares=(bad, *first.shares[1:])), *beats[1:]]

    duties.reveals = reveals


def _flap(peer: Peer, cheat: VoteFlapper) -> None:
    """``vote_flapper``: at the end of an input (``Author.liveness``), once ``every`` has
    passed since its last step, the member votes ``target`` out for silence counting all it
    holds, or withdraws that vote, until it has done both ``flaps`` times (a process
    restarted starts counting again). Not while it or the target is out, nor once it has
    left."""
    author = peer._author  # (the simulator's cheat reaches into the core on purpose)
    honest = author.liveness
    due = [cheat.start]
    steps = [0]

    def liveness(now: float) -> None:
        honest(now)
        if now < due[0] or author.left:
            return
        final = author.final
        if cheat.target in final.dropped or peer.seat in final.dropped:
            return
        if steps[0] >= 2 * cheat.flaps:
            return
        steps[0] += 1
        due[0] = now + cheat.every
        membership = author.membership
        if cheat.target in membership.voted:
            membership.voted.pop(cheat.target)
            author.emit(Drop(author.frontier(), cheat.target, 0, DropReason.WITHDRAW), now)
        else:
            author.vote(cheat.target, DropReason.SILENT, now)

    author.liveness = liveness


def _tampered_shares(
    peer: Peer, body: DeckEvent, message: DeckShares, cheat: DeckCheat, lied: list[bool]
) -> EventBody | None:
    """A ``deck_shares`` of the cheat's round as a share cheat sends it (``withhold_partial``,
    ``withhold``, ``bad_share``): what ``install``'s phase event returns for one."""
    if cheat.kind is DeckCheatKind.WITHHOLD_PARTIAL:
        kept = tuple(s for s in message.shares if s.of_seat == message.seat)
        if len(kept) == len(message.shares):
            return body
        peer._duties.mark_done(Kind.DECK_SHARES, body)  # (its partials count as sent: never)
        if not kept:
            return None
        return dataclasses.replace(body, message=dataclasses.replace(message, shares=kept))
    dealt = _dealt_face_up(peer)
    own = [
        k
        for k, s in enumerate(message.shares)
        if s.of_seat == message.seat and s.position not in dealt
    ]
    if not own:
        return body
    shares = list(message.shares)
    if cheat.kind is DeckCheatKind.WITHHOLD:
        # Its own shares never leave; whatever else it owed (partials, the deal's) does.
        peer._duties.mark_done(Kind.DECK_SHARES, body)  # (so it goes on to what is next)
        shares = [s for k, s in enumerate(shares) if k not in own]
        if not shares:
            return None
    elif not lied:
        lied.append(True)
        first = shares[own[0]]
        shares[own[0]] = dataclasses.replace(first, point=add(first.point, base_mul(1)))
    return dataclasses.replace(body, message=dataclasses.replace(message, shares=tuple(shares)))


def _ungated(duties: Duties, final: GameState, tentative: GameState | None) -> EventBody | None:
    """A shuffle round's event of a member whose shares do not wait for an answer its held
    fold owes (``Duties.phase_event`` without that wait): a dealer that withholds its answer
    does not hold back its shares for it. ``None``: nothing, or not a shuffle round's."""
    rs = final.round
    if rs.deck is None or duties.seat not in rs.seats or duties.seat in rs.forfeit:
        return None
    deck = rs.deck
    return duties._deck_event(final, deck) or duties._tentative_shares(tentative, rs.number, deck)


def _unanswered(duties: Duties, body: EventBody | None, cheat: DeckCheat) -> EventBody | None:
    """``unanswered``: the honest duties of a member that never learns what its held fold
    holds (no share waits for an answer), but for its answers and its secret, never sent."""
    if not isinstance(body, DeckEvent) or getattr(body.message, "round", 0) != cheat.round:
        return body
    if isinstance(body.message, DeckAnswer):
        duties.mark_done(Kind.DECK_ANSWER, body)  # (never sent: on to what is next)
        return None
    if isinstance(body.message, DeckOpen):
        duties.mark_done(Kind.DECK_OPEN, body)
        return None
    return body


def _owes(state: GameState, seat: int, cheat: DeckCheat) -> list[int]:
    """The members whose complaint of ``seat``'s box, in the cheat's round, ``state`` holds
    unanswered."""
    rs = state.round
    deck = rs.deck
    if rs.number != cheat.round or deck is None or seat not in deck.members:
        return []
    return deck.answers_owed(seat)


def _muted(peer: Peer, cheat: DeckCheat) -> None:
    """``mute_dealer``, ``votes_only_dealer``: from the moment its held fold holds a complaint
    of its box unanswered, the peer signs nothing (its moves, its votes, ...), or nothing but
    its votes. Its beats and acks go on: it is heard, and withholds."""
    author = peer._author  # (the simulator's cheat reaches into the core on purpose)
    honest = author.emit
    muted: list[bool] = []

    def emit(body: EventBody, now: float | None) -> None:
        if not muted and _owes(peer._chains.folds.tentative, peer.seat, cheat):
            muted.append(True)
        votes = cheat.kind is DeckCheatKind.VOTES_ONLY_DEALER
        if muted and not (votes and isinstance(body, Drop)):
            return
        honest(body, now)

    author.emit = emit


def _accuse(peer: Peer, cheat: DeckCheat) -> None:
    """``votes_only_dealer``: ``drop_after`` after its final fold first held a complaint of
    its box, it votes the complainer out *silent*, once, at the end of an input as a vote for
    silence is signed (``Author.liveness``): a modified client that claims it no longer hears
    its complainer (the others hear it, and never join the vote)."""
    author = peer._author
    honest = author.liveness
    since: list[float] = []
    accused: set[int] = set()

    def liveness(now: float) -> None:
        honest(now)
        final = author.final
        owed = _owes(final, peer.seat, cheat)
        if not owed:
            return
        if not since:
            since.append(now)
        if now < since[0] + author.config.drop_after:
            return
        deck = final.round.deck
        assert deck is not None
        for complainer in owed:
            seat = deck.members[complainer]
            if seat not in final.dropped and seat not in accused:
                accused.add(seat)
                author.vote(seat, DropReason.SILENT, now)

    author.liveness = liveness


def _false_complaint(
    final: GameState, seat: int, cheat: DeckCheat, phase: Phase
) -> EventBody | None:
    """A complaint of the first other member's box (which opened and checked), if the final
    fold is in ``phase`` of the cheat's round and the deal has VSS dealings."""
    deck = final.round.deck
    if final.round.number != cheat.round or final.phase is not phase or deck is None:
        return None
    if seat not in deck.members or seat in final.round.forfeit:
        return None
    me = deck.member(seat)
    dealers = [i for i, k in sorted(deck.keys.items()) if i != me and k.dealing is not None]
    if not dealers or (dealers[0], me) in deck.complaints:
        return None
    return DeckEvent((), DeckComplain(cheat.round, dealers[0], deck.attempt))


def _one_lie(peer: Peer, final: GameState, cheat: DeckCheat) -> EventBody | None:
    """The one lie of a cheat that lies once by an event of its own (a false complaint, a
    voter's sealed move), if now is its time."""
    if cheat.kind in _COMPLAINT_PHASES:
        return _false_complaint(final, peer.seat, cheat, _COMPLAINT_PHASES[cheat.kind])
    if cheat.kind is DeckCheatKind.SEALED_MOVE:
        return _sealed_move(peer, final, cheat)
    return None


def _sealed_move(peer: Peer, final: GameState, cheat: DeckCheat) -> EventBody | None:
    """The voter's move on a sealed card (``sealed_move``), if now is its time: a vote of
    ours against a member our final fold has not dropped stands. The stock turn is signed
    here; the move on the waste top it turned is returned (the caller signs it in the same
    act: no other member's share of the card is held by then)."""
    author = peer._author
    table = final.round.table
    if final.phase is not Phase.PLAY or final.round.number != cheat.round or table is None:
        return None
    voted = author.membership.voted
    if not any(q not in final.dropped for q in voted) or not table.tableaux[peer.seat].stock:
        return None
    author.sign(Play((), cheat.round, Move.parse("S")), None)
    return Play((), cheat.round, Move.parse("W>1"))


def _garbage_box(message: DeckKey) -> DeckKey:
    """The key with its box to the first other member spoiled (its tag no longer checks)."""
    dealing = message.dealing
    assert dealing is not None
    first = dealing.boxes[0]
    boxes = (bytes([first[0] ^ 1]) + first[1:], *dealing.boxes[1:])
    return dataclasses.replace(message, dealing=dataclasses.replace(dealing, boxes=boxes))


def _dealt_face_up(peer: Peer) -> frozenset[int]:
    """The positions of each deck that the deal turns up (its face-up cards: the cheats leave
    their shares alone, or play would stop before it began)."""
    shown = Tableau.sealed(peer.spec.rules).shown
    return frozenset(p for p in map(sealed_position, shown) if p is not None)


def _substituted(message: DeckStage, final: GameState) -> DeckStage:
    """The stage with the first work pile's card replaced by a fresh encryption of the card
    of position 0 (the last of the stock): a double, when both are turned up. Only the last
    stage of a deck: an earlier one is re-shuffled by honest members after it."""
    deck = final.round.deck
    assert deck is not None
    if message.stage != len(deck.members) - 1:
        return message
    ciphers = list(message.ciphers.ciphers)
    place = deck.size - 1 - NERTS_PILE_SIZE  # (the deal takes from the top, the last position)
    r = hash_scalar("sim-cheat", deck.context, bytes([message.deck]))
    ciphers[place] = reencrypt(ciphers[0], r, deck.joint)
    return dataclasses.replace(message, ciphers=Deck(tuple(ciphers)))


def signed_beat(peer: Peer, lamport: int) -> bytes:
    """A beat of ``peer``'s, sound against what it holds (its head, and every feed's count
    with the id of its last event), signed at a time of the cheat's choosing, ``lamport``,
    whatever its clock says: the clock cheats (tests/test_sim_clock_split.py,
    scripts/race_cost_clock_lead.py) time it."""
    feeds = [peer.events(q) for q in range(peer.spec.seats)]
    own = feeds[peer.seat]
    beat = Beat(
        len(own),
        own[-1].id if own else None,
        tuple(len(f) for f in feeds),
        tuple(f[-1].id[:ID_PREFIX] if f else b"" for f in feeds),
    )
    return signed_as(peer, Kind.BEAT, beat, lamport)


def signed_as(peer: Peer, kind: Kind, body: Beat | Want, lamport: int) -> bytes:
    """A beat-class message (a beat, an ack, a want) of ``peer``'s with ``body``, signed with
    its key at ``lamport``, whatever its clock says (the clock cheats and the liars,
    :mod:`p2p_nertz.sim.liars`)."""
    outbox = peer._outbox
    return encode_message(
        outbox.identity,
        game_id=peer.spec.game_id,
        seq=0,
        prev=None,
        lamport=lamport,
        kind=kind,
        body=encode_body(body),
        version=outbox.version,
    )


def beat_alone(attacker: Peer, victim: Peer, time: Callable[[list[int]], int | None]) -> list[int]:
    """Make ``attacker`` (a simulated member) follow every input in which it sends anything
    with a :func:`signed_beat` to ``victim`` alone, timed ``time(sent)`` (``sent``: the times
    of its beats so far; ``None``: none this time): the clock cheats' pump
    (tests/test_sim_clock_split.py, scripts/race_cost_clock_lead.py), which reaches into the
    peer's flush. The list of the beats' times, appended to as they are sent."""
    to = victim.spec.peer_ids[victim.seat]
    flush = attacker._flush
    sent: list[int] = []

    def beating_flush(now: float) -> list[Effect]:
        effects = flush(now)
        if not any(isinstance(e, Send) for e in effects):
            return effects
        lamport = time(sent)
        if lamport is None:
            return effects
        sent.append(lamport)
        return [*effects, Send(signed_beat(attacker, lamport), to)]

    attacker._flush = beating_flush
    return sent
