"""The hand-on in play starts only at a relayer that has listened for ``drop_after``
(docs/protocol.md §9.2, *Handed on in play*; ``protocol/relays.py``): a relayer restarted or
woken lately counts every member as heard since then without having heard it, so it cannot
tell a member it hears from one silent to all. Real ``Membership`` and ``Drop`` bodies."""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.feeds import Source
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.relays import Relays

_TIMERS = SilenceTimers(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0, max_watch=8)
_PEER_IDS = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(3)]
_FEEDS: list[list[object]] = [[], [], []]
_VOTE = Drop(frontier=(0, 0, 0), seat=1, last_seq=0, reason=DropReason.SILENT)


def _relays(started: float) -> Relays:
    """Seat 0 of three, started (or restored) at ``started``."""
    membership = Membership(0, 3, started, _TIMERS)
    return Relays(membership=membership, peer_ids=_PEER_IDS)


def _vote(relays: Relays, now: float) -> dict[int, tuple[int, ...]]:
    """Seat 2's vote for silence on seat 1, heard here just before, delivered at ``now``:
    whom we hand seat 1's beats on to then."""
    relays.membership.listening.saw(now - 0.1)
    relays.membership.heard_from(1, now - 0.1)
    relays.membership.listening.saw(now)
    relays.vote(2, _VOTE, now, Source.NETWORK, _FEEDS)  # type: ignore[arg-type]
    return relays.to


def test_relays_a_relayer_that_listened_for_drop_after_hands_on() -> None:
    relays = _relays(0.0)
    for t in range(1, 10):
        relays.membership.listening.saw(float(t))
    assert _vote(relays, 10.0) == {1: (2,)}


def test_relays_a_relayer_restarted_lately_hands_nothing_on() -> None:
    """Soak seed 8227's seat 1, restored at 36.25 s, the vote delivered 20 ms later; the late
    answer's culprit (tests/test_sim_shuffle_cheats.py), restored at 10.2 s, seat 0 asleep."""
    relays = _relays(100.0)
    assert _vote(relays, 100.5) == {}
    assert _vote(relays, 102.9) == {}


def test_relays_a_relayer_woken_lately_hands_nothing_on() -> None:
    relays = _relays(0.0)
    for t in range(1, 6):
        relays.membership.listening.saw(float(t))
    relays.membership.listening.saw(20.0)  # (asleep from 5 s to 20 s: a break)
    for t in range(21, 23):
        relays.membership.listening.saw(float(t))
    assert _vote(relays, 22.5) == {}
    for t in range(23, 25):
        relays.membership.listening.saw(float(t))
    assert _vote(relays, 25.0) == {1: (2,)}  # (listening since 20 s: a later vote counts)


def _withdrawal() -> Drop:
    return Drop(frontier=(0, 0, 0), seat=1, last_seq=0, reason=DropReason.WITHDRAW)


def _listen(relays: Relays, start: float, end: float) -> None:
    """Seat 0 hears seat 1 (and listens) every half second from ``start`` to ``end``."""
    t = start
    while t <= end:
        relays.membership.listening.saw(t)
        relays.membership.heard_from(1, t)
        t += 0.5


def test_relays_a_vote_held_for_the_listening_is_handed_on_once_the_relayer_has_listened() -> None:
    """A relayer restored at 100 s takes the vote at 100.5 s: it holds it, and hands seat 1
    on to the voter once it has listened for ``drop_after``, not before."""
    relays = _relays(100.0)
    assert _vote(relays, 100.5) == {}
    _listen(relays, 101.0, 102.5)
    assert relays.reconsider(102.5, _FEEDS) == []  # type: ignore[arg-type]
    assert relays.to == {}
    _listen(relays, 103.0, 103.0)
    relays.reconsider(103.0, _FEEDS)  # type: ignore[arg-type]
    assert relays.to == {1: (2,)}
    assert relays.held == {}


def test_relays_a_held_vote_withdrawn_meanwhile_hands_nothing_on() -> None:
    relays = _relays(100.0)
    assert _vote(relays, 100.5) == {}
    relays.vote(2, _withdrawal(), 101.0, Source.NETWORK, _FEEDS)  # type: ignore[arg-type]
    _listen(relays, 101.0, 104.0)
    relays.reconsider(104.0, _FEEDS)  # type: ignore[arg-type]
    assert relays.to == {}


def test_relays_a_held_vote_on_a_member_silent_here_by_then_hands_nothing_on() -> None:
    """Asked again, the vote passes the other checks as of then: seat 1, heard at 100.4 s,
    silent here since, has nothing to hand on at 104 s."""
    relays = _relays(100.0)
    assert _vote(relays, 100.5) == {}
    for t in (101.0, 102.0, 103.0, 104.0):
        relays.membership.listening.saw(t)
    relays.reconsider(104.0, _FEEDS)  # type: ignore[arg-type]
    assert relays.to == {}
    assert relays.held == {}
