"""A voter that breaks its freeze in a beat: the honest dealer it tells is held back by nothing
(docs/protocol.md §9.2, *the freeze*; docs/shuffle.md §7.3, §11; ``finality.frozen_claims``).

The last seat complains of seat 0's box as play begins, and seat 1 crashes for good as the
complaint is sent, before it holds it: the honest dealer's final fold reaches the complaint
only once seat 1's drop is final there, and it answers then. Seat 2 votes seat 1 out with
the others, then, after its vote, sends the dealer alone beats announcing seat 1's feed one
event past its vote's count (an event nobody holds), in every input it sends anything.

Before session 23 the dealer waited for that event (``finality.unannounced``: an event of a
member being dropped that a member still in announced is fetched before the drop is final):
for good, since nobody holds it. Its finality stopped below the complaint; it never answered,
the others voted it out *withheld*, and at three players the audit named it
``withheld_answer`` on a move whose past showed its stable time past the complaint (read on
the trust that no voter announces past its vote). Now a receiver takes no voter's word on a
feed past its vote's count: the dealer makes the drop final, answers, and every peer ends the
game alike, nobody named.

The own-head variant (session 24): the liar's beats to the dealer also announce its own feed
far past any event it signs. Without the relay of that debt (``protocol.debts``) the
dealer's lone vote *withheld* on the liar froze the table at four players; now the others
vote the liar out in turn and every peer ends the game. With the head one event past its
last at every beat, never given once the game is over, the dealer stayed in ``result`` for
good while the others were at ``over``; now the liar's own word past what is held caps
nothing (``Finality.bounds``) and every peer ends the game.

Only beats one ahead (session 25): the liar sends the dealer, once it has voted, nothing
beat-like but those lies, its true beats and acks to the others alone. The dealer then never
had the liar's word of any time past its last event, and at four players stayed in ``result``
for good while the others were at ``over``. Now each peer whose game ends relays to every
member the beats of each third one that set what it knows of it (``protocol.last_words``),
and the dealer takes the liar's, old or not: every peer ends the game. At two players there
is no third member: the dealer abandons the liar.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pytest
from cli_helpers import SHORT_ROUND

from p2p_nertz.audit import AuditReport, Finding, FindingKind, LogSource, audit
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Beat,
    Drop,
    DropReason,
    encode_body,
    held_ids,
    parse_body,
)
from p2p_nertz.protocol.debts import DEBT_NOTE, owed_head, read_note
from p2p_nertz.protocol.envelope import Kind, Message, decode_unverified, encode_message
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, Note, Peer, Send
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.invariants import audit_logs, check
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.network import Crash, SimResult, Simulation

# (5 to 10 s of CPU a game, the audit with it; the timeout, a hang guard, allows for a loaded
# machine)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

#: a seed per table size whose games are short (as tests/test_sim_shuffle_dealer_votes.py)
_SEEDS = {3: 3, 4: 5}
#: The rules of the games here: one round on four work piles, or on six (``SHORT_ROUND``, the
#: Pounce variant: about half the moves) for the cases whose fault comes at play's start (the
#: complaint, the crash, the liar's vote) and whose game after it only has to end, each still
#: built there, and each that fails with its mend undone on four piles (sessions 23, 24 and
#: 25's) failing so on six, checked in session 42 (the cases six piles do not build, or make
#: no cheaper, stay on four; the stable times and seqs the docstrings quote are of four
#: piles' games).
ROUND = Rules(target=None, rounds=1)
DEALER, CRASHED, LIAR = 0, 1, 2


def _vote_standing(peer: Peer, target: int) -> Drop | None:
    """``peer``'s own vote against ``target``, if its last drop event on it is one."""
    vote = None
    for message in peer.events(peer.seat):
        if message.kind is Kind.DROP:
            body = parse_body(message.kind, message.body, peer.spec.seats)
            if isinstance(body, Drop) and body.seat == target:
                vote = None if body.reason is DropReason.WITHDRAW else body
    return vote


