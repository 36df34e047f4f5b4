"""The fast paths of the peer core decide exactly as the general code they stand in for.

Each fast path keeps an invariant or takes a shortcut that must never change a decision:
the early answer of ``Finality.bounds`` with a floor, the column maxima it reads instead of
walking every member's claims, the one-pass body check of the envelope, the beat body parser
that keeps a decoded array as it is, and the cheaper constructor of ``Message``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from builds import need_interpreted

from p2p_nertz.protocol import deadlines as deadlines_module
from p2p_nertz.protocol import envelope
from p2p_nertz.protocol.bodies import Beat, parse_body
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION, Kind, Message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, Partition, SimConfig, Simulation, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.network import Crash, Freeze


@pytest.fixture
def checked_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Check every call of ``Finality.bounds`` with a floor against the full computation."""
    full = Finality.bounds
    seen = {"calls": 0, "early": 0, "excluded": 0, "voted": 0}

    def bounds(
        self: Finality,
        excluded: dict[int, int],
        voted: dict[int, int],
        own_known: int,
        clock: int,
        *,
        floor: int | None = None,
        forks: dict[int, int] | None = None,
    ) -> int:
        # The column maxima are those of the claims of every member but us and the feed's
        # author (its own word is known's, docs/protocol.md §9.2).
        expected = [
            max(
                (row[q] for r, row in enumerate(self.claimed) if r not in (self.seat, q)), default=0
            )
            for q in range(self.n)
        ]
        assert self.claimed_most == expected
        exact = full(self, excluded, voted, own_known, clock, forks=forks)
        if floor is None:
            return exact
        answer = full(self, excluded, voted, own_known, clock, floor=floor, forks=forks)
        seen["calls"] += 1
        seen["excluded"] += bool(excluded)
        seen["voted"] += bool(voted)
        if exact <= floor:
            assert answer <= floor  # the only thing a caller with a floor asks
            seen["early"] += answer != exact
        else:
            assert answer == exact
        return answer

    need_interpreted(
        "wraps Finality.bounds to check it: a compiled class's methods are read-only",
        "p2p_nertz.protocol.finality",
    )
    monkeypatch.setattr(Finality, "bounds", bounds)
    yield seen


@pytest.mark.parametrize("seed", [0, 6])  # 6: a member equivocates, is voted out and dropped
def test_bounds_floor_answers_as_the_full_bounds(seed: int, checked_bounds: dict[str, int]) -> None:
    rng = Rng(seed)
    faults = Faults.random(rng, 4, horizon=15.0, cheats=True)
    result = run(SimConfig(players=4, seed=seed, faults=faults, max_time=400.0))
    assert result.violations == []
    assert checked_bounds["calls"] > 100
    assert checked_bounds["early"] > 0  # the shortcut was taken (and agreed)
    if faults.equivocations:
        assert checked_bounds["excluded"] > 0
        assert checked_bounds["voted"] > 0


BODIES: list[Any] = [
    None,
    7,
    (),
    (1, b"x", None, "s", True),
    ((1, 2), (b"a", b"b"), 3),
    (((1, 2), (b"a", b"")), 1, "8h>f1", "8h", ("2c",)),  # a claim's: three levels
    ((1, ("a", (2,))),),  # scalars and arrays mixed at every level
    ((((1,),),),),  # arrays four deep: past the levels looked at
    ((1, (2, (3, MappingProxyType({"a": 1})))),),  # a map three arrays deep
    ((1, (2, (3, 1.5))),),  # a float three arrays deep
    ((1, 2), ((3, [4]),)),  # a list at the third level
    ((1, (2, 3)),),
    (MappingProxyType({"a": 1}),),
    (MappingProxyType({"a": 1, b"b": 2}),),  # mixed key types
    ((1.5,),),  # a float
    (1, (2, [3])),  # a list is no decoded array
    MappingProxyType({"k": (1, 2)}),
]


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = (value,)
    return value


@pytest.mark.parametrize(
    "body", [*BODIES, _nested(envelope.MAX_BODY_DEPTH), _nested(envelope.MAX_BODY_DEPTH + 1)]
)
def test_body_check_decides_as_the_walk(body: Any) -> None:
    def outcome(check: Any) -> tuple[str, str] | None:
        try:
            check()
        except envelope._Rejected as rejected:
            return (rejected.reason.value, rejected.detail)
        return None

    walk = (
        None
        if type(body) in envelope._SCALARS
        else outcome(lambda: envelope._check_nested(body, 0))
    )
    assert outcome(lambda: envelope._check_body(body)) == walk


def _beat(held: Any, ids: Any) -> tuple[Any, ...]:
    return (0, None, held, ids)


def test_beat_body_keeps_a_sound_array_and_names_the_first_fault() -> None:
    held = (3, 0, 5)
    ids = (b"12345678", b"", b"abcdefgh")
    beat = parse_body(Kind.ACK, _beat(held, ids), 3)
    assert beat == Beat(0, None, held, ids)
    for bad, fault in [
        ((3, True, 5), "True"),  # a bool is no seq
        ((3, -1, 5), "-1"),
        ((3, 2**63, "x"), str(2**63)),  # the first fault is named
    ]:
        with pytest.raises(
            ValueError,
            match=f"a seq of what a beat holds must be an integer in 0..{2**63 - 1}, not {fault}",
        ):
            parse_body(Kind.BEAT, _beat(bad, ids), 3)
    with pytest.raises(ValueError, match="an id of what a beat holds is 8 bytes"):
        parse_body(Kind.BEAT, _beat(held, (b"12345678", b"x", b"abcdefgh")), 3)
    with pytest.raises(ValueError, match="an id of what a beat holds is 8 bytes"):
        parse_body(Kind.BEAT, _beat(held, (b"12345678", b"", "abcdefgh")), 3)
    with pytest.raises(ValueError, match="an id of what a beat holds is 8 bytes"):  # at a 0
        parse_body(Kind.BEAT, _beat(held, (b"12345678", b"12345678", b"abcdefgh")), 3)
    assert parse_body(Kind.BEAT, _beat((0, 0, 0), (b"", b"", b"")), 3).held == (0, 0, 0)


