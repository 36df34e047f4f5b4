"""A cut ``Unheld`` offers stands only while a member still in has a vote on the member,
counting no more than the cut, that it never withdrew (``folds.cut_stands``,
``roster.frozen_below``; docs/protocol.md §9.2, *whoever else held them*, §13).

Found as ``scripts/soak.py --games 1 --seed 686 --variants`` (four players, quick timers; two
overlapping partitions cut seat 2 off from 12.3 s to 16.5 s and seat 1 from 13.5 s to 16.3
s). Seat 2, cut off, voted seats 1, 0 and 3 out (Lamport 365-367) and withdrew on seat 0;
seat 1 voted seats 2, 3 and 0 out (379-385); seats 3 and 0 voted seat 2 out (386, 387: seat
2 dropped at 54) and seat 1 out (390, 392, counting 59); then every voter on seat 1
withdrew (seats 3 and 0 at 392 and 393, seat 2 at 396). Seat 2, holding every drop event
and not yet seat 3's next event (413, which announces seat 1's feed up to 69), was offered
seat 1's cut at 59 (no member still in had announced seat 1's events past 59 in an event),
imposed it, dropped seat 1 there and made that final; seats 0, 1 and 3, holding seat 3's
event, were offered no cut and made seat 2's drop at 54 final. Seat 2 waited in play for
ever.

The cut rests on a voter counting no more than it, still in, that announces none of the
events past it: then none of them is final anywhere. Seats 0 and 3 withdrew, and their
beats (which no log keeps) announced seat 1's feed past 59 before any of their events did:
the others made those events final, and seat 2's drop with them. So the cut is kept only
while such a vote stands. The views are folded at four players and at five (a fifth member
voting seat 1 out and withdrawing as seat 0 does); each split before.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_folds_unheld_still_in import _S, _W, _drops, _events, _folds, _Row, _spec

from p2p_nertz.protocol.folds import Folds, cut_stands
from p2p_nertz.protocol.roster import frozen_below
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, run

#: Seed 686's drop events (Lamport, seat, seq, reason, target, count, frontier), as seat 2
#: held them when it made seat 1's drop final (every one of them; the readmission of seat 2
#: at 414 comes later).
_SEED_686: list[_Row] = [
    (365, 2, 59, _S, 1, 55, (56, 55, 58, 55)),
    (366, 2, 60, _S, 0, 56, (56, 55, 59, 55)),
    (367, 2, 61, _S, 3, 55, (56, 55, 60, 55)),
    (373, 2, 62, _W, 0, 0, (56, 55, 61, 55)),
    (379, 1, 64, _S, 2, 54, (60, 63, 54, 56)),
    (384, 1, 65, _S, 3, 56, (60, 64, 54, 56)),
    (385, 1, 66, _S, 0, 60, (60, 65, 54, 56)),
    (386, 1, 67, _W, 0, 0, (60, 66, 54, 56)),
    (386, 3, 57, _S, 2, 54, (66, 59, 54, 56)),
    (387, 0, 67, _S, 2, 54, (66, 59, 54, 57)),
    (387, 1, 68, _W, 2, 0, (60, 67, 54, 56)),
    (390, 3, 58, _S, 1, 59, (66, 59, 54, 57)),
    (392, 0, 68, _S, 1, 59, (67, 59, 54, 57)),
    (392, 3, 59, _W, 1, 0, (66, 59, 54, 58)),
    (393, 0, 69, _W, 1, 0, (68, 59, 54, 57)),
    (393, 3, 60, _W, 2, 0, (66, 59, 54, 59)),
    (394, 0, 70, _W, 2, 0, (69, 59, 54, 57)),
    (396, 2, 63, _W, 1, 0, (56, 55, 62, 55)),
    (400, 2, 64, _W, 3, 0, (56, 55, 63, 55)),
    (402, 1, 69, _W, 3, 0, (66, 68, 64, 56)),
]
#: Seat 3's event 61 (Lamport 413, a move in the game; here a withdrawal of no vote), the
#: first of its events to announce seat 1's feed past 59: seats 0, 1 and 3 held it when they
#: made seat 2's drop final, seat 2 did not.
_SEAT_3_AFTER: _Row = (413, 3, 61, _W, 2, 0, (70, 69, 64, 60))


def _rows(players: int, rows: Sequence[_Row]) -> list[_Row]:
    """Seed 686's ``rows`` at four players; at five, seat 4 votes seat 1 out and withdraws
    as seat 0 does (seat 1's drop then takes three votes, as seat 2's does with seat 1's)."""
    if players == 4:
        return list(rows)
    out: list[_Row] = []
    for lamport, seat, seq, reason, target, count, f in rows:
        out.append((lamport, seat, seq, reason, target, count, (*f, f[0])))
        if seat == 0 and target == 1:
            out.append((lamport, 4, seq, reason, target, count, (*f[:4], f[0])))
    return out


@pytest.mark.parametrize("players", [4, 5])
def test_seed_686_every_view_drops_alike(players: int) -> None:
    """Seat 2's view (every drop event) and the others' (with seat 3's event 61) drop alike:
    before, seat 2's view imposed seat 1's cut at 59 (``Unheld``'s offer) and the others
    dropped seat 2 at 54. The held events have both fixed points: seat 2 out at 54 (at 387,
    resting on seat 1's withdrawal on seat 3 at 402) and seat 1 out at 59 (at 392, resting on
    seat 2's withdrawal on seat 3 at 400); since session 22 every view takes the drop
    decided first (docs/protocol.md §7.4), where before session 22 every view dropped seat 2.
    """
    spec = _spec(players)
    before = _drops(spec, _events(players, _rows(players, _SEED_686)))
    after = _drops(spec, _events(players, _rows(players, [*_SEED_686, _SEAT_3_AFTER])))
    assert before == after
    assert after in ({2: 54}, {1: 59})


@pytest.mark.parametrize("withdrawn", [(), (3,), (0, 3), (0, 2, 3)])
def test_frozen_below_reads_the_votes_not_withdrawn(withdrawn: tuple[int, ...]) -> None:
    """Seat 1's cut at 59 in the fold that imposes it (votes on seat 1 by seats 2, 3 and 0,
    counting 55, 59 and 59): it stands while one of those voters has not withdrawn, and a
    vote counting more than the cut does not hold it."""
    spec = _spec(4)
    rows = [r for r in _SEED_686 if not (r[3] is _W and r[4] == 1 and r[1] not in withdrawn)]
    fold = _fold_with_cut(spec, rows, 1, 59)
    assert fold.dropped.get(1) == 59
    assert frozen_below(fold.roster, 1, 59) == (len(withdrawn) < 3)
    assert not frozen_below(fold.roster, 1, 54)  # (no vote on seat 1 counts 54 or less)


def test_cut_stands_refuses_the_cut_once_every_voter_below_it_withdrew() -> None:
    """The one test of the offer: the same fold, the same announcements; seat 1's cut at 59
    stands with seat 2's vote not withdrawn, not once seat 2 withdraws too."""
    spec = _spec(4)
    kept = [r for r in _SEED_686 if not (r[1] == 2 and r[3] is _W and r[4] == 1)]
    for rows, stands in ((kept, True), (_SEED_686, False)):
        folds = _folds_of(spec, rows)
        fold = folds._fold({1: 59}, {}, {}, imposed={1: 59})
        assert cut_stands(fold, folds.final, folds.unheld, 1, 59) is stands


def _folds_of(spec: GameSpec, rows: Sequence[_Row]) -> Folds:
    return _folds(spec, _events(spec.seats, rows))


def _fold_with_cut(spec: GameSpec, rows: Sequence[_Row], seat: int, cut: int) -> GameState:
    """The tentative fold of ``rows`` with ``seat``'s cut imposed (as an offer is tried)."""
    return _folds_of(spec, rows)._fold({seat: cut}, {}, {}, imposed={seat: cut})


#: Seed 686's rules (``soak.variant_rules`` drew them for four players).
SEED_686 = Rules(
    draw=1, work_piles=5, nerts_bonus=25, nerts_card_penalty=1, target=None, rounds=3, jokers=1
)


@pytest.mark.slow
def test_seed_686_ends_alike_for_every_peer() -> None:
    """The game itself (four players, ``--variants``; a few seconds of CPU): every
    invariant holds, and every peer drops the same member at the same time (seat 1 at 392
    since session 22's drop decided first, seat 2 at 387 before; readmitted since)."""
    config = SimConfig.soak(686, players=(2, 5), peer=QUICK_TIMERS, rules=lambda _n, _r: SEED_686)
    result = run(config)
    assert result.spec.seats == 4
    assert result.violations == []
    drops = set()
    for peer in result.peers:
        assert peer is not None
        drops.add(tuple(sorted(peer.final.roster.drop_at.items())))
    assert len(drops) == 1
    assert drops.pop() in (((2, 387),), ((1, 392),))
