"""The one loader of untrusted YAML (and JSON): bounded depth, alias-expanded size and scalar length, or YAMLRefused.

The parser's events are walked first, so no tree is built for input that breaks a bound; only then
are the documents constructed. Callers bound the bytes they read and name the source in their errors.
"""

from __future__ import annotations

from typing import Any

#: the deepest nesting accepted (Kubernetes objects nest about 15 deep)
MAX_DEPTH = 64
#: values in the whole input once every alias is expanded (a "billion laughs" file stops here)
MAX_NODES = 200_000
#: characters in one scalar
MAX_SCALAR = 1024 * 1024


class YAMLRefused(ValueError):
    """Input the loader will not build: malformed, nested too deeply, too many values, a huge scalar, a recursive alias."""


def load_documents(raw: bytes | str) -> list[Any]:
    """The non-empty documents of raw, after the bounds are checked on the parser's events."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(yaml.parse(raw, Loader=loader))
        return [document for document in yaml.load_all(raw, Loader=loader) if document is not None]
    except yaml.YAMLError as error:
        raise YAMLRefused(_describe(error)) from None
    except RecursionError:  # bounded above; kept so no parser quirk turns into a traceback
        raise YAMLRefused(f"the YAML is nested more than {MAX_DEPTH} levels deep") from None


def _check_events(events) -> None:
    import yaml

    stack: list[int] = []  # per open collection: the values it stands for so far, aliases expanded
    opened: list[str | None] = []  # the anchor of each open collection
    anchors: dict[str, int] = {}  # values each finished anchor stands for
    total = 0  # values in the input so far, aliases expanded
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            anchors.clear()  # an alias never reaches into another document
            continue
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append(1)
            opened.append(event.anchor)
            if len(stack) > MAX_DEPTH:
                raise YAMLRefused(f"the YAML is nested more than {MAX_DEPTH} levels deep")
            total += 1
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            size, anchor = stack.pop(), opened.pop()  # its values were counted in total as they came
            if anchor is not None:
                anchors[anchor] = size
            if stack:
                stack[-1] += size
        elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            if isinstance(event, yaml.ScalarEvent):
                if len(event.value) > MAX_SCALAR:
                    raise YAMLRefused(f"the YAML holds a scalar of {len(event.value)} characters "
                                      f"(more than {MAX_SCALAR})")
                size = 1
                if event.anchor is not None:
                    anchors[event.anchor] = 1
            elif event.anchor in opened:
                raise YAMLRefused("the YAML holds a recursive alias (a value that contains itself)")
            else:
                size = anchors.get(event.anchor or "", 1)
            total += size
            if stack:
                stack[-1] += size
        if total > MAX_NODES:
            raise YAMLRefused(f"the YAML has more than {MAX_NODES} values once aliases are expanded (an alias bomb?)")


def _describe(error) -> str:
    where = getattr(error, "problem_mark", None)
    position = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
    problem = getattr(error, "problem", None) or str(error)
    return f"malformed YAML{position}: {problem}".replace("\n", " ")
