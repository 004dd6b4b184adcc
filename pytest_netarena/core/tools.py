"""Actions as tools: the Tool, ToolCall and ToolResult values, argument checking, and the shared `finish` tool.

Every interface reaches an environment's actions through these values: native tool calls of model
APIs, an MCP server, a CLI agent, or a text reply read into the same action. Arguments are
attacker-controlled JSON text: checking them never raises, it says what is wrong in one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .replies import unprintable

#: arguments longer than this are refused unread (the largest field of any tool is far below it)
MAX_ARGUMENTS_CHARS = 300_000
#: nesting deeper than this is refused (our schemas are flat objects)
MAX_DEPTH = 8
#: the schema keywords check_arguments understands; a Tool using another one is a bug of ours (tests hold apps to it)
KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "enum", "minLength", "maxLength",
                      "minimum", "maximum", "items", "maxItems", "description", "title", "default"})


@dataclass(frozen=True)
class Tool:
    """One action an agent may take, with a JSON Schema of its arguments (an "object" schema)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_function(self) -> dict[str, Any]:
        """The tool in OpenAI's function-calling form ({"type": "function", "function": {...}})."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": _plain(self.parameters)}}


@dataclass(frozen=True)
class ToolCall:
    """One call an agent made: the tool's name and its arguments as the JSON text it sent."""

    name: str
    arguments: str  #: JSON text exactly as sent ("" means no arguments)
    call_id: str = ""  #: the provider's id for the call (a tool message answers it by this id)

    @classmethod
    def of(cls, name: str, arguments: Mapping[str, Any] | None = None, call_id: str = "") -> ToolCall:
        """A call built from already-decoded arguments (e.g. an MCP client's, or a python agent's)."""
        return cls(name, json.dumps(dict(arguments or {}), ensure_ascii=False), call_id)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "call_id": self.call_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(str(data.get("name", "")), str(data.get("arguments", "")), str(data.get("call_id", "")))


@dataclass(frozen=True)
class ToolResult:
    """What one call gave back: the observation after it, or why it was refused or not run."""

    call_id: str
    name: str
    content: str
    is_error: bool = False  #: the call was refused or not run (nothing of it ran)


#: said when an agent is done: the episode ends and its final state is judged
FINISH = Tool(
    name="finish",
    description=(
        "Say you are done. The episode ends at once and its final state is judged as it is; no further "
        "tool calls are run. Call it when the problem is fixed (the observation shows nothing left to fix) "
        "or when you cannot do more. It does not count as a step. Returns a note that the episode ended."
    ),
    parameters={
        "type": "object",
        "properties": {"summary": {"type": "string", "maxLength": 2000,
                                   "description": "optional: one or two sentences on what you did and why"}},
        "additionalProperties": False,
    },
)


@dataclass(frozen=True)
class CheckedCall:
    """A call checked against the tools offered: its tool and decoded arguments, or the problem (one line)."""

    call: ToolCall
    tool: Tool | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def check_call(call: ToolCall, tools: Iterable[Tool]) -> CheckedCall:
    """Check one call against the tools offered; never raises, whatever the call holds."""
    try:
        return _check_call(call, tuple(tools))
    except Exception as error:  # a hole in the checks must still refuse, never crash the episode
        return CheckedCall(call, problem=f"the call could not be read ({type(error).__name__})")


def _check_call(call: ToolCall, tools: tuple[Tool, ...]) -> CheckedCall:
    names = ", ".join(tool.name for tool in tools) or "none"
    name = call.name
    if not isinstance(name, str) or not name:
        return CheckedCall(call, problem=f"the call names no tool; the tools are: {names}")
    tool = next((tool for tool in tools if tool.name == name), None)
    if tool is None:
        return CheckedCall(call, problem=f"unknown tool {_quoted(name)}; the tools are: {names}")
    arguments, problem = decode_arguments(call.arguments)
    if problem:
        return CheckedCall(call, tool, problem=f"{tool.name}: {problem}")
    problem = check_arguments(tool.parameters, arguments)
    if problem:
        return CheckedCall(call, tool, problem=f"{tool.name}: {problem}")
    return CheckedCall(call, tool, arguments)


def decode_arguments(text: Any) -> tuple[dict[str, Any], str]:
    """(arguments, "") from a call's JSON text, or ({}, why not). Empty text means no arguments."""
    if not isinstance(text, str):
        return {}, f"the arguments must be JSON text, got {type(text).__name__}"
    if len(text) > MAX_ARGUMENTS_CHARS:
        return {}, f"the arguments are {len(text):,} characters long; the limit is {MAX_ARGUMENTS_CHARS:,}"
    if not text.strip():
        return {}, ""
    if "\0" in text:
        return {}, "the arguments hold a NUL byte; send plain JSON text"
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except RecursionError:
        return {}, "the arguments are nested too deeply"
    except (ValueError, TypeError) as error:  # JSONDecodeError, duplicate keys, NaN, over-long integers
        return {}, f"the arguments are not valid JSON: {_first_line(error)}"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {_json_type(value)}"
    return value, ""


