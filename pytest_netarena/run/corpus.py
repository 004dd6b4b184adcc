"""Corpus files: queries frozen as JSON lines, replayed as ordinary tests with the same ids every time."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core import safe_read
from ..core.types import EpisodeResult, Query
from ..core.errors import UsageError


def load_corpus(path: Path) -> list[Query]:
    """Queries of a corpus file in file order; ids made unique by bumping the index, deterministically."""
    queries: list[Query] = []
    taken: set[str] = set()
    for number, line in safe_read.json_lines(path):
        try:
            data = safe_read.parse(line, "the line")
            query = Query.from_dict(data.get("query", data))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise UsageError(f"{path}:{number}: not a corpus entry ({error})") from None
        while query.id in taken:
            query = Query(query.app, query.level, query.category, query.index + 1, query.seed, query.params)
        taken.add(query.id)
        queries.append(query)
    return queries


def save_corpus(path: Path, queries: Iterable[Query]) -> int:
    """Write queries as a corpus; returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q.to_dict(), sort_keys=True) for q in queries]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def append_found(path: Path, failure: EpisodeResult, extra: dict[str, Any]) -> Query:
    """Append a shrunk failing case to found.jsonl under a lock; returns it with its corpus index.

    An "{id}" in extra["reproduce"] is replaced by the case's id.
    """
    from ..reporting.artifacts import make_private_dir

    make_private_dir(path.parent)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0)
            prefix = f"{failure.query.app}-L{failure.query.level}-{failure.query.category}-"
            index = sum(prefix in line for line in handle)
            query = Query(failure.query.app, failure.query.level, failure.query.category, index, failure.query.seed,
                          failure.query.params)
            entry = {"query": query.to_dict(), "agent": failure.agent, "outcome": failure.outcome.value,
                     "details": failure.details, "steps": len(failure.steps), **extra}
            if "reproduce" in entry:
                entry["reproduce"] = entry["reproduce"].replace("{id}", query.id)
            handle.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return query


def read_found(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [safe_read.parse(line, f"{path}:{number}") for number, line in safe_read.json_lines(path, inside=path.parent)]
