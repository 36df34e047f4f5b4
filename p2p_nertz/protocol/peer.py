"""The peer: a sans-I/O protocol core that turns bytes and time into state and bytes.

Theory of operation
-------------------
A :class:`Peer` is used like h11: the runtime gives it what happened — bytes received
(:meth:`Peer.feed`), a move of the local player (:meth:`Peer.play`), the passing of time
(:meth:`Peer.tick`) — each with the current time ``now`` (seconds, any origin), and gets back a
list of **effects**: :class:`Record` (append to the durable log *before* anything after it is
sent), :class:`Send` (bytes to one peer or to all), and notices for the UI. It never reads a
clock, never touches a socket, never raises on anything a peer sent.

What it owns, and what it does not.
    The state is held by the objects of the core, each of which returns values and never
    calls back into the peer (docs/architecture.md): :class:`~.feeds.Feeds` (the chains,
    causal delivery, gap repair, the chains that count), :class:`~.finality.Finality` (known,
    cover, the stable time), :class:`~.membership.Membership` (who is heard, suspected, voted
    out, proven to cheat), :class:`~.folds.Folds` (the final and the tentative fold),
    :class:`~.recovery.Recovery`, :class:`~.duties.Duties`, :class:`~.inbox.Inbox` (what
    comes in: decoding, the beats taken, refusals), :class:`~.outbox.Outbox` (our clock, our
    key, signing, the effects queued); :class:`~.player.LocalPlayer` (the local player's hold on
    its ``ready``; what it may do now, checked by :mod:`~.local`). Three
    parts wire them: :class:`~.delivery.Delivery` (the receive path: a message in, checked,
    held, delivered or refused), :class:`~.chains.Chains` (the chains that count followed,
    the final fold moved on), :class:`~.author.Author` (what we sign and when: votes, phase
    events, the liveness timers, the recovery of our own feed). Where the receive path finds
    that an event of ours is due (a vote on a proof, a withdrawal) it yields an ask and the
    peer has the author sign it before it goes on; nothing below calls back into the peer.
    The peer itself owns nothing but those parts: it is the front that takes the inputs and
    returns the effects, in order (signing, logging, sending).

Feeds and causal delivery.
    Each author's events form a hash chain (seq from 1, ``prev`` = previous id). An event is
    *delivered* once the author's previous event is, its ``prev`` matches, and every event in its
    *frontier* (the seqs it says it holds of every feed) is held here; its Lamport time must
    exceed theirs. Anything early waits; gaps are repaired by asking any peer (``want``), since
    every event is signed and anyone may relay it.

Finality (stability).
    ``known[Q]``: every event of Q with Lamport time up to it is held here (Q announced a head with
    that clock, in an event or a beat, and the feed is held up to that head). ``cover[R]``: R
    has announced holding every event held here up to that time. Events up to
    ``min(known) ∧ min(cover)`` are **final**: nobody can still send an earlier one, and every
    member already holds them. A claim is final about one round trip after it is sent: every
    peer answers events with a coalesced ``ack`` beat at once (tableau moves only while a claim
    in the air waits for them). Every event counts as an ack too: its frontier names the ids
    of what its author holds, credited as a beat's (so a claim needs no ack of its own).

Two folds.
    The *final* :class:`~p2p_nertz.protocol.state.GameState` takes final events in total order
    and is never rolled back; the peer acts on it (commit, reveal, ready, result) and reports
    its notices (a claim kept or lost, a round scored). The *tentative* fold adds every held
    event on top: it is what the player sees and plays on, recomputed from the final one when an
    event arrives out of order. The local player's claims freeze their source pile until they
    are final, so a lost race can always put the card back (and no slide-under counts on a
    pile such a claim emptied).

Faults.
    A member silent for ``suspect_after`` is suspected; past ``drop_after`` the peer signs a
    ``drop`` vote with the last seq it holds (and the ids of its last events there), and stops
    announcing that feed beyond it; a member that withholds what a phase waits for is voted out
    after ``phase_timeout``. A strict majority of votes drops the member, with a cut and a kept
    chain (docs/protocol.md §9.2); its events after the cut never count, and a peer holding
    another chain of it switches to the kept one. A voter that hears the member again
    withdraws a vote for silence. Being heard is not enough: a member that keeps talking while
    what finality needs of it alone (its feed up to the head it announced, its cover of the
    events held here) sees no progress for ``phase_timeout`` is voted out too (*withheld*,
    §9.2). Two different signed events with one author and seq, or a beat and an event
    of one author whose clocks contradict each other (found in either order: the beats that a
    later event could contradict are kept, ``Proofs.watch``), are proof of cheating: the
    proof goes to the log first (a :class:`Note`), both messages are relayed once, and the
    author is voted out. With two members left, :meth:`Peer.abandon` ends the
    game without the one gone; a dropped member that comes back asks to rejoin, and a member
    still in the game readmits it at the next round. Before sending past a clock it has not
    reserved, the peer asks for a durable :class:`Reserve`, so a restart never times a message
    below one sent before the crash. Known gaps are listed in docs/protocol.md §13.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from mypy_extensions import mypyc_attr

from p2p_nertz.defaults import DROP_AFTER, SUSPECT_AFTER
from p2p_nertz.errors import LocalProtocolError, chained
from p2p_nertz.protocol.author import Author, keep_heard
from p2p_nertz.protocol.bodies import (
    Drop,
    DropReason,
    EventBody,
    Join,
    Leave,
    Want,
)
from p2p_nertz.protocol.chains import Chains
from p2p_nertz.protocol.delivery import Answer, Ask, Delivery, ForkVote, Withdraw
from p2p_nertz.protocol.duties import Duties
from p2p_nertz.protocol.effects import (
    Effect,
    Equivocation,
    Note,
    OutOfReach,
    Record,
    Rejected,
    Reserve,
    Send,
    Suspected,
)
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    Kind,
    Message,
)
from p2p_nertz.protocol.evidence import PROOF_NOTE
from p2p_nertz.protocol.feeds import Feeds, Source
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.gone import GONE_AFTER_DROPS, TableGone
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.inbox import Inbox
from p2p_nertz.protocol.local import AbandonAnswer, AbandonRefused
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.outbox import Outbox
from p2p_nertz.protocol.player import LocalPlayer
from p2p_nertz.protocol.recovery import Elsewhere, Recovered, Recovery
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.protocol.table_waits import TableWaits
from p2p_nertz.protocol.unmet import DropPending, HeldBack, Owing
from p2p_nertz.rules import Move, Pile, Table

__all__ = [
    "Effect",
    "Elsewhere",
    "Equivocation",
    "Note",
    "OutOfReach",
    "PROOF_NOTE",
    "Peer",
    "PeerConfig",
    "Record",
    "Recovered",
    "Rejected",
    "Reserve",
    "Send",
    "Suspected",
    "TableGone",
]


@dataclass(frozen=True, slots=True)
class PeerConfig:
    """Timers and limits of a peer (seconds and counts).

    Attributes:
        ack_delay: acks for received events are coalesced over this window.
        beat_interval: an idle peer beats this often.
        suspect_after: silence before a member is suspected.
        drop_after: silence before this peer votes to drop a member (Zyre uses 5 s / 30 s).
        want_interval: least time between two gap requests for one feed.
        want_delay: how long a gap that another member's beat reveals may stay open before
            it is asked for. The events are usually on their way from their author: a beat
            relayed by a third peer can overtake them, and asking at once would fetch them
            twice. ``0``: ask at once.
        max_pending: events held per author ahead of its delivered feed.
        max_want: events sent back for one gap request.
        clock_reserve: Lamport ticks reserved by each durable clock note.
        phase_timeout: how long a phase that waits on every member (commit, nonce, the
            ``ready`` of play, reveal, result) may wait before the members holding it up are
            voted out.
        rejoin: a peer that learns it was dropped (not for cheating) asks to rejoin at the
            next round (DESIGN.md §6).
        want_after: how long after its held fold turned a position up a peer that still
            lacks a member's share of it asks everyone for it (a ``deck_want``, then again
            after twice the wait before, a few times at most: docs/shuffle.md §10.14).
        fresh: this process took part in making the game (a lobby it sat at): no process of
            its key can have signed in it before, so it need not hear a member's word on its
            own feed before it signs past its join (``Author.unheard``, docs/protocol.md §9.6).
    """

    ack_delay: float = 0.002
    beat_interval: float = 0.25
    suspect_after: float = SUSPECT_AFTER
    drop_after: float = DROP_AFTER
    want_interval: float = 0.05
    want_delay: float = 0.0
    max_pending: int = 4096
    max_want: int = 64
    clock_reserve: int = 1000
    phase_timeout: float = 60.0
    rejoin: bool = True
    want_after: float = 0.5
    fresh: bool = False

    @property
    def gone_after(self) -> float:
        """How long every other member still in may be silent, while we listen, before the
        table counts as gone (:meth:`Peer.table_gone`): three times ``drop_after``, the wait
        the reference node gives a member gone to come back before it stops on a
        provisional result (docs/protocol.md §9.3, §9.9)."""
        return GONE_AFTER_DROPS * self.drop_after


# The tests' cheaters and the benchmarks' probes are subclasses of Peer that override its
# hooks (tests/peer_helpers.py, tests/liar_helpers.py, scripts/bench_lan.py): on the compiled
# build (p2p_nertz/build.py) a class allows interpreted subclasses only when it says so.
@mypyc_attr(allow_interpreted_subclasses=True)
class Peer:
    """One player's (or a spectator-less bot's) protocol core. See the module docstring.

    Args:
        identity: this peer's key.
        spec: the game agreed in the lobby; this peer must be in its roster.
        now: the current time.
        config: timers and limits.
        envelopes: the codec's memo of messages parsed and verified (one may be shared by the
            peers of one process, as the simulator's are); ``None``: a new one of its own.

    Raises:
        LocalProtocolError: this identity is not in the roster.
    """

    def __init__(
        self,
        identity: Identity,
        spec: GameSpec,
        now: float,
        config: PeerConfig | None = None,
        *,
        envelopes: EnvelopeCache | None = None,
    ) -> None:
        try:
            self.seat = spec.seat_of(identity.peer_id)
        except KeyError:
            raise chained(LocalProtocolError("this identity is not in the game's roster"), None)
        self.identity = identity
        self.spec = spec
        self._config = config or PeerConfig()
        self.game_id = spec.game_id
        envelopes = envelopes if envelopes is not None else EnvelopeCache()
        n = spec.seats
        self._n = n
        # What comes in, and what goes out: the clock, the outbox, our key's secrets.
        peer_ids = spec.peer_ids
        self._inbox = Inbox(self.game_id, peer_ids, envelopes, spec.wire_version)
        self._outbox = Outbox(
            identity,
            self.game_id,
            peer_ids,
            now,
            beat_interval=self.config.beat_interval,
            ack_delay=self.config.ack_delay,
            clock_reserve=self.config.clock_reserve,
            envelopes=envelopes,
            version=spec.wire_version,
        )
        self._wire(now)
        self._started = False

    def _wire(self, now: float) -> None:
        """Make the objects of the core that own this member's state (the module docstring)."""
        config, n = self.config, self._n
        self._store = Feeds(
            n,
            want_interval=config.want_interval,
            want_delay=config.want_delay,
            max_want=config.max_want,
        )
        # (The feeds themselves, read on every path: one attribute lookup fewer.)
        self._feeds = self._store.feeds
        self._finality = Finality(self.seat, self._feeds)
        timers = SilenceTimers(
            config.suspect_after, config.drop_after, config.phase_timeout, config.max_pending
        )
        self._membership = Membership(self.seat, n, now, timers)
        self._listening = self._membership.listening  # (its silence votes read it too)
        self._final = GameState(self.spec, seat=self.seat, secrets=self._secret)
        folds = Folds(self._final, own=self.seat)
        folds.forked_at = self._membership.proof.forked_at  # (one dict, filled by membership)
        self._duties = Duties(
            self.seat,
            self.spec,
            self._secret,
            self._nonce,
            deck_key=self._outbox.deck_key,
            box_secret=self._outbox.box_secret,
        )
        self._chains = Chains(
            self.seat,
            store=self._store,
            finality=self._finality,
            membership=self._membership,
            folds=folds,
            inbox=self._inbox,
            outbox=self._outbox,
        )
        self._delivery = Delivery(
            self.seat,
            self.spec.peer_ids,
            max_pending=config.max_pending,
            beat_interval=config.beat_interval,
            chains=self._chains,
            duties=self._duties,
        )
        self._author = Author(
            self.seat,
            self.spec.peer_ids,
            now=now,
            config=config,
            delivery=self._delivery,
            duties=self._duties,
        )
        names = [member.name for member in self.spec.members]
        #: the local player's side: its hold on the next ``ready``, what it may do now
        self.player = LocalPlayer(self.seat, self.spec.rules, names, self._author)
        #: what the table waits on, and whether in vain: silence, gone, owing, drops not final
        self.waits = TableWaits(self._author, self.player, lambda: self.config)
        self.gave = self.waits.gave  # (whether a member gave all it was told owing)
        self._flush, self._answer_want = self._flush_honest, self._answer_want_honest  # (liars')

    @property
    def config(self) -> PeerConfig:
        """Timers and limits; one set later changes the limits and phase timers, not the rest."""
        return self._config

    @config.setter
    def config(self, config: PeerConfig) -> None:
        self._config = config
        self._delivery.max_pending = config.max_pending
        self._delivery.beat_interval = config.beat_interval
        self._author.config = config

    @property
    def _folds(self) -> Folds:
        """The final and the tentative fold (:class:`Folds`), as the parts below use them."""
        return self._chains.folds

    @_folds.setter
    def _folds(self, folds: Folds) -> None:
        # (A test's cheat folds with a state of its own: every part then uses the new folds.)
        self._chains.folds = self._delivery.folds = folds

    # -- secrets of the fair deal (our key's: :meth:`Outbox.secret`) ------------------------
    def _secret(self, number: int) -> bytes:
        return self._outbox.secret(number)

    def _nonce(self, number: int) -> bytes:
        return self._outbox.nonce(number)

    # -- views ------------------------------------------------------------------------------
    @property
    def clock(self) -> int:
        """Our Lamport clock: above every message we sent or took in (:class:`Outbox`)."""
        return self._outbox.clock

    @property
    def final(self) -> GameState:
        """The final fold (never rolled back)."""
        return self._final

    @property
    def tentative(self) -> GameState:
        """The fold of every held event: what the player sees (:attr:`Folds.tentative`)."""
        return self._folds.tentative

    @property
    def stable(self) -> int:
        """Events timed up to here are final (docs/protocol.md §8)."""
        return self._finality.stable

    @property
    def view(self) -> Table | None:
        """The table as this peer sees it now (the held view: docs/shuffle.md §10.14)."""
        return self._chains.shares.held_table(self.tentative.round)

    @property
    def phase(self) -> Phase:
        """The final phase of the game."""
        return self._final.phase

    @property
    def provisional(self) -> bool:
        """Whether the final result may still change (:attr:`GameState.provisional`, §9.3)."""
        return self._final.provisional

    def held(self, seat: int) -> int:
        """How many events of ``seat``'s feed are held here."""
        return len(self._feeds[seat])

    def events(self, seat: int) -> list[Message]:
        """The delivered events of one feed (for relaying and tests)."""
        return list(self._feeds[seat])

    def frozen_piles(self) -> set[Pile]:
        """The piles the local player may not touch now (:meth:`LocalPlayer.frozen_piles`)."""
        return self.player.frozen_piles()

    # -- what the table waits on (:class:`TableWaits`) ----------------------------------------
    def held_back(self) -> tuple[HeldBack, ...]:
        """The members whose events wait here for events not held (:func:`held_back`)."""
        return self.waits.held_back()

    def owing(self, now: float) -> tuple[Owing, ...]:
        """The members heard that owe what they alone can give (:meth:`TableWaits.owing`)."""
        return self.waits.owing(now)

    def silent(self, now: float) -> frozenset[int]:
        """The other members silent now (:meth:`TableWaits.silent`)."""
        return self.waits.silent(now)

    def drops_waiting(self) -> tuple[DropPending, ...]:
        """The drops decided, not final, and on what (:meth:`TableWaits.drops_waiting`)."""
        return self.waits.drops_waiting()

    def silent_for(self, now: float) -> float:
        """Seconds since a member still in was heard (:meth:`TableWaits.silent_for`)."""
        return self.waits.silent_for(now)

    def gone_for(self, now: float) -> float | None:
        """How long the other member left has counted as gone (:meth:`TableWaits.gone_for`)."""
        return self.waits.gone_for(now)

    def table_gone(self, now: float) -> TableGone | None:
        """Whether the table is gone (:meth:`TableWaits.table_gone`, §9.9)."""
        return self.waits.table_gone(now)

    def judging(self) -> bool:
        """Whether we, our game over, still owe the table a vote (:meth:`TableWaits.judging`)."""
        return self.waits.judging()

    def next_deadline(self) -> float | None:
        """When :meth:`tick` next has something to do (``None``: only on input)."""
        return min(self._author.next_deadline(), self._chains.wants.due)

    # -- inputs -----------------------------------------------------------------------------
    def start(self, now: float) -> list[Effect]:
        """Join the game: sign and send this peer's ``join`` (its first event)."""
        if not self._started:
            self._started = True
            if not self._feeds[self.seat]:
                self._emit(Join(self._frontier()), now)
            self._beat(Kind.BEAT, now)
        return self._flush(now)

    def feed(self, data: bytes, now: float) -> list[Effect]:
        """Take bytes received from the network. Never raises for anything in ``data``."""
        self._receive(data, now)
        return self._flush(now)

    def feed_many(self, messages: Iterable[bytes], now: float) -> list[Effect]:
        """Take several messages at once (one round of finality and acks for the batch). A
        member's beat or ack that a later one of its in the batch supersedes is taken after
        that one (:meth:`Inbox.latest_first`): old by then, it is verified only if it proves
        something (§7.2)."""
        for data, superseded in self._inbox.latest_first(list(messages)):
            self._receive(data, now, superseded=superseded)
        return self._flush(now)

    def tick(self, now: float) -> list[Effect]:
        """Let time pass: beats, acks, suspicion, drop votes, gap repair."""
        return self._flush(now)

    def release_ready(self, number: int, now: float) -> list[Effect]:
        """Sign our ``ready`` of round ``number`` (and earlier) once due: only matters while
        :attr:`LocalPlayer.ready_through` holds readies back (one due already is signed now)."""
        if self.player.release(number):
            self._act()
        return self._flush(now)

    def play(self, move: Move, now: float) -> list[Effect]:
        """Play a move of the local player (or pass, or call Nerts).

        Raises:
            IllegalMoveError: the move is illegal now (nothing is sent, nothing changes).
            LocalProtocolError: the game is not in play, or the pile is frozen by a claim in
                the air (or, for the waste and the stock, by a rotation not yet final), or a
                slide-under needs a pile that such a claim emptied.
        """
        self._emit(replace(self.player.move(move), frontier=self._frontier()), now)
        return self._flush(now)

    def leave(self, now: float) -> list[Effect]:
        """Leave the game (the others see a signed ``leave``). Recovering it signs nothing (the
        seq may be one we used); held back by a doubt on our feed, once that ends (Author)."""
        if self.recovering or self._author.leave_later():
            return self._flush(now)
        if self.seat not in self._final.dropped and not self._author.left:
            self._emit(Leave(self._frontier()), now)
        return self._flush(now)

    def abandon_answer(self, now: float) -> AbandonAnswer:
        """Whether :meth:`abandon` would end the game now, and if not why: the one answer the
        table, the node and the simulator read (:meth:`LocalPlayer.abandon_answer`)."""
        return self.player.abandon_answer(now)

    def abandon(self, now: float) -> list[Effect]:
        """End the game when only one other member is left and it has gone (DESIGN.md §6).

        With two members nobody can be dropped (a majority of two is two votes): the one left
        signs an ``abandon``; the round in progress is void, the game ends on the totals of the
        rounds both sides saw scored, maybe :attr:`provisional` (docs/protocol.md §9.3).

        Raises:
            AbandonRefused: :meth:`abandon_answer` says why not; nothing is sent.
        """
        answer = self.abandon_answer(now)
        if answer.why is not None:
            raise AbandonRefused(answer)
        other = answer.partner
        assert other is not None  # (a partner, since the answer says yes)
        # Count all we hold, or what an earlier vote of ours froze our announcements at.
        held = self._membership.voted.setdefault(other, len(self._feeds[other]))
        self._membership.proven_seats.add(other)  # not withdrawn if it is heard again
        self._author.sign_vote(other, held, DropReason.ABANDON, now)
        return self._flush(now)

    def keep_heard(self, now: float, reserved: int) -> bytes | None:
        """A want that keeps us heard through a slow disk's sync (:func:`author.keep_heard`)."""
        return keep_heard(self._author, now, reserved)

    # -- restart ----------------------------------------------------------------------------
    @classmethod
    def restore(
        cls,
        identity: Identity,
        spec: GameSpec,
        records: Iterable[bytes],
        now: float,
        config: PeerConfig | None = None,
        *,
        reserved: int = 0,
        recover: bool = False,
        envelopes: EnvelopeCache | None = None,
        prepare: Callable[[Peer], None] | None = None,
        debts: Sequence[bytes] = (),
    ) -> tuple[Peer, list[Effect]]:
        """Rebuild a peer from its log (every event it sent or received, and the beats of its
        ``debt`` notes, ``debts``) after a crash: its own events taken back as sent (no seq
        reused), its clock from ``reserved`` (the last durable :class:`Reserve`); the effects
        announce it (a beat) and re-send its latest event in case the crash came before the send.

        With ``recover`` (a log that lost or may have lost its end) the peer first learns its
        own feed from the others, signing nothing, until every member still in has said what
        it holds of ours and we hold that much (:class:`Recovered`); meanwhile :meth:`play`
        and :meth:`abandon` raise and :meth:`leave` signs nothing (docs/protocol.md §9.6).

        ``envelopes``: the codec's memo, as for the constructor. ``prepare`` is called with the
        new core before it reads its log back, and so before it acts on it (the simulator's
        cheats wrap its duties there: :func:`p2p_nertz.sim.cheats.install`).
        """
        peer = cls(identity, spec, now, config, envelopes=envelopes)
        if prepare is not None:
            prepare(peer)
        peer._started = True
        peer._outbox.clock = peer._outbox.reserved = reserved
        for ask in peer._delivery.read_back(list(records), now, debts):
            peer._do(ask, now)
        own = peer._feeds[peer.seat]
        peer._author.unheard = peer._n > 1 and (len(own) <= 1 or not recover)  # (a copy: unheard)
        if own:
            peer._outbox.effects.append(Send(own[-1].wire))  # (signed before: the same bytes)
        if recover:
            peer._author.recovery = Recovery(peer.seat, peer._n, len(own), now)
            peer._author.recovery_want(now)
        elif own and peer._author.unheard:  # (no beat timed past our head before a word)
            peer._author.doubt_want(now)
        else:
            if not own:
                peer._emit(Join(peer._frontier()), now)  # (as Peer.start: the same bytes)
            peer._beat(Kind.BEAT, now)
        return peer, peer._flush(now)

    # -- recovery (our own feed's: :meth:`Author.recovered`) ---------------------------------
    @property
    def recovering(self) -> bool:
        """Whether this peer, restored with ``recover``, still waits to learn its own feed."""
        return self._author.recovery is not None

    def awaiting(self) -> tuple[int, ...]:
        """The seats a recovering peer still waits for: members still in the game that have
        not announced, since the recovery began, holding at least the events of our feed we
        hold and every event that existed when the others took our first want in, or that
        announced more of our feed than we hold (of our feed, by their word where a vote may
        freeze their beats); and members out of the game heard since then whose word has not
        said they hold exactly what we hold, for ``drop_after`` at most (empty when not
        recovering)."""
        return self._author.awaiting()

    def recovery_hopeless(self, now: float) -> bool:
        """Whether a recovering peer cannot finish: every member it waits for has been silent
        for ``drop_after`` (gone, or cut off). It must not sign (it could reuse a seq), so
        nobody can be dropped by it: the runtime should stop and say so."""
        return self._author.hopeless(now)

    # -- receiving (the receive path: :class:`Delivery`) -------------------------------------
    @property
    def rejected(self) -> int:
        """How many messages were refused (each one a :class:`Rejected` effect)."""
        return self._inbox.rejected

    def _receive(
        self, data: bytes, now: float, *, source: Source = Source.NETWORK, superseded: bool = False
    ) -> None:
        """Take one message in (:meth:`Delivery.receive`), doing what it asks as it asks."""
        if self._author.elsewhere is not None:
            return  # (stopped: our feed goes on elsewhere)
        recovery = self._author.recovery
        for ask in self._delivery.receive(data, now, source, recovery, superseded=superseded):
            self._do(ask, now)

    def _drain(self, now: float) -> None:
        """Deliver every waiting event whose turn has come (:meth:`Delivery.drain`)."""
        for ask in self._delivery.drain(now):
            self._do(ask, now)

    def _do(self, ask: Ask, now: float) -> None:
        """What the receive path asks before it goes on: a vote, a withdrawal, an answer."""
        if type(ask) is ForkVote:
            self._author.vote_fork(ask.seat, ask.seq, ask.now)
        elif type(ask) is Elsewhere:
            if self._author.elsewhere is None and not self._author.forger:
                self._author.elsewhere = ask.seq
                self._outbox.stop_here()
        elif type(ask) is Withdraw:
            if self._author.left or self._author.held_back:
                return  # (doubting our own feed we sign nothing: recovery.Doubt)
            self._emit(Drop(self._frontier(), ask.seat, 0, DropReason.WITHDRAW), ask.now)
        else:
            assert type(ask) is Answer
            self._answer_want(ask.to, ask.want)

    def _deliver(
        self, seat: int, message: Message, body: EventBody, now: float, *, source: Source
    ) -> None:
        self._delivery.deliver(seat, message, body, now, source=source)

    def _answer_want_honest(self, to: PeerId, want: Want) -> None:
        self._delivery.answer_want(to, want)

    # -- finality (the chains that count and the final fold: :class:`Chains`) ---------------
    def _advance_final(self) -> None:
        """Move the final fold as far as it may; vote out again a member it readmits that was
        proven to fork while out; sign what the final state calls for."""
        chains = self._chains
        if chains.advance(self.recovering):
            for q in chains.readmitted():
                self._author.vote_fork(q, self._membership.proof.forked_at[q], None)
            self._act()

    # -- signing (what and when: :class:`Author`) ---------------------------------------------
    def _act(self) -> None:
        """Sign the events the final state now calls for (:meth:`Author.act`)."""
        self._author.act(self.player.ready_through)

    def _frontier(self) -> tuple[int, ...]:
        """What we announce holding (:meth:`Membership.frontier`)."""
        return self._author.frontier()

    def _emit(self, body: EventBody, now: float | None) -> None:
        """Sign one of our events, log it, send it, and deliver it to ourselves."""
        self._author.emit(body, now)

    def _beat(self, kind: Kind, now: float) -> None:
        """Announce our head and what we hold to everyone (:meth:`Outbox.beat`)."""
        self._finality.dirty = True
        self._outbox.beat(kind, self._feeds, self.seat, self._frontier(), now)

    def _flush_honest(self, now: float) -> list[Effect]:
        """Finish one input: finality, phase actions, timers; return the effects."""
        self._chains.shares.changed()  # (the held view: what this input changed, it answers)
        author = self._author
        if author.elsewhere is not None:  # (our key signed past our head elsewhere)
            return self._outbox.take_to_stop(Elsewhere(author.elsewhere))
        self._listening.saw(now)
        doubting = author.doubts(now, self.player.ready_through)  # (before anything is signed)
        self._advance_final()
        while self._store.redrain:
            self._drain(now)
            self._advance_final()
        if self._final.round.deck is not None:
            # A shuffle game: the shares of what the tentative fold turned up are due now,
            # not at finality (docs/shuffle.md §10.3): a turn-up costs one round trip.
            self._act()
        self._chains.ask_shares(now, self.config.want_after, self.recovering)
        self._author.liveness(now)
        if self._store.gaps:
            for seat, upto, source in self._store.due(now):
                self._delivery.want(seat, upto, source, now)
        if self.recovering and self._author.recovered(now):
            self._advance_final()
            self._act()
            self._beat(Kind.BEAT, now)
        outbox = self._outbox
        if self.recovering:
            # No beat or ack (a head below what others may hold of ours): a want for our own.
            outbox.ack_due = None
            if now >= outbox.last_sent + self.config.beat_interval:
                self._author.recovery_want(now)
        elif doubting:  # (more of our feed held than we signed: as recovering, recovery.Doubt)
            outbox.ack_due = None
            if now >= outbox.last_sent + self.config.beat_interval:
                author.doubt_want(now)
        else:
            due = outbox.beat_due(now)
            if due is not None:
                self._beat(due, now)
        return outbox.take()