def check_arguments(schema: Mapping[str, Any], value: Any, where: str = "arguments", depth: int = 0) -> str:
    """Why value breaks the (simple) JSON Schema, or "" when it fits. Strings are also checked for NUL,
    control characters and unpaired surrogates, which no action of ours can take."""
    if depth > MAX_DEPTH:
        return f"{where} is nested too deeply"
    kind = schema.get("type")
    if kind is not None and not _has_type(value, kind):
        return f"{where} must be {_a(kind)}, got {_json_type(value)}"
    if "enum" in schema and value not in schema["enum"]:
        listed = ", ".join(_quoted(str(option)) for option in list(schema["enum"])[:40])
        return f"{where} is {_quoted(str(value))}, not one of: {listed}"
    if isinstance(value, str):
        return _check_string(schema, value, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} is {value}, below the minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} is {value}, above the maximum {schema['maximum']}"
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where} has {len(value)} items; at most {schema['maxItems']} are accepted"
        for index, item in enumerate(value):
            problem = check_arguments(schema.get("items") or {}, item, f"{where}[{index}]", depth + 1)
            if problem:
                return problem
    if isinstance(value, dict):
        return _check_object(schema, value, where, depth)
    return ""


def _check_string(schema: Mapping[str, Any], value: str, where: str) -> str:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{where} is {len(value):,} characters long; the limit is {schema['maxLength']:,}"
    if "minLength" in schema and len(value) < schema["minLength"]:
        return f"{where} is empty" if not value else f"{where} is shorter than {schema['minLength']} characters"
    problem = unprintable(value)
    return f"{where} cannot be used: {problem}" if problem else ""


def _check_object(schema: Mapping[str, Any], value: dict[str, Any], where: str, depth: int) -> str:
    properties = schema.get("properties") or {}
    missing = [name for name in schema.get("required") or () if name not in value]
    unknown = [name for name in value if name not in properties]
    accepted = ", ".join(_quoted(name) for name in properties) or "none"
    if missing:
        verb = "lack" if where == "arguments" else "lacks"
        problem = f"{where} {verb} the required {', '.join(_quoted(name) for name in missing)}"
        if unknown:  # most often a misspelt name: say which one was sent
            problem += f"; got the unknown {_quoted(unknown[0])} instead (accepted: {accepted})"
        return problem
    if schema.get("additionalProperties") is False and unknown:
        return f"unknown argument {_quoted(unknown[0])}; accepted: {accepted}"
    for name, item in value.items():
        if name in properties:
            label = name if where == "arguments" else f"{where}.{name}"
            problem = check_arguments(properties[name], item, _quoted(label), depth + 1)
            if problem:
                return problem
    return ""


_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "string": (str,), "array": (list,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float), "null": (type(None),)}


def _has_type(value: Any, kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    for name in kinds:
        if name in ("integer", "number") and isinstance(value, bool):
            continue
        if isinstance(value, _TYPES.get(name, ())):
            return True
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return True
    return False


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    for name, types in _TYPES.items():
        if isinstance(value, types):
            return "null" if value is None else _a(name)
    return type(value).__name__


def _a(kind: Any) -> str:
    if isinstance(kind, list):
        return " or ".join(map(_a, kind))
    return f"an {kind}" if str(kind)[:1] in "aeiou" else f"a {kind}"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {_quoted(key)} appears twice")
        found[key] = value
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _quoted(text: str, keep: int = 60) -> str:
    """Agent text inside a message: bounded, escaped, quoted."""
    shown = text[:keep].encode("unicode_escape").decode("ascii")
    return f'"{shown}"' + ("..." if len(text) > keep else "")


def _first_line(error: BaseException) -> str:
    return str(error).split("\n", 1)[0][:200]


def _plain(value: Any) -> Any:
    """A schema as plain dicts and lists (Tool.parameters may be any mapping)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def schema_keywords(schema: Any) -> set[str]:
    """Every keyword a schema uses (properties' names aside), to hold tools to what check_arguments understands."""
    found: set[str] = set()
    if isinstance(schema, Mapping):
        for key, item in schema.items():
            found.add(key)
            if key == "properties" and isinstance(item, Mapping):
                for sub in item.values():
                    found |= schema_keywords(sub)
            elif key == "items":
                found |= schema_keywords(item)
    return found
