"""Command-line entry points and the terminal UI of p2p-nertz (no game logic here)."""
