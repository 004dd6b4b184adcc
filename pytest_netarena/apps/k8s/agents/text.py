"""What the K8s built-in agents read and write: observation lines they parse, fenced replies, JSON Patch commands."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from ....core.types import Reply

FLOW_LINE = re.compile(r"^(\S+) \u2192 (\S+):(\d+)(?:/(\w+))? \(Expected: (True|False), Actual: (True|False)\)$")
INTENT_LINE = re.compile(r"^  (\S+) \u2192 (.*)$")
NAMESPACE_IN_INTENT = re.compile(r"in namespace '([^']+)'")


def fenced(command: str, note: str = "") -> Reply:
    return Reply(f"{note}\n```\n{command}\n```" if note else f"```\n{command}\n```")


def json_patch_command(kind: str, name: str, operations: list[dict[str, Any]]) -> str:
    return f"kubectl patch {kind} {name} --type=json -p {shlex.quote(json.dumps(operations, separators=(',', ':')))}"
