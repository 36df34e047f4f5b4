"""A dealer that withholds its answer to a complaint and signs only votes, or nothing, or
plays in a round where a member dropped first (docs/shuffle.md §6.3, §7.3, §11; the
simulator's ``mute_dealer``, ``votes_only_dealer``, ``silent_dealer`` and
``play_complaint``).

The last seat complains of seat 0's box once play has begun, after seat 0's last stage.
``mute_dealer`` signs nothing from the moment its held fold holds the complaint: no event of
its proves anything, and the votes that drop it are the proof; the audit names nobody and
reports the drop *withheld*, with the answer it owed. ``votes_only_dealer`` signs only votes:
it meets the complaint with a vote against its complainer, signed at the end of an input once
its final fold holds the complaint (``Author.liveness``'s time), and its vote's causal past
proves the answer withheld as a move's does. ``silent_dealer`` in a round where another
member crashed and was voted out first: the member dropped is masked (its events' pasts are
not read through), but the dealer's later moves hold the votes that decide its drop, which
puts it out of the dealer's stable time: a move proves the final fold held the complaint
(since session 22), at three and four players; the report says why each is out. Honest
dealers, on links of 0.3 s one way and with a member crashed, answer and are named by
nothing.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from sim_games import shuffled_game

from cli.main import main
from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim import Faults, SimResult
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.network import Crash, Equivocation

# (2 to 20 s of CPU a game; the timeout, a hang guard, allows for a loaded machine)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

DEALER = 0
#: the member that crashes for good in the games with a crash (at four players: three left)
CRASHED = 1


@functools.cache
def _game(
    players: int,
    dealer: DeckCheatKind | None,
    *,
    seed: int | None = None,
    delay: float = 0.005,
    crash_at: float | None = None,
    fork_at: float | None = None,
    restart_after: float | None = None,
    rounds: int = 1,
) -> tuple[SimResult, AuditReport]:
    cheats = [DeckCheat(players - 1, DeckCheatKind.PLAY_COMPLAINT)]
    if dealer is not None:
        cheats.append(DeckCheat(DEALER, dealer))
    crashes = () if crash_at is None else (Crash(CRASHED, crash_at, restart_after),)
    forks = () if fork_at is None else (Equivocation(CRASHED, fork_at, frozenset({2})),)
    faults = Faults(deck_cheats=tuple(cheats), delay=delay, crashes=crashes, equivocations=forks)
    return shuffled_game(players, faults, seed=seed, rounds=rounds)


def _out_withheld_owing(result: SimResult, report: AuditReport, players: int) -> None:
    """Every peer left dropped the dealer with the complaint unanswered; the report lists it
    out *withheld*, owing the answer to the complainer."""
    complainer = players - 1
    out_silent = {d.seat for d in report.drops if d.reasons in (("silent",), ("equivocation",))}
    for seat, peer in enumerate(result.peers):
        if peer is None or seat == DEALER or seat in out_silent:
            continue  # (the dealer, and a member crashed for good)
        final = peer.final
        assert DEALER in final.dropped and not final.violations
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        assert rs.deck is not None and rs.deck.unanswered() == [(DEALER, complainer)]
    (drop,) = [d for d in report.drops if d.seat == DEALER]
    assert "withheld" in drop.reasons
    assert drop.answers_owed == ((1, complainer),)
    assert dict(report.dropped).keys() == {d.seat for d in report.drops}


@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_dealer_votes_a_mute_dealer_is_voted_out_for_its_answer(players: int) -> None:
    result, report = _game(players, DeckCheatKind.MUTE_DEALER)
    assert result.finished and result.violations == []
    _out_withheld_owing(result, report, players)
    # It signed nothing once it held the complaint: nothing of its proves it, nobody named.
    peer = result.peers[1]
    assert peer is not None
    kinds = {m.kind.name for m in peer.events(DEALER)}
    assert not kinds & {"DECK_ANSWER", "DECK_OPEN", "MOVE", "CLAIM", "DROP"}
    assert report.errors == ()


@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_dealer_votes_a_dealer_that_signs_only_votes_is_named_on_its_vote(
    players: int,
) -> None:
    result, report = _game(players, DeckCheatKind.VOTES_ONLY_DEALER)
    assert result.finished and result.violations == []
    _out_withheld_owing(result, report, players)
    peer = result.peers[1]
    assert peer is not None
    kinds = {m.kind.name for m in peer.events(DEALER)}
    assert "DROP" in kinds and not kinds & {"DECK_ANSWER", "DECK_OPEN", "MOVE", "CLAIM"}
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "drop" and withheld.round == 1


def test_sim_shuffle_dealer_votes_a_silent_dealer_after_a_drop_is_named_on_its_move() -> None:
    """Four players; seat 1 crashes for good during the deal's last steps and is voted out
    *silent* before the complaint: it is masked, but the dealer's later moves hold the votes
    that decide its drop, and with seat 1 out of its stable time they prove its final fold
    held the complaint: named on a move (until session 22 only the votes said it,
    docs/shuffle.md §11). The game is the one it was: the votes drop the dealer as before."""
    players = 4
    result, report = _game(players, DeckCheatKind.SILENT_DEALER, crash_at=1.5)
    assert result.finished and result.violations == []
    _out_withheld_owing(result, report, players)
    (crashed,) = [d for d in report.drops if d.seat == CRASHED]
    assert crashed.reasons == ("silent",) and crashed.answers_owed == ()
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "move" and withheld.round == 1
    assert f"seat {CRASHED}'s drop decided" in withheld.detail


def test_sim_shuffle_dealer_votes_a_silent_dealer_after_a_drop_in_the_deal_is_named() -> None:
    """Four players on links of 0.3 s one way; seat 1 crashes during the deal and is voted
    out there: the deal restarts without it (docs/shuffle.md §8.4), and the complaint is of
    the new attempt's box. The dealer's moves hold the votes that dropped seat 1, no member
    of this deal: read all the same, seat 1 out of the dealer's stable time (session 22)."""
    players = 4
    result, report = _game(players, DeckCheatKind.SILENT_DEALER, seed=1, delay=0.3, crash_at=1.5)
    assert result.finished and result.violations == []
    peer = result.peers[2]
    assert peer is not None
    rs = peer.final.past_rounds[-1] if peer.final.past_rounds else peer.final.round
    assert rs.deck is not None and CRASHED not in rs.deck.members
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "move" and withheld.round == 1
    assert f"seat {CRASHED}'s drop decided" in withheld.detail


