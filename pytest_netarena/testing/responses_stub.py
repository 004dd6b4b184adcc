"""A scripted OpenAI Responses API (POST /v1/responses, streamed as SSE) as the Codex CLI calls it.

    with ResponsesStub([[Call("run", {"command": "kubectl get pods"})], [Say("fixed")]]) as model:
        # codex exec -c model_providers.stub.base_url="<model.url>/v1" -c model_providers.stub.wire_api="responses" ...
        assert model.requests[1].body["input"][-1]["type"] == "function_call_output"

Codex offers an MCP server's tools as a `namespace` tool (`mcp__<server>`) holding plain functions; a
call into it names the function and its namespace, as the real API answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .scripted_models import Block, Call, ScriptedModel, Say


class ResponsesStub(ScriptedModel):
    """The OpenAI Responses API, streaming and not."""

    api = "OpenAI Responses"

    def handles(self, path: str) -> bool:
        return path in ("/v1/responses", "/responses")

    def call_ids(self, body: dict[str, Any]) -> list[str]:
        given = body.get("input")
        items = given if isinstance(given, list) else []
        return [str(item.get("call_id")) for item in items
                if isinstance(item, dict) and item.get("type") in ("function_call", "function_call_output")]

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        names = []
        for tool in body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                names += [f"{tool.get('name')}.{inner.get('name')}" for inner in tool.get("tools") or []
                          if isinstance(inner, dict)]
            elif tool.get("name"):
                names.append(str(tool["name"]))
        return names

    def _items(self, blocks: Sequence[Block], turn: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, Say):
                items.append({"type": "message", "id": self.next_id("msg"), "role": "assistant", "status": "completed",
                              "content": [{"type": "output_text", "text": block.text, "annotations": []}]})
            elif isinstance(block, Call):
                namespace, dot, name = block.tool.rpartition(".")
                item = {"type": "function_call", "id": self.next_id("fc"), "call_id": self.call_id(turn),
                        "name": name if dot else block.tool, "arguments": block.arguments_text(),
                        "status": "completed"}
                if dot:
                    item["namespace"] = namespace
                items.append(item)
        return items

    def _response(self, body: dict[str, Any], response_id: str, status: str, output: list[dict[str, Any]],
                  tokens_in: int, tokens_out: int) -> dict[str, Any]:
        response: dict[str, Any] = {"id": response_id, "object": "response", "status": status,
                                    "model": body.get("model") or "stub", "output": output}
        if status == "completed":
            response["usage"] = {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0},
                                 "output_tokens": tokens_out, "output_tokens_details": {"reasoning_tokens": 0},
                                 "total_tokens": tokens_in + tokens_out}
        return response

    def events(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
               tokens_out: int) -> Iterator[tuple[str, dict[str, Any]]]:
        response_id = self.next_id("resp")
        sequence = iter(range(1 << 30))

        def event(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
            return kind, {"type": kind, "sequence_number": next(sequence), **data}

        yield event("response.created", response=self._response(body, response_id, "in_progress", [], 0, 0))
        yield event("response.in_progress", response=self._response(body, response_id, "in_progress", [], 0, 0))
        items = self._items(blocks, turn)
        for index, item in enumerate(items):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield event("response.output_item.added", output_index=index, item={**item, "content": [],
                                                                                     "status": "in_progress"})
                yield event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                            part={"type": "output_text", "text": "", "annotations": []})
                yield event("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                            delta=text)
                yield event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                            text=text)
                yield event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                            part=item["content"][0])
            else:
                yield event("response.output_item.added", output_index=index,
                            item={**item, "arguments": "", "status": "in_progress"})
                yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                            delta=item["arguments"])
                yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                            arguments=item["arguments"])
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed",
                    response=self._response(body, response_id, "completed", items, tokens_in, tokens_out))

    def whole(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
              tokens_out: int) -> dict[str, Any]:
        return self._response(body, self.next_id("resp"), "completed", self._items(blocks, turn), tokens_in,
                              tokens_out)
