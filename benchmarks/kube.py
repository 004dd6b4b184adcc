"""Prints start, load, snapshot/reset and kubectl round-trip timings of the embedded Kubernetes API server."""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time


def _deploy(name: str) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "boutique"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "server", "image": f"example/{name}:1",
                                                           "ports": [{"containerPort": 8080}]}]}}}}


def main() -> None:
    from pytest_netarena.kube import (
        EmbeddedAPIServer,
        kubectl_env,
        kubectl_minor,
        kubectl_path,
    )

    kubectl_minor()  # warm the kubectl version probe, which is cached per process
    started = time.perf_counter()
    server = EmbeddedAPIServer().start()
    server.wait_ready()
    print(f"start (construct + bind + ready): {1000 * (time.perf_counter() - started):.1f} ms")
    started = time.perf_counter()
    for i in range(12):
        server.apply_object(_deploy(f"svc{i}"))
        server.apply_object({"apiVersion": "v1", "kind": "Service",
                             "metadata": {"name": f"svc{i}", "namespace": "boutique"},
                             "spec": {"selector": {"app": f"svc{i}"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    print(f"load 12 deployments + 12 services (with controllers): {1000 * (time.perf_counter() - started):.1f} ms")
    started = time.perf_counter()
    server.snapshot()
    print(f"snapshot: {1000 * (time.perf_counter() - started):.3f} ms")
    resets = []
    for _ in range(50):
        server.apply_object({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                             "metadata": {"name": "deny", "namespace": "boutique"}, "spec": {"podSelector": {}}})
        started = time.perf_counter()
        server.reset()
        resets.append(time.perf_counter() - started)
    print(f"reset: median {1000 * statistics.median(resets):.3f} ms, max {1000 * max(resets):.3f} ms")
    env = kubectl_env(server, tempfile.mkdtemp(prefix="kube-bench-"))
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([kubectl_path(), "get", "pods", "-n", "boutique"], env=env, capture_output=True, check=True)
        runs.append(time.perf_counter() - started)
    print(f"kubectl get pods: median {1000 * statistics.median(runs):.0f} ms (first {1000 * runs[0]:.0f} ms)")
    started = time.perf_counter()
    server.stop()
    print(f"stop: {1000 * (time.perf_counter() - started):.1f} ms")


if __name__ == "__main__":
    main()