def test_sim_shuffle_dealer_votes_a_silent_dealer_of_three_after_a_drop_is_named() -> None:
    """Three players; seat 1 crashes and is voted out by the two left, then the dealer holds
    its complainer's complaint unanswered. Two members left cannot vote one out: the
    complainer abandons the game (docs/protocol.md §9.3). The dealer's moves, holding the
    drop decided, prove it withheld the answer: named on a move."""
    players = 3
    result, report = _game(players, DeckCheatKind.SILENT_DEALER, crash_at=1.5)
    assert result.violations == []
    complainer = result.peers[players - 1]
    assert complainer is not None
    final = complainer.final
    assert final.phase is Phase.OVER and final.abandoned == (players - 1, DEALER)
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "move" and withheld.round == 1


@pytest.mark.parametrize("dealer", [DeckCheatKind.SILENT_DEALER, None])
def test_sim_shuffle_dealer_votes_with_a_member_forked_only_the_forker_is_named(
    dealer: DeckCheatKind | None,
) -> None:
    """Four players; seat 1 signs a second Nerts call under one seq (to seat 2 only) and is
    voted out on proof: forked, masked. The audit names seat 1's fork and nobody else; a
    silent dealer's moves prove nothing there, and the report lists it out *withheld*, owing
    the answer; an honest dealer answers and is not out."""
    players = 4
    result, report = _game(players, dealer, fork_at=1.5)
    assert result.finished and result.violations == []
    assert report.errors and {f.seat for f in report.errors} == {CRASHED}
    assert FindingKind.EQUIVOCATION in {f.kind for f in report.errors}
    (forker,) = [d for d in report.drops if d.seat == CRASHED]
    assert forker.reasons == ("equivocation",)
    if dealer is None:
        assert dict(report.dropped).keys() == {CRASHED}
    else:
        _out_withheld_owing(result, report, players)


