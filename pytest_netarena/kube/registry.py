"""The resources a server serves (the built-in table and those its CustomResourceDefinitions add) and discovery."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    #: the store's key for these objects (one for every version of a resource); "" = the plural
    storage: str = ""
    singular_name: str = ""
    #: a custom resource's served version (crds.CustomVersion: schema, printer columns, subresources)
    custom: object = field(default=None, compare=False, hash=False, repr=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()

    @property
    def key(self) -> str:
        """Where the store keeps these objects (built-in plurals as they are; custom ones as plural.group)."""
        return self.storage or self.plural


def _core(kind: str) -> str:
    return f"io.k8s.api.core.v1.{kind}"


RBAC = "rbac.authorization.k8s.io"
HPA = "horizontalpodautoscalers"
CRD_GROUP = "apiextensions.k8s.io"


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
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), subresources=("status",),
             definition=_core("PersistentVolumeClaim")),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",), subresources=("status",),
             definition=_core("PersistentVolume")),
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
    Resource("autoscaling", "v2", HPA, "HorizontalPodAutoscaler", True, ("hpa",), ("all",), ("status",),
             definition="io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"),
    Resource("autoscaling", "v1", HPA, "HorizontalPodAutoscaler", True, ("hpa",), ("all",), ("status",),
             definition="io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("all",), ("status",),
             definition="io.k8s.api.batch.v1.CronJob"),
    Resource("batch", "v1", "jobs", "Job", True, (), ("all",), ("status",), definition="io.k8s.api.batch.v1.Job"),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, definition="io.k8s.api.coordination.v1.Lease"),
    Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True,
             definition="io.k8s.api.discovery.v1.EndpointSlice"),
    Resource("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False,
             definition="io.k8s.api.networking.v1.IngressClass"),
    Resource("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), subresources=("status",),
             definition="io.k8s.api.networking.v1.Ingress"),
    Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",),
             definition="io.k8s.api.networking.v1.NetworkPolicy"),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), subresources=("status",),
             definition="io.k8s.api.policy.v1.PodDisruptionBudget"),
    Resource(RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, definition=_rbac("ClusterRoleBinding")),
    Resource(RBAC, "v1", "clusterroles", "ClusterRole", False, definition=_rbac("ClusterRole")),
    Resource(RBAC, "v1", "rolebindings", "RoleBinding", True, definition=_rbac("RoleBinding")),
    Resource(RBAC, "v1", "roles", "Role", True, definition=_rbac("Role")),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",),
             definition="io.k8s.api.scheduling.v1.PriorityClass"),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",),
             definition="io.k8s.api.storage.v1.StorageClass"),
    Resource(CRD_GROUP, "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ("crd", "crds"),
             subresources=("status",),
             definition="io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"),
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

#: the preferred (first listed) version of each built-in resource
BY_PLURAL: dict[str, Resource] = {}
BY_KIND: dict[str, Resource] = {}
for _res in RESOURCES:
    BY_PLURAL.setdefault(_res.plural, _res)
    BY_KIND.setdefault(_res.kind, _res)
GROUP_VERSIONS: list[tuple[str, str]] = list(dict.fromkeys((r.group, r.version) for r in RESOURCES))

#: kinds that are questions answered at once, never stored (kubectl auth can-i, auth whoami, TokenReview)
REVIEWS = frozenset({"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews",
                     "localsubjectaccessreviews", "selfsubjectreviews", "tokenreviews"})
STORED = tuple(r for r in RESOURCES if r.plural not in REVIEWS)


def _index(resources) -> dict[tuple[str, str, str], Resource]:
    return {(r.group, r.version, r.plural): r for r in resources}


_BUILTIN = _index(RESOURCES)
BUILTIN_GROUPS = frozenset(r.group for r in RESOURCES)


def lookup(group: str, version: str, plural: str) -> Resource | None:
    """A built-in resource (Registry.lookup also knows the custom ones)."""
    return _BUILTIN.get((group, version, plural))


def resource_for_kind(kind: str) -> Resource:
    from .errors import bad_request

    res = BY_KIND.get(kind)
    if res is None or res not in STORED:
        raise bad_request(f'no kind "{kind}" is registered in this embedded Kubernetes API server')
    return res


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple:
    """Kubernetes' order of versions, highest first when sorted: GA, then beta, then alpha, then the rest."""
    match = _VERSION.match(version)
    if match is None:
        return (0, 0, 0, version)
    major, stage, minor = match.groups()
    return ({None: 3, "beta": 2, "alpha": 1}[stage], int(major), int(minor or 0), "")


@dataclass(frozen=True)
class CustomVersion:
    """What serving one version of a custom resource needs beyond its Resource."""

    crd: str  #: the CustomResourceDefinition's name (plural.group)
    schema: dict  #: its openAPIV3Schema ({} when none)
    columns: tuple  #: additionalPrinterColumns
    status: bool  #: the status subresource is on
    storage_version: str
    versions: tuple  #: every served version's name, the preferred first


def crd_spec(crd: dict) -> dict:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def established(crd: dict) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [] if isinstance(c, dict))


