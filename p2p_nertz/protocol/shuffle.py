"""The dealerless shuffle as the fold knows it: one round's keys, stages, shares and secrets.

Theory of operation
-------------------
A shuffle game (``GameSpec.deal`` is ``shuffle``; docs/shuffle.md §10) deals every round with
no secret of its own: each member publishes a key (``deck_key``), the decks go through every
member's stage (``deck_stage``, the pipelined schedule of :mod:`p2p_nertz.deck.deal`), and
each face-down card is opened, where a move turns it up, by every member's decryption share
(``deck_shares``). Once play is over each member reveals its round secret (``deck_open``) and
every stage is re-run (:mod:`p2p_nertz.deck.check`).

:class:`DeckRound` owns what the fold knows of that: it takes one event's worth at a time and
either changes or raises :class:`~p2p_nertz.protocol.fold_values.Refuse` (the protocol's
rules of the shuffle live here, and only here); *when* each may come is the phase machine's
(:class:`~p2p_nertz.protocol.state.GameState`), and *which* positions a move turns up is the
rules' (:meth:`Tableau.reveals <p2p_nertz.rules.Tableau.reveals>` over sealed cards). A round's
members are numbered ``0 … N − 1`` in seat order (their **member index**, which the contexts
of the proofs and the wire's seats, decks and stages use); deck ``d`` is member ``d``'s.

The checks on arrival cost scalar multiplications (a share's proof 3–4, a stage's points
about a third of the stage), and the peer refolds its tentative state often: their answers are
kept in a memo shared by every copy of the round (a check is a function of its inputs alone),
and a share's, on a miss, is asked of :func:`~p2p_nertz.deck.shares.share_holds`, which keeps
the last answers for the process (the peers of a simulated game check the same shares).
"""

from __future__ import annotations

import dataclasses
import hmac
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from p2p_nertz.deck.check import Fault, check_dealings, check_keys, check_stages
from p2p_nertz.deck.deal import DealTranscript, member_at
from p2p_nertz.deck.elgamal import Deck, initial_deck
from p2p_nertz.deck.group import DeckError, base_mul
from p2p_nertz.deck.keys import MemberKey, joint_key, round_context, verify_member_key
from p2p_nertz.deck.shares import Share, open_card, share_holds
from p2p_nertz.deck.vss import (
    check_revealed_share,
    combine_partials,
    reconstruct,
    share_key,
    threshold,
    x25519_public,
)
from p2p_nertz.deck.wire import (
    DeckAnswer,
    DeckComplain,
    DeckKey,
    DeckOpen,
    DeckShares,
    DeckStage,
)
from p2p_nertz.errors import chained
from p2p_nertz.protocol.fold_values import Phase, RefusalCode, Refuse
from p2p_nertz.protocol.shuffle_owed import Owing, Partials, owed, partials_owed
from p2p_nertz.rules import Card, new_deck

__all__ = ["DEALT", "MAX_SHARES_EVENT", "SHARING", "DeckRound", "Opened", "local_deck_key"]

#: The most shares one ``deck_shares`` event or ``deck_reveal`` beat carries (106 bytes each:
#: 24 stay well under the envelope's 4,096 bytes at 8 seats; the deal's face-up shares of 8
#: decks, 40 to 56, go in two or three events; the codec's 64 would not fit a frame).
MAX_SHARES_EVENT = 24
#: The phases of a shuffle round once every member's key is in: a dealing's complaints and
#: their answers are taken, sent and owed in them (the fold, the duties, the waits alike).
DEALT = (Phase.DEAL, Phase.PLAY, Phase.OPEN)
#: The phases a shuffle round's shares of the positions turned up are sent and owed in.
SHARING = (Phase.PLAY, Phase.OPEN)
# (Tuples: ``in`` compares identities in C.)


def local_deck_key(private_key: bytes, game_id: bytes, number: int, attempt: int = 0) -> MemberKey:
    """A member's round secret for deal ``attempt`` of round ``number``, derived from its
    identity's private key so that a restart knows it without storing it (docs/shuffle.md
    §3.1)."""
    context = round_context(game_id, number, attempt)
    seed = hmac.new(private_key, b"deck\0" + context, "sha256").digest()
    return MemberKey.from_seed(seed, context)


