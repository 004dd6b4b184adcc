"""Which controller work a write causes: the keys each synchronous controller must revisit.

Like the informer event handlers of the real controllers: a Deployment write queues that Deployment;
a ReplicaSet write queues it and its owning Deployment; a Pod write queues the kubelet for it, its
owning ReplicaSet and the Services selecting it (before or after the write); a Service, Endpoints or
EndpointSlice write queues that Service's endpoints. A Namespace, ServiceAccount, token Secret,
kube-root-ca.crt or ClusterRole write queues the identity controllers (accounts.py). Writes of any
other kind (NetworkPolicy, ConfigMap, Event...) queue nothing, so they cost no reconcile at all.
"""

from __future__ import annotations

from ..core.selectors import selector_from_dict
from .accounts import queue_change
from .storage import uses_claims

OWNER_PLURALS = {"Deployment": "deployments", "ReplicaSet": "replicasets", "Service": "services", "Job": "jobs",
                 "CronJob": "cronjobs", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets"}
#: kinds whose deletion sends the garbage collector after what they owned
OWNERS = frozenset({"deployments", "replicasets", "services", "jobs", "cronjobs", "statefulsets", "daemonsets"})
#: the workload controllers beside Deployments and ReplicaSets: stage (= plural) -> the kind of the pods' owner
WORKLOADS = {"jobs": "Job", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet"}
MANAGED_EP = "endpoints.kubernetes.io/managed-by"
SERVICE_NAME = "kubernetes.io/service-name"

Key = tuple[str, str]  # (namespace, name)
#: writes that change what a namespace's PodDisruptionBudgets and HorizontalPodAutoscalers count
SCALE_INPUTS = frozenset({"pods", "deployments", "replicasets", "statefulsets", "poddisruptionbudgets",
                          "horizontalpodautoscalers"})
#: writes the volume controllers look at again (storage.py); a pod's only when it uses a claim
VOLUME_INPUTS = frozenset({"persistentvolumes", "persistentvolumeclaims", "storageclasses"})
#: stage -> the plural of the objects it keeps the status of
WATCHERS = {"disruption": "poddisruptionbudgets", "autoscalers": "horizontalpodautoscalers"}


class WorkQueue:
    """Dirty keys per controller stage; `note` is the Store's write tracker."""

    STAGES = ("garbage", "deployments", "replicasets", "cronjobs", "jobs", "statefulsets", "daemonsets", "pods",
              "replicaset_status", "deployment_status",
              "services", "disruption", "autoscalers", "terminating_namespaces", "terminating_crds")

    def __init__(self, store) -> None:
        self.store = store
        self.garbage: set[str] = set()  # namespaces where an owner went away or an orphan appeared
        self.deployments: set[Key] = set()
        self.replicasets: set[Key] = set()
        self.cronjobs: set[Key] = set()  # the workload controllers of their own modules (jobs.py, cronjobs.py, ...)
        self.jobs: set[Key] = set()
        self.statefulsets: set[Key] = set()
        self.daemonsets: set[Key] = set()
        self.pods: set[Key] = set()  # the scheduler and the kubelet stand-in
        self.replicaset_status: set[Key] = set()
        self.deployment_status: set[Key] = set()
        self.services: set[Key] = set()  # Endpoints and EndpointSlices
        self.disruption: set[str] = set()  # namespaces whose PodDisruptionBudgets' status is to be computed again
        self.volumes = False  # claims to bind, volumes to release, protection finalizers to drop (storage.py)
        self.autoscalers: set[str] = set()  # namespaces whose HorizontalPodAutoscalers are to be reconciled again
        # deletions that wait for finalizers (deletion.py): namespaces and CRDs whose objects are going
        self.terminating_namespaces: set[str] = set()
        self.terminating_crds: set[str] = set()
        # identity controllers (accounts.py): namespaces' default ServiceAccount and CA, token Secrets, aggregation
        self.accounts: set[str] = set()
        self.tokens: set[Key] = set()
        self.aggregation = False

    def __bool__(self) -> bool:
        return any(getattr(self, stage) for stage in self.STAGES) or bool(self.accounts or self.tokens
                                                                          or self.aggregation or self.volumes)

    def clear(self) -> None:
        for stage in self.STAGES:
            getattr(self, stage).clear()
        self.accounts.clear()
        self.tokens.clear()
        self.aggregation = False
        self.volumes = False

    def drain(self, stage: str) -> list:
        """The stage's keys in a stable order (pod IPs and names must not depend on set hashing)."""
        keys = getattr(self, stage)
        if not keys:
            return []
        items = sorted(keys)
        keys.clear()
        return items

    # -- the Store's tracker protocol --------------------------------------------------------------
    def changed(self, plural: str, old: dict | None, new: dict | None) -> None:
        obj = new if new is not None else old
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if new is None or meta.get("deletionTimestamp"):
            self._deleting(plural, key, new is None)
        if new is None and "." in plural and key[0]:  # a custom object: what it owned goes too
            self.garbage.add(key[0])
        if plural in SCALE_INPUTS:
            self._watchers(plural, key[0], old, new)
        if plural in VOLUME_INPUTS or (plural == "pods" and (uses_claims(old) or uses_claims(new))):
            self.volumes = True
        if plural in ("persistentvolumeclaims", "persistentvolumes"):  # pods waiting for a claim are placed again
            self._waiting_pods(key[0] or None)
        if plural == "deployments":
            self._deployment(key)
        elif plural == "replicasets":
            self._replicaset(key)
            self._owners(obj, "Deployment", self._deployment)
        elif plural == "pods":
            self.pods.add(key)
            self._owners(obj, "ReplicaSet", self._replicaset)
            for stage, kind in WORKLOADS.items():
                self._owners(obj, kind, getattr(self, stage).add)
            self._selecting_services(key[0], old, new)
            if old is not None and (old.get("spec") or {}).get("nodeName") and _holds_node(old) and not _holds_node(new):
                self._waiting_pods()  # a node's room was freed: pods waiting for one are placed again
        elif plural in WORKLOADS or plural == "cronjobs":
            getattr(self, plural).add(key)
            if plural == "jobs":
                self._owners(obj, "CronJob", self.cronjobs.add)
        elif plural == "services":
            self.services.add(key)
        elif plural == "endpoints":
            if (meta.get("labels") or {}).get(MANAGED_EP):
                self.services.add(key)
        elif plural == "nodes":  # a node came, was uncordoned or relabelled: pods waiting for one are placed again
            self._waiting_pods()
            for ds in self.store.list("daemonsets", ordered=False):  # and daemon sets see which nodes they cover
                self.daemonsets.add((ds["metadata"]["namespace"], ds["metadata"]["name"]))
            return
        elif plural == "endpointslices":
            service = (meta.get("labels") or {}).get(SERVICE_NAME)
            if service:
                self.services.add((key[0], service))
        else:
            queue_change(self, plural, old, new)
            return
        if new is None and plural in OWNERS:
            self.garbage.add(key[0])  # what it owned goes too
        elif new is not None and old is None and meta.get("ownerReferences") and not self._has_owner(new):
            self.garbage.add(key[0])

    def reset(self) -> None:
        self.clear()

    # -- helpers -------------------------------------------------------------------------------------
    def _waiting_pods(self, namespace: str | None = None) -> None:
        for pod in self.store.list("pods", namespace, ordered=False):
            if not (pod.get("status") or {}).get("hostIP") and not (pod.get("spec") or {}).get("nodeName"):
                self.pods.add((pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _watchers(self, plural: str, namespace: str, old: dict | None, new: dict | None) -> None:
        """Queue the namespace for the budgets and autoscalers that count what changed (their own status writes
        queue nothing: only a new spec or generation does)."""
        for stage, watcher in WATCHERS.items():
            if not self.store.list(watcher, namespace, ordered=False):
                continue
            if plural == watcher and old is not None and new is not None and old.get("spec") == new.get("spec") \
                    and old["metadata"].get("generation") == new["metadata"].get("generation"):
                continue
            getattr(self, stage).add(namespace)

    def _deleting(self, plural: str, key: Key, gone: bool) -> None:
        """A deletion went on: the namespace or CRD waiting for it is looked at again."""
        namespace, name = key
        if not gone:
            if plural == "namespaces":
                self.terminating_namespaces.add(name)
            elif plural == "customresourcedefinitions":
                self.terminating_crds.add(name)
            return
        if namespace:
            ns = self.store.get("namespaces", "", namespace)
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                self.terminating_namespaces.add(namespace)
        if "." in plural:  # a custom object (its store key is its CRD's name)
            crd = self.store.get("customresourcedefinitions", "", plural)
            if crd is not None and crd["metadata"].get("deletionTimestamp"):
                self.terminating_crds.add(plural)

    def _deployment(self, key: Key) -> None:
        self.deployments.add(key)
        self.deployment_status.add(key)

    def _replicaset(self, key: Key) -> None:
        self.replicasets.add(key)
        self.replicaset_status.add(key)

    @staticmethod
    def _owners(obj: dict, kind: str, queue) -> None:
        ns = obj["metadata"].get("namespace", "")
        for ref in obj["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == kind and ref.get("name"):
                queue((ns, ref["name"]))

    def _has_owner(self, obj: dict) -> bool:
        ns = obj["metadata"].get("namespace", "")
        for ref in obj["metadata"].get("ownerReferences") or []:
            plural = OWNER_PLURALS.get(ref.get("kind", ""))
            owner = self.store.get(plural, ns, ref.get("name", "")) if plural else None
            if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                return True
        return False

    def _selecting_services(self, ns: str, old: dict | None, new: dict | None) -> None:
        labels = [o["metadata"].get("labels") or {} for o in (old, new) if o is not None]
        for svc in self.store.list("services", ns):
            selector = (svc.get("spec") or {}).get("selector")
            if selector and any(map(selector_from_dict({"matchLabels": selector}).matches, labels)):
                self.services.add((ns, svc["metadata"]["name"]))

    def mark_all(self, namespaces: list[str]) -> None:
        """Queue every controlled object of these namespaces (a full resync)."""
        store = self.store
        self.aggregation = True
        for ns in namespaces:
            self.garbage.add(ns)
            self.accounts.add(ns)
            for plural, queue in (("deployments", self._deployment), ("replicasets", self._replicaset),
                                  ("pods", self.pods.add), ("services", self.services.add),
                                  ("cronjobs", self.cronjobs.add), ("jobs", self.jobs.add),
                                  ("statefulsets", self.statefulsets.add), ("daemonsets", self.daemonsets.add)):
                for obj in store.list(plural, ns):
                    queue((ns, obj["metadata"]["name"]))
            for ep in store.list("endpoints", ns):
                if (ep["metadata"].get("labels") or {}).get(MANAGED_EP):
                    self.services.add((ns, ep["metadata"]["name"]))


def _holds_node(pod: dict | None) -> bool:
    """The pod holds room on its node (not gone, not finished)."""
    return pod is not None and not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
