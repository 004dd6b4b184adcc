"""NetworkPolicy engine: decides pod-to-pod and pod-to-service reachability by Kubernetes semantics."""

from __future__ import annotations

from .engine import ConnectivityModel, MatrixView
from .errors import ManifestError, NetpolError, ObjectError, PolicyValidationError, UnknownObjectError
from .explain import DirectionVerdict, Explanation, FlowVerdict, RuleMatch
from .manifests import ClusterObjects, cluster_from_objects, load_cluster, parse_probes
from .objects import ContainerPort, Namespace, Pod, Probe, Service, ServicePort
from .policy import EGRESS, INGRESS, CompiledPolicy, compile_policy

__all__ = [
    "ConnectivityModel", "MatrixView", "Probe", "Namespace", "Pod", "ContainerPort", "Service", "ServicePort",
    "CompiledPolicy", "compile_policy", "INGRESS", "EGRESS", "Explanation", "FlowVerdict", "DirectionVerdict",
    "RuleMatch", "ClusterObjects", "cluster_from_objects", "load_cluster", "parse_probes", "NetpolError", "PolicyValidationError", "ManifestError", "ObjectError", "UnknownObjectError",
]
