"""Decoding `application/vnd.kubernetes.protobuf` request bodies (what `kubectl create <kind>` sends).

A schema-less wire-format reader plus field-number tables for the few kinds those commands create.
The field numbers are those of the published k8s.io/api generated.proto files.
"""

from __future__ import annotations

import base64
import datetime as dt

from . import errors

MAGIC = b"k8s\x00"

S, INT, B, BYTES, TIME, INTSTR, QTY = "string", "int", "bool", "bytes", "time", "intstr", "quantity"
MAP, MAP_BYTES, MAP_QTY = "map", "map-bytes", "map-quantity"


def _f(name: str, kind: str, repeated: bool = False, pointer: bool = False) -> tuple:
    return name, kind, repeated, pointer


# message -> {field number: (json name, type, repeated, pointer)}
MESSAGES: dict[str, dict[int, tuple]] = {
    "Unknown": {1: _f("typeMeta", "TypeMeta"), 2: _f("raw", BYTES), 3: _f("contentEncoding", S),
                4: _f("contentType", S)},
    "TypeMeta": {1: _f("apiVersion", S), 2: _f("kind", S)},
    "ObjectMeta": {1: _f("name", S), 2: _f("generateName", S), 3: _f("namespace", S), 5: _f("uid", S),
                   6: _f("resourceVersion", S), 7: _f("generation", INT), 8: _f("creationTimestamp", TIME),
                   9: _f("deletionTimestamp", TIME), 10: _f("deletionGracePeriodSeconds", INT, pointer=True),
                   11: _f("labels", MAP), 12: _f("annotations", MAP),
                   13: _f("ownerReferences", "OwnerReference", True), 14: _f("finalizers", S, True)},
    "OwnerReference": {1: _f("kind", S), 3: _f("name", S), 4: _f("uid", S), 5: _f("apiVersion", S),
                       6: _f("controller", B, pointer=True), 7: _f("blockOwnerDeletion", B, pointer=True)},
    "Namespace": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "NamespaceSpec"),
                  3: _f("status", "NamespaceStatus")},
    "NamespaceSpec": {1: _f("finalizers", S, True)},
    "NamespaceStatus": {1: _f("phase", S)},
    "ConfigMap": {1: _f("metadata", "ObjectMeta"), 2: _f("data", MAP), 3: _f("binaryData", MAP_BYTES),
                  4: _f("immutable", B, pointer=True)},
    "Secret": {1: _f("metadata", "ObjectMeta"), 2: _f("data", MAP_BYTES), 3: _f("type", S),
               4: _f("stringData", MAP), 5: _f("immutable", B, pointer=True)},
    "Service": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "ServiceSpec"), 3: _f("status", "Empty")},
    "ServiceSpec": {1: _f("ports", "ServicePort", True), 2: _f("selector", MAP), 3: _f("clusterIP", S),
                    4: _f("type", S), 5: _f("externalIPs", S, True), 7: _f("sessionAffinity", S),
                    8: _f("loadBalancerIP", S), 9: _f("loadBalancerSourceRanges", S, True),
                    10: _f("externalName", S), 11: _f("externalTrafficPolicy", S),
                    12: _f("healthCheckNodePort", INT), 13: _f("publishNotReadyAddresses", B),
                    17: _f("ipFamilyPolicy", S), 18: _f("clusterIPs", S, True), 19: _f("ipFamilies", S, True),
                    20: _f("allocateLoadBalancerNodePorts", B, pointer=True), 21: _f("loadBalancerClass", S),
                    22: _f("internalTrafficPolicy", S), 23: _f("trafficDistribution", S)},
    "ServicePort": {1: _f("name", S), 2: _f("protocol", S), 3: _f("port", INT), 4: _f("targetPort", INTSTR),
                    5: _f("nodePort", INT), 6: _f("appProtocol", S)},
    "Deployment": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "DeploymentSpec"), 3: _f("status", "Empty")},
    "DeploymentSpec": {1: _f("replicas", INT, pointer=True), 2: _f("selector", "LabelSelector"),
                       3: _f("template", "PodTemplateSpec"), 4: _f("strategy", "DeploymentStrategy"),
                       5: _f("minReadySeconds", INT), 6: _f("revisionHistoryLimit", INT, pointer=True),
                       7: _f("paused", B), 9: _f("progressDeadlineSeconds", INT, pointer=True)},
    "DeploymentStrategy": {1: _f("type", S), 2: _f("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: _f("maxUnavailable", INTSTR), 2: _f("maxSurge", INTSTR)},
    "LabelSelector": {1: _f("matchLabels", MAP), 2: _f("matchExpressions", "LabelSelectorRequirement", True)},
    "LabelSelectorRequirement": {1: _f("key", S), 2: _f("operator", S), 3: _f("values", S, True)},
    "PodTemplateSpec": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "PodSpec")},
    "PodSpec": {2: _f("containers", "Container", True), 3: _f("restartPolicy", S),
                4: _f("terminationGracePeriodSeconds", INT, pointer=True), 6: _f("dnsPolicy", S),
                7: _f("nodeSelector", MAP), 8: _f("serviceAccountName", S), 9: _f("serviceAccount", S),
                10: _f("nodeName", S), 11: _f("hostNetwork", B), 15: _f("imagePullSecrets", "LocalObjectReference", True),
                16: _f("hostname", S), 17: _f("subdomain", S), 19: _f("schedulerName", S),
                20: _f("initContainers", "Container", True),
                21: _f("automountServiceAccountToken", B, pointer=True), 24: _f("priorityClassName", S)},
    "LocalObjectReference": {1: _f("name", S)},
    "Container": {1: _f("name", S), 2: _f("image", S), 3: _f("command", S, True), 4: _f("args", S, True),
                  5: _f("workingDir", S), 6: _f("ports", "ContainerPort", True), 7: _f("env", "EnvVar", True),
                  8: _f("resources", "ResourceRequirements"), 13: _f("terminationMessagePath", S),
                  14: _f("imagePullPolicy", S), 16: _f("stdin", B), 17: _f("stdinOnce", B), 18: _f("tty", B),
                  20: _f("terminationMessagePolicy", S)},
    "ContainerPort": {1: _f("name", S), 2: _f("hostPort", INT), 3: _f("containerPort", INT), 4: _f("protocol", S),
                      5: _f("hostIP", S)},
    "EnvVar": {1: _f("name", S), 2: _f("value", S)},
    "ResourceRequirements": {1: _f("limits", MAP_QTY), 2: _f("requests", MAP_QTY)},
    "SelfSubjectAccessReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: _f("resourceAttributes", "ResourceAttributes"),
                                    2: _f("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: _f("namespace", S), 2: _f("verb", S), 3: _f("group", S), 4: _f("version", S),
                           5: _f("resource", S), 6: _f("subresource", S), 7: _f("name", S)},
    "NonResourceAttributes": {1: _f("path", S), 2: _f("verb", S)},
    "SelfSubjectRulesReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: _f("namespace", S)},
    "SelfSubjectReview": {1: _f("metadata", "ObjectMeta")},
    "TokenRequest": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {1: _f("audiences", S, True), 3: _f("boundObjectRef", "BoundObjectReference"),
                         4: _f("expirationSeconds", INT, pointer=True)},
    "BoundObjectReference": {1: _f("kind", S), 2: _f("apiVersion", S), 3: _f("name", S), 4: _f("uid", S)},
    "ServiceAccount": {1: _f("metadata", "ObjectMeta"), 2: _f("secrets", "ObjectReference", True),
                       3: _f("imagePullSecrets", "LocalObjectReference", True),
                       4: _f("automountServiceAccountToken", B, pointer=True)},
    "ObjectReference": {1: _f("kind", S), 2: _f("namespace", S), 3: _f("name", S), 4: _f("uid", S),
                        5: _f("apiVersion", S), 6: _f("resourceVersion", S), 7: _f("fieldPath", S)},
    "Role": {1: _f("metadata", "ObjectMeta"), 2: _f("rules", "PolicyRule", True)},
    "ClusterRole": {1: _f("metadata", "ObjectMeta"), 2: _f("rules", "PolicyRule", True),
                    3: _f("aggregationRule", "AggregationRule")},
    "AggregationRule": {1: _f("clusterRoleSelectors", "LabelSelector", True)},
    "PolicyRule": {1: _f("verbs", S, True), 2: _f("apiGroups", S, True), 3: _f("resources", S, True),
                   4: _f("resourceNames", S, True), 5: _f("nonResourceURLs", S, True)},
    "RoleBinding": {1: _f("metadata", "ObjectMeta"), 2: _f("subjects", "Subject", True), 3: _f("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: _f("metadata", "ObjectMeta"), 2: _f("subjects", "Subject", True),
                           3: _f("roleRef", "RoleRef")},
    "Subject": {1: _f("kind", S), 2: _f("apiGroup", S), 3: _f("name", S), 4: _f("namespace", S)},
    "RoleRef": {1: _f("apiGroup", S), 2: _f("kind", S), 3: _f("name", S)},
    "Empty": {},
}

