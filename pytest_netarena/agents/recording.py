"""Recording of model traffic (--record) and answering from a recording without any network (--replay)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..core.types import Reply, Usage
from ..errors import InfraError

#: request fields that decide the answer; timeouts, keys and retry settings do not
KEY_FIELDS = ("model", "messages", "temperature", "seed", "max_tokens")


def request_key(request: dict[str, Any]) -> str:
    canonical = json.dumps({field: request.get(field) for field in KEY_FIELDS}, sort_keys=True)
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
            "request": {field: request.get(field) for field in KEY_FIELDS},
            "reply": reply.text,
            "usage": {"tokens_in": reply.usage.tokens_in, "tokens_out": reply.usage.tokens_out,
                      "cost_usd": reply.usage.cost_usd},
        }
        path = self._path(request)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(entry, indent=1, sort_keys=True))
        os.replace(temporary, path)

    def load(self, request: dict[str, Any]) -> Reply:
        path = self._path(request)
        try:
            entry = json.loads(path.read_text())
        except FileNotFoundError:
            raise InfraError(
                f"--replay {self.folder}: no recorded answer for this request ({path.name}); "
                "the conversation differs from the recorded run"
            ) from None
        return Reply(entry["reply"], Usage(**entry["usage"]))
