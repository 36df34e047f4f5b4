"""A LAN of several hosts on one machine: network namespaces joined by a bridge.

The tests and benchmarks that need real hosts (UDP discovery, a link cut mid-round) build a
:class:`Lab`: one namespace per host, each with an ``eth0`` on ``10.77.0.0/24``, and a *switch*
namespace holding the bridge that joins them. Everything lives inside namespaces the lab made:
nothing is created in, and nothing is sent on, the machine's own interfaces, so broadcasting on
the lab's ``eth0`` reaches only the lab's hosts (DESIGN.md §7).

::

    with Lab(3) as lab:
        proc = lab.popen(0, ["python", "-m", "..."])   # runs inside host 0
        said = lab.start(1, ["python", "-c", "..."], ready="up")  # … once it says "up"
        lab.cut(1)                                      # host 1's link goes down
        lab.heal(1)
        lab.split([0, 1, 1])                            # hosts 1 and 2 apart from host 0
        lab.split([0, 0, 0])                            # one LAN again
        lab.cut_link(0, 2)                              # hosts 0 and 2 apart, both ways
        lab.cut_link(1, 0, one_way=True)                # what 1 sends 0 is lost
        lab.heal_link(0, 2)
        lab.lose(1, 30)                                 # 30 % of host 1's packets lost
        lab.reset(2)                                    # host 2's TCP connections reset …
        lab.reset(2, False)                             # … until now
        lab.throttle(0, 32)                             # host 0 on a 32 kbit/s link
        lab.delay(1, 0.5, 0.2)                          # host 1's packets 0.5 s ± 0.2 late
        lab.delay(1, 0)                                 # … no more: Delayed(held=…, late=…)

It needs root and ``ip`` from iproute2; :func:`unavailable` says why a lab cannot be made here
(tests skip with that reason); the impairments (loss, resets, a narrow link) also ``nft``
(nftables), ``iptables`` and ``ss``: :func:`impairments_unavailable`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from types import TracebackType
from typing import Any, Final

from p2p_nertz.testing.said import READY_BOUND, NeverSaid, Said

__all__ = [
    "BROADCAST",
    "SUBNET",
    "Delayed",
    "Lab",
    "LabError",
    "impairments_unavailable",
    "unavailable",
]

SUBNET: Final = "10.77.0.0/24"
"""The lab's LAN."""
BROADCAST: Final = "10.77.0.255"
"""The LAN's broadcast address (the only place a beacon may be sent)."""

_serial = count(1)
#: A locally administered MAC address no host of the lab has (:meth:`Lab.cut_link`).
_NOWHERE: Final = "02:00:00:00:7a:7a"


class LabError(RuntimeError):
    """A namespace, link or address could not be made (the ``ip`` command failed)."""


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise LabError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")


def _ip_tool(argv: Sequence[str], namespace: str, *, stdin: str | None = None) -> None:
    """Run ``argv`` (``nft``, ``tc``) inside ``namespace``."""
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, *argv],
        input=stdin, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise LabError(f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}")


#: The ``iptables`` rule's end that hands a packet to :mod:`p2p_nertz.testing.delay`.
_QUEUE_RULE: Final = ("-j", "NFQUEUE", "--queue-num", "7", "--queue-bypass")


def impairments_unavailable() -> str | None:
    """Why :meth:`Lab.lose`, :meth:`Lab.delay`, :meth:`Lab.reset` and :meth:`Lab.throttle`
    cannot be used here (besides :func:`unavailable`), or ``None``: they need ``nft``
    (nftables), ``iptables``, ``tc`` and ``ss`` (iproute2)."""
    tools = (("nft", "nftables"), ("iptables", "iptables"), ("tc", "iproute2"), ("ss", "iproute2"))
    for tool, package in tools:
        if shutil.which(tool) is None:
            return f"the {tool} command ({package}) is not installed"
    return None


