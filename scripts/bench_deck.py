"""Benchmark of the dealerless shuffle (issue 19): the deal, a turn-up, the check after a round.

Prints figures, asserts nothing. Every figure is a median over repetitions of the process's
CPU time (``time.process_time``), printed beside a reference measured in the same run,
interleaved with it (the machine is shared: absolute times move with the load, ratios much
less):

* **reference**: one bare ``crypto_scalarmult_ed25519_noclamp`` (libsodium, called through
  ``nacl.bindings`` as the deck layer does), and a *52-card reference*: 52 of them, the floor
  of touching every card of a deck once with a variable-base multiplication.
* **deal** at 2, 4 and 8 players: one member's compute per stage (receive a deck: decode and
  check its 104 points, except at stage 0 where the deck is the public initial one, computed
  locally; shuffle it: 52 re-encryptions; encode it), and per member for the key
  phase (its key, proof and VSS dealing; checking the others' keys and opening its shares).
  Members work in parallel (each on its own machine), so the deal's compute on the critical
  path is the key phase plus N stages; the network adds one hop per stage, plus the key
  exchange, plus the shares of the face-up cards: ``N + 2`` one-way hops before play.
  Target (issue 19): the compute under 100 ms at 4 players. Beside it, the **floor**: the
  libsodium operations a member's N stages must make, each timed alone in the same run
  (per card: ``r·X``, ``r·G``, one or two additions, and from stage 1 the check of two points
  received), and a **peer's** figure: every peer checks the points of every stage it
  receives, ``N − 1`` of them a stage, before its own comes due (docs/shuffle.md §9).
* **the stage against its slow twin**: the same stage with ``r·X`` by libsodium's checked
  multiplication, one re-encryption at a time (session 15's code path), alternated with it.
* **turn-up**: what one peer spends to turn one card up: its own share (with proof), checking
  the N − 1 others' proofs, combining; and a dropped member's share rebuilt from ``t``
  partial shares.
* **after the round**: re-running every stage of a 4- and an 8-player deal and checking 52
  shares a deck and member.

    .venv/bin/python scripts/bench_deck.py [--reps 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nacl import bindings as sodium  # noqa: E402

from p2p_nertz.deck.check import check_keys, check_shares, check_stages  # noqa: E402
from p2p_nertz.deck.deal import deck_at, run_deal  # noqa: E402
from p2p_nertz.deck.elgamal import (  # noqa: E402
    Cipher,
    Deck,
    _decode,
    initial_deck,
    reencrypt,
    shuffle_stage,
    stage_plan,
)
from p2p_nertz.deck.group import (  # noqa: E402
    BASE,
    _is_point,
    add,
    base_mul,
    hash_scalar,
    mul,
    scalar_bytes,
    sub,
)
from p2p_nertz.deck.keys import MemberKey, joint_key, round_context, verify_member_key  # noqa: E402
from p2p_nertz.deck.ladder import multiples, valid_points  # noqa: E402
from p2p_nertz.deck.proofs import PROVEN, prove_equal, verify_equal  # noqa: E402
from p2p_nertz.deck.shares import (  # noqa: E402
    Share,
    make_share,
    open_card,
    share_context,
    verify_share,
)
from p2p_nertz.deck.vss import (  # noqa: E402
    _combined,
    _share_key,
    combine_partials,
    deal_shares,
    share_key,
    threshold,
)
from p2p_nertz.rng import derive_seed  # noqa: E402
from p2p_nertz.rules.cards import new_deck  # noqa: E402
from tests.deck_helpers import VssTable  # noqa: E402

CONTEXT = round_context(derive_seed("bench", "game"), 1)


def _cold() -> None:
    """Forget the answers the deck layer remembers (a share's proof, a point's check, a stage:
    pure, kept because the folds and the audit check one message several times): every figure
    here is the first check of a message, as on its arrival. Without this the turn-up's check
    and the stages re-run after the round were cache hits (session 15)."""
    verify_equal.cache_clear()
    prove_equal.cache_clear()  # (remembered since session 40: a share made again)
    PROVEN.clear()  # (a statement proved here verifies unmultiplied since session 41)
    _is_point.cache_clear()
    _decode.cache_clear()
    shuffle_stage.cache_clear()
    _share_key.cache_clear()
    _combined.cache_clear()


def _time(fn: Callable[[], object], number: int = 1) -> float:
    started = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - started) / number


class Reference:
    """The bare multiplication, measured between the figures it is the reference of."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._n = scalar_bytes(int.from_bytes(derive_seed("n"), "little"))
        self._p = sodium.crypto_scalarmult_ed25519_base_noclamp(self._n)

    def sample(self) -> None:
        self.samples.append(
            _time(lambda: sodium.crypto_scalarmult_ed25519_noclamp(self._n, self._p), 200)
        )

    @property
    def mul(self) -> float:
        return statistics.median(self.samples)