def _break_freeze(
    peer: Peer,
    to: PeerId,
    target: int | None,
    lies: list[bytes],
    *,
    own_ahead: int = 0,
    only_lies: list[bytes] | None = None,
    lies_to_all: bool = False,
) -> None:
    """Make ``peer`` (a simulated member) follow every input that sends anything, once it has
    voted ``target`` out, with a beat to ``to`` alone announcing ``target``'s feed one event
    past its vote's count, under an id prefix no event has (a test-only cheat: it reaches
    into the peer's beat path). With ``own_ahead``, the beat announces a head of the peer's
    own feed that many events past the last it signed: events nobody is ever given. With
    ``only_lies`` (a list, where each true beat kept from ``to`` is noted), its true beats
    and acks go from then on to every member but ``to``, and nothing beat-like reaches ``to``
    from it but the lies (its events, wants and answers still go to all): ``to`` hears from it
    no beat of a head it holds. With no ``target``, it lies from its first input on, of its
    own head only. With ``lies_to_all``, the others get each lie too, after the true beats."""
    flush = peer._flush
    others = [p for s, p in enumerate(peer.spec.peer_ids) if p != to and s != peer.seat]

    def withheld(effect: Effect) -> list[Effect]:
        if not isinstance(effect, Send) or effect.to not in (None, to):
            return [effect]
        kind = decode_unverified(
            effect.data, game_id=peer.spec.game_id, roster=peer.spec.peer_ids
        ).kind
        if kind not in (Kind.BEAT, Kind.ACK):
            return [effect]
        assert only_lies is not None
        only_lies.append(effect.data)
        return [] if effect.to == to else [Send(effect.data, other) for other in others]

    def lying_flush(now: float) -> list[Effect]:
        effects = flush(now)
        vote = _vote_standing(peer, target) if target is not None else None
        if (target is not None and vote is None) or not any(isinstance(e, Send) for e in effects):
            return effects
        if only_lies is not None:
            effects = [kept for effect in effects for kept in withheld(effect)]
        feeds = [peer.events(q) for q in range(peer.spec.seats)]
        held = list(peer._frontier())
        ids = list(held_ids(feeds, held))
        if target is not None and vote is not None:
            held[target], ids[target] = vote.last_seq + 1, bytes(ID_PREFIX)
        own = feeds[peer.seat]
        head = len(own) + own_ahead
        if own_ahead:
            held[peer.seat], ids[peer.seat] = head, bytes(ID_PREFIX)
        beat = Beat(head, own[-1].id if not own_ahead else bytes(32), tuple(held), tuple(ids))
        lie = peer._outbox.sign_beat(Kind.BEAT, beat)
        lies.append(lie)
        told = [to, *others] if lies_to_all else [to]
        return [*effects, *(Send(lie, pid) for pid in told)]

    peer._flush = lying_flush


@dataclass(slots=True)
class _CrashAtComplaint:
    """A :class:`~p2p_nertz.sim.network.Schedule` that holds nothing: it crashes ``seat`` for
    good as the complaint reaches it (so before it holds it), and notes each lie that reaches
    the dealer while its final fold still counts ``seat`` in."""

    seat: int
    lies: list[bytes]
    taken_early: int = 0
    crashed: list[float] = field(default_factory=list)

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        if seat == self.seat and not self.crashed:
            message = decode_unverified(
                data, game_id=sim.spec.game_id, roster=sim.spec.peer_ids, cache=sim.envelopes
            )
            if message.kind is Kind.DECK_COMPLAIN:
                self.crashed.append(now)
                sim._crash(seat, now, Crash(seat, now, None))
        dealer = sim.peers[DEALER]
        if seat == DEALER and data in self.lies and dealer is not None:
            self.taken_early += self.seat not in dealer.final.dropped
        return False


def _config(players: int, seed: int, faults: Faults, rules: Rules = ROUND) -> SimConfig:
    """A shuffle game of one round (``rules``) with quick timers and ``faults``: the game of
    every case here."""
    return SimConfig(
        players=players,
        seed=seed,
        deal=Deal.SHUFFLE,
        rules=rules,
        peer=QUICK_TIMERS,
        faults=faults,
        max_time=200.0,
    )


