"""Agent interfaces: the cost per step of the tool and MCP paths against the text path, and a CLI agent's start.

    python benchmarks/interfaces.py [--steps 20] [--clis codex claude-code] [--runs 3] [--install-time]

1. Cost per step (k8s, the same read-only `kubectl get networkpolicy` every step): the text path (a python
   agent's reply read and run by run_episode), the tool path (the same agent answering with a native tool
   call) and the MCP path (the official MCP client calling `netarena mcp` over stdio, timed from the call's
   send to its result). All run the action in the same box; the ratios are what the interface adds.
2. CLI start (k8s): for each CLI agent, the time from spawning it in its box to its first tool call reaching
   our MCP server, with our stub of its API answering at once (so the figure is the CLI's own start-up and
   MCP handshake, not a model's latency), and the whole run.
3. --install-time: `npm install` of each pinned CLI into an empty cache (downloads; the first CI run pays it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

COMMAND = "kubectl get networkpolicy"


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.1f} ms (n={len(samples)})"


def text_path(steps: int, tools: bool = False) -> list[float]:
    from pytest_netarena.agents.prompting import build_system_prompt
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.session import offered_tools
    from pytest_netarena.core.tools import ToolCall
    from pytest_netarena.core.types import Reply, Task

    class Reader:
        def reset(self, task):
            pass

        def act(self, observation):
            if tools:
                return Reply("", tool_calls=(ToolCall.of("run_kubectl", {"command": COMMAND}, "c1"),))
            return f"```bash\n{COMMAND}\n```"

        def close(self):
            pass

    options = RunOptions(seed=3, queries=1, levels=(1,), max_steps=steps)
    query = APP.generate(options)[0]
    env = APP.make_environment(options)
    try:
        offered = offered_tools(env) if tools else ()
        task = Task("k8s", "b", build_system_prompt(APP.prompt_for(options), "zero-shot", steps), "zero-shot", steps,
                    offered)
        result = run_episode(env, Reader(), query, task, EpisodeConfig(max_steps=steps), "python:bench")
        assert result.interface == ("tools" if tools else "text") and len(result.steps) == steps, result.details
    finally:
        env.close()
    return [step.exec_s + step.check_s for step in result.steps]  # reading the reply, the boxed action, the checks


def mcp_path(steps: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    async def play() -> list[float]:
        with tempfile.TemporaryDirectory() as out:
            params = StdioServerParameters(command=sys.executable, args=[
                "-m", "pytest_netarena.cli", "mcp", "--app", "k8s", "--seed", "3", "--levels", "1",
                "--max-steps", str(steps + 1), "--out", out])
            async with Client(params) as client:
                took = []
                for _ in range(steps):
                    started = time.perf_counter()
                    await client.call_tool("run_kubectl", {"command": COMMAND})
                    took.append(time.perf_counter() - started)
                await client.call_tool("finish", {})
                return took

    return asyncio.run(play())


def cli_start(name: str, runs: int) -> tuple[list[float], list[float]]:
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.episode import EpisodeConfig, run_episode
    from pytest_netarena.core.session import offered_tools
    from pytest_netarena.core.types import Task
    from pytest_netarena.mcp.cli_agent import CliAgent
    from pytest_netarena.mcp.clis import PROFILES
    from pytest_netarena.testing.messages_stub import MessagesStub
    from pytest_netarena.testing.responses_stub import ResponsesStub
    from pytest_netarena.testing.scripted_models import Call, Say

    profile = PROFILES[name]()
    stub_kind, base, model = (MessagesStub, "", "claude-sonnet-4-5") if name == "claude-code" else \
        (ResponsesStub, "/v1", "gpt-5")
    options = RunOptions(seed=3, queries=1, levels=(1,))
    query = APP.generate(options)[0]
    env = APP.make_environment(options)
    starts, wholes = [], []
    try:
        for _ in range(runs):
            with stub_kind([[Call("run_kubectl", {"command": COMMAND})], [Call("finish")], [Say("done")]]) as stub:
                agent = CliAgent(profile, model, stub.url + base, 120)
                task = Task("k8s", "b", "Fix the network.", "zero-shot", 5, offered_tools(env))
                run_episode(env, agent, query, task, EpisodeConfig(max_steps=5), f"cli:{name}")
            starts.append(float(agent.last_run["start_to_first_call_s"]))
            wholes.append(float(agent.last_run["elapsed_s"]))
    finally:
        env.close()
    return starts, wholes


def install_time(name: str) -> float:
    from pytest_netarena.mcp.clis import PROFILES
    from pytest_netarena.mcp.install import install

    profile = PROFILES[name]()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NETARENA_NPM_CACHE"] = cache
        started = time.perf_counter()
        install(profile.package, profile.version)
        took = time.perf_counter() - started
    os.environ.pop("NETARENA_NPM_CACHE")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clis", nargs="*", default=["codex", "claude-code"])
    parser.add_argument("--install-time", action="store_true")
    args = parser.parse_args()
    text = text_path(args.steps)
    tool = text_path(args.steps, tools=True)
    mcp = mcp_path(args.steps)
    print(f"k8s step, text path (reply read and run): {_ms(text)}")
    print(f"k8s step, tool path (a native tool call checked and run): {_ms(tool)}")
    print(f"  tools / text cost per step: {statistics.median(tool) / statistics.median(text):.2f}x "
          f"({(statistics.median(tool) - statistics.median(text)) * 1000:+.1f} ms)")
    print(f"k8s step, MCP path (official client over stdio, send to result): {_ms(mcp)}")
    print(f"  MCP / text cost per step: {statistics.median(mcp) / statistics.median(text):.2f}x "
          f"({(statistics.median(mcp) - statistics.median(text)) * 1000:+.1f} ms)")
    for name in args.clis:
        from pytest_netarena.mcp.clis import PROFILES

        folder, _ = PROFILES[name]().locate()
        if not Path(folder).is_dir():
            print(f"cli:{name}: not installed (netarena cli-agents install {name}); skipped")
            continue
        starts, wholes = cli_start(name, args.runs)
        print(f"cli:{name}: spawn to first tool call {_ms(starts)}; whole run (2 model turns) {_ms(wholes)}")
        if args.install_time:
            print(f"cli:{name}: npm install into an empty cache {install_time(name):.1f} s")


if __name__ == "__main__":
    main()
