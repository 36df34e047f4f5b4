"""The browser table draws at most once per animation frame, and only the latest view.

Views can come faster than the screen shows them (eight players, bots at full speed); the
page keeps the latest and draws it at the next frame (``drawSoon`` in ``table.js``). The server
sends only its latest view, so the test hands the page several views within one frame itself:
a script given to chromium before the page loads keeps the page's own WebSocket, and the test
calls the page's message handler with views one after the other in one task (no frame can come
between them). A ``MutationObserver`` counts the drawings: every drawing sets the round line.
Nothing in the page is changed for the test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_peer_in_the_air import _network
from tests.test_web_race import Seat
from tests.web_helpers import ServedPage, browser_missing, open_browser, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

# Run before the page's own scripts: the page's WebSocket, and every message it received.
KEEP_SOCKET = """
const Real = window.WebSocket;
window.testSockets = [];
window.testReceived = [];
window.WebSocket = function (...args) {
  const socket = new Real(...args);
  socket.addEventListener("message", (ev) => window.testReceived.push(ev.data));
  window.testSockets.push(socket);
  return socket;
};
window.WebSocket.prototype = Real.prototype;
for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) window.WebSocket[k] = Real[k];
"""

# Count the drawings from now on: render() sets #round's text once per drawing.
COUNT_DRAWINGS = """
window.testDrawings = 0;
new MutationObserver((records) => { window.testDrawings += records.length; })
  .observe(document.querySelector("#round"), { childList: true });
"""

# Wait for two more animation frames (a drawing asked for in this frame has then been made).
AFTER_FRAMES = """
const done = arguments[arguments.length - 1];
requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() =>
  done([window.testDrawings, document.querySelector("#status").textContent]))));
"""


def _latest_view(driver: Any) -> dict[str, Any]:
    received = driver.execute_script("return window.testReceived")
    views = [json.loads(m) for m in received if json.loads(m).get("type") == "view"]
    assert views, received
    latest: dict[str, Any] = views[-1]
    return latest


def test_web_views_within_one_frame_are_drawn_once_the_latest(page: ServedPage) -> None:
    net, race = _network()
    seat = Seat(net, race.claimer, page)
    with open_browser() as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": KEEP_SOCKET})
        seat.draw()
        driver.get(page.url)
        wait_for(driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "deal")
        view = _latest_view(driver)
        assert view["command"] is None  # (the status line then shows the view's status)
        driver.execute_script(COUNT_DRAWINGS)
        # Nothing else is sent (the test publishes no view): one view alone is drawn once.
        driver.execute_script(
            "window.testSockets[0].onmessage({data: arguments[0]})",
            json.dumps({**view, "status": "alone"}),
        )
        assert driver.execute_async_script(AFTER_FRAMES) == [1, "alone"]
        # Three views in one task, so within one frame: one drawing, of the last one.
        texts = [json.dumps({**view, "status": f"view {i}"}) for i in (1, 2, 3)]
        driver.execute_script(
            "for (const t of arguments[0]) window.testSockets[0].onmessage({data: t})", texts
        )
        assert driver.execute_async_script(AFTER_FRAMES) == [2, "view 3"]
        stats = driver.execute_script("return window.nertzStats")
        assert stats["views"] >= 5  # every view was taken, though not every one was drawn
