"""The public front: every name a user imports comes from pytest_netarena.api, docs/api.md lists exactly those, and
an agent and an app written with them alone play a real episode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_name_of_the_front_is_importable_and_is_the_thing_itself() -> None:
    import pytest_netarena.api as api
    from pytest_netarena.core.types import Task
    from pytest_netarena.validity.conformance import check_app

    assert len(api.__all__) == len(set(api.__all__)) > 30
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert not missing
    assert api.Task is Task and api.check_app is check_app  # the same objects, not copies
    assert set(api.ENV_IDS) == {"netarena/K8s-v0", "netarena/Route-v0", "netarena/Malt-v0"}


def test_the_docs_page_lists_exactly_the_front() -> None:
    import pytest_netarena.api as api

    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert listed == set(api.__all__), (sorted(listed - set(api.__all__)), sorted(set(api.__all__) - listed))


def test_importing_the_front_stays_light() -> None:
    code = ("import sys, pytest_netarena.api\n"
            "heavy = [m for m in ('litellm', 'mcp', 'kubernetes', 'httpx', 'networkx', 'uvicorn') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_an_agent_and_an_app_written_with_the_front_alone_play_an_episode() -> None:
    from pytest_netarena.api import (App, Category, Environment, Judgement, OptionSpec, PromptSpec, Reply, RunOptions,
                                     StepOutcome, Task, Tool, Traits, assert_episode, plan_episode, run_episode)

    class Lamp(Environment):
        default_max_steps = 2

        def reset(self, query):
            self.on = False
            return "the lamp is off; turn it on"

        def step(self, reply):
            self.on = self.on or "on" in reply
            return StepOutcome("switch" if "on" in reply else "", "ok", f"the lamp is {'on' if self.on else 'off'}",
                               done=self.on)

        def tools(self):
            return (Tool("switch", "Turn the lamp on.", {"type": "object", "properties": {}}),)

        def run_action(self, name, arguments):
            return self.step("on")

        def judge(self):
            return Judgement(self.on, "the lamp")

    class LampApp(App):
        name = "lamp"
        options = (OptionSpec("lamp-colour", "its colour", "white"),)

        def categories(self, options):
            return [Category(1, "dark")]

        def draw_params(self, category, chooser, options):
            return {"room": chooser.integer(1, 9)}

        def make_environment(self, options):
            return Lamp()

        def prompt(self):
            return PromptSpec("You control a lamp.", "Turn it on.", "Reply 'on'.", answer_format="One switch.")

    class Switcher:
        uses_tools = True

        def reset(self, task: Task) -> None:
            self.tools = [tool.name for tool in task.tools]

        def act(self, observation: str) -> Reply:
            from pytest_netarena.api import ToolCall

            return Reply("", tool_calls=(ToolCall.of("switch", {}),)) if self.tools else Reply("on")

        def close(self) -> None:
            pass

    app = LampApp()
    options = RunOptions(seed=1, queries=1, levels=(1,))
    (query,) = app.generate(options)
    env = app.make_environment(options)
    for traits, interface in ((Traits(), "text"), (Traits(wants_tools=True), "tools")):
        plan = plan_episode(app, env, options, traits)
        assert "One switch." in plan.task.system_prompt and plan.interface == interface
        result = run_episode(env, Switcher(), query, plan.task, plan.config, "python:switcher",
                             interface=plan.interface)
        assert result.interface == interface
        assert_episode(result)
