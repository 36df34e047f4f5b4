"""What a member owes that another member's debt stands in front of (docs/protocol.md §9.2,
session 39).

*Nobody is blamed for a debt of another's*: while a member owes this peer events it does not
hold (its own feed past a head it announced, or a third member's it announced holding past
ours) and has not given them for half a ``phase_timeout``, the phase's wait blames no other
member for its phase event (that member's fold may wait on the very same events: two liars at
five players, seed 158), and counts again from when the debt is settled. The debtor itself is
blamed as before. A debt younger than that (an event in flight) or of cover only excuses
nobody.

*A claim on the feed of a member whose game is over*: our final fold over, we still vote out,
after ``phase_timeout``, a member that announces holding our own feed past its head (nobody
else can be sure it lies, and our vote may be the one the majority lacks: seed 3), and judge
nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest

from p2p_nertz.protocol.deadlines import earliest
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.membership import Membership, SilenceTimers, judging_at_end
from p2p_nertz.protocol.state import GameState, Phase

_T = 2.0  # phase_timeout
_TIMERS = SilenceTimers(suspect_after=1.0, drop_after=5.0, phase_timeout=_T, max_watch=64)


class _Final:
    """A final (and held) fold in ``phase`` of round 1, waiting for ``waiting``."""

    def __init__(self, phase: Phase, waiting: Sequence[int] = ()) -> None:
        self.phase = phase
        self.round = SimpleNamespace(number=1, deck=None)
        self.dropped: dict[int, int] = {}
        self._waiting = frozenset(waiting)

    def waiting(self) -> frozenset[int]:
        return self._waiting


def _membership(n: int, now: float = 0.0) -> Membership:
    return Membership(0, n, now, _TIMERS)


def _withheld(m: Membership, final: _Final, now: float) -> list[int]:
    """The phase's votes at ``now`` (every member heard then), cast as Author.liveness does."""
    for q in range(m.n):
        m.heard_from(q, now)
    state = cast(GameState, final)
    voted = []
    for q in m.withholding(now, state, 0.0, lambda: state):
        m.vote(q, 5, out=False)
        voted.append(q)
    return voted


def _owes_feed(n: int, since: float) -> tuple[float, int, tuple[int, ...], tuple[int, ...]]:
    return (since, 9, (0,) * n, (0,) * n)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_debtors_another_members_debt_excuses_a_phase_event_until_settled(n: int) -> None:
    m = _membership(n)
    final = _Final(Phase.RESULT, waiting=(1, 2))
    m.stall[1] = _owes_feed(n, 0.0)  # seat 1 owes its own feed past what we hold, since 0
    assert _withheld(m, final, _T - 0.01) == []
    # The debtor's own debt excuses it nothing; seat 2, whose fold may wait on it, is not blamed.
    assert _withheld(m, final, _T) == [1]
    assert earliest(m, cast(GameState, final), 0.0, float("inf")) > _T  # (no deadline spins)
    assert _withheld(m, final, 2.9) == []
    del m.stall[1]  # its debt settled at 3 (its drop final here: Membership.stalls)
    assert _withheld(m, final, 3.0) == []
    assert earliest(m, cast(GameState, final), 0.0, float("inf")) <= 3.0 + _T
    assert _withheld(m, final, 3.0 + _T - 0.01) == []
    assert _withheld(m, final, 3.0 + _T) == [2]


@pytest.mark.parametrize(
    "record",
    [
        (1.5, 9, (0, 0, 0, 0), (0, 0, 0, 0)),  # (owed 0.5 s: an event in flight)
        (0.0, 0, (0, 0, 7, 0), (0, 0, 0, 0)),  # (its cover of seat 2's feed: no event unheld)
    ],
    ids=["young", "cover-only"],
)
def test_debtors_a_young_or_cover_debt_excuses_nobody(
    record: tuple[float, int, tuple[int, ...], tuple[int, ...]],
) -> None:
    m = _membership(4)
    m.stall[1] = record
    assert _withheld(m, _Final(Phase.RESULT, waiting=(1, 2)), _T) == [1, 2]


def test_debtors_a_claim_on_a_third_feed_is_a_debt() -> None:
    m = _membership(4)
    m.stall[1] = (0.0, 0, (0, 0, 0, 0), (0, 0, 0, 8))  # seat 1 claims seat 3's feed past ours
    assert _withheld(m, _Final(Phase.RESULT, waiting=(1, 2, 3)), _T) == [1]


class _Over:
    """Seat 0 with its final fold over, every feed 5 long, seat 1 claiming ``claim``."""

    def __init__(self, n: int, claim: Sequence[int]) -> None:
        self.m = _membership(n)
        self.final = cast(GameState, _Final(Phase.OVER))
        self.feeds = cast(Sequence[Sequence[Message]], [[None] * 5 for _ in range(n)])
        claimed = [(5,) * n for _ in range(n)]
        claimed[1] = tuple(claim)
        self.finality = cast(
            Finality,
            SimpleNamespace(announced=[(0, 0)] * n, claimed=claimed, held_by=[(5,) * n] * n),
        )

    def scan(self, now: float) -> list[int]:
        m = self.m
        for q in range(m.n):
            m.heard_from(q, now)
        voted = []
        for q in m.stalls(now, self.final, lambda: self.final, self.feeds, self.finality):
            m.vote(q, 5, out=False)
            voted.append(q)
        return voted


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_claims_at_end_a_member_over_votes_out_a_claim_on_its_own_feed(n: int) -> None:
    over = _Over(n, (6,) + (5,) * (n - 1))  # seat 1 claims our own seq 6; we signed 5
    assert over.scan(0.0) == []
    assert over.scan(_T - 0.01) == []
    assert over.scan(_T) == [1]
    assert 1 in over.m.stall_votes  # (withdrawn if the events come: Membership.relieved)


