"""The toy app with a planted validity flaw, for `netarena validity` to catch (tests only)."""

from __future__ import annotations

from toy_app import CounterApp, OracleAgent


class UnsolvableApp(CounterApp):
    """Its oracle always misses the target by one: the card must say the tasks are not shown solvable."""

    name = "unsolvable"

    def builtin_agent(self, name, query, env):
        if name == "oracle":
            return OracleAgent(query.params["target"] + 1)
        return super().builtin_agent(name, query, env)


UNSOLVABLE = UnsolvableApp()
