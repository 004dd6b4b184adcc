"""Reading namespaces, pods, services and policies from a live API server named by a kubeconfig (urllib only)."""

from __future__ import annotations

import base64
import json
import os
import ssl
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ManifestError
from .manifests import ClusterObjects, cluster_from_objects, load_text, read_bounded

MAX_KUBECONFIG = 1024 * 1024
MAX_RESPONSE = 256 * 1024 * 1024  #: one list of a large cluster
LIST_PATHS = {
    "Namespace": "/api/v1/namespaces",
    "Pod": "/api/v1/pods",
    "Service": "/api/v1/services",
    "NetworkPolicy": "/apis/networking.k8s.io/v1/networkpolicies",
}


class _Connection:
    def __init__(self, kubeconfig: str | Path, context: str | None = None) -> None:
        documents = load_text(read_bounded(kubeconfig, MAX_KUBECONFIG), f"{kubeconfig} (kubeconfig)")
        config = documents[0] if len(documents) == 1 else None
        if not isinstance(config, Mapping):
            raise ManifestError(f"{kubeconfig}: not a kubeconfig")
        base = Path(kubeconfig).parent
        context_name = context or config.get("current-context")
        ctx = _named(config, "contexts", context_name, "context", kubeconfig)
        cluster = _named(config, "clusters", ctx.get("cluster"), "cluster", kubeconfig)
        user = _named(config, "users", ctx.get("user"), "user", kubeconfig, required=False)
        server = cluster.get("server")
        if not isinstance(server, str) or not server.startswith(("http://", "https://")):
            raise ManifestError(f"{kubeconfig}: cluster server {server!r} is not an http(s) URL")
        self.server = server.rstrip("/")
        self.headers = {"Accept": "application/json"}
        token = user.get("token")
        if not token and user.get("tokenFile"):
            token = (base / user["tokenFile"]).read_text().strip()
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.context = self._tls(cluster, user, base) if self.server.startswith("https://") else None

    def _tls(self, cluster: Mapping[str, Any], user: Mapping[str, Any], base: Path) -> ssl.SSLContext:
        if cluster.get("insecure-skip-tls-verify"):
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif cluster.get("certificate-authority-data"):
            context = ssl.create_default_context(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode("ascii"))
        elif cluster.get("certificate-authority"):
            context = ssl.create_default_context(cafile=str(base / cluster["certificate-authority"]))
        else:
            context = ssl.create_default_context()
        certificate, key = user.get("client-certificate-data"), user.get("client-key-data")
        if certificate and key:
            # ssl only loads client credentials from files.
            with tempfile.TemporaryDirectory() as folder:
                cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
                Path(cert_path).write_bytes(base64.b64decode(certificate))
                Path(key_path).write_bytes(base64.b64decode(key))
                context.load_cert_chain(cert_path, key_path)
        elif user.get("client-certificate") and user.get("client-key"):
            context.load_cert_chain(str(base / user["client-certificate"]), str(base / user["client-key"]))
        return context

    def get(self, path: str, timeout: float = 10.0) -> Any:
        request = urllib.request.Request(self.server + path, headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.context) as response:
                body = response.read(MAX_RESPONSE + 1)
                if len(body) > MAX_RESPONSE:
                    raise ManifestError(f"GET {self.server}{path}: response larger than {MAX_RESPONSE} bytes")
                return json.loads(body)
        except urllib.error.HTTPError as error:
            raise ManifestError(f"GET {self.server}{path}: HTTP {error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ManifestError(f"GET {self.server}{path}: {reason}") from None
        except ValueError:
            raise ManifestError(f"GET {self.server}{path}: response is not JSON") from None


def _named(config: Mapping[str, Any], section: str, name: Any, field: str, source, required: bool = True) -> Mapping:
    for entry in config.get(section) or []:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            return entry.get(field) or {}
    if required:
        raise ManifestError(f"{source}: no {field} named {name!r} in {section}")
    return {}


def fetch_cluster(kubeconfig: str | Path, context: str | None = None) -> ClusterObjects:
    """List the four kinds cluster-wide and read them like manifests."""
    connection = _Connection(kubeconfig, context)
    objects = []
    for kind, path in LIST_PATHS.items():
        try:
            listing = connection.get(path)
        except ManifestError:
            if kind == "Service":
                continue  # services are optional for pod-level probes
            raise
        items = listing.get("items") if isinstance(listing, Mapping) else None
        if not isinstance(items, list):
            raise ManifestError(f"GET {connection.server}{path}: not a {kind}List")
        for item in items:
            if isinstance(item, dict):
                # List items omit kind and apiVersion.
                objects.append({"apiVersion": "networking.k8s.io/v1" if kind == "NetworkPolicy" else "v1",
                                **item, "kind": kind})
    return cluster_from_objects(objects)