def _shuffle_game(
    players: int, seed: int, rules: Rules = ROUND
) -> tuple[Simulation, _CrashAtComplaint, list[bytes]]:
    """The game of the cases below: the last seat complaining of the dealer's box as play
    begins, seat 1 crashed for good as the complaint is sent (:class:`_CrashAtComplaint`,
    which notes the lies in the list returned)."""
    complaint = DeckCheat(players - 1, DeckCheatKind.PLAY_COMPLAINT)
    config = _config(players, seed, Faults(deck_cheats=(complaint,), delay=0.005), rules)
    lies: list[bytes] = []
    schedule = _CrashAtComplaint(CRASHED, lies)
    return Simulation(config, schedule), schedule, lies


def _lying_game(
    players: int,
    seed: int,
    *,
    own_ahead: int = 0,
    only_lies: list[bytes] | None = None,
    lies_to_all: bool = False,
    rules: Rules = ROUND,
) -> tuple[SimResult, _CrashAtComplaint, list[bytes]]:
    """:func:`_shuffle_game` played, the liar breaking its freeze to the dealer
    (:func:`_break_freeze` against seat 1, with these options): the result, the invariants
    checked; the schedule; the lies."""
    sim, schedule, lies = _shuffle_game(players, seed, rules)
    liar = sim.peers[LIAR]
    assert liar is not None
    dealer = sim.identities[DEALER].peer_id
    _break_freeze(
        liar, dealer, CRASHED, lies, own_ahead=own_ahead, only_lies=only_lies,
        lies_to_all=lies_to_all,
    )  # fmt: skip
    result = sim.run()
    result.violations = check(result)
    return result, schedule, lies


def _answered(dealer: Peer) -> bool:
    """Whether ``dealer`` answered the complaint of its box."""
    return Kind.DECK_ANSWER in {m.kind for m in dealer.events(DEALER)}


def _cuts(peers: Iterable[Peer | None]) -> set[tuple[tuple[int, int], ...]]:
    """The members each of ``peers`` dropped, with their cuts (one item: all alike)."""
    return {tuple(sorted(p.final.dropped.items())) for p in peers if p is not None}


@pytest.mark.parametrize("players", [3, 4])
def test_sim_freeze_beats_a_voter_announcing_past_its_vote_holds_no_honest_dealer_back(
    players: int,
) -> None:
    result, schedule, _ = _lying_game(players, _SEEDS[players], rules=SHORT_ROUND)
    # The case is built: seat 1 crashed before it held the complaint, and the dealer took
    # beats of the liar's past its vote while seat 1 was still in its final fold.
    assert schedule.crashed and schedule.taken_early > 0
    # Nothing held the honest dealer back: every peer ended the game, alike, nobody honest
    # named; the liar named for the events of seat 1 it announced past what seat 1 signed
    # (the dealer's debt notes of its beats past its freeze: session 35's ungiven_claim).
    report = result.audit
    assert report is not None
    assert {(f.kind, f.seat) for f in report.errors} == {(FindingKind.UNGIVEN_CLAIM, LIAR)}
    excused = LIAR in result.config.faults.cheaters
    assert result.finished
    assert result.violations == [f"validity: {f}" for f in report.errors if not excused]
    assert _named(report) == []
    assert [(d.seat, d.reasons) for d in report.drops] == [(CRASHED, ("silent",))]
    dealer = result.peers[DEALER]
    assert dealer is not None
    assert _answered(dealer)
    assert _cuts(result.peers) == {((CRASHED, len(dealer.events(CRASHED))),)}


#: seeds per table size for the own-head variant (two each; their games are short)
_OWN_HEAD_SEEDS = [(3, 3), (3, 6), (4, 5), (4, 7)]
#: how far past its feed the liar's own head goes: events it gives nobody, ever
_AHEAD = 1000


