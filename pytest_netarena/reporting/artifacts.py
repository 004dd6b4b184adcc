"""The run folder reports/<run-id>/: run.json, episodes.jsonl (appended live) and summary.json.

Only the controller writes here (workers send what they produce through xdist and the netarena link).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from ..core import safe_read
from ..core.canary import CANARY
from ..core.errors import UsageError
from . import shapes

from ..core.types import EpisodeResult


def new_run_id(seed: int) -> str:
    """Time, seed and a random tag: two runs started in the same second never share a folder."""
    return time.strftime("%Y%m%d-%H%M%S") + f"-{seed}-{secrets.token_hex(2)}"


def make_private_dir(path: Path) -> None:
    """Create a reports folder (and missing parents) readable by its owner only: transcripts are private."""
    missing = []
    current = Path(path)
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        folder.chmod(0o700)  # mkdir's mode is filtered by the umask


def write_json(path: Path, data: Any) -> None:
    make_private_dir(path.parent)
    temporary = path.with_suffix(f"{path.suffix}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(temporary, path)  # readers never see a half-written file


def episode_line(result: EpisodeResult) -> str:
    """The episodes.jsonl line of an episode (without its newline)."""
    return json.dumps({**result.to_dict(), "canary": CANARY}, sort_keys=True, default=str)


def append_line(path: Path, line: str) -> None:
    """Append one JSON line; a lock keeps lines whole when two processes append to one file."""
    make_private_dir(path.parent)
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.write(line.rstrip("\n") + "\n")
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def append_episode(run_dir: Path, result: EpisodeResult) -> None:
    """Append one transcript line to run_dir/episodes.jsonl."""
    append_line(run_dir / "episodes.jsonl", episode_line(result))


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    from .. import __version__

    versions = {"pytest-netarena": __version__, "python": platform.python_version()}
    for package in ("pytest", "hypothesis", "networkx", "pytest-xdist", "litellm"):
        try:
            from importlib.metadata import version

            versions[package] = version(package)
        except Exception:
            continue
    from .fingerprint import fingerprint

    write_json(run_dir / "run.json", {**info, "canary": CANARY, "versions": versions, "platform": platform.platform(),
                                      "fingerprint": fingerprint()})


def read_run_info(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    try:
        return shapes.checked(safe_read.read_json(path, inside=run_dir), shapes.RUN, str(path))
    except UsageError as error:
        raise UsageError(f"--resume {run_dir}: not a run folder with a readable run.json ({error})") from None


def finished_episodes(run_dir: Path, repair: bool) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Episodes of an interrupted run that need not run again (infra errors are run again).

    With repair, a half-written last line (the run was killed mid-write) is cut off first.
    """
    path = run_dir / "episodes.jsonl"
    if not path.exists():
        return {}
    text = safe_read.read_text(path, safe_read.MAX_JSONL_BYTES, inside=run_dir)
    if repair and text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
        path.write_text(text, encoding="utf-8")
    finished = {}
    for line in text.splitlines():
        try:
            episode = safe_read.parse(line, str(path))
        except UsageError:
            continue  # a half-written line: that episode runs again
        try:
            shapes.checked(episode, shapes.EPISODE, str(path))
        except UsageError:
            continue  # not an episode of the shape readers use: it runs again
        if episode["outcome"] != "infra_error":
            finished[(episode["query"]["id"], episode["agent"], episode["trial"])] = episode
    return finished


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    write_json(run_dir / "summary.json", summary)
