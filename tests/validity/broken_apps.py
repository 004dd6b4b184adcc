"""The toy app with a planted validity flaw, for `netarena validity` to catch (tests only)."""

from __future__ import annotations

from toy_app import CounterApp, CounterEnvironment, OracleAgent


class UnsolvableApp(CounterApp):
    """Its oracle always misses the target by one: the card must say the tasks are not shown solvable."""

    name = "unsolvable"

    def builtin_agent(self, name, query, env):
        if name == "oracle":
            return OracleAgent(query.params["target"] + 1)
        return super().builtin_agent(name, query, env)


UNSOLVABLE = UnsolvableApp()


class LeakyEnvironment(CounterEnvironment):
    """Keeps the counter of the last episode: a reset leaves residual state behind."""

    def reset(self, query):
        kept = getattr(self, "value", 0)
        observation = super().reset(query)
        self.value = kept
        return f"counter is {self.value}; make it {self.target}"


class LeakyApp(CounterApp):
    name = "leaky"

    def make_environment(self, options):
        return LeakyEnvironment()


LEAKY = LeakyApp()
