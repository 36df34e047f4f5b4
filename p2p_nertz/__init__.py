"""p2p-nertz: serverless, peer-to-peer Nertz with signed, auditable game logs."""

from __future__ import annotations

__version__ = "0.1.0.dev0"
