"""What a node lets in through its ROUTER: members only, each at a bounded rate; refusals summed.

Theory of operation
-------------------
A node's ROUTER is reachable by anyone who can open a TCP connection to it. Three bounds keep
a stranger from spending the node's memory and CPU (issue 14 §2, docs/protocol.md §4.3, §9.7):

1. **Size**: every socket refuses frames above the protocol's largest message (``MAXMSGSIZE``,
   set by :mod:`p2p_nertz.runtime.zmqtrio`); zmq drops the connection before holding the frame.
2. **Who**: only the roster's members can connect at all: the ROUTER is a CURVE server whose
   ZAP handler admits the other members' keys alone (:mod:`p2p_nertz.runtime.gate`), and
   names the member in the connection's User-Id, which ends every frame list the ROUTER
   gives (``[routing id, message, User-Id]``). Honest members connect each DEALER under a
   routing id that starts with ``b"N" + peer id`` (:func:`~p2p_nertz.runtime.mesh.routing_id`)
   and goes on with a nonce of that socket's (:func:`~p2p_nertz.runtime.mesh.dealer_id`: two
   connections under one key, a key file run on two machines, then stand side by side). A
   frame whose routing id does not start with the one of the member its connection's key
   names (a member's DEALER claiming another member's id, or no member's) is dropped before
   it is even parsed (``outsider``). But zmq's own routing ids (a zero byte first) name the
   member whose key the connection authenticated: under one a ROUTER gives what a connection
   held when a newer one under the same routing id took it over (``ROUTER_HANDOVER``: a
   member's DEALER reconnecting after its link timeout, a stop or a cut; up to the ROUTER's
   mark of frames, dropped as ``outsider`` until session 33). A member choosing such an id
   itself gains nothing: it is taken as itself, on its own budget. A message whose *author*
   is outside the roster is dropped by the codec after its cheap header checks, before its
   signature is verified (``unknown_author``, docs/protocol.md §4.3).
3. **How much**: each member has a token bucket of :data:`SENDER_BURST` messages, over all its
   connections, refilled at :data:`SENDER_RATE` per second. A message taken from an empty
   bucket is dropped unread and unverified (``over_budget``). Honest members send ~20
   messages a second at the most, and bursts of ~10 in 100 ms (measured, docs/protocol.md
   §9.7), so only a flood meets the bound; what a flood costs the node is then at most
   ``SENDER_RATE`` parses and verifications per second per member, and nothing for any other
   routing id.

A routing id is authenticated this way, so each budget is one member's, whichever of its
connections spends it: a member can spend only its own, and a stranger none (it is refused at
the handshake, never reaching the guard). A member may connect a second DEALER under its own
key: the two stand side by side, on one budget. Under another member's routing id it gets
nothing through, and it can take over no connection of that member's: the id of each is the
member's and a nonce sent only inside the CURVE connection to this ROUTER (until session 34
every DEALER of a member had one id, and ``ROUTER_HANDOVER`` ended the member's connection
each time another took its id over, until it reconnected). It cannot make the node accept
anything or do more than the bound.

**Two connections under one key.** The guard notes the routing id each member's messages come
under, at the cost of a comparison a message: an older connection of a member still heard
:data:`TWIN_AFTER` seconds after a newer one's first message means two live copies of its key
(a key file run on two machines, a log resumed on a second one; docs/key-files.md §4), never
a restart, whose old connection only gives what the ROUTER held of it. The guard lets both
through and says it once (:attr:`InboundGuard.twins`, its ``on_twin``; the node tells the
person in a WARNING naming the member).

Refusals are counted by reason (:attr:`InboundGuard.counts`,
:attr:`RefusalLog.counts`) and written to the log at a bounded rate by :class:`RefusalLog`:
the first refusal after a quiet spell in full (at INFO), then one summary line per
:data:`SUMMARY_INTERVAL` at most (a WARNING), whatever the flood. The first ``bad_version``
is also a WARNING of its own, once: only a member gets a message to the peer (the handshake
and the guard see to that), so it means a member runs another protocol version, which a
person should hear at once, not in a count ten seconds later (docs/protocol.md §4.7).

Time is whatever the caller passes as ``now`` (seconds, any monotonic origin).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "SENDER_BURST",
    "SENDER_RATE",
    "SUMMARY_INTERVAL",
    "TWIN_AFTER",
    "TWIN_AFTER_ENV",
    "InboundGuard",
    "RefusalLog",
    "SenderBudget",
    "TokenBucket",
]

SENDER_RATE: Final = 500.0
"""Messages per second a member's connection may sustain (docs/protocol.md §9.7)."""