@pytest.mark.parametrize("n", [3, 4])
def test_claims_at_end_nothing_else_is_judged_once_over(n: int) -> None:
    over = _Over(n, (5,) * (n - 1) + (6,))  # a claim on a third member's feed, not ours
    over.finality.held_by = [(0,) * n] * n  # and nobody covers anything
    over.finality.announced = [(0, 9)] * n  # and every member owes its own feed
    assert over.scan(0.0) == []
    assert over.scan(10 * _T) == []
    assert over.m.stall == {}


def test_claims_at_end_a_claim_given_or_ended_is_no_debt() -> None:
    over = _Over(3, (6, 5, 5))
    assert over.scan(0.0) == []
    over.feeds[0].append(None)  # type: ignore[attr-defined]  # (our seq 6 after all: a vote)
    assert over.scan(_T) == []
    assert over.m.stall == {}


class _SharesLate:
    """A share wait (``Membership.share_waits``): seat 2 owes a share since ``since``, late
    once ``timeout`` has passed since then and since ``heard`` (as ``ShareWaits.late``)."""

    def __init__(self, since: float) -> None:
        self.since = since
        self.items: dict[int, list[str]] = {}

    def late(
        self,
        now: float,
        final: GameState,
        held: GameState,
        timeout: float,
        heard: float,
        **_: object,
    ) -> list[int]:
        late = max(self.since, heard) + timeout <= now
        self.items = {2: ["its share"]} if late else {}
        return sorted(self.items)


def _shares_withheld(m: Membership, final: _Final, now: float) -> list[int]:
    """The votes at ``now`` of the phase's wait, then of the share waits (Author.liveness)."""
    voted = _withheld(m, final, now)
    state = cast(GameState, final)
    for q in m.withheld_shares(now, state, state):
        m.vote(q, 5, out=False)
        voted.append(q)
    return voted


@pytest.mark.parametrize("n", [3, 4, 5])
def test_debtors_another_members_debt_excuses_a_share_until_settled(n: int) -> None:
    # Session 40: a share wait is under the same rule as the phase's event.
    m = _membership(n)
    m.share_waits = _SharesLate(0.0)  # type: ignore[assignment]
    final = _Final(Phase.PLAY)
    m.stall[1] = _owes_feed(n, 0.0)  # seat 1 owes its own feed past what we hold, since 0
    assert _shares_withheld(m, final, _T) == []  # (seat 1's record: the stall scan's vote)
    assert _shares_withheld(m, final, 2.9) == []
    del m.stall[1]  # its debt settled at 3
    assert _shares_withheld(m, final, 3.0) == []
    assert _shares_withheld(m, final, 3.0 + _T - 0.01) == []
    assert _shares_withheld(m, final, 3.0 + _T) == [2]


def test_debtors_no_debt_a_share_is_voted_at_its_time() -> None:
    m = _membership(3)
    m.share_waits = _SharesLate(0.0)  # type: ignore[assignment]
    assert _shares_withheld(m, _Final(Phase.PLAY), _T - 0.01) == []
    assert _shares_withheld(m, _Final(Phase.PLAY), _T) == [2]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_judging_at_end_while_a_claim_on_our_feed_waits_for_our_vote(n: int) -> None:
    # Session 40: what a real node stays for once over (runtime/node.py's ending).
    over = _Over(n, (6,) + (5,) * (n - 1))
    feeds, claimed = over.feeds, over.finality.claimed

    def judging() -> bool:
        return judging_at_end(over.m, over.final, feeds, claimed)

    over.scan(0.0)
    assert judging()
    assert over.scan(_T) == [1]
    assert not judging()  # (voted: the node waits for the others to hold it, as for any)
    playing = _Over(n, (6,) + (5,) * (n - 1))
    playing.final = cast(GameState, _Final(Phase.RESULT))
    assert not judging_at_end(playing.m, playing.final, feeds, claimed)


@pytest.mark.parametrize("claim", ["given", "third", "out"])
def test_judging_at_end_nothing_owed_no_judgement(claim: str) -> None:
    over = _Over(3, (6, 5, 5) if claim != "third" else (5, 5, 6))
    if claim == "given":
        over.feeds[0].append(None)  # type: ignore[attr-defined]  # (our seq 6 after all)
    if claim == "out":
        over.final.dropped[1] = 5  # (the claimant is out: its word counts no more)
    over.scan(0.0)
    assert not judging_at_end(over.m, over.final, over.feeds, over.finality.claimed)
