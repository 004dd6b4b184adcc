"""What episodes ask of the run: budget, resumed episodes, found cases, corpus, example database.

`RunService` lives in the controller, the one process that writes the run folder. Without xdist
the plugin calls it directly; an xdist worker, on this host or another, reaches it through
`RemoteController`, which forwards the same calls over the netarena link. Both expose one
interface, so the episode code does not care where it runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..run.budget import RunLedger
from ..core.types import EpisodeResult, Query, Usage

if TYPE_CHECKING:
    from ..run.settings import Settings
    from .link import LinkClient


class Controller(Protocol):
    """The one interface episodes and collection use, wherever they run: RunService or RemoteController."""

    settings: Settings

    def budget_exhausted(self) -> str: ...
    def spend(self, usage: Usage) -> str: ...
    def finished(self, query_id: str, agent: str, trial: int) -> EpisodeResult | None: ...
    def append_found(self, failure: EpisodeResult, extra: dict[str, Any]) -> Query: ...
    def save_corpus(self, queries: list[Query]) -> None: ...
    def example_database(self) -> Any: ...
    def report_host(self, facts: dict[str, Any]) -> None: ...
    def report_collection(self, info: dict[str, Any]) -> None: ...


class RunService:
    """The controller's answers (thread-safe: link calls arrive on execnet's receiver threads)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.ledger = RunLedger(settings.run_dir, settings.run_budget)
        self._lock = threading.Lock()
        self._database: Any = None
        self._corpus_saved = False
        self.hosts: dict[str, dict[str, Any]] = {}  #: worker id -> what its host can run
        self.refusals: dict[str, dict[str, str]] = {}  #: worker id -> {app: why it cannot run it}
        self.item_apps: list[str | None] | None = None  #: the app of each collected item, by index
        self.collection: dict[str, Any] = {}  #: counts for run.json (with --shard: selected of total)
        self.channels: dict[str, Any] = {}  #: worker id -> its netarena link

    # ---- the interface episodes use -------------------------------------------------------------

    def budget_exhausted(self) -> str:
        return self.ledger.exhausted()

    def spend(self, usage: Usage) -> str:
        self.ledger.add(usage)
        return self.ledger.exhausted()

    def finished(self, query_id: str, agent: str, trial: int) -> EpisodeResult | None:
        stored = self.settings.finished.get((query_id, agent, int(trial)))
        return EpisodeResult.from_dict(stored) if stored is not None else None

    def append_found(self, failure: EpisodeResult, extra: dict[str, Any]) -> Query:
        from ..run.corpus import append_found

        with self._lock:
            return append_found(self.settings.run_dir / "found.jsonl", failure, extra)

    def save_corpus(self, queries: list[Query]) -> None:
        from pathlib import Path

        from ..run.corpus import save_corpus

        with self._lock:
            if not self._corpus_saved and self.settings.save_corpus:
                save_corpus(Path(self.settings.save_corpus), queries)
                self._corpus_saved = True

    def example_database(self) -> Any:
        """The Hypothesis example database of --adversarial runs (in the reports folder)."""
        with self._lock:
            search = self.settings.search
            if self._database is None and search is not None and search.database_dir is not None:
                from hypothesis.database import DirectoryBasedExampleDatabase

                self._database = DirectoryBasedExampleDatabase(str(search.database_dir))
            return self._database

    def report_host(self, facts: dict[str, Any]) -> None:
        """Without xdist there is no worker line to print: the header has it all."""

    def report_collection(self, info: dict[str, Any]) -> None:
        with self._lock:
            self.collection = {k: info[k] for k in ("total", "selected") if k in info}

    # ---- the link: calls from workers ---------------------------------------------------------------

    def handle(self, worker: str, kind: str, op: str, args: tuple) -> Any:
        """Answer one link message from `worker` (execnet types in, execnet types out)."""
        if op == "budget":
            return self.budget_exhausted()
        if op == "spend":
            return self.spend(Usage(int(args[0]), int(args[1]), float(args[2])))
        if op == "finished":
            stored = self.settings.finished.get((str(args[0]), str(args[1]), int(args[2])))
            return json.dumps(stored) if stored is not None else None
        if op == "found":
            failure = EpisodeResult.from_dict(json.loads(args[0]))
            return self.append_found(failure, json.loads(args[1])).to_dict()
        if op == "corpus":
            self.save_corpus([Query.from_dict(q) for q in json.loads(args[0])])
            return None
        if op.startswith("db-"):
            return self._database_call(op, args)
        if op == "host":
            with self._lock:
                self.hosts[worker] = dict(args[0])
            return None
        if op == "collection":
            info = dict(args[0])
            with self._lock:
                self.refusals[worker] = dict(info.get("refused", {}))
                if self.item_apps is None:
                    self.item_apps = list(info.get("apps", []))
                    self.collection = {k: info[k] for k in ("total", "selected") if k in info}
            return None
        raise ValueError(f"unknown netarena link request {op!r}")

    def _database_call(self, op: str, args: tuple) -> Any:
        database = self.example_database()
        if database is None:
            return [] if op == "db-fetch" else None
        if op == "db-fetch":
            return list(database.fetch(bytes(args[0])))
        if op == "db-save":
            database.save(bytes(args[0]), bytes(args[1]))
        elif op == "db-delete":
            database.delete(bytes(args[0]), bytes(args[1]))
        elif op == "db-move":
            database.move(bytes(args[0]), bytes(args[1]), bytes(args[2]))
        return None


