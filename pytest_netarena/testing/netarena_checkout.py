"""Tests' access to NetArena's files: a checkout, or a bare git mirror read at test time, named by the environment.

Nothing of NetArena's is stored in this project, and no folder of any machine is assumed: NETARENA_CHECKOUT
names a checkout (the tests' `--netarena-checkout PATH` sets it), NETARENA_MIRROR a bare git mirror whose
files are read with `git show`. Either may be given in either form. Without one, the tests that need
NetArena's files skip and say how to give them.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

CHECKOUT_ENV, MIRROR_ENV = "NETARENA_CHECKOUT", "NETARENA_MIRROR"
MALT_FILES = ("malt-graph.textproto.txt", "sampled_500_benchmark_malt.jsonl")
HOW = (f"give --netarena-checkout PATH, or set {CHECKOUT_ENV} to a NetArena checkout or {MIRROR_ENV} to a bare "
       "git mirror of it")


@dataclass(frozen=True)
class NetArenaSource:
    """A NetArena checkout, or a bare git mirror of one (its files read from HEAD)."""

    path: Path
    bare: bool

    def read(self, relative: str) -> bytes:
        """A file of NetArena's by its path in the repository; FileNotFoundError saying why when it cannot."""
        if not self.bare:
            target = self.path / relative
            if not target.is_file():
                raise FileNotFoundError(f"{self.path} has no {relative}")
            return target.read_bytes()
        done = subprocess.run(["git", "-C", str(self.path), "show", f"HEAD:{relative}"], capture_output=True,
                              timeout=120, check=False)
        if done.returncode:
            raise FileNotFoundError(f"cannot read {relative} from {self.path}: "
                                    f"{done.stderr.decode(errors='replace')[:200]}")
        return done.stdout


def _is_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def netarena_source() -> tuple[NetArenaSource | None, str]:
    """(the NetArena source the environment names, or None and why there is none)."""
    for name in (CHECKOUT_ENV, MIRROR_ENV):
        given = os.environ.get(name, "").strip()
        if not given:
            continue
        path = Path(given).expanduser()
        if not path.is_dir():
            return None, f"{name}={given} is not a folder"
        return NetArenaSource(path, _is_bare(path)), ""
    return None, f"no NetArena checkout: {HOW}"


def malt_checkout(dest: Path) -> tuple[Path | None, str]:
    """(a folder laid out like a NetArena checkout with app-malt/data, or None, and why not): the checkout itself,
    or, from a mirror, the MALT files copied into dest."""
    source, why = netarena_source()
    if source is None:
        return None, why
    if not source.bare:
        missing = [name for name in MALT_FILES if not (source.path / "app-malt" / "data" / name).is_file()]
        return (None, f"{source.path} has no app-malt/data/{missing[0]}") if missing else (source.path, "")
    data = dest / "app-malt" / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name in MALT_FILES:
        target = data / name
        if target.is_file():
            continue
        try:
            target.write_bytes(source.read(f"app-malt/data/{name}"))
        except FileNotFoundError as error:
            return None, str(error)
    return dest, ""