_C = RefusalCode


@dataclass(frozen=True, slots=True)
class Opened:
    """A card the shares opened: deck ``deck`` (a member index), ``position``, ``card``; or
    ``card`` ``None`` where the right shares open no card or a card the deck already showed
    (a stage substituted a ciphertext: docs/shuffle.md §5)."""

    deck: int
    position: int
    card: Card | None


@dataclass(slots=True)
class DeckRound:
    """One round of a shuffle game, as the fold knows it (module docstring). Mutable; the
    fold copies it with :meth:`copy`.

    Attributes:
        members: the game seats of the round's members, in seat order (index = member index).
        context: the round's context (:func:`p2p_nertz.deck.keys.round_context`).
        jokers: how many jokers each deck adds (the cards of the initial decks).
        peer_ids: every game seat's identity (the VSS boxes go to them: the dealings are
            re-made after the round, docs/shuffle.md §6.2, §7.2).
    """

    members: tuple[int, ...]
    context: bytes
    jokers: int
    peer_ids: tuple[bytes, ...] = ()
    keys: dict[int, DeckKey] = field(default_factory=dict)
    stages: dict[tuple[int, int], Deck] = field(default_factory=dict)
    #: the decks after the last stage, once the deal is over
    final: tuple[Deck, ...] | None = None
    #: (deck, position) turned up, in the order of the fold, and the same as a set
    turned: tuple[tuple[int, int], ...] = ()
    turned_set: frozenset[tuple[int, int]] = frozenset()
    #: (deck, position) turned up by the deal: their shares alone travel in the feed (§10.14)
    face_up: frozenset[tuple[int, int]] = frozenset()
    #: (deck, position) -> member -> its right share's point (each position's dict is never
    #: changed in place: the copies share it)
    shares: dict[tuple[int, int], dict[int, bytes]] = field(default_factory=dict)
    #: (deck, position, member dropped) -> member -> its right partial share's point (as
    #: ``shares``)
    partials: dict[tuple[int, int, int], dict[int, bytes]] = field(default_factory=dict)
    #: (deck, position, of, maker) of each share held from a carried opening alone (§10.14)
    carried: frozenset[tuple[int, int, int, int]] = frozenset()
    #: (deck, stage) of each stage lost to a drop's cut (:meth:`take_stage`): not taken
    void: frozenset[tuple[int, int]] = frozenset()
    #: the members dropped since the deal: the others open their shares for them (§6.4)
    gone: frozenset[int] = frozenset()
    opened: dict[tuple[int, int], Card | None] = field(default_factory=dict)
    #: (deck, card) of every card ``opened`` shows, in the order opened: the check that a
    #: deck shows no card twice (:meth:`_open`) in one look, not a scan of ``opened``
    shown: dict[tuple[int, Card], None] = field(default_factory=dict, repr=False, compare=False)
    #: member -> its round secret: revealed (``deck_open``), or for a member dropped rebuilt
    #: from the VSS shares the others hold (§6.4, §7.2)
    secrets: dict[int, int] = field(default_factory=dict)
    #: member dropped -> holder -> the holder's VSS share of its secret, as revealed
    held: dict[int, dict[int, int]] = field(default_factory=dict)
    #: (dealer, complainer) -> the share the dealer answered with (``None``: not yet), for
    #: each complaint of a box (§6.3)
    complaints: dict[tuple[int, int], int | None] = field(default_factory=dict)
    #: the faults the checks after the round found (:meth:`faults`, once scored)
    found: tuple[Fault, ...] = ()
    #: the answers of the checks on arrival, shared by every copy (module docstring)
    memo: dict[object, bool] = field(default_factory=dict)
    #: what the members owe, kept until what it reads changes (:mod:`.shuffle_owed`)
    owing: Owing = field(default_factory=Owing, init=False, repr=False, compare=False)

    def copy(self) -> DeckRound:
        """An independent copy (the memo is shared: it only caches pure answers)."""
        new = DeckRound(*_INIT_FIELDS(self))  # (what dataclasses.replace passes, by position)
        new.keys = dict(self.keys)
        new.stages = dict(self.stages)
        # (Each position's shares are a dict never changed in place, replaced as one is
        # taken, :meth:`_take`: shared by the copies. Copied one by one they were 3% of a
        # shuffle game's CPU, a fold copying the round at every input, session 40.)
        new.shares = dict(self.shares)
        new.partials = dict(self.partials)
        new.opened = dict(self.opened)
        new.shown = dict(self.shown)
        new.secrets = dict(self.secrets)
        new.held = {k: dict(v) for k, v in self.held.items()}
        new.complaints = dict(self.complaints)
        new.owing = self.owing.copy()
        return new

    # -- who -----------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Cards in each deck."""
        return 52 + self.jokers

    def member(self, seat: int) -> int:
        """The member index of a game seat of the round."""
        return self.members.index(seat)

    @property
    def attempt(self) -> int:
        """Which deal of the round this is: 0, and one more each time a member dropped before
        the deal was over restarted it (docs/shuffle.md §8.4). The last byte of the context."""
        return self.context[-1]

    def restarted(self, seat: int, context: bytes) -> DeckRound:
        """The deal started again without ``seat``, dropped before it was over, under the next
        attempt's ``context`` (docs/shuffle.md §8.4): new keys, new stages, nothing carried
        over (no card was opened under the attempt given up)."""
        members = tuple(m for m in self.members if m != seat)
        return DeckRound(members, context, self.jokers, self.peer_ids, memo=self.memo)

    @property
    def joint(self) -> bytes:
        """The joint key, once every key is in."""
        n = len(self.members)
        return joint_key(self.keys[i].key for i in range(n))

    # -- key ---------------------------------------------------------------------------------
    def take_key(self, seat: int, message: DeckKey) -> None:
        """``seat``'s round key, its proof of knowledge, and the shape of its VSS dealing."""
        i = self.member(seat)
        if i in self.keys:
            raise Refuse(_C.REPEATED, "a second deck_key")
        n = len(self.members)
        t = threshold(n)
        dealing = message.dealing
        if (dealing is None) != (t is None) or (
            dealing is not None
            and t is not None
            and (len(dealing.commitments) != t - 1 or len(dealing.boxes) != n - 1)
        ):
            raise Refuse(_C.BAD_KEY, f"a deck_key's dealing is not one for {n} members")
        try:
            verify_member_key(message.key, message.proof, self.context, i)
        except DeckError as exc:
            raise chained(Refuse(_C.BAD_KEY, str(exc)), None)
        self.keys[i] = message
        self.owing.forget()

    @property
    def keyed(self) -> bool:
        """Whether every member's key is in."""
        return len(self.keys) == len(self.members)

    # -- deal --------------------------------------------------------------------------------
    def take_stage(
        self, seat: int, message: DeckStage, past_cut: Callable[[int], bool] | None = None
    ) -> None:
        """``seat``'s stage of one deck: the schedule's member, after its input, of full size.

        A stage on an input not in, an event of a member past the cut a drop made that its
        author held (``past_cut`` of the input's maker's seat; the drop, later in the order,
        restarts the deal, docs/shuffle.md §8.4) or a stage lost so, is a race lost to the
        cut, not a cheat: void, without blame (a forked ``deck_stage``, session 40)."""
        i = self.member(seat)
        n = len(self.members)
        d, s = message.deck, message.stage
        if not (d < n and s < n) or member_at(stage=s, deck=d, members=n) != i:
            raise Refuse(_C.BAD_STAGE, f"stage {s} of deck {d} is not member {i}'s to make")
        if (d, s) in self.stages or (d, s) in self.void:
            raise Refuse(_C.REPEATED, f"a second stage {s} of deck {d}")
        if len(message.ciphers) != self.size:
            raise Refuse(_C.BAD_STAGE, f"a stage of {len(message.ciphers)} cards, not {self.size}")
        if s > 0 and (d, s - 1) not in self.stages:
            maker = self.members[member_at(stage=s - 1, deck=d, members=n)]
            if (d, s - 1) in self.void or (past_cut is not None and past_cut(maker)):
                self.void |= {(d, s)}
                return
            raise Refuse(_C.BAD_STAGE, f"stage {s} of deck {d} before the stage it shuffles")
        self.stages[(d, s)] = message.ciphers

    @property
    def dealt(self) -> bool:
        """Whether every stage of every deck is in (the final decks are then fixed)."""
        n = len(self.members)
        return len(self.stages) == n * n

    def stages_due(self) -> list[int]:
        """The members whose next stage is not in while its input is (stage 0: the public
        initial deck): what the deal waits for from each of them alone, not because of
        another member's stage (docs/shuffle.md §4.3). Member indices, in order."""
        n = len(self.members)
        out = []
        for i in range(n):
            for s in range(n):
                d = (i - s) % n
                if (d, s) not in self.stages:
                    if s == 0 or (d, s - 1) in self.stages:
                        out.append(i)
                    break
        return out

    def finish_deal(self) -> None:
        """Every stage is in: the final decks."""
        n = len(self.members)
        self.final = tuple(self.stages[(d, n - 1)] for d in range(n))

    # -- turning up --------------------------------------------------------------------------
    def turn_up(self, deck: int, positions: Sequence[int]) -> list[Opened]:
        """Positions of ``deck`` turned up by a move (or the deal); the cards they open now
        with the shares already held."""
        new = [(deck, p) for p in positions if (deck, p) not in self.turned_set]
        if not new:
            return []
        self.turned += tuple(new)
        self.turned_set |= frozenset(new)
        self.owing.moved()
        return [o for o in map(self._open, new) if o is not None]

    def take_shares(self, seat: int, message: DeckShares) -> list[Opened]:
        """``seat``'s shares (each proven against its key and the final deck; a partial for a
        member dropped against its VSS share's public value, §6.4), and the cards they open.
        A share of a position not turned up yet is kept (docs/shuffle.md §10.2); one of a
        position already opened is checked and changes nothing."""
        i = self.member(seat)
        return self._take([dataclasses.replace(raw, seat=i) for raw in message.shares], False)

    def take_carried(self, shares: Sequence[Share]) -> list[Opened]:
        """The opening a move carries (docs/shuffle.md §10.14): shares of any member, each
        ``seat`` its maker's member index, checked as :meth:`take_shares` checks its author's;
        and the cards they open. One that fails refuses the whole move (``bad_share``) and
        nothing is taken; a share already held is no fault and changes nothing."""
        n = len(self.members)
        for share in shares:
            if share.seat >= n:
                raise Refuse(_C.BAD_SHARE, f"a share of member {share.seat}, not in the round")
        return self._take(shares, True)

    def _take(self, shares: Sequence[Share], carried: bool) -> list[Opened]:
        """Check every share of ``shares`` (its ``seat`` the maker's member index), then take
        them all; the cards they open. A repeat is refused in a maker's own event (but of a
        share a carried opening alone held), only checked in a carried one (:func:`_carry`)."""
        final = self.final
        assert final is not None
        taken = []
        for share in shares:
            i = share.seat
            where = (share.deck, share.position)
            of = share.of_seat
            key = self._key_of(share)
            held = self.shares.get(where, {}) if of == i else self.partials.get((*where, of), {})
            if i in held and not carried and (*where, of, i) not in self.carried:
                raise Refuse(
                    _C.REPEATED, f"a second share of deck {share.deck} at {share.position}"
                )
            self._verify(share, key, final[share.deck][share.position])
            if where in self.opened or i in held:
                # A right share of a position already opened: a partial its author signed
                # while its own fold had not opened the position yet, which other partials
                # opened first in the final order (soak seeds 101 and 105, five members).
                # It changes nothing, and it is no fault; nor does a carried share held.
                continue
            taken.append((where, i, of, share.point))
        _carry(self, shares, [(*w, of, i) for w, i, of, _ in taken], carried)
        for where, i, of, point in taken:
            # (A new dict each time, never one changed in place: the copies share them.)
            if of == i:
                self.shares[where] = {**self.shares.get(where, {}), i: point}
            else:
                place = (*where, of)
                self.partials[place] = {**self.partials.get(place, {}), i: point}
        if taken:
            self.owing.moved(tuple(w for w, _, _, _ in taken))
        places = dict.fromkeys(w for w, _, _, _ in taken if w in self.turned_set)
        return [o for o in map(self._open, places) if o is not None]

    def _key_of(self, share: Share) -> bytes:
        """The public value ``share``'s proof must match: its maker's key for its own share,
        a VSS share's public value for a partial of a member dropped (§6.4); refuse a share of
        no position of the round's decks or a partial for a member not dropped."""
        assert self.final is not None
        where = (share.deck, share.position)
        if share.deck >= len(self.final) or share.position >= self.size:
            raise Refuse(_C.BAD_SHARE, f"no position {where} in this round's decks")
        of = share.of_seat
        if of == share.seat:
            return self.keys[of].key
        # (A member of a round of two is dropped with no dealing: no partial opens for it.)
        dealing = self.keys[of].dealing if of in self.gone else None
        if dealing is None:
            raise Refuse(_C.BAD_SHARE, f"a partial share for member {of}, not dropped or not dealt")
        return share_key(self.keys[of].key, dealing.commitments, share.seat)

    def right(self, share: Share) -> bool:
        """Whether ``share`` (its ``seat`` its maker's member index) is right in this round as
        the fold knows it, by the checks a carried share meets (:meth:`take_carried`; the
        answer kept in the memo): what a peer's share store keeps (docs/shuffle.md §10.14)."""
        if self.final is None or share.seat >= len(self.members):
            return False
        try:
            key = self._key_of(share)
            self._verify(share, key, self.final[share.deck][share.position])
        except Refuse:
            return False
        return True

    def drop(self, seat: int) -> list[Opened]:
        """A member is dropped: the others open its shares for it from now on (§6.4); the
        cards the partials held already open."""
        if seat not in self.members:
            return []
        self.gone |= {self.member(seat)}
        self.owing.forget()
        waiting = [w for w in self.turned if w not in self.opened]
        return [o for o in map(self._open, waiting) if o is not None]

    def made(self, share: Share) -> None:
        """``share`` is one of our own, just made from our secret (``of_seat == seat``): right
        by construction, so its check when our ``deck_shares`` comes back to the fold is
        answered from the memo instead of four scalar multiplications (a turn-up at N
        members is checked N - 1 times by each peer, not N). Only that exact share is
        vouched for: one read back different (a log not ours) is checked as any other."""
        assert share.of_seat == share.seat and self.final is not None
        cipher = self.final[share.deck][share.position]
        self.memo[(share, self.keys[share.seat].key, cipher)] = True

    def _verify(self, share: Share, key: bytes, cipher: tuple[bytes, bytes]) -> None:
        memo_key = (share, key, cipher)
        ok = self.memo.get(memo_key)
        if ok is None:
            ok = self.memo[memo_key] = share_holds(share, key, cipher, self.context)
        if not ok:
            raise Refuse(
                _C.BAD_SHARE,
                f"the share of deck {share.deck} at {share.position}: its proof does not verify",
            )

    @property
    def can_open(self) -> bool:
        """Whether the members left can still open every card: none is gone, or for each
        member gone at least the threshold of those left hold their VSS share of its secret
        (a member whose complaint of its box is unanswered holds none: docs/shuffle.md §6.3,
        §6.4)."""
        if not self.gone:
            return True
        t = threshold(len(self.members))
        if t is None:
            return False
        left = [j for j in range(len(self.members)) if j not in self.gone]
        return all(sum(self.holds(j, m) for j in left) >= t for m in self.gone)

    def holds(self, member: int, of: int) -> bool:
        """Whether ``member`` can make partial shares for ``of`` as far as the fold knows: not
        while its complaint of ``of``'s box is unanswered (docs/shuffle.md §6.3), nor ever in a
        round of two members, whose keys deal no VSS shares (§6.4; soak seed 508)."""
        answered = self.complaints.get((of, member), 0) is not None
        return answered and self.keys[of].dealing is not None

    def _points(self, where: tuple[int, int]) -> list[bytes] | None:
        """Every member's share of ``where``: its own, or for a member dropped the Lagrange
        combination of ``t`` partials (§6.4); ``None`` while one is missing."""
        held = self.shares.get(where, {})
        t = threshold(len(self.members))
        points = []
        for m in range(len(self.members)):
            point = held.get(m)
            if point is None and m in self.gone and t is not None:
                partials = self.partials.get((*where, m), {})
                if len(partials) >= t:
                    first = sorted(partials)[:t]
                    point = combine_partials({j: partials[j] for j in first})
            if point is None:
                return None
            points.append(point)
        return points

    def _open(self, where: tuple[int, int]) -> Opened | None:
        if where in self.opened:
            return None
        points = self._points(where)
        if points is None:
            return None
        assert self.final is not None
        deck, position = where
        try:
            card: Card | None = open_card(self.final[deck][position], points)
        except DeckError:
            card = None
        if card is not None:
            if (deck, card) in self.shown:
                card = None  # a card its deck already showed: a substituted ciphertext
            else:
                self.shown[(deck, card)] = None
        self.opened[where] = card
        return Opened(deck, position, card)

    def owed(self, seat: int) -> list[tuple[int, int, int]]:
        """What ``seat`` owes, as ``(of member, deck, position)`` in turn-up order: its share
        of every position turned up that it has not sent, and its partial share for each
        member dropped whose own share of a position not opened yet is missing
        (docs/shuffle.md §6.4, §10.4). Kept until the round changes (:mod:`.shuffle_owed`)."""
        return owed(self, seat)

    def partials_owed(self, where: tuple[int, int]) -> list[Partials]:
        """For a position turned up and not opened: each member dropped whose own share of it
        is missing, with the members still in that owe a partial for it (those that hold
        their VSS share of its secret, :meth:`holds`, and have not sent it), in order. Kept
        until a share of it is taken or the round changes (:mod:`.shuffle_owed`)."""
        return partials_owed(self, where)

    # -- complaints of a box (§6.3) ----------------------------------------------------------
    def take_complaint(self, seat: int, message: DeckComplain) -> None:
        """``seat``'s box from ``message.dealer`` did not open, or its share did not check."""
        i = self.member(seat)
        dealer = message.dealer
        if dealer == i or dealer >= len(self.members) or self.keys[dealer].dealing is None:
            raise Refuse(_C.BAD_DEALING, f"a complaint of member {dealer}, who boxed it nothing")
        if (dealer, i) in self.complaints:
            raise Refuse(_C.REPEATED, f"a second complaint of member {dealer}")
        self.complaints[(dealer, i)] = None
        self.owing.forget()

    def take_answer(self, seat: int, message: DeckAnswer) -> None:
        """``seat`` answers a complaint with the complainer's share in the clear, which must
        be the one its commitments fix (else a proven fault: ``bad_dealing``)."""
        d = self.member(seat)
        recipient = message.recipient
        if self.complaints.get((d, recipient), 0) is not None:
            raise Refuse(_C.BAD_DEALING, f"an answer to member {recipient}, who did not complain")
        dealing = self.keys[d].dealing
        assert dealing is not None  # (a complaint needs one)
        try:
            check_revealed_share(
                message.share,
                public=self.keys[d].key,
                commitments=dealing.commitments,
                seat=recipient,
            )
        except DeckError as exc:
            raise chained(Refuse(_C.BAD_DEALING, f"the answer to member {recipient}: {exc}"), None)
        self.complaints[(d, recipient)] = message.share
        self.owing.forget()

    def unanswered(self) -> list[tuple[int, int]]:
        """``(dealer, complainer)`` of every complaint not answered yet, in order."""
        return [k for k, share in sorted(self.complaints.items()) if share is None]

    def answers_owed(self, seat: int) -> list[int]:
        """The members whose complaint of ``seat``'s box is not answered yet."""
        d = self.member(seat)
        return [
            r
            for (dealer, r), share in sorted(self.complaints.items())
            if dealer == d and share is None
        ]

    # -- open --------------------------------------------------------------------------------
    def take_open(self, seat: int, message: DeckOpen) -> None:
        """``seat``'s round secret, which must be its key's, and its VSS shares of the secrets
        of members dropped, each the one the dealer's commitments fix (§6.1). With ``t`` of
        them a dropped member's secret is rebuilt, and its stages are checked with the
        others' (§6.4, §7.2)."""
        i = self.member(seat)
        if i in self.secrets:
            raise Refuse(_C.REPEATED, "a second deck_open")
        for m, value in message.held:
            dealing = self.keys[m].dealing if m < len(self.members) else None
            if m == i or m not in self.gone or dealing is None:
                raise Refuse(_C.BAD_OPEN, f"a held share of member {m}, not a member dropped")
            try:
                check_revealed_share(
                    value, public=self.keys[m].key, commitments=dealing.commitments, seat=i
                )
            except DeckError as exc:
                raise chained(Refuse(_C.BAD_OPEN, f"the held share of member {m}: {exc}"), None)
        if base_mul(message.secret) != self.keys[i].key:
            raise Refuse(_C.WRONG_SECRET, "the secret revealed is not the one its key commits to")
        self.secrets[i] = message.secret
        t = threshold(len(self.members))
        for m, value in message.held:
            shares = self.held.setdefault(m, {})
            shares[i] = value
            if m not in self.secrets and t is not None and len(shares) >= t:
                self.secrets[m] = reconstruct({j: shares[j] for j in sorted(shares)[:t]})

    def withheld(self) -> dict[int, list[tuple[int, int]]]:
        """Member -> the positions turned up that it has sent no right share of in its feed (in
        turn-up order), of every member still in (a member dropped is opened for, §6.4): its
        own of a position the deal turned up (those of a move's travel as beats, §10.14), or
        its partial for a member dropped of a position still not opened (:meth:`partials_owed`)
        where it revealed its VSS share of that member with its secret. An honest member
        reveals that share only once its final fold holds the drop, and sends every partial
        that fold asks of it first; without it the drop may have come after its ``deck_open``
        in its own view, and nothing is owed yet."""
        out: dict[int, list[tuple[int, int]]] = {}
        for w in self.turned:
            missing = _unfed(self, w)
            for m, owing in self.partials_owed(w):
                missing.update(j for j in owing if j in self.held.get(m, {}))
            for m in sorted(missing):
                out.setdefault(m, []).append(w)
        return out

    def faults(self) -> list[Fault]:
        """The checks after the round (docs/shuffle.md §7.2) over what the fold holds: keys
        against secrets, every VSS dealing re-made, every stage re-run. Seats are member
        indices."""
        n = len(self.members)
        publics = [self.keys[i].key for i in range(n)]
        faults = check_keys(publics, self.secrets)
        if self.peer_ids and threshold(n) is not None:
            dealings = {i: k.dealing for i, k in self.keys.items() if k.dealing is not None}
            recipients = [x25519_public(self.peer_ids[s]) for s in self.members]
            faults += check_dealings(dealings, self.secrets, recipients, self.context)
        if self.final is None:
            return faults
        joint = self.joint
        decks = [new_deck(self.jokers)] * n
        transcript = DealTranscript(
            joint=joint,
            initial=tuple(initial_deck(c, joint) for c in decks),
            stages=tuple(tuple(self.stages[(d, s)] for d in range(n)) for s in range(n)),
        )
        return faults + check_stages(transcript, decks, self.secrets, self.context)


