"""The table of resources the embedded server serves, and the discovery documents built from it."""

from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
READ_VERBS = ["get", "list", "watch"]


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = tuple(ALL_VERBS)
    definition: str = ""  # kubernetes-validate definition name

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


def _core(kind: str) -> str:
    return f"io.k8s.api.core.v1.{kind}"


RBAC = "rbac.authorization.k8s.io"


def _rbac(kind: str) -> str:
    return f"io.k8s.api.rbac.v1.{kind}"


RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "configmaps", "ConfigMap", True, ("cm",), definition=_core("ConfigMap")),
    Resource("", "v1", "endpoints", "Endpoints", True, ("ep",), definition=_core("Endpoints")),
    Resource("", "v1", "events", "Event", True, ("ev",), definition=_core("Event")),
    Resource("", "v1", "limitranges", "LimitRange", True, ("limits",), definition=_core("LimitRange")),
    Resource("", "v1", "namespaces", "Namespace", False, ("ns",), subresources=("status",),
             verbs=("create", "delete", "get", "list", "patch", "update", "watch"), definition=_core("Namespace")),
    Resource("", "v1", "nodes", "Node", False, ("no",), subresources=("status",), definition=_core("Node")),
    Resource("", "v1", "pods", "Pod", True, ("po",), ("all",),
             ("status", "log", "exec", "attach", "portforward", "eviction"), definition=_core("Pod")),
    Resource("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",), subresources=("status",),
             definition=_core("ResourceQuota")),
    Resource("", "v1", "secrets", "Secret", True, definition=_core("Secret")),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",), subresources=("token",),
             definition=_core("ServiceAccount")),
    Resource("", "v1", "services", "Service", True, ("svc",), ("all",), ("status", "proxy"),
             verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
             definition=_core("Service")),
    Resource("apps", "v1", "deployments", "Deployment", True, ("deploy",), ("all",), ("status", "scale"),
             definition="io.k8s.api.apps.v1.Deployment"),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), ("all",), ("status", "scale"),
             definition="io.k8s.api.apps.v1.ReplicaSet"),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), ("all",), ("status",),
             definition="io.k8s.api.apps.v1.DaemonSet"),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), ("all",), ("status", "scale"),
             definition="io.k8s.api.apps.v1.StatefulSet"),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("all",), ("status",),
             definition="io.k8s.api.batch.v1.CronJob"),
    Resource("batch", "v1", "jobs", "Job", True, (), ("all",), ("status",), definition="io.k8s.api.batch.v1.Job"),
    Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True,
             definition="io.k8s.api.discovery.v1.EndpointSlice"),
    Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",),
             definition="io.k8s.api.networking.v1.NetworkPolicy"),
    Resource(RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, definition=_rbac("ClusterRoleBinding")),
    Resource(RBAC, "v1", "clusterroles", "ClusterRole", False, definition=_rbac("ClusterRole")),
    Resource(RBAC, "v1", "rolebindings", "RoleBinding", True, definition=_rbac("RoleBinding")),
    Resource(RBAC, "v1", "roles", "Role", True, definition=_rbac("Role")),
    Resource("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",),
             definition="io.k8s.api.authentication.v1.SelfSubjectReview"),
    Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",),
             definition="io.k8s.api.authentication.v1.TokenReview"),
    Resource("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
             verbs=("create",), definition="io.k8s.api.authorization.v1.LocalSubjectAccessReview"),
    Resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
             verbs=("create",), definition="io.k8s.api.authorization.v1.SelfSubjectAccessReview"),
    Resource("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", True,
             verbs=("create",), definition="io.k8s.api.authorization.v1.SelfSubjectRulesReview"),
    Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
             verbs=("create",), definition="io.k8s.api.authorization.v1.SubjectAccessReview"),
)

BY_PLURAL: dict[str, Resource] = {r.plural: r for r in RESOURCES}
BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}
GROUP_VERSIONS: list[tuple[str, str]] = list(dict.fromkeys((r.group, r.version) for r in RESOURCES))

#: kinds that are questions answered at once, never stored (kubectl auth can-i, auth whoami, TokenReview)
REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews",
                     "localsubjectaccessreviews", "selfsubjectreviews", "tokenreviews"})
STORED = tuple(r for r in RESOURCES if r.plural not in REVIEWS)


def lookup(group: str, version: str, plural: str) -> Resource | None:
    res = BY_PLURAL.get(plural)
    if res is None or res.group != group or res.version != version:
        return None
    return res


def resource_for_kind(kind: str) -> Resource:
    from .errors import bad_request

    res = BY_KIND.get(kind)
    if res is None or res not in STORED:
        raise bad_request(f'no kind "{kind}" is registered in this embedded Kubernetes API server')
    return res


def _sub_kind(res: Resource, sub: str) -> tuple[str, str, str]:
    """(group, version, kind) a subresource answers with."""
    if sub == "scale":
        return "autoscaling", "v1", "Scale"
    if sub == "eviction":
        return "policy", "v1", "Eviction"
    if sub == "token":
        return "authentication.k8s.io", "v1", "TokenRequest"
    if sub in ("log", "exec", "attach", "portforward", "proxy"):
        return res.group, res.version, {"log": "Pod", "proxy": "Service"}.get(sub, "") or res.kind
    return res.group, res.version, res.kind


def _sub_verbs(sub: str) -> list[str]:
    if sub in ("status", "scale"):
        return ["get", "patch", "update"]
    if sub in ("log",):
        return ["get"]
    if sub == "token":
        return ["create"]
    return ["create", "get"]


def api_resource_list(group: str, version: str) -> dict:
    entries = []
    for res in RESOURCES:
        if (res.group, res.version) != (group, version):
            continue
        entry = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced,
                 "kind": res.kind, "verbs": list(res.verbs)}
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        entries.append(entry)
        for sub in res.subresources:
            g, v, k = _sub_kind(res, sub)
            sub_entry = {"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced,
                         "kind": k, "verbs": _sub_verbs(sub)}
            if (g, v) != (group, version):
                sub_entry["group"], sub_entry["version"] = g, v
            entries.append(sub_entry)
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": entries}


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}


def api_group_list() -> dict:
    groups = []
    for group, version in GROUP_VERSIONS:
        if not group:
            continue
        gv = {"groupVersion": f"{group}/{version}", "version": version}
        groups.append({"name": group, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def aggregated(legacy: bool, api_version: str) -> dict:
    """Aggregated discovery (apidiscovery.k8s.io v2 or v2beta1) for /api (legacy) or /apis."""
    items = []
    for group, version in GROUP_VERSIONS:
        if bool(group) == legacy:
            continue
        resources = []
        for res in RESOURCES:
            if (res.group, res.version) != (group, version):
                continue
            entry = {"resource": res.plural,
                     "responseKind": {"group": group, "version": version, "kind": res.kind},
                     "scope": "Namespaced" if res.namespaced else "Cluster",
                     "singularResource": res.singular, "verbs": list(res.verbs)}
            if res.short_names:
                entry["shortNames"] = list(res.short_names)
            if res.categories:
                entry["categories"] = list(res.categories)
            subs = []
            for sub in res.subresources:
                g, v, k = _sub_kind(res, sub)
                subs.append({"subresource": sub, "responseKind": {"group": g, "version": v, "kind": k},
                             "verbs": _sub_verbs(sub)})
            if subs:
                entry["subresources"] = subs
            resources.append(entry)
        items.append({"metadata": {"name": group, "creationTimestamp": None},
                      "versions": [{"version": version, "resources": resources, "freshness": "Current"}]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{api_version}",
            "metadata": {}, "items": items}
