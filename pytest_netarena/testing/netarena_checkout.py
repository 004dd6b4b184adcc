"""Tests' access to a NetArena checkout's MALT data: a real checkout, or files read from a git mirror at test time.

Nothing of NetArena's is stored in this project: NETARENA_CHECKOUT names a checkout; otherwise the
files are read out of a bare git mirror (NETARENA_MIRROR, default the shared mirror path) into a
folder the test owns.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MIRROR = Path(os.environ.get("NETARENA_MIRROR", "/work/.mirror/Froot-NetSys+NetArena/repo"))
MALT_FILES = ("malt-graph.textproto.txt", "sampled_500_benchmark_malt.jsonl")


def malt_checkout(dest: Path) -> tuple[Path | None, str]:
    """(a folder laid out like a NetArena checkout with app-malt/data, or None, and why not)."""
    given = os.environ.get("NETARENA_CHECKOUT")
    if given:
        root = Path(given)
        if all((root / "app-malt" / "data" / name).is_file() for name in MALT_FILES):
            return root, ""
        return None, f"NETARENA_CHECKOUT={given} has no app-malt/data/{MALT_FILES[0]}"
    if not MIRROR.exists():
        return None, f"no NetArena checkout: set NETARENA_CHECKOUT (the git mirror {MIRROR} is absent)"
    data = dest / "app-malt" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name in MALT_FILES:
        target = data / name
        if target.is_file():
            continue
        with open(target, "wb") as out:
            done = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:app-malt/data/{name}"],
                                  stdout=out, stderr=subprocess.PIPE, timeout=120, check=False)
        if done.returncode != 0:
            target.unlink(missing_ok=True)
            return None, f"cannot read app-malt/data/{name} from {MIRROR}: {done.stderr.decode(errors='replace')[:200]}"
    return dest, ""
