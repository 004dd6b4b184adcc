"""The MALT app: datacenter capacity planning answered with Python code over a topology graph."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...core.app import App, Environment, OptionSpec, PromptSpec, RunOptions
from ...core.space import Category, Chooser
from ...core.types import Query

if TYPE_CHECKING:
    from ...agents.base import Agent
    from .queries import TopologyIndex

def check_topology(spec: str) -> None:
    """A --malt-topology value loads (cached: the run's queries reuse it)."""
    from .topology import load_topology

    load_topology(spec)


TOPOLOGY_OPTION = OptionSpec(
    "malt-topology",
    "MALT topology: a textproto file (e.g. malt-graph.textproto.txt) or synthetic[:NODES[:SEED]] "
    "(default: a synthetic topology of the real one's size, 5,493 nodes)",
    default=None,
    check=check_topology,
)


@lru_cache(maxsize=4)
def _index(spec: str | None) -> TopologyIndex:
    from .queries import TopologyIndex
    from .topology import load_topology

    return TopologyIndex(load_topology(spec))


class MaltApp(App):
    name = "malt"
    options = (TOPOLOGY_OPTION,)
    builtin_agent_names = ("oracle", "reckless", "expert", "chatty")

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .queries import CATEGORIES

        return CATEGORIES

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        from .queries import draw

        index = _index(options.get(TOPOLOGY_OPTION.name))
        return draw(category, chooser, index.graph, index)

    def make_environment(self, options: RunOptions) -> Environment:
        from ...errors import BackendUnavailable
        from ...sandbox import SandboxUnavailable, support
        from .environment import MaltEnvironment

        if options.sandboxed:
            try:
                support().require("the MALT app (answer code runs in a sealed box)")
            except SandboxUnavailable as error:
                raise BackendUnavailable(str(error)) from error
        return MaltEnvironment(_index(options.get(TOPOLOGY_OPTION.name)).graph, boxed=options.sandboxed,
                               last_wins=options.strategy == "cot")

    def prompt(self) -> PromptSpec:
        from .prompt import PROMPT

        return PROMPT

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        from .agents import make_builtin

        return make_builtin(name, query)
