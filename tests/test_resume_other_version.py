"""A log written in another protocol version is refused by ``nertz resume``, and left as it was.

Protocol version 4 (docs/shuffle.md §10.14) changed a shuffle game's wire: a peer speaks only
its game's version, so the events of a game begun in version 3 are all refused by the peer that
reads its own log back. Taken back with those records skipped, it played on from an empty table
and signed over its own feed (seen by hand in session 20: the resumed node dropped its opponent
and appended to the log). A restore now refuses the log before anything is done. Since session
39 (versions 5 and 6: a vote on proof carries its proof) the audit and the replay refuse a log
of an older version too, with one line naming it (docs/log-format.md §9); since session 41
(versions 7 and 8: a ``drop`` of up to 12,288 bytes) those of sessions 39 and 40 among them,
and since session 42 (versions 9 and 10: a vote on proof names what its author took) those of
session 41.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
from cli_helpers import cli_run

from cli.keyfile import load_key
from p2p_nertz.errors import LogFormatError
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.logfile.store import create_log, read_log
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import (
    PROTOCOL_VERSION,
    SHARES_VERSION,
    SIGNATURE_DOMAIN,
    decode_message,
)
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

NERTZ = [sys.executable, "-m", "cli"]


def _resign(wire: bytes, identity: Identity, version: int, ids: dict[bytes, bytes]) -> bytes:
    """``wire``'s event signed again by its author in ``version`` (one of an older build, which
    ``encode_message`` no longer makes), its chain kept (``ids``: each re-signed event's old
    id to its new one)."""
    m = decode_message(wire)
    fields = msgpack.unpackb(m.payload, raw=False)
    fields[0] = version
    fields[4] = None if m.prev is None else ids[m.prev]
    payload = msgpack.packb(fields)
    signature = identity.sign(SIGNATURE_DOMAIN + payload)
    ids[m.id] = hashlib.sha256(payload + signature).digest()
    return msgpack.packb([payload, signature])


@pytest.mark.parametrize("deal", [Deal.SHUFFLE, Deal.COMMIT])
def test_restore_refuses_a_log_of_another_version(deal: Deal) -> None:
    identities = [Identity.generate(derive_seed("other-version", i)) for i in range(2)]
    spec = GameSpec.create(
        [(ident.peer_id, f"p{i}") for i, ident in enumerate(identities)],
        Rules(target=10),
        b"other-version",
        deal=deal,
    )
    me = next(i for i in identities if spec.seat_of(i.peer_id) == 0)
    wires = [e.data for e in Peer(me, spec, 0.0).start(0.0) if isinstance(e, Send)]
    assert wires and decode_message(wires[0]).version == spec.wire_version
    # The same game's versions of session 41, of sessions 39-40 and before session 39, and the
    # other deal's version of today.
    others = (8, 6, 4, PROTOCOL_VERSION) if deal is Deal.SHUFFLE else (7, 5, 2, SHARES_VERSION)
    for other in others:
        old = [_resign(w, me, other, {}) for w in wires[:1]]
        with pytest.raises(LogFormatError, match=rf"another protocol version \(version {other}"):
            Peer.restore(me, spec, old, 1.0)
    # Its own version's log is taken back as ever.
    _, effects = Peer.restore(me, spec, wires[:1], 1.0)
    assert any(isinstance(e, Send) and e.data == wires[0] for e in effects)  # (re-sent)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_nertz_resume_or_audit_of_a_version_4_shuffle_log_says_so_and_changes_nothing(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "NERTZ_HOME": str(tmp_path / "home")}
    game = tmp_path / "game"
    done = cli_run(
        [*NERTZ, "demo", "--bots", "2", "--deal", "shuffle", "--seed", "20", "--dir", str(game)],
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    keys = {}
    for path in (tmp_path / "home" / "keys").glob("*.key"):
        ident = load_key(path)
        keys[ident.peer_id] = ident
    log = game / "p0.log"
    with read_log(log, strict=True) as reader:
        records = list(reader)
        header = reader.header
    assert header is not None
    # The same game as a version-4 build of nertz (session 38) would have logged it: every
    # event signed again by its author in version 4, every note as it was.
    ids: dict[bytes, bytes] = {}
    old = []
    for record in records:
        if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
            author = decode_message(record.data).author
            wire = _resign(record.data, keys[author], 4, ids)
            sent = record.kind is RecordKind.SENT_EVENT
            old.append(LogRecord.sent_event(wire) if sent else LogRecord.received_event(wire))
        else:
            old.append(record)
    log.unlink()
    with create_log(log, header) as writer:
        writer.append_many(old)
    before = log.read_bytes()
    audit = cli_run(
        [*NERTZ, "audit", str(log)], env=env, capture_output=True, text=True, check=False
    )
    assert audit.returncode == 2
    assert "protocol version 4" in audit.stderr and "reads versions 9 and 10" in audit.stderr
    assert len(audit.stderr.strip().splitlines()) == 1
    assert "Traceback" not in audit.stderr + audit.stdout
    resumed = cli_run(
        [*NERTZ, "resume", "--bot", "greedy", str(log)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert resumed.returncode == 2
    assert "another protocol version (version 4" in resumed.stderr
    assert "Traceback" not in resumed.stderr + resumed.stdout
    assert log.read_bytes() == before  # nothing signed, nothing written
