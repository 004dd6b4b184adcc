"""The MALT app under --compat netarena: NetArena's categories, draws, topology conventions, environment, corpus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ....core.app import RunOptions
from ....core.catalogue import Category, Chooser
from ....core.types import Query
from ..app import NETARENA_DATA_OPTION, TOPOLOGY_OPTION, MaltApp, _index_in_netarena_conventions, _netarena_index

if TYPE_CHECKING:
    from ..environment import MaltEnvironment
    from ..queries import TopologyIndex


class NetArenaMaltApp(MaltApp):
    """NetArena's question types (levels 1 and 2 by default), its topology conventions, its ground truth,
    verdicts and safety checks (netarena/environment.py); our prompt (its answer contract is in each question)."""

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .rules import CATEGORIES

        return CATEGORIES

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        return ()  # NetArena has no impossible episodes

    def generate(self, options: RunOptions) -> list[Query]:
        from .rules import DEFAULT_LEVELS

        if not options.levels_given:  # the levels a run has when it names none: NetArena's
            options = replace(options, levels=DEFAULT_LEVELS)
        return super().generate(options)

    def topology(self, options: RunOptions) -> TopologyIndex:
        """--netarena-data's real topology, else --malt-topology's, read in NetArena's conventions."""
        root = options.get(NETARENA_DATA_OPTION.name)
        if root:
            return _netarena_index(str(root), True)
        return _index_in_netarena_conventions(options.get(TOPOLOGY_OPTION.name))

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        from .rules import draw

        return draw(category, chooser, self.topology(options).by_kind)

    def environment_class(self) -> type[MaltEnvironment]:
        from .environment import NetArenaMaltEnvironment

        return NetArenaMaltEnvironment


NETARENA_APP = NetArenaMaltApp()


def netarena_corpus(path: str, options: RunOptions) -> list[Query]:
    """--corpus netarena-malt:FILE: NetArena's MALT questions read into queries (names checked against the
    run's topology); the lines it cannot read are listed in the run header."""
    from ....core.errors import UsageError
    from .data import READINGS, read_questions

    if not options.ruleset.netarena:
        raise UsageError("--corpus netarena-malt:FILE runs NetArena's questions under its rules: add --compat netarena")
    reading = read_questions(path, set(NETARENA_APP.topology(options).graph))
    READINGS.append((path, reading))
    return reading.queries
