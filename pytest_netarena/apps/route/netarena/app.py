"""The route app under --compat netarena: NetArena's categories, draws, network size, environment, prompt, oracle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ....core.app import PromptSpec, RunOptions
from ....core.catalogue import Category, Chooser
from ....core.rules import NETARENA
from ..app import RouteApp, parse_size
from . import rules as compat

if TYPE_CHECKING:
    from ....core.agent import Agent
    from ....core.types import Query
    from ..environment import RouteEnvironment


class NetArenaRouteApp(RouteApp):
    """NetArena's five fault kinds and their pairs on its 2x1 network (unless --route-size), its observations,
    deny-list and loss-based safety rule (netarena/environment.py), its prompt."""

    default_size = "{}x{}".format(*compat.DEFAULT_SIZE)

    def categories(self, options: RunOptions) -> Sequence[Category]:
        return compat.categories()

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        return ()  # NetArena has no impossible episodes

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        size = options.get("route-size")
        subnets, hosts = parse_size(size) if size else compat.DEFAULT_SIZE
        missing = self.missing_features()
        faults = [compat.draw_fault(kind, chooser, subnets, missing) for kind in category.name.split("+")]
        details = [compat.netarena_detail(fault) for fault in faults]
        return {"subnets": subnets, "hosts": hosts, "faults": faults, "rules": NETARENA,
                "error_detail": details[0] if len(details) == 1 else details}

    def _environment(self, options: RunOptions) -> RouteEnvironment:
        from .environment import NetArenaRouteEnvironment

        return NetArenaRouteEnvironment(options)

    def prompt(self) -> PromptSpec:
        from .prompt import netarena_prompt

        return netarena_prompt()

    def builtin_agent(self, name: str, query: Query, env: Any) -> Agent | None:
        if name == "oracle":  # NetArena's repairs of its fault kinds
            from ..agents.builtin import OracleAgent

            return OracleAgent(env, list(query.params["faults"]), compat.repair_plan)
        return super().builtin_agent(name, query, env)


NETARENA_APP = NetArenaRouteApp()
