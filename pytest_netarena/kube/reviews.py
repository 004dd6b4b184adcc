"""Questions answered at once, never stored: access and rules reviews (auth can-i), whoami, TokenReview, TokenRequest."""

from __future__ import annotations

import datetime as dt

from . import errors, rbac, tokens
from .registry import BY_PLURAL

AUTHZ, AUTHN = "authorization.k8s.io/v1", "authentication.k8s.io/v1"


def _body(app, req, plural: str) -> dict:
    body = app.decode_body(req, BY_PLURAL[plural])
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body must be a {BY_PLURAL[plural].kind} object")
    spec = body.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise errors.bad_request("spec must be an object")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    body["metadata"] = {**meta, "creationTimestamp": None}
    return body


def _attributes(spec: dict, namespace: str | None = None) -> rbac.Attributes:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        def text(key: str) -> str:
            value = resource.get(key)
            return value if isinstance(value, str) else ""
        return rbac.Attributes(text("verb"), text("resource"), text("group"), text("subresource"), text("name"),
                               text("namespace") if namespace is None else namespace)
    other = spec.get("nonResourceAttributes")
    if isinstance(other, dict):
        return rbac.Attributes(str(other.get("verb") or ""), path=str(other.get("path") or ""))
    raise errors.invalid(BY_PLURAL["selfsubjectaccessreviews"].kind, "authorization.k8s.io", "",
                         [("spec.resourceAttributes", "FieldValueRequired",
                           "Required value: exactly one of nonResourceAttributes or resourceAttributes must be "
                           "specified")])


def _decided(body: dict, store, user: rbac.User, attrs: rbac.Attributes) -> dict:
    if not attrs.resource and not attrs.path:
        raise errors.invalid(body.get("kind", ""), "authorization.k8s.io", "",
                             [("spec.resourceAttributes", "FieldValueRequired", "Required value")])
    allowed, reason = rbac.authorize(store, user, attrs)
    status = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    body["status"] = status
    return body


def answer(app, req, plural: str, namespace: str, name: str = "") -> tuple[int, dict]:
    """(code, body) for a POST of a review kind (or of serviceaccounts/NAME/token)."""
    if req.method != "POST":
        raise errors.method_not_allowed()
    store, user = app.store, req.user
    if plural == "serviceaccounts":
        return 201, token_request(app, req, namespace, name)
    body = _body(app, req, plural)
    spec = body.get("spec") or {}
    if plural == "selfsubjectaccessreviews":
        body.update(kind="SelfSubjectAccessReview", apiVersion=AUTHZ)
        return 201, _decided(body, store, user, _attributes(spec))
    if plural in ("subjectaccessreviews", "localsubjectaccessreviews"):
        local = plural == "localsubjectaccessreviews"
        body.update(kind="LocalSubjectAccessReview" if local else "SubjectAccessReview", apiVersion=AUTHZ)
        subject = rbac.User(str(spec.get("user") or ""), tuple(g for g in spec.get("groups") or [] if isinstance(g, str)),
                            str(spec.get("uid") or ""))
        if not subject.name and not subject.groups:
            raise errors.invalid(body["kind"], "authorization.k8s.io", "",
                                 [("spec.user", "FieldValueRequired", "Invalid value: \"\": at least one of user "
                                                                      "or group must be specified")])
        return 201, _decided(body, store, subject, _attributes(spec, namespace if local else None))
    if plural == "selfsubjectrulesreviews":
        body.update(kind="SelfSubjectRulesReview", apiVersion=AUTHZ)
        body["status"] = rules_status(store, user, str(spec.get("namespace") or namespace or ""))
        return 201, body
    if plural == "selfsubjectreviews":
        body.update(kind="SelfSubjectReview", apiVersion=AUTHN)
        body["status"] = {"userInfo": user.info()}
        return 201, body
    if plural == "tokenreviews":
        body.update(kind="TokenReview", apiVersion=AUTHN)
        token = spec.get("token") if isinstance(spec.get("token"), str) else ""
        try:
            claims = tokens.verify(store.authority, token)
            with store.lock:
                reviewed = rbac.service_account(*tokens.account_of(store, claims, token))
        except tokens.InvalidToken as error:
            body["status"] = {"authenticated": False, "error": f"[invalid bearer token, {error}]", "user": {}}
            return 201, body
        audiences = claims.get("aud") or [tokens.AUDIENCE]
        body["status"] = {"authenticated": True, "user": reviewed.info(),
                          "audiences": audiences if isinstance(audiences, list) else [audiences]}
        return 201, body
    raise errors.no_route()


def rules_status(store, user: rbac.User, namespace: str) -> dict:
    """What user may do in namespace, as SelfSubjectRulesReview lists it (kubectl auth can-i --list)."""
    if user.scope is not None:
        rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}] if namespace == user.scope else \
            [{"verbs": sorted(rbac.READ_VERBS), "apiGroups": ["*"], "resources": ["*"]}]
        rules.append({"verbs": ["*"], "nonResourceURLs": ["*"]})
    else:
        with store.lock:
            rules = rbac.rules_for(store, user, namespace)
    resource_rules = [{k: list(rule.get(k) or []) for k in ("verbs", "apiGroups", "resources", "resourceNames")
                       if rule.get(k) or k == "verbs"} for rule in rules if rule.get("resources")]
    other = [{"verbs": list(rule.get("verbs") or []), "nonResourceURLs": list(rule["nonResourceURLs"])}
             for rule in rules if rule.get("nonResourceURLs")]
    return {"resourceRules": resource_rules, "nonResourceRules": other, "incomplete": False}


def token_request(app, req, namespace: str, name: str) -> dict:
    """POST serviceaccounts/NAME/token (kubectl create token): a bound token for a live ServiceAccount."""
    store = app.store
    body = _body(app, req, "serviceaccounts") if req.body.strip() else {"metadata": {}}
    spec = body.get("spec") or {}
    if store.authority is None:
        raise errors.internal("this server signs no tokens")
    account = store.get("serviceaccounts", namespace, name)
    if account is None:
        raise errors.not_found("serviceaccounts", "", name)
    seconds = tokens.request_seconds(spec)
    audiences = [a for a in spec.get("audiences") or [] if isinstance(a, str)] or [tokens.AUDIENCE]
    claims = tokens.bound_claims(namespace, account, seconds, audiences)
    expires = dt.datetime.fromtimestamp(claims["exp"], dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"kind": "TokenRequest", "apiVersion": AUTHN,
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
            "spec": {"audiences": audiences, "expirationSeconds": seconds,
                     **({"boundObjectRef": spec["boundObjectRef"]} if spec.get("boundObjectRef") else {})},
            "status": {"token": tokens.sign(store.authority, claims), "expirationTimestamp": expires}}
