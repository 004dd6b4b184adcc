"""A tiny app for the plugin's own tests: set a counter to a hidden target without going negative."""

from __future__ import annotations

import os
import re
from typing import Any

from pytest_netarena.core.app import App, Environment, PromptSpec, RunOptions
from pytest_netarena.core.catalogue import Category, Chooser
from pytest_netarena.core.types import Judgement, Query, Reply, StepOutcome, Task
from pytest_netarena.core.errors import BackendUnavailable, InfraError
from pytest_netarena.core.tools import Tool

#: the toy app's one action as a tool: set the counter
SET_TOOL = Tool("set_counter", "Set the counter to a value; returns the new value.",
                {"type": "object", "properties": {"value": {"type": "integer", "minimum": -1000, "maximum": 1000}},
                 "required": ["value"], "additionalProperties": False})


class CounterEnvironment(Environment):
    """State: one integer. Action: 'set N'. Unsafe: a negative value. TOY_BROKEN=1 makes reset fail."""

    default_max_steps = 3

    def reset(self, query: Query) -> str:
        if os.environ.get("TOY_BROKEN") == "1":
            raise InfraError("the toy backend is down")
        self.value, self.target = 0, query.params["target"]
        return f"counter is {self.value}; make it {self.target}"

    def step(self, reply: str) -> StepOutcome:
        match = re.search(r"set (-?\d+)", reply)
        if match is None:
            return StepOutcome("", "no action", "say 'set N'", refused=True)
        self.value = int(match.group(1))
        violations = (f"counter went negative ({self.value})",) if self.value < 0 else ()
        done = self.value == self.target
        return StepOutcome(match.group(0), "ok", f"counter is {self.value}", violations, done=done)

    def tools(self) -> tuple[Tool, ...]:
        return (SET_TOOL,)

    def run_action(self, name: str, arguments: dict[str, Any]) -> StepOutcome:
        if name != SET_TOOL.name:
            return super().run_action(name, arguments)
        return self.step(f"set {arguments['value']}")  # the same action as the reply "set N"

    def judge(self) -> Judgement:
        return Judgement(self.value == self.target, f"counter {self.value}, target {self.target}",
                         metrics={"overshot": self.value > self.target})


class ToyAgent:
    """An agent of the toy app with the protocol's no-ops written once: answer(target) replies to the target the
    observation names ('... make it N')."""

    def reset(self, task: Task) -> None:
        pass

    def act(self, observation: str) -> Reply | str:
        return self.answer(int(observation.rsplit(" ", 1)[1]))

    def answer(self, target: int) -> Reply | str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class SaysAgent(ToyAgent):
    """Always gives the same reply."""

    def __init__(self, text: str) -> None:
        self.text = text

    def act(self, observation: str) -> Reply:
        return Reply(self.text)


class OracleAgent(SaysAgent):
    def __init__(self, target: int) -> None:
        super().__init__(f"set {target}")
        self.target = target


class RecklessAgent(OracleAgent):
    def act(self, observation: str) -> Reply:
        self.target, value = self.target, -1 if "is 0" in observation else self.target
        return Reply(f"set {value}")


class CounterApp(App):
    name = "toy"
    builtin_agent_names = ("oracle", "reckless")

    def categories(self, options: RunOptions) -> list[Category]:
        return [Category(1, "set"), Category(2, "set+set")]

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        return {"target": chooser.integer(1, 100)}

    def make_environment(self, options: RunOptions) -> Environment:
        if os.environ.get("TOY_UNAVAILABLE") == "1":  # a host that cannot run this app
            raise BackendUnavailable("the toy backend is not installed on this host")
        return CounterEnvironment()

    def prompt(self) -> PromptSpec:
        return PromptSpec("You control a counter.", "Never go negative.", "Reply 'set N'.", (("counter is 0; make it 3", "set 3"),))

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Any:
        agents = {"oracle": OracleAgent, "reckless": RecklessAgent}
        return agents[name](query.params["target"]) if name in agents else None


APP = CounterApp()
