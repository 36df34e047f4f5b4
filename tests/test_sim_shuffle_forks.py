"""A vote on a fork of a vote whose own proof is a real shuffle fork (session 42;
docs/protocol.md §4.1, *the carried part*; §9.4).

Session 41 carried a vote on proof's proof beside its signed part, so that a fork of any
``drop`` is proven by a vote carrying the two versions' signed parts, and tested the size
class with a made-up 8 KB proof (``tests/test_fork_oversize.py``). Here the proof is real: in
a shuffle game (``Deal.SHUFFLE``) one liar forks its ``deck_stage`` or ``deck_shares`` (~3.5
and ~2.8 KB: a proof of two of them is ~7 KB), sending the other version to some members;
a second liar votes on that fork as its honest core does, and forks that vote (the same vote
at the next clock, or at the same clock with its proof's messages the other way round:
versions that differ in their carried part's digest alone). The honest members' votes on the
second liar's fork carry its votes' signed parts, each naming its shuffle proof by digest.
``liar_games.game(deal=Deal.SHUFFLE, paired=True)`` with :data:`~p2p_nertz.sim.liars.FORK_LIES`
is ``scripts/soak.py --shuffle-forks``' game.

Each game must keep every invariant of the lie fuzzer (the honest members end alike, none
dropped or refused, the audit names every liar the peers proved, a watcher of every member
ends where they end, nothing freezes where an end is promised), hold that nested vote, and
keep every message within the wire's bounds.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, parse_body
from p2p_nertz.protocol.envelope import (
    MAX_MESSAGE_SIZE,
    MAX_VOTE_SIZE,
    Kind,
    Message,
    decode_message,
)
from p2p_nertz.protocol.evidence import vote_unproven
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.sim.invariants import audit_alone
from p2p_nertz.sim.liar_games import LiarRun, game, nested_shuffle_proof, simulate
from p2p_nertz.sim.liars import EDGE_LIES, FORK_LIES, LIES, MORE_LIES, QUOTE_LIES, Lie
from p2p_nertz.sim.logfiles import log_files

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: Session 39's bound on a message a vote on proof carried: every forked deal event is over
#: it (a real shuffle proof is large).
SESSION_39_BOUND = 1500


def _play(seed: int, players: int) -> LiarRun:
    config, liars = game(
        seed, players=(players, players), lies=FORK_LIES, two=True, deal=Deal.SHUFFLE, paired=True
    )
    assert config.deal is Deal.SHUFFLE
    assert {liar.lie for liar in liars} == {Lie.DECK_FORK, Lie.VOTE_FORK}
    return simulate(config, liars, watch=True)


def _votes_on_proof(run: LiarRun) -> list[tuple[Message, Drop]]:
    """Every vote on proof any log holds, whole (its proof beside it), with its body."""
    result = run.result
    spec = result.spec
    roster = frozenset(spec.peer_ids)
    votes = {}
    for log in result.logs:
        for wire in log:
            m = decode_message(wire, game_id=spec.game_id, roster=roster)
            if m.kind is Kind.DROP:
                body = parse_body(m.kind, m.body, spec.seats)
                if isinstance(body, Drop) and body.proof:
                    votes[m.id] = (m, body)
    return list(votes.values())


def test_the_fork_lies_are_drawn_by_no_other_mix_and_keep_a_seeds_table() -> None:
    # (In no other list: every seed of the other mixes keeps its lie; paired and the deal
    # change neither a seed's table nor its liars' seats.)
    assert not set(FORK_LIES) & {*LIES, *MORE_LIES, *QUOTE_LIES, *EDGE_LIES}
    for seed in range(6):
        plain, liars = game(seed, players=(3, 5), lies=FORK_LIES, two=True)
        paired, fork_liars = game(
            seed, players=(3, 5), lies=FORK_LIES, two=True, deal=Deal.SHUFFLE, paired=True
        )
        assert paired.players == plain.players and paired.faults == plain.faults
        assert [x.seat for x in fork_liars] == [x.seat for x in liars]
        assert fork_liars[0].lie is liars[0].lie
        assert {x.lie for x in fork_liars} == set(FORK_LIES)


def _versions(vote: Drop) -> str:
    """How a vote on a fork of a vote's two versions differ: ``same-clock`` (their carried
    parts' digests alone) or ``next-clock``."""
    a, b = (decode_message(w, bare=True) for w in vote.proof)
    return "same-clock" if a.lamport == b.lamport else "next-clock"


