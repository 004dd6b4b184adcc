"""Objects served in several versions and stored in one: a request's version to the stored one and back."""

from __future__ import annotations

from .registry import HPA, Resource

#: the version each multi-version built-in resource is stored in
STORAGE = {("autoscaling", HPA): "v2"}


def storage_version(res: Resource) -> str:
    if res.custom is not None:
        return res.custom.storage_version
    return STORAGE.get((res.group, res.plural), res.version)


def to_storage(res: Resource, obj: dict) -> dict:
    """obj (in res's version) as the store keeps it; obj itself when the versions are one."""
    stored = storage_version(res)
    if stored == res.version:
        return obj
    if res.custom is not None:
        return {**obj, "apiVersion": f"{res.group}/{stored}"}
    from . import hpa

    return hpa.v1_to_v2(obj)


def from_storage(res: Resource, obj: dict) -> dict:
    """A stored object as res's version shows it (a new dict when it differs: stored objects are never changed)."""
    if obj is None or storage_version(res) == res.version:
        return obj
    if res.custom is not None:
        return {**obj, "apiVersion": res.api_version}
    from . import hpa

    return hpa.v2_to_v1(obj)
