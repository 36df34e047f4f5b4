"""A Ctrl-C while ``nertz`` makes its zmq sockets ends it, never hangs it (session 39).

pyzmq makes a socket, then adds it to its context's sockets; a KeyboardInterrupt between the
two (or between a socket's making and the line that keeps it) left a socket no close reached,
and the command's ``ctx.term()`` waited for it for ever as it ended: ``nertz watch`` given a
Ctrl-C some 20 ms into its start hung with an empty screen (the terminal tests' "at once"
case, once their program was forked: it then starts in milliseconds). And a Ctrl-C before the
ZAP handler's thread started made its close join a thread never started: a traceback. Real
signals in this process, raised at the moment the test picks (``signal.raise_signal`` runs
Python's handler before it returns); real zmq contexts; a context's end waited for within a
hang's bound.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator

import pytest
import zmq

from p2p_nertz.runtime.gate import Gate
from p2p_nertz.runtime.zmqtrio import new_socket
from p2p_nertz.signals import held
from p2p_nertz.testing.said import READY_BOUND


@pytest.fixture(autouse=True)
def _python_s_sigint() -> Iterator[None]:
    """SIGINT at Python's own handler (KeyboardInterrupt), whatever the runner left."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _ends(ctx: zmq.Context[zmq.Socket[bytes]]) -> bool:
    """Whether ``ctx.destroy(linger=0)`` returns within the hang's bound."""
    ending = threading.Thread(target=ctx.destroy, kwargs={"linger": 0}, daemon=True)
    ending.start()
    ending.join(READY_BOUND)
    return not ending.is_alive()


def _interrupting(call: Callable[..., object]) -> Callable[..., object]:
    """``call``, a Ctrl-C raised just before it."""

    def interrupted(*args: object, **kw: object) -> object:
        signal.raise_signal(signal.SIGINT)
        return call(*args, **kw)

    return interrupted


def test_held_signals_are_raised_as_the_body_ends_and_the_handlers_restored() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), held():
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        done.append("the body ran to its end")
    assert done == ["the body ran to its end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_held_leaves_an_ignored_signal_ignored() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with held():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # (destroy closes what it finds)
def test_a_ctrl_c_while_pyzmq_makes_a_socket_leaves_none_its_context_waits_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    # (the Ctrl-C as the socket is made, before pyzmq adds it to the context's sockets)
    monkeypatch.setattr(ctx, "_add_socket", _interrupting(ctx._add_socket))
    try:
        new_socket(ctx, zmq.PAIR)
    except KeyboardInterrupt:
        ended = _ends(ctx)  # (as the command's cleanup: the interrupted frames still held)
    else:
        pytest.fail("no KeyboardInterrupt")
    assert ended


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # (destroy closes what it finds)
def test_a_ctrl_c_before_the_zap_thread_starts_leaves_a_gate_that_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(Its sockets made and known to the context: the context's destroy closes them.)"""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    gate = Gate(ctx, ())
    monkeypatch.setattr(threading.Thread, "start", _interrupting(threading.Thread.start))
    with pytest.raises(KeyboardInterrupt):
        gate.start()
    monkeypatch.undo()
    gate.close()  # (no thread to join: it never started)
    assert _ends(ctx)