class RemoteController:
    """A worker's view of the RunService: the same calls, answered by the controller over the link."""

    def __init__(self, client: LinkClient, settings: Settings, resuming: bool) -> None:
        self.client = client
        self.settings = settings
        self.resuming = resuming

    def budget_exhausted(self) -> str:
        return self.client.call("budget") if self.settings.run_budget.capped else ""

    def spend(self, usage: Usage) -> str:
        return self.client.call("spend", usage.tokens_in, usage.tokens_out, usage.cost_usd)

    def finished(self, query_id: str, agent: str, trial: int) -> EpisodeResult | None:
        if not self.resuming:
            return None
        stored = self.client.call("finished", query_id, agent, int(trial))
        return EpisodeResult.from_dict(json.loads(stored)) if stored is not None else None

    def append_found(self, failure: EpisodeResult, extra: dict[str, Any]) -> Query:
        line = json.dumps(failure.to_dict(), default=str)
        return Query.from_dict(self.client.call("found", line, json.dumps(extra, default=str)))

    def save_corpus(self, queries: list[Query]) -> None:
        self.client.call("corpus", json.dumps([q.to_dict() for q in queries]))

    def example_database(self) -> Any:
        return make_linked_database(self.client) if self.settings.search is not None else None

    def report_host(self, facts: dict[str, Any]) -> None:
        self.client.tell("host", facts)

    def report_collection(self, info: dict[str, Any]) -> None:
        # a call, not a tell: the scheduler must know before xdist's collectionfinish event arrives
        self.client.call("collection", info)


def make_linked_database(client: LinkClient) -> Any:
    """A Hypothesis example database kept by the controller (the reports folder is there, not here)."""
    from hypothesis.database import ExampleDatabase

    class LinkedExampleDatabase(ExampleDatabase):
        def fetch(self, key: bytes) -> Iterable[bytes]:
            return [bytes(value) for value in client.call("db-fetch", key)]

        def save(self, key: bytes, value: bytes) -> None:
            client.call("db-save", key, value)

        def delete(self, key: bytes, value: bytes) -> None:
            client.call("db-delete", key, value)

        def move(self, src: bytes, dest: bytes, value: bytes) -> None:
            client.call("db-move", src, dest, value)

    return LinkedExampleDatabase()
