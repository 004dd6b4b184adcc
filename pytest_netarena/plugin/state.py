"""What the plugin's modules share: the stash keys, this process's Scale, and the skip messages the reporter counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from ..core.types import EpisodeResult
from ..run.settings import Settings
from ..run.worker_input import WorkerInput
from ..scale.inflight import EnvironmentSlots, InFlight
from ..scale.options import ScaleOptions
from ..scale.service import Controller, RemoteController, RunService
from ..scale.workers import WorkerSplit
from .options import NO_AGENT_MESSAGE  # noqa: F401  (the skip message the reporter counts)

SETTINGS_KEY = pytest.StashKey[Settings]()
RESULT_KEY = pytest.StashKey[EpisodeResult]()
SCALE_KEY = pytest.StashKey["Scale"]()
FOLDED_KEY = pytest.StashKey[WorkerSplit]()  #: what -n N with a model agent became (controller)
EPISODE_LINE_KEY = pytest.StashKey[str]()  #: a freshly played episode's episodes.jsonl line, for the controller
USER_APPS_KEY = pytest.StashKey[dict[str, str]]()  #: apps the run registered (netarena_apps), name -> MODULE:ATTR
WARNINGS_KEY = pytest.StashKey[list[str]]()  #: what the header warns about (e.g. a cost cap on an unpriced model)
WORKER_KEY = pytest.StashKey[WorkerInput]()  #: the controller's hand-off, read once (xdist workers)
NO_CONTROLLER = ("pytest-netarena: this xdist worker has no link to its controller "
                 "(the controller must run pytest-netarena too)")

BUDGET_SKIP = "not run: the run's budget is spent"


@dataclass
class Scale:
    """This process's part in a run: who answers run-wide questions, its environments, episodes in flight."""

    options: ScaleOptions
    controller: Controller  #: RunService (the controller) or RemoteController (an xdist worker)
    service: RunService | None  #: set in the controller only
    slots: EnvironmentSlots
    in_flight: InFlight | None = None
    positions: dict[str, int] | None = None  #: without xdist: item node id -> index, to start episodes ahead
    collected: dict[str, int] = field(default_factory=dict)  #: items collected, and kept by --shard

    @classmethod
    def for_process(cls, config: pytest.Config, settings: Settings, options: ScaleOptions) -> Scale:
        worker = worker_input(config)
        slots = EnvironmentSlots(settings.run_options)
        if worker is None:
            service = RunService(settings)
            return cls(options, service, service, slots)
        from ..scale.link import worker_link

        client = worker_link()
        if client is None:
            raise pytest.UsageError(NO_CONTROLLER)
        return cls(options, RemoteController(client, settings, bool(worker.run_info)), None, slots)

    def close(self) -> None:
        if self.in_flight is not None:
            self.in_flight.close()
        self.slots.close()


def worker_input(config: pytest.Config) -> WorkerInput | None:
    """What the controller handed this xdist worker; None in the controller (or without xdist)."""
    raw = getattr(config, "workerinput", None)
    if raw is None:
        return None
    if WORKER_KEY not in config.stash:
        try:
            config.stash[WORKER_KEY] = WorkerInput.from_workerinput(raw)
        except KeyError:
            raise pytest.UsageError(NO_CONTROLLER) from None
    return config.stash[WORKER_KEY]
