"""Prints start, load, snapshot/reset, write-path and kubectl round-trip timings of the embedded Kubernetes API server.

    python benchmarks/kube.py [--workloads 200]

Write-path figures use a namespace of N deployments + N services + N NetworkPolicies (like
`--k8s-app synthetic:N`): a bulk load, a NetworkPolicy write (what an agent's patch costs the
server), a Deployment scale (a write the controllers must follow), and `kubectl apply -f -` of 35
objects.

Request bounds (also alone with --bounds-only): what the per-request limits cost a fair request (the
object size check, a CPU-time checkpoint, a one-op patch over HTTP with the size check and CPU budget
on and off) and how fast hostile patches are refused.
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


def _http(server, method: str, path: str, body, content_type: str) -> int:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(server.url + path, method=method, data=json.dumps(body).encode(),
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        error.read()
        return error.code


def _per_call(function, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        function()
    return (time.perf_counter() - started) / repeat


def bounds(server) -> None:
    """What the request bounds cost a fair request, and how fast hostile patches are refused."""
    from pytest_netarena.kube import limits

    policy = _policy("bounded", "default")
    server.apply_object(policy)
    path = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/bounded"
    stored = server.get_object("NetworkPolicy", "default", "bounded")
    deploy = server.apply_object(_deploy("bounded", "default"))
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "x" * (1 << 20)}}
    for label, obj, repeat in (("NetworkPolicy", stored, 2000), ("Deployment", deploy, 2000),
                               ("1 MiB ConfigMap", big, 20)):
        print(f"object size check ({label}): {1e6 * _per_call(lambda: limits.check_object_size(obj), repeat):.1f} us")
    with limits.cpu_budget(60):
        print(f"CPU-time checkpoint (limits.spend): {1e6 * _per_call(limits.spend, 100_000):.2f} us")
    one_op = [{"op": "replace", "path": "/spec/ingress/0/ports/0/port", "value": 8080}]
    flip = [{"op": "replace", "path": "/spec/ingress/0/ports/0/port", "value": 8081}]
    check, budget = limits.check_object_size, server.request_cpu_s
    for i in range(20):  # warm-up: first connections and imports
        _http(server, "PATCH", path, flip if i % 2 else one_op, "application/json-patch+json")
    for label in ("on", "off"):
        if label == "off":
            limits.check_object_size, server.request_cpu_s = (lambda obj: None), None
        samples = []
        for i in range(200):
            started = time.perf_counter()
            _http(server, "PATCH", path, flip if i % 2 else one_op, "application/json-patch+json")
            samples.append(time.perf_counter() - started)
        print(f"one-op JSON patch of a NetworkPolicy over HTTP, size check and CPU budget {label}: {_median(samples)}")
    limits.check_object_size, server.request_cpu_s = check, budget
    doubling = [{"op": "copy", "from": "/spec/ingress", "path": "/spec/ingress/-"}] * 22
    for label, body in (("22 doubling copies (422)", doubling),
                        ("10,001 operations (413)", [{"op": "test", "path": "/kind", "value": "x"}] * 10_001)):
        started = time.perf_counter()
        code = _http(server, "PATCH", path, body, "application/json-patch+json")
        print(f"refused: {label}: {code} in {_ms(time.perf_counter() - started)}")
    server.delete_object("NetworkPolicy", "default", "bounded")
    server.delete_object("Deployment", "default", "bounded")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--bounds-only", action="store_true", help="only the request bounds' figures")
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
    bounds(server)
    if args.bounds_only:
        server.stop()
        return
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
    for i in range(min(10, n)):  # the first workloads of the bulk load (all of them when --workloads is small)
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
