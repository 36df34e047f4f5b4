"""``python -m cli`` runs the ``nertz`` command."""

import sys

from cli.main import main

sys.exit(main())
