"""The shapes of a run folder's files (an episodes.jsonl line, run.json, summary.json), checked before any reader uses them.

Safe reading (core/safe_read.py) bounds size, encoding and nesting; this checks what the readers
then use: every field they read has the type and range they assume, so a file of the wrong shape
is one line naming the file, the line and the field, never a traceback in a reader. Fields no
reader uses are not checked (older and newer run folders keep working); absent optional fields
take the readers' defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core.errors import UsageError
from ..core.types import Outcome

Shape = Callable[[Any, str], None]  #: shape(value, field) raises WrongShape when value does not fit


class WrongShape(UsageError):
    """A value of the wrong type or range: `<where>: field <name>: expected ..., got ...`."""


def _got(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        digits = len(str(abs(value)))
        return f"an integer of {digits:,} digits" if digits > 20 else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"the text {value[:40]!r}" + ("..." if len(value) > 40 else "")
    shown: dict[type, str] = {dict: "an object", list: "a list"}
    return shown.get(type(value), type(value).__name__)


def _wrong(field: str, expected: str, value: Any) -> WrongShape:
    return WrongShape(f"{f'field {field}: ' if field else ''}expected {expected}, got {_got(value)}")


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    return f" >= {low:g}" if low is not None else f" <= {high:g}" if high is not None else ""


def anything(value: Any, field: str) -> None:
    """Any JSON value (the reader only shows it as text)."""


def text(value: Any, field: str) -> None:
    if not isinstance(value, str):
        raise _wrong(field, "a string", value)


def boolean(value: Any, field: str) -> None:
    if not isinstance(value, bool):
        raise _wrong(field, "true or false", value)


def integer(low: int | None = None, high: int | None = None) -> Shape:
    def check(value: Any, field: str) -> None:
        if (not isinstance(value, int) or isinstance(value, bool) or (low is not None and value < low)
                or (high is not None and value > high)):
            raise _wrong(field, "an integer" + _bounds(low, high), value)
    return check


def number(low: float | None = None, high: float | None = None) -> Shape:
    """An integer or a float that fits a float and is finite (no NaN, no infinity, no 10**4000), within bounds."""
    def check(value: Any, field: str) -> None:
        fits = isinstance(value, (int, float)) and not isinstance(value, bool)
        if fits:
            try:
                fits = math.isfinite(value)
            except OverflowError:  # an integer past a float
                fits = False
        if not fits or (low is not None and value < low) or (high is not None and value > high):
            raise _wrong(field, "a finite number" + _bounds(low, high), value)
    return check


def nullable(shape: Shape) -> Shape:
    def check(value: Any, field: str) -> None:
        if value is not None:
            shape(value, field)
    return check


def one_of(*choices: str) -> Shape:
    def check(value: Any, field: str) -> None:
        if value not in choices or not isinstance(value, str):
            raise _wrong(field, "one of " + ", ".join(choices), value)
    return check


def list_of(item: Shape) -> Shape:
    def check(value: Any, field: str) -> None:
        if not isinstance(value, list):
            raise _wrong(field, "a list", value)
        for index, element in enumerate(value):
            item(element, f"{field}[{index}]")
    return check


def map_of(item: Shape) -> Shape:
    def check(value: Any, field: str) -> None:
        if not isinstance(value, dict):
            raise _wrong(field, "an object", value)
        for key, element in value.items():
            item(element, f"{field}.{key}" if field else key)
    return check


def record(required: dict[str, Shape] | None = None, optional: dict[str, Shape] | None = None) -> Shape:
    """An object with these fields (optional ones may be absent); other fields are not looked at."""
    def check(value: Any, field: str) -> None:
        if not isinstance(value, dict):
            raise _wrong(field, "an object", value)
        for name, shape in (required or {}).items():
            where = f"{field}.{name}" if field else name
            if name not in value:
                raise WrongShape(f"field {where}: missing")
            shape(value[name], where)
        for name, shape in (optional or {}).items():
            if name in value:
                shape(value[name], f"{field}.{name}" if field else name)
    return check


def checked(value: Any, shape: Shape, where: str) -> Any:
    """value, after checking it has the shape; else WrongShape naming `where` (file, and line) and the field."""
    try:
        shape(value, "")
    except WrongShape as error:
        raise WrongShape(f"{where}: {error}") from None
    return value


SECONDS = number(0)
COUNT = integer(0)
USAGE = record(optional={"tokens_in": COUNT, "tokens_out": COUNT, "cost_usd": number(0)})
QUERY = record(required={"id": text, "app": text, "level": integer(0), "category": text},
               optional={"seed": nullable(integer())})
STEP = record(required={"reply": text, "observation": text, "output": text},
              optional={"index": integer(0), "action": nullable(text), "violations": list_of(text),
                        "refused": boolean, "agent_s": SECONDS, "exec_s": SECONDS, "check_s": SECONDS,
                        "usage": USAGE})
#: one episodes.jsonl line (core.types.EpisodeResult.to_dict)
EPISODE = record(
    required={"query": QUERY, "agent": text, "trial": COUNT, "outcome": one_of(*(o.value for o in Outcome)),
              "correct": boolean, "safe": boolean, "steps": list_of(STEP)},
    optional={"first_observation": text, "details": text, "agent_s": SECONDS, "wall_s": SECONDS,
              "usage": USAGE, "tokens": COUNT, "prompt_style": nullable(text), "episode_id": text,
              "strategy": nullable(text),  # prompt_style's old name
              "metrics": map_of(nullable(boolean))})
#: run.json (plugin/options.run_info; `netarena generate`, audit and merge write a subset)
RUN = record(optional={
    "run_id": text, "seed": nullable(integer()), "sandboxed": boolean, "rules": text, "profile": text, "shard": text,
    "agents": list_of(text), "paths": list_of(text), "pyargs": boolean, "keyword": text, "markexpr": text,
    "args": list_of(anything), "platform": text, "versions": map_of(anything), "fingerprint": nullable(map_of(anything)),
    "command_line": map_of(anything), "secret_in_use": boolean, "private": record(optional={"secret": text}),
    "options": record(optional={"prompt_style": nullable(text), "strategy": nullable(text),  # its old name
                                "max_steps": nullable(integer(1))}),
    "collection": record(optional={"total": nullable(COUNT), "selected": COUNT})})
#: summary.json, the parts read back (kept by `netarena report`, added up by `report merge`)
SUMMARY = record(optional={
    "budget": record(optional={"max_tokens": nullable(COUNT), "max_cost_usd": nullable(number(0)), "tokens": COUNT,
                               "cost_usd": number(0), "stopped": boolean, "episodes_not_run": COUNT,
                               "per_shard": boolean}),
    "gates": list_of(record(optional={"metric": text, "app": text, "agent": text, "threshold": number(0, 1),
                                      "value": nullable(number(0, 1)), "passed": boolean})),
    "skipped": record(optional={"episodes": COUNT, "reasons": list_of(record(optional={
        "reason": text, "episodes": COUNT, "apps": list_of(text)}))})})