def test_message_factory_makes_what_the_constructor_makes() -> None:
    alice = Identity.generate(seed=bytes(32))
    wire = envelope.encode_message(
        alice, game_id=bytes(32), seq=1, prev=None, lamport=1, kind=Kind.JOIN, body=[[0]]
    )
    message = envelope._parse(wire)
    fields = [getattr(message, name) for name in Message.__slots__]
    again = Message(*fields)
    assert [getattr(again, name) for name in Message.__slots__] == fields
    assert repr(again) == repr(message) and again == message


def _payload(**changes: Any) -> bytes:
    alice = Identity.generate(seed=bytes(32))
    fields: dict[str, Any] = {
        "version": PROTOCOL_VERSION,
        "game_id": bytes(32),
        "author": alice.peer_id,
        "seq": 1,
        "prev": None,
        "lamport": 1,
        "kind": 1,
        "body": [[0]],
    }
    fields.update(changes)
    payload = msgpack.packb(list(fields.values()), use_bin_type=True)
    return bytes(msgpack.packb([payload, bytes(64)], use_bin_type=True))


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        ({"game_id": bytes(31), "seq": -1}, "game_id must be 32 bytes, got 31 bytes"),
        ({"author": bytes(32), "seq": -1}, "author is not a usable Ed25519 public key"),
        ({"seq": True, "lamport": -1}, "seq must be an int in [0, 2**63), got True"),
        ({"prev": b"x", "seq": 2, "lamport": -1}, "prev must be 32 bytes, got 1 bytes"),
        ({"lamport": 2**63}, f"lamport must be an int in [0, 2**63), got {2**63}"),
    ],
)
def test_payload_fields_name_their_first_fault(changes: dict[str, Any], detail: str) -> None:
    with pytest.raises(envelope.InvalidMessageError) as raised:
        envelope.decode_message(_payload(**changes))
    assert raised.value.reason is envelope.RejectReason.MALFORMED
    assert raised.value.detail == detail


#: Timers short enough for a short game to reach each of membership's (as tests/test_sim_blame)
_QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)
_TWO_ROUNDS = Rules(target=None, rounds=2)
_GAMES = {
    # seat 0 cut off for 14 s: suspected, then voted out for silence, by the others and it
    "partition": SimConfig(
        players=4,
        rules=_TWO_ROUNDS,
        seed=11,
        peer=_QUICK,
        faults=Faults(partitions=(Partition(5.0, 19.0, (frozenset({0}), frozenset({1, 2, 3}))),)),
    ),
    # seat 3 dies for good: suspected, voted out, dropped (its timers stop)
    "crash": SimConfig(
        players=4,
        rules=_TWO_ROUNDS,
        seed=11,
        peer=_QUICK,
        faults=Faults(crashes=(Crash(3, 3.0, restart_after=None),)),
    ),
    # a shuffle game's key withheld until its author restarts: the key phase's wait runs out
    # (tests/test_sim_shuffle_cheats.py's late key, at four players)
    "late key": SimConfig(
        players=4,
        seed=2,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=1),
        peer=_QUICK,
        faults=Faults(
            deck_cheats=(DeckCheat(3, DeckCheatKind.LATE_KEY),),
            freezes=(Freeze(0, 5.5, 2.5),),
            crashes=(Crash(3, 6.5, restart_after=1.0),),
        ),
        max_time=200.0,
    ),
}


def _checked_earliest(config: SimConfig) -> dict[str, int]:
    """Play ``config``, and after each step ask ``deadlines.earliest`` (what
    ``Author.next_deadline`` asks after each input) of every live peer's membership, final
    fold and phase start, bounded by its next beat (as there), by nothing, and at and around
    the least deadline; check each answer against the least of the rule's every deadline.
    Count which kind came first where one of membership's came before the beat. (Asked from
    outside, alike on both builds: a compiled author calls ``earliest`` directly.)"""
    seen = {"calls": 0, "silence": 0, "phase": 0}

    def check(sim: Simulation) -> bool:
        for peer in sim.peers:
            if peer is None:
                continue
            author = peer._author
            membership, final, since = author.membership, author.final, author.phase_since
            every = list(deadlines_module.deadlines(membership, final, since))
            beat = author.outbox.last_sent + peer.config.beat_interval
            least = min(every, default=math.inf)
            for before in (beat, math.inf, least, least + 0.001, least - 0.001):
                answer = deadlines_module.earliest(membership, final, since, before)
                assert answer == min([before, *every])
            seen["calls"] += 1
            if least < beat:
                timers = membership.timers
                blame = membership.blame_from(since)
                seen["phase"] += blame is not None and least == blame + timers.phase_timeout
                seen["silence"] += any(
                    least == heard + after
                    for heard in membership.heard
                    for after in (timers.suspect_after, timers.drop_after)
                )
        return False

    Simulation(config).run(check)
    return seen


@pytest.mark.parametrize(
    ("game", "first"), [("partition", "silence"), ("crash", "silence"), ("late key", "phase")]
)
def test_earliest_deadline_answers_as_the_least_of_every_deadline(game: str, first: str) -> None:
    checked_earliest = _checked_earliest(_GAMES[game])
    assert checked_earliest["calls"] > 1000
    # The timers the game is about came before every other deadline (and agreed) at times.
    assert checked_earliest[first] > 0
