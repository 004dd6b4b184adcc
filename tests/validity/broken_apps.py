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


class SeedlessApp(CounterApp):
    """Draws its target without the chooser: every seed gives the same queries."""

    name = "seedless"

    def draw_params(self, category, chooser, options):
        return {"target": 7}


class UnseededApp(CounterApp):
    """Draws from Python's global random generator: the same seed gives other queries each time."""

    name = "unseeded"

    def draw_params(self, category, chooser, options):
        import random

        return {"target": random.randint(1, 10**9)}


class HarmlessEnvironment(CounterEnvironment):
    """Its fault breaks nothing: the counter starts at the target."""

    def reset(self, query):
        observation = super().reset(query)
        self.value = self.target
        return observation


class HarmlessApp(CounterApp):
    name = "harmless"

    def make_environment(self, options):
        return HarmlessEnvironment()


class TellingEnvironment(CounterEnvironment):
    """Names the hidden fault in its first observation."""

    def reset(self, query):
        return super().reset(query) + f" (injected: {query.params['faults'][0]['type']})"


class TellingApp(CounterApp):
    """Its queries hold a fault the environment tells the agent about."""

    name = "telling"

    def draw_params(self, category, chooser, options):
        return {**super().draw_params(category, chooser, options),
                "faults": [{"type": chooser.choice(["stuck_counter", "sign_flip"])}]}

    def make_environment(self, options):
        return TellingEnvironment()


SEEDLESS, UNSEEDED, HARMLESS, TELLING = SeedlessApp(), UnseededApp(), HarmlessApp(), TellingApp()


class HashOrderApp(CounterApp):
    """Draws from a set of names: one process draws the same each time, another process (other string hashing) not."""

    name = "hash-order"

    def draw_params(self, category, chooser, options):
        names = list({f"switch-{letter}" for letter in "abcdefghijklmnopqrstuvwxyz"})
        return {**super().draw_params(category, chooser, options), "switch": chooser.choice(names)}


HASH_ORDER = HashOrderApp()


class LuckyApp(CounterApp):
    """Its random agent guesses right in the first query only: chance, on a correct benchmark (1 of 5)."""

    name = "lucky"
    builtin_agent_names = ("oracle", "reckless", "random")

    def builtin_agent(self, name, query, env):
        if name == "random":
            return OracleAgent(query.params["target"] + (0 if query.index == 0 else 1))
        return super().builtin_agent(name, query, env)


LUCKY = LuckyApp()


class RiggedApp(LuckyApp):
    """Its "random" agent resolves every episode: no chance explains that, the benchmark gives scores away."""

    name = "rigged"

    def builtin_agent(self, name, query, env):
        if name == "random":
            return OracleAgent(query.params["target"])
        return super().builtin_agent(name, query, env)


RIGGED = RiggedApp()