#: The honest sample, on links of 0.3 s one way: of seeds 1 to 5 a table size, those that take
#: between them every branch of p2p_nertz the five take (branch coverage of each game, session
#: 29: seed 2 takes none the others do not, at three players and at four); a table size's short
#: seed (``SHORT_SEEDS``: 3, 5) is test_sim_shuffle_unanswered.py's honest game on slow links,
#: the same game, which asserts this and more: played there, not twice.
_HONEST_SEEDS = {3: (1, 4, 5), 4: (1, 3, 4)}


@pytest.mark.parametrize(
    ("players", "seed"), [(p, s) for p, seeds in _HONEST_SEEDS.items() for s in seeds]
)
def test_sim_shuffle_dealer_votes_an_honest_dealer_on_slow_links_is_never_named(
    players: int, seed: int
) -> None:
    """The dealer answers the complaint in the act that made it final, before any move or
    vote it signs: named by nothing, whatever the seed (both table sizes, with
    test_sim_shuffle_unanswered.py's)."""
    result, report = _game(players, None, seed=seed, delay=0.3)
    assert result.finished and result.violations == []
    assert not [f for f in report.violations if f.kind is FindingKind.WITHHELD_ANSWER]
    assert not report.errors and not report.dropped


@pytest.mark.parametrize(("players", "delay"), [(3, 0.005), (4, 0.005), (4, 0.3)])
def test_sim_shuffle_dealer_votes_an_honest_dealer_with_a_member_dropped_is_not_named(
    players: int, delay: float
) -> None:
    """Seat 1 crashes for good and is voted out: the honest dealer, which answers, votes too,
    and is named by nothing, though its later moves hold the drop decided (read since
    session 22); the report lists seat 1 out *silent*."""
    result, report = _game(players, None, delay=delay, crash_at=1.5)
    assert result.finished and result.violations == []
    assert not report.errors
    assert [(d.seat, d.reasons, d.answers_owed) for d in report.drops] == [
        (CRASHED, ("silent",), ())
    ]


@pytest.mark.parametrize("dealer", [DeckCheatKind.SILENT_DEALER, None])
def test_sim_shuffle_dealer_votes_with_a_member_readmitted_only_a_silent_dealer_is_named(
    dealer: DeckCheatKind | None,
) -> None:
    """Four players, two rounds; seat 1 crashes, is voted out, and restarts 10 s later.
    With an honest dealer, which answers, seat 1 rejoins round 2 (readmitted: masked, its gap
    never counts) and nobody is named. With a silent dealer, the dealer's round-1 moves hold
    seat 1's drop decided and name it; voted out, the dealer itself rejoins round 2 (masked
    too, as readmitted), which changes nothing of what its round-1 move proves."""
    result, report = _game(4, dealer, crash_at=1.5, restart_after=10.0, rounds=2)
    assert result.finished and result.violations == []
    peer = result.peers[2]
    assert peer is not None
    final = peer.final
    assert final.round.number == 2
    if dealer is None:
        assert CRASHED in final.gaps and not final.dropped
        assert not report.errors and report.drops == ()
        return
    assert DEALER in final.gaps and CRASHED in final.dropped
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "move" and withheld.round == 1
    assert f"seat {CRASHED}'s drop decided" in withheld.detail


def test_sim_shuffle_dealer_votes_nertz_audit_says_why_the_dealer_is_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``nertz audit`` on the mute dealer's game: valid (nothing of the dealer's proves a
    fault), and the drop says its reason and the answer the dealer owed, in the text and in
    ``--json``."""
    players = 3
    result, _ = _game(players, DeckCheatKind.MUTE_DEALER)
    paths = []
    for seat, data in enumerate(log_files(result)):
        path = tmp_path / f"p{seat + 1}.log"
        path.write_bytes(data)
        paths.append(str(path))
    names = [m.name for m in result.spec.members]
    assert main(["audit", *paths]) == 0
    text = capsys.readouterr().out
    (line,) = [line for line in text.splitlines() if line.startswith("dropped:")]
    assert line.startswith(f"dropped: {names[DEALER]} after its event ")
    assert "(withheld)" in line
    assert f"round 1, {names[players - 1]}'s complaint" in line
    assert main(["audit", "--json", *paths]) == 0
    verdict = [json.loads(x) for x in capsys.readouterr().out.splitlines()][-1]
    (dropped,) = verdict["dropped"]
    assert dropped["seat"] == DEALER and dropped["reasons"] == ["withheld"]
    assert dropped["answers_owed"] == [{"round": 1, "complainer": players - 1}]
