"""The scheduler: which node a new pod goes to, or why none can take it (the FailedScheduling event's words).

kube-scheduler's default filters, in its order, each node stopping at the first that fails it:
NodeUnschedulable (cordon), TaintToleration (NoSchedule and NoExecute taints), NodeAffinity (nodeSelector,
required node affinity), NodeResourcesFit (requests against allocatable less what the node's pods request,
and its pod count), VolumeBinding (the claims' volumes' node affinity), InterPodAffinity (required pod
affinity and anti-affinity, by topology key). Feasible nodes are scored by preferred node affinity, then the
share of their allocatable left after the pod, then name. When none fits the message is the real one:
"0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 node(s) didn't match Pod's node
affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import nodes, storage
from .quantity import parse

UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
VOLUME_AFFINITY = "node(s) had volume node affinity conflict"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
#: reasons preemption could not resolve (the others, a lack of resources, it might if lower priority pods ran)
UNRESOLVABLE = ("were unschedulable", "untolerated taint", "node affinity/selector", "volume node affinity",
                "pod affinity rules", "anti-affinity rules")
RESOURCES = ("cpu", "memory", "ephemeral-storage")


@dataclass
class Decision:
    """The chosen node, or the reasons (per node) none was."""

    node: dict | None = None
    reasons: dict[str, list[str]] = field(default_factory=dict)  #: node name -> why it cannot take the pod
    prefilter: str = ""  #: why no node was even looked at (a claim missing or unbound)

    def message(self, total: int) -> str:
        """The FailedScheduling message, as kube-scheduler words it."""
        text = f"0/{total} nodes are available:"
        if self.prefilter:
            text += f" {self.prefilter}."
            return text + f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for " \
                          "scheduling."
        counts: dict[str, int] = {}
        for found in self.reasons.values():
            for reason in found:
                counts[reason] = counts.get(reason, 0) + 1
        if counts:
            text += " " + ", ".join(sorted(f"{n} {r}" for r, n in counts.items())) + "."
        helpless = sum(1 for found in self.reasons.values() if any(u in r for r in found for u in UNRESOLVABLE))
        victims = len(self.reasons) - helpless
        parts = []
        if victims:
            parts.append(f"{victims} No preemption victims found for incoming pod")
        if helpless:
            parts.append(f"{helpless} Preemption is not helpful for scheduling")
        return text + f" preemption: 0/{total} nodes are available: {', '.join(sorted(parts))}."


def requests(pod: dict) -> dict[str, float]:
    """What the pod asks of a node: the larger of its containers' sum and any one init container, per resource."""
    spec = pod.get("spec") or {}
    total = dict.fromkeys(RESOURCES, 0.0)
    for container in spec.get("containers") or []:
        asked = (container.get("resources") or {}).get("requests") or {}
        for name in RESOURCES:
            total[name] += parse(asked.get(name, 0))
    for container in spec.get("initContainers") or []:
        asked = (container.get("resources") or {}).get("requests") or {}
        for name in RESOURCES:
            total[name] = max(total[name], parse(asked.get(name, 0)))
    for name, amount in (spec.get("overhead") or {}).items():
        if name in total:
            total[name] += parse(amount)
    return total


def _used(pods_on: list[dict]) -> dict[str, float]:
    used = dict.fromkeys(RESOURCES, 0.0)
    for pod in pods_on:
        for name, amount in requests(pod).items():
            used[name] += amount
    return used


def _placed(store) -> dict[str, list[dict]]:
    """node name -> the pods bound to it that still hold their resources."""
    found: dict[str, list[dict]] = {}
    for pod in store.list("pods", ordered=False):
        node = (pod.get("spec") or {}).get("nodeName")
        if node and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            found.setdefault(node, []).append(pod)
    return found


def _affinity(pod: dict) -> dict:
    return ((pod.get("spec") or {}).get("affinity") or {})


