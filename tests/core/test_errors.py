"""An infrastructure message names where an unexpected error came from, so a rare failure can be traced."""

from __future__ import annotations

from pytest_netarena.core.errors import raised_at


def _build() -> None:
    [][0]


def test_raised_at_names_the_innermost_frame() -> None:
    try:
        _build()
    except IndexError as error:
        where = raised_at(error)
    assert where == f"test_errors.py:{_build.__code__.co_firstlineno + 1} in _build"


def test_raised_at_an_error_never_raised() -> None:
    assert raised_at(IndexError("made, not raised")) == "unknown place"