TOP_LEVEL = {"Namespace", "ConfigMap", "Secret", "Service", "Deployment", "SelfSubjectAccessReview",
             "SelfSubjectRulesReview", "SelfSubjectReview", "TokenRequest", "ServiceAccount", "Role", "ClusterRole",
             "RoleBinding", "ClusterRoleBinding"}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def fields(data: bytes) -> list[tuple[int, int, object]]:
    """Schema-less wire decoding: (field number, wire type, int or bytes) in order."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, value):
    if kind == S:
        return value.decode("utf-8")
    if kind == INT:
        return _signed(value)
    if kind == B:
        return bool(value)
    if kind == BYTES:
        return bytes(value)
    if kind == TIME:
        parts = {n: v for n, _, v in fields(value)}
        seconds = _signed(parts.get(1, 0))
        if seconds == 0:
            return None
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == INTSTR:
        parts = {n: v for n, _, v in fields(value)}
        if parts.get(1, 0) == 1:
            return parts.get(3, b"").decode()
        return _signed(parts.get(2, 0))
    if kind == QTY:
        parts = {n: v for n, _, v in fields(value)}
        return parts.get(1, b"").decode()
    raise ValueError(kind)


def _map_entry(kind: str, value: bytes) -> tuple[str, object]:
    parts = {n: v for n, _, v in fields(value)}
    key = parts.get(1, b"").decode()
    raw = parts.get(2, b"")
    if kind == MAP_BYTES:
        return key, base64.b64encode(raw).decode()
    if kind == MAP_QTY:
        return key, _scalar(QTY, raw)
    return key, raw.decode()


def message(name: str, data: bytes) -> dict:
    table = MESSAGES[name]
    out: dict = {}
    pointers = set()
    for number, _, value in fields(data):
        spec = table.get(number)
        if spec is None:
            continue  # a field this server does not model
        key, kind, repeated, pointer = spec
        if pointer:
            pointers.add(key)
        if kind in (MAP, MAP_BYTES, MAP_QTY):
            k, v = _map_entry(kind, value)
            out.setdefault(key, {})[k] = v
            continue
        if kind in MESSAGES:
            item = message(kind, value)
        elif repeated and kind in (INT, B) and isinstance(value, bytes):  # packed
            item = None
            pos, packed = 0, []
            while pos < len(value):
                v, pos = _varint(value, pos)
                packed.append(_scalar(kind, v))
            out.setdefault(key, []).extend(packed)
            continue
        else:
            item = _scalar(kind, value)
        if repeated:
            out.setdefault(key, []).append(item)
        else:
            out[key] = item
    # gogo marshals non-pointer zero values; JSON would have omitted them.
    return {k: v for k, v in out.items() if k in pointers or v not in ("", 0, False, None, {}, [])}


def decode_object(raw: bytes) -> dict:
    if not raw.startswith(MAGIC):
        raise errors.bad_request("the protobuf body does not start with the Kubernetes magic number")
    try:
        envelope = message("Unknown", raw[len(MAGIC):])
        type_meta = envelope.get("typeMeta") or {}
        kind = type_meta.get("kind", "")
        if kind not in TOP_LEVEL:
            raise errors.ApiError(
                415, "UnsupportedMediaType",
                f"protobuf bodies of kind {kind or '(none)'} are not supported by this embedded Kubernetes API "
                "server; send JSON or YAML instead (for example `kubectl apply -f` or `kubectl create -f`)")
        obj = message(kind, envelope.get("raw", b""))
    except (ValueError, UnicodeDecodeError, KeyError) as error:
        raise errors.bad_request(f"unable to decode the protobuf body: {error}") from None
    obj.pop("status", None)
    return {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind, **obj}
