"""The JSONPath subset printer columns use: `.a.b`, `.a[0]`, `.a[*].b`, `.a[?(@.type=="Ready")].status`."""

from __future__ import annotations

import re

_STEP = re.compile(r"""\.(?P<field>(?:\\.|[^.\[\\])+)|\[(?P<index>-?\d+|\*)\]|\[\?\(@\.(?P<key>[\w.-]+)\s*(?P<op>==|!=)\s*(?P<value>"[^"]*"|'[^']*'|[^)]*)\)\]""")


def parse(path: str) -> list[tuple]:
    """The steps of a path ({...} braces allowed); ValueError if it is not of the subset."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps, pos = [], 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {text[pos:]!r}")
        if match.group("field") is not None:
            steps.append(("field", match.group("field").replace("\\.", ".")))
        elif match.group("index") is not None:
            index = match.group("index")
            steps.append(("all",) if index == "*" else ("index", int(index)))
        else:
            value = match.group("value").strip()
            if value[:1] in "\"'":
                value = value[1:-1]
            steps.append(("filter", match.group("key").split("."), match.group("op") == "==", value))
        pos = match.end()
    return steps


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def find(obj, path: str) -> list:
    """Every value path reaches in obj (none when a step finds nothing)."""
    values = [obj]
    for step in parse(path):
        found = []
        for value in values:
            if (step[0] == "field" and isinstance(value, dict) and step[1] in value) or (step[0] == "index" and isinstance(value, list) and -len(value) <= step[1] < len(value)):
                found.append(value[step[1]])
            elif step[0] == "all":
                found.extend(value if isinstance(value, list) else value.values() if isinstance(value, dict) else [])
            elif step[0] == "filter" and isinstance(value, list):
                for item in value:
                    target = item
                    for key in step[1]:
                        target = target.get(key) if isinstance(target, dict) else None
                    if (target is not None and _text(target) == step[3]) == step[2]:
                        found.append(item)
        values = found
    return values
