"""The browser tests' own helpers against a page that draws its elements anew all the time.

A live table redraws a player's tableau at any change of it; a test that found an element,
then acted on it, failed when a redraw came between the two (session 34's last rehearsal: a
stale element, a tap never sent). Here a page replaces its button at every animation frame and
every 0 ms timer, faster than a loaded table ever does: the helpers still press it exactly once
and measure where it is.
"""

from __future__ import annotations

import pytest

from tests.web_helpers import browser_missing, click, open_browser, point, texts, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

_PAGE = """data:text/html,<body style="margin:0"><div id="box"></div><script>
window.clicks = 0; window.redraws = 0;
function draw() {
  const b = document.createElement('button');
  b.id = 'b'; b.textContent = 'press';
  b.style = 'position:absolute;left:40px;top:30px;width:100px;height:20px';
  document.getElementById('box').replaceChildren(b);
  window.redraws += 1;
}
// (Counted as the table counts a click: where the button went down, kept then.)
document.addEventListener('pointerdown', (e) => { if (e.target.id === 'b') window.clicks += 1; });
draw(); setInterval(draw, 0);
(function frame() { draw(); requestAnimationFrame(frame); })();
</script></body>"""


def test_web_helpers_act_once_on_an_element_the_page_keeps_drawing_anew() -> None:
    from selenium.common.exceptions import StaleElementReferenceException

    with open_browser(400, 300) as driver:
        driver.get(_PAGE)
        wait_for(driver, lambda d: d.execute_script("return window.redraws > 100"), "redraws")
        # The way that failed: an element found, then used, goes stale under such a page.
        stale = 0
        for _ in range(50):
            found = driver.find_element("css selector", "#b")
            try:
                found.rect  # noqa: B018
            except StaleElementReferenceException:
                stale += 1
        assert stale > 0, "the page did not draw its button anew between two commands"
        for _ in range(5):
            click(driver, "#b")
        assert driver.execute_script("return window.clicks") == 5
        assert point(driver, "#b") == (90, 40)
        assert point(driver, "#b", edge=True) == (90, 36)
        assert texts(driver, "#b") == ["press"]