# The cheapest seeds of ``--shuffle-forks`` at each table size whose game holds the nested
# vote (probed among seeds 0-15, session 42), each way of forking the vote. At three the
# liars are a majority and the honest member drops both on its votes alone (voted out on
# proof: docs/protocol.md §9.2), then the game is over. CPU: ~0.2 s at three, ~1.5 s at
# four, ~2.6 s at five (with the watcher).
@pytest.mark.parametrize(
    ("seed", "players", "versions"),
    [(5, 3, "same-clock"), (6, 3, "next-clock"), (12, 4, "next-clock"), (7, 5, "same-clock")],
)
def test_a_vote_on_a_fork_of_a_vote_on_a_shuffle_fork_breaks_no_invariant(
    seed: int, players: int, versions: str
) -> None:
    run = _play(seed, players)
    result = run.result
    assert result.violations == []  # (with a watcher of every member: it ends where they end)
    assert nested_shuffle_proof(result)
    cheaters = result.config.faults.cheaters
    assert result.audit is not None
    assert {f.seat for f in result.audit.errors} == cheaters
    files = log_files(result)
    for seat, peer in enumerate(result.peers):
        if peer is not None and seat not in cheaters:
            assert set(peer.final.dropped) == cheaters, (seat, peer.final.dropped)
            alone = audit_alone(result, seat, files, deep=True)
            assert {f.seat for f in alone.errors} <= cheaters, alone.errors
    deck_proofs, vote_proofs = 0, 0
    for message, vote in _votes_on_proof(run):
        assert len(message.wire) <= MAX_VOTE_SIZE
        assert len(message.signed_wire) <= MAX_MESSAGE_SIZE
        kinds = {decode_message(w, bare=True).kind for w in vote.proof}
        if kinds == {Kind.DROP}:  # (a fork of a vote: its signed parts alone)
            vote_proofs += 1
            assert _versions(vote) == versions
            assert all(len(w) <= MAX_MESSAGE_SIZE for w in vote.proof)
        elif kinds <= {Kind.DECK_STAGE, Kind.DECK_SHARES}:
            deck_proofs += 1
            assert all(len(w) > SESSION_39_BOUND for w in vote.proof)
    assert deck_proofs and vote_proofs


# At two players one liar (``deck_fork``): the one other member gets both versions of its
# stage, the lie first, proves the fork and, unable to drop anyone, ends the game by an
# abandon (docs/protocol.md §9.3). ~0.1 CPU-s each; seed 0 forks two events, seed 1 one.
@pytest.mark.parametrize("seed", [0, 1])
def test_a_shuffle_fork_at_two_players_ends_the_game_by_an_abandon(seed: int) -> None:
    config, liars = game(seed, players=(2, 2), lies=(Lie.DECK_FORK,), deal=Deal.SHUFFLE)
    run = simulate(config, liars, watch=True)
    result = run.result
    assert result.violations == [] and result.finished
    (liar,) = liars
    honest = 1 - liar.seat
    assert run.told[liar.seat] >= 1
    proofs = [note for _, note in result.notes[honest] if note.name == "proof"]
    assert proofs  # (it proved the fork: both versions reached it)
    peer = result.peers[honest]
    assert peer is not None and set(peer.final.dropped) == {liar.seat}
    assert result.audit is not None
    assert {f.seat for f in result.audit.errors} == {liar.seat}


def test_a_vote_waits_for_the_proof_of_a_fork_below_of_an_event_it_holds() -> None:
    # ``--liars --deal shuffle --lie deck_fork`` seed 5, three players (~1.2 CPU-s): liar
    # seat 1 forks its stages 3 and 5. Honest seat 0 alone gets the other version of 3; it
    # refuses the liar's 4 (whose prev names the 3 it never got) and probes 3; the proof of 5
    # comes first, relayed. Before session 42 seat 0 voted at 5 at once (it holds less than
    # 4: parts_below did not defer), counting 3 and quoting its copy, and every fold refused
    # the honest vote (a vote quoting another id of event 3 than the event counted). Now it
    # waits for the proof at 3 it probes (Proofs.parts_below) and votes there.
    config, liars = game(5, players=(2, 5), lies=(Lie.DECK_FORK,), deal=Deal.SHUFFLE)
    assert config.players == 3
    run = simulate(config, liars, watch=True)
    result = run.result
    assert result.violations == []
    (liar,) = liars
    for seat, peer in enumerate(result.peers):
        if peer is not None and seat != liar.seat:
            assert set(peer.final.dropped) == {liar.seat}
            assert not peer.final.violations  # (no honest vote refused)
    votes = [
        body
        for m, body in _votes_on_proof(run)
        if m.author == result.spec.peer_ids[0] and body.seat == liar.seat
    ]
    assert [v.fork_seq for v in votes] == [3]  # (seat 0 votes where its copy parts)


# ``--liars --lie quote_proof`` (session 44: seed 60301 of five lies, two players; every seed
# below): the liar's votes on proof carry proofs that do not stand, which the honest members
# hold as the liar's events and every fold refuses (``evidence.vote_unproven``). Reading
# them, the soak's count of nested votes decoded a proof's message with its signature
# broken and raised, and the whole scan stopped on that game. Between them the two games
# hold every proof ``sim.liars._forged_proof`` makes: a broken signature, one event twice,
# two events of different seqs, and the liar's own true fork (a proof of another member).
# ~0.7 CPU-s each.
@pytest.mark.parametrize(("seed", "players"), [(0, 2), (2, 3)])
def test_nested_proofs_skip_the_proofs_that_do_not_stand(seed: int, players: int) -> None:
    config, liars = game(seed, players=(players, players), lies=(Lie.QUOTE_PROOF,))
    (liar,) = liars
    run = simulate(config, liars, watch=True)
    result = run.result
    assert result.violations == []
    spec = result.spec
    unproven = [
        vote_unproven(body, game_id=spec.game_id, roster=spec.peer_ids, seats=spec.seats)
        for m, body in _votes_on_proof(run)
        if m.author == spec.peer_ids[liar.seat]
    ]
    assert all(unproven) and any("bad_signature" in why for why in unproven), unproven
    held = [
        m
        for seat, peer in enumerate(result.peers)
        if peer is not None and seat != liar.seat
        for m in peer.events(liar.seat)
        if m.kind is Kind.DROP and parse_body(m.kind, m.body, spec.seats).proof
    ]
    assert held  # (an honest member holds a vote of the liar's carrying such a proof)
    assert not nested_shuffle_proof(result)