@pytest.mark.parametrize(("players", "seed"), _OWN_HEAD_SEEDS)
def test_sim_freeze_beats_a_voter_announcing_its_own_head_to_one_peer_stalls_nobody(
    players: int, seed: int
) -> None:
    """The own-head variant (docs/protocol.md §9.2): the liar's beats to the dealer alone
    also announce a head of its own feed past any event it signs, which nobody is ever given.
    The dealer's cap on its word cannot apply (it never holds the liar's feed up to that head),
    and the dealer votes the liar out *withheld* (it owes its feed up to the head) after
    ``phase_timeout``. Alone: nobody else saw that head, no majority followed, and the vote
    froze the dealer's announcements of the liar's feed, so no later event of the liar's was
    final anywhere: at four players every peer stopped in play for good (seed 5, stable 398).
    Now the dealer relays, with its vote, the signed beat that made the debt; the others owe-track
    the same head, fetch it, never get it, and vote the liar out in turn: the game ends."""
    result, schedule, lies = _lying_game(players, seed, own_ahead=_AHEAD)
    assert schedule.crashed and schedule.taken_early > 0  # (the case is built)
    # Every peer ended the game alike, nobody honest named; the liar is out, withheld, and
    # named for the head it gave nobody.
    assert result.finished
    report = _only_the_liar_named(result, lies)
    assert _named(report) == []
    # (At three players the dealer, left with the liar, votes it out or abandons it.)
    assert [d.seat for d in report.drops] == [CRASHED, LIAR]
    assert report.drops[0].reasons == ("silent",)
    dealer = result.peers[DEALER]
    assert dealer is not None
    assert _answered(dealer)
    honest = [p for p in result.peers if p is not None and p.seat != LIAR]
    assert len(_cuts(honest)) == 1
    assert all(LIAR in p.final.dropped for p in honest)


#: the own-head lie one event ahead, each head filled by the liar's next event until it signs
#: no more at the game's end (four players; before session 24's mend, seed 5's dealer stayed
#: in ``result`` at stable 871, seed 7's likewise; at three players the dealer, left with the
#: liar, voted it out and ended the game all the same). Seed 5 alone here (1.8 CPU-s): with
#: session 24's mend undone (``Finality``: the member's own word past what is held capping its
#: term again) seeds 5 and 7 fail alike, the dealer in ``result`` and seats 2 and 3 at
#: ``over``; seed 7 (2.0 CPU-s) is left to the scans (session 41). On six piles since session
#: 42 (1.9 -> 1.0 CPU-s): the mend undone, its game does not end.
_ONE_AHEAD_SEEDS = [(4, 5)]


@pytest.mark.parametrize(("players", "seed"), _ONE_AHEAD_SEEDS)
def test_sim_freeze_beats_a_head_one_past_at_the_games_end_holds_no_peer_back(
    players: int, seed: int
) -> None:
    """The own-head lie one event ahead (docs/protocol.md §9.2): the liar's beats to the
    dealer announce its own feed one event past its last, at every beat. Once the game is
    over the liar signs no more, and the head it announced is never given. The dealer capped
    the liar's term at its last event then, and its own ``result``, timed after, was never
    final: it stayed in ``result`` for good (stable 871) while the others, at ``over``, voted
    nobody out, so its relayed debt made no majority. Now the liar's own word past what is
    held caps nothing (its beats of a head held here bound its feed's time, §9.4): every
    peer ends the game."""
    result, schedule, lies = _lying_game(players, seed, own_ahead=1, rules=SHORT_ROUND)
    dealer = result.peers[DEALER]
    assert dealer is not None
    # The case is built: the dealer holds the liar's word of a head past its last event
    # (never given: the game is over), and a lie on seat 1 came while seat 1 was still in.
    assert schedule.crashed and schedule.taken_early > 0
    assert dealer._finality.claimed[LIAR][LIAR] > len(dealer.events(LIAR))
    # Nothing held the dealer back: every peer ended the game, alike, nobody honest named;
    # the liar is named for its last head, which it gave nobody.
    assert result.finished
    report = _only_the_liar_named(result, lies)
    assert _named(report) == []
    assert _answered(dealer)
    assert len(_cuts(result.peers)) == 1


