"""The MALT app: datacenter capacity planning answered with Python code over a topology graph."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...core.app import App, Environment, PromptSpec, RunOptions
from ...core.catalogue import Category, Chooser
from ...core.types import Query
from ..options import BUILTIN_OPTIONS

if TYPE_CHECKING:
    from ...core.agent import Agent
    from .queries import TopologyIndex


def check_topology(spec: str) -> None:
    """A --malt-topology value loads (cached: the run's queries reuse it)."""
    from .topology import load_topology

    load_topology(spec)


def check_netarena_data(root: str) -> None:
    """A --netarena-data folder holds NetArena's MALT topology."""
    from .netarena.data import data_dir

    data_dir(root)


TOPOLOGY_OPTION, NETARENA_DATA_OPTION = BUILTIN_OPTIONS["malt"]


@lru_cache(maxsize=4)
def _index(spec: str | None) -> TopologyIndex:
    from .queries import TopologyIndex
    from .topology import load_topology

    return TopologyIndex(load_topology(spec))


@lru_cache(maxsize=2)
def _netarena_index(root: str, compat: bool) -> TopologyIndex:
    from .netarena.data import load_graph, topology_path
    from .queries import TopologyIndex
    from .topology import load_textproto

    return TopologyIndex(load_graph(root) if compat else load_textproto(topology_path(root)))


@lru_cache(maxsize=4)
def _index_in_netarena_conventions(spec: str | None) -> TopologyIndex:
    from .netarena.data import in_netarena_conventions
    from .queries import TopologyIndex

    return TopologyIndex(in_netarena_conventions(_index(spec).graph))


def topology_index(options: RunOptions) -> TopologyIndex:
    """The run's topology: --netarena-data's real one, else --malt-topology's (in NetArena's
    conventions under --compat netarena)."""
    root = options.get(NETARENA_DATA_OPTION.name)
    if root:
        return _netarena_index(str(root), options.netarena_compat)
    if options.netarena_compat:
        return _index_in_netarena_conventions(options.get(TOPOLOGY_OPTION.name))
    return _index(options.get(TOPOLOGY_OPTION.name))


def netarena_corpus(path: str, options: RunOptions) -> list[Query]:
    """--corpus netarena-malt:FILE: NetArena's MALT questions read into queries (names checked against the
    run's topology); the lines it cannot read are listed in the run header."""
    from ...core.errors import UsageError
    from .netarena.data import READINGS, read_questions

    if not options.netarena_compat:
        raise UsageError("--corpus netarena-malt:FILE runs NetArena's questions under its rules: add --compat netarena")
    reading = read_questions(path, set(topology_index(options).graph))
    READINGS.append((path, reading))
    return reading.queries


class MaltApp(App):
    name = "malt"
    options = (TOPOLOGY_OPTION, NETARENA_DATA_OPTION)
    builtin_agent_names = ("oracle", "reckless", "expert", "chatty", "random", "cheater", "parser")

    def categories(self, options: RunOptions) -> Sequence[Category]:
        if options.netarena_compat:
            from .netarena.rules import CATEGORIES as NETARENA_CATEGORIES

            return NETARENA_CATEGORIES
        from .queries import CATEGORIES

        return CATEGORIES

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        if options.netarena_compat:
            return ()
        from .impossible import CATEGORIES

        return CATEGORIES

    def default_levels(self, options: RunOptions) -> tuple[int, ...] | None:
        """The levels a run has when it names none: NetArena's 1 and 2 under --compat netarena."""
        if options.netarena_compat:
            from .netarena.rules import DEFAULT_LEVELS as NETARENA_LEVELS

            return NETARENA_LEVELS
        return None

    def generate(self, options: RunOptions) -> list[Query]:
        default = self.default_levels(options)
        if default is not None and not options.levels_given:
            options = replace(options, levels=default)
        return super().generate(options)

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        index = topology_index(options)
        if options.netarena_compat:
            from .netarena.rules import draw as netarena_draw

            return netarena_draw(category, chooser, index.by_kind)
        if category.level == 0:
            from .impossible import draw as draw_impossible

            return draw_impossible(index, chooser)
        from .queries import draw

        return draw(category, chooser, index.graph, index)

    def make_environment(self, options: RunOptions) -> Environment:
        from ...core.errors import BackendUnavailable
        from ...sandbox import SandboxUnavailable, support
        from .environment import MaltEnvironment

        if options.sandboxed:
            try:
                support().require("the MALT app (answer code runs in a sealed box)")
            except SandboxUnavailable as error:
                raise BackendUnavailable(str(error)) from error
        environment = MaltEnvironment
        if options.netarena_compat:
            from .netarena.environment import NetArenaMaltEnvironment as environment
        return environment(topology_index(options).graph, boxed=options.sandboxed, last_wins=options.prompt_style == "cot")

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        from .netarena.data import READINGS

        return [line for path, reading in READINGS for line in reading.summary(path).splitlines()]

    def prompt(self) -> PromptSpec:
        from .prompt import PROMPT

        return PROMPT

    def netarena_prompt(self) -> PromptSpec:
        from .netarena.prompt import netarena_prompt

        return netarena_prompt()

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        from .agents.builtin import make_builtin

        return make_builtin(name, query)
