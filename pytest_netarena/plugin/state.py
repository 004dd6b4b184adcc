"""What the plugin's modules share: the stash keys, this process's Scale, and the skip messages the reporter counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ..core.types import EpisodeResult
from ..run.settings import Settings
from ..scale.inflight import EnvironmentSlots, InFlight
from ..scale.options import ScaleOptions
from ..scale.service import RemoteController, RunService
from ..scale.workers import WorkerSplit
from .options import NO_AGENT_MESSAGE  # noqa: F401  (the skip message the reporter counts)

SETTINGS_KEY = pytest.StashKey[Settings]()
RESULT_KEY = pytest.StashKey[EpisodeResult]()
SCALE_KEY = pytest.StashKey["Scale"]()
FOLDED_KEY = pytest.StashKey[WorkerSplit]()  #: what -n N with a model agent became (controller)
EPISODE_LINE_KEY = pytest.StashKey[str]()  #: a freshly played episode's episodes.jsonl line, for the controller
USER_APPS_KEY = pytest.StashKey[dict[str, str]]()  #: apps the run registered (netarena_apps), name -> MODULE:ATTR
WARNINGS_KEY = pytest.StashKey[list[str]]()  #: what the header warns about (e.g. a cost cap on an unpriced model)

BUDGET_SKIP = "not run: the run's budget is spent"


@dataclass
class Scale:
    """This process's part in a run: who answers run-wide questions, its environments, episodes in flight."""

    options: ScaleOptions
    controller: Any  #: RunService (the controller) or RemoteController (an xdist worker)
    service: RunService | None  #: set in the controller only
    slots: EnvironmentSlots
    in_flight: InFlight | None = None
    positions: dict[str, int] | None = None  #: without xdist: item node id -> index, to start episodes ahead
    collected: dict[str, int] = field(default_factory=dict)  #: items collected, and kept by --shard

    @classmethod
    def for_process(cls, config: pytest.Config, settings: Settings, options: ScaleOptions) -> Scale:
        worker = getattr(config, "workerinput", None)
        slots = EnvironmentSlots(settings.run_options)
        if worker is None:
            service = RunService(settings)
            return cls(options, service, service, slots)
        from ..scale.link import worker_link

        client = worker_link()
        if client is None:
            raise pytest.UsageError("pytest-netarena: this xdist worker has no link to its controller "
                                    "(the controller must run pytest-netarena too)")
        return cls(options, RemoteController(client, settings, bool(worker.get("netarena_run_info"))), None, slots)

    def close(self) -> None:
        if self.in_flight is not None:
            self.in_flight.close()
        self.slots.close()
