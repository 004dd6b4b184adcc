"""The K8s app under --compat netarena: NetArena's query list, draws, environment, prompt and header (the app's hook)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ....core.app import Environment, PromptSpec, RunOptions
from ....core.catalogue import Category, Chooser
from ....core.errors import UsageError
from ....core.seeding import hidden_seed
from ....core.types import Query
from ..app import K8sApp, check_real_cluster
from ..settings import DEFAULT_STORY, K8sSettings


class NetArenaK8sApp(K8sApp):
    """NetArena's 15 categories (levels 1 and 2 by default; its fixed lists taken in order), its observations and
    safety rule (netarena/environment.py), its prompt; the API server alone, as its rules forbid exec."""

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .rules import categories

        return categories()

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        return ()  # NetArena has no impossible episodes

    def generate(self, options: RunOptions) -> list[Query]:
        from . import rules as compat

        _check_app(options)
        if not options.levels_given:  # the levels a run has when it names none: NetArena's
            options = replace(options, levels=compat.DEFAULT_LEVELS)
        if options.split is not None:
            raise UsageError("--compat netarena runs NetArena's query list: it has no train/test split for k8s")
        queries = []
        for category in sorted(self.categories(options)):
            if category.level not in options.levels:
                continue
            for index in range(compat.queries_in(category, options.queries)):
                if compat.is_fixed(category):  # NetArena's fixed lists: the index-th entry, whatever the seed
                    seed = hidden_seed(options.seed, options.secret, self.name, category.name, index)
                    queries.append(Query(self.name, category.level, category.name, index, seed,
                                         compat.params(compat.fixed_faults(category, index))))
                else:
                    queries.append(self.query(category, index, options))
        return queries

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        from . import rules as compat

        _check_app(options)
        if compat.is_fixed(category):  # search mode: any entry of the fixed list
            return compat.params(compat.fixed_faults(
                category, chooser.integer(0, compat.queries_in(category, 10 ** 6) - 1)))
        return compat.params(compat.draw_faults(category, chooser))

    def make_environment(self, options: RunOptions) -> Environment:
        _check_app(options)
        return super().make_environment(options)

    def _environment(self, app, settings: K8sSettings, backend, options: RunOptions) -> Environment:
        from .environment import NetArenaK8sEnvironment

        return NetArenaK8sEnvironment(app, settings.app, backend, sandboxed=options.sandboxed,
                                      cot=options.prompt_style == "cot")

    def preflight(self, options: RunOptions) -> None:
        settings = K8sSettings.of(options)
        if settings.story != DEFAULT_STORY:
            raise UsageError("--compat netarena shows NetArena's observations: --k8s-story operator is ours")
        if settings.real_cluster:
            check_real_cluster(settings)

    def prompt(self) -> PromptSpec:
        from .prompt import netarena_prompt

        return netarena_prompt()

    def prompt_for(self, options: RunOptions) -> PromptSpec:
        return self.prompt()

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        return ["mode api-only (--compat netarena: NetArena's rules forbid kubectl exec; rows unlabelled)"]


def _check_app(options: RunOptions) -> None:
    from .rules import APP

    if K8sSettings.of(options).app != APP:
        raise UsageError(f"--compat netarena runs NetArena's k8s app: --k8s-app {APP} (the default)")


NETARENA_APP = NetArenaK8sApp()
