"""Bounded work for whoever can reach a lobby: token buckets per sender, and a tally that turns
a flood of bad messages into one log line per kind every few seconds.

Both are sans-I/O (they take the time as an argument) and bounded in memory whatever the
senders do: an attacker chooses its keys freely, so neither keeps more than a fixed number of
entries. The numbers are in docs/lobby.md §6.

>>> buckets = TokenBuckets(rate=1.0, burst=2)
>>> [buckets.allow(b"k", 0.0) for _ in range(3)]
[True, True, False]
>>> buckets.allow(b"k", 1.0)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["DropTally", "TokenBuckets"]

MAX_KEYS: Final = 1024
"""Most senders a :class:`TokenBuckets` or a :class:`DropTally` remembers at once."""


class TokenBuckets:
    """One token bucket per key: ``burst`` tokens, refilled at ``rate`` per second; a message
    costs one.

    At most ``max_keys`` keys are remembered: when a new key comes and the table is full, the
    buckets that have refilled are forgotten first (they hold nothing a fresh one would not),
    then the oldest. Forgetting a key only ever gives it a fresh, full bucket, so the limit
    per key holds for a sender that keeps its key; senders that change keys are bounded by a
    bucket they share (the host's for newcomers, :class:`~p2p_nertz.lobby.state.HostLobby`).

    Args:
        rate: tokens per second.
        burst: most tokens a bucket holds (and the first burst a new key may send).
        max_keys: most keys remembered.
    """

    def __init__(self, *, rate: float, burst: int, max_keys: int = MAX_KEYS) -> None:
        if rate <= 0 or burst < 1 or max_keys < 1:
            raise ValueError("a token bucket needs rate > 0, burst >= 1 and room for a key")
        self.rate = rate
        self.burst = burst
        self.max_keys = max_keys
        self._buckets: dict[bytes, tuple[float, float]] = {}  # key -> (tokens, as of)

    def __len__(self) -> int:
        return len(self._buckets)

    def allow(self, key: bytes, now: float) -> bool:
        """Take a token from ``key``'s bucket if it has one; whether it had."""
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(now - then, 0.0) * self.rate)
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            self._forget(now)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        return True

    def _forget(self, now: float) -> None:
        full = [
            k
            for k, (t, then) in self._buckets.items()
            if t + (now - then) * self.rate >= self.burst
        ]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) >= self.max_keys:
            del self._buckets[next(iter(self._buckets))]  # the oldest key


@dataclass(slots=True)
class _Window:
    start: float
    count: int
    senders: set[bytes]
    more_senders: bool


class DropTally:
    """Count dropped messages by kind and say so at a bounded rate.

    The first drop of a kind after a quiet spell is reported at once, with its reason (so a
    single bad message is as visible as before); the rest are counted, and every ``every``
    seconds a kind that had drops gets one summary line: "dropped 10,231 malformed hello
    messages from 3 senders in the last 10 s". A kind with no drop in a whole window goes quiet
    again. So a kind writes at most one line per ``every`` seconds plus one, whatever the flood.

    The kinds must come from a fixed set (codes and message kinds, never an attacker's text),
    which bounds the table; senders are counted up to ``max_senders`` per window.

    >>> tally = DropTally(every=10.0)
    >>> tally.drop("forged hello", b"k1", "the signature does not verify", 0.0)
    ['dropped a forged hello message: the signature does not verify']
    >>> [tally.drop("forged hello", b"k2", "the signature does not verify", t) for t in (1, 2)]
    [[], []]
    >>> tally.flush(10.0)
    ['dropped 2 forged hello messages from 1 sender in the last 10 s']
    >>> tally.flush(20.0), tally.drop("forged hello", b"k1", "again", 21.0)
    ([], ['dropped a forged hello message: again'])
    >>> tally.drop("forged hello", None, "the sender is not known", 22.0), tally.flush(31.0)
    ([], ['dropped 1 forged hello message in the last 10 s'])
    """

    def __init__(self, *, every: float = 10.0, max_senders: int = MAX_KEYS) -> None:
        self.every = every
        self.max_senders = max_senders
        self._windows: dict[str, _Window] = {}
        self.total = 0
        """Every drop counted, since the start."""

    def drop(self, kind: str, sender: bytes | None, reason: str, now: float) -> list[str]:
        """Count one dropped message of ``kind`` from ``sender``; return the lines to log now."""
        self.total += 1
        window = self._windows.get(kind)
        if window is None:
            self._windows[kind] = _Window(now, 0, set(), False)
            return [f"dropped a {kind} message: {reason}"]
        lines = self._close(kind, window, now) if now - window.start >= self.every else []
        window = self._windows.setdefault(kind, _Window(now, 0, set(), False))
        window.count += 1
        if sender is not None:
            if len(window.senders) < self.max_senders:
                window.senders.add(sender)
            elif sender not in window.senders:
                window.more_senders = True
        return lines

    def flush(self, now: float) -> list[str]:
        """The summaries of every window that is ``every`` seconds old; call it now and then."""
        lines: list[str] = []
        for kind, window in list(self._windows.items()):
            if now - window.start >= self.every:
                lines += self._close(kind, window, now)
        return lines

    def _close(self, kind: str, window: _Window, now: float) -> list[str]:
        if window.count == 0:
            del self._windows[kind]  # a quiet window: the next drop is told at once again
            return []
        self._windows[kind] = _Window(now, 0, set(), False)
        n = len(window.senders)
        who = f" from {n:,}{'+' if window.more_senders else ''} sender{'s' if n != 1 else ''}"
        plural = "s" if window.count != 1 else ""
        return [
            f"dropped {window.count:,} {kind} message{plural}{who if n else ''} "
            f"in the last {now - window.start:.3g} s"
        ]
