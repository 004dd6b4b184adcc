"""Live cluster speed (issue 30): Online Boutique started with every pod Running and Ready, one `kubectl exec` probe
(server side and the real kubectl's round trip), the k8s app's start (make_environment and first reset) and its
per-step check with the pods off and running, teardown, and what keeping a container's output costs.

    python benchmarks/pods.py [--runs 5] [--probes 30] [--steps 30]

Targets: start of Online Boutique < 300 ms; one exec probe < 50 ms; the per-step check no slower with pods running.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import time


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return (f"median {statistics.median(ordered) * 1000:.1f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:.1f} ms"
            f" ({len(ordered)} runs)")


def start_and_teardown(runs: int) -> None:
    from pytest_netarena.apps.k8s.workloads.model import online_boutique
    from pytest_netarena.cluster import LiveCluster
    from pytest_netarena.kube import EmbeddedAPIServer

    app = online_boutique()
    manifests = [*app.manifests, *app.policies]
    attach, boutique, teardown = [], [], []
    for _ in range(runs):
        server = EmbeddedAPIServer().start()
        started = time.perf_counter()
        live = LiveCluster(server).start()
        live.wait_ready(60)  # the cluster DNS
        attach.append(time.perf_counter() - started)
        started = time.perf_counter()
        server.apply_objects([copy.deepcopy(m) for m in manifests])
        live.wait_ready(60)
        boutique.append(time.perf_counter() - started)
        started = time.perf_counter()
        live.stop()
        server.stop()
        teardown.append(time.perf_counter() - started)
    print(f"live cluster start (node, DNS pod ready): {_ms(attach)}")
    print(f"Online Boutique applied until all 12 pods Running and Ready (target < 300 ms): {_ms(boutique)}")
    print(f"teardown of the cluster with its 13 pods and the API server: {_ms(teardown)}")


def exec_probe(probes: int) -> None:
    from pytest_netarena.apps.k8s.workloads.model import online_boutique
    from pytest_netarena.cluster import LiveCluster
    from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path

    server = EmbeddedAPIServer().start()
    live = LiveCluster(server).start()
    try:
        server.apply_objects([copy.deepcopy(m) for m in (*online_boutique().manifests, *online_boutique().policies)])
        live.wait_ready(60)
        env = kubectl_env(server, f"/tmp/netarena-bench-{os.getpid()}")
        pod = next(p["metadata"]["name"] for p in server.list_objects("Pod", "default")
                   if p["metadata"]["name"].startswith("frontend"))
        argv = [kubectl_path(), "exec", pod, "--", "wget", "-qO-", "-T", "2", "http://adservice:9555"]
        server_side, round_trip, harness = [], [], []
        original = live.exec

        def timed(request, channel):
            started = time.perf_counter()
            try:
                return original(request, channel)
            finally:
                server_side.append(time.perf_counter() - started)

        live.exec = timed
        server.runtime = live
        for _ in range(probes):
            started = time.perf_counter()
            subprocess.run(argv, env=env, capture_output=True, check=False)
            round_trip.append(time.perf_counter() - started)
        address = server.get_object("Service", "default", "adservice")["spec"]["clusterIP"]
        for _ in range(probes):
            started = time.perf_counter()
            live.probe(f"default/{pod}", address, 9555)
            harness.append(time.perf_counter() - started)
        version = subprocess.run([kubectl_path(), "version", "--client"], env=env, capture_output=True)
        started, bare = time.perf_counter(), []
        for _ in range(probes):
            started = time.perf_counter()
            subprocess.run([kubectl_path(), "version", "--client"], env=env, capture_output=True)
            bare.append(time.perf_counter() - started)
        del version
        print(f"kubectl exec probe (wget to a Service), server side (target < 50 ms): {_ms(server_side)}")
        print(f"kubectl exec probe, the real kubectl's whole round trip: {_ms(round_trip)}")
        print(f"  of which kubectl's own start (`kubectl version --client`): {_ms(bare)}")
        print(f"harness probe through the data plane with identity proof (LiveCluster.probe): {_ms(harness)}")
    finally:
        live.stop()
        server.stop()


def step_checks(steps: int) -> None:
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    for pods in ("off", "live"):
        options = RunOptions(seed=1, queries=2, extra={"k8s_pods": pods})
        queries = APP.generate(options)
        env = APP.make_environment(options)
        checks, resets = [], []
        try:
            backend = env.backend
            for index in range(steps):
                query = queries[index % len(queries)]
                started = time.perf_counter()
                env.reset(query)
                resets.append(time.perf_counter() - started)
                healthy = env.app.healthy_policies()
                name = query.params["faults"][0]["policy"]
                backend.server.apply_object({**healthy[name], "metadata": {**healthy[name]["metadata"],
                                                                           "namespace": backend.namespace}})
                started = time.perf_counter()
                backend.observe()
                checks.append(time.perf_counter() - started)
        finally:
            env.close()
        print(f"k8s app, pods {pods} ({backend.mode}): per-step check after a policy write {_ms(checks)}; "
              f"episode reset {_ms(resets)}")


def environment_start(runs: int) -> None:
    """What a suite waits for before its first episode: make_environment (server, app, pods Running and Ready
    when live) and the first reset."""
    from pytest_netarena.apps.k8s import APP
    from pytest_netarena.core.app import RunOptions

    for pods in ("off", "live"):
        options = RunOptions(seed=1, queries=1, extra={"k8s_pods": pods})
        query = APP.generate(options)[0]
        made, reset = [], []
        for _ in range(runs):
            started = time.perf_counter()
            env = APP.make_environment(options)
            made.append(time.perf_counter() - started)
            started = time.perf_counter()
            try:
                env.reset(query)
                reset.append(time.perf_counter() - started)
            finally:
                env.close()
        print(f"k8s app, pods {pods}: make_environment {_ms(made)}; first reset {_ms(reset)}")


def log_cost(chunks: int) -> None:
    """What keeping a container's output costs the harness, per 64 KiB read, for short and long lines."""
    from pytest_netarena.cluster.logs import ContainerLog

    for width in (2, 200):
        chunk = (b"y" * (width - 1) + b"\n") * (65536 // width)
        log = ContainerLog()
        started = time.perf_counter()
        for _ in range(chunks):
            log.write(chunk)
        per_chunk = (time.perf_counter() - started) / chunks
        print(f"a container's output kept, lines of {width} bytes: {per_chunk * 1e6:.1f} us per 64 KiB read "
              f"({len(chunk) / per_chunk / 1e6:.0f} MB/s of one harness thread)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--probes", type=int, default=30)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--log-chunks", type=int, default=200, help="64 KiB reads of output to keep (log cost)")
    args = parser.parse_args()
    log_cost(args.log_chunks)
    from pytest_netarena.cluster import live_support

    if not live_support().ok:
        raise SystemExit(f"pods cannot run here: {live_support().reason}")
    start_and_teardown(args.runs)
    environment_start(args.runs)
    exec_probe(args.probes)
    step_checks(args.steps)


if __name__ == "__main__":
    main()
