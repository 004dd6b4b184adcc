"""Prints start, load, snapshot/reset, write-path and kubectl round-trip timings of the embedded Kubernetes API server.

    python benchmarks/kube.py [--workloads 200]

Write-path figures use a namespace of N deployments + N services + N NetworkPolicies (like
`--k8s-app synthetic:N`): a bulk load, a NetworkPolicy write (what an agent's patch costs the
server), a Deployment scale (a write the controllers must follow), and `kubectl apply -f -` of 35
objects.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time


def _deploy(name: str, namespace: str = "boutique") -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "server", "image": f"example/{name}:1",
                                                           "ports": [{"containerPort": 8080}]}]}}}}


def _service(name: str, namespace: str = "boutique") -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}}


def _policy(name: str, namespace: str = "boutique", port: int = 8080) -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"podSelector": {"matchLabels": {"app": name}}, "policyTypes": ["Ingress"],
                     "ingress": [{"ports": [{"port": port, "protocol": "TCP"}]}]}}


def _app(n: int, namespace: str) -> list[dict]:
    return [o for i in range(n) for o in (_deploy(f"svc{i}", namespace), _service(f"svc{i}", namespace),
                                          _policy(f"svc{i}", namespace))]


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f} ms"


def _median(samples: list[float]) -> str:
    return f"median {_ms(statistics.median(samples))}, max {_ms(max(samples))}"


def _load(server, objects: list[dict]) -> None:
    if hasattr(server, "batch"):
        with server.batch():
            server.apply_objects(objects)
    else:  # before the batch API: one write (and one reconcile) per object
        server.apply_objects(objects)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=200)
    args = parser.parse_args()
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
    print(f"start (construct + bind + ready): {_ms(time.perf_counter() - started)}")
    started = time.perf_counter()
    for i in range(12):
        server.apply_object(_deploy(f"svc{i}"))
        server.apply_object(_service(f"svc{i}"))
    print(f"load 12 deployments + 12 services one by one (with controllers): {_ms(time.perf_counter() - started)}")
    n = args.workloads
    started = time.perf_counter()
    _load(server, _app(n, "big"))
    print(f"bulk load {n} deployments + {n} services + {n} policies: {_ms(time.perf_counter() - started)} "
          f"({len(server.list_objects('Pod', 'big'))} pods running)")
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
    writes, scales = [], []
    for i in range(10):
        started = time.perf_counter()
        server.apply_object(_policy(f"svc{i}", "big", port=9000 + i))
        writes.append(time.perf_counter() - started)
        deploy = server.get_object("Deployment", "big", f"svc{i}")
        deploy["spec"]["replicas"] = 2
        started = time.perf_counter()
        server.apply_object(deploy)
        scales.append(time.perf_counter() - started)
    print(f"NetworkPolicy write among {n} workloads: {_median(writes)}")
    print(f"Deployment scale 1 -> 2 among {n} workloads: {_median(scales)}")
    server.reset()
    env = kubectl_env(server, tempfile.mkdtemp(prefix="kube-bench-"))
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([kubectl_path(), "get", "pods", "-n", "boutique"], env=env, capture_output=True, check=True)
        runs.append(time.perf_counter() - started)
    print(f"kubectl get pods: median {1000 * statistics.median(runs):.0f} ms (first {1000 * runs[0]:.0f} ms)")
    # 35 objects, as an agent applies an app's manifests: 12 deployments, 12 services, 11 policies.
    manifest = _app(12, "big")[:35]
    stream = "\n---\n".join(json.dumps(o) for o in manifest)
    for label, namespace in (("creates", "fresh"), (f"updates among {n} workloads", "big")):
        docs = stream.replace('"namespace": "big"', f'"namespace": "{namespace}"')
        server.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        started = time.perf_counter()
        subprocess.run([kubectl_path(), "apply", "-f", "-"], input=docs, text=True, env=env, capture_output=True,
                       check=True)
        print(f"kubectl apply -f - of 35 objects ({label}): {_ms(time.perf_counter() - started)}")
    started = time.perf_counter()
    server.stop()
    print(f"stop: {_ms(time.perf_counter() - started)}")


if __name__ == "__main__":
    main()
