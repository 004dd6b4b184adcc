"""A pod's volumes on its node: made when the pod starts, kept in step with their sources, bound into its containers.

- configMap, secret, downwardAPI and projected volumes are written as the kubelet's atomic writer
  writes them: the files in a timestamped folder, `..data` a link to it, each key a link through
  `..data`, so an update (a ConfigMap edited, a token renewed) swaps them all at once. They are bound
  read-only; their files belong to the pod's user, with the modes the volume asks for.
- emptyDir is a folder of the pod's (gone with the pod); persistentVolumeClaim the folder of the bound
  PersistentVolume's hostPath or local path on the pod's node, which outlives the pod; hostPath a folder
  of the node's own (never the host's).

Everything is under the cluster's scratch space. A source that is missing is the kubelet's FailedMount
("MountVolume.SetUp failed for volume ...") and the pod waits in ContainerCreating until it is there.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..sandbox import Mount
from . import envvars

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_MODE = 0o644
#: a token is renewed once this share of its life has passed (the kubelet's 80%)
RENEW_AT = 0.8
CONTENT = ("configMap", "secret", "downwardAPI", "projected")


class VolumeError(RuntimeError):
    """A volume that cannot be set up yet; the message is the kubelet's FailedMount event."""


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:200] or "_"


def node_folder(storage: Path, node: str, host_path: str) -> Path:
    """Where a node's hostPath (or a local PersistentVolume's path) lives: under the node's own folder."""
    digest = hashlib.sha256(host_path.encode()).hexdigest()[:12]
    return storage / _safe_name(node) / f"{_safe_name(host_path.strip('/'))}-{digest}"


