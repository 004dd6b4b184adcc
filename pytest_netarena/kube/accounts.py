"""Identity controllers: each namespace's `default` ServiceAccount and kube-root-ca.crt, token Secrets, role aggregation."""

from __future__ import annotations

import base64
import copy

from . import roles, tokens

ROOT_CA = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
                       "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
                       "guaranteed across distributions of Kubernetes clusters.")
#: rounds of aggregation (an aggregated role may aggregate another: admin <- edit <- view)
AGGREGATION_ROUNDS = 5


def process(writer, queue) -> None:
    """Run the identity controllers over what the queue holds for them."""
    for namespace in sorted(queue.accounts):
        _namespace(writer, namespace)
    queue.accounts.clear()
    for namespace, name in sorted(queue.tokens):
        _token_secret(writer, namespace, name)
    queue.tokens.clear()
    if queue.aggregation:
        queue.aggregation = False
        _aggregate(writer)


def _namespace(writer, namespace: str) -> None:
    """A namespace's `default` ServiceAccount and its copy of the cluster CA, as a real cluster keeps them."""
    store = writer.store
    ns = store.get("namespaces", "", namespace)
    if ns is None or (ns.get("status") or {}).get("phase") == "Terminating":
        return
    if store.get("serviceaccounts", namespace, "default") is None:
        writer.create("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                          "metadata": {"name": "default", "namespace": namespace}})
    authority = getattr(store, "authority", None)
    if authority is None:
        return
    data = {"ca.crt": authority.ca_pem.decode()}
    old = store.get("configmaps", namespace, ROOT_CA)
    if old is None:
        writer.create("configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": ROOT_CA, "namespace": namespace,
                                                  "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                                     "data": data})
    elif old.get("data") != data:
        fixed = copy.deepcopy(old)
        fixed["data"] = data
        writer.put("configmaps", fixed, old)


def _token_secret(writer, namespace: str, name: str) -> None:
    """Fill a `kubernetes.io/service-account-token` Secret with token, ca.crt and namespace once its
    ServiceAccount exists (the token controller); a Secret of a deleted account goes with it."""
    store = writer.store
    secret = store.get("secrets", namespace, name)
    authority = getattr(store, "authority", None)
    if secret is None or secret.get("type") != tokens.TOKEN_TYPE or authority is None:
        return
    annotations = secret["metadata"].get("annotations") or {}
    account = store.get("serviceaccounts", namespace, annotations.get(tokens.SA_NAME, ""))
    if account is None:
        if annotations.get(tokens.SA_UID):  # it was filled for an account that is gone
            writer.remove("secrets", namespace, name)
        return
    uid = account["metadata"]["uid"]
    data = secret.get("data") or {}
    if annotations.get(tokens.SA_UID) == uid and data.get("token") and data.get("ca.crt"):
        return
    if annotations.get(tokens.SA_UID) not in (None, uid):  # filled for an older account of the same name
        writer.remove("secrets", namespace, name)
        return
    filled = copy.deepcopy(secret)
    filled["metadata"].setdefault("annotations", {})[tokens.SA_UID] = uid
    token = tokens.sign(authority, tokens.secret_claims(namespace, account, name))
    filled["data"] = {**data, "ca.crt": base64.b64encode(authority.ca_pem).decode(),
                      "namespace": base64.b64encode(namespace.encode()).decode(),
                      "token": base64.b64encode(token.encode()).decode()}
    writer.put("secrets", filled, secret)


def _aggregate(writer) -> None:
    """Aggregated ClusterRoles hold the rules of the roles their selectors match (admin, edit, view)."""
    store = writer.store
    for _ in range(AGGREGATION_ROUNDS):
        changed = False
        everything = store.list("clusterroles")
        for role in everything:
            rules = roles.aggregated_rules(role, everything)
            if rules is None or (role.get("rules") or []) == rules:
                continue
            updated = copy.deepcopy(role)
            updated["rules"] = rules
            if not rules:  # as the server stores an empty list: not at all
                del updated["rules"]
            writer.put("clusterroles", updated, role)
            changed = True
        if not changed:
            return


def queue_change(queue, plural: str, old: dict | None, new: dict | None) -> bool:
    """Queue identity work for a write; False when the write is not one these controllers watch."""
    obj = new if new is not None else old
    meta = obj["metadata"]
    namespace = meta.get("namespace", "")
    if plural == "namespaces":
        if new is not None:
            queue.accounts.add(meta["name"])
    elif plural == "serviceaccounts":
        if meta["name"] == "default" and new is None:
            queue.accounts.add(namespace)
        for secret in queue.store.list("secrets", namespace):
            if (secret["metadata"].get("annotations") or {}).get(tokens.SA_NAME) == meta["name"]:
                queue.tokens.add((namespace, secret["metadata"]["name"]))
    elif plural == "secrets":
        if new is not None and new.get("type") == tokens.TOKEN_TYPE:
            queue.tokens.add((namespace, meta["name"]))
    elif plural == "configmaps":
        if meta["name"] == ROOT_CA:
            queue.accounts.add(namespace)
    elif plural == "clusterroles":
        queue.aggregation = True
    else:
        return False
    return True
