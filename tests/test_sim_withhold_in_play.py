"""A member's word handed on in play (docs/protocol.md §9.2, *Handed on in play*; §13, *A member
that sends one member nothing of its own*; ``protocol/relays.py``).

A member that sends one member nothing of its own, a withholder or the far end of a link that
fails one way, reaches it only through the others: its events by relay, its beats not at all.
Once it has nothing to sign, the member withheld from knows nothing of its time: in a tiebreak
round the far end sits out (it signs nothing more), the member withheld from plays it, and
its final fold stays at the end of round 1, its ``commit`` unsigned, until the others vote it
out *withheld*; dropped, it never sees its own drop final (it waits on the same word) and
stays in ``commit`` for good. Cases of the scans (``scan_two_cheaters.py``): ``withhold_fork``
seed 25 (six players, a withholder and a forker), and ``two_withhold``'s first withholder
run as a link (no cheater) at three, four and five players (seeds 83, 85 and 23: each the
first of its table size to hold a member so; round 1 tied between the member withheld from
and a third, the far end sitting the tiebreak out).

The mend: the member withheld from votes the far end out for silence (``drop_after`` without
a word of it); the others, hearing the far end, hand its beats on to the voter from then on.
The voter hears it through them, withdraws its vote once, and the game ends with nobody
dropped.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.rules import Rules
from p2p_nertz.sim import SimResult
from p2p_nertz.sim.collusion import Withholder, game, simulate
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Faults, SimConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: Simulated seconds a game may take (the longest case below ends at 64 s).
MAX_TIME = 120.0


def _link(
    seed: int, players: tuple[int, int], *, both: bool = False, length: float | None = None
) -> tuple[SimResult, Withholder]:
    """``two_withhold`` seed ``seed``'s first withholder (``players``: the draw's range) run as
    a link failing one way from its time on, ``both`` ways, for ``length`` seconds or for
    good; nobody a cheater."""
    config, cheats = game("two_withhold", seed, *players)
    faults = dataclasses.replace(config.faults, deck_cheats=())
    config = dataclasses.replace(config, faults=faults, max_time=MAX_TIME)
    w = cheats[0]
    assert isinstance(w, Withholder)
    until = None if length is None else w.at + length
    links = [Withholder(w.seat, w.victim, w.at, until)]
    if both:
        links.append(Withholder(w.victim, w.seat, w.at, until))
    return simulate(config, links, links=True), links[0]


def _votes(result: SimResult, voter: int, target: int) -> list[DropReason]:
    """The reasons of ``voter``'s membership events about ``target``, in its feed's order."""
    peer = result.peers[voter]
    assert peer is not None
    n = len(result.peers)
    reasons = []
    for message in peer._feeds[voter]:
        if message.kind is Kind.DROP:
            body = parse_body(Kind.DROP, message.body, n)
            assert isinstance(body, Drop)
            if body.seat == target:
                reasons.append(body.reason)
    return reasons


def _commits(result: SimResult) -> list[int]:
    """How many rounds each seat committed to (two: it played a tiebreak round)."""
    peer = result.peers[0]
    assert peer is not None
    return [sum(1 for m in feed if m.kind is Kind.COMMIT) for feed in peer._feeds]


def _ended_alike_nobody_dropped(result: SimResult) -> None:
    assert result.finished, result.violations
    assert result.violations == []
    assert all(p is not None and p.final.dropped == {} for p in result.peers)


def test_a_member_withheld_from_plays_a_tiebreak_its_withholder_sits_out() -> None:
    """``withhold_fork`` seed 25: seat 1 sends seat 5 nothing of its own from 4.1 s; seat 4
    forks. Round 1 ties; seats 2 and 5 play the tiebreak, seat 1 sits out. On main seat 5 was
    voted out *withheld* at its ``result`` and stayed in ``commit`` for good."""
    config, cheats = game("withhold_fork", 25, 4, 6)
    assert config.players == 6
    assert [(c.seat, c.victim) for c in cheats if isinstance(c, Withholder)] == [(1, 5)]
    result = simulate(config, cheats)
    assert result.finished, result.violations
    assert result.violations == []
    forker = config.faults.equivocations[0].seat
    assert all(p is not None and set(p.final.dropped) == {forker} for p in result.peers)
    assert _commits(result)[5] == 2  # (the member withheld from played the tiebreak)
    # It voted its withholder out for silence once, heard it through the others, withdrew,
    # and was not driven to vote again.
    assert _votes(result, 5, 1) == [DropReason.SILENT, DropReason.WITHDRAW]


#: The links of the scans' draws that held a member on main, by table size: ``two_withhold``
#: seed, the draw's range of players, and the seconds the link takes to fail past round 1's
#: end and the others' *withheld* votes (a failure that long, then mended, still dropped the
#: member on main).
LINKS = {3: (83, (3, 3)), 4: (85, (4, 4)), 5: (23, (3, 6))}


def _handed_on_only_to_voters(result: SimResult) -> None:
    """Every member's word is handed on only to members that voted it out for silence, and
    nobody voted any member out for silence more than once (no flap: the hand-on goes on)."""
    n = len(result.peers)
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        for member, voters in peer._delivery.words.to.items():
            assert seat not in (member, *voters)
            for voter in voters:
                assert _votes(result, voter, member)[:1] == [DropReason.SILENT]
    for voter in range(n):
        for member in range(n):
            if member != voter:
                assert _votes(result, voter, member).count(DropReason.SILENT) <= 1


@pytest.mark.parametrize("players", sorted(LINKS))
@pytest.mark.parametrize("both", [False, True], ids=["one way", "both ways"])
def test_a_link_failing_for_good_before_a_tiebreak_lets_every_member_end(
    players: int, both: bool
) -> None:
    """The far end of the link sits out the tiebreak that the member at the near end plays
    (one way, on main: that member in ``commit`` for good, voted out *withheld*). Both ways,
    the far end is held as much as the near one, neither gets on, and the games ended on
    main too: there they check that handing on changes nothing that ends."""
    seed, draw = LINKS[players]
    result, link = _link(seed, draw, both=both)
    assert len(result.peers) == players
    commits = _commits(result)
    if not both:
        assert commits[link.victim] == 2 and commits[link.seat] == 1
        # It voted the far end out for silence once, heard it through the others, withdrew.
        assert _votes(result, link.victim, link.seat) == [DropReason.SILENT, DropReason.WITHDRAW]
        assert all(
            peer is not None and peer._delivery.words.to == {link.seat: (link.victim,)}
            for seat, peer in enumerate(result.peers)
            if seat not in (link.seat, link.victim)
        )
    _ended_alike_nobody_dropped(result)
    _handed_on_only_to_voters(result)


def test_a_link_failing_past_the_timers_then_mended_drops_nobody() -> None:
    """Three players, the link failing one way for 21 s (past round 1's end at 14 s, the
    near end's vote for silence at 17 s and the others' *withheld* votes, due at 20 s), then
    mended: on main the near end was dropped at its ``result`` (it then saw its drop final
    once the link came back, and watched the tiebreak); now nobody is."""
    seed, draw = LINKS[3]
    result, link = _link(seed, draw, length=21.0)
    _ended_alike_nobody_dropped(result)
    _handed_on_only_to_voters(result)
    assert _votes(result, link.victim, link.seat) == [DropReason.SILENT, DropReason.WITHDRAW]


@pytest.mark.parametrize("players", sorted(LINKS))
def test_a_link_failing_for_less_than_the_silence_timer_hands_nothing_on(players: int) -> None:
    """Both ways for 2 s (``drop_after`` is 3 s): the far end's events come relayed, its beats
    directly again before anyone's timer runs out; nobody votes, nothing is handed on."""
    seed, draw = LINKS[players]
    result, _ = _link(seed, draw, both=True, length=2.0)
    _ended_alike_nobody_dropped(result)
    for voter in range(players):
        for member in range(players):
            assert _votes(result, voter, member) == [] or member == voter
    assert all(p is not None and p._delivery.words.to == {} for p in result.peers)


