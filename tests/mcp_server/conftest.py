"""Fixtures of the MCP tests: `netarena mcp` as a subprocess, the same actions through a python driving agent, and
sessions of the toy app served in-process to the official MCP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.session import EpisodeSession, offered_tools
from pytest_netarena.core.tools import ToolCall
from pytest_netarena.core.types import EpisodeResult, Task

ROOT = Path(__file__).parents[2]
PLUGIN = ROOT / "tests" / "plugin"
#: the k8s episode the protocol tests play (`oracle_calls` resolves it)
SERVE = ("mcp", "--app", "k8s", "--seed", "3", "--levels", "1")


def netarena_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest_netarena.cli", *args]


def server_env() -> dict[str, str]:
    """The environment of a `netarena mcp` subprocess: this checkout first on the path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def run_folder(out: Path) -> tuple[dict, dict, dict]:
    """(the episode's record, run.json, summary.json) of the one run folder under out."""
    (folder,) = [path for path in out.iterdir() if path.is_dir()]
    lines = (folder / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 1
    return (json.loads(lines[0]), json.loads((folder / "run.json").read_text()),
            json.loads((folder / "summary.json").read_text()))


class CallsAgent:
    """A python: driving agent: makes the given calls through the session, then finish."""

    def __init__(self, calls: Sequence[tuple[str, dict]]) -> None:
        self.calls = list(calls)

    def reset(self, task: Task) -> None:
        self.task = task

    def drive(self, session: EpisodeSession) -> None:
        for number, (name, arguments) in enumerate(self.calls, 1):
            session.call(ToolCall.of(name, arguments, f"call-{number}"))
        session.finish(ToolCall.of("finish", {"summary": "done"}))

    def close(self) -> None:
        pass


def play_python(app, env, query, options, calls: Sequence[tuple[str, dict]]) -> EpisodeResult:
    """The same calls played through a python driving agent, with the task netarena mcp gives."""
    max_steps = options.max_steps or env.default_max_steps
    task = Task(app.name, "e1", build_system_prompt(app.prompt_for(options), options.prompt_style, max_steps, tools=True),
                options.prompt_style, max_steps, offered_tools(env))
    return run_episode(env, CallsAgent(calls), query, task, EpisodeConfig(max_steps=max_steps), "python:calls")


def steps_of(record: dict | EpisodeResult) -> list[tuple]:
    """What must match between two interfaces: each step's call, action, refusal and violations."""
    steps = record["steps"] if isinstance(record, dict) else [s.__dict__ for s in record.steps]
    found = []
    for step in steps:
        call = step["tool_call"]
        call = call if isinstance(call, dict) else call.to_dict()
        found.append((call["name"], json.loads(call["arguments"] or "{}"), step["action"], step["refused"],
                      tuple(step["violations"])))
    return found


@pytest.fixture
def toy_app(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    import toy_app

    return toy_app


@pytest.fixture
def toy_session(toy_app) -> Callable[..., EpisodeSession]:
    """toy_session(max_steps=3): an opened session of the toy app's first query, offering its tools."""
    from pytest_netarena.core.app import RunOptions

    def make(max_steps: int = 3) -> EpisodeSession:
        query = toy_app.APP.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
        env = toy_app.APP.make_environment(RunOptions())
        task = Task("toy", "e1", "You control a counter.", "zero-shot", max_steps, offered_tools(env))
        session = EpisodeSession(env, query, task, EpisodeConfig(max_steps=max_steps), "mcp:test", 0, "mcp")
        session.open()
        return session

    return make


@asynccontextmanager
async def connected(session: EpisodeSession):
    """The official MCP client (2.x) connected in memory to the session's server; yields (client, activity)."""
    from mcp import Client

    from pytest_netarena.mcp.server import Activity, build_server

    activity = Activity()
    async with Client(build_server(session, activity)) as client:
        yield client, activity


def start_http_server(*args: str, out: Path) -> tuple[subprocess.Popen, str, str]:
    """`netarena mcp --http 127.0.0.1:0 ...` started; (process, URL, token) once it says where it serves."""
    process = subprocess.Popen(netarena_argv("mcp", "--http", "127.0.0.1:0", "--out", str(out), *args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env())
    url = token = ""
    assert process.stdout is not None
    while not (url and token):
        line = process.stdout.readline()
        if not line:
            process.kill()
            raise AssertionError(f"netarena mcp ended before serving: {process.stderr.read() if process.stderr else ''}")
        if "serving " in line:
            url = line.split("serving ", 1)[1].strip()
        elif "bearer token " in line:
            token = line.split("bearer token ", 1)[1].strip()
    return process, url, token


def installed_cli(name: str):
    """The profile of CLI agent `name`, installed from npm at its pinned version (cached outside the repository);
    skips, saying why, when boxes, npm or the registry are missing here."""
    from pytest_netarena.core.errors import UsageError
    from pytest_netarena.mcp.clis import PROFILES
    from pytest_netarena.mcp.install import install
    from pytest_netarena.sandbox import support

    if not support().ok:
        pytest.skip(f"CLI agents run in sealed boxes, which cannot be made here: {support().reason}")
    profile = PROFILES[name]()
    try:
        install(profile.package, profile.version)
    except UsageError as error:
        pytest.skip(f"cannot install cli:{name} here: {error}")
    return profile


@pytest.fixture(scope="module")
def oracle_calls() -> list:
    """The calls that resolve the k8s episode `netarena mcp` serves for seed 3 at level 1 (the oracle's commands)."""
    from pytest_netarena.apps import get_app
    from pytest_netarena.apps.k8s.agents.builtin import OracleAgent
    from pytest_netarena.mcp.episode import ServeConfig, pick_query

    config = ServeConfig(app="k8s", seed=3, levels=(1,))
    app, options = get_app("k8s"), config.run_options()
    query = pick_query(app, options)
    env = app.make_environment(options)
    try:
        return [["run_kubectl", {"command": command}] for command, _ in OracleAgent(query, env).commands]
    finally:
        env.close()
