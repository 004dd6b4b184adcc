"""`netarena validity` and `check_app`: a validity card of the Agentic Benchmark Checklist, and an app's guarantees.

measure.py plays the reference agents and the isolation check on an app; card.py turns the measurements into
the card's items and writes validity.md and validity.json; cli.py holds the subcommands (`validity`, `check-app`);
conformance.py is `check_app(app)`, the guarantees every app must keep, for a user's own app too:

    from pytest_netarena.validity import check_app
    check_app(MyApp())  # raises AppCheckError naming each broken guarantee and its query
"""

from __future__ import annotations

from typing import Any

#: what `from pytest_netarena.validity import ...` offers, imported when first used (the subcommands stay light)
_PUBLIC = ("check_app", "AppCheck", "AppCheckError", "Failure", "GUARANTEES")


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        from . import conformance

        return getattr(conformance, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
