"""Held-out splits: every query belongs to `train` or `test` by a hash of its fault signature.

The signature is what makes two queries the same problem: an app's faults (route, k8s: the fault
types, targets and values, not the network's size) or, without faults, all its hidden params (MALT:
the program). The hash never depends on the run seed, the index or the process, so a query drawn
by any run, any seed or any Gymnasium reset lands in the same split, and a model trained on
`train` queries is evaluated on problems it could not have seen.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SPLITS = ("train", "test")
#: the share of the query catalogue held out for evaluation, in thousandths
TEST_PER_MILLE = 200
#: indices tried per wanted query before a category is declared too small for its split
ATTEMPTS_PER_QUERY = 200


def signature(app: str, params: dict[str, Any]) -> str:
    """The canonical text of a query's problem (its faults, or all its params when it has none)."""
    key = params["faults"] if isinstance(params.get("faults"), list) else params
    return json.dumps({"app": app, "problem": key}, sort_keys=True, separators=(",", ":"), default=str)


def split_of(app: str, params: dict[str, Any]) -> str:
    """"train" or "test" for a query's hidden params; stable across runs, machines and Python versions."""
    digest = hashlib.sha256(signature(app, params).encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") % 1000 < TEST_PER_MILLE else "train"


def check_split(value: Any) -> str | None:
    """A --split value: "train", "test" or "all" (None); ValueError otherwise."""
    text = "" if value is None else str(value).strip().lower()
    if text in ("", "all"):
        return None
    if text not in SPLITS:
        raise ValueError(f"--split takes train, test or all; got {value!r}")
    return text
