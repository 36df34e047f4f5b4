"""``python -m cli`` runs the ``nertz`` command."""

import sys

try:
    from cli.main import main

    status = main()
except KeyboardInterrupt:  # (a Ctrl-C as it starts, or between main's call and its own answer)
    from p2p_nertz.signals import interrupted_status, let_go_of_unread_streams

    let_go_of_unread_streams()  # (a full pipe nobody reads: the line goes nowhere, at once)
    if sys.stderr is not None:
        sys.stderr.write("nertz: interrupted\n")
    status = interrupted_status()  # (143 for a SIGTERM that came as main put its handler back)
from p2p_nertz.signals import exit_with

exit_with(status)  # (not sys.exit: under ``python -m`` a Ctrl-C answered could end it by SIGINT)