SENDER_BURST: Final = 500
"""Messages a member's connection may send at once after a quiet spell (a bucket's size)."""

TWIN_AFTER: Final = 10.0
"""Seconds a member's older connection must still be heard after a newer one's first message
for the guard to say that its key is connected twice at once (:attr:`InboundGuard.twins`). A
restarted node's new connection comes after its old one, whose last messages the ROUTER may
give just after the new one's first (what it held of it, at most its mark of 992 messages,
read in the receive task's next bursts); two live copies of one key go on side by side."""

TWIN_AFTER_ENV: Final = "NERTZ_TWIN_AFTER"
"""The environment variable that, set to a number of seconds (a positive one), replaces
:data:`TWIN_AFTER` in a node (:func:`twin_after`): for the tests, which run two real
processes under one key without waiting ten seconds of a loaded machine for it."""

TWIN_IDS: Final = 8
"""Connections of one member (routing ids) the guard remembers to tell a twin."""

SUMMARY_INTERVAL: Final = 10.0
"""Least seconds between two summary lines of refused messages in the log."""

OUTSIDER: Final = "outsider"
"""Reason: a frame under a routing id other than the one of the member its key names."""
OVER_BUDGET: Final = "over_budget"
"""Reason: a member's connection sent more than its budget allows."""
BAD_FRAMES: Final = "bad_frames"
"""Reason: a message of other than one frame (between the routing id and the User-Id)."""


@dataclass(frozen=True, slots=True)
class SenderBudget:
    """How many messages one member's connection may send: a token bucket's rate and size.

    Attributes:
        rate: tokens added per second.
        burst: the bucket's size (and its content at the start).

    Raises:
        ValueError: a rate or a burst that is not positive.
    """

    rate: float = SENDER_RATE
    burst: int = SENDER_BURST

    def __post_init__(self) -> None:
        if not self.rate > 0 or self.burst < 1:
            raise ValueError(f"a sender budget needs rate > 0 and burst >= 1: {self}")


class TokenBucket:
    """A token bucket, full at ``now``: :meth:`take` says whether one more message fits.

    >>> bucket = TokenBucket(SenderBudget(rate=2.0, burst=2), now=0.0)
    >>> [bucket.take(0.0) for _ in range(3)]
    [True, True, False]
    >>> bucket.take(0.5)  # half a second later: one token more
    True
    """

    __slots__ = ("_at", "_burst", "_rate", "_tokens")

    def __init__(self, budget: SenderBudget, now: float) -> None:
        self._rate = budget.rate
        self._burst = float(budget.burst)
        self._tokens = self._burst
        self._at = now

    def take(self, now: float) -> bool:
        """Spend one token if there is one at ``now``; return whether there was."""
        if now > self._at:
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


def twin_after(environ: Mapping[str, str]) -> float:
    """:data:`TWIN_AFTER`, or the seconds :data:`TWIN_AFTER_ENV` in ``environ`` says instead.

    Raises:
        ValueError: the variable is set to something other than a positive number of seconds
            (its message names the variable and the value).

    >>> twin_after({}), twin_after({TWIN_AFTER_ENV: "1.5"})
    (10.0, 1.5)
    """
    text = environ.get(TWIN_AFTER_ENV)
    if text is None:
        return TWIN_AFTER
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ValueError(f"{TWIN_AFTER_ENV} must be a positive number of seconds, not {text!r}")
    return seconds


