"""Per-kind defaulting, applied on every create and update like the real apiserver does.

Empty and null fields are dropped first, as decoding and omitempty do."""

from __future__ import annotations


def _container(c: dict) -> None:
    image = c.get("image", "")
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in image and (":" not in tag or tag.endswith(":latest"))
    c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        if isinstance(env, dict) and isinstance(env.get("valueFrom"), dict):
            ref = env["valueFrom"].get("fieldRef")
            if isinstance(ref, dict):
                ref.setdefault("apiVersion", "v1")


def pod_spec(spec: dict) -> None:
    if not isinstance(spec, dict):
        return
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            _container(c)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")


def _selector(spec: dict) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        pod_spec(template.setdefault("spec", {}))
        template.setdefault("metadata", {})
        template["metadata"].pop("creationTimestamp", None)


def deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxSurge", "25%")
                rolling.setdefault("maxUnavailable", "25%")
    _selector(spec)


def daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})
    _selector(spec)


def statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    _selector(spec)


def job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    for key, value in (("backoffLimit", 6), ("completions", 1), ("parallelism", 1), ("completionMode", "NonIndexed"),
                       ("suspend", False), ("podReplacementPolicy", "TerminatingOrFailed")):
        spec.setdefault(key, value)
    _selector(spec)


def cronjob(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    for key, value in (("concurrencyPolicy", "Allow"), ("suspend", False), ("successfulJobsHistoryLimit", 3),
                       ("failedJobsHistoryLimit", 1)):
        spec.setdefault(key, value)
    template = spec.get("jobTemplate")
    if isinstance(template, dict):
        job(template)


def replicaset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    _selector(spec)


def pod(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])


def service(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
    obj.setdefault("status", {"loadBalancer": {}})


def namespace(obj: dict) -> None:
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    obj.setdefault("spec", {"finalizers": ["kubernetes"]})
    obj["status"] = {"phase": (obj.get("status") or {}).get("phase", "Active")}


def network_policy(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict) and "policyTypes" not in spec:
        types = ["Ingress"]
        if spec.get("egress") is not None:
            types.append("Egress")
        spec["policyTypes"] = types
    for direction in ("ingress", "egress"):
        for rule in (spec.get(direction) or []) if isinstance(spec, dict) else []:
            for port in (rule.get("ports") or []) if isinstance(rule, dict) else []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def secret(obj: dict) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        import base64

        data = obj.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def binding(obj: dict) -> None:
    """Users and groups of a binding belong to the RBAC API group when none is given."""
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and subject.get("kind") in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


BY_KIND = {
    "RoleBinding": binding,
    "ClusterRoleBinding": binding,
    "Deployment": deployment,
    "DaemonSet": daemonset,
    "StatefulSet": statefulset,
    "Job": job,
    "CronJob": cronjob,
    "ReplicaSet": replicaset,
    "Pod": pod,
    "Service": service,
    "Namespace": namespace,
    "NetworkPolicy": network_policy,
    "Secret": secret,
}


# Fields of map type: Go drops them when empty (omitempty); an empty struct ({} podSelector, a {}
# rule) is a value and stays, so only these names are dropped when empty.
MAP_FIELDS = frozenset({"labels", "annotations", "matchLabels", "nodeSelector", "data", "binaryData", "stringData"})


def omit_empty(value) -> None:
    """Drop what the real API server never returns: null fields (decoding skips them), empty lists
    (every list field is omitempty) and empty maps, at any depth, in place."""
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            if isinstance(item, (dict, list)):
                omit_empty(item)
            if item is None or (isinstance(item, list) and not item) or (
                    isinstance(item, dict) and not item and key in MAP_FIELDS):
                del value[key]
    elif isinstance(value, list):
        for item in value:
            omit_empty(item)


def apply_defaults(kind: str, obj: dict) -> None:
    metadata = obj.get("metadata")
    omit_empty(obj)
    if isinstance(metadata, dict):
        obj["metadata"] = metadata  # never dropped: the server always returns metadata
    if kind == "Service" and isinstance(obj.get("spec"), dict) and obj["spec"].get("selector") == {}:
        del obj["spec"]["selector"]  # a map (omitempty) here, unlike a Deployment's selector struct
    fn = BY_KIND.get(kind)
    if fn is not None:
        fn(obj)
