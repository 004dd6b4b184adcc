"""A scripted Anthropic Messages API (POST /v1/messages, streamed as SSE) as Claude Code calls it.

    with MessagesStub([[Call("run", {"command": "kubectl get pods"})], [Say("fixed")]]) as model:
        # ANTHROPIC_BASE_URL=<model.url> claude -p ... --mcp-config ...
        assert model.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"

Claude Code names an MCP server's tools `mcp__<server>__<tool>`; `Call("run")` finds that name.
Token counting (`/v1/messages/count_tokens`) is answered from the request's size.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from .scripted_models import Block, Call, ScriptedModel, Say


class MessagesStub(ScriptedModel):
    """The Anthropic Messages API, streaming and not."""

    api = "Anthropic Messages"

    def handles(self, path: str) -> bool:
        return path in ("/v1/messages", "/v1/messages/count_tokens")

    def answer(self, path, headers, body):  # noqa: ANN001, ANN201 - the base's signature
        if path.endswith("/count_tokens"):
            return {"input_tokens": max(1, len(json.dumps(body)) // 4)}, None
        return super().answer(path, headers, body)

    def call_ids(self, body: dict[str, Any]) -> list[str]:
        found = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    found.append(str(block.get("id")))
                elif isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(str(block.get("tool_use_id")))
        return found

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        return [str(tool["name"]) for tool in body.get("tools") or [] if isinstance(tool, dict) and tool.get("name")]

    def _content(self, blocks: Sequence[Block], turn: int) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, Say):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, Call):
                arguments = block.arguments if not isinstance(block.arguments, str) else _loose(block.arguments)
                content.append({"type": "tool_use", "id": self.call_id(turn), "name": block.tool,
                                "input": arguments, "_raw": block.arguments_text()})
        return content

    def _message(self, body: dict[str, Any], content: list[dict[str, Any]], tokens_in: int,
                 tokens_out: int) -> dict[str, Any]:
        calls = any(block["type"] == "tool_use" for block in content)
        return {"id": self.next_id("msg"), "type": "message", "role": "assistant", "model": body.get("model") or "stub",
                "content": [{k: v for k, v in block.items() if k != "_raw"} for block in content],
                "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 0}}

    def events(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
               tokens_out: int) -> Iterator[tuple[str, dict[str, Any]]]:
        content = self._content(blocks, turn)
        message = self._message(body, content, tokens_in, tokens_out)
        start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
        yield "message_start", {"type": "message_start", "message": start}
        for index, block in enumerate(content):
            if block["type"] == "text":
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}}
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "text_delta", "text": block["text"]}}
            else:
                yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "input_json_delta", "partial_json": block["_raw"]}}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield "message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                "usage": {"output_tokens": tokens_out}}
        yield "message_stop", {"type": "message_stop"}

    def whole(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
              tokens_out: int) -> dict[str, Any]:
        return self._message(body, self._content(blocks, turn), tokens_in, tokens_out)


def _loose(text: str) -> Any:
    """Arguments given as text: their JSON when they are JSON, else the text (sent verbatim when streamed)."""
    try:
        return json.loads(text)
    except ValueError:
        return text
