"""Kubernetes resource quantities ("250m", "128Mi", "1.5", "2e3") as numbers of base units (cores, bytes)."""

from __future__ import annotations

import re

_SUFFIXES = {"": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40, "Pi": 2.0 ** 50, "Ei": 2.0 ** 60}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")


def parse(value) -> float:
    """The quantity's value in base units; 0.0 for one that does not read (the API server refuses those)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    match = _QUANTITY.match(str(value or "").strip())
    if match is None:
        return 0.0
    number = float(match.group(1))
    if match.group(2) is not None:
        return number * 10.0 ** int(match.group(2))
    return number * _SUFFIXES[match.group(3) or ""]
