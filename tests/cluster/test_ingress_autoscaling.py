"""The k3s profile's ingress controller and the HorizontalPodAutoscaler against the pods' real usage, through the real
kubectl: traefik routes real HTTP by host and path to Services (from a pod and from the harness), and an autoscaler
fed by the pods' cgroups scales a Deployment that burns CPU, with its conditions and currentMetrics."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path
from pytest_netarena.kube.k3s import Profile

from .conftest import Live, needs_live

pytestmark = needs_live


@pytest.fixture(scope="module")
def k3s(tmp_path_factory):
    if not live_support().ok:
        pytest.skip(live_support().reason)
    from pytest_netarena.cluster import LiveCluster

    server = EmbeddedAPIServer(profile=Profile()).start()
    cluster = LiveCluster(server, backoff_s=0.5).start()
    try:
        cluster.wait_ready(60)
        yield Live(server, cluster, kubectl_env(server, tmp_path_factory.mktemp("kubectl")), kubectl_path())
    finally:
        cluster.stop()
        server.stop()


def _web(name: str, text: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}}}
        spec:
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
              containers:
              - name: web
                image: busybox
                command: [sh, -c, "mkdir -p /www/api && echo {text} > /www/index.html && echo {text}-api > /www/api/x \\
                  && exec httpd -f -p 8080 -h /www"]
                ports: [{{name: http, containerPort: 8080}}]
                readinessProbe: {{tcpSocket: {{port: http}}, periodSeconds: 1}}
        ---
        apiVersion: v1
        kind: Service
        metadata: {{name: {name}}}
        spec: {{selector: {{app: {name}}}, ports: [{{port: 80, targetPort: http}}]}}
        """)


INGRESS = """\
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop}
spec:
  ingressClassName: traefik
  rules:
  - host: shop.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: storefront, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: catalog, port: {number: 80}}}}
  - host: "*.wild.test"
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: catalog, port: {number: 80}}}}
"""


def test_traefik_routes_by_host_and_path_from_pods_and_the_harness(k3s):
    ns = k3s.namespace()
    k3s.kubectl("-n", ns, "apply", "-f", "-", input=_web("storefront", "store") + "---\n" + _web("catalog", "catalog"))
    k3s.kubectl("-n", ns, "apply", "-f", "-", input=INGRESS)
    k3s.kubectl("-n", ns, "run", "client", "--image=busybox", "--", "sleep", "3600")
    k3s.ready(ns)
    assert k3s.json("get", "ingressclass", "traefik")["spec"]["controller"] == "traefik.io/ingress-controller"

    def get(host: str, path: str = "/") -> str:
        done = k3s.kubectl("-n", ns, "exec", "client", "--", "wget", "-qO-", "-T", "3", "--header", f"Host: {host}",
                           f"http://traefik.kube-system.svc.cluster.local{path}", check=False)
        return done.stdout + done.stderr

    assert get("shop.example.test") == "store\n"
    assert get("shop.example.test", "/api/x") == "catalog-api\n"
    assert get("shop.example.test", "/apix") == get("shop.example.test", "/missing")  # Prefix is by path elements
    assert get("a.wild.test") == "catalog\n"
    assert "404" in get("b.a.wild.test") and "404" in get("other.test")
    service = k3s.json("-n", "kube-system", "get", "service", "traefik")["spec"]
    answer = k3s.cluster.http(service["clusterIP"], 80, "/", host="shop.example.test")
    assert answer.startswith(b"HTTP/1.0 200") or answer.startswith(b"HTTP/1.1 200")
    assert answer.endswith(b"store\n")
    k3s.kubectl("-n", ns, "patch", "ingress", "shop", "--type=json", "-p", json.dumps(
        [{"op": "replace", "path": "/spec/rules/0/http/paths/0/backend/service/port/number", "value": 8080}]))
    assert b"404 page not found" in k3s.cluster.http(service["clusterIP"], 80, "/", host="shop.example.test")


BURNER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: burner}
spec:
  replicas: 1
  selector: {matchLabels: {app: burner}}
  template:
    metadata: {labels: {app: burner}}
    spec:
      containers:
      - name: burn
        image: busybox
        command: [sh, -c, "while :; do :; done"]
        resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: burner}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: burner}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""


def test_an_autoscaler_follows_the_pods_cpu_usage(k3s):
    ns = k3s.namespace()
    k3s.kubectl("-n", ns, "apply", "-f", "-", input=BURNER)

    def scaled():
        status = k3s.json("-n", ns, "get", "hpa", "burner").get("status") or {}
        return status if status.get("desiredReplicas") == 3 else None

    try:
        status = k3s.wait_for(scaled, timeout=60, what="the autoscaler to scale the burner out")
        conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
        assert conditions["ScalingActive"] == ("True", "ValidMetricFound")
        assert conditions["ScalingLimited"] == ("True", "TooManyReplicas")
        assert status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] > 100
        assert k3s.json("-n", ns, "get", "deployment", "burner")["spec"]["replicas"] == 3
        assert "SuccessfulRescale" in k3s.kubectl("-n", ns, "describe", "hpa", "burner").stdout
    finally:
        k3s.kubectl("-n", ns, "delete", "deployment", "burner")


def test_a_container_resource_autoscaler_reads_that_containers_own_usage(k3s):
    ns = k3s.namespace()
    pair = BURNER.replace("name: burn\n", "name: burn\n").replace(
        "        resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}\n",
        "        resources: {requests: {cpu: 100m}, limits: {cpu: 200m}}\n"
        "      - name: idle\n        image: busybox\n        command: [sleep, \"3600\"]\n"
        "        resources: {requests: {cpu: 100m}}\n").replace(
        "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n",
        "  - type: ContainerResource\n    containerResource: {name: cpu, container: CONTAINER, target: {type: "
        "Utilization, averageUtilization: 50}}\n")
    k3s.kubectl("-n", ns, "apply", "-f", "-", input=pair.replace("CONTAINER", "idle"))

    def measured():
        status = k3s.json("-n", ns, "get", "hpa", "burner").get("status") or {}
        return status if status.get("currentMetrics") else None

    try:
        idle = k3s.wait_for(measured, timeout=60, what="the idle container's usage")["currentMetrics"][0]
        assert idle["containerResource"]["container"] == "idle"
        assert idle["containerResource"]["current"]["averageUtilization"] < 20
        k3s.kubectl("-n", ns, "patch", "hpa", "burner", "--type=json", "-p", json.dumps(
            [{"op": "replace", "path": "/spec/metrics/0/containerResource/container", "value": "burn"}]))
        k3s.wait_for(lambda: (k3s.json("-n", ns, "get", "hpa", "burner").get("status") or {}).get(
            "desiredReplicas") == 3, timeout=60, what="the burner's own usage to scale it out")
    finally:
        k3s.kubectl("-n", ns, "delete", "deployment", "burner")
