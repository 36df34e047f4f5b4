"""``python -m cli`` runs the ``nertz`` command."""

import sys

try:
    from cli.main import main
except KeyboardInterrupt:  # (a Ctrl-C as it starts: one line, as main's own)
    sys.stderr.write("nertz: interrupted\n")
    sys.exit(130)

sys.exit(main())