class PodVolumes:
    """The volumes of one running pod."""

    def __init__(self, folder: Path, pod: dict, uid: int, store, storage: Path,
                 token: Callable[[dict, int, list[str] | None], str], allocatable: Mapping[str, str]) -> None:
        """folder: the pod's own (scratch/<pod uid>/volumes); storage: the nodes' folders (hostPath, claims);
        token(pod, seconds, audiences): a ServiceAccount token bound to the pod."""
        self.folder, self.pod, self.uid, self.store, self.storage = folder, pod, uid, store, storage
        self.token, self.allocatable = token, allocatable
        self.paths: dict[str, Path] = {}  #: volume name -> its folder
        self._written: dict[str, str] = {}  #: content volume -> digest of what it holds
        self._tokens: dict[tuple[str, int], tuple[float, str]] = {}  #: (volume, source index) -> (made, token)

    @property
    def volumes(self) -> list[dict]:
        return [v for v in (self.pod.get("spec") or {}).get("volumes") or () if isinstance(v, dict) and v.get("name")]

    def setup(self) -> None:
        """Make every volume (content ones written, or rewritten where their sources changed); VolumeError."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for volume in self.volumes:
            name = volume["name"]
            try:
                if any(volume.get(kind) is not None for kind in CONTENT):
                    self._content(name, volume)
                elif volume.get("emptyDir") is not None:
                    self.paths.setdefault(name, self._empty_dir(name))
                elif volume.get("persistentVolumeClaim") is not None:
                    self.paths[name] = self._claim(volume["persistentVolumeClaim"])
                elif volume.get("hostPath") is not None:
                    self.paths[name] = self._node_path((volume["hostPath"] or {}).get("path") or "/")
                else:
                    self.paths.setdefault(name, self._empty_dir(name))  # a kind this node has no plugin for
            except (envvars.ConfigError, VolumeError) as error:
                raise VolumeError(f'MountVolume.SetUp failed for volume "{name}" : {error}') from None

    def refresh(self) -> None:
        """Bring the content volumes up to date with their ConfigMaps, Secrets and tokens (errors are kept quiet:
        a volume whose source went away keeps its last content, as on a real node)."""
        for volume in self.volumes:
            if any(volume.get(kind) is not None for kind in CONTENT) and volume["name"] in self.paths:
                try:
                    self._content(volume["name"], volume)
                except (envvars.ConfigError, VolumeError):
                    pass

    def mounts(self, container: dict) -> tuple[Mount, ...]:
        """The container's volumeMounts as box mounts (content volumes read-only, whatever they ask)."""
        found = []
        kinds = {v["name"]: v for v in self.volumes}
        for mount in container.get("volumeMounts") or ():
            name, target = mount.get("name"), mount.get("mountPath")
            if name not in self.paths or not isinstance(target, str) or not target.startswith("/"):
                continue
            content = any(kinds[name].get(kind) is not None for kind in CONTENT)
            found.append(Mount(str(self.paths[name]), target, writable=not content and not mount.get("readOnly"),
                               sub_path=str(mount.get("subPath") or ""), trusted=content))
        return tuple(found)

    # -- kinds ---------------------------------------------------------------------------------------------
    def _empty_dir(self, name: str) -> Path:
        path = self.folder / _safe_name(name)
        path.mkdir(exist_ok=True)
        os.chmod(path, 0o777)
        return path

    def _node(self) -> str:
        return (self.pod.get("spec") or {}).get("nodeName") or ""

    def _node_path(self, host_path: str) -> Path:
        path = node_folder(self.storage, self._node(), host_path)
        if not path.exists():
            path.mkdir(parents=True)
            os.chmod(path, 0o777)
        return path

    def _claim(self, source: dict) -> Path:
        namespace = self.pod["metadata"]["namespace"]
        name = source.get("claimName") or ""
        claim = self.store.get("persistentvolumeclaims", namespace, name)
        if claim is None:
            raise VolumeError(f'persistentvolumeclaim "{name}" not found')
        volume_name = (claim.get("spec") or {}).get("volumeName")
        volume = self.store.get("persistentvolumes", "", volume_name) if volume_name else None
        if volume is None or (claim.get("status") or {}).get("phase") != "Bound":
            raise VolumeError(f'persistentvolumeclaim "{name}" is not bound')
        spec = volume.get("spec") or {}
        where = (spec.get("hostPath") or {}).get("path") or (spec.get("local") or {}).get("path")
        return self._node_path(where or f"/var/lib/netarena/volumes/{volume_name}")

    def _content(self, name: str, volume: dict) -> None:
        files = self._files(name, volume)
        digest = hashlib.sha256(repr(sorted((k, v[1], v[0]) for k, v in files.items())).encode()).hexdigest()
        if self._written.get(name) == digest and name in self.paths:
            return
        path = self.paths.get(name) or self.folder / _safe_name(name)
        atomic_write(path, files, self.uid)
        self.paths[name], self._written[name] = path, digest

    def _files(self, name: str, volume: dict) -> dict[str, tuple[bytes, int]]:
        namespace = self.pod["metadata"]["namespace"]
        if volume.get("configMap") is not None:
            source = volume["configMap"]
            return _keyed(self.store, "ConfigMap", namespace, source.get("name") or "", source,
                          source.get("defaultMode", DEFAULT_MODE))
        if volume.get("secret") is not None:
            source = volume["secret"]
            return _keyed(self.store, "Secret", namespace, source.get("secretName") or "", source,
                          source.get("defaultMode", DEFAULT_MODE))
        if volume.get("downwardAPI") is not None:
            source = volume["downwardAPI"]
            return self._downward(source.get("items") or (), source.get("defaultMode", DEFAULT_MODE))
        projected = volume["projected"] or {}
        mode = projected.get("defaultMode", DEFAULT_MODE)
        files: dict[str, tuple[bytes, int]] = {}
        for index, source in enumerate(projected.get("sources") or ()):
            if source.get("configMap") is not None:
                ref = source["configMap"]
                files.update(_keyed(self.store, "ConfigMap", namespace, ref.get("name") or "", ref, mode))
            elif source.get("secret") is not None:
                ref = source["secret"]
                files.update(_keyed(self.store, "Secret", namespace, ref.get("name") or "", ref, mode))
            elif source.get("downwardAPI") is not None:
                files.update(self._downward((source["downwardAPI"] or {}).get("items") or (), mode))
            elif source.get("serviceAccountToken") is not None:
                ref = source["serviceAccountToken"]
                files[ref.get("path") or "token"] = (self._token(name, index, ref).encode(), mode)
        return files

    def _downward(self, items, mode: int) -> dict[str, tuple[bytes, int]]:
        files = {}
        for item in items:
            path = item.get("path")
            if not path:
                continue
            if item.get("fieldRef"):
                value = envvars.field_value(self.pod, (item["fieldRef"] or {}).get("fieldPath") or "")
            else:
                ref = item.get("resourceFieldRef") or {}
                value = envvars.resource_value(self.pod, ref.get("containerName") or "", ref, self.allocatable)
            files[path] = (value.encode(), item.get("mode", mode))
        return files

    def _token(self, volume: str, index: int, ref: dict) -> str:
        seconds = int(ref.get("expirationSeconds") or 3600)
        made, token = self._tokens.get((volume, index), (0.0, ""))
        if not token or time.time() - made > seconds * RENEW_AT:
            audience = ref.get("audience")
            token = self.token(self.pod, seconds, [audience] if audience else None)
            self._tokens[(volume, index)] = (time.time(), token)
        return token