def _keys(n: int, rep: int) -> list[MemberKey]:
    return [MemberKey.from_seed(derive_seed("bench", rep, i), CONTEXT) for i in range(n)]


def _key_phase(keys: list[MemberKey], me: int) -> float:
    """One member's compute for the key phase: its message, and everyone else's checked."""
    n = len(keys)
    # The others' messages, made outside the timing (each makes its own).
    vss = VssTable(keys) if threshold(n) is not None else None
    proofs = {i: keys[i].proof(i) for i in range(n) if i != me}
    started = time.process_time()
    keys[me].proof(me)
    if vss is not None:
        deal_shares(keys[me], me, vss.publics)
    elapsed = time.process_time() - started
    started = time.process_time()
    for i, their_proof in proofs.items():
        verify_member_key(keys[i].public, their_proof, CONTEXT, i)
    if vss is not None:
        vss.held_by(me)  # each other member's box to me opened, its share checked
    joint_key(k.public for k in keys)
    return elapsed + time.process_time() - started


def _slow_stage(secret: int, d: int, source: Deck, joint: bytes) -> Deck:
    """The stage as session 15 made it: ``r·X`` by the checked multiplication, per card."""
    plan = stage_plan(secret, CONTEXT, d, len(source))
    return Deck(
        tuple(reencrypt(source[p], r, joint) for p, r in zip(plan.perm, plan.rand, strict=True))
    )


def bench_deal(n: int, reps: int, ref: Reference) -> dict[str, float]:
    stage_times: list[float] = []
    check_times: list[float] = []
    slow_ratios: list[float] = []
    key_times: list[float] = []
    for rep in range(reps):
        ref.sample()
        keys = _keys(n, rep)
        joint = joint_key(k.public for k in keys)
        decks = [initial_deck(new_deck(), joint) for _ in range(n)]
        key_times.append(_key_phase(keys, rep % n))
        for s in range(n):
            out: list[Deck] = list(decks)
            for member, key in enumerate(keys):
                d = deck_at(stage=s, member=member, members=n)
                wire = decks[d].to_bytes()
                _cold()
                if s == 0:
                    # The joint key's set-up for the ladder (once a round: the first stage).
                    multiples.cache_clear()
                started = time.process_time()
                # Stage 0 works on the public initial deck, computed here: nothing to check.
                received = Deck.from_bytes(wire, 52) if s else decks[d]
                checked = time.process_time()
                out[d] = shuffle_stage(key.x, CONTEXT, d, received, joint)
                out[d].to_bytes()
                stage_times.append(time.process_time() - started)
                if s:
                    check_times.append(checked - started)
                # The slow twin on the same input, alternated with the fast stage.
                fast = time.process_time() - checked
                started = time.process_time()
                slow = _slow_stage(key.x, d, received, joint)
                slow.to_bytes()
                slow_ratios.append(fast / (time.process_time() - started))
                assert slow == out[d]
            decks = out
        ref.sample()
    stage = statistics.median(stage_times)
    key = statistics.median(key_times)
    check = statistics.median(check_times) if check_times else 0.0
    # Per stage of the deal: the median over the members (they work in parallel).
    per_stage = [statistics.median(stage_times[k : k + n]) for k in range(0, len(stage_times), n)]
    deal = key * reps + sum(per_stage)
    return {
        "stage": stage,
        "key": key,
        "deal": deal / reps,
        # A peer checks every stage it receives, (N − 1)² more than its inputs.
        "peer": deal / reps + (n - 1) ** 2 * check,
        "slow": statistics.median(slow_ratios),
    }


