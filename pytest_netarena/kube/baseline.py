"""The objects every fresh embedded cluster starts with: default roles, system namespaces, nodes, the kubernetes service."""

from __future__ import annotations

from . import nodes as node_model
from .node import NODE_IP
from .registry import BY_KIND

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


PRIORITY_CLASSES = (("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the "
                     "cluster, but can be moved to another node if necessary."),
                    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from "
                     "their current node."))


def load(cluster, nodes: list | None = None, profile=None) -> None:
    """nodes: the declared nodes (nodes.NodeSpec; one default node when None); profile: a k3s.Profile, whose
    bundled objects (k3s.objects) are added."""
    from .kubectl import kubectl_minor_or_none
    from .roles import cluster_role_bindings, cluster_roles

    with cluster.batch():  # the default roles first, aggregated once
        for role in cluster_roles():
            cluster.create(BY_KIND["ClusterRole"], "", role, privileged=True)
        for binding in cluster_role_bindings():
            cluster.create(BY_KIND["ClusterRoleBinding"], "", binding, privileged=True)
    ns = BY_KIND["Namespace"]
    for name in SYSTEM_NAMESPACES:
        cluster.create(ns, "", {"metadata": {"name": name}}, privileged=True)
    for name, value, description in PRIORITY_CLASSES:
        cluster.create(BY_KIND["PriorityClass"], "", {"metadata": {"name": name}, "value": value,
                                                      "description": description,
                                                      "preemptionPolicy": "PreemptLowerPriority"}, privileged=True)
    declared = nodes or node_model.default_nodes()
    minor = kubectl_minor_or_none()
    for index, spec in enumerate(declared):
        node = cluster.create(BY_KIND["Node"], "", node_model.node_object(spec, index, len(declared), minor,
                                                                          k3s=profile is not None), privileged=True)
        cluster.create(BY_KIND["Lease"], node_model.LEASE_NAMESPACE,
                       node_model.lease_object(node, node_model.micro_timestamp()), privileged=True)
    cluster.create(BY_KIND["Service"], "default", {
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                                      "targetPort": 6443}]}}, privileged=True)
    cluster.create(BY_KIND["Endpoints"], "default", {
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": NODE_IP}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]},
        privileged=True)
    if profile is not None:
        from .k3s import objects

        with cluster.batch():
            for obj in objects(profile):
                res = cluster.registry.for_kind(obj["kind"], obj["apiVersion"])
                cluster.create(res, obj["metadata"].get("namespace", ""), obj, privileged=True)
