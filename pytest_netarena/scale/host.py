"""What a worker's host offers (root, Mininet, bubblewrap, kubectl), as facts for the per-worker header line."""

from __future__ import annotations

import os
import platform
import shutil
import socket
from typing import Any


def host_facts(sandboxed: bool) -> dict[str, Any]:
    """Cheap probes only: which apps can really run is decided by building their environments."""
    facts: dict[str, Any] = {"host": socket.gethostname(), "python": platform.python_version(),
                             "root": os.geteuid() == 0, "mininet": bool(shutil.which("mnexec"))}
    try:
        from ..kube.kubectl import kubectl_path

        facts["kubectl"] = bool(kubectl_path())
    except Exception:  # not installed, or the kube package cannot be imported here
        facts["kubectl"] = False
    if sandboxed:
        from ..sandbox import support

        found = support()
        facts["bubblewrap"] = (found.mode or "") if found.ok else ""
        facts["bubblewrap_reason"] = found.reason
    else:
        facts["bubblewrap"] = "unsandboxed"
    return facts


def describe(worker: str, facts: dict[str, Any], refused: dict[str, str], runs: list[str], in_flight: int) -> str:
    """One header line per worker: `[gw0] netarena on HOST: root, Mininet, ...; runs k8s, toy; cannot run route here,
    its episodes go to other workers or skip (why)`."""
    parts = ["root" if facts.get("root") else "not root",
             "Mininet" if facts.get("mininet") else "no Mininet",
             "kubectl" if facts.get("kubectl") else "no kubectl"]
    boxes = facts.get("bubblewrap", "")
    parts.append({"": f"no sealed boxes ({facts.get('bubblewrap_reason') or 'bubblewrap missing'})",
                  "unsandboxed": "unsandboxed"}.get(boxes, f"sealed boxes ({boxes})"))
    line = f"[{worker}] netarena on {facts.get('host', '?')}: {', '.join(parts)}"
    if in_flight > 1:
        line += f"; {in_flight} episodes in flight"
    if runs:
        line += f"; runs {', '.join(runs)}"
    if refused:
        line += "; cannot run " + "; ".join(f"{app} here, its episodes go to other workers or skip ({why})"
                                            for app, why in sorted(refused.items()))
    return line