class InboundGuard:
    """Decides which ROUTER messages reach the peer core (see the module docstring).

    Args:
        senders: the members that may send to us: what each one's routing ids start with
            (:func:`~p2p_nertz.runtime.mesh.routing_id`, one length for all) and the User-Id
            its connections carry (:func:`~p2p_nertz.runtime.gate.zap_user_id`).
        budget: each member's budget, over all its connections; its bucket is full when the
            member's first message arrives.
        on_twin: called once with a member's routing id (as in ``senders``) when its key is
            heard over two connections at once (:attr:`twins`).
        twin_after: how long an older connection must still be heard after a newer one's
            first message for that (:data:`TWIN_AFTER`; :func:`twin_after`).

    Raises:
        ValueError: routing ids of different lengths.
    """

    def __init__(
        self,
        senders: Mapping[bytes, bytes],
        budget: SenderBudget | None = None,
        on_twin: Callable[[bytes], None] | None = None,
        twin_after: float = TWIN_AFTER,
    ) -> None:
        self.budget = budget if budget is not None else SenderBudget()
        self._users = {bytes(rid): bytes(user) for rid, user in senders.items()}
        self._members = {user: rid for rid, user in self._users.items()}
        lengths = {len(rid) for rid in self._users}
        if len(lengths) > 1:
            raise ValueError(f"the members' routing ids differ in length: {sorted(lengths)}")
        self._cut = lengths.pop() if lengths else 0  # (the member's part of a routing id)
        self._buckets: dict[bytes, TokenBucket] = {}
        self._on_twin = on_twin
        self._twin_after = twin_after
        self._current: dict[bytes, bytes] = {}  # member -> routing id of its last message
        self._firsts: dict[bytes, dict[bytes, float]] = {}  # member -> routing id -> first heard
        self.twins: set[bytes] = set()
        """Members whose key was heard over two connections at once: an older one still heard
        ``twin_after`` (:data:`TWIN_AFTER`) seconds after a newer one's first message (its key
        in use on two machines; a restarted node's old connection gives what it held at once,
        then stops)."""
        self.counts: Counter[str] = Counter()
        """Frames dropped, by reason (:data:`OUTSIDER`, :data:`OVER_BUDGET`,
        :data:`BAD_FRAMES`)."""

    def admit(self, frames: Sequence[bytes], now: float) -> bytes | None:
        """The message in ``frames`` (``[routing id, message, User-Id]`` from the ROUTER) if
        it may go on to the peer core, else ``None`` (and the drop is counted)."""
        reason = self._refusal(frames, now)
        if reason is None:
            return frames[1]
        self.counts[reason] += 1
        return None

    def admit_many(
        self, batch: Sequence[Sequence[bytes]], now: float
    ) -> tuple[list[bytes], dict[str, int]]:
        """:meth:`admit` each of ``batch``, in order: the messages let through, and the drops
        of this batch by reason (empty when none; also counted in :attr:`counts`). A receive
        loop calls it once a burst: a copy of :attr:`counts` before and a difference after
        tripled the guard's cost of a burst (2.1 against 0.8 µs warm) to find the drops that
        are nearly never there."""
        messages: list[bytes] = []
        refused: dict[str, int] = {}
        for frames in batch:
            reason = self._refusal(frames, now)
            if reason is None:
                messages.append(frames[1])
            else:
                self.counts[reason] += 1
                refused[reason] = refused.get(reason, 0) + 1
        return messages, refused

    def _refusal(self, frames: Sequence[bytes], now: float) -> str | None:
        """Why ``frames`` may not go on (a budget's token is spent if it may), or ``None``."""
        sender = frames[0][: self._cut]  # (the member's part, then the DEALER's nonce)
        if self._users.get(sender) != frames[-1]:
            # A connection handed over (its routing id taken by a newer one, as a member's
            # DEALER reconnecting): zmq still gives what it held, under an id of its own
            # making (a zero byte first), from the member its key names.
            sender = self._members.get(frames[-1], b"") if sender[:1] == b"\0" else b""
            if not sender:
                return OUTSIDER
        if len(frames) != 3:
            return BAD_FRAMES
        bucket = self._buckets.get(sender)
        if bucket is None:
            bucket = self._buckets[sender] = TokenBucket(self.budget, now)
        if not bucket.take(now):
            return OVER_BUDGET
        if self._current.get(sender) != frames[0]:
            self._switched(sender, frames[0], now)
        return None

    def _switched(self, member: bytes, rid: bytes, now: float) -> None:
        """Note that ``member`` is heard under ``rid``, not the routing id of its last message;
        call it a twin if ``rid``'s connection is older than another one heard since and is
        still heard ``twin_after`` seconds after that one's first message."""
        if rid[:1] == b"\0":
            return  # (what a handed-over connection held: its DEALER's own, reconnected)
        self._current[member] = rid
        firsts = self._firsts.setdefault(member, {})
        first = firsts.setdefault(rid, now)
        if len(firsts) > TWIN_IDS:
            del firsts[next(iter(firsts))]  # (the longest known: bounded, whatever a member does)
        if member in self.twins:
            return
        if any(first < other <= now - self._twin_after for other in firsts.values()):
            self.twins.add(member)
            if self._on_twin is not None:
                self._on_twin(member)


