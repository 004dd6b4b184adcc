"""Exceptions raised by the NetworkPolicy engine, each carrying a message fit for a user."""

from __future__ import annotations


class NetpolError(ValueError):
    """Base class: anything the engine rejects because of its input."""


class PolicyValidationError(NetpolError):
    """A NetworkPolicy the API server would reject; `path` names the offending field."""

    def __init__(self, policy: str, path: str, message: str) -> None:
        self.policy = policy
        self.path = path
        self.detail = message
        super().__init__(f"NetworkPolicy {policy}: {path}: {message}")


class ObjectError(NetpolError):
    """A Namespace, Pod or Service object that cannot be read."""


class ManifestError(NetpolError):
    """A manifest or probe file that is malformed."""


class UnknownObjectError(NetpolError, KeyError):
    """A probe or call names a pod, service or namespace the model does not hold."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
