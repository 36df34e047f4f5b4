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

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import (
    Commit,
    Drop,
    DropReason,
    EventBody,
    Join,
    Ready,
    Result,
    Reveal,
    RevealWhat,
    parse_body,
)
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rules import Tableau, shuffled_deck

__all__ = ["Duties"]

_NONE: tuple[int, ...] = ()  # the frontier the signer fills in


class Duties:
    """What one member must sign, and what it has signed (see the module docstring).

    Args:
        seat: the member's seat.
        spec: the game.
        secret: the member's round secret of each round (never sent before the round is over).
        nonce: the member's round nonce of each round.
    """

    def __init__(
        self,
        seat: int,
        spec: GameSpec,
        secret: Callable[[int], bytes],
        nonce: Callable[[int], bytes],
    ) -> None:
        self.seat = seat
        self.spec = spec
        self._secret = secret
        self._nonce = nonce
        self.done: set[tuple[int, int, int]] = set()  # (kind, round, what) of own events

    def is_done(self, kind: Kind, number: int, what: int = 0) -> bool:
        """Whether our event of that kind (round, and what a reveal discloses) is signed."""
        return (int(kind), number, int(what)) in self.done

    def mark_done(self, kind: Kind, body: object) -> None:
        """One of our events is signed (or read back from our log)."""
        number = getattr(body, "round", 0)
        what = int(body.what) if isinstance(body, Reveal) else 0
        self.done.add((int(kind), number, what))

    def phase_event(self, final: GameState, ready_through: int | None) -> EventBody | None:
        """The phase event the final fold now asks of us, if any (``ready_through``: the last
        round whose ``ready`` we sign by ourselves, ``None``: every round)."""
        rs = final.round
        if self.seat not in rs.seats or self.seat in rs.forfeit:
            return None
        n = rs.number
        phase = final.phase
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
            assert rs.randomness is not None
            rules = self.spec.rules
            deck = shuffled_deck(st.deck_seed(self._secret(n), rs.randomness, n), rules.jokers)
            return Ready(_NONE, n, Tableau.deal(deck, rules).shown)
        if phase is Phase.REVEAL and not self.is_done(Kind.REVEAL, n, RevealWhat.SECRET):
            return Reveal(_NONE, n, RevealWhat.SECRET, self._secret(n))
        if phase is Phase.RESULT and not self.is_done(Kind.RESULT, n):
            assert rs.expected is not None and rs.digest is not None
            scores = tuple(p.total for p in rs.expected.players)
            return Result(_NONE, n, rs.digest, scores)
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
        n = self.spec.seats
        if any(
            m.kind is Kind.DROP
            and isinstance(body := parse_body(m.kind, m.body, n), Drop)
            and body.reason is DropReason.ABANDON
            for m in own
        ):
            return None  # signed already (not yet read back by the fold)
        return author

    def rejoin_request(self, final: GameState, own: Sequence[Message], rejoin: bool) -> Join | None:
        """Our request to rejoin at the next round, once we learn we were dropped (§9.8).

        Not after a leave or a drop for cheating (the fold refuses those), nor in a game over,
        nor twice (``own``: our feed), nor when the peer is set not to (``rejoin``)."""
        seat = self.seat
        cut = final.dropped[seat]
        if (
            not rejoin
            or final.phase is Phase.OVER
            or seat in final.left
            or seat in final.rejoining
            or any(v.reason is DropReason.EQUIVOCATION for _, v in final.votes.get(seat, ()))
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
            if q in forked_at:
                # Proven to fork while it was out (two versions of one of its events, in its
                # gap): a cheater does not come back (§9.8), whether or not what it forked
                # would have counted (soak seed 544).
                continue
            sponsored.add((q, request))
            due.append((q, request))
        return due
