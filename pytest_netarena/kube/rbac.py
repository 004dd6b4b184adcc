"""RBAC: who a request is (User), what it asks (Attributes), and whether the stored roles and bindings allow it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from . import errors

GROUP = "rbac.authorization.k8s.io"
#: the kinds whose writes pass the escalation check (a role or binding grants only what its writer holds)
ROLE_PLURALS = frozenset({"roles", "clusterroles", "rolebindings", "clusterrolebindings"})
MASTERS = "system:masters"
AUTHENTICATED, UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"
#: verbs a reading request has (a namespace-scoped listener may read cluster-scoped objects)
READ_VERBS = frozenset({"get", "list", "watch"})
#: subresources whose requests are authorized as `create`, whatever the method: kubectl opens them with a
#: WebSocket GET, and a real server (1.31+, AuthorizePodWebsocketUpgradeCreatePermission) asks for create
CREATE_SUBRESOURCES = frozenset({"exec", "attach", "portforward"})


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    #: a listener identity bound to one namespace: no RBAC object is consulted (docs/kube.md, "Identities")
    scope: str | None = None

    def info(self) -> dict:
        """The user as a UserInfo (SelfSubjectReview, TokenReview)."""
        return {"username": self.name, **({"uid": self.uid} if self.uid else {}), "groups": list(self.groups)}


ADMIN = User("kubernetes-admin", (MASTERS, AUTHENTICATED))
ANONYMOUS = User("system:anonymous", (UNAUTHENTICATED,))


def service_account(namespace: str, name: str, uid: str = "") -> User:
    return User(f"system:serviceaccount:{namespace}:{name}",
                ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED), uid)


def scoped(namespace: str) -> User:
    """The identity of a listener bound to one namespace (like a ServiceAccount with `edit` there)."""
    return User(f"system:serviceaccount:{namespace}:netarena-agent",
                ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED), scope=namespace)


@dataclass(frozen=True)
class Attributes:
    """One authorization question: a verb on a resource (namespaced or not), or on a non-resource path."""

    verb: str
    resource: str = ""  #: plural; "" for a non-resource request
    group: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""

    @property
    def combined(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_verb(method: str, watch: bool, name: str, subresource: str) -> str:
    """The verb RBAC sees for an HTTP request on a resource path."""
    if subresource in CREATE_SUBRESOURCES:
        return "create"
    if method in ("GET", "HEAD"):
        return "watch" if watch else ("get" if name else "list")
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method.lower())
    return "deletecollection" if verb == "delete" and not name else verb


# -- rules ------------------------------------------------------------------------------------------------
def _has(values, wanted: str) -> bool:
    return "*" in values or wanted in values


def rule_allows(rule: dict, attrs: Attributes) -> bool:
    if not _has(rule.get("verbs") or (), attrs.verb):
        return False
    if not attrs.resource:
        for url in rule.get("nonResourceURLs") or ():
            if url == "*" or url == attrs.path or (url.endswith("*") and attrs.path.startswith(url[:-1])):
                return True
        return False
    if not _has(rule.get("apiGroups") or (), attrs.group):
        return False
    resources = rule.get("resources") or ()
    if not ("*" in resources or attrs.combined in resources
            or (attrs.subresource and f"*/{attrs.subresource}" in resources)):
        return False
    names = rule.get("resourceNames") or ()
    return not names or attrs.name in names


def _subject_matches(subject: dict, user: User, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user.name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user.name == f"system:serviceaccount:{namespace}:{name}"
    return False


def _role_rules(store, ref: dict, namespace: str, problems: list[str]) -> list[dict]:
    kind, name = ref.get("kind"), ref.get("name", "")
    role = store.get("clusterroles", "", name) if kind == "ClusterRole" else store.get("roles", namespace, name)
    if role is None:
        problems.append(f'{"clusterrole" if kind == "ClusterRole" else "role"}.{GROUP} "{name}" not found')
        return []
    return role.get("rules") or []


def rules_for(store, user: User, namespace: str, problems: list[str] | None = None) -> list[dict]:
    """Every rule that applies to user in namespace ("" : cluster-wide rules only), in binding order."""
    problems = [] if problems is None else problems
    rules: list[dict] = []
    for binding in store.list("clusterrolebindings"):
        if any(_subject_matches(s, user, "") for s in binding.get("subjects") or ()):
            rules += _role_rules(store, binding.get("roleRef") or {}, "", problems)
    if namespace:
        for binding in store.list("rolebindings", namespace):
            if any(_subject_matches(s, user, namespace) for s in binding.get("subjects") or ()):
                rules += _role_rules(store, binding.get("roleRef") or {}, namespace, problems)
    return rules


def _scoped_allows(user: User, attrs: Attributes) -> bool:
    if not attrs.resource or attrs.resource.startswith("selfsubject"):
        return True
    if attrs.verb == "impersonate":  # a listener's identity is fixed
        return False
    if attrs.namespace:
        return attrs.namespace == user.scope
    from .registry import BY_PLURAL

    res = BY_PLURAL.get(attrs.resource)
    return (res is None or not res.namespaced) and attrs.verb in READ_VERBS


def authorize(store, user: User, attrs: Attributes) -> tuple[bool, str]:
    """(allowed, reason): the reason names bindings whose role is missing, as a real server's does."""
    if MASTERS in user.groups:
        return True, ""
    if user.scope is not None:
        return _scoped_allows(user, attrs), ""
    problems: list[str] = []
    with store.lock:
        rules = rules_for(store, user, attrs.namespace, problems)
    if any(rule_allows(rule, attrs) for rule in rules):
        return True, ""
    if not problems:
        return False, ""
    return False, "RBAC: " + (problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


def denial(user: User, attrs: Attributes) -> str:
    """A real server's sentence for a denied request (forbiddenMessage)."""
    if not attrs.resource:
        return f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (f'User "{user.name}" cannot {attrs.verb} resource "{attrs.combined}" in API group "{attrs.group}" '
            f"{where}")


class Denied(errors.ApiError):
    """A request RBAC refused (403): it keeps who asked what, for the audit log."""

    def __init__(self, message: str, details: dict, user: User, attrs: Attributes, reason: str):
        super().__init__(403, "Forbidden", message, details)
        self.user, self.attrs, self.why = user, attrs, reason


def forbidden(user: User, attrs: Attributes, reason: str = "") -> Denied:
    """403 Forbidden as a real server words it: `pods "web" is forbidden: User "..." cannot get ...`."""
    message = denial(user, attrs) + (f": {reason}" if reason else "")
    if not attrs.resource:
        return Denied(f"forbidden: {message}", {}, user, attrs, reason)
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    details = {"name": attrs.name, "group": attrs.group, "kind": attrs.resource} if attrs.name else \
        {"group": attrs.group, "kind": attrs.resource}
    if not attrs.group:
        details.pop("group")
    target = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    return Denied(f"{target} is forbidden: {message}", details, user, attrs, reason)


def check(store, user: User, attrs: Attributes) -> None:
    allowed, reason = authorize(store, user, attrs)
    if not allowed:
        raise forbidden(user, attrs, reason)


# -- escalation: a role or binding may grant only what its writer holds -------------------------------------
def _atoms(rule: dict):
    """A rule broken into single (group, resource, verb, name) or (url, verb) permissions."""
    for verb in rule.get("verbs") or ():
        for url in rule.get("nonResourceURLs") or ():
            yield {"nonResourceURLs": [url], "verbs": [verb]}
        for group in rule.get("apiGroups") or ():
            for resource in rule.get("resources") or ():
                for name in rule.get("resourceNames") or [None]:
                    atom = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                    if name is not None:
                        atom["resourceNames"] = [name]
                    yield atom


def _covers(owner: dict, atom: dict) -> bool:
    if not _has(owner.get("verbs") or (), atom["verbs"][0]):
        return False
    if "nonResourceURLs" in atom:
        url = atom["nonResourceURLs"][0]
        return any(u == "*" or u == url or (u.endswith("*") and url.startswith(u[:-1]))
                   for u in owner.get("nonResourceURLs") or ())
    if not _has(owner.get("apiGroups") or (), atom["apiGroups"][0]):
        return False
    resource, owned = atom["resources"][0], owner.get("resources") or ()
    if not ("*" in owned or resource in owned or ("/" in resource and "*/" + resource.split("/", 1)[1] in owned)):
        return False
    names = owner.get("resourceNames") or ()
    return not names or (bool(atom.get("resourceNames")) and atom["resourceNames"][0] in names)


def uncovered(owner_rules: list[dict], rules: list[dict]) -> list[dict]:
    """The single permissions of rules that no owner rule covers (ConfirmNoEscalation)."""
    return [atom for rule in rules for atom in _atoms(rule) if not any(_covers(o, atom) for o in owner_rules)]


def _rule_text(rule: dict) -> str:
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"), ("resourceNames", "ResourceNames"),
                       ("nonResourceURLs", "NonResourceURLs"), ("verbs", "Verbs")):
        if rule.get(key):
            parts.append(f"{label}:[{' '.join(json.dumps(v) for v in rule[key])}]")
    return "{" + ", ".join(parts) + "}"


