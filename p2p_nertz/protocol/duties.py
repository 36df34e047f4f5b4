"""Duties: the events the game asks of one member, as the final fold stands.

Theory of operation
-------------------
The final fold says what each member owes: its commitments when a round begins, its nonce once
every commit is held, its ``ready`` (the dealt face-up cards) once the deal's randomness is
known, its secret once the round is over, its result once every secret is in (docs/protocol.md
§8). Besides those, a member answers an abandon it was the absent side of (§9.3), asks to rejoin
when it learns it was dropped (§9.8), and readmits a dropped member whose rejoin request it
holds (§9.7). :class:`Duties` says which events are due, with an empty frontier; the peer
signs each one with the frontier it announces then, and tells it what it signed (each phase
event once, even across a restart): which phase events were signed is the state it owns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from p2p_nertz.deck.elgamal import initial_deck, shuffle_stage
from p2p_nertz.deck.group import DeckError
from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.proofs import prove_equal
from p2p_nertz.deck.shares import Share, make_share, share_context
from p2p_nertz.deck.vss import deal_shares, open_share, share_for, threshold, x25519_public
from p2p_nertz.deck.wire import (
    DeckAnswer,
    DeckComplain,
    DeckKey,
    DeckOpen,
    DeckShares,
    DeckStage,
)
from p2p_nertz.protocol import second_stall
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.behalf import PassWatch
from p2p_nertz.protocol.bodies import (
    Commit,
    DeckEvent,
    DeckReveal,
    DropReason,
    EventBody,
    Join,
    Ready,
    Result,
    Reveal,
    RevealWhat,
)
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.local import abandoned_by
from p2p_nertz.protocol.shuffle import DEALT, MAX_SHARES_EVENT, SHARING, DeckRound
from p2p_nertz.protocol.shuffle_owed import owed_kept
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rules import Tableau, new_deck, shuffled_deck

__all__ = ["Duties"]

_NONE: tuple[int, ...] = ()  # the frontier the signer fills in
_LEAVE_DONE = (int(Kind.LEAVE), 0, 0)  # (is_done's key of our leave: asked after every input)


#: an item owed: (of member, deck, position) (:meth:`DeckRound.owed`)
_Item = tuple[int, int, int]
#: what :meth:`Duties._sharable` read (what it reads, the face-up set, the items owed) and answered
_Kept = tuple[object, object, Sequence[_Item], list[_Item]]


def _same_deal(tentative: GameState | None, deck: DeckRound) -> DeckRound | None:
    """The tentative fold's deal where it is the final fold's (the same round and attempt)."""
    ahead = tentative.round.deck if tentative is not None else None
    return ahead if ahead is not None and ahead.context == deck.context else None


def _dealt(attempt: int, stage: int = 0) -> int:
    """The ``what`` of our key (stage 0), stage, complaint (the dealer for stage) or answer
    (the recipient) of a deal attempt, in :attr:`Duties.done`: each attempt of a round's deal
    has its own (docs/shuffle.md §8.4)."""
    return attempt << 8 | stage


class Duties:
    """What one member must sign, and what it has signed (see the module docstring).

    Args:
        seat: the member's seat.
        spec: the game.
        secret: the member's round secret of each round (never sent before the round is over).
        nonce: the member's round nonce of each round.
        deck_key: the member's round secret of each round and deal attempt of a shuffle game
            (never sent before the round is over).
        box_secret: the X25519 secret of the member's identity, which opens the VSS shares
            boxed to it (a shuffle game: docs/shuffle.md §6.2).
    """

    def __init__(
        self,
        seat: int,
        spec: GameSpec,
        secret: Callable[[int], bytes],
        nonce: Callable[[int], bytes],
        *,
        deck_key: Callable[[int, int], MemberKey] | None = None,
        box_secret: Callable[[], bytes] | None = None,
    ) -> None:
        self.seat = seat
        self.spec = spec
        self._secret = secret
        self._nonce = nonce
        self._deck_key = deck_key
        self._deck_keys: dict[tuple[int, int], MemberKey] = {}
        self.done: set[tuple[int, int, int]] = set()  # (kind, round, what) of own events
        #: (round, of member, deck, position) of every share of ours signed (a shuffle game)
        self.shared: set[tuple[int, int, int, int]] = set()
        self._box_secret = box_secret
        self._sigmas: dict[tuple[bytes, int], int] = {}  # (round context, dealer) -> share
        #: beats -> what :meth:`_sharable` read and answered, the last two (kept while they
        #: read the same): the final fold's round and the tentative fold's are asked in turn
        self._sharable_kept: dict[bool, list[_Kept]] = {False: [], True: []}
        self.behalf = PassWatch()  # (a seat that plays nothing, everyone else stuck: behalf.py)
        # (liars' seams, as Outbox.sign_event's)
        self.phase_event, self.reveals = self.phase_event_honest, self.reveals_honest

    def is_done(self, kind: Kind, number: int, what: int = 0) -> bool:
        """Whether our event of that kind (round, and what a reveal discloses) is signed."""
        return (int(kind), number, int(what)) in self.done

    @property
    def left(self) -> bool:
        """``is_done(Kind.LEAVE, 0)``: whether we signed our ``leave`` (read several times an
        input, so without building the key each time)."""
        return _LEAVE_DONE in self.done

    def mark_done(self, kind: Kind, body: object) -> None:
        """One of our events is signed (or read back from our log)."""
        number = getattr(body, "round", 0)
        what = int(body.what) if isinstance(body, Reveal) else 0
        if isinstance(body, DeckEvent):
            message = body.message
            if isinstance(message, DeckKey):
                what = _dealt(message.attempt)
            elif isinstance(message, DeckStage):
                what = _dealt(message.attempt, message.stage)
            elif isinstance(message, DeckComplain):
                what = _dealt(message.attempt, message.dealer)
            elif isinstance(message, DeckAnswer):
                what = _dealt(message.attempt, message.recipient)
            elif isinstance(message, DeckShares):
                self.shared.update((number, s.of_seat, s.deck, s.position) for s in message.shares)
                return
        self.done.add((int(kind), number, what))

    def phase_event_honest(
        self, final: GameState, ready_through: int | None, tentative: GameState | None = None
    ) -> EventBody | None:
        """The phase event the final fold now asks of us, if any (``ready_through``: the last
        round whose ``ready`` we sign by ourselves, ``None``: every round). In a shuffle game
        the shares owed in the ``tentative`` fold are due too (docs/shuffle.md §10.4), and
        ``ready_through`` holds back our key, the first event of a round's deal (there is no
        ``ready``: the key holds the deal, and the play after it, as a ``ready`` does)."""
        rs = final.round
        if self.seat not in rs.seats or self.seat in rs.forfeit:
            return None
        n = rs.number
        phase = final.phase
        if rs.deck is not None:
            ahead = _same_deal(tentative, rs.deck)
            # Our shares wait while the held fold owes an answer of ours that the final does
            # not ask yet (docs/shuffle.md §6.3): none of them may hold the complaint first.
            waiting = _answer_held(tentative, self.seat, n)
            shares = None if waiting else self._tentative_shares(tentative, n, rs.deck)
            held = ready_through is not None and n > ready_through
            return self._deck_event(final, rs.deck, ahead, waiting=waiting, hold_key=held) or shares
        if phase is Phase.COMMIT and not self.is_done(Kind.COMMIT, n):
            secret_hash = st.secret_hash(self._secret(n))
            return Commit(_NONE, n, secret_hash, st.nonce_hash(self._nonce(n)))
        if phase is Phase.NONCE and not self.is_done(Kind.REVEAL, n, RevealWhat.NONCE):
            return Reveal(_NONE, n, RevealWhat.NONCE, self._nonce(n))
        if (
            phase is Phase.PLAY
            and not self.is_done(Kind.READY, n)
            and (ready_through is None or n <= ready_through)
        ):
            assert rs.fair.randomness is not None
            rules = self.spec.rules
            deck = shuffled_deck(st.deck_seed(self._secret(n), rs.fair.randomness, n), rules.jokers)
            return Ready(_NONE, n, Tableau.deal(deck, rules).shown)
        if phase is Phase.REVEAL and not self.is_done(Kind.REVEAL, n, RevealWhat.SECRET):
            return Reveal(_NONE, n, RevealWhat.SECRET, self._secret(n))
        if phase is Phase.RESULT and not self.is_done(Kind.RESULT, n):
            assert rs.expected is not None and rs.digest is not None
            scores = tuple(p.total for p in rs.expected.players)
            return Result(_NONE, n, rs.digest, scores)
        return None

    # -- a shuffle game (docs/shuffle.md §8.3, §10.4) ------------------------------------------
    def _key(self, number: int, attempt: int) -> MemberKey:
        key = self._deck_keys.get((number, attempt))
        if key is None:
            assert self._deck_key is not None, "a shuffle game's duties need the deck key"
            key = self._deck_keys[(number, attempt)] = self._deck_key(number, attempt)
        return key

    def _deck_event(
        self,
        final: GameState,
        deck: DeckRound,
        ahead: DeckRound | None = None,
        *,
        waiting: bool = False,
        hold_key: bool = False,
    ) -> EventBody | None:
        """The shuffle event the final fold asks of us: our key, our next stage (from an input
        ``ahead``, the tentative fold's deal, holds if the final one does not yet), the shares
        we owe, our secret (``waiting``: an answer of ours is owed in the held fold: no shares
        yet, and no secret before them; ``hold_key``: the person's table holds the round, no key
        yet)."""
        n = final.round.number
        phase = final.phase
        if self.seat not in deck.members:
            return None  # (dropped before a deal that restarted without us)
        me = deck.member(self.seat)
        attempt = deck.attempt
        if phase is Phase.KEY and not self.is_done(Kind.DECK_KEY, n, _dealt(attempt)):
            if hold_key:
                return None
            key = self._key(n, attempt)
            dealing = None
            if threshold(len(deck.members)) is not None:
                peers = self.spec.peer_ids
                recipients = [x25519_public(peers[s]) for s in deck.members]
                dealing = deal_shares(key, me, recipients)
            return DeckEvent(_NONE, DeckKey(n, key.public, key.proof(me), dealing, attempt))
        if phase in DEALT and threshold(len(deck.members)) is not None:
            complaint = self._complaint(deck, n, me)
            if complaint is not None:
                return complaint
            # Every answer owed, one after the other (not one a finality): the dealer signs
            # nothing else while its final fold holds a complaint it has not answered
            # (docs/shuffle.md §6.3; Author.act signs them all in one act).
            answers = [
                r
                for r in deck.answers_owed(self.seat)
                if not self.is_done(Kind.DECK_ANSWER, n, _dealt(attempt, r))
            ]
            if answers:
                members = len(deck.members)
                share = share_for(self._key(n, attempt), answers[0], members)
                return DeckEvent(_NONE, DeckAnswer(n, answers[0], share, attempt))
        if phase is Phase.DEAL:
            if ahead is not None and ahead.answers_owed(self.seat):
                # A complaint of our box held, not final yet: our stage waits for a final
                # input, and the answer goes first once the final fold holds the complaint
                # (docs/shuffle.md §6.3: a stage whose frontier holds a complaint ordered
                # before its input proves the answer came first; audit/answers.py).
                ahead = None
            return self._stage(deck, n, me, ahead)
        if phase is Phase.PLAY or phase is Phase.OPEN:
            owed = self._sharable(deck, n)
            if owed and waiting:
                return None
            if owed:
                return DeckEvent(_NONE, DeckShares(n, me, self._shares(deck, n, me, owed)))
        if phase is Phase.OPEN and not self.is_done(Kind.DECK_OPEN, n):
            # With our secret, our VSS share of each member dropped: the members left rebuild
            # its secret and check its stages (docs/shuffle.md §6.4, §7.2).
            held = tuple(
                (m, self._held(deck, n, me, m))
                for m in sorted(deck.gone)
                if m != me and deck.keys[m].dealing is not None and self._holds(deck, n, me, m)
            )
            return DeckEvent(_NONE, DeckOpen(n, self._key(n, attempt).x, held))
        if phase is Phase.RESULT and not self.is_done(Kind.RESULT, n):
            rs = final.round
            assert rs.expected is not None and rs.digest is not None
            return Result(_NONE, n, rs.digest, tuple(p.total for p in rs.expected.players))
        return None

    def _tentative_shares(
        self, tentative: GameState | None, n: int, final: DeckRound
    ) -> EventBody | None:
        """The shares the tentative fold says we owe in round ``n`` (a turn-up we delivered
        that is not final yet), once its deal is over. Partial shares only for a member the
        ``final`` fold dropped: the fold refuses a partial for a member not dropped where the
        event lands, and a drop only our tentative fold holds may not be before it in the
        order, or may never be (soak seed 101, ``--players 3-5 --deal shuffle``: an honest
        member's partials refused as ``bad_share``)."""
        if tentative is None or tentative.round.number != n:
            return None
        deck = tentative.round.deck
        if deck is None or deck.final is None or tentative.phase not in SHARING:
            return None
        me = deck.member(self.seat)
        gone = {final.members[m] for m in final.gone} if final.context == deck.context else set()
        owed = [w for w in self._sharable(deck, n) if w[0] == me or deck.members[w[0]] in gone]
        if not owed:
            return None
        return DeckEvent(_NONE, DeckShares(n, me, self._shares(deck, n, me, owed)))

    def _shares(
        self, deck: DeckRound, n: int, me: int, owed: list[tuple[int, int, int]]
    ) -> tuple[Share, ...]:
        """Our shares of ``owed`` (``(of member, deck, position)``, at most an event's worth):
        our own, or a partial of a member dropped from our VSS share of its secret (§6.4)."""
        assert deck.final is not None
        key = self._key(n, deck.attempt)
        out = []
        for of, d, p in owed[:MAX_SHARES_EVENT]:
            cipher = deck.final[d][p]
            if of == me:
                share = make_share(key, me, d, p, cipher)
                deck.made(share)  # (our own: not checked again when our event comes back)
                out.append(share)
                continue
            sigma = self._held(deck, n, me, of)
            point, proof = prove_equal(sigma, cipher[0], share_context(key.context, me, of, d, p))
            out.append(Share(me, of, d, p, point, proof))
        return tuple(out)

    def _sharable(
        self, deck: DeckRound, n: int, *, beats: bool = False
    ) -> list[tuple[int, int, int]]:
        """What we owe of round ``n`` in the feed and have not sent, and can make: a partial
        for a member dropped needs our share of its secret (a box that did not open waits for
        its answer). Our own share of a position a move turned up travels in a ``deck_reveal``
        beat alone (docs/shuffle.md §10.14): with ``beats``, those
        are what is listed instead."""
        me = deck.member(self.seat)
        shared, face_up = self.shared, deck.face_up
        owing = owed_kept(deck, self.seat)  # (the round's own tuple: never changed)
        # Kept until what it reads changes (``shared`` only grows; a complaint or its answer
        # changes what we hold): asked two and three times an input, with and without
        # ``beats``, the same each time but where an input moved the round (7% of a shuffle
        # game's CPU). The items owed are the same tuple while the round keeps them: told by
        # identity first, compared only once the round made them again. Two are kept: an
        # input asks of the final fold's round and of the tentative fold's, whose items owed
        # differ while a turn-up is not final (one kept answer missed 38% of the asks, session
        # 40).
        reads = (deck.context, n, len(shared), tuple(deck.complaints.items()))
        kept_ones = self._sharable_kept[beats]
        for kept in kept_ones:
            if kept[0] == reads and kept[1] is face_up and (kept[2] is owing or kept[2] == owing):
                if kept is not kept_ones[0]:
                    kept_ones.reverse()  # (the latest first)
                return list(kept[3])
        out = []
        # (A loop, the cheap tests first: over every item owed of the positions in flight.)
        for w in owing:
            of, d, p = w
            if of == me:
                if beats != ((d, p) not in face_up) or (n, of, d, p) in shared:
                    continue
            elif beats or (n, of, d, p) in shared or not self._holds(deck, n, me, of):
                continue
            out.append(w)
        kept_ones[1:] = kept_ones[:1]
        kept_ones[:1] = [(reads, face_up, owing, out)]
        return list(out)

    def reveals_honest(self, final: GameState, tentative: GameState | None) -> list[DeckReveal]:
        """Our own shares of the positions a move turned up that we have not sent, in
        ``deck_reveal`` bodies of at most :data:`MAX_SHARES_EVENT` (a frame's worth, as an answer's;
        docs/shuffle.md §10.14), from
        the held fold (``tentative``) once its deal is over, else from the ``final`` one;
        marked sent. None while the held fold owes an answer of ours (:func:`_answer_held`),
        nor from a member out or forfeit, nor in a commit game."""
        rs = final.round
        if rs.deck is None or self.seat not in rs.seats or self.seat in rs.forfeit:
            return []
        n = rs.number
        held = tentative if tentative is not None and tentative.round.number == n else final
        deck = held.round.deck
        if deck is None or deck.final is None or held.phase not in SHARING:
            return []
        if self.seat not in deck.members or _answer_held(tentative, self.seat, n):
            return []
        owed = self._sharable(deck, n, beats=True)
        if not owed:
            return []
        key = self._key(n, deck.attempt)
        me = deck.member(self.seat)
        shares = []
        for of, d, p in owed:
            share = make_share(key, me, d, p, deck.final[d][p])
            deck.made(share)  # (our own: answered from the memo when carried back to us)
            shares.append(share)
            self.shared.add((n, of, d, p))
        step = MAX_SHARES_EVENT
        return [DeckReveal(n, tuple(shares[k : k + step])) for k in range(0, len(shares), step)]

    def _holds(self, deck: DeckRound, n: int, me: int, of: int) -> bool:
        """Whether we hold our VSS share of member ``of``'s secret (:meth:`_held`)."""
        try:
            self._held(deck, n, me, of)
        except DeckError:
            return False
        return True

    def _complaint(self, deck: DeckRound, n: int, me: int) -> EventBody | None:
        """Our complaint of the first dealer whose box to us does not open or check, once
        (docs/shuffle.md §6.3): what its answer reveals stands for the box."""
        attempt = deck.attempt
        for of in range(len(deck.members)):
            if of == me or self.is_done(Kind.DECK_COMPLAIN, n, _dealt(attempt, of)):
                continue
            try:
                self._held(deck, n, me, of)
            except DeckError:
                return DeckEvent(_NONE, DeckComplain(n, of, attempt))
        return None

    def _held(self, deck: DeckRound, n: int, me: int, of: int) -> int:
        """Our VSS share of member ``of``'s secret, from its box to us (opened once), or
        from its answer to our complaint of the box.

        Raises:
            DeckError: the box does not open or check, and no right answer is in.
        """
        answered = deck.complaints.get((of, me))
        if answered is not None:
            return answered
        sigma = self._sigmas.get((deck.context, of))
        if sigma is None:
            assert self._box_secret is not None, "a shuffle game's duties need the box key"
            dealing = deck.keys[of].dealing
            assert dealing is not None
            sigma = open_share(
                dealing,
                public=deck.keys[of].key,
                dealer=of,
                seat=me,
                members=len(deck.members),
                secret=self._box_secret(),
                context=deck.context,
            )
            self._sigmas[(deck.context, of)] = sigma
        return sigma

    def _stage(
        self, deck: DeckRound, n: int, me: int, ahead: DeckRound | None = None
    ) -> EventBody | None:
        """Our next stage, once the stage it shuffles is delivered (docs/shuffle.md §4.3):
        final, or held by the tentative fold of the same deal (``ahead``). Our stage's
        frontier then holds its input, so every fold takes it after that input; a fold that
        disregards the input (its deal restarted, a drop ordered before it) disregards ours
        with it, as a stage of the same attempt. A round trip less a stage: the input's
        finality is not waited for."""
        members = len(deck.members)
        attempt = deck.attempt
        for stage in range(members):
            if self.is_done(Kind.DECK_STAGE, n, _dealt(attempt, stage)):
                continue
            d = (me - stage) % members
            joint = deck.joint
            if stage == 0:
                source = initial_deck(new_deck(self.spec.rules.jokers), joint)
            else:
                held = deck.stages.get((d, stage - 1))
                if held is None and ahead is not None:
                    held = ahead.stages.get((d, stage - 1))
                if held is None:
                    return None  # its input is not delivered yet
                source = held
            out = shuffle_stage(self._key(n, attempt).x, deck.context, d, source, joint)
            return DeckEvent(_NONE, DeckStage(n, d, stage, out, attempt))
        return None

    def abandon_to_answer(self, final: GameState, own: Sequence[Message]) -> int | None:
        """The member whose abandon of us we must answer with our own (§9.3), if any.

        The other member abandoned the game while we were cut off: our abandon's frontier
        shows what we held; the fold counts the rounds both abandons saw scored, so this
        settles the result on both sides (the other may have counted a round whose last result
        never reached us). Once only: an abandon of ours already does it (``own``: our feed).
        """
        if final.abandoned is None:
            return None
        author, absent = final.abandoned
        if absent != self.seat or (self.seat, author) in final.abandons:
            return None
        if abandoned_by(own, self.spec.seats):
            return None  # signed already (not yet read back by the fold)
        return author

    def rejoin_request(self, final: GameState, own: Sequence[Message], rejoin: bool) -> Join | None:
        """Our request to rejoin at the next round, once we learn we were dropped (§9.8).

        Not after a leave, a drop for cheating or a second stall over a vote for silence of
        ours (the fold refuses those: ``second_stall``), nor in a game over,
        nor twice (``own``: our feed), nor when the peer is set not to (``rejoin``)."""
        seat = self.seat
        cut = final.dropped[seat]
        if (
            not rejoin
            or final.phase is Phase.OVER
            or seat in final.left
            or seat in final.rejoining
            or any(v.reason is DropReason.EQUIVOCATION for _, v in final.votes.get(seat, ()))
            or seat in final.flaps.faults  # (at a flap fault: protocol/flaps.py)
            or second_stall.barred(final.roster, final.stalled, seat)
            or any(m.kind is Kind.JOIN for m in own[cut:])
        ):
            return None
        return Join(_NONE)

    def sponsorships(
        self,
        final: GameState,
        requests: dict[int, int],
        sponsored: set[tuple[int, int]],
        forked_at: dict[int, int],
    ) -> list[tuple[int, int]]:
        """The dropped members to readmit now: ``(seat, request seq)`` for each whose rejoin
        request we hold (``requests``) and have not sponsored yet (an event of ours counts, its
        request does not, §9.7); marked sponsored here."""
        if self.seat in final.dropped or final.phase is Phase.OVER:
            return []
        due = []
        for q, request in requests.items():
            if (q, request) in sponsored or q not in final.dropped:
                continue
            if q in final.rejoining or request <= final.dropped[q]:
                continue
            if q in forked_at or q in final.flaps.faults:
                # Proven to fork while it was out (two versions of one of its events, in its
                # gap), or at a flap fault: a cheater does not come back (§9.8), whether or not
                # what it forked would have counted (soak seed 544).
                continue
            if second_stall.barred(final.roster, final.stalled, q):
                continue  # (voted out twice over its vote for silence that never ends)
            sponsored.add((q, request))
            due.append((q, request))
        return due


def _answer_held(tentative: GameState | None, seat: int, number: int) -> bool:
    """Whether the held fold (``tentative``) of round ``number`` owes an answer of ``seat``'s
    to a complaint of its box (docs/shuffle.md §6.3). The dealer answers before any share it
    signs holding the complaint: the audit reads a dealer's ``deck_shares`` whose frontier
    holds a complaint it had not answered as the answer withheld (``audit/answers.py``)."""
    if tentative is None or tentative.round.number != number:
        return False
    deck = tentative.round.deck
    if deck is None or seat not in deck.members or tentative.phase not in DEALT:
        return False
    return bool(deck.answers_owed(seat))
