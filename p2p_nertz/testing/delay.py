"""Delay a network namespace's packets: what ``tc netem delay`` does, for a kernel without it.

:meth:`p2p_nertz.testing.netns.Lab.delay` runs this module inside a host of the lab, with an
``iptables`` rule that sends the host's LAN packets to netfilter queue ``--queue`` (``NFQUEUE
--queue-bypass``: with nobody reading the queue they pass as if it were not there). It reads
each packet's id from the queue (a netlink socket, no library) and lets it go ``delay`` ± up to
``jitter`` seconds later (uniform; packets may overtake each other, as under ``netem``), until
SIGTERM, when it lets go whatever it holds and prints what it did, one JSON line: how many
packets it held and how late it let the latest go past its time (``{"held": 266, "late": 0.04}``:
its own lateness, a starved delayer's, which a test reads to tell its fault from the product's).

    ip netns exec NS python -m p2p_nertz.testing.delay --queue 7 --delay 0.5 --jitter 0.2
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence
from typing import Final

NETLINK_NETFILTER: Final = 12
_QUEUE: Final = 3 << 8  # NFNL_SUBSYS_QUEUE
_PACKET, _VERDICT, _CONFIG = 0, 1, 2  # NFQNL_MSG_*
_REQUEST, _ACK = 1, 4  # NLM_F_*
_CFG_CMD, _CFG_PARAMS = 1, 2  # NFQA_CFG_*
_BIND, _COPY_META = 1, 1
_PACKET_HDR, _VERDICT_HDR = 1, 2  # NFQA_*
_ACCEPT: Final = 1  # NF_ACCEPT


def _attr(kind: int, payload: bytes) -> bytes:
    body = struct.pack("=HH", 4 + len(payload), kind) + payload
    return body + b"\0" * (-len(body) % 4)


def _message(kind: int, queue: int, attrs: bytes, *, flags: int = _REQUEST) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    return struct.pack("=IHHII", 16 + len(body), _QUEUE | kind, flags, 0, 0) + body


def packet_ids(data: bytes) -> list[int]:
    """The ids of the queued packets a netlink read holds."""
    ids, at = [], 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        if kind == _QUEUE | _PACKET:
            spot, end = at + 20, at + length
            while spot + 4 <= end:
                size, attr = struct.unpack_from("=HH", data, spot)
                if size < 4:
                    break
                if attr & 0x7FFF == _PACKET_HDR:
                    ids.append(struct.unpack_from("!I", data, spot + 4)[0])
                spot += (size + 3) & ~3
        at += (length + 3) & ~3
    return ids


def run(queue: int, delay: float, jitter: float, seed: int) -> int:
    rng = random.Random(seed)
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.send(_message(_CONFIG, queue, _attr(_CFG_CMD, struct.pack("!BxH", _BIND, 0))))
    sock.send(_message(_CONFIG, queue, _attr(_CFG_PARAMS, struct.pack("!IBxxx", 0, _COPY_META))))
    held: list[tuple[float, int]] = []
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    print("ready", flush=True)  # (the lab waits for it before it adds the rule)
    count, late_most = 0, 0.0
    while not stop[0] or held:
        now = time.monotonic()
        while held and (held[0][0] <= now or stop[0]):
            due, pid = heapq.heappop(held)
            if not stop[0]:  # (those let go at the end are early, not late)
                late_most = max(late_most, now - due)
            verdict = _attr(_VERDICT_HDR, struct.pack("!II", _ACCEPT, pid))
            sock.send(_message(_VERDICT, queue, verdict, flags=_REQUEST))
        if stop[0]:
            continue
        wait = max(0.0, held[0][0] - now) if held else 0.2
        try:
            ready, _, _ = select.select([sock], [], [], wait)
        except InterruptedError:
            continue
        if ready:
            for pid in packet_ids(sock.recv(1 << 16)):
                late = max(0.0, delay + rng.uniform(-jitter, jitter))
                heapq.heappush(held, (time.monotonic() + late, pid))
                count += 1
    print(json.dumps({"held": count, "late": round(late_most, 3)}), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--queue", type=int, required=True)
    p.add_argument("--delay", type=float, required=True, help="seconds")
    p.add_argument("--jitter", type=float, default=0.0, help="± seconds, uniform")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    return run(args.queue, args.delay, args.jitter, args.seed)


if __name__ == "__main__":
    sys.exit(main())
