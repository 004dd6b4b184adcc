"""The operator story (--k8s-story operator): the incident as users see it, and distractors beside the app.

The task states what users and the security scan report, never the mismatch report; unrelated healthy workloads
and noisy events stand beside the application."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from .matrix import Matrix
from .workloads.model import ARROW, Flow

MISMATCH, OPERATOR = "mismatch", "operator"
STORIES = (MISMATCH, OPERATOR)

#: what users of Online Boutique notice when a call fails, by (client, service)
FEATURES = {
    ("frontend", "adservice"): "ads no longer show on product pages",
    ("frontend", "cartservice"): "adding an item to the cart fails",
    ("frontend", "checkoutservice"): "placing an order fails right after \"Place order\"",
    ("frontend", "currencyservice"): "prices cannot be shown in another currency",
    ("frontend", "productcatalogservice"): "product pages do not load",
    ("frontend", "recommendationservice"): "the \"you may also like\" recommendations are gone",
    ("frontend", "shippingservice"): "the cart page cannot quote shipping costs",
    ("checkoutservice", "cartservice"): "checkout fails: the order's cart cannot be read",
    ("checkoutservice", "currencyservice"): "checkout fails while converting the order total",
    ("checkoutservice", "emailservice"): "orders go through but no confirmation email arrives",
    ("checkoutservice", "paymentservice"): "checkout fails at the payment step",
    ("checkoutservice", "productcatalogservice"): "checkout fails looking up the ordered products",
    ("checkoutservice", "shippingservice"): "checkout fails at the shipping step",
    ("recommendationservice", "productcatalogservice"): "the \"you may also like\" recommendations are empty",
    ("loadgenerator", "frontend"): "the synthetic load test reports the storefront unreachable",
    ("cartservice", "redis-cart"): "carts come back empty and items vanish from them",
}


def _feature(flow: Flow) -> str:
    return FEATURES.get((flow.source, flow.service),
                        f"requests of {flow.source} that need {flow.service} fail (its callers report errors)")


def symptoms(intent: Matrix, actual: Mapping[Flow, bool], namespace: str) -> str:
    """The incident as users and the security team describe it: the features that fail, and the services a scan
    found reachable by workloads that should not reach them (the services only, never the callers)."""
    blocked = [flow for flow, wanted in intent.items() if wanted and not actual.get(flow, False)]
    opened = [flow for flow, wanted in intent.items() if not wanted and actual.get(flow, False)]
    lines = [f"Incident in namespace {namespace!r}, opened after this morning's NetworkPolicy change window."]
    reported = list(dict.fromkeys(_feature(flow) for flow in blocked))
    if reported:
        lines.append("Users report:")
        lines += [f"  - {text}" for text in reported]
    exposed = sorted({flow.service for flow in opened})
    if exposed:
        lines.append("The security team's nightly scan flags that these services now accept connections from "
                     "workloads that must not reach them:")
        lines += [f"  - {service}" for service in exposed]
    return "\n".join(lines)


def task_text(intent: Matrix, symptom_text: str) -> str:
    """The first observation of an operator-story episode: the incident, the architecture notes, the constraints."""
    from .report import allowed_by_source

    notes = [f"  {source} {ARROW} {', '.join(targets) if targets else '(nothing)'}"
             for source, targets in allowed_by_source(intent).items()]
    return (f"{symptom_text}\n\n"
            "Architecture notes (the team's design documents): each client workload calls exactly these service "
            "ports; every other flow between the application's workloads must stay blocked:\n"
            + "\n".join(notes) + "\n\n"
            "Constraints: keep every identity (do not delete, recreate, relabel or scale Deployments, Pods or "
            "Services, and create no workloads); least privilege (open exactly what the application needs, no "
            "wider peers or ports); other workloads in the namespace are not part of the incident.")


def distractors(namespace: str) -> list[dict]:
    """Unrelated healthy workloads (a batch job, an exporter with its own Service and policy) and events that
    have nothing to do with the incident, as a busy namespace holds them."""
    def deployment(name: str, command: str, ports: list[dict] | None = None) -> dict:
        container = {"name": name, "image": "busybox:1.36", "command": ["sh", "-c", command]}
        if ports:
            container["ports"] = ports
        labels = {"app": name, "team": "platform"}
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}}

    now = dt.datetime.now(dt.UTC)

    def stamp(minutes: int) -> str:
        return (now - dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def event(name: str, kind: str, target: str, reason: str, message: str, count: int, warning: bool) -> dict:
        return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {"apiVersion": "apps/v1" if kind == "Deployment" else "v1", "kind": kind,
                                   "name": target, "namespace": namespace},
                "reason": reason, "message": message, "type": "Warning" if warning else "Normal", "count": count,
                "source": {"component": "deployment-controller" if kind == "Deployment" else "kubelet"},
                "firstTimestamp": stamp(240), "lastTimestamp": stamp(3 + count % 7)}

    return [
        deployment("nightly-report", "while true; do sleep 3600; done"),
        deployment("legacy-exporter", "mkdir -p /www && echo '# HELP up 1' > /www/metrics && "
                                      "exec httpd -f -p 9100 -h /www", [{"name": "metrics", "containerPort": 9100}]),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "legacy-exporter", "namespace": namespace},
         "spec": {"selector": {"app": "legacy-exporter"}, "ports": [{"name": "metrics", "port": 9100,
                                                                      "targetPort": "metrics"}]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "legacy-exporter", "namespace": namespace},
         "spec": {"podSelector": {"matchLabels": {"app": "legacy-exporter"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "nightly-report"}}}],
                               "ports": [{"protocol": "TCP", "port": 9100}]}]}},
        event("legacy-exporter.scrape", "Deployment", "legacy-exporter", "Unhealthy",
              "Readiness probe failed: Get \"http://10.244.7.19:9100/healthz\": context deadline exceeded", 41, True),
        event("nightly-report.backoff", "Deployment", "nightly-report", "BackOff",
              "Back-off restarting failed container report (exit code 137, OOMKilled)", 12, True),
        event("nightly-report.scaled", "Deployment", "nightly-report", "ScalingReplicaSet",
              "Scaled up replica set nightly-report-5c9f7 to 1", 1, False),
    ]
