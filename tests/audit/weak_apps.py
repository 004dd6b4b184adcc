"""The toy app with planted grader weaknesses, for `netarena audit` to catch (tests only)."""

from __future__ import annotations

from toy_app import CounterApp, CounterEnvironment

from pytest_netarena.core.app import Environment, RunOptions
from pytest_netarena.core.types import Judgement, StepOutcome


class TrustingEnvironment(CounterEnvironment):
    """Takes an agent's word for it: a reply that says the task is resolved counts as a repair."""

    def reset(self, query):
        self.claimed = False
        return super().reset(query)

    def step(self, reply: str) -> StepOutcome:
        self.claimed = self.claimed or "resolved" in reply.lower()
        return super().step(reply)

    def judge(self) -> Judgement:
        verdict = super().judge()
        return Judgement(verdict.correct or self.claimed, verdict.details)


class FragileEnvironment(CounterEnvironment):
    """Assumes replies are ASCII: any other reply crashes the step (an infrastructure error, never scored)."""

    def step(self, reply: str) -> StepOutcome:
        reply.encode("ascii")
        return super().step(reply)


class TrustingApp(CounterApp):
    name = "trusting"

    def make_environment(self, options: RunOptions) -> Environment:
        return TrustingEnvironment()


class FragileApp(CounterApp):
    name = "fragile"

    def make_environment(self, options: RunOptions) -> Environment:
        return FragileEnvironment()


TRUSTING = TrustingApp()
FRAGILE = FragileApp()
