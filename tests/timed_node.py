"""``nertz node`` with a short phase timer, withholding its ``ready`` if asked (tests only;
session 40).

    python tests/timed_node.py PHASE_TIMEOUT [--withhold] -- PYTHON -m cli node ARGS...

Runs the command after it in this process with every node's ``phase_timeout`` (the wait
before a member heard that withholds is voted out, 60 s by default and no option of the
commands: docs/protocol.md §9.2) set to ``PHASE_TIMEOUT`` seconds, so that a test sees that
vote within seconds (``tests/test_node_owing.py``). With ``--withhold`` its node's core never
signs its ``ready`` (the round's play waits for it) until the first ``SIGUSR1``, while it beats
as any member: a member heard that owes its phase event (``tests/test_peer_leave.py``'s
``_NoReady``, on a real node).
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from typing import Any

import cli.node_cmd
import p2p_nertz.runtime.node as runtime_node
from p2p_nertz.logfile import Recovery
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode


class _Withholding(Peer):
    """A member that signs no ``ready`` (nothing its play phase calls for) until released."""

    released = False
    acted = False

    def _act(self) -> None:
        if _Withholding.released or self._final.phase is not Phase.PLAY:
            super()._act()

    def _flush(self, now: float) -> list[Any]:
        # (A core signs what the final fold calls for when that fold moves; held back, it
        # waits for nothing else to move: released, it signs at its next input.)
        if _Withholding.released and not _Withholding.acted:
            _Withholding.acted = True
            self._act()
        return super()._flush(now)


class _WithholdingNode(PeerNode):
    """A real node whose core is a :class:`_Withholding` (a first start: a restart would be
    honest, and no test restarts it)."""

    def _make_peer(self, recovery: Recovery) -> list[Any]:
        if recovery.records:
            return super()._make_peer(recovery)
        now = self._clock()
        self._peer = _Withholding(self.identity, self.spec, now, self._config)
        return self._peer.start(now)


def _release(signum: int, frame: object) -> None:
    _Withholding.released = True  # (its next input, a beat a moment away, signs the ready)


def main() -> int:
    cut = sys.argv.index("--")
    timeout, withhold = float(sys.argv[1]), "--withhold" in sys.argv[2:cut]
    command = sys.argv[cut + 1 :]
    runtime_node.NODE_CONFIG = dataclasses.replace(runtime_node.NODE_CONFIG, phase_timeout=timeout)
    if withhold:
        signal.signal(signal.SIGUSR1, _release)
        cli.node_cmd.PeerNode = _WithholdingNode  # type: ignore[misc]
    from cli.main import main as nertz

    return nertz(command[3:])  # (past PYTHON -m cli)


if __name__ == "__main__":
    sys.exit(main())
