"""Derivation of every random seed from one run seed, stable across processes (never hash())."""

from __future__ import annotations

import hashlib
import secrets


def new_run_seed() -> int:
    """A fresh random run seed, small enough to type back on a command line."""
    return secrets.randbelow(10**8)


def derive_seed(base: int, *parts: object) -> int:
    """A 63-bit seed determined only by base and parts."""
    text = "\x1f".join([str(base), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
