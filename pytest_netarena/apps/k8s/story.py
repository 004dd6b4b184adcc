"""The operator story (--k8s-story operator): the incident as users see it, the intent found in the live system.

The task states what users and the security scan report, never the mismatch report, and never what each
workload must reach: the service map it gives is stale, and the workloads' own configuration (environment
variables, ConfigMaps), their logs and their traffic say what they call. Unrelated healthy workloads and noisy
events stand beside the application."""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Mapping

from .matrix import Matrix
from .workloads.model import AppSpec, Flow

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


def entry_points(intent: Matrix) -> list[str]:
    """The services every other workload may reach (the public entry point, as Online Boutique's frontend)."""
    by_port: dict[tuple[str, int, str], list[bool]] = {}
    for flow, wanted in intent.items():
        by_port.setdefault((flow.service, flow.port, flow.protocol), []).append(wanted)
    return sorted({service for (service, _, _), wanted in by_port.items() if wanted and all(wanted)})


def target(flow: Flow) -> str:
    """How a workload's configuration names what it calls: service:port (/PROTOCOL unless TCP)."""
    return f"{flow.service}:{flow.port}" + ("" if flow.protocol == "TCP" else f"/{flow.protocol}")


def dependencies(app: AppSpec, intent: Matrix) -> dict[str, list[Flow]]:
    """Per client workload, the flows its configuration names: what it may reach beyond the entry points (a client
    with no service of its own, such as the load generator, names the entry points it calls too)."""
    public = set(entry_points(intent))
    servers = set(app.servers)
    found: dict[str, list[Flow]] = {name: [] for name in app.names}
    for flow, wanted in intent.items():
        if wanted and (flow.service not in public or flow.source not in servers):
            found[flow.source].append(flow)
    return found


def _stale_map(app: AppSpec, intent: Matrix, seed: int) -> list[str]:
    """The team's service map as it was some releases ago: a dependency or two gone missing since, one or two
    listed that were retired (each a flow that must stay blocked)."""
    rng = random.Random(seed)
    deps = {source: [target(f) for f in flows] for source, flows in dependencies(app, intent).items()}
    public = set(entry_points(intent))
    present = [(source, t) for source, flows in dependencies(app, intent).items() for t in map(target, flows)
               if t.split(":")[0] not in public]  # what the entry point admits anyway cannot go missing
    for source, t in rng.sample(present, min(len(present), rng.randint(1, 2))):
        deps[source].remove(t)
    retired = [f for f, wanted in intent.items() if not wanted and f.service not in public and f.source != f.service]
    for flow in rng.sample(retired, min(len(retired), rng.randint(1, 2))):
        deps[flow.source].append(target(flow))
    return [f"  {source} calls {', '.join(sorted(targets))}" for source, targets in deps.items() if targets]


def task_text(app: AppSpec, intent: Matrix, symptom_text: str, seed: int) -> str:
    """The first observation of an operator-story episode: the incident, what the operator knows (the application's
    workloads, its public entry point, a service map known to be stale) and the constraints. What each workload must
    reach is not given: the running system says it."""
    public = entry_points(intent)
    stale = "\n".join(_stale_map(app, intent, seed))
    return (f"{symptom_text}\n\n"
            f"What you know: the application {app.name!r} runs the workloads {', '.join(app.names)}. "
            + (f"{' and '.join(public)} {'is its public entry point' if len(public) == 1 else 'are its public entry points'}"
               ": every workload, and the outside world, may reach it. " if public else "")
            + "Everything else is internal: a workload may reach exactly the services it depends on, and nothing else. "
            "The design documents are stale: the service map below was last revised several releases ago and is known "
            "to be wrong in places, so the running system is the source of truth. Each workload names the services it "
            "calls in its own configuration (its Deployment's environment, and the ConfigMaps it reads); where the "
            "pods run, the services also log the calls that fail.\n\n"
            "Service map (stale):\n" + stale + "\n\n"
            "Constraints: keep every identity (do not delete, recreate, relabel or scale Deployments, Pods or "
            "Services, and create no workloads); least privilege (open exactly what the application needs, no "
            "wider peers or ports); other workloads in the namespace are not part of the incident.")


def _env_name(flow: Flow, several: bool) -> str:
    name = flow.service.upper().replace("-", "_").replace(".", "_")
    return f"{name}_{flow.port}_ADDR" if several else f"{name}_ADDR"


def configured(app: AppSpec, intent: Matrix) -> list[dict]:
    """The application's manifests as the operator story runs them: each Deployment names what it calls in its
    environment (`*_ADDR` = service:port, as Online Boutique's manifests do), for some workloads through a ConfigMap
    of their own (`<workload>-config`), beside settings that name nothing (a port, a log level, tracing switched off
    with its collector's address). The intent decides what is named; the manifests are the same for every episode."""
    deps = dependencies(app, intent)
    order = {name: index for index, name in enumerate(sorted(app.names))}
    manifests, maps = [], []
    for manifest in app.manifests:
        if manifest.get("kind") != "Deployment":
            manifests.append(manifest)
            continue
        name = manifest["metadata"]["name"]
        index = order.get(name, 0)
        flows = deps.get(name, [])
        services = [f.service for f in flows]
        named = {_env_name(f, services.count(f.service) > 1): target(f) for f in flows}
        through_map = bool(named) and index % 3 == 1
        env = [{"name": "LOG_LEVEL", "value": "info"}]
        if through_map:
            maps.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"},
                         "data": dict(named)})
            env += [{"name": key, "valueFrom": {"configMapKeyRef": {"name": f"{name}-config", "key": key}}}
                    for key in named]
        else:
            env += [{"name": key, "value": value} for key, value in named.items()]
            if named:  # a dependency that is switched off and has no Service here: noise, as in real manifests
                env += [{"name": "ENABLE_TRACING", "value": "0"},
                        {"name": "COLLECTOR_SERVICE_ADDR", "value": "opentelemetrycollector:4317"}]
        manifest = copy.deepcopy(manifest)
        container = manifest["spec"]["template"]["spec"]["containers"][0]
        container["env"] = [*(container.get("env") or []), *env]
        manifests.append(manifest)
    return manifests + maps


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

    report = deployment("nightly-report", "while true; do sleep 3600; done")
    report["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "METRICS_ADDR",
                                                                   "value": "legacy-exporter:9100"}]
    return [
        report,
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
