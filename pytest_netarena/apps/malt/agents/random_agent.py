"""builtin:random for MALT: well-formed answers (a random count or random node names), knowing nothing hidden."""

from __future__ import annotations

from ....core.seeding import derive_seed
from ....core.types import Query, Reply, Task

_CODE = '''import random


def process_graph(graph_data):
    rng = random.Random({seed})
    if rng.random() < 0.5:
        return {{"type": "text", "data": rng.randrange(1000)}}
    nodes = sorted(graph_data.nodes)
    return {{"type": "list", "data": rng.sample(nodes, min(len(nodes), rng.randrange(1, 6)))}}
'''


class RandomAgent:
    """A floor for comparisons: its one answer is drawn at random (seeded by the query's seed, never its params)."""

    def __init__(self, query: Query, env: object = None) -> None:
        self.code = _CODE.format(seed=derive_seed(query.seed, "builtin:random"))

    def reset(self, task: Task) -> None:
        pass

    def act(self, observation: str) -> Reply:
        return Reply(f"```python\n{self.code}```\n")

    def close(self) -> None:
        pass