def served_resources(crds: list[dict]) -> list[Resource]:
    """The Resource of every served version of every established CRD, each group's preferred version first."""
    out = []
    for crd in crds:
        if not established(crd) or crd_spec(crd).get("group") in BUILTIN_GROUPS:
            continue  # a built-in group is the built-in resources' alone: a CRD never takes their place
        spec, names = crd_spec(crd), crd_spec(crd).get("names") or {}
        versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served")]
        versions.sort(key=lambda v: version_priority(str(v.get("name"))), reverse=True)
        storage = next((v.get("name") for v in spec.get("versions") or [] if v.get("storage")), "")
        order = tuple(str(v.get("name")) for v in versions)
        for version in versions:
            subresources = version.get("subresources") or {}
            custom = CustomVersion(crd["metadata"]["name"], (version.get("schema") or {}).get("openAPIV3Schema") or {},
                                   tuple(version.get("additionalPrinterColumns") or ()), "status" in subresources,
                                   storage, order)
            out.append(Resource(spec.get("group", ""), str(version.get("name")), names.get("plural", ""),
                                names.get("kind", ""), spec.get("scope") == "Namespaced",
                                tuple(names.get("shortNames") or ()), tuple(names.get("categories") or ()),
                                tuple(s for s in ("status", "scale") if s in subresources),
                                storage=crd["metadata"]["name"], singular_name=names.get("singular", ""),
                                custom=custom))
    return out


class Registry:
    """The resources one server serves: the built-in table, then those its established CustomResourceDefinitions
    add (read from the store again whenever a CRD was written, so discovery shows a new kind at once)."""

    def __init__(self, store) -> None:
        self.store = store
        self._seen = None
        self._resources: tuple[Resource, ...] = RESOURCES
        self._index: dict[tuple[str, str, str], Resource] = _index(RESOURCES)

    @property
    def resources(self) -> tuple[Resource, ...]:
        written = self.store.written("customresourcedefinitions")
        if written != self._seen:
            with self.store.lock:
                written = self.store.written("customresourcedefinitions")
                custom = served_resources(self.store.list("customresourcedefinitions"))
            self._resources = RESOURCES + tuple(custom)
            self._index, self._seen = _index(self._resources), written
        return self._resources

    @property
    def revision(self):
        """Changes whenever the served resources may have (the OpenAPI index's hashes follow it)."""
        self.resources  # noqa: B018 - reading the property refreshes the index when the CRDs changed
        return self._seen

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        self.resources  # noqa: B018 - reading the property refreshes the index when the CRDs changed
        return self._index.get((group, version, plural))

    def by_plural(self, plural: str, group: str | None = None) -> Resource | None:
        """The preferred version of a resource named by plural (and group, when given)."""
        for res in self.resources:
            if res.plural == plural and (group is None or res.group == group):
                return res
        return None

    def for_kind(self, kind: str, api_version: str = "") -> Resource:
        """The stored resource of kind (in api_version when given, else its preferred version); 400 if unknown."""
        from .errors import bad_request

        for res in self.resources:
            if res.kind == kind and res.plural not in REVIEWS and api_version in ("", res.api_version):
                return res
        raise bad_request(f'no kind "{kind}" is registered in this embedded Kubernetes API server')

    def stored(self) -> list[Resource]:
        """Each stored resource once (its preferred version)."""
        seen: dict[str, Resource] = {}
        for res in self.resources:
            if res.plural not in REVIEWS:
                seen.setdefault(res.key, res)
        return list(seen.values())

    def group_versions(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys((r.group, r.version) for r in self.resources))

    def groups(self) -> dict[str, list[str]]:
        """group -> its versions, the preferred first (built-in groups first, in their order)."""
        out: dict[str, list[str]] = {}
        for group, version in self.group_versions():
            out.setdefault(group, []).append(version)
        custom = {r.group for r in self.resources if r.custom is not None}
        for group in custom:
            out[group] = sorted(out[group], key=version_priority, reverse=True)
        return out

    # -- discovery documents -------------------------------------------------------------------
    def api_resource_list(self, group: str, version: str) -> dict:
        entries = []
        for res in self.resources:
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

    def api_group_list(self) -> dict:
        groups = []
        for group, versions in self.groups().items():
            if not group:
                continue
            listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
            groups.append({"name": group, "versions": listed, "preferredVersion": listed[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict | None:
        for item in self.api_group_list()["groups"]:
            if item["name"] == group:
                return {"kind": "APIGroup", "apiVersion": "v1", **item}
        return None

    def aggregated(self, legacy: bool, api_version: str) -> dict:
        """Aggregated discovery (apidiscovery.k8s.io v2 or v2beta1) for /api (legacy) or /apis."""
        items = []
        for group, versions in self.groups().items():
            if bool(group) == legacy:
                continue
            listed = []
            for version in versions:
                resources = [_aggregated_entry(res) for res in self.resources if (res.group, res.version) == (group, version)]
                listed.append({"version": version, "resources": resources, "freshness": "Current"})
            items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": listed})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{api_version}",
                "metadata": {}, "items": items}


def _aggregated_entry(res: Resource) -> dict:
    entry = {"resource": res.plural,
             "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
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
    return entry


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
    if sub in ("token", "eviction"):
        return ["create"]
    return ["create", "get"]


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