@pytest.fixture(scope="module")
def late_answer() -> tuple[SimResult, list[bytes]]:
    """The own-head lie one event ahead at three players, seed 6 (found by debt24): the dealer,
    told alone by the liar a head of its own feed one past its last event and seat 1's feed
    past its vote, took the liar's word on seat 1 as said while it lacked that head, so seat
    1's drop was not final there: it answered the complaint late (Lamport 86, for a move at
    65 whose causal past the audit reads as final past the complaint)."""
    result, schedule, lies = _lying_game(3, 6, own_ahead=1)
    assert schedule.crashed and schedule.taken_early > 0  # (the case is built)
    return result, lies


def _only_the_liar_named(result: SimResult, lies: list[bytes]) -> AuditReport:
    """The audit of every log of ``result`` names the liar ``ungiven_head`` and nothing else
    (:func:`_nobody_honest_named`). The report."""
    report = _nobody_honest_named(result, lies)
    assert FindingKind.UNGIVEN_HEAD in [f.kind for f in report.errors]
    return report


def _nobody_honest_named(result: SimResult, lies: list[bytes]) -> AuditReport:
    """The audit of every log of ``result`` names nothing but, at most, the liar
    ``ungiven_head``: on one of its beats ``lies``, for events of its own past its feed as
    every peer holds it, and ``ungiven_claim``: its beats announce seat 1's feed past what
    seat 1 signed (session 35). The invariants read those findings as their only fault, unless
    the liar is a cheater of the run already (at three players it is the complainer). The
    report."""
    report = result.audit
    assert report is not None
    lies_found = {(FindingKind.UNGIVEN_HEAD, LIAR), (FindingKind.UNGIVEN_CLAIM, LIAR)}
    assert {(f.kind, f.seat) for f in report.errors} <= lies_found
    assert len(report.errors) <= len(lies_found)  # (one finding of each a liar)
    excused = LIAR in result.config.faults.cheaters
    assert result.violations == [f"validity: {f}" for f in report.errors if not excused]
    heads = [f for f in report.errors if f.kind is FindingKind.UNGIVEN_HEAD]
    if not heads:
        return report
    (lie,) = heads
    spec = result.spec
    beats = {
        decode_unverified(
            wire, game_id=spec.game_id, roster=spec.peer_ids, cache=result.envelopes
        ).id.hex()
        for wire in lies
    }
    assert lie.event_id in beats
    held = max(len(p.events(LIAR)) for p in result.peers if p is not None)
    assert lie.seq == held + 1 and lie.last_seq is not None and lie.last_seq > held
    return report


def _named(report: AuditReport) -> list[Finding]:
    return [f for f in report.violations if f.kind is FindingKind.WITHHELD_ANSWER]


def _debt_notes(result: SimResult, seat: int) -> list[tuple[int, Note]]:
    return [(at, n) for at, n in result.notes[seat] if n.name == DEBT_NOTE]


def _with_notes(result: SimResult, seat: int, notes: list[tuple[int, Note]]) -> SimResult:
    """``result`` with the ``debt`` notes of ``seat``'s log replaced by ``notes``."""
    kept = [[(at, n) for at, n in mine if n.name != DEBT_NOTE] for mine in result.notes]
    kept[seat] = sorted([*kept[seat], *notes], key=lambda item: item[0])
    return dataclasses.replace(result, notes=kept)


def test_sim_freeze_beats_an_honest_dealer_held_back_by_a_noted_debt_is_not_named(
    late_answer: tuple[SimResult, list[bytes]],
) -> None:
    """The dealer's log keeps the liar's beats past its freeze as ``debt`` notes
    (docs/log-format.md §5): the audit takes them as why the dealer's final fold lagged, and
    names nobody honest. Without them (the logs before session 24) every log named the
    honest dealer ``withheld_answer`` on its move at 65."""
    result, lies = late_answer
    assert result.finished
    report = _only_the_liar_named(result, lies)
    assert _named(report) == []
    assert [(d.seat, d.reasons) for d in report.drops] == [(CRASHED, ("silent",))]
    notes = _debt_notes(result, DEALER)
    assert notes and all(n.data in lies for _, n in notes)  # (the liar's signed beats)
    assert _debt_notes(result, LIAR) == []  # (nobody else was told past the freeze)
    bare = audit_logs(_with_notes(result, DEALER, []))
    assert [(f.seat, f.event, f.lamport) for f in _named(bare)] == [(DEALER, "move", 65)]


