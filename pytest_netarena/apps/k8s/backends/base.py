"""What an environment needs from a cluster: set up the faulted app, let kubectl at it, read its state."""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..matrix import Matrix
from ..protected import Fingerprints


class ClusterBusy(Exception):
    """observe() could not read the cluster within its deadline: something the agent started holds it."""


@dataclass(frozen=True)
class ClusterState:
    """One reading: the connectivity matrix and the fingerprints of the protected objects."""

    matrix: Matrix
    protected: Fingerprints


class Backend(ABC):
    name: str
    namespace: str  #: the namespace the app of the current episode lives in
    kubectl: str  #: path of the kubectl binary
    #: the network namespace agent actions run in (None: a box of their own with no network)
    network = None
    #: extra read-only host paths agent boxes need, as (host path, box path)
    binds: tuple[tuple[str, str], ...] = ()
    #: the worker's scratch folder (kubeconfigs, kubectl caches), made by prepare()
    _tmp: str | None = None

    @abstractmethod
    def prepare(self) -> None:
        """Once per worker; raises BackendUnavailable when this backend cannot run here."""

    @abstractmethod
    def begin(self, policies: Mapping[str, dict], overrides: Sequence[dict] = ()) -> None:
        """Start an episode: the healthy app with exactly these policies (by name), and these manifests in place
        of the healthy ones of the same kind and name (an impossible episode's protected objects)."""

    def end(self) -> None:
        """Finish the current episode (release what begin() took)."""

    @abstractmethod
    def kubectl_env(self) -> dict[str, str]:
        """Environment variables for a harness-side kubectl at this episode's cluster (as the agent)."""

    @abstractmethod
    def agent_kubeconfig(self) -> bytes:
        """The kubeconfig agent actions see: only this episode's namespace-scoped identity."""

    def policy_checker(self) -> Any:
        """The MatrixChecker of the latest reading (observe() first), or None when the backend only probes."""
        return getattr(self, "_checker", None)

    @abstractmethod
    def observe(self) -> ClusterState:
        """Read the current matrix and protected objects (ClusterBusy when that cannot finish in time)."""

    @contextmanager
    def watching_writes(self, check: Any) -> Iterator[None]:
        """While the block runs (one agent action), tell check (a writes.WriteCheck) the matrix after every
        write that can change it. This default sees nothing between step ends."""
        yield

    def explain(self, flow) -> str:
        return ""

    def close(self) -> None:
        """Release everything (once per worker): here the scratch folder and the network namespace handle."""
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self.network is not None:
            self.network.close()
            self.network = None
