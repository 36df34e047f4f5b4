"""Session 25's scan of two cheaters at once (``scripts/scan_two_cheaters.py``): what it found.

First, a voter that breaks its freeze and the member it voted on forking
(docs/protocol.md §9.2, *the freeze on the coverage term*; session 25's scan,
``scripts/scan_two_cheaters.py --mix vouch --seed 0 --games 1``).

Five players (:func:`p2p_nertz.sim.collusion.game`, mix ``vouch``, seed 0): seat 1 votes seat
0 out for silence at 3.2 s counting its 16 events, while every other member hears seat 0, and
goes on announcing seat 0's feed past its vote (a :class:`FreezeBreaker`); at 4.5 s seat 0
forks, its second version of event 23 to seat 1 alone. Each cheat alone leaves the honest
members (2, 3, 4) agreeing and the audit naming only the cheater. Together, seat 0's events 17
to 22 (two claims among them) were made final by the honest members (the breaker's cover
counted past its vote); then seat 0 was dropped on proof with the lowest count, seat 1's 16,
below them. The honest members agreed on the drop, but from there an honest member's moves
read another table than its own (its claim of 6H from its waste, where the fold showed 8C,
was refused, retried and refused again, some 1,700 times in 424 s): the game never ended, and
the audit named that honest member (``unavailable_card``). Since the coverage term is capped
by every standing vote's freeze (``finality.standing_freezes``), the breaker's word past 16
covers nothing, and the game ends with the honest members agreeing. The breaker alone then
held seat 0's later events back for good (a vote that never ends) until session 26: now it
owes their cover and is voted out *withheld* (§9.2, *a vote for silence that never ends*).

Second, found by the same scan and needing one cheater only: a member that sends one other
member nothing of its own holds it in ``result`` for good (below).
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.sim import SimResult
from p2p_nertz.sim.collusion import game, simulate

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

FORKER, BREAKER = 0, 1

#: Simulated seconds the game may take: the fork alone ends it by 10.6 s.
MAX_TIME = 40.0


#: The breaker alone: voted out at 9.6 s; the game (one round) ends at 16.4 s. (Before the
#: hand-on in play, §9.2, the round ended tied, the breaker rejoined the extra round and was
#: voted out again at 25.5 s, the game over at 62.6 s: the time is kept for such a game.)
ALONE_TIME = 90.0


def _play(*, fork: bool = True, breaker: bool = True, max_time: float = MAX_TIME) -> SimResult:
    config, breakers = game("vouch", 0, 4, 6)
    faults = config.faults if fork else dataclasses.replace(config.faults, equivocations=())
    config = dataclasses.replace(config, faults=faults, max_time=max_time)
    return simulate(config, breakers if breaker else ())


def _named(result: SimResult) -> set[int | None]:
    """The members the audit holds something against: the seats its errors name, those of
    the findings that accuse (``FindingKind.accuses``, docs/audit.md *Damage and blame*) and
    the members dropped. A notice about the copies (``log_ends_early``, ``single_copy``) names
    the author of the feed a log lacks or alone holds, not a member at fault: a cheater's log
    that stops as the game ends, the honest members' last events still on their way to it,
    names them so (``tests/test_audit_log_ends_with_game.py``)."""
    report = result.audit
    assert report is not None
    findings = (*report.errors, *(f for f in report.violations if f.kind.accuses))
    return {f.seat for f in findings if f.seat is not None} | {d.seat for d in report.drops}


def _log_of(seat: int) -> str:
    """The name of ``seat``'s log in the simulator's audit (``sim.invariants``)."""
    return f"p{seat + 1}.log"


def test_the_scan_game_is_the_pair_it_says() -> None:
    config, breakers = game("vouch", 0, 4, 6)
    assert config.players == 5
    assert [(b.seat, b.target) for b in breakers] == [(BREAKER, FORKER)]
    assert [(e.seat, e.to) for e in config.faults.equivocations] == [(FORKER, {BREAKER})]
    assert config.faults.cheaters == {FORKER, BREAKER}


def test_the_fork_alone_leaves_the_honest_members_agreeing() -> None:
    result = _play(breaker=False)
    assert result.finished
    assert result.violations == []
    assert _named(result) <= {FORKER, BREAKER}


def test_the_breaker_alone_is_voted_out_and_the_honest_members_end_the_game() -> None:
    """The breaker's word past its count covers nothing (§9.2, *the freeze on the coverage
    term*), so its vote, standing with no majority, held the finality of seat 0's later events
    for good (§13, *A vote that never ends*, until session 26). Now it owes the honest members
    its cover of those events as any member does (§9.2, *a vote for silence that never ends*):
    they vote it out *withheld*, and the game ends with them agreeing, the audit naming the
    breaker alone."""
    result = _play(fork=False, max_time=ALONE_TIME)
    assert result.finished
    assert result.violations == []
    report = result.audit
    assert report is not None
    assert {d.seat for d in report.drops} == {BREAKER}
    assert _named(result) <= {BREAKER}
    assert report.valid, [str(f) for f in report.errors]
    # The honest members' logs hold every event: what the audit notes of the copies is the
    # breaker's own log or feed (its log stops before the honest members' last results, which
    # were on their way to it when the simulator stopped: it waits for no cheater).
    assert all(f.log == _log_of(BREAKER) or f.seat == BREAKER for f in report.violations), [
        str(f) for f in report.violations
    ]
    for peer in result.peers:
        assert peer is not None
        assert set(peer.final.dropped) == {BREAKER}
        if peer.seat == BREAKER:
            continue
        # Every honest member voted the breaker out for withholding its cover, and none voted
        # out the member the breaker voted on.
        votes = _votes(result, peer.seat)
        assert (BREAKER, DropReason.WITHHELD) in votes
        assert not any(seat == FORKER for seat, _ in votes)


def _votes(result: SimResult, seat: int) -> set[tuple[int, DropReason]]:
    """The ``drop`` events ``seat`` signed in the run: (member, reason)."""
    peer = result.peers[seat]
    assert peer is not None
    bodies = (parse_body(m.kind, m.body, result.spec.seats) for m in peer._author.feeds[seat])
    return {(b.seat, b.reason) for b in bodies if isinstance(b, Drop)}


def test_a_freeze_breaker_and_a_fork_together_leave_the_honest_members_playing_on() -> None:
    result = _play()
    # The pair is the class: the forker is dropped on proof at the breaker's count.
    report = result.audit
    assert report is not None
    assert [d.seat for d in report.drops] == [FORKER]
    # What must hold: the honest members end the game, no invariant broken, the audit names
    # the cheaters alone.
    assert result.finished
    assert [v for v in result.violations if v.startswith("validity")] == []
    assert _named(result) <= {FORKER, BREAKER}
    assert result.violations == []


# -- one withholder (found by the scan's ``two_withhold`` mix, seed 0) -------------------------
# Five players: from 3.8 s on, seat 0 sends seat 4 nothing of its own (no event, beat or
# answer) and talks to the others as usual; they relay its events to seat 4. Its beats reach
# seat 4 only as the others relay them at their game's end (last_words): before that relay,
# seat 4 knew seat 0's feed (known[0], §7.1) only up to seat 0's last event held and waited in
# ``result`` for good once the others were at ``over``. One cheater is enough: the second
# withholder of the mix is left out.
WITHHOLDER, HELD = 0, 4


def _withheld(*, withhold: bool) -> SimResult:
    config, cheats = game("two_withhold", 0, 4, 6)
    config = dataclasses.replace(config, max_time=MAX_TIME)
    return simulate(config, cheats[:1] if withhold else ())


def test_the_withholding_game_is_the_one_it_says() -> None:
    config, cheats = game("two_withhold", 0, 4, 6)
    assert config.players == 5
    assert [(c.seat, getattr(c, "victim", None)) for c in cheats[:1]] == [(WITHHOLDER, HELD)]
    assert config.faults.equivocations == ()
    result = _withheld(withhold=False)
    assert result.finished
    assert result.violations == []


def test_a_member_withholding_from_one_member_lets_it_end_the_game() -> None:
    result = _withheld(withhold=True)
    assert result.finished
    assert result.violations == []
    # The member withheld from ends the game with the others, nobody voted out.
    assert all(p is not None and p.final.dropped == {} for p in result.peers)


# -- a link failing one way (no cheater) --------------------------------------------------------
# The same shape without a cheater: seat 1's connection to seat 2 fails from 3.4 s on (three
# players, ``two_withhold`` seed 4's first withholder as a link), the others' each way works.
# Seat 0's relay of its end to seat 2 is lost in the network (the seed's light loss): the only
# word of seat 1's time seat 2 could get. A member that goes on beating after a relay is sent
# it again (``LastWords.again``); sent once only, seat 2 waited in ``result`` for good.
def test_a_link_failing_one_way_at_the_games_end_lets_both_ends_finish() -> None:
    config, cheats = game("two_withhold", 4, 3, 6)
    assert config.players == 3
    faults = dataclasses.replace(config.faults, deck_cheats=())
    config = dataclasses.replace(config, faults=faults, max_time=MAX_TIME)
    link = cheats[0]
    assert (link.seat, getattr(link, "victim", None)) == (1, 2)
    result = simulate(config, [link], links=True)
    assert result.finished
    assert result.violations == []
    assert all(p is not None and p.final.dropped == {} for p in result.peers)
