"""Reading YAML/JSON input with bounds: bytes read, nesting depth, alias-expanded size, scalar length."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import ManifestError

MAX_BYTES = 8 * 1024 * 1024  #: per input file; manifests of a 2000-service app stay far below
MAX_DEPTH = 100  #: Kubernetes objects nest about 15 deep
MAX_NODES = 1_000_000  #: nodes once every alias is expanded (what a consumer walking the data visits)
MAX_SCALAR = 1024 * 1024  #: characters in one scalar
CHUNK = 64 * 1024

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_bounded(path: str | Path, limit: int = MAX_BYTES) -> str:
    """The file's text, refusing (not truncating) anything over `limit` bytes; reading stops there,
    so a device or pipe without end (/dev/zero) costs at most `limit` bytes."""
    chunks, size = [], 0
    try:
        with open(path, "rb") as stream:
            while True:
                chunk = stream.read(min(CHUNK, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise ManifestError(f"{path}: larger than {limit} bytes (the input limit); "
                                        "split it into several -f files")
    except OSError as error:
        raise ManifestError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManifestError(f"{path}: not UTF-8 text (byte {error.start})") from None


def check_events(text: str, source: str) -> None:
    """Walk the parser's events (no tree is built) and refuse deep, alias-bombed or huge input."""
    stack: list[int] = []  # per open collection: nodes inside it so far, aliases expanded
    anchors: dict[str, int] = {}
    opened: list[str | None] = []
    total = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append(1)
            opened.append(event.anchor)
            if len(stack) > MAX_DEPTH:
                raise ManifestError(f"{source}: nested more than {MAX_DEPTH} levels deep")
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            size, anchor = stack.pop(), opened.pop()
            if anchor is not None:
                anchors[anchor] = size
        elif isinstance(event, yaml.ScalarEvent):
            if len(event.value) > MAX_SCALAR:
                raise ManifestError(f"{source}: a scalar of {len(event.value)} characters "
                                    f"(more than {MAX_SCALAR})")
            size = 1
            if event.anchor is not None:
                anchors[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            size = anchors.get(event.anchor, 1)
        else:
            continue
        total += size
        if stack:
            stack[-1] += size
        if total > MAX_NODES:
            raise ManifestError(f"{source}: more than {MAX_NODES} values once aliases are expanded "
                                "(an alias bomb?)")


def load_documents(text: str, source: str) -> list[Any]:
    """All non-empty documents of `text` (YAML or JSON), after check_events()."""
    try:
        check_events(text, source)
        return [doc for doc in yaml.load_all(text, Loader=_LOADER) if doc is not None]
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        position = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ManifestError(f"{source}: malformed YAML{position}: {problem}") from None
    except RecursionError:
        raise ManifestError(f"{source}: nested too deeply") from None
