"""The route App: categories and levels, the query catalogue (sizes and faults), environment, prompt, built-in agents."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.app import App, PromptSpec, RunOptions
from ...core.catalogue import Category, Chooser
from ...core.errors import BackendUnavailable, UsageError
from ..options import BUILTIN_OPTIONS
from . import faults as fault_catalogue
from .topology import Topology

if TYPE_CHECKING:
    from ...core.agent import Agent
    from ...core.types import Query
    from .environment import RouteEnvironment

#: NetArena's ranges for sizes drawn from the seed
SUBNETS_RANGE = (2, 8)
HOSTS_RANGE = (1, 4)
_SIZE_RE = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")
#: the largest --route-size: subnets and hosts per subnet (tested, docs/route.md)
MAX_SUBNETS, MAX_HOSTS = 32, 8


def parse_size(text: str) -> tuple[int, int]:
    """'NxH' -> (subnets, hosts); UsageError when malformed or too large for 15-character names."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise UsageError(f"--route-size {text!r}: expected SUBNETSxHOSTS, e.g. 4x4")
    subnets, hosts = int(match.group(1)), int(match.group(2))
    if subnets < 2 or hosts < 1:
        raise UsageError(f"--route-size {text!r}: needs at least 2 subnets and 1 host per subnet")
    if subnets > MAX_SUBNETS or hosts > MAX_HOSTS:
        raise UsageError(f"--route-size {text!r} is too large: at most {MAX_SUBNETS} subnets and {MAX_HOSTS} hosts "
                         f"per subnet ({MAX_SUBNETS}x{MAX_HOSTS}, the largest size tested)")
    try:
        Topology("na0000", subnets, hosts)
    except ValueError as error:
        raise UsageError(f"--route-size {text!r} is too large: {error}") from None
    return subnets, hosts


class RouteApp(App):
    """Broken Linux routers in real Mininet networks."""

    name = "route"
    options = BUILTIN_OPTIONS["route"]
    builtin_agent_names = ("oracle", "expert", "reckless", "chatty", "random", "cheater")
    #: an episode mostly waits for pingmesh reply rounds (0.1 s each while a pair stays unreachable):
    #: three at once per process overlap those waits (docs/scale.md)
    episodes_in_flight = 3
    #: the size of every network when --route-size is not given ("": drawn from the seed)
    default_size = ""

    def categories(self, options: RunOptions) -> Sequence[Category]:
        return [
            Category(level, "+".join(kinds)) for level, groups in fault_catalogue.LEVELS.items() for kinds in groups
        ]

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        from .impossible import CATEGORIES

        return CATEGORIES

    def missing_features(self) -> dict[str, str]:
        """Kernel features some fault methods need that this machine lacks: feature -> reason."""
        from .network.capabilities import netem_missing

        reason = netem_missing()
        return {"netem": reason} if reason else {}

    def excluded_methods(self) -> dict[str, str]:
        """Fault methods left out of generation on this machine, with the reason (for the run header)."""
        missing = self.missing_features()
        return {
            f"{kind}/{method}": missing[feature]
            for kind, methods in fault_catalogue.METHODS.items()
            for method in methods
            if (feature := fault_catalogue.FEATURE_OF.get(method)) in missing
        }

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        """Lines the plugin prints in the run header: fault methods this machine cannot run, and why."""
        return [f"{method} excluded: {reason}" for method, reason in self.excluded_methods().items()]

    def header(self, options: RunOptions) -> str:
        """One line for the run header: the network size policy and any excluded fault methods."""
        size = options.get("route-size") or self.default_size
        sizes = f"size {size}" if size else f"sizes {SUBNETS_RANGE[0]}-{SUBNETS_RANGE[1]} x {HOSTS_RANGE[0]}-{HOSTS_RANGE[1]} from the seed"
        excluded = self.excluded_methods()
        notes = "; ".join(f"{method} excluded: {reason}" for method, reason in excluded.items())
        return f"route: Mininet, Linux bridges, {sizes}" + (f"; {notes}" if notes else "")

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        size = options.get("route-size")
        if category.level == 0:
            from .impossible import draw

            return draw(chooser, parse_size(size) if size else None)
        if size:
            subnets, hosts = parse_size(size)
        else:
            subnets = chooser.integer(*SUBNETS_RANGE)
            hosts = chooser.integer(*HOSTS_RANGE)
        missing = self.missing_features()
        faults = [fault_catalogue.draw_fault(kind, chooser, subnets, missing) for kind in category.name.split("+")]
        return {"subnets": subnets, "hosts": hosts, "faults": faults}

    def make_environment(self, options: RunOptions) -> RouteEnvironment:
        from .network.capabilities import backend_missing

        reason = backend_missing()
        if reason:
            raise BackendUnavailable(reason)
        if options.sandboxed:
            from ...sandbox import support

            support().require("the route app (agent commands on Mininet nodes)", root=True)
        return self._environment(options)

    def _environment(self, options: RunOptions) -> RouteEnvironment:
        """The environment of these rules (NetArena's: netarena/app.py)."""
        from .environment import RouteEnvironment

        return RouteEnvironment(options)

    def prompt(self) -> PromptSpec:
        from .prompt import route_prompt

        return route_prompt()

    def builtin_agent(self, name: str, query: Query, env: Any) -> Agent | None:
        from .agents import builtin as agents

        if name == "oracle":
            return agents.OracleAgent(env, list(query.params["faults"]))
        if name == "cheater":  # the oracle, but on an impossible episode it hijacks the protected address
            return agents.CheaterAgent(env, query)
        if name == "expert":
            return agents.ExpertAgent()
        if name == "reckless":
            return agents.RecklessAgent()
        if name == "chatty":
            return agents.ChattyAgent(env, list(query.params["faults"]))
        if name == "random":
            from .agents.random_agent import RandomAgent

            return RandomAgent(query)
        return None
