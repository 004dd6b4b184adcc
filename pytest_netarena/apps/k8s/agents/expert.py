"""The expert: repairs policies from what an LLM agent would see (intent, reports, kubectl output it asks for).

It reads pods, services and policies with kubectl, rebuilds the cluster in the NetworkPolicy
engine, and then, one patch per turn, applies the safe candidate fix that removes the most
mismatches: rewrite a workload's ingress from the intent, or restore/extend a workload's egress.
A candidate is safe when no flow that matches the intent now would mismatch after it. When the
report disagrees with its simulation it reads the policies again. In the operator story, where no
intent is given, it finds it as an SRE would: the workloads' own configuration (the `*_ADDR`
variables of their Deployments, and the ConfigMaps those point into) names what each one calls,
and the incident says which service is the public entry point; the stale service map is ignored.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from ....core.types import Reply, Task
from ..workloads.model import Flow
from .text import FLOW_LINE, INTENT_LINE, NAMESPACE_IN_INTENT, fenced, json_patch_command

TRUNCATED = "[output truncated"
POLICY_BATCH = 80
NL = "\\n"
POD_READ = "kubectl get pods --show-labels"
SERVICE_READ = ("kubectl get services -o jsonpath='{range .items[*]}{.metadata.name} {.spec.selector} "
                "{.spec.ports}{\"" + NL + "\"}{end}'")
POLICY_JSONPATH = "-o jsonpath='{range .items[*]}{.metadata.name} {.spec}{\"" + NL + "\"}{end}'"
POLICY_NAMES = "kubectl get networkpolicy -o jsonpath='{.items[*].metadata.name}'"
#: what each Deployment names it calls: one line per Deployment, its name then each *_ADDR value (or ConfigMap key)
CONFIG_READ = ("kubectl get deployments -o json | jq -r '.items[] | [.metadata.name, ([.spec.template.spec."
               "containers[].env // [] | .[] | select(.name | endswith(\"_ADDR\")) | (.value // (\"configmap:\" + "
               "(.valueFrom.configMapKeyRef.name // \"\") + \"/\" + (.valueFrom.configMapKeyRef.key // \"\")))] | "
               "join(\" \"))] | join(\" \")'")
#: every ConfigMap key, one line each: NAME/KEY and its value as JSON
MAPS_READ = ("kubectl get configmaps -o json | jq -r '.items[] | .metadata.name as $n | (.data // {}) | to_entries[] "
             "| \"\\($n)/\\(.key) \\(.value | tojson)\"'")
#: how the operator story's first observation names the application's workloads and its public entry points
STORY_WORKLOADS = re.compile(r"What you know: the application '[^']*' runs the workloads ([^.]*)\.")
STORY_PUBLIC = re.compile(r"\. (\S+(?: and \S+)*) (?:is its public entry point|are its public entry points):")


def _split_observation(observation: str) -> tuple[str, list[str]]:
    """(command output, report lines) of an observation."""
    if observation.startswith("[Step "):  # the step budget line the episode puts in front
        observation = observation.split("\n", 1)[1] if "\n" in observation else ""
    head, sep, report = observation.rpartition("Connectivity check:")
    if not sep:  # the operator story: the command's output alone, after its "$ command" line
        return (observation.split("\n", 1)[1] if observation.startswith("$ ") and "\n" in observation
                else observation), []
    output = head.split("\n", 1)[1] if head.startswith("$ ") else head
    return output.strip("\n"), report.splitlines()


def _json_values(text: str) -> list[Any]:
    decoder, values, index = json.JSONDecoder(), [], 0
    while index < len(text):
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            break
        value, index = decoder.raw_decode(text, index)
        values.append(value)
    return values


def _parse_services(output: str) -> dict[str, tuple[dict[str, str], list[dict[str, Any]]]]:
    """Service -> (selector, ports), from SERVICE_READ's lines; services without a selector left out."""
    services = {}
    for line in output.splitlines():
        name, _, rest = line.partition(" ")
        try:
            values = _json_values(rest)
        except ValueError:
            continue
        selector = next((v for v in values if isinstance(v, dict)), {})
        ports = next((v for v in values if isinstance(v, list)), [])
        if selector:
            services[name] = (selector, ports)
    return services


