"""bash in the place of Claude Code: the real profile's relay and listener, a script of the test's own in the box, and a
provider the test records every request of.

`BashClaude` is the Claude Code profile (its model calls, its key from ANTHROPIC_API_KEY) with the program swapped
for bash running a script; the script finds the box's listener in $MODEL_URL and the MCP token in $TOKEN. `Provider`
stands in for the model endpoint: any method, any path, each request recorded with its headers and body size.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.session import offered_tools
from pytest_netarena.core.types import EpisodeResult, Task
from pytest_netarena.mcp.cli_agent import CliAgent
from pytest_netarena.mcp.clis import ClaudeCode, Launch, Report

#: bash lines every script starts with: the listener's port, and `ask METHOD TARGET [HEADER-LINES]` printing
#: "ASKED METHOD TARGET -> STATUS-LINE" for one request with a two-byte JSON body on a fresh connection
PRELUDE = r"""
trap '' PIPE
rest=${MODEL_URL#http://127.0.0.1:}; port=${rest%%/*}
ask() {
  exec {c}<>/dev/tcp/127.0.0.1/$port || { echo "ASKED $1 $2 -> no connection"; return; }
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nx-api-key: placeholder\r\ncontent-type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n%s\r\n{}' "$1" "$2" "$port" "$3" >&$c
  local status=""; read -r -t 20 status <&$c
  echo "ASKED $1 $2 -> ${status%$'\r'}"
  exec {c}>&-
}
"""


class BashClaude(ClaudeCode):
    """Claude Code's profile, running a bash script in its box instead of the CLI; `output` keeps what it printed."""

    def __init__(self, folder: Path, script: str) -> None:
        self.folder, self.script, self.output = folder, script, ""

    def locate(self):
        return self.folder, f"{self.mount}/bash"

    def launch(self, model, system_prompt, prompt, model_url, mcp_url, token, tool_timeout_s) -> Launch:
        return Launch((f"{self.mount}/bash", "-c", PRELUDE + self.script),
                      {"MODEL_URL": model_url, "MCP_URL": mcp_url, "TOKEN": token}, {})

    def read(self, output: str, model) -> Report:
        self.output = output
        return Report()


def program_folder(tmp_path: Path) -> Path:
    """A folder holding bash and sleep, readable by the box's private uid."""
    folder = tmp_path / "cli"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    tmp_path.chmod(0o755)
    for program in ("bash", "sleep"):
        shutil.copy2(shutil.which(program), folder / program)
    return folder


def play(toy_app, folder: Path, script: str, api_base: str, **agent_attributes) -> tuple[BashClaude, EpisodeResult]:
    """One toy episode with bash as the CLI; (its profile, holding the output, and the episode's result)."""
    from pytest_netarena.core.app import RunOptions

    profile = BashClaude(folder, script)
    agent = CliAgent(profile, api_base=api_base, timeout_s=60)
    for name, value in agent_attributes.items():
        setattr(agent, name, value)
    query = toy_app.APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
    env = toy_app.APP.make_environment(RunOptions())
    task = Task("toy", "e1", "You control a counter.", "zero-shot", 3, offered_tools(env))
    return profile, run_episode(env, agent, query, task, EpisodeConfig(max_steps=3, agent_timeout_s=60), "cli:bash")


@dataclass
class Seen:
    """One request the provider received."""

    method: str
    target: str
    headers: dict[str, str]
    size: int
    at: float = field(default_factory=time.monotonic)


class Provider:
    """A model endpoint on 127.0.0.1 that answers every request 200 and records it; its body is read and dropped."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def answer(self) -> None:
                size = 0
                if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
                    while True:
                        length = int(self.rfile.readline().split(b";")[0] or b"0", 16)
                        if not length:
                            self.rfile.readline()
                            break
                        size += len(self.rfile.read(length))
                        self.rfile.readline()
                else:
                    left = int(self.headers.get("Content-Length") or 0)
                    while left:
                        chunk = self.rfile.read(min(left, 1 << 16))
                        if not chunk:
                            break
                        size, left = size + len(chunk), left - len(chunk)
                provider.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                          size))
                body = b'{"ok": true}'
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the relay gave up on the request (the box sent too much, or left)
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Provider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
