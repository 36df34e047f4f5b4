"""Where the rule of a withdrawal after the drop is tested, counted; and the games of the
mix aimed at it (docs/protocol.md §9.2, *a withdrawal after the drop lifts no cap that
decided it*; §13).

``sim.probes.count_lifted_cuts`` counts the rule's offers and the cuts a peer's tentative
fold or the audit keeps, or takes the rule out (``rule=False``). ``sim.mixes.late_withdrawals``
(``scripts/soak.py --late-withdrawals``) draws games where voters withdraw after a drop.
"""

from __future__ import annotations

import pytest
from test_folds_late_withdrawal import _CUT, _case
from test_folds_unheld_still_in import _events, _folds, _spec

from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.probes import count_lifted_cuts


@pytest.mark.parametrize("players", [3, 5, 7])
def test_probe_counts_the_rule_where_the_hand_built_case_needs_it(players: int) -> None:
    """tests/test_folds_late_withdrawal.py's case, every event held: X's cut is kept, now as
    the drop decided first (X's drop is decided before Z's, which rests on the withdrawals
    after it), which ``impose_cuts`` asks before ``lifted_cuts``' offers; with both taken
    out, X's capped vote (the caps lifted by the withdrawals after the drop) drops Z at 12
    and X stays in: the split of session 15."""
    spec = _spec(players)
    rows, late = _case(players)
    every = _events(players, [*rows, *late])
    with count_lifted_cuts() as counts:
        dropped = _folds(spec, every).tentative.dropped
    assert dropped == {0: _CUT}
    assert counts.first >= 1
    assert counts.fired
    with count_lifted_cuts(rule=False) as off:
        without = _folds(spec, every).tentative
    assert (off.offered, off.peer_kept, off.first) == (0, 0, 0)
    assert without.dropped == {players - 1: 2}
    assert without.drop_at[players - 1] == 12


def test_probe_puts_the_rule_back_after_the_block() -> None:
    """The probe rebinds the core's functions only while its block runs, an error in it
    included."""
    from p2p_nertz.audit import auditor
    from p2p_nertz.protocol import folds

    names = [
        (folds, "lifted_cuts"),
        (folds, "cut_made"),
        (folds, "cut_stands"),
        (folds, "decided_first"),
        (folds, "impose_cuts"),
        (auditor, "impose_cuts"),
    ]
    before = [getattr(module, name) for module, name in names]
    with pytest.raises(RuntimeError), count_lifted_cuts(rule=False):
        assert folds.lifted_cuts is not before[0]
        raise RuntimeError
    assert [getattr(module, name) for module, name in names] == before


@pytest.mark.parametrize("seed", range(40))
def test_late_withdrawals_draws_a_member_cut_off_and_another_cut_off_from_a_majority(
    seed: int,
) -> None:
    """Each partition of the mix cuts one link; some member (x) loses every other, and
    another (z) loses x and at least half of the rest: with x's vote, a majority on z. The
    same seed draws the same game."""
    config = late_withdrawals(seed)
    assert config == late_withdrawals(seed)
    n = config.players
    assert 3 <= n <= 5
    seats = frozenset(range(n))
    links: list[frozenset[int]] = []
    for partition in config.faults.partitions:
        a, b = partition.groups
        assert len(seats - a) == len(seats - b) == 1
        links.append((seats - a) | (seats - b))
        assert partition.start < partition.end
    lost = {q: {next(iter(link - {q})) for link in links if q in link} for q in seats}
    x = next(q for q in seats if lost[q] == seats - {q})
    assert any(q != x and x in lost[q] and len(lost[q] - {x}) >= n // 2 for q in seats)
    assert (config.faults.crashes, config.faults.equivocations) == ((), ())
