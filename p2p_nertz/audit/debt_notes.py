"""A voter that broke its freeze with a head of its own feed it never gave: the ``debt`` notes
read against the logs (docs/audit.md, *Evidence*; docs/protocol.md §9.2, *the own-head
variant*).

A peer keeps, as a ``debt`` note (docs/log-format.md §5, :mod:`p2p_nertz.protocol.debts`), a
member's signed beat that announced a head of the member's own feed the peer did not hold
when it came, and a member's feed past the count of the author's vote standing against it.
The note is the peer's excuse for waiting (``audit.answers``); read against every log given,
it is also the author's lie, where the logs prove the head was never given:

* the beat announces a head ``h`` of its author ``r``'s own feed (``debts.owed_head``);
* no log given holds ``r``'s event ``h``, nor any later one (``Log.next``): no event of
  ``r``'s filled the head, however late it came;
* ``r``'s own log is given and whole: readable, no damaged frame, no torn tail, no recovery
  note, no hole in ``r``'s own feed, and it holds ``r``'s feed as far as any log does. A peer
  logs each event of its own before it sends it or anything after it (docs/log-format.md §6),
  so an honest ``r`` that announced ``h`` logged its event ``h`` first, whoever it reached;
* and the beat announces a member ``q``'s feed past the count of ``r``'s vote against ``q``
  that stands in ``r``'s own feed as the logs deliver it (``debts.past_freeze``; the vote
  read by ``roster.frozen_at``, the rule of ``roster.freezes``): every event of ``r``'s the
  logs hold is below ``h``, so no withdrawal of that vote came before the beat.

Then ``r`` signed a beat announcing events of its own it never gave anyone, past its vote:
:attr:`FindingKind.UNGIVEN_HEAD`, with the beat (its Lamport time and id, the note's log and
record) as the proof, which anyone holding the logs can check. One finding per author: its
first note that proves it, in the order read.

A claim on another member's feed (session 35, docs/protocol.md §9.2, what a member owes): a
peer also keeps as a ``debt`` note the beat of a member ``r`` announcing another member ``q``'s
feed past what it held, when it votes ``r`` out *withheld* for those events. Any note's beat
names ``r`` :attr:`FindingKind.UNGIVEN_CLAIM` where it announces holding ``q``'s event ``h``
under an id prefix no log holds there (past every log's copy of ``q``'s feed, or another
event: ``debts.unsigned_claims``), ``q``'s own log given and whole as above and ``q`` seen to
fork nowhere: ``q``'s whole log holds every event it signed, so ``r`` announced one never
signed. (``q``'s log is read, not ``r``'s: a peer's log may lack a received event it held.)

What is not proof. A head a later event of ``r``'s fills is no lie (an honest member's beat may
overtake its event: the note of game 6 of the effect digest). Without ``r``'s own log, or with
it damaged, cut, recovered or lacking its own events, the others' logs lacking ``h`` prove
nothing: their peers may have stopped before the event reached them. So a log alone (the
noting peer's) never names the author: it holds the beat and its own lack of the head, which
is its peer's excuse and no more. A note that does not verify, or holds a beat of another game
or of a stranger, is ``bad_proof`` (``protocol.debts.read_note``) and names nobody.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import NamedTuple

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.logs import Log
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, Drop
from p2p_nertz.protocol.debts import owed_head, past_freeze, unsigned_claims
from p2p_nertz.protocol.envelope import KIND_DROP, Message
from p2p_nertz.protocol.state import Event, frozen_at

__all__ = ["DebtNotes"]

#: What makes a log not whole for the rule (module docstring): its bytes, not its peer.
_DAMAGE = frozenset({FindingKind.UNREADABLE, FindingKind.LOG_DAMAGE, FindingKind.TRUNCATED})


class _Noted(NamedTuple):
    """A ``debt`` note read: its signed beat, and where it was."""

    seat: int  # the beat's author
    message: Message
    beat: Beat
    log: str
    record: int


class DebtNotes:
    """The ``debt`` notes of one pass and the votes of every member's feed (module docstring).

    Args:
        found: the pass's findings.
    """

    __slots__ = ("_found", "_notes", "_recovered", "_seen", "_votes")

    def __init__(self, found: Collector) -> None:
        self._found = found
        self._notes: list[_Noted] = []
        self._seen: set[bytes] = set()  # (the same beat, kept by several peers: read once)
        #: (voter, member) -> the count at which the voter's latest drop event on the member
        #: freezes its announcements of the member's feed (``None``: not frozen)
        self._votes: dict[tuple[int, int], int | None] = {}
        self._recovered: set[int] = set()  # the logs (by index) with a recovery note

    def note(self, log: Log, seat: int, message: Message, beat: Beat) -> None:
        """A ``debt`` note of ``log`` (its signature verified): ``seat``'s beat ``beat``."""
        if message.wire in self._seen:
            return
        self._seen.add(message.wire)
        self._notes.append(_Noted(seat, message, beat, log.name, log.count))

    def recovery(self, log: Log) -> None:
        """``log`` holds a recovery note: its peer lost its end (docs/protocol.md §9.6)."""
        self._recovered.add(log.index)

    def holding(self, hold: Callable[[Event], None]) -> Callable[[Event], None]:
        """``hold`` (the fold's: each event delivered, every feed in order) that also reads
        each drop event's freeze (:func:`~p2p_nertz.protocol.roster.frozen_at`)."""
        votes = self._votes

        def take(event: Event) -> None:
            if event.kind is KIND_DROP:
                body = event.body
                if isinstance(body, Drop) and body.seat != event.seat:
                    where = (event.seat, body.seat)
                    votes[where] = frozen_at(votes.get(where), body)
            hold(event)

        return take

    def check(
        self, logs: Sequence[Log], forked: Collection[int], prefix: Callable[[int, int], bytes]
    ) -> None:
        """At the end of the pass (every log read): name each author whose note's beat
        announced a head of its own feed that the logs prove it never gave, past its vote
        (module docstring). ``forked``: the members seen to fork (whose feed the rule cannot
        read as one)."""
        if not self._notes:
            return
        found = self._found
        damaged = {f.log for f in found.violations if f.kind in _DAMAGE and f.log is not None}
        self._claims(logs, forked, damaged, prefix)
        named: set[int] = set()
        for noted in self._notes:
            r, beat = noted.seat, noted.beat
            if r in named or r in forked:
                continue
            head = owed_head(r, beat)
            held = max((log.next[r] - 1 for log in logs if log.readable), default=0)
            if head <= held or not self._whole(r, held, logs, damaged):
                continue
            frozen = {
                q: {r: count}
                for (voter, q), count in self._votes.items()
                if voter == r and count is not None
            }
            if not past_freeze(r, beat, frozen):
                continue
            named.add(r)
            past = [q for q in sorted(frozen) if past_freeze(r, beat, {q: frozen[q]})]
            q = past[0]
            found.add(
                Finding(
                    FindingKind.UNGIVEN_HEAD,
                    f"signed a beat announcing its own feed up to seq {head} and seat {q}'s "
                    f"up to {beat.held[q]}, past its vote counting {frozen[q][r]} (standing in "
                    f"its feed), while its own log and every other ends its feed at {held}: "
                    "events of its own it gave nobody (kept by a peer as a debt note)",
                    log=noted.log,
                    record=noted.record,
                    seq=held + 1,
                    last_seq=head,
                    lamport=noted.message.lamport,
                    event=noted.message.kind.name.lower(),
                    event_id=noted.message.id.hex(),
                    expected=f"its event {head} in its own log",
                    found=f"its feed ends at {held}",
                    **found.who(r),
                )
            )

    def _claims(
        self,
        logs: Sequence[Log],
        forked: Collection[int],
        damaged: set[str],
        prefix: Callable[[int, int], bytes],
    ) -> None:
        """Name each author whose note's beat announced holding a third member's feed past
        what any log holds of it, that member's own log given and whole (module docstring):
        the rule a peer voted it out *withheld* on (``debts.claimed_past``, the peer's own)."""
        held = (
            [
                max((log.next[q] - 1 for log in logs if log.readable), default=0)
                for q in range(len(logs[0].next))
            ]
            if logs
            else []
        )
        named: set[int] = set()
        for noted in self._notes:
            r, beat = noted.seat, noted.beat
            if r in named or r in forked:
                continue
            past = [
                (q, h)
                for q, h in unsigned_claims(r, beat, held, prefix, forked)
                if self._whole(q, held[q], logs, damaged)
            ]
            if not past:
                continue
            named.add(r)
            q, h = past[0]
            named_id = beat.held_ids[q].hex()
            held_there = (
                f"its feed ends at {held[q]}"
                if h > held[q]
                else f"its event {h} there is {prefix(q, h)[:ID_PREFIX].hex()}"
            )
            self._found.add(
                Finding(
                    FindingKind.UNGIVEN_CLAIM,
                    f"signed a beat announcing seat {q}'s event {h} (id {named_id}), which "
                    f"seat {q}'s own whole log and every other lack ({held_there}): an event "
                    "never signed, kept by a peer as a debt note with its vote on the announcer",
                    log=noted.log,
                    record=noted.record,
                    seq=min(h, held[q] + 1),
                    last_seq=h,
                    lamport=noted.message.lamport,
                    event=noted.message.kind.name.lower(),
                    event_id=noted.message.id.hex(),
                    expected=f"seat {q}'s event {h}, id {named_id}, in a log",
                    found=held_there,
                    **self._found.who(r),
                )
            )

    def _whole(self, seat: int, held: int, logs: Sequence[Log], damaged: set[str]) -> bool:
        """Whether ``seat``'s own log is given and whole, holding its feed up to ``held`` (as
        far as any log does): its peer's record of every event it signed."""
        own = [log for log in logs if log.owner == seat]
        return bool(own) and all(
            log.readable
            and log.name not in damaged
            and log.index not in self._recovered
            and not log.holes[seat]
            and log.next[seat] - 1 == held
            for log in own
        )
