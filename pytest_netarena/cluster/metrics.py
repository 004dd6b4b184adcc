"""The pods' resource metrics, as metrics-server serves them to the HorizontalPodAutoscaler: from their cgroups.

The API server's autoscaler reads `store.metrics.usage(namespace, pods)` (kube/autoscaler.py). This source
samples every running pod's control groups every SAMPLE_S seconds: CPU as the rate of CPU time over the
last WINDOW_S seconds (millicores, what the kubelet's summary and metrics-server report), memory as the
bytes in use. A pod appears only once it has two samples WINDOW_S/2 apart (as metrics-server leaves a pod
out until its first scrape window closes: "did not receive metrics for targeted pods"). Every SYNC_S
seconds it asks the controllers to reconcile every HorizontalPodAutoscaler again (the controller's
--horizontal-pod-autoscaler-sync-period), so the replicas follow the load as it changes.
"""

from __future__ import annotations

import collections
import threading
import time

SAMPLE_S = 1.0
WINDOW_S = 10.0
#: the autoscalers' sync period (a real controller manager's is 15 s)
SYNC_S = 5.0


class PodMetrics:
    """The cluster's metrics source: attach with `start()` (sets server.store.metrics), detach with `stop()`."""

    def __init__(self, server, kubelet, groups, sample_s: float = SAMPLE_S, window_s: float = WINDOW_S,
                 sync_s: float = SYNC_S) -> None:
        self.server, self.kubelet, self.groups = server, kubelet, groups
        self.sample_s, self.window_s, self.sync_s = sample_s, window_s, sync_s
        #: (pod uid, container name or "" for the whole pod) -> (time, cpu seconds, memory bytes)
        self._samples: dict[tuple[str, str], collections.deque] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="netarena-pod-metrics", daemon=True)

    def start(self) -> PodMetrics:
        if self.groups.ok:
            self.server.store.metrics = self
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.server.store.metrics is self:
            self.server.store.metrics = None
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    # -- the source -------------------------------------------------------------------------------------------
    def usage(self, namespace: str, pods: list[dict]) -> dict[str, dict]:
        """{pod name: {"cpu": millicores, "memory": bytes, "containers": {name: {"cpu": ..., "memory": ...}}}} for the
        pods with a full window of samples."""
        found = {}
        with self._lock:
            for pod in pods:
                uid = pod["metadata"].get("uid", "")
                figures = self._rate(self._samples.get((uid, "")))
                if figures is None:
                    continue
                containers = {}
                for (pod_uid, name), samples in self._samples.items():
                    if pod_uid == uid and name:
                        rated = self._rate(samples)
                        if rated is not None:
                            containers[name] = rated
                found[pod["metadata"]["name"]] = {**figures, "containers": containers}
        return found

    def _rate(self, samples) -> dict[str, float] | None:
        if not samples or len(samples) < 2:
            return None
        first, last = samples[0], samples[-1]
        span = last[0] - first[0]
        if span < self.window_s / 2:
            return None
        return {"cpu": max(0.0, (last[1] - first[1]) / span * 1000.0), "memory": float(last[2])}

    # -- sampling ---------------------------------------------------------------------------------------------
    def _run(self) -> None:
        next_sync = time.monotonic() + self.sync_s
        while not self._stop.wait(self.sample_s):
            self._sample()
            if time.monotonic() >= next_sync:
                next_sync = time.monotonic() + self.sync_s
                self._sync()

    def _sample(self) -> None:
        now = time.monotonic()
        runs = list(self.kubelet.runs.values())
        with self._lock:
            live = set()
            for run in runs:
                if run.stopping or not run.groups:
                    continue
                groups = [("", run.groups)] + [(c.name, c.groups) for c in run.all_containers() if c.groups]
                for name, folders in groups:
                    reading = self.groups.usage(folders)
                    if reading is None:
                        continue
                    live.add((run.uid, name))
                    samples = self._samples.setdefault((run.uid, name), collections.deque())
                    samples.append((now, *reading))
                    while len(samples) > 2 and now - samples[1][0] >= self.window_s:
                        samples.popleft()
            for key in [k for k in self._samples if k not in live]:
                del self._samples[key]

    def _sync(self) -> None:
        """Reconcile every autoscaler again (the sync period), as a write would."""
        cluster = self.server.cluster
        store = self.server.store
        try:
            with store.transaction():
                namespaces = {h["metadata"]["namespace"] for h in store.list("horizontalpodautoscalers")}
                if not namespaces:
                    return
                cluster.queue.autoscalers.update(namespaces)
                cluster.settle_now()
        except Exception:  # noqa: BLE001  (a store going away while the cluster stops)
            pass
