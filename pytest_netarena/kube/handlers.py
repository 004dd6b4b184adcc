"""Request routing: turns (method, path, query, headers, body) into a response or a watch stream."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field

from . import columns, errors, openapi, rbac, registry, reviews
from .registry import Resource

TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PATCH_TYPES = {"application/json-patch+json": "json", "application/merge-patch+json": "merge",
               "application/strategic-merge-patch+json": "strategic"}
UNSUPPORTED_SUBRESOURCES = {
    "log": "reading container logs (kubectl logs)",
    "exec": "running commands in containers (kubectl exec)",
    "attach": "attaching to containers (kubectl attach)",
    "portforward": "port forwarding (kubectl port-forward)",
    "proxy": "proxying to services and pods",
}


@dataclass
class Response:
    code: int = 200
    body: object = None  # dict -> JSON, bytes/str -> as is
    content_type: str = "application/json"
    headers: dict = field(default_factory=dict)


@dataclass
class WatchRequest:
    res: Resource
    namespace: str | None
    query: dict
    table: bool
    include_object: str


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes
    user: rbac.User = rbac.ADMIN  #: who sent it (identity.authenticate), after impersonation

    def q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    @property
    def accept(self) -> str:
        return self.headers.get("accept", "") or ""

    @property
    def content_type(self) -> str:
        return (self.headers.get("content-type", "") or "").split(";")[0].strip().lower()

    @property
    def dry_run(self) -> bool:
        return "All" in self.query.get("dryRun", [])

    @property
    def manager(self) -> str:
        """The request's field manager: fieldManager, else its User-Agent's product name (as the real server)."""
        named = self.q("fieldManager")
        if named:
            return named
        agent = (self.headers.get("user-agent") or "").split("/", 1)[0].strip()
        return agent or "unknown"

    @property
    def strict(self) -> bool:
        return (self.q("fieldValidation") or "").lower() == "strict"


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def parse(method: str, raw_path: str, headers: dict, body: bytes) -> Request:
    split = urllib.parse.urlsplit(raw_path)
    return Request(method, split.path, urllib.parse.parse_qs(split.query, keep_blank_values=True),
                   {k.lower(): v for k, v in headers.items()}, body)


def _resource_path(kinds: registry.Registry, group: str, version: str,
                   rest: list[str]) -> tuple[Resource, str | None, str | None, str]:
    """(resource, namespace, name, subresource) of the path's parts after /api/v1 or /apis/GROUP/VERSION."""
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3 and kinds.lookup(group, version, rest[2]):
        namespace, rest = rest[1], rest[2:]
    res = kinds.lookup(group, version, rest[0])
    if res is None or len(rest) > 3 or (res.namespaced is False and namespace is not None):
        raise errors.no_route()
    return res, namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else ""