def test_sim_freeze_beats_a_forged_or_irrelevant_debt_note_excuses_nobody(
    late_answer: tuple[SimResult, list[bytes]],
) -> None:
    """A note excuses the dealer only as a signed beat, in the dealer's own log, timed before
    the move, of a voter announcing past its vote and past what the move's past holds of its
    feed: anything else leaves the dealer named as if there were no note."""
    result, _ = late_answer
    notes = _debt_notes(result, DEALER)
    at, first = notes[0]
    message, beat = _opened(result, first.data)

    def signed(lamport: int, held: tuple[int, ...]) -> bytes:
        body = Beat(beat.head_seq, beat.head_id, held, beat.held_ids)
        return _signed(result.identities[LIAR], result.spec.game_id, lamport, body, message.version)

    within = list(beat.held)
    within[CRASHED] = 6  # (seat 1's feed as the liar's vote counts it: no freeze passed)
    cases = {
        "forged": (DEALER, [(at, Note(DEBT_NOTE, _flipped(first.data)))]),
        "another log": (LIAR, notes),
        "after the move": (DEALER, [(at, Note(DEBT_NOTE, signed(200, beat.held)))]),
        "within the freeze": (DEALER, [(at, Note(DEBT_NOTE, signed(20, tuple(within))))]),
    }
    for case, (seat, kept) in cases.items():
        report = audit_logs(_with_notes(result, seat, kept))
        named = [(f.seat, f.event, f.lamport) for f in _named(report)]
        assert named == [(DEALER, "move", 65)], case
        assert bool(_bad_proofs(report)) == (case == "forged"), case


def _bad_proofs(report: AuditReport) -> list[Finding]:
    return [f for f in report.violations if f.kind is FindingKind.BAD_PROOF]


def _flipped(data: bytes) -> bytes:
    """``data`` with its last bit flipped: a signed message's signature no longer verifies."""
    forged = bytearray(data)
    forged[-1] ^= 1
    return bytes(forged)


def _signed(who: Identity, game_id: bytes, lamport: int, beat: Beat, version: int) -> bytes:
    """``beat`` signed by ``who`` for ``game_id`` at ``lamport``."""
    return encode_message(
        who, game_id=game_id, seq=0, prev=None, lamport=lamport, kind=Kind.BEAT,
        body=encode_body(beat), version=version,
    )  # fmt: skip


def _lies_named(report: AuditReport) -> list[int]:
    return [f.seat for f in report.violations if f.kind is FindingKind.UNGIVEN_HEAD]


def _opened(result: SimResult, data: bytes) -> tuple[Message, Beat]:
    spec = result.spec
    return read_note(
        data, game_id=spec.game_id, roster=spec.peer_ids, versions=spec.read_versions,
        seats=spec.seats,
    )  # fmt: skip


def _audit(result: SimResult, seats: list[int], cut: int = 0) -> AuditReport:
    """The audit of the logs of ``seats`` alone (the liar's cut short by ``cut`` bytes: a torn
    tail)."""
    files = log_files(result)
    files[LIAR] = files[LIAR][: len(files[LIAR]) - cut]
    return audit([LogSource.from_bytes(f"p{s + 1}.log", files[s]) for s in seats])


def test_sim_freeze_beats_a_head_the_liars_next_event_filled_names_nobody(
    late_answer: tuple[SimResult, list[bytes]],
) -> None:
    """The one-ahead liar's beats past its vote each announce its own feed one past its last
    event, which its next event fills, but for the last ones (the game over): the dealer's
    notes of the filled heads alone are freeze breaks the logs cannot prove a lie. A beat may
    overtake its event: only a head no log ever holds is one (docs/audit.md, *Evidence*)."""
    result, _ = late_answer
    liar = result.peers[LIAR]
    assert liar is not None
    vote = _vote_standing(liar, CRASHED)
    assert vote is not None
    given = len(liar.events(LIAR))
    notes = _debt_notes(result, DEALER)
    filled, unfilled = [], []
    for at, note in notes:
        _, beat = _opened(result, note.data)
        assert beat.held[CRASHED] > vote.last_seq  # (each breaks the liar's freeze)
        (filled if owed_head(LIAR, beat) <= given else unfilled).append((at, note))
    assert filled and unfilled  # (the case is built)
    assert _lies_named(audit_logs(_with_notes(result, DEALER, filled))) == []
    assert _lies_named(audit_logs(_with_notes(result, DEALER, unfilled))) == [LIAR]


