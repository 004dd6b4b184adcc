"""What the xdist controller hands each worker (its workerinput): the run the worker joins, typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..core.types import Query

#: the prefix of our keys in xdist's workerinput, which xdist and other plugins share
PREFIX = "netarena_"


@dataclass(frozen=True)
class WorkerInput:
    """The controller's decisions a worker must not make again: the run's seed and id, its shard, the episodes
    in flight per process, the --corpus as read (the file need not exist on the worker's host) and, for
    --resume, the run.json the controller read (the folder need not either)."""

    seed: int
    run_id: str
    shard: str | None = None  #: "K/N" under --shard
    in_flight: int | None = None  #: --in-flight as the controller resolved it (None: each app's default)
    corpus: tuple[Query, ...] | None = None
    run_info: Mapping[str, Any] | None = None  #: --resume: the resumed run's run.json
    secret: str = ""  #: the run secret (core/seeding.py; "" for none): workers draw the same hidden parameters

    def to_workerinput(self) -> dict[str, Any]:
        """Plain values execnet can send, under prefixed keys."""
        values = {field.name: getattr(self, field.name) for field in fields(self)}
        if self.corpus is not None:
            values["corpus"] = [query.to_dict() for query in self.corpus]
        if self.run_info is not None:
            values["run_info"] = dict(self.run_info)
        return {PREFIX + name: value for name, value in values.items()}

    @classmethod
    def from_workerinput(cls, workerinput: Mapping[str, Any]) -> WorkerInput:
        """The controller's hand-off; a KeyError when the controller did not run pytest-netarena."""
        corpus = workerinput.get(PREFIX + "corpus")
        return cls(
            seed=int(workerinput[PREFIX + "seed"]),
            run_id=str(workerinput[PREFIX + "run_id"]),
            shard=workerinput.get(PREFIX + "shard"),
            in_flight=workerinput.get(PREFIX + "in_flight"),  # scale/options.py reads and checks it
            corpus=None if corpus is None else tuple(Query.from_dict(data) for data in corpus),
            run_info=workerinput.get(PREFIX + "run_info") or None,
            secret=str(workerinput.get(PREFIX + "secret") or ""),
        )

