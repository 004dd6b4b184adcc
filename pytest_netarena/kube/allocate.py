"""A Service's cluster IP and node ports, allocated on create as the real server's allocators do."""

from __future__ import annotations

import hashlib

from . import addresses, errors


def allocate(store, obj: dict) -> None:
    """Give a created Service its clusterIP(s) and node ports, in place."""
    spec = obj.setdefault("spec", {})
    if spec.get("type") == "ExternalName" or spec.get("clusterIP") == "None":
        if spec.get("clusterIP") == "None":
            spec["clusterIPs"] = ["None"]
        return
    used = {(s.get("spec") or {}).get("clusterIP") for s in store.list("services")}
    if spec.get("clusterIP"):  # asked for: the allocator's checks, with its words
        problem = addresses.allocation_problem(spec["clusterIP"], used)
        if problem is not None:
            raise errors.invalid("Service", "", obj["metadata"]["name"], [problem])
    else:
        seed = int.from_bytes(hashlib.sha256(
            f"{obj['metadata']['namespace']}/{obj['metadata']['name']}".encode()).digest()[:4], "big")
        # 10.96.0.0/16 (inside the usual 10.96.0.0/12); .0.1 is the kubernetes service.
        for probe in range(65536):
            offset = (seed + probe) % 65534 + 2
            ip = f"10.96.{offset // 256}.{offset % 256}"
            if ip not in used and offset % 256 not in (0, 255):
                spec["clusterIP"] = ip
                break
    spec["clusterIPs"] = [spec["clusterIP"]]
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        used_ports = {p.get("nodePort") for s in store.list("services")
                      for p in (s.get("spec") or {}).get("ports") or []}
        next_port = 30000
        for port in spec.get("ports") or []:
            if not port.get("nodePort"):
                while next_port in used_ports:
                    next_port += 1
                port["nodePort"] = next_port
                used_ports.add(next_port)
