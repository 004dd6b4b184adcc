"""ServiceAccount tokens: signed JWTs as a real server issues them (token Secrets, TokenRequest), and their check."""

from __future__ import annotations

import base64
import json
import time
import uuid

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEGACY_ISSUER = "kubernetes/serviceaccount"
AUDIENCE = ISSUER
SA_PREFIX = "system:serviceaccount:"
TOKEN_TYPE = "kubernetes.io/service-account-token"
SA_NAME = "kubernetes.io/service-account.name"
SA_UID = "kubernetes.io/service-account.uid"
#: TokenRequest's default and bounds (kubectl create token --duration)
DEFAULT_SECONDS, MIN_SECONDS, MAX_SECONDS = 3600, 600, 2 ** 32
#: a token is a few hundred bytes; anything much longer is not one of ours and is not parsed
MAX_TOKEN = 8192


class InvalidToken(ValueError):
    """The bearer token is not one this server issued, or it no longer names a live ServiceAccount."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(authority, claims: dict) -> str:
    """A compact ES256 JWT of claims, signed with the server's ServiceAccount key."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    header = _b64(json.dumps({"alg": "ES256", "kid": authority.key_id}, separators=(",", ":")).encode())
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    der = authority.signing_key.sign(f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    r, s = utils.decode_dss_signature(der)
    return f"{header}.{payload}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def verify(authority, token: str) -> dict:
    """The claims of a token this server signed (signature, time bounds); InvalidToken otherwise."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    if authority is None or len(token) > MAX_TOKEN or token.count(".") != 2:
        raise InvalidToken("not a token of this server")
    header, payload, signature = token.split(".")
    try:
        raw = _unb64(signature)
        claims = json.loads(_unb64(payload))
        head = json.loads(_unb64(header))
    except ValueError:
        raise InvalidToken("not a token of this server") from None
    if not isinstance(claims, dict) or not isinstance(head, dict) or head.get("alg") != "ES256" or len(raw) != 64:
        raise InvalidToken("not a token of this server")
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        authority.signing_key.public_key().verify(der, f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise InvalidToken("bad signature") from None
    now = time.time()
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if isinstance(exp, (int, float)) and now >= exp:
        raise InvalidToken("expired")
    if isinstance(nbf, (int, float)) and now + 60 < nbf:
        raise InvalidToken("not valid yet")
    return claims


def secret_claims(namespace: str, account: dict, secret_name: str) -> dict:
    """The claims of a legacy token Secret's token (no expiry; valid while the Secret and account live)."""
    name = account["metadata"]["name"]
    return {"iss": LEGACY_ISSUER, "kubernetes.io/serviceaccount/namespace": namespace,
            "kubernetes.io/serviceaccount/secret.name": secret_name,
            "kubernetes.io/serviceaccount/service-account.name": name,
            "kubernetes.io/serviceaccount/service-account.uid": account["metadata"]["uid"],
            "sub": f"{SA_PREFIX}{namespace}:{name}"}


def bound_claims(namespace: str, account: dict, seconds: int, audiences: list[str] | None = None,
                 pod: dict | None = None) -> dict:
    """The claims of a TokenRequest token (bound to the account's uid, and to a pod's when given: a projected
    token, which dies with its pod; expiring)."""
    now = int(time.time())
    name = account["metadata"]["name"]
    bound: dict = {"namespace": namespace}
    if pod is not None:
        bound["node"] = {"name": (pod.get("spec") or {}).get("nodeName", ""), "uid": ""}
        bound["pod"] = {"name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
    bound["serviceaccount"] = {"name": name, "uid": account["metadata"]["uid"]}
    return {"aud": audiences or [AUDIENCE], "exp": now + seconds, "iat": now, "iss": ISSUER,
            "jti": str(uuid.uuid4()), "kubernetes.io": bound, "nbf": now, "sub": f"{SA_PREFIX}{namespace}:{name}"}


def account_of(store, claims: dict, token: str) -> tuple[str, str, str]:
    """(namespace, name, uid) of the live ServiceAccount the claims name; InvalidToken when it is gone,
    was re-created (another uid) or, for a Secret's token, the Secret no longer holds this token."""
    bound = claims.get("kubernetes.io")
    if isinstance(bound, dict):
        namespace = bound.get("namespace")
        account = bound.get("serviceaccount") or {}
        name, uid, secret = account.get("name"), account.get("uid"), None
    else:
        namespace = claims.get("kubernetes.io/serviceaccount/namespace")
        name = claims.get("kubernetes.io/serviceaccount/service-account.name")
        uid = claims.get("kubernetes.io/serviceaccount/service-account.uid")
        secret = claims.get("kubernetes.io/serviceaccount/secret.name")
    if not all(isinstance(v, str) and v for v in (namespace, name, uid)):
        raise InvalidToken("no ServiceAccount in the token")
    live = store.get("serviceaccounts", namespace, name)
    if live is None or live["metadata"].get("uid") != uid:
        raise InvalidToken(f"the ServiceAccount {namespace}/{name} no longer exists")
    pod = bound.get("pod") if isinstance(bound, dict) else None
    if pod is not None:  # a pod's projected token is valid while that very pod lives
        held = store.get("pods", namespace, pod.get("name", "")) if isinstance(pod, dict) else None
        if held is None or held["metadata"].get("uid") != pod.get("uid") or held["metadata"].get("deletionTimestamp"):
            raise InvalidToken("the pod the token was bound to no longer exists")
    if secret is not None:
        stored = store.get("secrets", namespace, secret)
        held = ((stored or {}).get("data") or {}).get("token", "")
        if stored is None or (stored["metadata"].get("annotations") or {}).get(SA_NAME) != name \
                or held != base64.b64encode(token.encode()).decode():
            raise InvalidToken(f"the token Secret {namespace}/{secret} no longer exists")
    return namespace, name, uid


def request_seconds(spec: dict) -> int:
    """TokenRequest spec.expirationSeconds, defaulted and bounded as a real server does."""
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        return DEFAULT_SECONDS
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < MIN_SECONDS:
        from .errors import invalid
        from .validation import bad_value

        raise invalid("TokenRequest", "authentication.k8s.io", "",
                      [bad_value("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")])
    return min(seconds, MAX_SECONDS)