class RefusalLog:
    """Counts refused messages by reason and logs them at a bounded rate.

    The first refusal after :data:`SUMMARY_INTERVAL` without any is logged in full (INFO);
    the ones after it are counted, and :meth:`refused` or :meth:`flush` write one WARNING line
    with the counts once the interval has passed, so a flood writes a line per interval, not
    a line per message.

    Args:
        logger: where the lines go.
        interval: least seconds between two summary lines.
    """

    def __init__(self, logger: logging.Logger, interval: float = SUMMARY_INTERVAL) -> None:
        self._log = logger
        self._interval = interval
        self._since: float | None = None  # start of the window being counted, if any
        self._window: Counter[str] = Counter()
        self._quiet_until = -float("inf")  # a refusal before this is summed, not shown
        self.counts: Counter[str] = Counter()
        """Every refusal since the start, by reason."""
        self.lines = 0
        """Lines written so far (a flood must not make this grow with the messages)."""
        self._versions_said = False

    def refused(self, reason: str, detail: str, now: float, count: int = 1) -> None:
        """Note ``count`` refusals for ``reason``; log the first in full or sum it up."""
        if count < 1:
            return
        self.counts[reason] += count
        if reason == "bad_version" and not self._versions_said:
            self._versions_said = True
            self._log.warning(
                "refused a message of another protocol version (%s): a member runs another "
                "p2p-nertz; every member must run the same version (docs/protocol.md §4.7)",
                detail,
            )
            self.lines += 1
        if now >= self._quiet_until and not self._window:
            self._log.info("refused a message: %s (%s)", reason, detail)
            self.lines += 1
            self._quiet_until = now + self._interval
            count -= 1
            if not count:
                return
        if self._since is None:
            self._since = now
        self._window[reason] += count
        self.flush(now)

    def flush(self, now: float, *, force: bool = False) -> None:
        """Write the summary of the refusals counted so far, if the interval has passed (or
        ``force``: the node is stopping)."""
        if self._since is None or (not force and now - self._since < self._interval):
            return
        total = sum(self._window.values())
        parts = ", ".join(f"{reason} {n:,}" for reason, n in sorted(self._window.items()))
        seconds = max(now - self._since, 0.0)
        self._log.warning("refused %s more messages in %.1f s: %s", f"{total:,}", seconds, parts)
        self.lines += 1
        self._window.clear()
        self._since = None
        self._quiet_until = now + self._interval
