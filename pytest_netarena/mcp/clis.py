"""The CLI agents we know how to run: where each is installed, its non-interactive command line, its usage report.

A `CliProfile` says, for one CLI: which npm package and pinned version it comes from and where its program
lies in that package; the argv and environment of one non-interactive run against a model URL and an
MCP URL (both inside its box) with every built-in shell, file and web tool off; which API it speaks,
which model calls it makes (the relay forwards those alone), and where the real endpoint and key
come from; and how to read token usage and cost from its machine-readable output. Any other CLI that speaks MCP plugs in as a subclass (docs/agents.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..core.types import Usage
from .install import installed_dir
from .relay import ModelCall

#: the server name the CLI knows our MCP server by (its tools appear as mcp__netarena__<tool>)
SERVER = "netarena"
#: the environment variable holding the bearer token of the MCP server, inside the box
TOKEN_ENV = "NETARENA_MCP_TOKEN"
#: the placeholder key the box holds (the relay puts the real one on each request)
PLACEHOLDER_KEY = "netarena-relay-placeholder"
#: the model calls of an OpenAI Responses CLI, under its API base (Codex 0.169 makes only the POST, driven against
#: our stub; it lists models on a provider that offers it)
RESPONSES_CALLS = (ModelCall("POST", "/responses"), ModelCall("GET", "/models", ("client_version",)))
#: the model calls of an Anthropic Messages CLI (Claude Code 2.1 posts /v1/messages?beta=true; it counts tokens and
#: lists models on some paths)
MESSAGES_CALLS = (ModelCall("POST", "/v1/messages", ("beta",)),
                  ModelCall("POST", "/v1/messages/count_tokens", ("beta",)),
                  ModelCall("GET", "/v1/models", ("beta", "limit")))


@dataclass(frozen=True)
class Report:
    """What a CLI's output says about its run."""

    usage: Usage = Usage()
    final: str = ""  #: its last message
    errors: tuple[str, ...] = ()  #: errors it reported (API errors, failed turns)


@dataclass(frozen=True)
class Launch:
    """One run of a CLI in its box."""

    argv: tuple[str, ...]
    env: dict[str, str]
    files: dict[str, bytes]


class CliProfile:
    """One CLI agent (subclass it to add another)."""

    name = ""  #: as in --agent=cli:NAME
    package = ""  #: npm package
    version = ""  #: the pinned version
    api = ""  #: "openai-responses" or "anthropic-messages": what the model relay forwards
    default_base = ""  #: the provider's API base when --llm-api-base is not given
    model_calls: tuple[ModelCall, ...] = ()  #: the requests the relay forwards to the API base; any other is 403
    key_env: tuple[str, ...] = ()  #: environment variables of the harness that may hold the provider key
    mount = "/usr/share/cli-agent"  #: where the program folder appears in the box (a parent the box makes 0755)

    def program(self, root: Path) -> tuple[Path, str]:
        """(the host folder to bind, the program's path inside the box) for an install under `root`."""
        raise NotImplementedError

    def launch(self, model: str | None, system_prompt: str, prompt: str, model_url: str, mcp_url: str,
               token: str, tool_timeout_s: float) -> Launch:
        raise NotImplementedError

    def credentials(self) -> dict[str, str]:
        """The headers the relay puts on each model request ({} when no key is set: a local endpoint)."""
        raise NotImplementedError

    def read(self, output: str, model: str | None) -> Report:
        raise NotImplementedError

    def locate(self) -> tuple[Path, str]:
        """The installed program: $NETARENA_CLI_<NAME> (a package install folder), else the pinned npm cache."""
        override = os.environ.get(f"NETARENA_CLI_{self.name.upper().replace('-', '_')}")
        return self.program(Path(override) if override else installed_dir(self.package, self.version))

    def key(self) -> str:
        return next((os.environ[name] for name in self.key_env if os.environ.get(name)), "")


