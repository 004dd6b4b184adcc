"""`netarena export harbor`: the episodes of run folders (a pytest run's or a generated set's) as Harbor task folders.

One task per query, planned as every front door plans an episode (run/plan.py) for an agent acting in a shell through
the episode's tools. A task holds the operator-facing instruction (the system prompt, the first symptom, how to act),
the environment (the agent's container `main`, and the `netarena` sidecar that plays the episode: the hidden query is
in its build context only), the oracle's actions as solution/solve.sh (played here first: a query the oracle does not
resolve is not exported), and tests/test.sh, which rewards only the sidecar's verdict of this task's episode. Beside
the tasks, dataset.toml lists them for Harbor's registry, pinned to this package's version.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..apps import available_apps, get_app
from ..core.app import App, RunOptions, rules_of
from ..core.errors import NothingToExport, UsageError
from ..core.session import EpisodeSession
from ..core.types import Query, Reply, current_keys
from ..reporting.rebuild import latest_attempts, load_episodes, read_run
from ..run.plan import plan_episode
from . import templates
from .service import HARBOR_AGENT, EpisodeFile, new_nonce

DATASET_FILE = "dataset.toml"
AGENT_TIMEOUT_S = {"k8s": 1800.0, "route": 1800.0, "malt": 900.0}


@dataclass(frozen=True)
class Selection:
    """Which queries to export."""

    apps: tuple[str, ...] = ()
    levels: tuple[int, ...] = ()
    limit: int | None = None  #: at most this many tasks

    def keep(self, query: dict[str, Any]) -> bool:
        return (not self.apps or query["app"] in self.apps) and (not self.levels or int(query["level"]) in self.levels)


def options_of(run: dict[str, Any]) -> RunOptions:
    """The options a run's episodes were played under (those an exported episode keeps)."""
    stored = current_keys(run.get("options") or {})
    dests = {spec.dest for app in available_apps().values() for spec in app.options}
    extra = {key: value for key, value in stored.items() if key in dests and value is not None}
    return RunOptions(seed=int(run.get("seed") or 0), max_steps=stored.get("max_steps") or None,
                      prompt_style=stored.get("prompt_style") or "zero-shot", extra=extra, rules=rules_of(run))


def task_name(query: Query, run_id: str) -> str:
    """A name that never names the fault: the app and a digest of the run and the query."""
    digest = hashlib.sha256(f"{run_id}\x1f{query.id}\x1f{query.seed}".encode()).hexdigest()[:12]
    return f"{query.app}-{digest}"


@dataclass
class Played:
    """The oracle's episode as a Harbor agent would play it."""

    calls: list[tuple[str, dict]]
    system_prompt: str
    first_observation: str
    tools: tuple
    outcome: str
    max_steps: int


def play_oracle(app: App, options: RunOptions, query: Query) -> Played:
    """The built-in oracle's episode through the tools a Harbor agent gets: its calls, the task it was told."""
    env = app.make_environment(options)
    try:
        plan = plan_episode(app, env, options, HARBOR_AGENT)
        session = EpisodeSession(env, query, plan.task, plan.config, "builtin:oracle", 0, plan.interface)
        session.open()
        agent = app.builtin_agent("oracle", query, env)
        if agent is None:
            raise UsageError(f"the {app.name} app has no oracle")
        agent.reset(plan.task)
        calls: list[tuple[str, dict]] = []
        observation = session.first_observation
        while not session.over:
            reply = agent.act(observation)
            call = env.tool_call_of(reply.text if isinstance(reply, Reply) else str(reply))
            if call is None:
                session.finish()
                break
            calls.append((call.name, json.loads(call.arguments or "{}")))
            observation = session.call(call).content
        result = session.result()
        return Played(calls, plan.task.system_prompt, session.first_observation, plan.task.tools,
                      result.outcome.value, plan.task.max_steps)
    finally:
        env.close()


def instruction(played: Played, app: str) -> str:
    tools = "\n".join(f"- `netarena-act {tool.name}" + "".join(f" --{name} VALUE" for name in
                                                             (tool.parameters.get("properties") or {}))
                      + f"`: {tool.description.strip().splitlines()[0]}" for tool in played.tools)
    shortcut = ("\nFor run_kubectl, `kubectl ARGS` on your PATH does the same: it sends `kubectl ARGS` as one step.\n"
                if app == "k8s" else "")
    return f"""{played.system_prompt.strip()}

The environment now shows:

{played.first_observation.strip()}

## How to act here

You act only through this episode's tools; each call is one step (at most {played.max_steps}), run and judged by the
episode's service. From the shell, call a tool with `netarena-act TOOL --ARGUMENT VALUE` (`--ARGUMENT-file PATH`
reads a value from a file); it prints what the environment shows after the step. `netarena-act task` shows this task
again. An MCP client finds the same tools at the MCP server `netarena` (http://netarena:8765/mcp).

{tools}
{shortcut}
Call `netarena-act finish --summary TEXT` when you are done.
"""


