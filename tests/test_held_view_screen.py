"""A person's screen draws the held view (docs/shuffle.md §10.14): the tentative table with
the cards its share store opens face up, as the bot and ``LocalPlayer.move`` see it, while the
fold still holds them sealed. The real tracker and screen renderer, on a peer of a simulated
shuffle game taken at the moment its store opens a card its fold has not (a member's beat in,
its ``deck_shares`` event still behind the log's write)."""

from __future__ import annotations

import dataclasses

from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Card, Rules, Tableau
from p2p_nertz.rules.cards import sealed_position
from p2p_nertz.sim.network import Faults, SimConfig, Simulation
from p2p_nertz.ui import Tracker, render
from p2p_nertz.ui.view import card_text
from p2p_nertz.web.model import view_json

#: the log's write, slower than a hop and a bot's look
SYNC = 0.3


def _shown(tableau: Tableau) -> list[Card]:
    """The cards a tableau shows face up: its Nerts top, every work pile's, the waste's top."""
    return [*tableau.nerts[-1:], *(c for pile in tableau.work for c in pile), *tableau.waste[-1:]]


def _opened_by_store(peer: Peer) -> list[tuple[int, Card]]:
    """(seat, card) of each card ``peer``'s held view shows where its tentative table shows a
    sealed card."""
    view, table = peer.view, peer.tentative.table
    if view is None or table is None or view is table:
        return []
    out = []
    for seat, (held, folded) in enumerate(zip(view.tableaux, table.tableaux, strict=True)):
        for a, b in zip(_shown(held), _shown(folded), strict=True):
            if sealed_position(b) is not None and sealed_position(a) is None:
                out.append((seat, a))
    return out


def test_the_screen_draws_a_card_the_store_opens_face_up_while_the_fold_has_it_sealed() -> None:
    config = SimConfig(
        players=2,
        seed=12,
        deal=Deal.SHUFFLE,
        rules=Rules(target=None, rounds=1),
        faults=Faults(sync=SYNC),
    )
    sim = Simulation(config)

    def opened(s: Simulation) -> bool:
        peer = s.peers[0]
        return peer is not None and bool(_opened_by_store(peer))

    sim.run(until=opened)
    peer = sim.peers[0]
    assert peer is not None
    cards = _opened_by_store(peer)
    assert cards
    names = tuple(m.name for m in sim.spec.members)
    view = Tracker(names, seat=0).view(peer)
    assert view.table == peer.view != peer.tentative.table
    # The same screen drawn from the tentative table: the store's cards face down there.
    sealed = dataclasses.replace(view, table=peer.tentative.table)
    text, before = render(view).text(), render(sealed).text()
    # (The terminal draws our own tableau's cards; the others' in short, where they fit.)
    ours = [card for seat, card in cards if seat == 0]
    assert ours
    for card in ours:
        assert text.count(card_text(card)) > before.count(card_text(card))
    assert text.count("??") <= before.count("??") - len(ours)
    # The browser's table, built from the same view, shows every one face up.
    for seat, card in cards:
        drawn = view_json(view)["players"][seat]["tableau"]
        faces = [drawn["nerts"]["top"], *(c for pile in drawn["work"] for c in pile)]
        faces += drawn["waste"]["top"]
        assert any(f is not None and f["code"] == str(card) for f in faces)
