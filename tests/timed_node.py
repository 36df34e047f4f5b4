"""``nertz node`` with a short phase timer, withholding its ``ready`` if asked, or stopping at
a drop decided (tests only; sessions 40, 41).

    python tests/timed_node.py PHASE_TIMEOUT [--withhold|--stop-at-drop] [--aim=NAMES] \
        -- PYTHON -m cli node ...

Runs the command after it in this process with every node's ``phase_timeout`` (the wait
before a member heard that withholds is voted out, 60 s by default and no option of the
commands: docs/protocol.md §9.2) set to ``PHASE_TIMEOUT`` seconds, so that a test sees that
vote within seconds (``tests/test_node_owing.py``). With ``--withhold`` its node's core never
signs its ``ready`` (the round's play waits for it) until the first ``SIGUSR1``, while it beats
as any member: a member heard that owes its phase event (``tests/test_peer_leave.py``'s
``_NoReady``, on a real node). With ``--stop-at-drop`` its node carries out nothing more (sends
nothing, logs nothing, pushes nothing to a watcher: a process stopped) from the first input
after which its held votes drop a member, until the first ``SIGUSR1``; its core takes every
input meanwhile, and what it did is carried out then, in order (a stopped process's sockets
queue what it is sent): a member whose word on the vote that decided the drop never comes
(session 41, ``tests/test_node_owing.py``), at a chosen point, where a ``SIGSTOP`` from
outside races the votes.

With ``--aim=NAMES`` (comma-separated) its node votes nobody out for silence, and abandons
nobody, until the first ``SIGUSR2``, then only the members ``NAMES``, each once
(:class:`~p2p_nertz.testing.silences.SilenceAim`; session 43, its abandons session 44): a test
that kills or stops a member, then sends the signal, makes the one silence this node's quick
timer answers, and a loaded machine's stall of another process is answered by no vote of this
node. A second ``SIGUSR2`` aims it at nobody again, a third at ``NAMES``, and so on: a test
that watches for one moment only (a node's waking, ``tests/test_node_waker.py``) aims it for
that moment (each signal sent once the node has shown it took the one before).

``PYTHON`` is the interpreter every process the command starts is started with (its
``sys.executable``): a test that runs ``nertz demo`` here with ``PYTHON`` a script that runs
this file again gets every ``nertz node`` the demo starts timed and aimed as well
(``tests/test_cli_demo.py``).
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from typing import Any, ClassVar

import cli.node_cmd
import p2p_nertz.runtime.node as runtime_node
from p2p_nertz.logfile import Recovery
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.testing.silences import SilenceAim


class _Withholding(Peer):
    """A member that signs no ``ready`` (nothing its play phase calls for) until released."""

    released = False
    acted = False

    def _act(self) -> None:
        if _Withholding.released or self._final.phase is not Phase.PLAY:
            super()._act()

    def _flush_honest(self, now: float) -> list[Any]:
        # (A core signs what the final fold calls for when that fold moves; held back, it
        # waits for nothing else to move: released, it signs at its next input.)
        if _Withholding.released and not _Withholding.acted:
            _Withholding.acted = True
            self._act()
        return super()._flush_honest(now)


class _Stopping(Peer):
    """A member whose effects wait, from the first input after which its held votes drop a
    member, until released (``--stop-at-drop``); then they are all carried out, in order."""

    released = False
    waiting: ClassVar[list[Any]] = []

    def _flush_honest(self, now: float) -> list[Any]:
        effects = super()._flush_honest(now)
        if _Stopping.released:
            effects, _Stopping.waiting = _Stopping.waiting + effects, []
            return effects
        if _Stopping.waiting or self.tentative.dropped:
            _Stopping.waiting.extend(effects)
            return []
        return effects


class _TimedNode(PeerNode):
    """A real node whose core is a :attr:`core` (a first start: a restart would be honest,
    and no test restarts it), its silence votes aimed at the members :attr:`aim` names once
    :attr:`aimed` (if it names any)."""

    core: type[Peer] = Peer
    aim: ClassVar[list[str] | None] = None
    aimed = False
    seats: ClassVar[list[int]] = []
    silences: SilenceAim | None = None

    def _make_peer(self, recovery: Recovery) -> list[Any]:
        if recovery.records or self.core is Peer:
            effects = super()._make_peer(recovery)
        else:
            now = self._clock()
            self._peer = self.core(self.identity, self.spec, now, self._config)
            effects = self._peer.start(now)
        if _TimedNode.aim is not None and self._peer is not None:
            names = [m.name for m in self.spec.members]
            _TimedNode.seats = [names.index(name) for name in _TimedNode.aim]
            _TimedNode.silences = SilenceAim(self._peer._membership)
            _aim()  # (a signal that came before the core was made counts from now)
        return effects


def _aim() -> None:
    if _TimedNode.silences is not None:
        _TimedNode.silences.at(_TimedNode.seats if _TimedNode.aimed else ())


def _release(signum: int, frame: object) -> None:
    # (Its next input, a beat a moment away, signs the ready or carries out what waits.)
    _Withholding.released = _Stopping.released = True


def _aim_now(signum: int, frame: object) -> None:
    _TimedNode.aimed = not _TimedNode.aimed
    _aim()


def main() -> int:
    cut = sys.argv.index("--")
    timeout, options = float(sys.argv[1]), sys.argv[2:cut]
    command = sys.argv[cut + 1 :]
    runtime_node.NODE_CONFIG = dataclasses.replace(runtime_node.NODE_CONFIG, phase_timeout=timeout)
    if "--withhold" in options or "--stop-at-drop" in options:
        _TimedNode.core = _Stopping if "--stop-at-drop" in options else _Withholding
        signal.signal(signal.SIGUSR1, _release)
        cli.node_cmd.PeerNode = _TimedNode  # type: ignore[misc]
    aims = [o.removeprefix("--aim=") for o in options if o.startswith("--aim=")]
    if aims:
        _TimedNode.aim = [name for name in aims[-1].split(",") if name]
        signal.signal(signal.SIGUSR2, _aim_now)
        cli.node_cmd.PeerNode = _TimedNode  # type: ignore[misc]
    from cli.main import main as nertz

    sys.executable = command[0]  # (what nertz starts: through PYTHON too)
    return nertz(command[3:])  # (past PYTHON -m cli)


if __name__ == "__main__":
    sys.exit(main())
