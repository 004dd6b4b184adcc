"""Recording of model traffic (--llm-record), tool calls included, and answering from it with no network (--llm-replay)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..core import safe_read
from ..core.tools import ToolCall
from ..core.types import Reply, Usage
from ..core.errors import InfraError, UsageError

#: request fields that decide the answer; timeouts, keys and retry settings do not
KEY_FIELDS = ("model", "messages", "temperature", "seed", "max_tokens")
#: fields that decide the answer only when the request has them (so recordings made without them keep their keys)
OPTIONAL_KEY_FIELDS = ("tools",)


def key_fields(request: dict[str, Any]) -> dict[str, Any]:
    fields = {field: request.get(field) for field in KEY_FIELDS}
    fields.update({field: request[field] for field in OPTIONAL_KEY_FIELDS if request.get(field)})
    return fields


def request_key(request: dict[str, Any]) -> str:
    canonical = json.dumps(key_fields(request), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Recording:
    """A folder of request/response pairs, one JSON file per distinct request."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _path(self, request: dict[str, Any]) -> Path:
        return self.folder / f"{request_key(request)}.json"

    def save(self, request: dict[str, Any], reply: Reply) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        entry = {
            "request": key_fields(request),
            "reply": reply.text,
            "tool_calls": [call.to_dict() for call in reply.tool_calls],
            "usage": {"tokens_in": reply.usage.tokens_in, "tokens_out": reply.usage.tokens_out,
                      "cost_usd": reply.usage.cost_usd},
        }
        path = self._path(request)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(entry, indent=1, sort_keys=True))
        os.replace(temporary, path)

    def load(self, request: dict[str, Any]) -> Reply:
        """The recorded reply; a missing or corrupt recording is an InfraError (the model is not to blame)."""
        path = self._path(request)
        if not path.exists() and not path.is_symlink():
            raise InfraError(
                f"--llm-replay {self.folder}: no recorded answer for this request ({path.name}); "
                "the conversation differs from the recorded run"
            )
        try:
            entry = safe_read.read_json(path, inside=self.folder)
            usage = entry["usage"]
            calls = tuple(ToolCall.from_dict(call) for call in entry.get("tool_calls") or ())
            reply = Reply(entry["reply"], Usage(tokens_in=int(usage["tokens_in"]), tokens_out=int(usage["tokens_out"]),
                                                cost_usd=float(usage["cost_usd"])), calls)
        except UsageError as error:
            raise InfraError(f"--llm-replay {self.folder}: unreadable recording: {error}") from None
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as error:
            raise InfraError(f"--llm-replay {self.folder}: corrupt recording {path.name}: missing or bad {error}") from None
        if not isinstance(reply.text, str):
            raise InfraError(f"--llm-replay {self.folder}: corrupt recording {path.name}: the reply is not text")
        return reply
