"""The default ClusterRoles and ClusterRoleBindings of a real cluster (cluster-admin, admin, edit, view, system:*)."""

from __future__ import annotations

GROUP = "rbac.authorization.k8s.io"
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def _rule(groups, resources, verbs, names=()) -> dict:
    rule = {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
    if names:
        rule["resourceNames"] = list(names)
    return rule


def _urls(urls, verbs=("get",)) -> dict:
    return {"nonResourceURLs": list(urls), "verbs": list(verbs)}


# What each default role holds (the groups this server serves, and those a real cluster's roles name beside them).
_VIEW = [
    _rule([""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
                 "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                 "services/status"], READ),
    _rule([""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                 "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"], READ),
    _rule([""], ["namespaces"], READ),
    _rule(["discovery.k8s.io"], ["endpointslices"], READ),
    _rule(["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                     "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
                     "statefulsets/scale", "statefulsets/status"], READ),
    _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ),
    _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
    _rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
    _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], READ),
]
_EDIT = [
    _rule([""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"], READ),
    _rule([""], ["serviceaccounts"], ["impersonate"]),
    _rule([""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], WRITE),
    _rule([""], ["pods/eviction"], ["create"]),
    _rule([""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                 "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"], WRITE),
    _rule([""], ["serviceaccounts/token"], ["create"]),
    _rule(["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                     "replicasets/scale", "statefulsets", "statefulsets/scale"], WRITE),
    _rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
    _rule(["batch"], ["cronjobs", "jobs"], WRITE),
    _rule(["policy"], ["poddisruptionbudgets"], WRITE),
    _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], WRITE),
    _rule(["coordination.k8s.io"], ["leases"], ALL),
]
_ADMIN = [
    _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
    _rule([GROUP], ["rolebindings", "roles"], ALL),
]


def _cluster_role(name: str, rules=None, labels=None, aggregate_from: str = "") -> dict:
    role = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE + aggregate_from: "true"}}]}
    if rules is not None:
        role["rules"] = rules
    return role


def _binding(name: str, role: str, groups) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]}


def cluster_roles() -> list[dict]:
    """Fresh copies of the default ClusterRoles (the aggregated ones get their rules from the aggregation)."""
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _urls(["*"], ["*"])]),
        _cluster_role("admin", aggregate_from="admin"),
        _cluster_role("edit", labels={AGGREGATE + "admin": "true"}, aggregate_from="edit"),
        _cluster_role("view", labels={AGGREGATE + "admin": "true", AGGREGATE + "edit": "true"}, aggregate_from="view"),
        _cluster_role("system:aggregate-to-admin", _ADMIN, {AGGREGATE + "admin": "true"}),
        _cluster_role("system:aggregate-to-edit", _EDIT, {AGGREGATE + "edit": "true"}),
        _cluster_role("system:aggregate-to-view", _VIEW, {AGGREGATE + "view": "true"}),
        _cluster_role("system:basic-user", [
            _rule(["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
            _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"])]),
        _cluster_role("system:discovery", [_urls(["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                                  "/openapi", "/openapi/*", "/readyz", "/version", "/version/"])]),
        _cluster_role("system:public-info-viewer", [_urls(["/healthz", "/livez", "/readyz", "/version",
                                                           "/version/"])]),
        _cluster_role("system:auth-delegator", [_rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
                                                _rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"])]),
    ]


def cluster_role_bindings() -> list[dict]:
    return [
        _binding("cluster-admin", "cluster-admin", ["system:masters"]),
        _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        _binding("system:discovery", "system:discovery", ["system:authenticated"]),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 ["system:authenticated", "system:unauthenticated"]),
    ]


def aggregated_rules(role: dict, roles: list[dict]) -> list[dict] | None:
    """The rules an aggregated ClusterRole holds now: those of every ClusterRole its selectors match, each
    once, in name order (the clusterrole-aggregation controller's result); None for a role without a rule."""
    from ..core.selectors import selector_matches

    selectors = ((role.get("aggregationRule") or {}).get("clusterRoleSelectors")) or []
    if not isinstance(selectors, list) or not selectors:
        return None
    rules: list[dict] = []
    for other in roles:
        if other["metadata"]["name"] == role["metadata"]["name"]:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(isinstance(s, dict) and selector_matches(s, labels) for s in selectors):
            for rule in other.get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
    return rules
