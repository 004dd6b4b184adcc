"""The objects every fresh embedded cluster starts with: default roles, system namespaces, one node, the kubernetes service."""

from __future__ import annotations

from .node import NODE_IP, NODE_NAME, POD_CIDR
from .registry import BY_KIND

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def node(minor: int | None) -> dict:
    version = f"v1.{minor}.0" if minor else "v1.37.0"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": NODE_NAME, "labels": {
            "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": NODE_NAME, "kubernetes.io/os": "linux",
            "node-role.kubernetes.io/control-plane": ""}},
        "spec": {"podCIDR": str(POD_CIDR), "podCIDRs": [str(POD_CIDR)]},
        "status": {
            "addresses": [{"type": "InternalIP", "address": NODE_IP}, {"type": "Hostname", "address": NODE_NAME}],
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "1100"},
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "1100"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status"}],
            "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://2.0.0",
                         "kernelVersion": "6.1.0", "kubeProxyVersion": version, "kubeletVersion": version,
                         "operatingSystem": "linux", "osImage": "netarena embedded node"}}}


def load(cluster) -> None:
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
    cluster.create(BY_KIND["Node"], "", node(kubectl_minor_or_none()),
                   privileged=True)
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
