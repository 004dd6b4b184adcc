"""`--k8s-app synthetic:N`: a generated microservice app with a random acyclic call graph and matching policies."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from .model import AppSpec, app_from_manifests

MAX_CALLERS = 3


def _name(index: int, width: int) -> str:
    return f"svc-{index:0{width}d}"


@cache
def synthetic_app(size: int, seed: int = 0) -> AppSpec:
    """N services svc-0..svc-(N-1) plus a load generator. svc-0 is the entry point (open to everyone,
    like Online Boutique's frontend); every other service is called by 1-3 lower-numbered services,
    so the call graph is acyclic. Each policy admits exactly the callers on the service's target port
    and allows all egress; the load generator's policy is egress-only."""
    rng = random.Random(f"netarena-synthetic-{size}-{seed}")
    width = len(str(size - 1))
    names = [_name(i, width) for i in range(size)]
    callers: dict[int, list[int]] = {0: []}
    for index in range(1, size):
        count = rng.randint(1, min(MAX_CALLERS, index))
        callers[index] = sorted(rng.sample(range(index), count))
    manifests: list[dict[str, Any]] = []
    policies: list[dict[str, Any]] = []
    for index, name in enumerate(names):
        target = 8080 if index == 0 else 5000 + index
        port = 80 if index == 0 else (target if rng.random() < 0.7 else 6000 + index)
        manifests.append(_deployment(name, "server", [target]))
        manifests.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": {"app": name}},
                          "spec": {"selector": {"app": name}, "ports": [
                              {"name": "grpc" if index else "http", "port": port, "targetPort": target,
                               "protocol": "TCP"}]}})
        spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": name}}, "policyTypes": ["Ingress", "Egress"]}
        if index == 0:
            spec["ingress"] = [{}]
        else:
            spec["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"app": names[c]}}} for c in callers[index]],
                                "ports": [{"port": target, "protocol": "TCP"}]}]
        spec["egress"] = [{}]
        policies.append(_policy(name, spec))
    manifests.append(_deployment("loadgenerator", "main", []))
    policies.append(_policy("loadgenerator", {"podSelector": {"matchLabels": {"app": "loadgenerator"}},
                                              "policyTypes": ["Egress"], "egress": [{}]}))
    return app_from_manifests(f"synthetic:{size}:{seed}", manifests, policies)


def _deployment(name: str, container: str, ports: list[int]) -> dict[str, Any]:
    spec_container: dict[str, Any] = {"name": container, "image": "registry.k8s.io/e2e-test-images/agnhost:2.53"}
    if ports:
        spec_container["ports"] = [{"containerPort": p, "protocol": "TCP"} for p in ports]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [spec_container]}}}}


def _policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name}, "spec": spec}