def test_a_claim_covered_only_by_a_stuck_far_end_becomes_final_in_play() -> None:
    """Three players seed 416, the link from seat 2 to seat 0 failing one way from 6.3 s:
    seat 0 claims (its event 83, lamport 382) and seat 2 signs ``stuck`` at the same time
    without that claim in its frontier, then nothing more (it waits for a move or for all
    stuck); seat 1 is stuck too. Seat 2's cover of the claim is in its acks and beats alone,
    which never reach seat 0: the claim stays in the air there for good, seat 0 signs nothing
    more, every member in ``play`` for good on main (the real nodes' tiebreak stall of session
    25, docs/protocol.md §13, in round 1). Seat 0's vote for silence has seat 1 hand seat
    2's beats on, and the game ends."""
    seed, draw = 416, (3, 3)
    result, link = _link(seed, draw)
    assert (link.seat, link.victim) == (2, 0)
    assert _commits(result) == [1, 1, 1]  # (no tiebreak: in play)
    _ended_alike_nobody_dropped(result)
    _handed_on_only_to_voters(result)
    assert _votes(result, 0, 2) == [DropReason.SILENT, DropReason.WITHDRAW]


def test_a_member_gone_for_good_is_handed_on_by_nobody() -> None:
    """A member that crashes for good is voted out for silence by every other: nobody hears
    it, so nobody hands anything on (an honest game sends nothing more)."""
    config = SimConfig(
        players=4,
        seed=3,
        rules=Rules(target=None, rounds=1),
        faults=Faults(crashes=(Crash(3, 4.0, None),)),
        peer=QUICK_TIMERS,
        max_time=MAX_TIME,
    )
    result = simulate(config, ())
    assert result.finished, result.violations
    for seat in range(3):
        assert _votes(result, seat, 3)[:1] == [DropReason.SILENT]
        peer = result.peers[seat]
        assert peer is not None
        assert peer._delivery.words.to == {}


def test_a_member_back_from_a_crash_is_handed_on_by_nobody() -> None:
    """The effect digest's game 0 (three players): seat 0 is down from 11.5 s to 14.4 s and
    seat 2 votes it out for silence; the vote reaches seat 1 just after seat 0 is heard again,
    but seat 1 had suspected it too (``Membership.back``): nothing is handed on. (Without that
    check seat 1 forwarded seat 0's beats to seat 2 for the rest of the game.)"""
    config = SimConfig.soak(0, players=(2, 4))
    assert config.players == 3
    assert [(c.seat, c.restart_after is not None) for c in config.faults.crashes] == [(0, True)]
    result = simulate(config, ())
    assert result.finished, result.violations
    assert _votes(result, 2, 0)[:1] == [DropReason.SILENT]
    assert all(p is not None and p._delivery.words.to == {} for p in result.peers)
