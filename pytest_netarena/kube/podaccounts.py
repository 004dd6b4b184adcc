"""ServiceAccount admission of a new pod: its account must exist, and its token is projected into every container.

As the real admission plugin does: a pod names an account that is missing is refused (403, "error looking
up service account ns/name: serviceaccount "name" not found"); unless the pod or its account sets
automountServiceAccountToken false, the pod gets a `kube-api-access-*` projected volume (a token bound
to the pod, the cluster CA from kube-root-ca.crt, the namespace) mounted read-only at
/var/run/secrets/kubernetes.io/serviceaccount in each container that has nothing there already.
"""

from __future__ import annotations

import hashlib

from . import errors

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
PREFIX = "kube-api-access-"
TOKEN_SECONDS = 3607
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(namespace: str, name: str) -> str:
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def token_volume(name: str) -> dict:
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    "path": "namespace"}]}}]}}


def forbidden(pod_name: str, namespace: str, account: str) -> errors.ApiError:
    return errors.ApiError(403, "Forbidden", f'pods "{pod_name}" is forbidden: error looking up service account '
                                             f'{namespace}/{account}: serviceaccount "{account}" not found',
                           {"name": pod_name, "kind": "pods"})


def admit(store, pod: dict) -> None:
    """Check the pod's account and add its token volume and mounts, in place; ApiError 403 for a missing account."""
    meta, spec = pod["metadata"], pod.setdefault("spec", {})
    namespace = meta.get("namespace") or "default"
    account_name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    account = store.get("serviceaccounts", namespace, account_name)
    if account is None:
        if store.get("serviceaccounts", namespace, "default") is None:
            return  # no account controller keeps this namespace (controllers off): nothing to check or project
        raise forbidden(meta.get("generateName") or meta.get("name") or "", namespace, account_name)
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = account.get("automountServiceAccountToken")
    if automount is False:
        return
    volumes = spec.setdefault("volumes", [])
    if any(isinstance(v, dict) and str(v.get("name", "")).startswith(PREFIX) for v in volumes):
        return
    name = PREFIX + _suffix(namespace, meta.get("name") or meta.get("generateName") or "")
    volumes.append(token_volume(name))
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        mounts = container.setdefault("volumeMounts", [])
        if not any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
            mounts.append({"mountPath": MOUNT_PATH, "name": name, "readOnly": True})