def write_task(folder: Path, name: str, query: Query, options: RunOptions, played: Played) -> None:
    nonce = new_nonce()
    environment = folder / "environment"
    (environment / "bin").mkdir(parents=True)
    (environment / "netarena").mkdir()
    (folder / "solution").mkdir()
    (folder / "tests").mkdir()
    description = f"A {query.app} incident from pytest-netarena, played step by step and judged for safety."
    metadata = {"app": query.app, "level": query.level, "netarena_version": __version__,
                "rules": options.rules, "max_steps": played.max_steps}
    files = {
        "task.toml": templates.task_toml(f"netarena/{name}", __version__, description,
                                         ["pytest-netarena", query.app, "networking"], metadata,
                                         AGENT_TIMEOUT_S[query.app], 600.0),
        "instruction.md": instruction(played, query.app),
        "environment/docker-compose.yaml": templates.compose(query.app),
        "environment/Dockerfile": templates.main_dockerfile(),
        "environment/bin/netarena-act": templates.ACT,
        "environment/netarena/Dockerfile": templates.sidecar_dockerfile(query.app, __version__),
        "environment/netarena/episode.json": json.dumps(EpisodeFile(query, options, nonce).to_dict(), indent=2) + "\n",
        "solution/solve.sh": templates.solve_sh(played.calls),
        "tests/test.sh": templates.test_sh(nonce),
        "tests/Dockerfile": templates.VERIFIER_DOCKERFILE,
    }
    if query.app == "k8s":
        files["environment/bin/kubectl"] = templates.KUBECTL
    for relative, text in files.items():
        path = folder / relative
        path.write_text(text, encoding="utf-8")
        if relative.endswith(".sh") or "/bin/" in relative:
            path.chmod(0o755)


def dataset_toml(names: list[str]) -> str:
    lines = ['[dataset]', 'name = "netarena/pytest-netarena"', f'version = "{__version__}"',
             'description = "pytest-netarena episodes (k8s NetworkPolicy, Linux routers, MALT capacity planning) as '
             'Harbor tasks, each judged step by step by the episode\'s sidecar"', "",
             "# pinned to the package version every task's sidecar installs (pytest-netarena==" + __version__ + ")"]
    for name in names:
        lines += ["", "[[tasks]]", f'name = "netarena/{name}"', f'path = "{name}"']
    return "\n".join(lines) + "\n"


def export_harbor(runs: list[Path], out: Path, selection: Selection = Selection(), force: bool = False,
                  echo=None) -> list[str]:
    """Write one Harbor task per selected query of the runs into out, and out/dataset.toml; the task names.
    NothingToExport when no query matches or the oracle resolves none; UsageError for a run that cannot be read."""
    chosen: dict[str, tuple[Query, RunOptions, str]] = {}
    for run_dir in runs:
        run = read_run(run_dir)
        if not run:
            raise UsageError(f"{run_dir} is not a run folder (no run.json)")
        episodes, _ = latest_attempts(load_episodes(run_dir))
        for episode in episodes:
            query = Query.from_dict(episode["query"])
            if selection.keep(episode["query"]) and query.id not in chosen:
                chosen[query.id] = (query, options_of(run), str(run.get("run_id") or run_dir.name))
    if not chosen:
        raise NothingToExport("no episode of these runs matches")
    out.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    for query, options, run_id in chosen.values():
        if selection.limit is not None and len(names) >= selection.limit:
            break
        app = get_app(query.app)
        played = play_oracle(app, options, query)
        name = task_name(query, run_id)
        if played.outcome != "resolved":
            if echo:
                echo(f"{name}: not exported: the oracle's episode ended {played.outcome}")
            continue
        folder = out / name
        if folder.exists():
            if not force:
                raise UsageError(f"{folder} exists; --force replaces it")
            shutil.rmtree(folder)
        folder.mkdir()
        write_task(folder, name, query, options, played)
        names.append(name)
        if echo:
            echo(f"{name}: {query.app} level {query.level}, {len(played.calls)} oracle steps")
    if not names:
        raise NothingToExport("the oracle resolved none of the selected episodes: nothing was exported")
    (out / DATASET_FILE).write_text(dataset_toml(names), encoding="utf-8")
    return names
