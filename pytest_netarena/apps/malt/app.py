"""The MALT app: datacenter capacity planning answered with Python code over a topology graph."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...core.app import App, Environment, PromptSpec, RunOptions
from ...core.catalogue import Category, Chooser
from ...core.types import Query
from ..options import BUILTIN_OPTIONS

if TYPE_CHECKING:
    from ...core.agent import Agent
    from .environment import MaltEnvironment
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
    """The run's topology under our rules: --netarena-data's real one, else --malt-topology's (NetArena's rules
    read them in NetArena's conventions: netarena/app.py)."""
    root = options.get(NETARENA_DATA_OPTION.name)
    if root:
        return _netarena_index(str(root), False)
    return _index(options.get(TOPOLOGY_OPTION.name))


@lru_cache(maxsize=4)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_facts(path: str) -> dict[str, Any]:
    """A topology file as run.json names it: where it was, and its sha256 (which tells two files apart)."""
    import os

    absolute = os.path.abspath(os.path.expanduser(path))
    try:
        status = os.stat(absolute)
    except OSError:
        return {"file": absolute}
    return {"file": absolute, "bytes": status.st_size,
            "sha256": _file_digest(absolute, status.st_size, status.st_mtime_ns)}


class MaltApp(App):
    name = "malt"
    options = (TOPOLOGY_OPTION, NETARENA_DATA_OPTION)
    builtin_agent_names = ("oracle", "reckless", "expert", "chatty", "random", "cheater", "parser")

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .queries import CATEGORIES

        return CATEGORIES

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        from .impossible import CATEGORIES

        return CATEGORIES

    def topology(self, options: RunOptions) -> TopologyIndex:
        """The run's topology, as these rules read it (NetArena's: netarena/app.py)."""
        return topology_index(options)

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        index = self.topology(options)
        if category.level == 0:
            from .impossible import draw as draw_impossible

            return draw_impossible(index, chooser)
        from .queries import draw

        return draw(category, chooser, index.graph, index)

    def make_environment(self, options: RunOptions) -> Environment:
        from ...sandbox import support

        if options.sandboxed:
            support().require("the MALT app (answer code runs in a sealed box)")
        return self.environment_class()(self.topology(options).graph, boxed=options.sandboxed,
                                        last_wins=options.prompt_style == "cot")

    def environment_class(self) -> type[MaltEnvironment]:
        """The environment of these rules (NetArena's: netarena/app.py)."""
        from .environment import MaltEnvironment

        return MaltEnvironment

    def run_facts(self, options: RunOptions) -> dict[str, Any]:
        """run.json's record of the topology the run's questions were drawn on and answered against."""
        from .topology import SYNTHETIC

        root = options.get(NETARENA_DATA_OPTION.name)
        spec = str(options.get(TOPOLOGY_OPTION.name) or SYNTHETIC).strip()
        if root:
            from .netarena.data import topology_path

            facts: dict[str, Any] = {"source": f"--netarena-data {root}", **_file_facts(str(topology_path(str(root))))}
        elif spec == SYNTHETIC or spec.startswith(SYNTHETIC + ":"):
            facts = {"source": spec, "synthetic": True}
        else:
            facts = {"source": spec, **_file_facts(spec)}
        graph = topology_index(options).graph
        facts.update(nodes=graph.number_of_nodes(), edges=graph.number_of_edges())
        if options.netarena_compat:
            facts["conventions"] = "netarena"
        return {"topology": facts}

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        from .netarena.data import READINGS

        return [line for path, reading in READINGS for line in reading.summary(path).splitlines()]

    def prompt(self) -> PromptSpec:
        from .prompt import PROMPT

        return PROMPT

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        from .agents.builtin import make_builtin

        return make_builtin(name, query)