class Router:
    def __init__(self, app):
        self.app = app  # EmbeddedAPIServer

    @property
    def cluster(self):
        return self.app.cluster

    @property
    def kinds(self) -> registry.Registry:
        return self.app.cluster.registry

    def handle(self, req: Request) -> Response | WatchRequest:
        path = req.path.rstrip("/") or "/"
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        resource_path = (parts[0] == "api" and len(parts) >= 3) or (parts[0] == "apis" and len(parts) >= 4)
        if not resource_path:  # discovery, OpenAPI, version, health: non-resource URLs
            self._authorize(req, rbac.Attributes(req.method.lower(), path=req.path))
        if path == "/version":
            return Response(body=self.app.version_info())
        if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return Response(body=b"ok", content_type="text/plain; charset=utf-8")
        if path in ("/api", "/apis"):
            return self._discovery_root(req, legacy=path == "/api")
        if path == "/openapi/v2":
            return Response(body=openapi.v2_stub(), content_type="application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
        if path == "/openapi/v3":
            return Response(body=openapi.index_for(self.kinds))
        if path.startswith("/openapi/v3/"):
            return self._openapi(path[len("/openapi/v3/"):])
        if parts[0] == "api" and len(parts) >= 2:
            return self._group_version(req, "", parts[1], parts[2:])
        if parts[0] == "apis" and len(parts) >= 3:
            return self._group_version(req, parts[1], parts[2], parts[3:])
        if parts[0] == "apis" and len(parts) == 2:
            return self._group(parts[1])
        raise errors.no_route()

    # -- discovery --------------------------------------------------------------------------
    def _discovery_root(self, req: Request, legacy: bool) -> Response:
        accept = req.accept
        for media in accept.split(","):
            if "as=APIGroupDiscoveryList" in media:
                version = "v2" if "v=v2;" in media + ";" and "v2beta1" not in media else "v2beta1"
                return Response(body=self.kinds.aggregated(legacy, version),
                                content_type=f"application/json;g=apidiscovery.k8s.io;v={version};"
                                             "as=APIGroupDiscoveryList")
        return Response(body=registry.api_versions() if legacy else self.kinds.api_group_list())

    def _group(self, group: str) -> Response:
        found = self.kinds.api_group(group)
        if found is None:
            raise errors.no_route()
        return Response(body=found)

    def _openapi(self, rest: str) -> Response:
        parts = rest.split("/")
        if parts[0] == "api" and len(parts) == 2:
            group, version = "", parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            group, version = parts[1], parts[2]
        else:
            raise errors.no_route()
        if (group, version) not in self.kinds.group_versions():
            raise errors.no_route()
        body, etag = openapi.document_for(self.kinds, group, version)
        return Response(body=body, headers={"Cache-Control": "public, immutable", "Etag": f'"{etag}"'})

    # -- resources --------------------------------------------------------------------------
    def _group_version(self, req: Request, group: str, version: str, rest: list[str]):
        if (group, version) not in self.kinds.group_versions():
            raise errors.no_route()
        if not rest:
            if req.method != "GET":
                raise errors.method_not_allowed()
            return Response(body=self.kinds.api_resource_list(group, version))
        res, namespace, name, sub = _resource_path(self.kinds, group, version, rest)
        self._authorize(req, rbac.Attributes(
            rbac.request_verb(req.method, req.q("watch") in ("true", "1"), name or "", sub), res.plural, res.group,
            sub, name or "", namespace or ""))
        if sub and sub not in res.subresources:
            raise errors.no_route()
        special = self._special(req, res, namespace or "", name, sub)
        return special if special is not None else self._stored(req, res, namespace, name, sub)

    def _stored(self, req: Request, res: Resource, namespace: str | None, name: str | None, sub: str):
        """A request the object store serves: a collection's or one object's."""
        if res.plural in rbac.ROLE_PLURALS and req.method in ("POST", "PUT", "PATCH"):
            self._guard_role_write(req, res, namespace or "", name)
        if name is None:
            return self._collection(req, res, namespace)
        if res.namespaced and namespace is None:
            raise errors.no_route()
        return self._item(req, res, namespace or "", name, sub)

    def _special(self, req: Request, res: Resource, namespace: str, name: str | None, sub: str):
        """The answer of a path the object store does not serve (pod I/O, reviews, tokens); None for the rest."""
        if sub in ("exec", "log") and self.app.runtime is not None:
            return self._pod_io(req, namespace, name, sub)
        if sub in UNSUPPORTED_SUBRESOURCES:
            raise errors.not_supported(UNSUPPORTED_SUBRESOURCES[sub])
        if sub == "eviction":
            if req.method != "POST":
                raise errors.method_not_allowed()
            from .disruption import evict

            return Response(201, evict(self.cluster, namespace, name or "", self.app.decode_body(req, res),
                                       req.dry_run))
        if res.plural in registry.REVIEWS or sub == "token":
            if name is not None and not sub:
                raise errors.method_not_allowed()
            code, body = reviews.answer(self.app, req, res.plural, namespace, name or "")
            return Response(code, body)
        return None

    def _collection(self, req: Request, res: Resource, namespace: str | None):
        if req.method == "GET":
            if req.q("watch") in ("true", "1"):
                return WatchRequest(res, namespace, req.query, wants_table(req.accept),
                                    req.q("includeObject", "Metadata"))
            items, rv = self.cluster.list(res, namespace, req.q("labelSelector"), req.q("fieldSelector"))
            if wants_table(req.accept):
                return Response(body=columns.table_for(res, items, rv, req.q("includeObject", "Metadata")),
                                content_type=TABLE_TYPE)
            return Response(body={"kind": f"{res.kind}List", "apiVersion": res.api_version,
                                  "metadata": {"resourceVersion": rv}, "items": items})
        if req.method == "POST":
            if res.namespaced and namespace is None:
                raise errors.method_not_allowed()
            body = self.app.decode_body(req, res)
            obj = self.cluster.create(res, namespace or "", body, req.dry_run, req.strict, manager=req.manager)
            return Response(201, obj)
        if req.method == "DELETE":
            if res.namespaced and namespace is None:
                raise errors.method_not_allowed()
            items, rv = self.cluster.list(res, namespace, req.q("labelSelector"), req.q("fieldSelector"))
            for item in items:
                self.cluster.delete(res, namespace or "", item["metadata"]["name"], req.dry_run)
            return Response(body={"kind": f"{res.kind}List", "apiVersion": res.api_version,
                                  "metadata": {"resourceVersion": rv}, "items": items})
        raise errors.method_not_allowed()

    def _item(self, req: Request, res: Resource, namespace: str, name: str, sub: str) -> Response:
        if sub == "scale":
            return self._scale(req, res, namespace, name)
        if req.method == "GET":
            obj = self.cluster.get(res, namespace, name)
            if wants_table(req.accept) and not sub:
                return Response(body=columns.table_for(res, [obj], obj["metadata"].get("resourceVersion", ""),
                                                      req.q("includeObject", "Metadata")), content_type=TABLE_TYPE)
            return Response(body=obj)
        if req.method == "PUT":
            body = self.app.decode_body(req, res)
            return Response(body=self.cluster.update(res, namespace, name, body, sub, req.dry_run, req.strict,
                                                     manager=req.manager))
        if req.method == "PATCH":
            patch_type = self._patch_type(req)
            if patch_type == "apply":
                code, obj = self.cluster.apply(res, namespace, name, self.app.decode_body(req, res), req.manager,
                                               req.q("force") in ("true", "1"), req.dry_run, req.strict, sub)
                return Response(code, obj)
            body = self.app.decode_json(req.body)
            return Response(body=self.cluster.patch(res, namespace, name, patch_type, body, sub, req.dry_run,
                                                    req.strict, req.manager))
        if req.method == "DELETE" and not sub:
            options = self.app.decode_json(req.body) if req.body.strip() else {}
            dry_run = req.dry_run or "All" in ((options or {}).get("dryRun") or [])
            return Response(body=self.cluster.delete(res, namespace, name, dry_run))
        raise errors.method_not_allowed()

    def _pod_io(self, req: Request, namespace: str, name: str, sub: str):
        """`kubectl exec` (GET with a WebSocket upgrade; kubectl's SPDY fallback is a POST) and `kubectl logs`,
        checked here and served by the runtime that runs the pods (podio.py)."""
        from . import podio

        if req.method not in (("GET", "POST") if sub == "exec" else ("GET",)):
            raise errors.method_not_allowed()
        pod = self.cluster.get(registry.BY_PLURAL["pods"], namespace, name)
        if sub == "log":
            return podio.log_request(req, pod)
        request = podio.exec_request(req, pod)
        if not request.websocket_key:
            raise errors.bad_request("exec is served over WebSockets (v5.channel.k8s.io, kubectl's default since "
                                     "1.30); this embedded API server does not speak SPDY")
        return request

    def _patch_type(self, req: Request) -> str:
        media = req.content_type
        if media == "application/apply-patch+yaml":
            return "apply"
        if media not in PATCH_TYPES:
            raise errors.unsupported_media(media, list(PATCH_TYPES))
        return PATCH_TYPES[media]

    def _scale(self, req: Request, res: Resource, namespace: str, name: str) -> Response:
        if req.method == "GET":
            return Response(body=self.cluster.get_scale(res, namespace, name))
        if req.method == "PUT":
            return Response(body=self.cluster.set_scale(res, namespace, name, self.app.decode_json(req.body),
                                                        req.dry_run, req.manager))
        if req.method == "PATCH":
            from . import patch as patches

            current = self.cluster.get_scale(res, namespace, name)
            patch_type = self._patch_type(req)
            body = self.app.decode_json(req.body)
            if patch_type == "json":
                wanted = patches.json_patch(current, body)
            elif not isinstance(body, dict):
                raise errors.bad_request("patch body must be a JSON object")
            else:
                wanted = patches.merge_patch(current, body)
            return Response(body=self.cluster.set_scale(res, namespace, name, wanted, req.dry_run, req.manager))
        raise errors.method_not_allowed()

    def _authorize(self, req: Request, attrs: rbac.Attributes) -> None:
        if rbac.MASTERS not in req.user.groups:
            rbac.check(self.app.store, req.user, attrs)

    def _guard_role_write(self, req: Request, res: Resource, namespace: str, name: str | None) -> None:
        """A Role, ClusterRole or binding written by a user without all rights: what it would hold after the
        write must not grant more than the user holds (RBAC's escalation check)."""
        user = req.user
        if rbac.MASTERS in user.groups or user.scope is not None:
            return
        if req.method == "PATCH":
            from . import patch as patches

            kind = self._patch_type(req)
            if kind == "apply":  # what the applier sets, over what the object holds now (if it exists)
                body = self.app.decode_body(req, res)
                try:
                    current = self.cluster.get(res, namespace, name or "")
                except errors.ApiError:
                    current = {}
                wanted = patches.merge_patch(current, body) if isinstance(body, dict) else body
                return self._guard_checked(req, res, namespace, name, wanted)
            current = self.cluster.get(res, namespace, name or "")
            body = self.app.decode_json(req.body)
            if kind == "json":
                wanted = patches.json_patch(current, body)
            elif not isinstance(body, dict):
                raise errors.bad_request("patch body must be a JSON object")
            else:
                wanted = patches.merge_patch(current, body)  # lists of rules and subjects are replaced whole
        else:
            wanted = self.app.decode_body(req, res)
        self._guard_checked(req, res, namespace, name, wanted)

    def _guard_checked(self, req: Request, res: Resource, namespace: str, name: str | None, wanted) -> None:
        user = req.user
        if isinstance(wanted, dict):
            wanted = {**wanted, "metadata": {**(wanted.get("metadata") or {}), **({"name": name} if name else {})}}
        rbac.guard_write(self.app.store, user, res.plural, namespace, wanted)


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()
