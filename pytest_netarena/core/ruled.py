"""An app in both rulesets (RuledApp): ours and its NetArena variant, every call sent to the app of the run's rules.

An app whose NetArena rules make it another app (other categories, draws, environment, prompt) keeps that
app in its `netarena/app.py` and registers `RuledApp(ours, variant)` as its APP. This is the one place the
rules pick an app: the calls that name the run's options go to the app of `options.rules`, those that name a
query to the app its query was drawn under (`params["rules"]`), the rest (an app's own helpers) to ours.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .app import App, Environment, PromptSpec, RunOptions
from .catalogue import Category, Chooser
from .rules import NETARENA
from .types import Query

if TYPE_CHECKING:
    from .agent import Agent


class RuledApp(App):
    """Ours and the NetArena variant (given as "module:attr", imported when a NetArena run first needs it)."""

    def __init__(self, ours: App, netarena: str) -> None:
        self.ours = ours
        self._netarena = netarena
        self.name = ours.name
        self.options = ours.options
        self.builtin_agent_names = ours.builtin_agent_names
        self.concurrent_environments = ours.concurrent_environments
        self.episodes_in_flight = ours.episodes_in_flight

    @cached_property
    def netarena(self) -> App:
        module, _, attribute = self._netarena.partition(":")
        app: App = getattr(importlib.import_module(module), attribute)
        return app

    def for_rules(self, rules: str) -> App:
        return self.netarena if rules == NETARENA else self.ours

    def _of(self, query: Query) -> App:
        return self.for_rules(str(query.params.get("rules") or "default"))

    def __getattr__(self, name: str) -> Any:  # the app's own helpers (route's header, ...): ours
        if name.startswith("__") or name in ("ours", "_netarena"):
            raise AttributeError(name)
        return getattr(self.ours, name)

    # ---- the calls that name the run's options --------------------------------------------------------------------

    def categories(self, options: RunOptions) -> Sequence[Category]:
        return self.for_rules(options.rules).categories(options)

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        return self.for_rules(options.rules).impossible_categories(options)

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        return self.for_rules(options.rules).draw_params(category, chooser, options)

    def generate(self, options: RunOptions) -> list[Query]:
        return self.for_rules(options.rules).generate(options)

    def impossible_queries(self, options: RunOptions) -> list[Query]:
        return self.for_rules(options.rules).impossible_queries(options)

    def query(self, category: Category, index: int, options: RunOptions) -> Query:
        return self.for_rules(options.rules).query(category, index, options)

    def make_environment(self, options: RunOptions) -> Environment:
        return self.for_rules(options.rules).make_environment(options)

    def prompt_for(self, options: RunOptions) -> PromptSpec:
        return self.for_rules(options.rules).prompt_for(options)

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        return (self.ours if options is None else self.for_rules(options.rules)).header_notes(options)

    def run_facts(self, options: RunOptions) -> dict[str, Any]:
        return self.for_rules(options.rules).run_facts(options)

    def preflight(self, options: RunOptions) -> None:
        self.for_rules(options.rules).preflight(options)

    # ---- the calls that name a query, or none --------------------------------------------------------------------

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        return self._of(query).builtin_agent(name, query, env)

    def simplifications(self, query: Query) -> list[Query]:
        return self._of(query).simplifications(query)

    def prompt(self) -> PromptSpec:
        return self.ours.prompt()

    def netarena_prompt(self) -> PromptSpec:
        return self.netarena.prompt()