def unavailable() -> str | None:
    """Why a :class:`Lab` cannot be made on this machine, or ``None`` if it can.

    Tries for real: makes and deletes one namespace.
    """
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"nzprobe{os.getpid()}x{next(_serial)}"
    try:
        _ip("netns", "add", probe)
    except LabError as exc:
        return f"cannot create a network namespace: {exc}"
    with contextlib.suppress(LabError):
        _ip("netns", "del", probe)
    return None


class Lab:
    """``hosts`` network namespaces on one bridged LAN; a context manager that removes them.

    Host ``i`` (from 0) is the namespace :meth:`namespace` ``(i)`` with ``eth0`` at
    :meth:`address` ``(i)`` = ``10.77.0.(i + 1)`` and ``lo`` up.

    Raises:
        LabError: on entering, when the namespaces cannot be made (see :func:`unavailable`).
    """

    def __init__(self, hosts: int) -> None:
        if not 1 <= hosts <= 200:
            raise ValueError(f"a lab has 1 to 200 hosts, not {hosts}")
        self.hosts = hosts
        self._tag = f"nz{os.getpid() % 100000}x{next(_serial)}"
        self._made: list[str] = []
        self._procs: list[subprocess.Popen[Any]] = []
        #: The bridges :meth:`split` added to ``br0``, by number (``br1`` …).
        self._bridges: set[int] = set()
        #: The links :meth:`cut_link` cut, as (sender, receiver): what the sender loses.
        self._links: set[tuple[int, int]] = set()
        #: The impairments going on (:meth:`lose`, :meth:`reset`, :meth:`throttle`), by host.
        self._loss: dict[int, float] = {}
        self._resets: set[int] = set()
        self._throttled: set[int] = set()
        #: The delaying processes (:meth:`delay`), what they say read as it comes, by host.
        self._delayers: dict[int, Said] = {}
        #: The processes :meth:`start` started, what they say read as it comes.
        self._said: list[Said] = []

    # -- names ---------------------------------------------------------------------------------
    @property
    def switch(self) -> str:
        """The namespace holding the bridge."""
        return f"{self._tag}sw"

    def namespace(self, host: int) -> str:
        """Host ``host``'s namespace name."""
        self._check(host)
        return f"{self._tag}h{host}"

    def address(self, host: int) -> str:
        """Host ``host``'s IPv4 address on the lab LAN."""
        self._check(host)
        return f"10.77.0.{host + 1}"

    def _check(self, host: int) -> None:
        if not 0 <= host < self.hosts:
            raise IndexError(f"the lab has hosts 0 to {self.hosts - 1}, not {host}")

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Lab:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _build(self) -> None:
        sw = self.switch
        _ip("netns", "add", sw)
        self._made.append(sw)
        _ip("-n", sw, "link", "set", "lo", "up")
        _ip("-n", sw, "link", "add", "br0", "type", "bridge", "stp_state", "0")
        _ip("-n", sw, "link", "set", "br0", "up")
        for host in range(self.hosts):
            ns = self.namespace(host)
            _ip("netns", "add", ns)
            self._made.append(ns)
            port = f"p{host}"
            _ip("-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", sw, "link", "set", port, "master", "br0")
            _ip("-n", sw, "link", "set", port, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip(
                "-n", ns, "addr", "add", f"{self.address(host)}/24", "brd", BROADCAST, "dev", "eth0"
            )
            _ip("-n", ns, "link", "set", "eth0", "up")

    def close(self) -> None:
        """Stop every process the lab started, then delete its namespaces (idempotent)."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):  # a process in D state
                proc.wait(timeout=10)
        for said in self._said:  # (killed above: each says nothing now)
            said.close()
            for pipe in (said.proc.stdin, said.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):  # (stdin: what was unwritten is lost)
                        pipe.close()
        self._procs.clear()
        self._said.clear()
        for ns in reversed(self._made):
            with contextlib.suppress(LabError):
                _ip("netns", "del", ns)
        self._made.clear()
        self._bridges.clear()
        self._links.clear()
        self._loss.clear()
        self._resets.clear()
        self._throttled.clear()
        self._delayers.clear()

    # -- use -----------------------------------------------------------------------------------
    def command(self, host: int, argv: Sequence[str]) -> list[str]:
        """``argv`` wrapped to run inside host ``host``'s namespace."""
        return ["ip", "netns", "exec", self.namespace(host), *argv]

    def popen(
        self, host: int, argv: Sequence[str], *, env: Mapping[str, str] | None = None, **kw: Any
    ) -> subprocess.Popen[Any]:
        """Start ``argv`` inside host ``host``; the lab kills it on :meth:`close` if still running.

        Keyword arguments go to :class:`subprocess.Popen`.
        """
        proc = subprocess.Popen(self.command(host, argv), env=dict(env or os.environ), **kw)
        self._procs.append(proc)
        return proc

    def start(
        self,
        host: int,
        argv: Sequence[str],
        *,
        ready: str,
        name: str = "",
        bound: float = READY_BOUND,
        **kw: Any,
    ) -> Said:
        """Start ``argv`` inside host ``host`` (:meth:`popen`, its stdout a text pipe) and wait
        for it to say a line starting with ``ready``; what it says is read as it comes.

        Args:
            name: what the process is, for a failure's message (by default its command).
            bound: how long it may take: a hang's bound.
            kw: go to :class:`subprocess.Popen` (not ``stdout``, nor ``text``); its pipes are
                closed with the lab.

        Raises:
            NeverSaid: it did not say ``ready`` within ``bound`` s, or ended first: the message
                says what it said and what it was doing; it is killed.
        """
        proc = self.popen(host, argv, stdout=subprocess.PIPE, text=True, **kw)
        said = Said(proc, name or f"{' '.join(argv)[:80]} (host {host})")
        self._said.append(said)
        try:
            said.wait_for(ready, bound)
        except NeverSaid:
            proc.kill()
            raise
        return said

    def run(self, host: int, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[Any]:
        """Run ``argv`` inside host ``host`` to completion (keywords go to ``subprocess.run``)."""
        return subprocess.run(self.command(host, argv), check=False, **kw)

    def cut(self, host: int) -> None:
        """Cut host ``host`` off the LAN (its switch port goes down): a partition."""
        self._check(host)
        _ip("-n", self.switch, "link", "set", f"p{host}", "down")

    def heal(self, host: int) -> None:
        """Put host ``host`` back on the LAN."""
        self._check(host)
        _ip("-n", self.switch, "link", "set", f"p{host}", "up")

    def cut_link(self, a: int, b: int, *, one_way: bool = False) -> None:
        """Cut the link between hosts ``a`` and ``b`` only: what ``a`` sends ``b`` is lost, and
        (unless ``one_way``) what ``b`` sends ``a``; each still reaches every other host.

        A failed link, not a partition: each host gives the other's address a neighbour entry
        naming no host on the LAN (a MAC address nobody has), so its frames to the other are
        dropped in silence, as by a dead cable; its ARP table alone changes (no kernel module,
        no packet filter needed). Over TCP a one-way cut stalls both ways (the acks are lost),
        but what was in flight from ``b`` still reaches ``a``.

        Raises:
            ValueError: ``a`` and ``b`` are the same host.
        """
        self._check(a)
        self._check(b)
        if a == b:
            raise ValueError(f"a link joins two hosts, not host {a} to itself")
        for src, dst in [(a, b)] if one_way else [(a, b), (b, a)]:
            _ip(
                "-n", self.namespace(src), "neigh", "replace", self.address(dst),
                "lladdr", _NOWHERE, "dev", "eth0", "nud", "permanent",
            )  # fmt: skip
            self._links.add((src, dst))

    def heal_link(self, a: int, b: int) -> None:
        """Undo :meth:`cut_link` of ``a`` and ``b`` (both ways, whichever were cut)."""
        self._check(a)
        self._check(b)
        for src, dst in ((a, b), (b, a)):
            if (src, dst) in self._links:
                _ip("-n", self.namespace(src), "neigh", "del", self.address(dst), "dev", "eth0")
                self._links.discard((src, dst))

    def split(self, sides: Sequence[Hashable]) -> None:
        """Split the LAN: host ``i`` reaches host ``j`` only if ``sides[i] == sides[j]``.

        Each side gets a bridge of its own in the switch namespace (host 0's side keeps
        ``br0``); all sides equal puts the LAN back together. Two partitions at once are one
        split whose sides are the pairs of the two (a host reaches only those on its side of
        both). A host :meth:`cut` off stays cut off, whatever bridge its port is on.

        Raises:
            ValueError: unless ``sides`` names one side per host.
        """
        if len(sides) != self.hosts:
            raise ValueError(f"a side for each of the {self.hosts} hosts, not {len(sides)}")
        sw = self.switch
        order = list(dict.fromkeys(sides))  # host 0's side first: it stays on br0
        for k in range(1, len(order)):
            if k not in self._bridges:
                _ip("-n", sw, "link", "add", f"br{k}", "type", "bridge", "stp_state", "0")
                _ip("-n", sw, "link", "set", f"br{k}", "up")
                self._bridges.add(k)
        for host, side in enumerate(sides):
            _ip("-n", sw, "link", "set", f"p{host}", "master", f"br{order.index(side)}")
        for k in sorted(self._bridges):
            if k >= len(order):
                _ip("-n", sw, "link", "del", f"br{k}")
                self._bridges.discard(k)

    # -- a degraded LAN (session 31): loss, a narrow link, resets; nftables and tc ------------
    def lose(self, host: int, percent: float) -> None:
        """Lose ``percent`` % of the frames host ``host`` sends or receives on the LAN, each
        drawn apart (nftables ``numgen random`` on its switch port: Wi-Fi losing frames, which
        TCP retransmits, later and later); ``0`` loses none again. Bursts are the caller's:
        a percentage changed in time (``scripts/chaos.py`` ``lossy``).

        Raises:
            ValueError: ``percent`` is not from 0 to 100.
            LabError: ``nft`` is missing or failed (:func:`impairments_unavailable`).
        """
        self._check(host)
        if not 0 <= percent <= 100:
            raise ValueError(f"a loss is 0 to 100 %, not {percent}")
        self._loss[host] = percent
        self._filter(host)

    def reset(self, host: int, on: bool = True) -> None:
        """While ``on``, every TCP segment host ``host`` sends or receives on the LAN is answered
        with a reset (nftables ``reject with tcp reset``), and its connections open now are
        reset at once (``ss -K``): a switch resetting them, ZeroMQ reconnecting (and refused
        until ``reset(host, False)``) with what was queued for the old connection lost."""
        self._check(host)
        if on:  # (first: its resets go out before the rule would turn them back)
            done = self.run(host, ["ss", "-K", "dst", SUBNET], capture_output=True, text=True)
            if done.returncode != 0:
                raise LabError(f"ss -K: {done.stderr.strip() or done.returncode}")
        self._resets.discard(host)
        if on:
            self._resets.add(host)
        self._filter(host)

    def throttle(self, host: int, kbit: int) -> None:
        """Narrow host ``host``'s link to ``kbit`` kbit/s each way (``tc`` token bucket on its
        ``eth0`` and its switch port, a queue of up to 4 s: what waits longer is lost): a slow,
        congested link whose queue delays every message; ``0`` lifts it. (No ``netem`` delay:
        this machine's kernel has none.)"""
        self._check(host)
        if kbit < 0:
            raise ValueError(f"a rate is 0 kbit/s or more, not {kbit}")
        for ns, dev in ((self.namespace(host), "eth0"), (self.switch, f"p{host}")):
            if host in self._throttled:
                _ip_tool(["tc", "qdisc", "del", "dev", dev, "root"], ns)
            if kbit:
                rate = [f"{kbit}kbit", "burst", "4kb", "latency", "4s"]
                _ip_tool(["tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", *rate], ns)
        self._throttled.discard(host)
        if kbit:
            self._throttled.add(host)

    def delay(
        self, host: int, seconds: float, jitter: float = 0.0, *, seed: int = 0
    ) -> Delayed | None:
        """Delay every packet host ``host`` sends or receives on the LAN by ``seconds`` ±
        ``jitter`` (uniform, each drawn apart: they may overtake each other), ``0`` none again:
        a slow Wi-Fi. ``tc netem``'s delay, done by :mod:`p2p_nertz.testing.delay` holding each
        packet in netfilter queue (an ``iptables NFQUEUE`` rule in the host's namespace).

        Returns what the delay it replaces did (:class:`Delayed`), or ``None`` if there was
        none (or its delayer died without saying)."""
        self._check(host)
        if seconds < 0 or jitter < 0:
            raise ValueError(f"a delay is 0 s or more, not {seconds} ± {jitter}")
        ns = self.namespace(host)
        rules = [("OUTPUT", "-d"), ("INPUT", "-s")]
        done = None
        if host in self._delayers:
            for chain, way in rules:
                _ip_tool(["iptables", "-D", chain, way, SUBNET, *_QUEUE_RULE], ns)
            done = _stop_delayer(self._delayers.pop(host))
        if not seconds:
            return done
        argv = [
            "--queue",
            "7",
            "--delay",
            f"{seconds}",
            "--jitter",
            f"{jitter}",
            "--seed",
            f"{seed}",
        ]
        try:  # (then it says nothing until it is stopped)
            said = self.start(
                host, [sys.executable, "-m", "p2p_nertz.testing.delay", *argv],
                ready="ready", name=f"the delay of host {host}",
            )  # fmt: skip
        except NeverSaid as exc:
            raise LabError(str(exc)) from None
        self._delayers[host] = said
        for chain, way in rules:
            _ip_tool(["iptables", "-A", chain, way, SUBNET, *_QUEUE_RULE], ns)
        return done

    def _filter(self, host: int) -> None:
        """Host ``host``'s nftables table (its resets) and the switch's (every host's loss),
        made again from :attr:`_resets` and :attr:`_loss`."""
        # (Not a reset itself: the resets the rule makes pass the host's output hook too.)
        reset = "meta l4proto tcp tcp flags & rst == 0 reject with tcp reset; "
        rules = reset if host in self._resets else ""
        chains = "\n".join(
            f"chain {hook} {{ type filter hook {hook} priority 0; policy accept; "
            + (f"ip {way} {SUBNET} {rules}" if rules else "")
            + "}"
            for hook, way in (("input", "saddr"), ("output", "daddr"))
        )
        _nft(self.namespace(host), "inet", chains)
        # The loss on the wire, in the switch: a packet dropped in the host's own output would
        # fail its sender's call (EPERM), which no Wi-Fi does.
        lost = "".join(
            f"{way} p{h} numgen random mod 10000 < {round(share * 100)} drop; "
            for h, share in sorted(self._loss.items())
            if share
            for way in ("iifname", "oifname")
        )
        forward = f"chain forward {{ type filter hook forward priority 0; policy accept; {lost}}}"
        _nft(self.switch, "bridge", forward)


@dataclass(frozen=True)
class Delayed:
    """What a delay did, said by its delayer when :meth:`Lab.delay` lifted or replaced it."""

    held: int
    """Packets it held (each ``seconds`` ± ``jitter``)."""
    late: float
    """How late, in seconds, it let the latest of them go past its time: its own lateness (a
    delayer starved of the CPU holds packets longer than asked)."""


def _stop_delayer(delayer: Said) -> Delayed | None:
    """Stop a delayer (it lets go what it holds first, then unbinds the queue) and read what it
    says it did."""
    delayer.proc.terminate()
    delayer.proc.wait(timeout=10)
    delayer.close()  # (its output read to its end; its pipe closed with the lab)
    lines = delayer.lines
    try:
        said = json.loads(lines[-1]) if lines else None
    except ValueError:
        said = None
    return Delayed(said["held"], said["late"]) if isinstance(said, dict) else None


def _nft(namespace: str, family: str, chains: str) -> None:
    """Make the table ``nzlab`` of ``family`` in ``namespace`` again, with ``chains``."""
    script = f"table {family} nzlab {{}}\ndelete table {family} nzlab\n"
    script += f"table {family} nzlab {{\n{chains}\n}}\n"
    _ip_tool(["nft", "-f", "-"], namespace, stdin=script)
