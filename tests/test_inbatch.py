"""The ROUTERs' small read batch (runtime/inbatch.py): set where libzmq has its drafts, said by
``nertz --version`` either way. (What it protects against: tests/test_stranger_abort.py's
members' cases.)"""

from __future__ import annotations

import pytest
import zmq

from cli.main import main
from p2p_nertz.build import describe
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.inbatch import IN_BATCH, set_small_batch, small_batch_available
from p2p_nertz.runtime.mesh import Mesh


def test_the_mesh_router_reads_in_small_batches_exactly_where_libzmq_takes_the_option() -> None:
    me, other = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)
    mesh = Mesh(me, [me.peer_id, other.peer_id])
    try:
        mesh.bind()
        assert mesh.router is not None
        router = mesh.router._sock
        if small_batch_available():
            assert router.get(zmq.IN_BATCH_SIZE) == IN_BATCH
        else:  # (the detection agrees with libzmq: it refuses the option)
            with pytest.raises(zmq.ZMQError):
                router.set(zmq.IN_BATCH_SIZE, IN_BATCH)
            assert set_small_batch(router) is False
    finally:
        mesh.close()


def test_version_says_whether_another_member_can_abort_this_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("nertz ")
    assert first.endswith(f"(core {describe()})")  # (p2p_nertz/build.py: which build runs)
    assert second.startswith(f"libzmq {zmq.zmq_version()} (pyzmq {zmq.pyzmq_version()})")
    assert ("cannot abort" in second) is small_batch_available()
    assert ("can abort this process" in second) is not small_batch_available()
