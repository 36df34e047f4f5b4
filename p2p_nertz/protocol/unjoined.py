"""A vote *withheld* that never ends: the voter owes the cover its vote holds back.

Theory of operation
-------------------
A vote freezes its voter's announcements of its target's feed at the vote's count, and the
coverage term reads that word no further (docs/protocol.md §9.2, *the freeze*, *the freeze on
the coverage term*): while it stands, no event of the target's past the count is final
anywhere. A vote *withheld* stands until the target gives what it owed (``Membership.relieved``,
``Membership.withheld_relieved``), and what it owed is in the voter's view. A member whose
fold has parted from the table's (``scripts/soak.py --liars`` seed 1125: a liar whose own
table, with its lied-about cards, ended play in a Nerts call that the table never saw) waits
in its own ``reveal`` for reveals the others sign only once their final fold gets there,
which its own freeze forbids: its votes, never a majority, held every honest peer's finality
for good.

So a vote *withheld* excuses its voter's cover of the target's feed only where this peer
joins it (:func:`unjoined`, read by the stall scan through ``membership._due``): otherwise
the voter owes the cover of the target's events held here, as a voter for silence does
(§9.2, *a vote for silence that never ends*), and one that gives none for ``phase_timeout``,
every member heard, is voted out *withheld* by each peer that does not join it; a majority
drops it at its count, its votes stand no more (``roster.freezes`` reads members still in),
and the held events are final. Nothing new is folded: the votes are signed events, counted
as every vote is; the only clock is each voter's own stall timer.

Why no honest voter is voted out by it (the three tests of :func:`unjoined`, each a reason
the peer joins or will): an honest voter's vote waits for what its target owes it, and
either this peer waits for it too, or this peer's finality, held by that vote's freeze, has
taken in all the voter's final fold held when it voted (so waits for the same phase event,
or holds it, and the voter then gets it within a round trip and withdraws), and the target
has said in a signed event of its own that it holds all the voter held (so a vote on cover
is met at the voter too, whatever beats the target sent it alone: *the own-head variant*,
§9.2). A member that owes the voter its own feed up to a head it announced has that head
relayed with the vote and again while it stands (``Author.relay_debts``: one relay lost
let the others vote an honest dealer out, tests/test_sim_withheld_never_ends.py), and the
peer then owes-tracks it: it joins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.roster import named_within_cuts

if TYPE_CHECKING:
    from p2p_nertz.protocol.envelope import Message
    from p2p_nertz.protocol.finality import Finality
    from p2p_nertz.protocol.roster import Roster

__all__ = ["standing_votes", "unexcused", "unjoined"]


def standing_votes(roster: Roster, voter: int, reason: DropReason) -> dict[int, Drop]:
    """Each member that ``voter`` stands voting out for ``reason`` in ``roster`` (counted or
    capped, not withdrawn: :meth:`Roster.stands`), and its vote (the count it quotes)."""
    out: dict[int, Drop] = {}
    if not roster.votes and not roster.frozen:
        return out  # (no vote: the common case, asked per member and scan)
    for ballots in (roster.votes, roster.frozen):
        for target, standing in ballots.items():
            for v, body in standing:
                if v == voter and body.reason is reason:
                    out[target] = body
    return out


def unexcused(
    voter: int,
    roster: Roster,
    feeds: Sequence[Sequence[Message]],
    finality: Finality,
    ours: Callable[[], frozenset[int]],
) -> dict[int, int]:
    """The members whose cover ``voter``'s standing votes in the held ``roster`` do not
    excuse, and each vote's count (the voter's word on that feed is taken no further): its
    votes for silence (§9.2, *a vote for silence that never ends*), and its votes *withheld*
    that this peer does not join (:func:`unjoined`; ``ours``: the members this peer waits for
    itself, asked only where such a vote stands; ``finality``: ours, for its stable time)."""
    out = {r: v.last_seq for r, v in standing_votes(roster, voter, DropReason.SILENT).items()}
    withheld = standing_votes(roster, voter, DropReason.WITHHELD)
    if withheld:
        waiting = ours()
        for target, vote in withheld.items():
            if target not in waiting and unjoined(target, vote, roster, feeds, finality.stable):
                out[target] = vote.last_seq
    return out


def unjoined(
    target: int, vote: Drop, roster: Roster, feeds: Sequence[Sequence[Message]], stable: int
) -> bool:
    """Whether a vote *withheld* on ``target`` (``vote``, standing in the held ``roster``), on
    a member this peer does not wait for itself, holds back our finality for nothing we can
    see owed (the module docstring): the voter then owes the cover of ``target``'s events
    held here.

    (1) The caller leaves out the members we wait for ourselves (our vote, a stall record
    without progress for half a ``phase_timeout``, a share past its time, the event of our
    final phase): we join, or soon would. (2) Our stable time has
    reached ``target``'s first event past the vote's count, the first the freeze holds back:
    the voter's final fold when it voted, which lacked that event, is part of ours, so where
    it waited for ``target``'s phase event ours does too (1), unless that event is held here
    and reaches the voter within a round trip. (3) ``target``'s last event held here says, in
    its signed frontier, that it holds all the vote's frontier says the voter held, of a
    member the held ``roster`` drops up to its cut (no event names more: the voter's own
    cover targets stop there too, ``membership._counts``): any cover the voter was owed, it
    holds in ``target``'s own words, not in beats sent to it alone.
    A liar whose fold parted from the table's (the module docstring) meets all three."""
    if target in roster.dropped:
        return False
    feed = feeds[target]
    count = vote.last_seq
    if len(feed) <= count or stable < feed[count].lamport - 1:
        return False  # (nothing of it held back here, or not what holds our finality)
    last = feed[-1]
    said = getattr(parse_body(last.kind, last.body, len(feeds)), "frontier", None)
    if said is None:
        return False
    # (A member the held fold drops: no event names its feed past the cut, so the vote's
    # frontier asks no more of it than that. Read whole, a voter whose fold kept it in asked
    # for ever what ``target`` may never sign: --two-liars --back readmit seed 179, §9.2.)
    asked = named_within_cuts(vote.frontier, roster.dropped, target)
    return all(
        have >= had for r, (have, had) in enumerate(zip(said, asked, strict=True)) if r != target
    )
