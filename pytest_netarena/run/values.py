"""Option values parsed at the edge: whole and finite numbers, flags, levels, seeds; a bad one is a one-line UsageError."""

from __future__ import annotations

import math
from typing import Any

from ..agents.prompting import PROMPT_STYLES
from ..core.errors import UsageError
from ..core.seeding import new_run_seed

LEVELS_UNSET = "default"  #: the ini default of --levels: every level, or an app's own default (MALT compat)


def given_levels(value: Any) -> str | None:
    """--levels as given; None when the run names none (every level, or an app's own default)."""
    return None if value in (None, LEVELS_UNSET) else str(value)


def parse_levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(sorted({int(part) for part in str(text).replace(" ", "").split(",") if part}))
    except ValueError:
        raise UsageError(f"--levels takes levels separated by commas, e.g. 1,2,3; got {text!r}") from None
    if not levels or any(level not in (1, 2, 3) for level in levels):
        raise UsageError(f"--levels must list levels among 1, 2 and 3; got {text!r}")
    return levels


def positive_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} takes a whole number; got {value!r}") from None
    if number < 1:
        raise UsageError(f"{name} must be at least 1; got {number}")
    return number


def finite_number(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """A real, finite, positive number (or zero when allowed): nan, inf and negatives are usage errors."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} takes a number; got {value!r}") from None
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "more than zero"
        raise UsageError(f"{name} must be a finite number, {bound}; got {value!r}")
    return number


def optional_limit(name: str, value: Any, kind: type) -> Any:
    """A cap such as --max-tokens (int) or --max-cost-usd (float): None when not given, else more than zero."""
    if value in (None, ""):
        return None
    if kind is float:
        return finite_number(name, value)
    try:
        number = kind(value)
    except ValueError:
        raise UsageError(f"{name} takes a whole number; got {value!r}") from None
    if number <= 0:
        raise UsageError(f"{name} must be positive; got {value!r}")
    return number


def flag(value: Any) -> bool:
    """An on/off option given on the command line (True) or as an ini value ("true", "1", ...)."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise UsageError(f"expected true or false; got {value!r}")


def seed(text: Any) -> int:
    """--seed; a new seed when none is given."""
    if text in (None, ""):
        return new_run_seed()
    try:
        number = int(text)
    except ValueError:
        raise UsageError(f"--seed takes a whole number; got {text!r}") from None
    if number < 0:
        raise UsageError(f"--seed takes a whole number, zero or more; got {text!r}")
    return number


def prompt_style(value: Any) -> str:
    """--prompt-style (its old name: --strategy): one of the prompt styles; zero-shot when none is given."""
    if value in (None, ""):
        return "zero-shot"
    if value not in PROMPT_STYLES:
        raise UsageError(f"--prompt-style must be one of {', '.join(PROMPT_STYLES)}; got {value!r}")
    return value


#: --tool-calls: offer tools to the agents that take them (auto), to every agent that can (always), or to none
TOOL_CALLS = ("auto", "always", "never")


def tool_calls(value: Any) -> str:
    """--tool-calls: the one place its value is read and checked; when none is given, the default RunOptions
    declares (auto). run/plan.py decides from it, per episode, whether tools are offered."""
    from ..core.app import RunOptions

    if value in (None, ""):
        return RunOptions.tool_calls
    if value not in TOOL_CALLS:
        raise UsageError(f"--tool-calls takes auto, always or never; got {value!r}")
    return str(value)
