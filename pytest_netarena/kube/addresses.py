"""Validation of the addresses and ports the data plane reads: pod status IPs, Service ClusterIPs, EndpointSlices.

Each is checked as the real apiserver checks it, with its words, so no value a client wrote reaches the node's
rules unless it is what it claims to be (the data plane parses them again, `cluster/firewall.py`).
"""

from __future__ import annotations

import ipaddress
import re

from .causes import Cause, bad_value, duplicate, required, too_many, unsupported

PROTOCOLS = ("SCTP", "TCP", "UDP")
#: the Service ClusterIP range (the allocator's `--service-cluster-ip-range`)
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
IP_MESSAGE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
#: an EndpointSlice's caps (pkg/apis/discovery/validation)
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS = 1000, 100, 20000
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def parse_ip(value) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a string holds, or None (not a string, or not one address in its plain form)."""
    if not isinstance(value, str):
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def convert_pod_ips(status: dict) -> None:
    """v1 status.podIP and podIPs as the apiserver converts them: podIP wins when both are set and differ (and
    so hostIP); either alone fills the other."""
    if not isinstance(status, dict):
        return
    for single, plural in (("podIP", "podIPs"), ("hostIP", "hostIPs")):
        one, many = status.get(single), status.get(plural)
        first = many[0].get("ip") if isinstance(many, list) and many and isinstance(many[0], dict) else None
        if one and (not many or first != one):
            status[plural] = [{"ip": one}]
        elif many and not one and first is not None:
            status[single] = first


def pod_status(obj: dict) -> list[Cause]:
    """status.podIPs and hostIPs: each a valid IP, at most one of each family, no duplicates."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return []
    causes: list[Cause] = []
    for plural in ("podIPs", "hostIPs"):
        entries = status.get(plural) or []
        if not isinstance(entries, list):
            causes.append(bad_value(f"status.{plural}", entries, "must be a list"))
            continue
        texts = [entry.get("ip") if isinstance(entry, dict) else entry for entry in entries]
        parsed = [parse_ip(text) for text in texts]
        causes += [bad_value(f"status.{plural}[{i}]", text, IP_MESSAGE)
                   for i, (text, ip) in enumerate(zip(texts, parsed)) if ip is None]
        if len(texts) > 1:
            families = [ip.version for ip in parsed if ip is not None]
            if len(texts) > 2 or len(set(families)) != len(families):
                causes.append(bad_value(f"status.{plural}", entries, "may specify no more than one IP for each IP "
                                                                     "family"))
            seen: set[str] = set()
            for i, text in enumerate(texts):
                if isinstance(text, str) and text in seen:
                    causes.append(duplicate(f"status.{plural}[{i}]", {"ip": text}))
                seen.add(str(text))
    return causes


def service_ips(obj: dict) -> list[Cause]:
    """spec.clusterIP(s): empty, "None" or a valid IP (the allocator then wants it inside the service range)."""
    spec = obj.get("spec") or {}
    listed = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    if not isinstance(listed, list):
        return [bad_value("spec.clusterIPs", listed, "must be a list")]
    causes: list[Cause] = []
    for i, text in enumerate(listed):
        if i == 0 and text == "None":
            continue
        if parse_ip(text) is None:
            causes.append(bad_value(f"spec.clusterIPs[{i}]", text, "must be empty, 'None', or a valid IP address"))
    return causes


def allocation_problem(wanted: str, used: set[str]) -> Cause | None:
    """Why the allocator refuses a ClusterIP a client asked for, as its 422 cause, or None."""
    address = parse_ip(wanted)
    shown = f'[]string{{"{wanted}"}}'
    if address is None or address not in SERVICE_CIDR:
        return ("spec.clusterIPs", "FieldValueInvalid",
                f"Invalid value: {shown}: failed to allocate IP {wanted}: the provided IP ({wanted}) is not in the "
                f"valid range. The range of valid IPs is {SERVICE_CIDR}")
    if wanted in used:
        return ("spec.clusterIPs", "FieldValueInvalid",
                f"Invalid value: {shown}: failed to allocate IP {wanted}: provided IP is already allocated")
    return None


def _endpoint_address(field: str, text, kind: str) -> list[Cause]:
    if kind == "FQDN":
        ok = isinstance(text, str) and len(text) <= 253 and "." in text and bool(_DNS_SUBDOMAIN.match(text))
        return [] if ok else [bad_value(field, text, "should be a domain with at least two segments separated by "
                                                     "dots")]
    address = parse_ip(text)
    if address is None or address.version != (4 if kind == "IPv4" else 6):
        return [bad_value(field, text, f"must be a valid {kind} address")]
    special = [(address.is_unspecified, f"may not be unspecified ({text})"),
               (address.is_loopback, "may not be in the loopback range (127.0.0.0/8, ::1/128)"),
               (address.is_link_local, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"),
               ((address.version == 4 and address in ipaddress.ip_network("224.0.0.0/24"))
                or (address.version == 6 and address in ipaddress.ip_network("ff02::/16")),
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")]
    return [bad_value(field, text, message) for hit, message in special if hit]


def endpoint_slice(obj: dict) -> list[Cause]:
    """addressType, every endpoint's addresses of that type, and the ports (names, protocols, numbers)."""
    kind = obj.get("addressType")
    if not kind:
        return [required("addressType")]
    if kind not in ADDRESS_TYPES:
        return [unsupported("addressType", kind, ADDRESS_TYPES)]
    causes: list[Cause] = []
    endpoints = obj.get("endpoints") or []
    if not isinstance(endpoints, list):
        return [bad_value("endpoints", endpoints, "must be a list")]
    if len(endpoints) > MAX_ENDPOINTS:
        causes.append(too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    for i, endpoint in enumerate(endpoints):
        field = f"endpoints[{i}].addresses"
        listed = endpoint.get("addresses") if isinstance(endpoint, dict) else None
        if not listed or not isinstance(listed, list):
            causes.append(required(field, "must contain at least 1 address"))
            continue
        if len(listed) > MAX_ADDRESSES:
            causes.append(too_many(field, len(listed), MAX_ADDRESSES))
        for j, text in enumerate(listed):
            causes += _endpoint_address(f"{field}[{j}]", text, kind)
    return causes + _slice_ports(obj.get("ports") or [])


def _slice_ports(ports) -> list[Cause]:
    if not isinstance(ports, list):
        return [bad_value("ports", ports, "must be a list")]
    causes: list[Cause] = [too_many("ports", len(ports), MAX_PORTS)] if len(ports) > MAX_PORTS else []
    names: set = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            causes.append(bad_value(f"ports[{i}]", port, "must be an object"))
            continue
        name = port.get("name") or ""
        if name and (not isinstance(name, str) or len(name) > 63 or not _DNS_LABEL.match(name)):
            causes.append(bad_value(f"ports[{i}].name", name, "a lowercase RFC 1123 label must consist of lower case "
                                    "alphanumeric characters or '-', and must start and end with an alphanumeric "
                                    "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                                    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"))
        if isinstance(name, str) and name in names:
            causes.append(duplicate(f"ports[{i}].name", name))
        names.add(str(name))
        protocol = port.get("protocol", "TCP")
        if protocol not in PROTOCOLS:
            causes.append(unsupported(f"ports[{i}].protocol", protocol, PROTOCOLS))
        number = port.get("port")
        if number is not None and (not isinstance(number, int) or isinstance(number, bool)
                                   or not 1 <= number <= 65535):
            causes.append(bad_value(f"ports[{i}].port", number, "must be between 1 and 65535, inclusive"))
    return causes