class Units:
    """The libsodium operations of a stage, each timed alone (per call, CPU), for the floor."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    def sample(self) -> None:
        keys = _keys(4, 99)
        joint = joint_key(k.public for k in keys)
        rand = stage_plan(keys[0].x, CONTEXT, 0, 52).rand
        points = [mul(r, joint) for r in rand]
        lib = multiples(joint)
        figures = {
            "check": _time(lambda: valid_points(points)) / 52,
            "libsodium check": _time(
                lambda: [sodium.crypto_core_ed25519_is_valid_point(p) for p in points]
            )
            / 52,
            "add": _time(lambda: [add(p, joint) for p in points]) / 52,
            "base": _time(lambda: [base_mul(r) for r in rand]) / 52,
            "ladder": _time(lambda: lib.of(rand)) / 52,
        }
        for name, value in figures.items():
            self.samples.setdefault(name, []).append(value)

    def __getitem__(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def floor(self, n: int) -> float:
        """A member's N stages, as libsodium operations only: stage 0 (C1 = G: one addition,
        no check), then N − 1 stages of two additions and two points checked a card."""
        card0 = self["ladder"] + self["base"] + self["add"]
        card = self["ladder"] + self["base"] + 2 * self["add"] + 2 * self["check"]
        return 52 * (card0 + (n - 1) * card)


def _separate_checks(shares: list[Share], keys: list[MemberKey], cipher: Cipher) -> None:
    _cold()
    for share, key in zip(shares, keys, strict=True):
        verify_share(share, key.public, cipher, CONTEXT)


def _combined_check(shares: list[Share], keys: list[MemberKey], cipher: Cipher) -> float:
    """The ``N − 1`` shares of one position checked at once, as a proof in ``(A, B, s)`` form
    would let a peer (ours are ``(c, s)``: the challenge hashes ``A`` and ``B``, so a check
    must compute them, and nothing is left to batch): random ``z_j`` and

        (Σ z_j·s_j)·G = Σ z_j·A_j + Σ (z_j·c_j)·X_j,   (Σ z_j·s_j)·P = Σ z_j·B_j + Σ (z_j·c_j)·D_j

    with the challenges hashed from the commitments. libsodium has no multi-scalar
    multiplication, so each term is one: ``4(N − 1) + 2`` of them, where the separate checks
    make ``3(N − 1)`` and ``N − 1`` fixed-base ones. The commitments are recomputed outside
    the timing (the wire would carry them); the CPU time of the check is returned."""
    point = cipher[0]
    rows = []
    for share, key in zip(shares, keys, strict=True):
        c, s = share.proof
        a = sub(base_mul(s), mul(c, key.public))
        b = sub(mul(s, point), mul(c, share.point))
        rows.append((share, key.public, c, s, a, b))
    _cold()
    started = time.process_time()
    total_s = 0
    left_g = left_p = None
    for share, key, c, s, a, b in rows:
        ctx = share_context(CONTEXT, share.seat, share.of_seat, share.deck, share.position)
        assert hash_scalar("equal-proof", ctx, BASE, key, point, share.point, a, b) == c
        z = int.from_bytes(os.urandom(16), "little") | 1
        total_s += z * s
        g_term = add(mul(z, a), mul(z * c, key))
        p_term = add(mul(z, b), mul(z * c, share.point))
        left_g = g_term if left_g is None else add(left_g, g_term)
        left_p = p_term if left_p is None else add(left_p, p_term)
    assert base_mul(total_s) == left_g and mul(total_s, point) == left_p
    return time.process_time() - started


def bench_turn_up(n: int, reps: int, ref: Reference) -> dict[str, float]:
    keys = _keys(n, 0)
    transcript = run_deal(keys, [new_deck()] * n)
    cipher = transcript.final[0][10]
    shares = [make_share(k, s, 0, 10, cipher) for s, k in enumerate(keys)]
    make, check, combine = [], [], []
    separate, combined = [], []
    for _ in range(reps):
        ref.sample()
        make.append(_time(lambda: (_cold(), make_share(keys[0], 0, 0, 10, cipher)), 20))
        _cold()
        check.append(
            _time(lambda: (_cold(), verify_share(shares[1], keys[1].public, cipher, CONTEXT)), 20)
        )
        combine.append(_time(lambda: open_card(cipher, [s.point for s in shares]), 20))
        separate.append(_time(lambda: _separate_checks(shares[1:], keys[1:], cipher), 5))
        combined.append(
            statistics.median(_combined_check(shares[1:], keys[1:], cipher) for _ in range(5))
        )
    figures = {
        "make": statistics.median(make),
        "check": statistics.median(check),
        "combine": statistics.median(combine),
        "separate": statistics.median(separate),
        "combined": statistics.median(combined),
    }
    figures["peer"] = figures["make"] + (n - 1) * figures["check"] + figures["combine"]
    t = threshold(n)
    if t is not None:
        dropped = n - 1
        vss = VssTable(keys, dealers=[dropped])
        dealing, held = vss.dealings[dropped], vss.held_of(dropped, range(t))

        def partial(j: int) -> Share:
            ctx = share_context(CONTEXT, j, dropped, 0, 10)
            point, proof = prove_equal(held[j], cipher[0], ctx)
            return Share(j, dropped, 0, 10, point, proof)

        partials = [partial(j) for j in range(t)]

        def stand_in() -> bytes:
            _cold()
            for share in partials:
                key = share_key(keys[dropped].public, dealing.commitments, share.seat)
                verify_share(share, key, cipher, CONTEXT)
            return combine_partials({s.seat: s.point for s in partials})

        figures["stand_in"] = _time(stand_in, 5)
        assert stand_in() == mul(keys[dropped].x, cipher[0])
    return figures


def bench_after_round(n: int, reps: int, ref: Reference) -> float:
    """The checks after a round of ``n`` players: keys, every stage re-run, 52 shares a deck
    and member (each position once)."""
    keys = _keys(n, 0)
    transcript = run_deal(keys, [new_deck()] * n)
    secrets = {i: k.x for i, k in enumerate(keys)}
    shares = [
        make_share(k, s, d, p, transcript.final[d][p])
        for d in range(n)
        for p in range(52)
        for s, k in enumerate(keys)
    ]
    finals = [d.ciphers for d in transcript.final]
    times = []
    for _ in range(reps):
        ref.sample()
        _cold()
        started = time.process_time()
        assert not check_keys([k.public for k in keys], secrets)
        assert not check_stages(transcript, [new_deck()] * n, secrets, CONTEXT)
        assert not check_shares(shares, finals, secrets)
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    ref = Reference()
    units = Units()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    deals = {}
    for n in (2, 4, 8):
        units.sample()
        deals[n] = bench_deal(n, args.reps, ref)
    turns = {n: bench_turn_up(n, args.reps, ref) for n in (2, 4, 8)}
    after = {n: bench_after_round(n, max(1, args.reps // 2), ref) for n in (4, 8)}
    units.sample()
    m = ref.mul
    card52 = 52 * m
    print(
        f"reference: one scalar multiplication {m * 1e6:.0f} µs; 52 of them {card52 * 1e3:.2f} ms"
        " (CPU time)"
    )
    print(
        "a stage's operations, each alone: "
        + ", ".join(f"{k} {units[k] * 1e6:.0f} µs ({units[k] / m:.2f}×)" for k in units.samples)
    )
    print("\ndeal (one member's compute; members work in parallel)")
    print("  (hops: one-way network hops before play: the keys, N stages, the face-up shares;")
    print("   floor: the libsodium operations of the N stages alone; peer: every stage received")
    print("   checked, N − 1 a stage; slow: a stage's shuffle against session 15's, same input)")
    print(
        " players  stage ms  ×52-ref  key phase ms  deal compute ms  ×52-ref  floor ms  peer ms"
        "  slow  hops  target"
    )
    for n, f in deals.items():
        target = "" if n != 4 else ("< 100 ms: met" if f["deal"] < 0.1 else "< 100 ms: NOT met")
        print(
            f" {n:>7}  {f['stage'] * 1e3:8.1f}  {f['stage'] / card52:7.2f}  {f['key'] * 1e3:12.1f}"
            f"  {f['deal'] * 1e3:15.1f}  {f['deal'] / card52:7.2f}  {units.floor(n) * 1e3:8.1f}"
            f"  {f['peer'] * 1e3:7.1f}  {f['slow']:4.2f}  {n + 2:>4}  {target}"
        )
    print("\nturn-up of one card (µs, and in scalar multiplications)")
    print(" players  make share  check one  combine  one peer's total  stand-in for a dropped")
    for n, f in turns.items():
        stand = (
            f"{f['stand_in'] * 1e6:8.0f} ({f['stand_in'] / m:4.1f}×)" if "stand_in" in f else "-"
        )
        print(
            f" {n:>7}  {f['make'] * 1e6:6.0f} ({f['make'] / m:3.1f}×)"
            f"  {f['check'] * 1e6:5.0f} ({f['check'] / m:3.1f}×)"
            f"  {f['combine'] * 1e6:5.0f}  {f['peer'] * 1e6:8.0f} ({f['peer'] / m:4.1f}×)"
            f"      {stand}"
        )
    print(
        "\nthe N − 1 others' shares of one position: checked one by one, and at once by a random"
        "\nlinear combination (a proof in (A, B, s) form; no multi-scalar multiplication in"
        "\nlibsodium: 4(N − 1) + 2 multiplications against 3(N − 1) and N − 1 fixed-base)"
    )
    print(" players  separate µs  combined µs  combined/separate")
    for n, f in turns.items():
        print(
            f" {n:>7}  {f['separate'] * 1e6:11.0f}  {f['combined'] * 1e6:11.0f}"
            f"  {f['combined'] / f['separate']:17.2f}"
        )
    print("\nafter the round (every stage re-run, 52 shares a deck and member checked)")
    for n, t in after.items():
        print(
            f" {n} players: {n * n} stages, {52 * n * n} shares: {t * 1e3:.0f} ms "
            f"= {t / card52:.1f}× the 52-card reference"
        )


if __name__ == "__main__":
    main()