def test_sim_freeze_beats_a_forged_or_foreign_note_names_nobody(
    late_answer: tuple[SimResult, list[bytes]],
) -> None:
    """Only the liar's own signature on a beat of this game proves its lie: the dealer's
    notes of the unfilled heads, each with a bit flipped, or re-signed under another game's
    id, or signed by a key outside the roster, prove nothing (``bad_proof``) and name
    nobody."""
    result, _ = late_answer
    spec = result.spec
    liar = result.peers[LIAR]
    assert liar is not None
    given = len(liar.events(LIAR))
    unfilled = [
        (at, n)
        for at, n in _debt_notes(result, DEALER)
        if owed_head(LIAR, _opened(result, n.data)[1]) > given
    ]
    stranger = Identity.generate(bytes(range(32)))

    def signed(data: bytes, who: Identity, game_id: bytes) -> bytes:
        message, beat = _opened(result, data)
        return _signed(who, game_id, message.lamport, beat, message.version)

    cases: dict[str, Callable[[bytes], bytes]] = {
        "forged": _flipped,
        "another game": lambda d: signed(d, result.identities[LIAR], bytes(32)),
        "a stranger": lambda d: signed(d, stranger, spec.game_id),
    }
    for case, change in cases.items():
        kept = [(at, Note(DEBT_NOTE, change(n.data))) for at, n in unfilled]
        report = audit_logs(_with_notes(result, DEALER, kept))
        assert _lies_named(report) == [], case
        assert len(_bad_proofs(report)) == len(kept), case


def test_sim_freeze_beats_only_the_liars_own_whole_log_proves_the_head_never_given(
    late_answer: tuple[SimResult, list[bytes]],
) -> None:
    """The head no log holds is a lie only with the liar's own log given and whole (a peer
    logs its own event before it sends anything after it): with the dealer's log and the
    liar's, the liar is named; without the liar's log, with it cut (a torn tail), or with the
    dealer's log alone, nobody is (their peers may have stopped before the event came), and
    the dealer's note is its excuse and no more."""
    result, _ = late_answer
    assert _lies_named(_audit(result, [DEALER, LIAR])) == [LIAR]
    assert _lies_named(_audit(result, [DEALER, CRASHED])) == []
    torn = _audit(result, [DEALER, CRASHED, LIAR], cut=3)
    assert FindingKind.TRUNCATED in {f.kind for f in torn.violations}
    assert _lies_named(torn) == []
    alone = _audit(result, [DEALER])
    assert _lies_named(alone) == [] and not alone.errors


#: the liar that sends the dealer *only* beats one ahead once it has voted (its true beats and
#: acks to the others alone): at three players the liar is also the complainer; and with the
#: lies sent to the others too, after the true beats (a relayer's latest beat of the liar's is
#: then a lie, whose head nobody holds)
#: (On six work piles but seed 3's, whose case six piles do not build; session 42: with
#: session 25's relay undone the three games at four players fail, as on four piles.)
_ONLY_LIES_SEEDS = [(3, 3, False), (3, 6, False), (4, 5, False), (4, 7, False), (4, 7, True)]


