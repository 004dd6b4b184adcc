"""The episode service of an exported Harbor task: one episode, played through its tools, judged step by step.

It runs beside the agent (in Docker, the task's `netarena` sidecar; on our provider, in the harness), never where the
agent's commands run. The agent acts only through it: over MCP at /mcp, or with the `netarena-act` command, which posts
one tool call to /act/TOOL. Every call is one step of the session, run in our boxes and judged for safety as in any
run. When the agent's phase ends, `write_verdict` ends the episode, judges it once and writes the verdict and the run
folder to a folder the agent never had (Harbor collects it as the sidecar's artifact for the separate verifier).
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..apps import get_app
from ..core.app import RunOptions
from ..core.errors import InfraError
from ..core.session import EpisodeSession
from ..core.tools import ToolCall
from ..core.types import Query
from ..reporting import artifacts
from ..run.plan import Traits, plan_episode

#: how a Harbor agent acts: a CLI agent in a shell, through the episode's tools (as commands or over MCP)
HARBOR_AGENT = Traits(interface="cli", needs_tools=True)
PORT = 8765
#: the verdict's files, in the folder the collect hook names
VERDICT_JSON, VERDICT_ENV = "verdict.json", "verdict.env"
#: the most bytes one /act request may carry (a tool call's arguments are capped far below this)
MAX_ACT_BYTES = 1 << 20


@dataclass(frozen=True)
class EpisodeFile:
    """What an exported task's service plays: the query (hidden parameters included), the run's options, a nonce
    binding its verdict to the task."""

    query: Query
    options: RunOptions
    nonce: str
    version: str = __version__

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {"netarena_version": self.version, "nonce": self.nonce, "query": self.query.to_dict(),
                "options": {"rules": o.rules, "max_steps": o.max_steps, "prompt_style": o.prompt_style,
                            "tool_calls": o.tool_calls, "extra": {k: v for k, v in o.extra.items() if v is not None}}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeFile:
        stored = data.get("options") or {}
        query = Query.from_dict(data["query"])
        options = RunOptions(seed=query.seed, queries=1, levels=(query.level,), max_steps=stored.get("max_steps"),
                             prompt_style=stored.get("prompt_style") or "zero-shot", extra=dict(stored.get("extra") or {}),
                             rules=stored.get("rules") or "default", tool_calls=stored.get("tool_calls") or "auto")
        return cls(query, options, str(data["nonce"]), str(data.get("netarena_version") or ""))

    @classmethod
    def read(cls, path: str | os.PathLike) -> EpisodeFile:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def new_nonce() -> str:
    return secrets.token_hex(16)


class EpisodeService:
    """One opened episode and how it is reached and ended."""

    def __init__(self, episode: EpisodeFile) -> None:
        self.episode = episode
        self.app = get_app(episode.query.app)
        self.env = self.app.make_environment(episode.options)
        try:
            self.plan = plan_episode(self.app, self.env, episode.options, HARBOR_AGENT)
            self.session = EpisodeSession(self.env, episode.query, self.plan.task, self.plan.config, "harbor:agent", 0,
                                          self.plan.interface)
            try:
                self.session.open()
            except InfraError:
                pass  # the session keeps it: its result is an infrastructure error, recorded like any episode
        except BaseException:
            self.env.close()
            raise
        self.closed = False

    def task_text(self) -> str:
        from ..mcp.server import task_text

        return task_text(self.session)

    def act(self, tool: str, arguments: Any) -> dict[str, Any]:
        """One tool call as one step: its observation, whether it failed, and the verdict once the episode is over."""
        from ..mcp.server import verdict_of, verdict_text

        if tool == "task":
            return {"text": self.task_text(), "is_error": False}
        if not isinstance(arguments, dict):
            return {"text": "the tool's arguments must be a JSON object", "is_error": True}
        result = self.session.call(ToolCall.of(tool, arguments, f"act-{len(self.session.episode.steps) + 1}"))
        answer: dict[str, Any] = {"text": result.content, "is_error": result.is_error}
        if self.session.over:
            judged = self.session.result()
            answer["text"] += "\n" + verdict_text(judged)
            answer["verdict"] = verdict_of(judged)
        return answer

    def write_verdict(self, folder: str | os.PathLike) -> dict[str, Any]:
        """End the episode (the agent's phase is over), judge it once and write the verdict and the run folder there;
        the environment is closed after. Calling it again rewrites the same verdict."""
        from ..mcp.server import verdict_of

        result = self.session.result()
        if not self.closed:
            self.closed = True
            self.env.close()
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        verdict = {"nonce": self.episode.nonce, "netarena_version": __version__, **verdict_of(result)}
        (out / VERDICT_JSON).write_text(json.dumps(verdict, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        # one key=value a line, so the verifier reads it with a shell alone
        lines = [f"{key}={'1' if value is True else '0' if value is False else value}" for key, value in
                 sorted(verdict.items()) if isinstance(value, (str, int, bool))]
        (out / VERDICT_ENV).write_text("\n".join(lines) + "\n", encoding="utf-8")
        run_dir = out / "run"
        if not (run_dir / "episodes.jsonl").exists():
            artifacts.write_run_info(run_dir, {"run_id": run_dir.name, "seed": self.episode.query.seed,
                                               "generator": "netarena harbor", "sandboxed": True,
                                               "agents": [result.agent], "options": self.episode.to_dict()["options"]})
            artifacts.append_episode(run_dir, result)
        return verdict

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.env.close()


def act_route(service: EpisodeService):
    """The ASGI app of /act/TOOL: a POST of the tool's arguments as a JSON object, answered as JSON."""
    import anyio

    from ..serving import plain

    async def app(scope: dict[str, Any], receive, send) -> None:
        if scope["method"] != "POST":
            await plain(send, 405, "POST the tool's arguments as a JSON object to /act/TOOL\n")
            return
        tool = scope["path"].removeprefix("/act").strip("/")
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_ACT_BYTES:
                await plain(send, 413, "too large\n")
                return
            if not message.get("more_body"):
                break
        try:
            arguments = json.loads(body or b"{}")
        except ValueError:
            await plain(send, 400, "the body must be a JSON object\n")
            return
        answer = await anyio.to_thread.run_sync(service.act, tool, arguments)
        data = json.dumps(answer).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})

    return app


def routes(service: EpisodeService, hosts: list[str]):
    """/mcp (the episode's MCP server, streamable HTTP) and /act, for the agent's network alone (no token: the
    agent is its only client, and everything it sends is a step)."""
    from ..mcp.asgi import Routes
    from ..mcp.server import build_server
    from ..mcp.transport import MCP_PATH, mcp_app

    mcp, lifespan = mcp_app(build_server(service.session), hosts, idle_s=3600.0, limit=MAX_ACT_BYTES)
    return Routes({MCP_PATH: mcp, "/act": act_route(service)}, lifespans=(lifespan,))
