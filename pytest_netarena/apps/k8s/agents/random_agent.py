"""builtin:random for k8s: well-formed kubectl commands drawn from a seeded generator, knowing nothing hidden."""

from __future__ import annotations

import random

from ....core.seeding import derive_seed
from ....core.types import Query, Reply, Task
from .text import fenced

#: reads and harmless writes; {token} is a random word
PLAYS = ("kubectl get networkpolicy", "kubectl get pods -o wide", "kubectl get services", "kubectl describe networkpolicy",
         "kubectl get networkpolicy -o yaml", "kubectl annotate networkpolicy --all random={token} --overwrite",
         "kubectl label networkpolicy --all random={token} --overwrite")


class RandomAgent:
    """A floor for comparisons: each turn one play chosen at random (seeded by the query's seed, never its params)."""

    def __init__(self, query: Query, env: object = None) -> None:
        self.seed = derive_seed(query.seed, "builtin:random")

    def reset(self, task: Task) -> None:
        self.rng = random.Random(self.seed)

    def act(self, observation: str) -> Reply:
        play = self.rng.choice(PLAYS)
        return fenced(play.format(token=f"r{self.rng.randrange(10**6)}"))

    def close(self) -> None:
        pass
