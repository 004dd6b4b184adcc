"""Real-cluster stand-ins and probes: agnhost `porter` servers, one batched `agnhost connect` run per source pod."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from ..workloads.model import AppSpec, Workload

AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"
PROBE_TIMEOUT_S = 1
RESULT_LINE = re.compile(r"^netarena-probe (\S+) (ok|fail)$")


def stand_in_manifests(app: AppSpec, image: str = AGNHOST_IMAGE) -> list[dict[str, Any]]:
    """The app's Deployments with agnhost containers listening on the same container ports, plus its Services."""
    manifests = []
    for doc in app.manifests:
        if doc.get("kind") != "Deployment":
            manifests.append(doc)
            continue
        workload = app.workload(doc["metadata"]["name"])
        manifests.append({**doc, "spec": {**doc["spec"], "template": {
            "metadata": doc["spec"]["template"]["metadata"],
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [stand_in_container(workload, image)]},
        }}})
    return manifests


def stand_in_container(workload: Workload, image: str = AGNHOST_IMAGE) -> dict[str, Any]:
    """agnhost porter serving every container port (TCP/UDP/SCTP); a client-only workload just pauses."""
    container: dict[str, Any] = {"name": workload.container, "image": image, "imagePullPolicy": "IfNotPresent"}
    if not workload.container_ports:
        container["args"] = ["pause"]
        return container
    prefixes = {"TCP": "SERVE_PORT_", "UDP": "SERVE_UDP_PORT_", "SCTP": "SERVE_SCTP_PORT_"}
    container["args"] = ["porter"]
    container["env"] = [{"name": f"{prefixes[protocol]}{port}", "value": "netarena"}
                        for port, protocol in workload.container_ports]
    container["ports"] = [{"containerPort": port, "protocol": protocol} for port, protocol in workload.container_ports]
    for entry in container["ports"]:  # keep the names a Service's named targetPort resolves through
        name = workload.port_name(entry["containerPort"], entry["protocol"])
        if name:
            entry["name"] = name
    tcp = [port for port, protocol in workload.container_ports if protocol == "TCP"]
    if tcp:
        container["readinessProbe"] = {"tcpSocket": {"port": tcp[0]}, "periodSeconds": 1}
    return container


def probe_script(targets: Sequence[tuple[str, int, str]], timeout_s: int = PROBE_TIMEOUT_S) -> str:
    """A POSIX sh script that connects to every (ip, port, protocol) in parallel and prints one line each."""
    lines = []
    for ip, port, protocol in targets:
        address = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
        label = f"{address}/{protocol}"
        connect = (f"/agnhost connect {shlex.quote(address)} --timeout={timeout_s}s "
                   f"--protocol={protocol.lower()} >/dev/null 2>&1")
        lines.append(f"( if {connect}; then echo 'netarena-probe {label} ok'; "
                     f"else echo 'netarena-probe {label} fail'; fi ) &")
    lines.append("wait")
    return "\n".join(lines)


def probe_argv(pod: str, container: str, targets: Sequence[tuple[str, int, str]],
               timeout_s: int = PROBE_TIMEOUT_S) -> list[str]:
    """kubectl arguments (after the binary and connection flags) running one source pod's probes."""
    return ["exec", pod, "-c", container, "--", "sh", "-c", probe_script(targets, timeout_s)]


def parse_probe_output(output: str, targets: Iterable[tuple[str, int, str]]) -> dict[tuple[str, int, str], bool]:
    """Probe verdicts; a target with no result line (the exec failed) counts as unreachable."""
    seen: dict[str, bool] = {}
    for line in output.splitlines():
        match = RESULT_LINE.match(line.strip())
        if match:
            seen[match.group(1)] = match.group(2) == "ok"
    result = {}
    for ip, port, protocol in targets:
        address = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
        result[(ip, port, protocol)] = seen.get(f"{address}/{protocol}", False)
    return result
