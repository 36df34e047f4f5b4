"""Test infrastructure that tests and benchmark scripts share (not used by the game itself)."""
