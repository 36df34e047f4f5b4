"""The tamper suite of a shuffle game (docs/shuffle.md §7.3): real logs, one cheat each, named.

Each test takes the logs of a real shuffle game (real peer cores signing keys, stages, shares
and secrets on the simulator), makes one cheat of a class of §7.4 as its author would have
signed it (re-signed with the culprit's own key, every later event of its feed re-chained),
and checks that the audit names exactly that finding and seat, about the signed event that
proves it. A forfeit changes the scores, so every honest signed result then disagrees with the
audit's: those findings come on top, and only those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from p2p_nertz.audit import AuditReport, Finding, FindingKind
from p2p_nertz.deck.deal import member_at
from p2p_nertz.deck.elgamal import Cipher, Deck, reencrypt
from p2p_nertz.deck.group import base_mul, scalar_bytes
from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.shares import make_share
from p2p_nertz.protocol.bodies import Play, encode_body, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.spec import Deal
from tests.audit_helpers import Game, events_of, played, rewrite

K = FindingKind

#: The games: 2 players (no VSS), 3 players (VSS dealings). Seeds whose round leaves a deck
#: with positions never turned up (a stage can be tampered there without touching a share).
TWO = (2, 2)
THREE = (3, 11)


def _game(players: int, seed: int) -> Game:
    return played(players=players, seed=seed, deal=Deal.SHUFFLE)


def _errors(report: AuditReport, kind: FindingKind) -> list[Finding]:
    return [v for v in report.errors if v.kind is kind]


def _others(report: AuditReport, culprit: int, *kinds: FindingKind) -> list[str]:
    """The errors of other kinds than ``kinds``, the results' mismatch, the culprit's result
    refused (it forfeits: the game ended without it), and the honest members' events made on
    the version of the culprit's event that the test replaced in every log: their frontier
    names the one they received, so they are not judged on this one (``missing_event``,
    docs/audit.md *Damage and blame*)."""
    allowed = {*kinds, K.RESULT_MISMATCH, K.MISSING_EVENT}
    return [
        str(v)
        for v in report.errors
        if v.kind not in allowed and not (v.kind is K.REFUSED and v.seat == culprit)
    ]


def _only_the_culprit_accused(report: AuditReport, culprit: int) -> None:
    """No finding accuses another member than ``culprit``; the others' events made on the
    version the test replaced are named unjudged (``missing_event``)."""
    assert not [str(v) for v in report.errors if v.kind.accuses and v.seat != culprit]
    assert {v.seat for v in _errors(report, K.MISSING_EVENT)} - {culprit}


@pytest.mark.parametrize(("players", "seed"), [TWO, THREE])
def test_audit_shuffle_untouched_logs_are_valid(players: int, seed: int) -> None:
    report = _game(players, seed).audit()
    assert report.valid and report.finished, [str(v) for v in report.violations]


# -- a bad shuffle: the last stage of a deck, at places never turned up -----------------------
def _unturned(game: Game) -> tuple[int, list[int]]:
    """A deck with two positions or more never turned up in the round, and those positions."""
    peer = next(p for p in game.result.peers if p is not None)
    deck = peer.final.round.deck
    assert deck is not None
    for d in range(len(deck.members)):
        places = [p for p in range(deck.size) if (d, p) not in deck.turned_set]
        if len(places) >= 2:
            return d, places
    raise AssertionError("every deck was turned up to its last card or one")


def _substituted(ciphers: list[Cipher], a: int, b: int, joint: bytes) -> None:
    ciphers[a] = reencrypt(ciphers[b], 12345, joint)  # b's card twice, a's gone


def _swapped(ciphers: list[Cipher], a: int, b: int, joint: bytes) -> None:
    ciphers[a], ciphers[b] = ciphers[b], ciphers[a]  # a permutation not the secret's


def _rerandomised(ciphers: list[Cipher], a: int, b: int, joint: bytes) -> None:
    ciphers[a] = reencrypt(ciphers[a], 777, joint)  # the same card, randomness not the secret's


@pytest.mark.parametrize("tamper", [_substituted, _swapped, _rerandomised])
def test_audit_shuffle_a_stage_that_is_not_its_secrets_is_a_bad_shuffle(
    tamper: Callable[[list[Cipher], int, int, bytes], None],
) -> None:
    game = _game(*TWO)
    logs = game.copy()
    d, places = _unturned(game)
    n = game.spec.seats
    culprit = member_at(stage=n - 1, deck=d, members=n)
    stage = next(
        e
        for e in events_of(logs, culprit, game.spec, Kind.DECK_STAGE)
        if e.body[2] == d and e.body[3] == n - 1  # type: ignore[index]
    )
    peer = next(p for p in game.result.peers if p is not None)
    deck = peer.final.round.deck
    assert deck is not None
    ciphers = list(Deck.from_bytes(stage.body[4], deck.size).ciphers)  # type: ignore[index]
    tamper(ciphers, places[0], places[1], deck.joint)
    forged = b"".join(c1 + c2 for c1, c2 in ciphers)
    body = [*stage.body[:4], forged, *stage.body[5:]]  # type: ignore[index]
    rewrite(game, logs, culprit, stage.seq, lambda m: {"body": body})
    report = game.audit(logs)
    bad = _errors(report, K.BAD_SHUFFLE)
    assert [(v.seat, v.seq, v.event) for v in bad] == [(culprit, stage.seq, "deck_stage")]
    assert bad[0].expected is not None and f"deck {d} stage {n - 1}" in bad[0].expected
    assert not _others(report, culprit, K.BAD_SHUFFLE), _others(report, culprit, K.BAD_SHUFFLE)
    # The culprit forfeits, and the forfeit is traced. The others signed on the stage they
    # received (their frontier names it), not on this one the test put in every log: they
    # are not judged on it (never accused), and the audit says so.
    _only_the_culprit_accused(report, culprit)
    assert not _errors(report, K.UNTRACED_FORFEIT)


# -- a bad share: the proof fails, or a partial for a member still in --------------------------
def _wrong_point(entry: list[object], members: int) -> list[object]:
    return [entry[0], entry[1], entry[2], base_mul(3), entry[4], entry[5]]


def _partial_for_a_member_in(entry: list[object], members: int) -> list[object]:
    of = (int(entry[0]) + 1) % members  # type: ignore[call-overload]
    return [of, *entry[1:]]


@pytest.mark.parametrize("tamper", [_wrong_point, _partial_for_a_member_in])
def test_audit_shuffle_a_share_that_does_not_prove_is_a_bad_share(
    tamper: Callable[[list[object], int], list[object]],
) -> None:
    game = _game(*TWO)
    logs = game.copy()
    culprit = 1
    event = events_of(logs, culprit, game.spec, Kind.DECK_SHARES)[-1]
    frontier, number, entries = event.body  # type: ignore[misc]
    forged = [tamper(list(entries[0]), game.spec.seats), *entries[1:]]
    rewrite(game, logs, culprit, event.seq, lambda m: {"body": [frontier, number, forged]})
    report = game.audit(logs)
    bad = _errors(report, K.BAD_SHARE)
    assert [(v.seat, v.seq, v.event) for v in bad] == [(culprit, event.seq, "deck_shares")]
    assert report.errors[0] == bad[0]
    # Its shares of that event are refused with it: what it owed it never sent, and its
    # secret revealed afterwards proves it heard (withheld, the culprit's too).
    withheld = _errors(report, K.WITHHELD_SHARE)
    assert {v.seat for v in withheld} <= {culprit}


# -- a wrong secret ----------------------------------------------------------------------------
@pytest.mark.parametrize("culprit", [0, 1])
def test_audit_shuffle_a_secret_that_is_not_the_keys_is_a_wrong_secret(culprit: int) -> None:
    game = _game(*TWO)
    logs = game.copy()
    opened = events_of(logs, culprit, game.spec, Kind.DECK_OPEN)[0]
    frontier, number, secret, held = opened.body  # type: ignore[misc]
    other = scalar_bytes(int.from_bytes(secret, "little") ^ 1)
    rewrite(game, logs, culprit, opened.seq, lambda m: {"body": [frontier, number, other, held]})
    report = game.audit(logs)
    wrong = _errors(report, K.WRONG_SECRET)
    assert [(v.seat, v.seq, v.event) for v in wrong] == [(culprit, opened.seq, "deck_open")]
    assert not _others(report, culprit, K.WRONG_SECRET), _others(report, culprit, K.WRONG_SECRET)
    assert report.finished
    _only_the_culprit_accused(report, culprit)
    assert not _errors(report, K.UNTRACED_FORFEIT)


# -- a bad dealing: a box that is not the secret's ---------------------------------------------
def test_audit_shuffle_a_box_that_is_not_the_secrets_is_a_bad_dealing() -> None:
    game = _game(*THREE)
    logs = game.copy()
    culprit = 2
    key = events_of(logs, culprit, game.spec, Kind.DECK_KEY)[0]
    body = list(key.body)  # type: ignore[arg-type]
    boxes = list(body[7])
    boxes[0] = bytes(48)  # garbage to its first recipient (who could only complain)
    body[7] = boxes
    rewrite(game, logs, culprit, key.seq, lambda m: {"body": body})
    report = game.audit(logs)
    bad = _errors(report, K.BAD_DEALING)
    assert [(v.seat, v.seq, v.event) for v in bad] == [(culprit, key.seq, "deck_key")]
    assert not _others(report, culprit, K.BAD_DEALING), _others(report, culprit, K.BAD_DEALING)
    assert not _errors(report, K.UNTRACED_FORFEIT)


# -- a withheld share --------------------------------------------------------------------------
def test_audit_shuffle_a_secret_revealed_without_its_shares_is_a_withheld_share() -> None:
    """A share the feed owes (version 4: its own of a position the deal turned up, shuffle.md
    §10.14) left out of the culprit's ``deck_shares``, its card still opened by the moves that
    needed it carrying the share (as a share sent in a beat alone would be): the culprit
    revealed its secret without it, ``withheld_share`` on its ``deck_open``, nobody else
    named."""
    game = _game(*TWO)
    logs = game.copy()
    culprit = 0
    spec = game.spec
    peer = next(p for p in game.result.peers if p is not None)
    deck = peer.final.round.deck
    assert deck is not None and deck.final is not None
    (event,) = events_of(logs, culprit, spec, Kind.DECK_SHARES)  # (the deal's face-up shares)
    frontier, number, entries = event.body  # type: ignore[misc]
    _, d, p, *_ = entries[0]
    assert (d, p) in deck.face_up
    kept = list(entries[1:])
    rewrite(game, logs, culprit, event.seq, lambda m: {"body": [frontier, number, kept]})
    key = MemberKey(x=deck.secrets[culprit], context=deck.context)
    share = make_share(key, culprit, d, p, deck.final[d][p])
    report = game.audit(logs)
    # Each move the fold now refuses for want of that card carries the share instead, the
    # earliest first (once carried, the card is open for every later move).
    for _ in range(8):
        refused = [f for f in report.errors if f.kind in (K.ILLEGAL_MOVE, K.UNAVAILABLE_CARD)]
        if not refused:
            break
        first = min(refused, key=lambda f: (f.lamport or 0, f.seat or 0, f.seq or 0))
        assert first.seat is not None and first.seq is not None
        message = events_of(logs, first.seat, spec)[first.seq - 1]
        play = parse_body(message.kind, message.body, spec.seats)
        assert isinstance(play, Play)
        carried = encode_body(dataclasses.replace(play, opens=(*play.opens, share)))
        rewrite(game, logs, first.seat, first.seq, lambda m, body=carried: {"body": body})
        report = game.audit(logs)
    withheld = _errors(report, K.WITHHELD_SHARE)
    assert [(v.seat, v.event) for v in withheld] == [(culprit, "deck_open")]
    assert withheld[0].found == "1 missing"
    assert not _others(report, culprit, K.WITHHELD_SHARE), _others(report, culprit)
