"""``python -m cli`` runs the ``nertz`` command."""

import sys

try:
    from cli.main import main

    status = main()
except KeyboardInterrupt:  # (a Ctrl-C as it starts, or between main's call and its own answer)
    from p2p_nertz.signals import let_go_of_unread_streams

    let_go_of_unread_streams()  # (a full pipe nobody reads: the line goes nowhere, at once)
    if sys.stderr is not None:
        sys.stderr.write("nertz: interrupted\n")
    sys.exit(130)
sys.exit(status)
