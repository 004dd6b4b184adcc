"""Warnings a request collects for its reply (`Warning: 299 - "..."` headers, which kubectl prints)."""

from __future__ import annotations

import contextvars

_collected: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("kube_warnings", default=None)


def begin() -> contextvars.Token:
    """Start collecting for the request this thread serves; end(token) stops it."""
    return _collected.set([])


def end(token: contextvars.Token) -> list[str]:
    warnings = _collected.get() or []
    _collected.reset(token)
    return warnings


def warn(text: str) -> None:
    """Add a warning to the current request's reply (nothing when no request collects: a Python caller's write)."""
    warnings = _collected.get()
    if warnings is not None and text not in warnings:
        warnings.append(text)


def header(text: str) -> str:
    """The Warning header value the real server sends (RFC 7234 warn-code 299, no agent, quoted text)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