@pytest.mark.parametrize(("players", "seed", "to_all"), _ONLY_LIES_SEEDS)
def test_sim_freeze_beats_a_liar_beating_one_peer_only_ahead_holds_it_at_no_end(
    players: int, seed: int, to_all: bool
) -> None:
    """The liar sends the dealer, once it has voted, *only* beats of its own head one past
    its last event (its true beats and acks go to the others alone): the dealer hears from it
    no beat of a head it holds, so nothing of the liar's time past its last event, and the
    liar's word that it holds the dealer's ``result`` never reaches it. Before session 25 the
    dealer stayed in ``result`` for good while the others were at ``over`` (four players,
    seed 5: stable 813, the liar's cover of seat 3's ``result``; seed 7: 1719, the liar's own
    term), its vote *withheld* on the liar alone. Now each of the others, as its game ends,
    relays to the dealer the liar's beats that set its terms on it (``protocol.last_words``):
    signed by the liar, old or not they are its word, and the dealer ends the game, alike.
    At three players the dealer is left with the liar alone and ends the game on its own
    (it votes the liar out, or their results cover each other). Where the others get the
    lies too, each relays the liar's beats that set its own terms on it, not its latest."""
    kept_back: list[bytes] = []
    rules = ROUND if (players, seed) == (3, 3) else SHORT_ROUND
    result, schedule, lies = _lying_game(
        players, seed, own_ahead=1, only_lies=kept_back, lies_to_all=to_all, rules=rules
    )
    dealer = result.peers[DEALER]
    assert dealer is not None
    # The case is built: true beats of the liar's were kept from the dealer, which holds its
    # word of a head past its last event (never given).
    assert schedule.crashed and schedule.taken_early > 0 and kept_back
    assert dealer._finality.claimed[LIAR][LIAR] > len(dealer.events(LIAR))
    # Every honest peer ended the game, alike, nobody honest named (the liar, at most, for
    # the head it never gave: where a note of it is kept, breaker25's ``ungiven_head``).
    assert result.finished
    report = _nobody_honest_named(result, lies)
    assert _named(report) == []
    assert _answered(dealer)
    # (At three players the liar is the complainer, a cheater the simulator does not wait for.)
    ended = [p for p in result.peers if p is not None and p.seat != CRASHED]
    ended = [p for p in ended if players > 3 or p.seat != LIAR]
    assert all(p.final.phase is Phase.OVER and not p.provisional for p in ended)
    assert len({p.final.digest() for p in ended}) == 1


@pytest.mark.parametrize("seed", [1, 4])
def test_sim_freeze_beats_two_players_a_liar_beating_only_ahead_is_abandoned(seed: int) -> None:
    """With two members there is no third to relay the liar's word (``protocol.last_words``
    relays nothing): the liar (seat 1, a plain game) sends the dealer only beats of its own
    head one past its last event, from the start, and its result came before the dealer's.
    The dealer, owed that head, votes it out *withheld* after ``phase_timeout`` and, with two
    members left, abandons it (docs/protocol.md §9.3): the game ends there, the liar out at
    its whole feed, its ``result`` counted and the round scored, nothing provisional."""
    sim = Simulation(_config(2, seed, Faults(delay=0.005)))
    kept_back: list[bytes] = []
    lies: list[bytes] = []
    liar = sim.peers[1]
    assert liar is not None
    _break_freeze(
        liar, sim.identities[DEALER].peer_id, None, lies, own_ahead=1, only_lies=kept_back
    )
    result = sim.run()
    result.violations = check(result)
    dealer = result.peers[DEALER]
    assert dealer is not None
    # The case is built: true beats kept from the dealer, which holds the liar's word of a
    # head past its last result (the liar's abandon, answering ours, may fill it later).
    results = [m.seq for m in dealer.events(1) if m.kind is Kind.RESULT]
    assert kept_back and lies and dealer._finality.claimed[1][1] > results[-1]
    assert result.finished and result.violations == []
    assert dealer.final.phase is Phase.OVER and not dealer.provisional
    # Out at its last result (its abandon, answering ours, comes past its cut), every round
    # it sent a result of scored.
    assert dealer.final.dropped == {1: results[-1]}
    assert len(dealer.final.game.history) == len(results)
    vote = _vote_standing(dealer, 1)
    assert vote is not None and vote.reason is DropReason.ABANDON
    assert _cuts(result.peers) == {((1, results[-1]),)}
    report = result.audit
    assert report is not None and not report.errors
