"""`--shard` and `--in-flight`, resolved once per process (workers take the controller's shard)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from .shard import Shard, parse_shard

if TYPE_CHECKING:
    from ..run.worker_input import WorkerInput


@dataclass(frozen=True)
class ScaleOptions:
    shard: Shard | None = None
    in_flight: int | None = None  #: episodes each process runs at once (--in-flight); None: each app's default


def build_scale_options(option: Callable[[str], Any], worker: WorkerInput | None,
                        resumed: Mapping[str, Any] | None) -> ScaleOptions:
    """`resumed`: the run.json --resume completes (None for a new run): a resumed shard stays that shard."""
    # a worker takes the controller's: -n N with a model agent may have set it (scale/workers.py)
    in_flight_text = worker.in_flight if worker is not None else option("in-flight")
    try:
        in_flight = int(in_flight_text) if in_flight_text not in (None, "") else None
    except ValueError:
        raise UsageError(f"--in-flight takes a whole number; got {in_flight_text!r}") from None
    if in_flight is not None and in_flight < 1:
        raise UsageError(f"--in-flight must be at least 1; got {in_flight}")
    if worker is not None:
        shard_text = worker.shard
    else:
        shard_text = option("shard")
        if resumed is not None:
            shard_text = shard_text or resumed.get("shard")
        elif shard_text and option("seed") in (None, ""):
            raise UsageError("--shard needs --seed: every shard must generate the same queries")
    return ScaleOptions(parse_shard(shard_text), in_flight)
