"""Derivation of every random seed from one run seed and the run's secret, stable across processes (never hash())."""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: the secret of a run that has none: its hidden parameters follow from the public seed alone
PUBLIC = ""
#: characters a --secret may hold: it is typed on command lines and stored in run.json
_SECRET_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:+=/")
MAX_SECRET_LENGTH = 256


def new_run_seed() -> int:
    """A fresh random run seed, small enough to type back on a command line."""
    return secrets.randbelow(10**8)


def new_run_secret() -> str:
    """A fresh run secret: 128 random bits, which nobody can guess from the generator and the seed."""
    return secrets.token_hex(16)


def check_secret(value: object) -> str:
    """A --secret value, stripped; ValueError (one line) when it is not one."""
    text = "" if value is None else str(value).strip()
    if not text or len(text) > MAX_SECRET_LENGTH or not set(text) <= _SECRET_CHARS:
        raise ValueError(f"--secret takes 1 to {MAX_SECRET_LENGTH} letters, digits or -_.:+=/")
    return text


def secret_option(value: object) -> str:
    """A command's --secret: "none" (or nothing) is PUBLIC, the seed alone; anything else must be a secret."""
    text = "" if value is None else str(value).strip()
    return PUBLIC if text.lower() in ("", "none") else check_secret(text)


def derive_seed(base: int, *parts: object) -> int:
    """A 63-bit seed determined only by base and parts."""
    return int.from_bytes(hashlib.sha256(_seed_text(base, parts)).digest()[:8], "big") >> 1


def hidden_seed(base: int, secret: str, *parts: object) -> int:
    """The seed of a query's hidden parameters: from the seed alone without a secret (PUBLIC), else keyed by
    the secret (HMAC-SHA256), so that the public generator and seed do not reveal which fault, or where."""
    if secret == PUBLIC:
        return derive_seed(base, *parts)
    return int.from_bytes(hmac.new(secret.encode(), _seed_text(base, parts), hashlib.sha256).digest()[:8], "big") >> 1


def _seed_text(base: int, parts: tuple[object, ...]) -> bytes:
    """What both seeds hash: the base and the parts, joined by a separator no part of ours holds."""
    return "\x1f".join([str(base), *map(str, parts)]).encode()