def confirm_no_escalation(store, user: User, attrs: Attributes, rules: list[dict]) -> None:
    """Refuse (403) a role or binding that would grant user's writer permissions it does not hold itself."""
    if MASTERS in user.groups or user.scope is not None:
        return
    with store.lock:
        missing = uncovered(rules_for(store, user, attrs.namespace), rules)
    if missing:
        groups = " ".join(json.dumps(g) for g in user.groups)
        text = "\n".join(_rule_text(atom) for atom in missing[:20])
        raise errors.ApiError(
            403, "Forbidden",
            f'{attrs.resource}.{GROUP} "{attrs.name}" is forbidden: user "{user.name}" (groups=[{groups}]) is '
            f"attempting to grant RBAC permissions not currently held:\n{text}",
            {"name": attrs.name, "group": GROUP, "kind": attrs.resource})


def guard_write(store, user: User, plural: str, namespace: str, obj: dict) -> None:
    """Before a Role, ClusterRole or binding is written by user: the escalate and bind checks."""
    if MASTERS in user.groups or user.scope is not None or not isinstance(obj, dict):
        return
    name = (obj.get("metadata") or {}).get("name") or ""
    attrs = Attributes("escalate", plural, GROUP, name=name, namespace=namespace)
    if plural in ("roles", "clusterroles"):
        if not authorize(store, user, attrs)[0]:
            confirm_no_escalation(store, user, attrs, [r for r in obj.get("rules") or [] if isinstance(r, dict)])
        return
    ref = obj.get("roleRef") or {}
    if not isinstance(ref, dict):
        return
    role_plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
    bind = Attributes("bind", role_plural, GROUP, name=ref.get("name", ""),
                      namespace="" if role_plural == "clusterroles" else namespace)
    if authorize(store, user, bind)[0]:
        return
    rules = _role_rules(store, ref, namespace, [])
    confirm_no_escalation(store, user, Attributes("create", plural, GROUP, name=name, namespace=namespace), rules)
