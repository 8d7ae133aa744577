"""Helpers every layer may use: the name registry, atomic files, paths, locks, lazy imports, deterministic math."""
