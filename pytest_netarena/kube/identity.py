"""Who sent a request: a bearer token, a client certificate or the listener itself; then impersonation."""

from __future__ import annotations

from . import errors, rbac, tokens
from .pki import peer_identity


def unauthorized() -> errors.ApiError:
    """401 as a real server answers a credential it cannot accept (kubectl: "You must be logged in")."""
    return errors.ApiError(401, "Unauthorized", "Unauthorized", {})


def authenticate(store, headers: dict, listener_user: rbac.User | None, peer: dict | None) -> rbac.User:
    """The request's user.

    listener_user: a namespace-scoped listener's fixed identity (its requests carry no credential that
    could change it), or ADMIN for the harness's plain listener, or None for a TLS listener, where a
    bearer token or a client certificate of this server's CA names the user and nothing is anonymous."""
    if listener_user is not None and listener_user.scope is not None:
        return listener_user
    header = headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized()
        token = token.strip()
        try:
            claims = tokens.verify(getattr(store, "authority", None), token)
            with store.lock:
                namespace, name, uid = tokens.account_of(store, claims, token)
        except tokens.InvalidToken:
            raise unauthorized() from None
        return rbac.service_account(namespace, name, uid)
    certified = peer_identity(peer)
    if certified is not None:
        user, organizations = certified
        return rbac.User(user, (*organizations, rbac.AUTHENTICATED))
    return listener_user if listener_user is not None else rbac.ANONYMOUS


def impersonate(store, user: rbac.User, headers: dict) -> rbac.User:
    """The user the Impersonate-User / Impersonate-Group headers ask for, once user may impersonate each
    (verb `impersonate` on users, groups or the ServiceAccount); user itself when there are none."""
    wanted = headers.get("impersonate-user", "")
    groups = [g.strip() for g in headers.get("impersonate-group", "").split(",") if g.strip()]
    if not wanted:
        if groups or headers.get("impersonate-uid"):
            raise errors.bad_request("requested impersonation of groups or a uid without impersonating a user")
        return user
    prefix = "system:serviceaccount:"
    if wanted.startswith(prefix) and wanted.count(":") == 3:
        namespace, name = wanted[len(prefix):].split(":")
        asked = [rbac.Attributes("impersonate", "serviceaccounts", "", name=name, namespace=namespace)]
        base = list(rbac.service_account(namespace, name).groups)
    else:
        asked = [rbac.Attributes("impersonate", "users", "", name=wanted)]
        base = [] if wanted == rbac.ANONYMOUS.name else [rbac.AUTHENTICATED]
    asked += [rbac.Attributes("impersonate", "groups", "", name=group) for group in groups]
    for attrs in asked:
        allowed, reason = rbac.authorize(store, user, attrs)
        if not allowed:
            raise rbac.forbidden(user, attrs, reason)
    merged = [*groups, *(g for g in base if g not in groups)]
    if wanted == rbac.ANONYMOUS.name and rbac.UNAUTHENTICATED not in merged:
        merged.append(rbac.UNAUTHENTICATED)
    return rbac.User(wanted, tuple(merged))