def _keyed(store, kind: str, namespace: str, name: str, source: dict, mode: int) -> dict[str, tuple[bytes, int]]:
    """The files of a ConfigMap or Secret (all its keys, or its `items`), as the kubelet projects them."""
    obj = store.get("configmaps" if kind == "ConfigMap" else "secrets", namespace, name)
    if obj is None:
        if source.get("optional"):
            return {}
        raise VolumeError(f'{kind.lower()} "{name}" not found')
    if kind == "ConfigMap":
        values = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
        values.update({k: base64.b64decode(v or "") for k, v in (obj.get("binaryData") or {}).items()})
    else:
        values = {k: base64.b64decode(v or "") for k, v in (obj.get("data") or {}).items()}
    items = source.get("items")
    if not items:
        return {key: (value, mode) for key, value in values.items()}
    files = {}
    for item in items:
        key = item.get("key")
        if key not in values:
            if source.get("optional"):
                continue
            raise VolumeError(f"{kind.lower()} references non-existent {kind.lower()} key: {key}" if kind == "Secret"
                              else f"configmap references non-existent config key: {key}")
        files[item.get("path") or key] = (values[key], item.get("mode", mode))
    return files


def atomic_write(folder: Path, files: Mapping[str, tuple[bytes, int]], owner: int) -> None:
    """Write files into folder as the kubelet's atomic writer: a fresh timestamped folder, `..data` swapped to it
    with one rename, and each top-level name a link through `..data`."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns() % 10**9:09d}"
    fresh = folder / stamp
    fresh.mkdir()
    os.chmod(fresh, 0o755)
    for relative, (content, mode) in files.items():
        parts = [p for p in relative.split("/") if p not in ("", ".")]
        if not parts or ".." in parts or parts[0].startswith(".."):
            continue
        target = fresh.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        os.chmod(target, int(mode) & 0o777 if isinstance(mode, int) else DEFAULT_MODE)
        os.chown(target, owner, owner)
    link = folder / "..data_tmp"
    if link.is_symlink():
        link.unlink()
    os.symlink(stamp, link)
    old = os.readlink(folder / "..data") if (folder / "..data").is_symlink() else None
    os.replace(link, folder / "..data")
    tops = {p.name for p in fresh.iterdir()}
    for name in tops:
        entry = folder / name
        if not entry.is_symlink():
            os.symlink(f"..data/{name}", entry)
    for entry in folder.iterdir():
        if not entry.name.startswith("..") and entry.name not in tops:
            entry.unlink()
    if old and old != stamp:
        shutil.rmtree(folder / old, ignore_errors=True)
