"""Reading user files that may be hostile (corpora, recordings, run folders, manifests) within a size cap.

`read_capped` reads any file (or standard input) up to a cap, never past it; JSON and JSON lines are read as strict
UTF-8 under a nesting cap, never through a symlink out of their folder, every problem a one-line UsageError, never a
traceback."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import UsageError

#: nesting no file of ours comes near (episodes nest about 6 deep)
MAX_DEPTH = 100
#: one JSON file (run.json, summary.json, a recording)
MAX_JSON_BYTES = 16 << 20
#: one JSON-lines file (episodes.jsonl of a long run, a corpus)
MAX_JSONL_BYTES = 1 << 30
#: what one read asks for: a file of endless bytes (/dev/zero) costs at most the cap and one of these
_CHUNK = 1 << 16


class TooLarge(ValueError):
    """A file past its cap (reading stopped there)."""


def capped(stream: IO[bytes], limit: int, where: str) -> bytes:
    """At most `limit` bytes of stream; TooLarge, naming `where`, as soon as there are more."""
    chunks, size = [], 0
    while chunk := stream.read(min(_CHUNK, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"{where}: larger than {limit} bytes")
    return b"".join(chunks)


def read_capped(path: str | Path, limit: int) -> bytes:
    """A file's bytes ("-": standard input's), at most `limit` of them (TooLarge past them); OSError as reading it
    raises one. Pipes and devices are read too, never further than the cap."""
    if str(path) == "-":
        return capped(sys.stdin.buffer, limit, "-")
    with open(path, "rb") as stream:
        return capped(stream, limit, str(path))


def read_text(path: Path, limit: int = MAX_JSON_BYTES, inside: Path | None = None) -> str:
    """A regular file's text; with `inside`, the file must resolve within that folder (no symlink out)."""
    if inside is not None:
        try:
            path.resolve().relative_to(inside.resolve())
        except ValueError:
            raise UsageError(f"{path}: a link to a file outside {inside}; refusing to follow it") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block the open
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(f"{path}: not a regular file")
            data = capped(handle, limit, str(path))
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except TooLarge:
        raise UsageError(f"{path}: larger than {limit:,} bytes; refusing to read it") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start:,} is {data[error.start]:#04x})") from None


def parse(text: str, where: str) -> Any:
    """One JSON value; `where` names it in the error (e.g. "run.json" or "episodes.jsonl: line 12")."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise UsageError(f"{where} is JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as error:
        raise UsageError(f"{where} is not valid JSON ({error})") from None
    if _too_deep(value):
        raise UsageError(f"{where} is JSON nested too deeply (more than {MAX_DEPTH} levels)")
    return value


def read_json(path: Path, limit: int = MAX_JSON_BYTES, inside: Path | None = None) -> Any:
    """One JSON file's value."""
    return parse(read_text(path, limit, inside), str(path))


def json_lines(path: Path, limit: int = MAX_JSONL_BYTES, inside: Path | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of a JSON-lines file's non-blank lines; parse each with parse()."""
    for number, line in enumerate(read_text(path, limit, inside).splitlines(), start=1):
        if line.strip():
            yield number, line


def _too_deep(value: Any) -> bool:
    if not isinstance(value, (dict, list)):
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
