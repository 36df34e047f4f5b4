"""Lying members for the simulator: well-formed, validly signed messages with one field wrong.

A :class:`Liar` is a member whose client lies in one way (:class:`Lie`), drawn from a seed,
over every kind it sends: its events (join, commit, reveal, ready, move, claim, stuck, Nerts
call, result, votes, leave, a shuffle game's deck events), its beats and acks, its wants. Each
lie is re-signed with the liar's own key (a forgery is another class of test): the peers must
take it as the protocol says, and a table with one liar must neither freeze nor split
(``scripts/soak.py --liars``; ``tests/test_sim_liars.py``).

The liar changes a field the honest core filled in; it never restates the rule it breaks (it
does not know whether the move it changes is still legal, nor whether a count it raises names
an event that exists): the peers' own rules decide, and the fuzzer's invariants
(:func:`~p2p_nertz.sim.liar_games.check_liars`, beside
:func:`~p2p_nertz.sim.invariants.check`) say whether they held.
The lies, by where they are made:

* in an event's body, re-signed as the liar's core signs it, so that its own feed holds the
  lie (its chain stays whole): ``frontier_ahead`` (a count past what it holds of a feed, with
  an id it does not hold), ``frontier_fork`` (the id of a count it holds, changed),
  ``frontier_behind`` (a count below what it holds, with that event's id: a lie no one can tell
  from slowness), ``lamport_back`` (the time of its previous event, or less: not above what
  the frontier names), ``lamport_leap`` (a time leaping up to 2^33 ahead), ``move_card`` (a
  move's turned-up cards or a claim's card changed), ``move_pile`` (a card move's source or
  target changed), ``result_scores`` (a round's result with a score changed),
  ``ready_visible`` (the dealt face-up cards changed), ``reveal_value`` (a nonce or secret that
  does not match its commit);
* as events of their own, signed through the liar's core: ``nerts_early`` (a Nerts call at a
  random time, cards left or not), ``stuck_random`` (a pass at a random time), ``vote_ids``
  (a vote for silence on a member heard, one of the ids it quotes changed),
  ``vote_self`` (a vote on itself), ``vote_twice`` (a vote for silence on a member heard all
  along, signed twice), ``vote_ahead`` (a vote counting events of a member past what it holds,
  quoting ids it does not hold), ``join_twice`` (a second join), ``claim_after_leave`` (a
  leave, then its last move signed again);
* on the wire only, its log keeping the honest event (every copy it sends after is the lie):
  ``seq_skip`` (an event under the seq after its own), ``seq_reuse`` (an event under the seq
  of its previous one), ``vote_no_seat`` (a vote for silence on a member heard, signed for
  the purpose, sent as one on a seat past the roster);
* in its beats and acks: ``beat_ahead`` (a held count past what it holds, an id it does not
  hold), ``beat_fork`` (a held id changed), ``beat_behind`` (a held count below what it
  holds), ``beat_head`` (its head seq past its feed, an id of nothing), ``beat_lamport`` (a
  beat timed up to 2^33 ahead or back below its clock);
* in its wants: ``want_missing`` (wants for events that do not exist, or of a seat past the
  roster), ``want_flood`` (twenty wants of random ranges to every member, every input for a
  while).

Session 35's kinds (:data:`MORE_LIES`, out of :data:`LIES` so that a seed keeps its lie), each
a check of the peers' that no kind above reached: ``round_wrong`` (a move or claim of a
later round), ``deal_twice`` (its last commit, ready or result signed again), ``play_early`` (a pass
or a Nerts call out of play: before its deal, or after the round), ``abandon_live`` (an
abandon of a member heard, at any table size), ``rejoin_live`` (a readmission of a member
never dropped), ``flap_forged`` (a vote *flapping* naming a withdrawal that is none),
``withdraw_unvoted`` (a withdrawal of a vote never cast), ``beat_head_fork`` (a beat naming
another id for its own head event). Session 37's, the last of them: ``vote_past`` (a vote
for silence quoting the member's own ids up to what it holds, its frontier naming as much,
and counting one to three events past it with made-up ids: no id it quotes contradicts its
frontier or a counted event, only its count does).

Session 37's kind (:data:`QUOTE_LIES`, out of both): ``quote_ahead`` (a vote for silence
counting 1 to 3 of a member's events past what it holds, its own copies' ids up to there
and made-up ones past them, its frontier naming what it holds: written to be folded before
the member's events it quotes; refused when folded since ``vote_past``'s rule, for counting
past its frontier, docs/protocol.md §9.2). It is ``vote_past``'s lie, the same draws in the
same order: session 38 retired its copy of the code, and keeps the name for its own random
stream (a seed's game is the one its tests and §13 name). Session 38's, beside it:
``quote_proof`` (``quote_ahead``'s ids, told on proof of a fork just past its count, against
the member heard last: a vote on proof no log backs; since session 39 it carries a proof
that proves nothing of that member there, drawn by :func:`_forged_proof`, and every fold
refuses it, ``unproven_vote``).

Session 40's kind (:data:`EDGE_LIES`, out of every other list): ``lamport_brink`` (an event
timed at the very bound the peers take, ``1 + MAX_CLOCK_JUMP`` past the latest event its
frontier names: not a lie every member can refuse, but the edge of the leap bound, where its
corners are, docs/protocol.md §5.3 and §13); ``brink_fork`` (on the wire: an event signed
again timed at that bound, sent to some members, the honest one to the others: a fork, its
brink version taken whole by some clocks; three members at least). Session 41's, beside
them: ``brink_branch`` (``brink_fork``'s fork, then every later event sent to the same members
on that branch, each at the brink past the branch's last: versions past the fork that the
other members know nothing of, several brinks taken whole by some clocks).

Session 42's kinds (:data:`FORK_LIES`, out of every other list), forks on the wire whose
proof is large: ``deck_fork`` (a shuffle game's ``deck_stage`` or ``deck_shares``, the deal's
large events, signed again at the next clock and sent to some members, the honest one to the
others; at two players the one other member gets both, the lie first) and ``vote_fork`` (its
vote on proof so forked: the same vote signed again at the next clock, carrying the same
proof, or at the same clock carrying its proof's two messages the other way round, so that
the two versions differ in the digest of their carried part alone). A liar of each at one
table (``scripts/soak.py --shuffle-forks``) makes a vote on a fork of a vote whose own proof
is a real shuffle fork (docs/protocol.md §4.1).

Session 42's pact (:data:`PACT_LIES`, out of every other list): ``fetched_leap``, two liars
of one table acting together (``--two-liars``; they share a :class:`Pact`): at a chance the
namer has the forker sign again the forker's event it holds last, 2^33 past what it names
(the forker shows that version only in answer to a want), and names it by id in an event
timed one above it (docs/protocol.md §5.3, *a version fetched*); since session 43 the namer's
log holds that version before its event, as if delivered (§5.3, *who the proof convicts*).

A liar lies from ``Liar.at`` on: at ``0`` its first chances are its join and first beats
(:func:`~p2p_nertz.sim.liar_games.game`'s ``join``); a lie on the wire at its join, whose seq
has no event before it, names a made-up ``prev``.

The simulator installs a liar on its seat's core (and again on each restart) by wrapping the
outbox's signing and the core's flush (:func:`install`; the simulator's cheats reach into the
core on purpose, as :mod:`p2p_nertz.sim.cheats` does).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    VOTE_WINDOW,
    Beat,
    Commit,
    DeckReveal,
    DeckWant,
    Drop,
    DropReason,
    EventBody,
    Join,
    Leave,
    Play,
    Ready,
    Result,
    Reveal,
    Want,
    encode_body,
    held_ids,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.effects import Effect, Record, Send
from p2p_nertz.protocol.envelope import Kind, Message, decode_message, encode_message
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP, named_top
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Card, Move, MoveKind, Pile
from p2p_nertz.rules.cards import new_deck
from p2p_nertz.sim.cheats import signed_as

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Peer

__all__ = [
    "EDGE_LIES",
    "FORK_LIES",
    "LIES",
    "MORE_LIES",
    "PACT_LIES",
    "QUOTE_LIES",
    "Lie",
    "Liar",
    "Pact",
    "install",
]


class Lie(enum.StrEnum):
    """How a :class:`Liar` lies (the module docstring)."""

    FRONTIER_AHEAD = "frontier_ahead"
    FRONTIER_FORK = "frontier_fork"
    FRONTIER_BEHIND = "frontier_behind"
    LAMPORT_BACK = "lamport_back"
    LAMPORT_LEAP = "lamport_leap"
    MOVE_CARD = "move_card"
    MOVE_PILE = "move_pile"
    RESULT_SCORES = "result_scores"
    READY_VISIBLE = "ready_visible"
    REVEAL_VALUE = "reveal_value"
    VOTE_IDS = "vote_ids"
    NERTS_EARLY = "nerts_early"
    STUCK_RANDOM = "stuck_random"
    VOTE_SELF = "vote_self"
    VOTE_TWICE = "vote_twice"
    VOTE_AHEAD = "vote_ahead"
    JOIN_TWICE = "join_twice"
    CLAIM_AFTER_LEAVE = "claim_after_leave"
    SEQ_SKIP = "seq_skip"
    SEQ_REUSE = "seq_reuse"
    VOTE_NO_SEAT = "vote_no_seat"
    BEAT_AHEAD = "beat_ahead"
    BEAT_FORK = "beat_fork"
    BEAT_BEHIND = "beat_behind"
    BEAT_HEAD = "beat_head"
    BEAT_LAMPORT = "beat_lamport"
    WANT_MISSING = "want_missing"
    WANT_FLOOD = "want_flood"
    # Session 35's kinds (:data:`MORE_LIES`; not in :data:`LIES`, whose order a seed reads):
    ROUND_WRONG = "round_wrong"
    DEAL_TWICE = "deal_twice"
    PLAY_EARLY = "play_early"
    ABANDON_LIVE = "abandon_live"
    REJOIN_LIVE = "rejoin_live"
    FLAP_FORGED = "flap_forged"
    WITHDRAW_UNVOTED = "withdraw_unvoted"
    BEAT_HEAD_FORK = "beat_head_fork"
    # Session 37's kind (the last of :data:`MORE_LIES`):
    VOTE_PAST = "vote_past"
    # Session 37's (:data:`QUOTE_LIES`; in neither LIES nor MORE_LIES, so that every seed
    # keeps its lie):
    QUOTE_AHEAD = "quote_ahead"
    # Session 38's (:data:`QUOTE_LIES` too):
    QUOTE_PROOF = "quote_proof"
    # Session 40's (:data:`EDGE_LIES`; in no other list, so that every seed keeps its lie):
    LAMPORT_BRINK = "lamport_brink"
    BRINK_FORK = "brink_fork"
    # Session 41's (:data:`EDGE_LIES` too):
    BRINK_BRANCH = "brink_branch"
    # Session 42's (:data:`FORK_LIES`; in no other list):
    DECK_FORK = "deck_fork"
    VOTE_FORK = "vote_fork"
    # Session 42's fetched42 (:data:`PACT_LIES`; in no other list):
    FETCHED_LEAP = "fetched_leap"


#: The lies added in session 35 (and ``vote_past``, session 37, last), each a check of the
#: peers' that no lie of :data:`LIES` reached (``scripts/soak.py --liars --more-lies`` draws
#: from them).
MORE_LIES: tuple[Lie, ...] = (
    Lie.ROUND_WRONG,
    Lie.DEAL_TWICE,
    Lie.PLAY_EARLY,
    Lie.ABANDON_LIVE,
    Lie.REJOIN_LIVE,
    Lie.FLAP_FORGED,
    Lie.WITHDRAW_UNVOTED,
    Lie.BEAT_HEAD_FORK,
    Lie.VOTE_PAST,
)
#: The lies added in sessions 37 and 38: a vote folded before the member's events it quotes,
#: for silence and on proof (``tests/test_sim_quote_ahead.py``,
#: ``tests/test_sim_quote_proof.py``; no soak seed draws them but with ``--lie``).
QUOTE_LIES: tuple[Lie, ...] = (Lie.QUOTE_AHEAD, Lie.QUOTE_PROOF)
#: Session 40's: a time at the very edge of what the peers take (``lamport_brink``: the leap
#: bound's corners, docs/protocol.md §13; no soak seed draws it but with ``--lie``).
EDGE_LIES: tuple[Lie, ...] = (Lie.LAMPORT_BRINK, Lie.BRINK_FORK, Lie.BRINK_BRANCH)
#: Session 42's: forks whose proof is large, a shuffle deal's and a vote's on proof (a liar of
#: each at one table: a vote on a fork of a vote carrying a real shuffle proof; no soak seed
#: draws them but with ``--lie`` or ``--shuffle-forks``).
FORK_LIES: tuple[Lie, ...] = (Lie.DECK_FORK, Lie.VOTE_FORK)
#: Session 42's: two liars acting together (:class:`Pact`; ``--lie fetched_leap
#: --two-liars``, no soak seed draws it but by name).
PACT_LIES: tuple[Lie, ...] = (Lie.FETCHED_LEAP,)
#: Every lie before session 35, in a fixed order (a seed draws from it: the seeds pinned in
#: the tests and named in docs/protocol.md §13 read it so).
LIES: tuple[Lie, ...] = tuple(
    lie for lie in Lie if lie not in (*MORE_LIES, *QUOTE_LIES, *EDGE_LIES, *FORK_LIES, *PACT_LIES)
)

#: The lies whose field few events carry (one or two a round: the deal's, the result, the
#: join): a game draws them from its start, at every chance.
SCARCE = frozenset(
    {
        Lie.READY_VISIBLE,
        Lie.REVEAL_VALUE,
        Lie.RESULT_SCORES,
        Lie.JOIN_TWICE,
        Lie.DECK_FORK,
        Lie.VOTE_FORK,
    }
)

#: The lies made in an event's body as the core signs it (:func:`_body_lie`).
_BODY = frozenset(
    {
        Lie.FRONTIER_AHEAD,
        Lie.FRONTIER_FORK,
        Lie.FRONTIER_BEHIND,
        Lie.LAMPORT_BACK,
        Lie.LAMPORT_LEAP,
        Lie.LAMPORT_BRINK,
        Lie.MOVE_CARD,
        Lie.MOVE_PILE,
        Lie.RESULT_SCORES,
        Lie.READY_VISIBLE,
        Lie.REVEAL_VALUE,
        Lie.ROUND_WRONG,
    }
)
#: The lies sent on the wire only (the log keeps the honest event).
_WIRE = frozenset(
    {
        Lie.SEQ_SKIP,
        Lie.SEQ_REUSE,
        Lie.VOTE_NO_SEAT,
        Lie.BRINK_FORK,
        Lie.BRINK_BRANCH,
        Lie.DECK_FORK,
        Lie.VOTE_FORK,
    }
)
#: The lies sent to some members only, the honest event to the others (:func:`_some_others`).
_TO_SOME = frozenset({Lie.BRINK_FORK, Lie.DECK_FORK, Lie.VOTE_FORK})
#: What ``deck_fork`` forks: a shuffle deal's large events (a stage ~3.5 KB, shares ~2.8 KB).
_DECK_FORKED = frozenset({Kind.DECK_STAGE, Kind.DECK_SHARES})
#: The lies in beats and acks.
_BEAT = frozenset(
    {
        Lie.BEAT_AHEAD,
        Lie.BEAT_FORK,
        Lie.BEAT_BEHIND,
        Lie.BEAT_HEAD,
        Lie.BEAT_LAMPORT,
        Lie.BEAT_HEAD_FORK,
    }
)

#: How far a leaping time may leap (past the clock-jump limit, 2^32, docs/protocol.md §4.5).
LEAP = 1 << 33
#: Wants a flooding liar sends every input, and for how many inputs.
FLOOD_WANTS = 20
FLOOD_INPUTS = 200


@dataclass(frozen=True, slots=True)
class Liar:
    """Seat ``seat`` lies as ``lie`` says, ``times`` times, at chances drawn from ``seed``
    from ``at`` (simulated seconds) on: each message of the right kind it signs from then is
    a chance, taken with probability ``rate``."""

    seat: int
    lie: Lie
    at: float = 1.0
    times: int = 2
    rate: float = 0.3
    seed: int = 0
    # (:data:`PACT_LIES`) what the liars of one table acting together share
    pact: Pact | None = dataclasses.field(default=None, compare=False, repr=False)


class Pact:
    """What two ``fetched_leap`` liars of one table share: the first installed forks (its key
    signs ``far``: its event ``honest`` signed again 2^33 past what it names, shown only in
    answer to a want), the other names ``far`` by id in an event timed one above it, at a
    chance (docs/protocol.md §5.3, *a version fetched*)."""

    def __init__(self) -> None:
        self.forker: int | None = None
        self.peer: Peer | None = None  # (the forker's core: its key signs ``far``)
        self.far: Message | None = None
        self.honest: bytes = b""
        self.named = False


class _State:
    """What one installed liar has done (kept across restarts: one per seat)."""

    def __init__(self, liar: Liar) -> None:
        self.rng = Rng(f"liar-{liar.seed}-{liar.seat}-{liar.lie}")
        self.left = liar.times
        self.told = 0  # lies told (a chance taken whose message went out)
        self.now = 0.0
        self.swaps: dict[bytes, bytes] = {}  # honest wire -> the lie sent in its place
        # honest wire -> the members the lie goes to, where the others get the honest one
        # (``brink_fork``): none here, every member gets the lie
        self.only: dict[bytes, frozenset[PeerId]] = {}
        # (``brink_branch``) the last event of the branch sent to some members, and to whom
        self.branch: tuple[Message, frozenset[PeerId]] | None = None
        self.flooded = 0
        self.last_play: Play | None = None
        self.last_deal: Commit | Ready | Result | None = None  # (deal_twice signs it again)
        self.leaving = False
        self.twice: tuple[int, int] | None = None  # (member, votes still to sign)


def install(peer: Peer, liar: Liar, state: _State | None = None) -> _State:
    """Make ``peer`` (``liar.seat``'s core) lie from now on; returns the liar's state (give it
    again on a restart, so that its lies and its wire swaps go on)."""
    state = state or _State(liar)
    outbox = peer._outbox  # (the simulator's liar reaches into the core on purpose)
    author = peer._author
    if liar.lie in _WIRE:
        author.forger = True  # (its feed's other version is its own doing)
    _join_pact(peer, liar)
    honest_event = outbox.sign_event
    honest_beat = outbox.sign_beat
    honest_flush = peer._flush
    honest_liveness = author.liveness

    chance = functools.partial(_chance, liar, state)

    def sign_event(
        feeds: list[list[Message]], seat: int, body: EventBody, now: float | None
    ) -> tuple[Message, EventBody]:
        message, signed = honest_event(feeds, seat, body, now)
        if isinstance(signed, Play):
            state.last_play = signed
        elif isinstance(signed, (Commit, Ready, Result)):
            state.last_deal = signed
        if liar.lie in _BODY:
            lie = _body_lie(
                liar.lie, state.rng, feeds=feeds, seat=seat, body=signed, message=message
            )
            if lie is not None and chance():
                return _resign(peer, message, lie, replace=True)
        elif liar.lie is Lie.BRINK_BRANCH:
            _branch(peer, state, (feeds, seat, signed, message), chance)
        elif liar.pact is not None and liar.pact.forker != liar.seat:
            return _pact(peer, liar.pact, (feeds, seat, signed, message), chance)
        elif liar.lie in _WIRE:
            lied = _wire_lie(
                liar.lie, state.rng, feeds=feeds, seat=seat, body=signed, message=message
            )
            # (a vote_no_seat's chance was taken as its vote was signed, in _extra)
            if lied is not None and (liar.lie is Lie.VOTE_NO_SEAT or chance()):
                state.swaps[message.wire] = _resign(peer, message, lied, replace=False)[0].wire
                if liar.lie in _TO_SOME:
                    state.only[message.wire] = _some_others(peer, seat, state.rng)
        return message, signed

    def sign_beat(
        kind: Kind, body: Beat | Want | DeckReveal | DeckWant, *, tick: bool = True
    ) -> bytes:
        if liar.lie not in _BEAT or not isinstance(body, Beat) or not chance():
            return honest_beat(kind, body, tick=tick)
        feeds = [peer.events(q) for q in range(peer.spec.seats)]
        lamport = outbox.clock + tick
        if liar.lie is Lie.BEAT_LAMPORT:
            up = state.rng.below(2) == 0
            lamport = lamport + 1 + state.rng.below(LEAP) if up else state.rng.below(lamport)
        else:
            body = _beat_lie(liar.lie, state.rng, feeds, body)
        outbox.clock += tick
        return signed_as(peer, kind, body, lamport)

    def flush(now: float) -> list[Effect]:
        state.now = now
        effects = _shown_on_request(liar, honest_flush(now))
        if state.swaps:
            effects = [x for e in effects for x in _sent(peer, e, state.swaps, state.only)]
        return effects

    def liveness(now: float) -> None:
        state.now = now
        honest_liveness(now)
        if author.recovery is None and not author.held_back:
            _extra(peer, liar, state, chance)

    outbox.sign_event = sign_event
    outbox.sign_beat = sign_beat
    peer._flush = flush
    author.liveness = liveness
    return state


_Lied = tuple[EventBody, int, int, bytes | None]  # (body, lamport, seq, prev)


def _chance(liar: Liar, state: _State) -> bool:
    """Whether the liar takes this chance to lie (and counts it, if so)."""
    if state.left <= 0 or state.now < liar.at or state.rng.random() >= liar.rate:
        return False
    state.left -= 1
    state.told += 1
    return True


def _join_pact(peer: Peer, liar: Liar) -> None:
    """A ``fetched_leap`` liar joins its pact: the first installed is the forker (its core
    signs the far version; on a restart, its new core)."""
    pact = liar.pact
    if pact is not None and pact.forker in (None, liar.seat):
        pact.forker, pact.peer = liar.seat, peer
        peer._author.forger = True  # (its feed's other version is its own doing)


def _shown_on_request(liar: Liar, effects: list[Effect]) -> list[Effect]:
    """The forker's effects, its answers to wants for the event it forked (a send to one
    member) carrying the far version instead (``fetched_leap``)."""
    pact = liar.pact
    if pact is None or pact.far is None or pact.forker != liar.seat:
        return effects
    far, honest = pact.far.wire, pact.honest
    return [
        Send(far, e.to) if isinstance(e, Send) and e.to and e.data == honest else e for e in effects
    ]


def _some_others(peer: Peer, seat: int, rng: Rng) -> frozenset[PeerId]:
    """Some of the members but ``seat`` (one at least, not all of them; at two players the one
    other member, which :func:`_sent` gives both versions)."""
    others = [m for q, m in enumerate(peer.spec.peer_ids) if q != seat]
    if len(others) == 1:
        return frozenset(others)
    rng.shuffle(others)
    return frozenset(others[: 1 + rng.below(len(others) - 1)])


def _branch(
    peer: Peer,
    state: _State,
    signed: tuple[Sequence[Sequence[Message]], int, EventBody, Message],
    chance: Callable[[], bool],
) -> None:
    """``brink_branch``: at a chance, ``message`` signed again at the brink and sent to some
    members (as ``brink_fork``); then every later event of the liar's goes to them on that
    branch (its ``prev`` and own frontier id the branch's last event), each at the brink past
    the branch's last event and what it names: events past the fork that the others know
    nothing of, some clocks taking more than one brink of them whole (three members at
    least; docs/protocol.md §13, *a leap named by some honest members only*). ``signed``:
    the feeds it was signed over, its seat, body and message."""
    feeds, seat, body, message = signed
    branch = state.branch
    if branch is None:
        if len(feeds) < 3 or not chance():
            return
        last, chosen = None, _some_others(peer, seat, state.rng)
    else:
        last, chosen = branch
        if message.seq != last.seq + 1:
            return  # (a restart's replay: the branch goes on from where it is)
    lamport = max(message.lamport + 1, _brink(feeds, seat, body))
    prev = message.prev
    if last is not None:
        lamport = max(lamport, last.lamport + 1 + MAX_CLOCK_JUMP)
        prev = last.id
        ids = list(body.frontier_ids)
        ids[seat] = last.id[:ID_PREFIX]
        body = dataclasses.replace(body, frontier_ids=tuple(ids))
    lied = _resign(peer, message, (body, lamport, message.seq, prev), replace=False)[0]
    state.swaps[message.wire] = lied.wire
    state.only[message.wire] = chosen
    state.branch = (lied, chosen)


def _pact(
    peer: Peer,
    pact: Pact,
    signed: tuple[Sequence[Sequence[Message]], int, EventBody, Message],
    chance: Callable[[], bool],
) -> tuple[Message, EventBody]:
    """``fetched_leap``, the namer's part: at a chance, the forker's event the namer holds
    last (past its join) is signed again by the forker 2^33 later (``pact.far``, which the
    forker shows only in answer to a want), and the namer's event names it by id, timed one
    above it (its own log holds the lie, and ``far`` before it, as if it had delivered the
    version it names: the audit of that log alone delivers ``far``, session 43). Once.
    Returns what its core signs."""
    feeds, seat, body, message = signed
    q, forker = pact.forker, pact.peer
    if q is None or forker is None or q == seat or pact.named:
        return message, body
    held = body.frontier[q]
    if held < 2 or not chance():
        return message, body
    honest = feeds[q][held - 1]
    was = parse_body(honest.kind, honest.body, len(feeds))
    assert not isinstance(was, (Beat, Want, DeckReveal, DeckWant))
    far = _resign(forker, honest, (was, honest.lamport + LEAP, held, honest.prev), replace=False)
    pact.far, pact.honest, pact.named = far[0], honest.wire, True
    frontier, ids = list(body.frontier), list(held_ids(feeds, body.frontier))
    ids[q] = far[0].id[:ID_PREFIX]
    lie = dataclasses.replace(body, frontier=tuple(frontier), frontier_ids=tuple(ids))
    effects = peer._outbox.effects
    at = next(i for i, e in enumerate(effects) if isinstance(e, Record) and e.data == message.wire)
    effects.insert(at, Record(far[0].wire, own=False))  # (logged as received, before its own)
    return _resign(
        peer, message, (lie, far[0].lamport + 1, message.seq, message.prev), replace=True
    )


def _sent(
    peer: Peer, effect: Effect, swaps: dict[bytes, bytes], only: dict[bytes, frozenset[PeerId]]
) -> list[Effect]:
    """A send of an event lied on the wire: the lie in its place (:func:`_swapped`) or, to some
    members only (``only``), the lie to them and the honest event to the others (where the
    lie goes to every other member, a table of two, each gets both: the lie first)."""
    if not isinstance(effect, Send) or effect.data not in only:
        return [_swapped(effect, swaps)]
    chosen = only[effect.data]
    ids = peer.spec.peer_ids
    others = [m for m in ids if m != ids[peer.seat]]
    to = [effect.to] if effect.to is not None else others
    if chosen >= frozenset(others):
        return [Send(data, m) for m in to for data in (swaps[effect.data], effect.data)]
    return [Send(swaps[effect.data] if m in chosen else effect.data, m) for m in to]


def _swapped(effect: Effect, swaps: dict[bytes, bytes]) -> Effect:
    """A send of an event lied on the wire, as the lie (its record stays honest)."""
    if isinstance(effect, Send) and effect.data in swaps:
        return Send(swaps[effect.data], effect.to)
    return effect


def _resign(
    peer: Peer, message: Message, lie: _Lied, *, replace: bool
) -> tuple[Message, EventBody]:
    """``message`` signed again with the ``lie``'s body, time, seq and prev. ``replace``:
    the lie takes the honest event's place in the effects queued (its record and its send),
    and the core delivers the lie to itself; else the effects stay honest."""
    outbox = peer._outbox
    body, lamport, seq, prev = lie
    wire = encode_message(
        outbox.identity,
        game_id=peer.spec.game_id,
        seq=seq,
        prev=prev,
        lamport=lamport,
        kind=kind_of(body),
        body=encode_body(body),
        version=outbox.version,
    )
    lied = decode_message(wire, game_id=peer.spec.game_id, roster=frozenset(peer.spec.peer_ids))
    if replace:
        effects = outbox.effects
        for i in range(len(effects) - 1, -1, -1):
            e = effects[i]
            if isinstance(e, Record) and e.data == message.wire:
                effects[i] = Record(wire, own=True)
            elif isinstance(e, Send) and e.data == message.wire:
                effects[i] = Send(wire, e.to)
        outbox.clock = max(outbox.clock, lamport)
        outbox.reserve(outbox.clock)
    return lied, body


def _prefix(rng: Rng) -> bytes:
    return bytes(rng.below(256) for _ in range(ID_PREFIX))


def _body_lie(
    lie: Lie,
    rng: Rng,
    *,
    feeds: Sequence[Sequence[Message]],
    seat: int,
    body: EventBody,
    message: Message,
) -> _Lied | None:
    """``body`` (signed as ``message``) with one field wrong as ``lie`` says, or ``None`` if
    it has no such field."""
    lamport, seq, prev = message.lamport, message.seq, message.prev
    frontier, ids = list(body.frontier), list(body.frontier_ids)
    others = [q for q in range(len(frontier)) if q != seat]
    if lie is Lie.FRONTIER_AHEAD:
        q = rng.below(len(frontier))
        frontier[q] += 1 + rng.below(3)
        ids[q] = _prefix(rng)
    elif lie is Lie.FRONTIER_FORK:
        held = [q for q in others if frontier[q]]
        if not held:
            return None
        q = rng.choice(held)
        ids[q] = _prefix(rng)
    elif lie is Lie.FRONTIER_BEHIND:
        held = [q for q in others if frontier[q]]
        if not held:
            return None
        q = rng.choice(held)
        frontier[q] = rng.below(frontier[q])
        ids[q] = held_ids(feeds, frontier)[q]
    elif lie is Lie.LAMPORT_BACK:
        own = feeds[seat]  # (the event is not in it yet: its last is the previous one)
        top = own[-1].lamport if own else lamport - 1
        return body, max(1, top - rng.below(3)), seq, prev
    elif lie is Lie.LAMPORT_LEAP:
        return body, lamport + 1 + rng.below(LEAP), seq, prev
    elif lie is Lie.LAMPORT_BRINK:
        return body, max(lamport, _brink(feeds, seat, body)), seq, prev
    else:
        changed = _field_lie(lie, rng, body)
        return None if changed is None else (changed, lamport, seq, prev)
    return (
        dataclasses.replace(body, frontier=tuple(frontier), frontier_ids=tuple(ids)),
        lamport,
        seq,
        prev,
    )


def _brink(feeds: Sequence[Sequence[Message]], seat: int, body: EventBody) -> int:
    """The latest time ``body`` (of ``seat``, signed over ``feeds``) may be timed at: the leap
    bound itself past what its frontier names (:func:`~p2p_nertz.protocol.feeds.leaps`)."""
    top, _ = named_top(
        lambda q, f: feeds[q][f - 1].lamport if f <= len(feeds[q]) else None,
        seat,
        body.frontier,
        {},
    )
    return top + 1 + MAX_CLOCK_JUMP


def _field_lie(lie: Lie, rng: Rng, body: EventBody) -> EventBody | None:
    """``body`` with one of its own fields (not the frontier) wrong, or ``None``."""
    if lie is Lie.MOVE_CARD and isinstance(body, Play) and body.move.plays_card:
        if body.card is not None and body.card.suit is not None:
            same = [c for c in new_deck() if c.suit is body.card.suit and c != body.card]
            return dataclasses.replace(body, card=rng.choice(same))
        if body.reveals:
            return dataclasses.replace(body, reveals=(_card(rng, body.reveals[0]),))
        return None
    if lie is Lie.MOVE_CARD and isinstance(body, Play) and body.move.kind is MoveKind.TURN:
        if not body.reveals:
            return None
        reveals = list(body.reveals)
        reveals[rng.below(len(reveals))] = _card(rng, reveals[0])
        return dataclasses.replace(body, reveals=tuple(reveals))
    if lie is Lie.MOVE_PILE and isinstance(body, Play) and body.move.plays_card:
        return dataclasses.replace(body, move=_moved(rng, body.move))
    if lie is Lie.RESULT_SCORES and isinstance(body, Result) and body.scores:
        scores = list(body.scores)
        scores[rng.below(len(scores))] += rng.choice((-5, -1, 1, 5))
        return dataclasses.replace(body, scores=tuple(scores))
    if lie is Lie.READY_VISIBLE and isinstance(body, Ready) and body.visible:
        visible = list(body.visible)
        i = rng.below(len(visible))
        visible[i] = _card(rng, visible[i])
        return dataclasses.replace(body, visible=tuple(visible))
    if lie is Lie.REVEAL_VALUE and isinstance(body, Reveal):
        return dataclasses.replace(body, value=bytes(rng.below(256) for _ in body.value))
    if lie is Lie.ROUND_WRONG and isinstance(body, Play):
        # (a later round: one before the round played is a late move, which counts for nothing)
        return dataclasses.replace(body, round=body.round + 1 + rng.below(2))
    return None


def _card(rng: Rng, other: Card) -> Card:
    """A card of the 52 other than ``other``."""
    return rng.choice([c for c in new_deck() if c != other])


#: Where a lying card move may say it goes, or comes from (work piles 1 to 4: every game has
#: them; the rest is the same move's other fields).
_SOURCES = (Pile.NERTS, Pile.WASTE, Pile.W1, Pile.W2, Pile.W3, Pile.W4)
_TARGETS = (Pile.W1, Pile.W2, Pile.W3, Pile.W4)


def _moved(rng: Rng, move: Move) -> Move:
    """``move`` with its source changed (a claim), or its source or target (a tableau move)."""
    if move.is_lake or rng.below(2) == 0:
        source = rng.choice([p for p in _SOURCES if p is not move.source])
        return dataclasses.replace(move, source=source)
    target = rng.choice([p for p in _TARGETS if p is not move.target])
    return dataclasses.replace(move, target=target)


def _wire_lie(
    lie: Lie,
    rng: Rng,
    *,
    feeds: Sequence[Sequence[Message]],
    seat: int,
    body: EventBody,
    message: Message,
) -> _Lied | None:
    """What the wire carries in place of ``message`` (``body``), or ``None``."""
    own = feeds[seat]
    if lie is Lie.SEQ_SKIP:  # (at its join: a prev naming an event it never signed)
        prev = message.prev if message.prev is not None else _prefix_id(rng)
        return body, message.lamport, message.seq + 1, prev
    if lie is Lie.SEQ_REUSE:
        if message.seq < 2:
            return None
        before = own[message.seq - 3].id if message.seq >= 3 else None
        return body, message.lamport, message.seq - 1, before
    if lie is Lie.BRINK_FORK:  # (a fork seen by some members only: three at least)
        if len(feeds) < 3:
            return None
        return body, max(message.lamport + 1, _brink(feeds, seat, body)), message.seq, message.prev
    if lie is Lie.DECK_FORK and message.kind in _DECK_FORKED:
        return body, message.lamport + 1, message.seq, message.prev
    if lie is Lie.VOTE_FORK and isinstance(body, Drop) and body.proof:
        if rng.below(2) == 0:  # (the versions then differ in their carried part's digest alone)
            return (
                dataclasses.replace(body, proof=body.proof[::-1]),
                message.lamport,
                message.seq,
                message.prev,
            )
        return body, message.lamport + 1, message.seq, message.prev
    if lie is Lie.VOTE_NO_SEAT and isinstance(body, Drop):
        seats = len(feeds)
        return (
            dataclasses.replace(body, seat=seats + rng.below(200)),
            message.lamport,
            *(
                message.seq,
                message.prev,
            ),
        )
    return None


def _beat_lie(lie: Lie, rng: Rng, feeds: Sequence[Sequence[Message]], beat: Beat) -> Beat:
    """``beat`` with one field wrong as ``lie`` says (unchanged if it has no such field)."""
    held, ids = list(beat.held), list(beat.held_ids)
    q = rng.below(len(held))
    if lie is Lie.BEAT_AHEAD:
        held[q] += 1 + rng.below(3)
        ids[q] = _prefix(rng)
    elif lie is Lie.BEAT_FORK and held[q]:
        ids[q] = _prefix(rng)
    elif lie is Lie.BEAT_BEHIND and held[q]:
        held[q] = rng.below(held[q])
        ids[q] = held_ids(feeds, held)[q]
    elif lie is Lie.BEAT_HEAD:
        return dataclasses.replace(
            beat, head_seq=beat.head_seq + 1 + rng.below(3), head_id=_prefix_id(rng)
        )
    elif lie is Lie.BEAT_HEAD_FORK and beat.head_seq:
        return dataclasses.replace(beat, head_id=_prefix_id(rng))
    return dataclasses.replace(beat, held=tuple(held), held_ids=tuple(ids))


def _prefix_id(rng: Rng) -> bytes:
    return bytes(rng.below(256) for _ in range(32))


def _extra(peer: Peer, liar: Liar, state: _State, chance: object) -> None:
    """The lies signed as events or wants of their own, at the end of an input."""
    author = peer._author
    final = peer.final
    lie = liar.lie
    take = chance  # (a callable: whether this input is a chance taken)
    assert callable(take)
    seats = peer.spec.seats
    me = peer.seat
    if me in final.dropped or final.phase is Phase.OVER:
        return
    if lie is Lie.CLAIM_AFTER_LEAVE:
        if state.leaving and author.left and state.last_play is not None:
            state.leaving = False
            author.emit(dataclasses.replace(state.last_play, frontier=author.frontier()), None)
        elif not author.left and final.phase is Phase.PLAY and state.last_play and take():
            state.leaving = True
            author.sign(Leave(()), None)
        return
    if author.left:
        return
    if lie is Lie.NERTS_EARLY and final.phase is Phase.PLAY and take():
        author.sign(Play((), final.round.number, Move.call()), None)
    elif lie is Lie.STUCK_RANDOM and final.phase is Phase.PLAY and take():
        author.sign(Play((), final.round.number, Move.pass_()), None)
    elif lie is Lie.JOIN_TWICE and take():
        author.sign(Join(()), None)
    elif lie is Lie.VOTE_SELF and take():
        author.sign_vote(me, len(peer.events(me)), DropReason.SILENT, None)
    elif lie is Lie.VOTE_IDS and take():
        q = state.rng.choice([s for s in range(seats) if s != me])
        feed = peer.events(q)
        if feed:
            quoted = [m.id[:ID_PREFIX] for m in feed[-VOTE_WINDOW:]]
            quoted[state.rng.below(len(quoted))] = _prefix(state.rng)
            author.sign(Drop((), q, len(feed), DropReason.SILENT, 0, tuple(quoted)), None)
    elif lie is Lie.VOTE_AHEAD and take():
        q = state.rng.choice([s for s in range(seats) if s != me])
        last = len(peer.events(q)) + 1 + state.rng.below(3)
        ids = tuple(_prefix(state.rng) for _ in range(min(last, VOTE_WINDOW)))
        author.sign(Drop((), q, last, DropReason.SILENT, 0, ids), None)
    elif lie is Lie.QUOTE_PROOF and take():
        # quote_ahead's ids told on proof of a fork just past its count, against the member
        # heard last (a proof no log holds: the vote names a fork, not two signed events).
        alive = [s for s in range(seats) if s != me and s not in final.dropped]
        if not alive:
            return
        q = max(alive, key=lambda s: (peer.events(s)[-1].lamport if peer.events(s) else 0, s))
        held = [m.id[:ID_PREFIX] for m in peer.events(q)]
        last = len(held) + 1 + state.rng.below(3)
        ids = (*held, *(_prefix(state.rng) for _ in range(last - len(held))))
        proof = _forged_proof(peer, q, state.rng)
        drop = Drop((), q, last, DropReason.EQUIVOCATION, last + 1, ids[-VOTE_WINDOW:])
        author.sign(dataclasses.replace(drop, proof=proof), None)
    elif lie is Lie.VOTE_TWICE:
        if state.twice is None and take():
            q = state.rng.choice([s for s in range(seats) if s != me and s not in final.dropped])
            state.twice = (q, 2)
        if state.twice is not None and state.twice[1] > 0:
            q, count = state.twice
            state.twice = (q, count - 1)
            author.sign_vote(q, len(peer.events(q)), DropReason.SILENT, None)
    elif lie is Lie.WANT_MISSING and take():
        q = state.rng.below(seats + 2)
        first = (len(peer.events(q)) if q < seats else 0) + 1 + state.rng.below(5)
        _send_want(peer, Want(q, first, first + state.rng.below(100)))
    elif lie is Lie.VOTE_NO_SEAT and take():
        # A vote on a member heard, sent as one on a seat past the roster (_wire_lie).
        q = state.rng.choice([s for s in range(seats) if s != me])
        author.sign_vote(q, len(peer.events(q)), DropReason.SILENT, None)
    elif (lie in MORE_LIES and lie not in _BODY | _BEAT) or lie is Lie.QUOTE_AHEAD:
        _more(peer, lie, state, take)
    elif lie is Lie.WANT_FLOOD and state.flooded < FLOOD_INPUTS and state.now >= liar.at:
        state.told += state.flooded == 0
        state.flooded += 1
        for _ in range(FLOOD_WANTS):
            q = state.rng.below(seats)
            first = 1 + state.rng.below(max(1, len(peer.events(q))))
            _send_want(peer, Want(q, first, first + state.rng.below(50)))


def _forged_proof(peer: Peer, q: int, rng: Rng) -> tuple[bytes, bytes]:
    """What ``quote_proof``'s vote against ``q`` carries since a vote on proof carries its proof
    (session 39): one of the pairs that prove nothing of ``q`` at the vote's fork, drawn: two
    of ``q``'s events of different seqs, one event of ``q``'s twice, one of them with its
    signature broken, or a true fork of the liar's own (signed, never sent: a proof of
    another member)."""
    feed = peer.events(q)
    kind = rng.below(4) if feed else 3
    if kind == 0 and len(feed) > 1:
        return (feed[-2].wire, feed[-1].wire)
    if kind == 1:
        return (feed[-1].wire, feed[-1].wire)
    if kind in {0, 2}:
        wire = bytearray(feed[-1].wire)
        wire[-1] ^= 1  # (the signature's last byte)
        return (feed[-1].wire, bytes(wire))
    outbox, own = peer._outbox, peer.events(peer.seat)
    versions = tuple(
        encode_message(
            outbox.identity,
            game_id=peer.spec.game_id,
            seq=len(own) + 1,
            prev=own[-1].id if own else None,
            lamport=outbox.clock + 1 + i,
            kind=Kind.LEAVE,
            body=encode_body(Leave((0,) * peer.spec.seats, (b"",) * peer.spec.seats)),
            version=outbox.version,
        )
        for i in range(2)
    )
    return versions[0], versions[1]


def _more(peer: Peer, lie: Lie, state: _State, take: Callable[[], object]) -> None:
    """Session 35's lies signed as events of their own (:func:`_extra`)."""
    author, final, rng = peer._author, peer.final, state.rng
    me, seats = peer.seat, peer.spec.seats
    others = [q for q in range(seats) if q != me and q not in final.dropped]
    if lie is Lie.DEAL_TWICE:
        if state.last_deal is not None and take():
            author.sign(state.last_deal, None)  # (a second commit, ready or result of a round)
        return
    if lie is Lie.PLAY_EARLY:
        if final.phase is not Phase.PLAY and take():
            round_number = max(1, final.round.number)  # (0 while joining: a bad body)
            author.sign(Play((), round_number, rng.choice((Move.pass_(), Move.call()))), None)
        return
    if not others or not take():
        return
    q = rng.choice(others)
    if lie is Lie.ABANDON_LIVE:
        author.sign_vote(q, len(peer.events(q)), DropReason.ABANDON, None)
    elif lie is Lie.REJOIN_LIVE:
        author.sign_vote(q, len(peer.events(q)), DropReason.REJOIN, None)
    elif lie is Lie.FLAP_FORGED:
        named = 1 + rng.below(max(1, len(peer.events(q))))  # (a withdrawal that is none)
        author.sign_vote(q, len(peer.events(q)), DropReason.FLAPPING, None, named)
    elif lie is Lie.WITHDRAW_UNVOTED:
        author.sign(Drop((), q, 0, DropReason.WITHDRAW), None)
    elif lie in (Lie.VOTE_PAST, Lie.QUOTE_AHEAD):
        # Its own ids up to what it holds (its frontier agrees), made-up ones past it.
        # (quote_ahead is this lie, drawn on its own stream: session 38 retired its copy.)
        feed = peer.events(q)
        last = len(feed) + 1 + rng.below(3)
        ids = [m.id[:ID_PREFIX] for m in feed] + [_prefix(rng) for _ in range(last - len(feed))]
        author.sign(Drop((), q, last, DropReason.SILENT, 0, tuple(ids[-VOTE_WINDOW:])), None)


def _send_want(peer: Peer, want: Want) -> None:
    """Send every member ``want``, signed at the liar's clock."""
    outbox = peer._outbox
    outbox.effects.append(Send(signed_as(peer, Kind.WANT, want, outbox.clock)))
