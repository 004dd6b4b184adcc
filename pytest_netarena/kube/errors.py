"""Kubernetes-shaped Status errors raised by the embedded API server."""

from __future__ import annotations


class ApiError(Exception):
    """An error that becomes a `Status` object on the wire."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if not self.reason:  # a real server omits an unknown reason (e.g. etcd's errors)
            del body["reason"]
        if self.details is not None:
            body["details"] = self.details
        return body


def _qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def _details(name: str, plural: str, group: str) -> dict:
    details = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return details


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_qualified(plural, group)} "{name}" not found',
                    _details(name, plural, group))


def no_route() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{_qualified(plural, group)} "{name}" already exists',
                    _details(name, plural, group))


def conflict(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409, "Conflict",
        f'Operation cannot be fulfilled on {_qualified(plural, group)} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
        _details(name, plural, group))


def quota_exceeded(plural: str, group: str, name: str, requested: int, used: int, limited: int) -> ApiError:
    """A real server's ResourceQuota refusal (403), for the namespace's bytes of stored objects."""
    return ApiError(403, "Forbidden",
                    f'{_qualified(plural, group)} "{name}" is forbidden: exceeded quota: {NAMESPACE_QUOTA}, '
                    f"requested: bytes={requested}, used: bytes={used}, limited: bytes={limited}",
                    _details(name, plural, group))


#: the name the namespace byte quota goes by in its refusals
NAMESPACE_QUOTA = "netarena-namespace-bytes"


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """causes: (field, CauseType, message) triples, e.g. ("spec.containers", "FieldValueRequired", "Required value")."""
    parts = [f"{field}: {message}" for field, _, message in causes]
    text = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details = {"name": name, "kind": kind,
               "causes": [{"reason": reason, "message": message, "field": field}
                          for field, reason, message in causes]}
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', details)


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> ApiError:
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format ({content_type or 'none'}) - "
                    f"accepted media types include: {', '.join(accepted)}")


def not_supported(what: str) -> ApiError:
    return ApiError(400, "BadRequest",
                    f"{what} is not supported by this embedded Kubernetes API server "
                    "(it has no kubelet, no container runtime and no metrics)")


def internal(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"an error on the server (\"{message}\") has prevented the request from succeeding")


def entity_too_large(message: str) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def patch_failed(message: str) -> ApiError:
    """A JSON Patch that cannot be applied (a real server sends only the sentence before the colon)."""
    return ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {message}")


def too_many_requests() -> ApiError:
    """A real server's answer when it cannot take the request now (429; clients may retry)."""
    return ApiError(429, "TooManyRequests", "Too many requests, please try again later.", {"retryAfterSeconds": 1})


def timeout() -> ApiError:
    return ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout - "
                                    "context deadline exceeded", {})


def namespace_terminating(plural: str, group: str, name: str, namespace: str) -> ApiError:
    """A create in a namespace being deleted (the NamespaceLifecycle admission plugin's 403)."""
    details = _details(name, plural, group)
    details["causes"] = [{"reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                          "field": "metadata.namespace"}]
    return ApiError(403, "Forbidden", f'{_qualified(plural, group)} "{name}" is forbidden: unable to create new content '
                                      f"in namespace {namespace} because it is being terminated", details)