def _json_lines(output: str) -> list[dict]:
    found = []
    for line in output.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class Codex(CliProfile):
    """OpenAI's Codex CLI (`codex exec`), speaking the Responses API."""

    name = "codex"
    package = "@openai/codex"
    version = "0.169.0"
    api = "openai-responses"
    default_base = "https://api.openai.com/v1"
    model_calls = RESPONSES_CALLS
    key_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    #: built-in tools and features switched off: shell, exec sessions, images, sub-agents, goals, apps, plugins
    DISABLED = ("unified_exec", "shell_tool", "view_image", "multi_agent", "goals", "image_generation", "apps",
                "plugins", "hooks", "memories", "tool_suggest", "computer_use", "browser_use", "in_app_browser")

    def program(self, root: Path) -> tuple[Path, str]:
        vendor = root / "node_modules" / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl"
        return vendor, f"{self.mount}/bin/codex"

    def launch(self, model, system_prompt, prompt, model_url, mcp_url, token, tool_timeout_s) -> Launch:
        _, program = self.locate()
        settings = {
            "model_provider": '"netarena"',
            "model_providers.netarena.name": '"netarena"',
            "model_providers.netarena.base_url": json.dumps(model_url),
            "model_providers.netarena.wire_api": '"responses"',
            "model_providers.netarena.env_key": '"OPENAI_API_KEY"',
            "model_providers.netarena.request_max_retries": "2",
            "model_providers.netarena.stream_max_retries": "2",
            "mcp_servers.netarena.url": json.dumps(mcp_url),
            "mcp_servers.netarena.bearer_token_env_var": json.dumps(TOKEN_ENV),
            "mcp_servers.netarena.default_tools_approval_mode": '"approve"',
            "mcp_servers.netarena.startup_timeout_sec": "60",
            "mcp_servers.netarena.tool_timeout_sec": str(int(tool_timeout_s) + 1),
            "web_search": '"disabled"',
            "tools.experimental_request_user_input.enabled": "false",
            "analytics.enabled": "false",
            "feedback.enabled": "false",
            "check_for_update_on_startup": "false",
            "history.persistence": '"none"',
            "project_doc_max_bytes": "0",
            "skills.include_instructions": "false",
            "developer_instructions": json.dumps(system_prompt),
        }
        argv = [program, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--ignore-rules",
                "--sandbox", "read-only", "--color", "never"]
        for feature in self.DISABLED:
            argv += ["--disable", feature]
        for key, value in settings.items():
            argv += ["-c", f"{key}={value}"]
        if model:
            argv += ["--model", model]
        argv += ["--", prompt]
        env = {"OPENAI_API_KEY": PLACEHOLDER_KEY, TOKEN_ENV: token,
               "NO_COLOR": "1", "RUST_LOG": "error"}
        return Launch(tuple(argv), env, {})

    def credentials(self) -> dict[str, str]:
        key = self.key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def read(self, output, model) -> Report:
        tokens_in = tokens_out = cached = 0
        final, errors = "", []
        for event in _json_lines(output):
            kind = event.get("type")
            if kind == "turn.completed" and isinstance(event.get("usage"), dict):
                usage = event["usage"]
                tokens_in += _count(usage.get("input_tokens"))
                cached += _count(usage.get("cached_input_tokens"))
                tokens_out += _count(usage.get("output_tokens"))
            elif kind == "item.completed" and isinstance(event.get("item"), dict):
                item = event["item"]
                if item.get("type") == "agent_message":
                    final = str(item.get("text") or "")
            elif kind in ("turn.failed", "error"):
                given = event.get("error")
                error = given if isinstance(given, dict) else event
                errors.append(str(error.get("message") or kind)[:500])
        from ..agents.openai_http import price

        cost = price(model or "", model or "", tokens_in, tokens_out, cached) if model else 0.0
        return Report(Usage(tokens_in, tokens_out, cost), final, tuple(errors))


class ClaudeCode(CliProfile):
    """Anthropic's Claude Code (`claude -p`), speaking the Messages API."""

    name = "claude-code"
    package = "@anthropic-ai/claude-code"
    version = "2.1.328"
    api = "anthropic-messages"
    default_base = "https://api.anthropic.com"
    model_calls = MESSAGES_CALLS
    key_env = ("ANTHROPIC_API_KEY",)

    def program(self, root: Path) -> tuple[Path, str]:
        return root / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64", f"{self.mount}/claude"

    def launch(self, model, system_prompt, prompt, model_url, mcp_url, token, tool_timeout_s) -> Launch:
        _, program = self.locate()
        servers = {"mcpServers": {SERVER: {"type": "http", "url": mcp_url,
                                           "headers": {"Authorization": f"Bearer {token}"}}}}
        argv = [program, "--print", "--output-format", "stream-json", "--verbose", "--bare", "--tools", "",
                "--strict-mcp-config", "--mcp-config", json.dumps(servers), "--allowedTools", f"mcp__{SERVER}",
                "--permission-prompts", "none", "--disable-slash-commands", "--no-session-persistence",
                "--setting-sources", "", "--system-prompt", system_prompt]
        if model:
            argv += ["--model", model]
        argv += ["--", prompt]
        env = {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": PLACEHOLDER_KEY,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
               "MCP_TOOL_TIMEOUT": str(int(tool_timeout_s * 1000) + 1000), "MCP_TIMEOUT": "60000", "NO_COLOR": "1"}
        return Launch(tuple(argv), env, {})

    def credentials(self) -> dict[str, str]:
        key = self.key()
        return {"x-api-key": key} if key else {}

    def read(self, output, model) -> Report:
        usage, final, errors = Usage(), "", []
        for event in _json_lines(output):
            if event.get("type") != "result":
                continue
            given = event.get("usage")
            counts = given if isinstance(given, dict) else {}
            tokens_in = sum(_count(counts.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                                            "cache_read_input_tokens"))
            cost = event.get("total_cost_usd")
            cost = float(cost) if isinstance(cost, (int, float)) and cost >= 0 else 0.0
            usage = usage + Usage(tokens_in, _count(counts.get("output_tokens")), cost)
            final = str(event.get("result") or "")
            if event.get("is_error"):
                errors.append(final[:500] or str(event.get("subtype")))
        return Report(usage, final, tuple(errors))


PROFILES: dict[str, type[CliProfile]] = {"codex": Codex, "claude-code": ClaudeCode}