def _node_affinity(node: dict, pod: dict) -> bool:
    if not nodes.selector_matches(node, pod):
        return False
    required = ((_affinity(pod).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
                or {}).get("nodeSelectorTerms")
    return not required or nodes.node_matches_terms(node, required)


def _fit(node: dict, pod: dict, placed: list[dict]) -> list[str]:
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    reasons = []
    if len(placed) + 1 > parse(allocatable.get("pods", 110)):
        reasons.append("Too many pods")
    wanted, used = requests(pod), _used(placed)
    for name in RESOURCES:
        if wanted[name] and name in allocatable and used[name] + wanted[name] > parse(allocatable[name]) + 1e-9:
            reasons.append(f"Insufficient {name}")
    return reasons


def _term_matches(term: dict, pod: dict, other: dict) -> bool:
    from ..core.selectors import selector_from_dict

    namespaces = term.get("namespaces") or [pod["metadata"].get("namespace")]
    if other["metadata"].get("namespace") not in namespaces and term.get("namespaceSelector") is None:
        return False
    selector = term.get("labelSelector")
    return selector is not None and selector_from_dict(selector).matches(other["metadata"].get("labels") or {})


def _topology(node: dict, key: str) -> str | None:
    return (node["metadata"].get("labels") or {}).get(key)


def _pod_affinity(store, node: dict, pod: dict, placed: dict[str, list[dict]]) -> str:
    """Why required pod (anti-)affinity keeps the pod off node, or ""."""
    by_name = {n["metadata"]["name"]: n for n in store.list("nodes")}
    affinity = _affinity(pod)
    for term in (affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        domain = _topology(node, term.get("topologyKey", ""))
        matched = [(name, other) for name, others in placed.items() for other in others
                   if _term_matches(term, pod, other)]
        if domain is None or (matched and not any(_topology(by_name[n], term.get("topologyKey", "")) == domain
                                                  for n, _ in matched if n in by_name)):
            return POD_AFFINITY
    for term in (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []:
        domain = _topology(node, term.get("topologyKey", ""))
        for name, others in placed.items():
            if name in by_name and domain is not None and _topology(by_name[name], term.get("topologyKey", "")) == domain \
                    and any(_term_matches(term, pod, other) for other in others):
                return POD_ANTI_AFFINITY
    for name, others in placed.items():  # the anti-affinity of the pods already there
        if name not in by_name:
            continue
        for other in others:
            for term in (_affinity(other).get("podAntiAffinity") or {}).get(
                    "requiredDuringSchedulingIgnoredDuringExecution") or []:
                key = term.get("topologyKey", "")
                if _topology(node, key) is not None and _topology(node, key) == _topology(by_name[name], key) \
                        and _term_matches(term, other, pod):
                    return EXISTING_ANTI_AFFINITY
    return ""


def _filter(store, node: dict, pod: dict, placed: dict[str, list[dict]]) -> list[str]:
    """Why node cannot take pod ([] when it can), stopping at the first filter that fails it."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    if (node.get("spec") or {}).get("unschedulable") and not nodes.tolerates(
            tolerations, {"key": nodes.UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}):
        return [UNSCHEDULABLE]
    untolerated = nodes.untolerated(node, pod)
    if untolerated:
        taint = untolerated[0]
        return [f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"]
    if not _node_affinity(node, pod):
        return [AFFINITY]
    reasons = _fit(node, pod, placed.get(node["metadata"]["name"], []))
    if reasons:
        return reasons
    if storage.uses_claims(pod) and not storage.node_allows(store, pod, node):
        return [VOLUME_AFFINITY]
    why = _pod_affinity(store, node, pod, placed)
    return [why] if why else []


def _prefilter(store, pod: dict) -> str:
    """A claim the pod uses that is missing, or unbound with Immediate binding, stops it before any node."""
    namespace = pod["metadata"]["namespace"]
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        source = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if not isinstance(source, dict):
            continue
        claim = store.get("persistentvolumeclaims", namespace, source.get("claimName", ""))
        if claim is None:
            return f'persistentvolumeclaim "{source.get("claimName", "")}" not found'
        if claim["metadata"].get("deletionTimestamp"):
            return f'persistentvolumeclaim "{source.get("claimName", "")}" is being deleted'
        if (claim.get("status") or {}).get("phase") != "Bound":
            name = (claim.get("spec") or {}).get("storageClassName")
            storage_class = store.get("storageclasses", "", name) if name else None
            if storage_class is None or storage_class.get("volumeBindingMode") != "WaitForFirstConsumer":
                return "pod has unbound immediate PersistentVolumeClaims"
    return ""


def _score(node: dict, pod: dict, placed: list[dict]) -> tuple:
    preferred = 0
    for term in (_affinity(pod).get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution") or []:
        if nodes.node_matches_terms(node, [term.get("preference") or {}]):
            preferred += int(term.get("weight") or 0)
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    used, wanted = _used(placed), requests(pod)
    free = 0.0
    for name in ("cpu", "memory"):
        total = parse(allocatable.get(name, 0))
        if total:
            free += (total - used[name] - wanted[name]) / total
    return (-preferred, -round(free, 6), len(placed), node["metadata"]["name"])


def schedule(store, pod: dict) -> Decision:
    """Where pod goes (Decision.node), or why nowhere (Decision.message)."""
    candidates = list(store.list("nodes"))
    decision = Decision()
    decision.prefilter = _prefilter(store, pod)
    if decision.prefilter:
        return decision
    placed = _placed(store)
    fitting = []
    for node in candidates:
        if not nodes.ready(node):
            decision.reasons[node["metadata"]["name"]] = ["node(s) had untolerated taint {node.kubernetes.io/"
                                                          "not-ready: }"]
            continue
        reasons = _filter(store, node, pod, placed)
        if reasons:
            decision.reasons[node["metadata"]["name"]] = reasons
        else:
            fitting.append(node)
    if fitting:
        decision.node = min(fitting, key=lambda n: _score(n, pod, placed.get(n["metadata"]["name"], [])))
    return decision
