"""The table in a browser, served by the player's own peer (issue 17).

The page is plain HTML, CSS and JavaScript (``static/``, package data: no build step, nothing
fetched from the internet); it draws the view the table controller gives and sends keys and
drops back; the peer decides everything. :mod:`~p2p_nertz.web.model` is the wire (pure),
:mod:`~p2p_nertz.web.server` the ASGI app and its hypercorn server on trio, and
:mod:`~p2p_nertz.web.table` runs a node's table with the page as its front end.
"""
