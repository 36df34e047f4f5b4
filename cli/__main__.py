"""``python -m cli`` runs the ``nertz`` command."""

import sys

try:
    from cli.main import main

    status = main()
except KeyboardInterrupt:  # (a Ctrl-C as it starts, or between main's call and its own answer)
    if sys.stderr is not None:
        sys.stderr.write("nertz: interrupted\n")
    sys.exit(130)
sys.exit(status)
