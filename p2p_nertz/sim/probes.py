"""Counters on a rule of the core that a soak or a test wants to see fire, not guess at.

A rule that closes a rare fault is tested by hand-built folds; whether the simulator's games
ever reach it is another question, which only counting answers. :func:`count_lifted_cuts`
counts docs/protocol.md §9.2's *a withdrawal after the drop lifts no cap that decided it*
(``folds.lifted_cuts``), on the peer's side (``Folds`` calls ``folds.impose_cuts``; the
spectator shares it) and on the audit's (``audit.auditor`` calls it for its passes), by
wrapping the functions ``impose_cuts`` calls while the ``with`` block runs, and §7.4's *the
drop decided first* (``folds.decided_first``, which ``impose_cuts`` asks before any offer
where a drop rests on a later withdrawal, and which reaches session 15's answer on its own
where it applies). ``rule=False`` takes both out instead (no cut is ever offered), to show
that a game needs them. :func:`count_hand_ons` counts §9.2's *Handed on in play*
(``protocol/relays.py``): the votes for silence that started a hand-on, the beats sent at once
with them, and the beats forwarded in play after. :func:`no_imposed_cuts` and
:func:`no_held_chains` take out a rule that reaches the same answer as another in some games
(the cuts imposed over a fold; the chain the logs of the members still in hold), so that a
test shows the other rule makes it alone.
Not for use outside tests and scripts: it rebinds module attributes of the core for the
block's length, in this process only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from p2p_nertz.audit import auditor
from p2p_nertz.audit.delivery import ForkWatch
from p2p_nertz.protocol import folds
from p2p_nertz.protocol.last_words import LastWords
from p2p_nertz.protocol.relays import Relays
from p2p_nertz.protocol.state import GameState

__all__ = [
    "HandOns",
    "LiftedCuts",
    "count_hand_ons",
    "count_lifted_cuts",
    "no_held_chains",
    "no_imposed_cuts",
]


@dataclass(slots=True)
class LiftedCuts:
    """What the rule did while counted. ``asked``: calls of ``lifted_cuts`` (the peer's
    tentative folds and the audit's passes, each a fixed point with no cut of ``Unheld``
    left to try); ``offered``: cuts it offered; ``peer_kept``: cuts a peer's (or
    spectator's) tentative fold kept for good; ``audit_kept``: cuts an audit pass kept;
    ``first``: folds (a peer's or an audit pass's) that took the drop decided first."""

    asked: int = 0
    offered: int = 0
    peer_kept: int = 0
    audit_kept: int = 0
    first: int = 0

    @property
    def fired(self) -> bool:
        """Whether some fold kept a cut the rule offered, or took the drop decided first."""
        return self.peer_kept + self.audit_kept + self.first > 0

    def add(self, other: LiftedCuts) -> None:
        """Add ``other``'s counts to these (a soak's totals)."""
        self.asked += other.asked
        self.offered += other.offered
        self.peer_kept += other.peer_kept
        self.audit_kept += other.audit_kept
        self.first += other.first


@contextmanager
def count_lifted_cuts(*, rule: bool = True) -> Iterator[LiftedCuts]:
    """Count the rule's offers and the cuts kept while the block runs (see the module
    docstring); with ``rule=False``, offer no cut at all (the rule taken out)."""
    counts = LiftedCuts()
    offer = folds.lifted_cuts
    made = folds.cut_made
    stands = folds.cut_stands
    impose = folds.impose_cuts
    first = folds.decided_first
    offers: set[tuple[int, int]] = set()  # (the last offers, until a trial keeps one)
    who: list[str] = []  # (whose impose_cuts runs: "peer" or "audit"; a stack)
    inside: list[bool] = []  # (cut_made asked by cut_stands: an Unheld cut, not counted)

    def lifted_cuts(
        fold: GameState,
        imposed: Collection[int],
        unheld: folds.Unheld | None = None,
        final: GameState | None = None,
    ) -> list[tuple[int, int]]:
        counts.asked += 1
        cuts = offer(fold, imposed, unheld, final) if rule else []
        counts.offered += len(cuts)
        offers.clear()
        offers.update(cuts)
        return cuts

    def decided_first(*args: Any) -> Any:
        taken = first(*args) if rule else None
        counts.first += taken is not None
        return taken

    def cut_made(fold: GameState, seat: int, cut: int) -> bool:
        kept = made(fold, seat, cut)
        if kept and not inside and (seat, cut) in offers and who:
            offers.clear()
            if who[-1] == "peer":
                counts.peer_kept += 1
            else:
                counts.audit_kept += 1
        return kept

    def cut_stands(*args: Any, **kwargs: Any) -> bool:
        inside.append(True)
        try:
            return stands(*args, **kwargs)
        finally:
            inside.pop()

    def imposing(side: str) -> Callable[..., Any]:
        def impose_cuts(*args: Any, **kwargs: Any) -> Any:
            who.append(side)
            try:
                return impose(*args, **kwargs)
            finally:
                who.pop()

        return impose_cuts

    patches: list[tuple[object, str, object]] = [
        (folds, "lifted_cuts", lifted_cuts),
        (folds, "cut_made", cut_made),
        (folds, "cut_stands", cut_stands),
        (folds, "decided_first", decided_first),
        (folds, "impose_cuts", imposing("peer")),
        (auditor, "impose_cuts", imposing("audit")),
    ]
    with _patched(patches):
        yield counts


@dataclass(slots=True)
class HandOns:
    """What the hand-on in play did while counted (every peer of the process together).
    ``started``: votes for silence that made a peer hand a member on to their voter;
    ``at_once``: beats sent with them (the words that set what the relayer knows of the
    member); ``in_play``: new beats forwarded after, one message per voter."""

    started: int = 0
    at_once: int = 0
    in_play: int = 0

    @property
    def messages(self) -> int:
        """The messages the hand-on sent: those at once and those in play."""
        return self.at_once + self.in_play


@contextmanager
def count_hand_ons() -> Iterator[HandOns]:
    """Count the hand-ons of every :class:`Relays` while the block runs (see the module
    docstring): the sends of ``Relays.vote`` and ``Relays.reconsider`` (a vote held until
    the relayer had listened long enough), and those of ``Relays.note`` beyond
    ``LastWords.note``'s own (the last words of the game's end, not counted)."""
    counts = HandOns()
    vote = Relays.vote
    reconsider = Relays.reconsider
    note = Relays.note
    words = LastWords.note
    own: list[int] = []  # (the sends LastWords.note made inside the Relays.note that runs)

    def voting(self: Relays, *args: Any) -> Any:
        before = sum(map(len, self.to.values()))
        sends = vote(self, *args)
        counts.started += sum(map(len, self.to.values())) - before
        counts.at_once += len(sends)
        return sends

    def reconsidering(self: Relays, *args: Any) -> Any:
        before = sum(map(len, self.to.values()))
        sends = reconsider(self, *args)
        counts.started += sum(map(len, self.to.values())) - before
        counts.at_once += len(sends)
        return sends

    def last_words(self: LastWords, *args: Any) -> Any:
        sends = words(self, *args)
        own.append(len(sends))
        return sends

    def noting(self: Relays, *args: Any) -> Any:
        mark = len(own)
        sends = note(self, *args)
        counts.in_play += len(sends) - sum(own[mark:])
        del own[mark:]
        return sends

    patches: list[tuple[object, str, object]] = [
        (Relays, "vote", voting),
        (Relays, "reconsider", reconsidering),
        (Relays, "note", noting),
        (LastWords, "note", last_words),
    ]
    with _patched(patches):
        yield counts


@contextmanager
def no_imposed_cuts() -> Iterator[None]:
    """Impose no cut over a fold's fixed point while the block runs: ``folds.impose_cuts``
    (a peer's tentative fold, a spectator's) and the audit's passes return the fixed point
    they are given. Every fold is then the roster's rule alone (``Roster._decided``, §9.2),
    without §9.2's *events no other member announced holding* (``Folds._cut_unheld``), which
    reaches the same drops in the games of soak seed 2086's class: to show that the rule
    alone makes them (``tests/test_sim_drop_cuts.py``)."""

    def impose_cuts(fold_with: Any, start: folds.Trial, *args: Any) -> folds.Trial:
        del fold_with, args
        return start

    with _patched([(folds, "impose_cuts", impose_cuts), (auditor, "impose_cuts", impose_cuts)]):
        yield


@contextmanager
def no_held_chains() -> Iterator[None]:
    """While the block runs, the audit takes no chain of a member proven to fork from what the
    logs of the members still in hold (``ForkWatch.held_chain`` finds none): where the
    counted votes quote a chain past the fork (``state.voted_chain``, §9.2), that rule alone
    decides the chain the next pass folds (``tests/test_sim_variants.py``, seed 893)."""

    def held_chain(self: ForkWatch, seat: int, dropped: dict[int, int]) -> None:
        del self, seat, dropped

    with _patched([(ForkWatch, "held_chain", held_chain)]):
        yield


@contextmanager
def _patched(patches: list[tuple[object, str, object]]) -> Iterator[None]:
    """Set each ``(target, name, value)`` while the block runs, then put back what each
    target itself held (its own attribute, not one it inherits)."""
    saved = [(target, name, vars(target)[name]) for target, name, _ in patches]
    for target, name, value in patches:
        setattr(target, name, value)
    try:
        yield
    finally:
        for target, name, value in saved:
            setattr(target, name, value)