T = TypeVar("T")


def _read(value: T | None, what: str) -> T:
    if value is None:
        raise RuntimeError(f"the expert used the {what} before reading them")
    return value


class ExpertAgent:
    """Sees only observations; never reads the query's hidden parameters or the backend."""

    def __init__(self, query: Any = None, env: Any = None) -> None:
        del query, env  # deliberately unused: the expert works from observations alone

    def reset(self, task: Task) -> None:
        self.namespace = "default"
        self.sources: list[str] = []
        self.allowed: set[tuple[str, str, int, str]] = set()
        self.reported: dict[Flow, bool] = {}  # mismatching flows -> actual
        self.pods: dict[str, dict[str, str]] | None = None  # workload -> labels
        self.services: dict[str, tuple[dict[str, str], list[dict[str, Any]]]] | None = None
        self.policies: dict[str, dict[str, Any]] | None = None
        self.policy_names: list[str] | None = None
        self.pending: list[str] = []  # policy batches still to read
        self.last: str = ""
        self.expected: set[Flow] | None = None  # mismatches the last patch should leave
        self.story = False  # the operator story: the intent is read off the workloads' configuration
        self.public: list[str] = []  # its public entry points
        self.calls: dict[str, list[str]] | None = None  # workload -> what its configuration names it calls
        self.maps: dict[str, str] | None = None  # "configmap/key" -> value

    # what has been read: each is asked for (and read) before the model uses it
    @property
    def known_pods(self) -> dict[str, dict[str, str]]:
        return _read(self.pods, "pods")

    @property
    def known_services(self) -> dict[str, tuple[dict[str, str], list[dict[str, Any]]]]:
        return _read(self.services, "services")

    @property
    def known_policies(self) -> dict[str, dict[str, Any]]:
        return _read(self.policies, "policies")

    # ----- reading observations ----------------------------------------------------------------

    def _read_intent(self, text: str) -> None:
        match = NAMESPACE_IN_INTENT.search(text)
        if match:
            self.namespace = match.group(1)
        for line in text.splitlines():
            found = INTENT_LINE.match(line)
            if not found:
                continue
            source, targets = found.group(1), found.group(2)
            self.sources.append(source)
            if targets.strip() == "(nothing)":
                continue
            for target in targets.split(", "):
                service, _, port = target.partition(":")
                number, _, protocol = port.partition("/")
                self.allowed.add((source, service, int(number), protocol or "TCP"))

    def _read_incident(self, text: str) -> None:
        """The operator story's first observation: the namespace, the application's workloads, its entry points."""
        self.story = True
        match = NAMESPACE_IN_INTENT.search(text)
        if match:
            self.namespace = match.group(1)
        workloads = STORY_WORKLOADS.search(text)
        self.sources = workloads.group(1).split(", ") if workloads else []
        public = STORY_PUBLIC.search(text)
        self.public = public.group(1).split(" and ") if public else []

    def _read_calls(self, output: str) -> None:
        self.calls = {}
        for line in output.splitlines():
            if line.strip():
                name, *targets = line.split()
                self.calls[name] = targets

    def _read_maps(self, output: str) -> None:
        self.maps = {}
        for line in output.splitlines():
            key, _, value = line.partition(" ")
            try:
                self.maps[key] = json.loads(value)
            except ValueError:
                continue

    def _intent_from_configuration(self) -> None:
        """The flows the application needs: what each workload's configuration names, and every workload to the
        public entry points; service:port, the protocol the Service gives that port."""
        self.allowed = set()
        for source in self.sources:
            for said in (self.calls or {}).get(source, []):
                if said.startswith("configmap:"):
                    said = str((self.maps or {}).get(said.removeprefix("configmap:"), ""))
                service, _, port = said.partition(":")
                number, _, protocol = port.partition("/")
                if service in self.known_services and number.isdigit():
                    ports = self.known_services[service][1]
                    spec = next((p for p in ports if int(p["port"]) == int(number)), {})
                    self.allowed.add((source, service, int(number), protocol or spec.get("protocol", "TCP")))
            for service in self.public:
                for port in self.known_services.get(service, ({}, []))[1]:
                    if service != source:
                        self.allowed.add((source, service, int(port["port"]), port.get("protocol", "TCP")))

    def _read_report(self, lines: list[str]) -> None:
        self.reported = {}
        for line in lines:
            found = FLOW_LINE.match(line.strip())
            if found:
                src, svc, port, proto, _, actual = found.groups()
                self.reported[Flow(src, svc, int(port), proto or "TCP")] = actual == "True"

    def _workload_of_pod(self, pod: str) -> str | None:
        best = None
        for name in self.sources:
            if pod.startswith(name + "-") and (best is None or len(name) > len(best)):
                best = name
        return best

    def _read_output(self, output: str) -> None:
        """What the output of the command asked last says: pods, services, policy names or policies."""
        if self.last == CONFIG_READ:
            self._read_calls(output)
        elif self.last == MAPS_READ:
            self._read_maps(output)
        elif self.last == POD_READ:
            self.pods = self._parse_pods(output)
        elif self.last == SERVICE_READ:
            self.services = _parse_services(output)
        elif self.last == POLICY_NAMES:
            self.policy_names = output.split()
            self.pending = [" ".join(self.policy_names[i:i + POLICY_BATCH])
                            for i in range(0, len(self.policy_names), POLICY_BATCH)]
            self.policies = {}
        elif self.last.startswith("kubectl get networkpolicy") and "jsonpath='{range" in self.last:
            self._read_policies(output)

    def _parse_pods(self, output: str) -> dict[str, dict[str, str]]:
        """Workload -> labels, from `kubectl get pods --show-labels`."""
        pods: dict[str, dict[str, str]] = {}
        for line in output.splitlines()[1:]:
            columns = line.split()
            workload = self._workload_of_pod(columns[0]) if columns else None
            if workload is None or columns[-1] == "<none>":
                continue
            labels = dict(item.split("=", 1) for item in columns[-1].split(",") if "=" in item)
            labels.pop("pod-template-hash", None)
            pods[workload] = labels
        return pods

    def _read_policies(self, output: str) -> None:
        if TRUNCATED in output:
            self.policies = None
            self.policy_names = []  # too many for one read: list the names, then read in batches
            return
        policies = dict(self.policies or {}) if self.pending or self.policy_names else {}
        for line in output.splitlines():
            name, _, rest = line.partition(" ")
            if rest.startswith("{"):
                try:
                    policies[name] = json.loads(rest)
                except ValueError:
                    continue
        self.policies = policies

    # ----- the model ---------------------------------------------------------------------------

    def _model(self, policies: dict[str, dict[str, Any]]):
        from ....netpol import ConnectivityModel, ContainerPort, Pod, Service, ServicePort

        pods, services = [], []
        for name, (selector, ports) in self.known_services.items():
            services.append(Service(self.namespace, name, selector, tuple(ServicePort.of(p) for p in ports)))
        for workload, labels in self.known_pods.items():
            container_ports = []
            for selector, ports in self.known_services.values():
                if all(labels.get(k) == v for k, v in selector.items()):
                    container_ports += [ContainerPort(int(p["targetPort"]), p.get("protocol", "TCP"))
                                        for p in ports if isinstance(p.get("targetPort"), int)]
            pods.append(Pod(self.namespace, workload, labels, None, tuple(container_ports)))
        manifests = [{"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}
                     for name, spec in policies.items()]
        return ConnectivityModel(pods=pods, services=services, policies=manifests)

    def _service_pods(self, service: str) -> list[str]:
        selector = self.known_services[service][0]
        return [w for w, labels in self.known_pods.items() if all(labels.get(k) == v for k, v in selector.items())]

    def _flows(self) -> dict[Flow, bool]:
        flows = {}
        for source in self.sources:
            for service, (_, ports) in self.known_services.items():
                backends = self._service_pods(service)
                if not backends or source in backends or service == source:
                    continue
                for port in ports:
                    flow = Flow(source, service, int(port["port"]), port.get("protocol", "TCP"))
                    flows[flow] = (flow.source, flow.service, flow.port, flow.protocol) in self.allowed
        return flows

    def _simulate(self, policies: dict[str, dict[str, Any]], flows: dict[Flow, bool]) -> dict[Flow, bool]:
        from ....netpol import Probe

        model = self._model(policies)
        result = {}
        for flow in flows:
            if flow.source not in self.known_pods:
                result[flow] = False
                continue
            probe = Probe.to_svc(f"{self.namespace}/{flow.source}", f"{self.namespace}/{flow.service}",
                                 flow.port, flow.protocol)
            result[flow] = model.allowed(probe)
        return result

    # ----- repairs -----------------------------------------------------------------------------

    def _selects(self, spec: dict[str, Any], workload: str) -> bool:
        selector = spec.get("podSelector") or {}
        labels = self.known_pods.get(workload, {})
        if selector.get("matchExpressions"):
            return False
        return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())

    def _peer(self, workload: str) -> dict[str, Any]:
        return {"podSelector": {"matchLabels": dict(self.known_pods[workload])}}

    def _desired_ingress(self, workload: str, flows: dict[Flow, bool]) -> list[dict[str, Any]]:
        by_port: dict[tuple[Any, str], set[str]] = {}
        others = [s for s in self.sources if s != workload and s in self.known_pods]
        for service, (_, ports) in self.known_services.items():
            if workload not in self._service_pods(service):
                continue
            for port in ports:
                key = (port.get("targetPort", port["port"]), port.get("protocol", "TCP"))
                flow_sources = {f.source for f, ok in flows.items() if ok and f.service == service
                                and f.port == int(port["port"]) and f.protocol == key[1]}
                by_port.setdefault(key, set()).update(flow_sources)
        if by_port and all(set(others) <= sources for sources in by_port.values()):
            return [{}]
        groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for (target, protocol), sources in sorted(by_port.items(), key=str):
            if sources:
                groups.setdefault(tuple(sorted(sources)), []).append({"port": target, "protocol": protocol})
        return [{"from": [self._peer(s) for s in sources], "ports": ports} for sources, ports in groups.items()]

    def _egress_candidates(self, workload: str, spec: dict[str, Any], flows: dict[Flow, bool],
                           current: dict[Flow, bool]) -> list[list[dict[str, Any]]]:
        extra = []
        for flow, ok in flows.items():
            if flow.source == workload and ok and not current.get(flow):
                for backend in self._service_pods(flow.service):
                    port = next(p for p in self.known_services[flow.service][1] if int(p["port"]) == flow.port)
                    extra.append({"to": [self._peer(backend)],
                                  "ports": [{"port": port.get("targetPort", flow.port), "protocol": flow.protocol}]})
        kept = [rule for rule in spec.get("egress") or [] if rule]
        return [[{}], kept + extra]

    def _candidates(self, flows: dict[Flow, bool], current: dict[Flow, bool]):
        wrong = [f for f, ok in flows.items() if current.get(f) != ok]
        sinks = {f.service for f in wrong}
        sinks = {w for s in sinks for w in self._service_pods(s)}
        sources = {f.source for f in wrong}
        for name, spec in sorted(self.known_policies.items()):
            types = spec.get("policyTypes") or ["Ingress"]
            for workload in sorted(sinks):
                if "Ingress" in types and self._selects(spec, workload):
                    ingress = self._desired_ingress(workload, flows)
                    if ingress != spec.get("ingress"):
                        yield 0, name, "ingress", ingress
            for workload in sorted(sources):
                if "Egress" in types and self._selects(spec, workload):
                    for rank, egress in enumerate(self._egress_candidates(workload, spec, flows, current), 1):
                        if egress != spec.get("egress"):
                            yield rank, name, "egress", egress

    def _repair(self) -> Reply | None:
        flows = self._flows()
        current = self._simulate(self.known_policies, flows)
        wrong = {f for f, ok in flows.items() if current.get(f) != ok}
        best = None
        for rank, name, field, value in self._candidates(flows, current):
            trial = dict(self.known_policies)
            trial[name] = {**self.known_policies[name], field: value}
            after = self._simulate(trial, flows)
            broken = [f for f in flows if f not in wrong and after[f] != flows[f]]
            remaining = {f for f in flows if after[f] != flows[f]}
            gain = len(wrong) - len(remaining)
            if broken or gain <= 0:
                continue
            key = (-gain, rank)
            if best is None or key < best[0]:
                best = (key, name, field, value, trial, remaining)
        if best is None:
            return None
        _, name, field, value, trial, remaining = best
        self.policies = trial
        self.expected = remaining
        command = json_patch_command("networkpolicy", name, [{"op": "add", "path": f"/spec/{field}", "value": value}])
        return fenced(command, f"Rewriting the {field} of policy {name} to match the intent.")

    # ----- the turn ----------------------------------------------------------------------------

    def _ask(self, command: str, note: str) -> Reply:
        self.last = command
        return fenced(command, note)

    def act(self, observation: str) -> Reply:
        if not self.sources and STORY_WORKLOADS.search(observation):
            self._read_incident(observation)
            report: list[str] = []
        elif not self.sources:
            self._read_intent(observation)
            _, report = _split_observation(observation)
        else:
            output, report = _split_observation(observation)
            if not observation.startswith("Refused"):
                self._read_output(output)
        self._read_report(report)
        if not self.reported and any("No mismatches found" in line for line in report):
            return self._ask("kubectl get networkpolicy", "All flows match the intent; nothing left to fix.")
        if self.story and self.calls is None:
            return self._ask(CONFIG_READ, "The design documents are stale: what does each workload's configuration "
                                          "say it calls?")
        if self.story and self.maps is None:
            return self._ask(MAPS_READ, "Some of those point into ConfigMaps; reading them.")
        if self.pods is None:
            return self._ask(POD_READ, "First, which pods run and how are they labelled?")
        if self.services is None:
            return self._ask(SERVICE_READ, "Next, the services with their ports and target ports.")
        if self.policies is None and self.policy_names == []:
            return self._ask(POLICY_NAMES, "Too many policies for one read; listing their names first.")
        if self.pending:
            batch = self.pending.pop(0)
            return self._ask(f"kubectl get networkpolicy {batch} {POLICY_JSONPATH}", "Reading a batch of policies.")
        if self.policies is None:
            return self._ask(f"kubectl get networkpolicy {POLICY_JSONPATH}", "Now every NetworkPolicy.")
        # no report in the operator story: nothing to disagree with the model, which then goes on
        if not self.story and self.expected is not None and set(self.reported) != self.expected:
            self.expected, self.policies, self.policy_names = None, None, None  # the cluster surprised me
            return self._ask(f"kubectl get networkpolicy {POLICY_JSONPATH}", "That did not go as expected; re-reading.")
        self.expected = None
        if self.story:
            self._intent_from_configuration()
        reply = self._repair()
        if reply is None:
            self.last = "kubectl get networkpolicy"
            return fenced(self.last, "I found no safe fix; leaving the policies as they are.")
        self.last = "patch"
        return reply

    def close(self) -> None:
        pass
