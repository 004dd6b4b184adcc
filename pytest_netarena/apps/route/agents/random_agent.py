"""builtin:random for route: well-formed commands on random nodes from a seeded generator, knowing nothing hidden."""

from __future__ import annotations

import random
import re

from ....core.seeding import derive_seed
from ....core.types import Query, Reply, Task
from .builtin import action

_NODE = re.compile(r"^(\S+) -> ", re.MULTILINE)
_INTERFACE = re.compile(r"router interface (\S+) ")


class RandomAgent:
    """A floor for comparisons: reads, random routes and random MTUs on nodes named in the first observation."""

    def __init__(self, query: Query, env: object = None) -> None:
        self.seed = derive_seed(query.seed, "builtin:random")

    def reset(self, task: Task) -> None:
        self.rng = random.Random(self.seed)
        self.nodes: list[str] = []
        self.interfaces: list[str] = []

    def act(self, observation: str) -> Reply:
        if not self.nodes:
            self.nodes = _NODE.findall(observation) or ["r0"]
            self.interfaces = _INTERFACE.findall(observation) or ["eth0"]
        rng = self.rng
        command = rng.choice((
            "ip route", "ip addr", "ip link", "ip neigh",
            f"ip route add 10.{rng.randrange(256)}.{rng.randrange(256)}.0/24 dev {rng.choice(self.interfaces)}",
            f"ip link set dev {rng.choice(self.interfaces)} mtu {rng.randrange(600, 9000)}",
        ))
        return Reply(action(rng.choice(self.nodes), command))

    def close(self) -> None:
        pass