#: A round's fields its constructor takes, in order: :meth:`DeckRound.copy` builds from them
#: in one call (as ``RoundState.copy`` does), several times quicker than ``dataclasses.replace``
_INIT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(DeckRound) if f.init))


def _unfed(deck: DeckRound, where: tuple[int, int]) -> set[int]:
    """The members still in whose own share of ``where`` the feed owes and lacks
    (:meth:`DeckRound.withheld`): of a position the deal turned up, not held, or held from a
    carried opening alone (docs/shuffle.md §10.14: a move's turn-up shares are owed in beats,
    which the votes judge, not the feed)."""
    if where not in deck.face_up:
        return set()
    held = deck.shares.get(where, {})
    return {
        m
        for m in range(len(deck.members))
        if m not in deck.gone and (m not in held or (*where, m, m) in deck.carried)
    }


def _carry(
    deck: DeckRound, shares: Sequence[Share], taken: list[tuple[int, int, int, int]], carried: bool
) -> None:
    """Keep :attr:`DeckRound.carried` (docs/shuffle.md §10.14): the shares a carried opening
    takes (``taken``, as ``(deck, position, of, maker)``) are held from it alone until their
    maker's own ``deck_shares`` comes (its first signing of them in its feed: taken, no
    repeat), which a second ``deck_shares`` of the same share then is."""
    if carried:
        if taken:
            deck.carried |= frozenset(taken)
    elif deck.carried:
        deck.carried -= {(s.deck, s.position, s.of_seat, s.seat) for s in shares}
