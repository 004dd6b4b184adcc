"""What this machine can run: root, Mininet, Linux bridges, and kernel features some faults need."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache


@cache
def netem_missing() -> str | None:
    """Why netem faults cannot run here (None when they can), probed in a throwaway namespace."""
    if os.geteuid() != 0:
        return "cannot probe for netem without root"
    if shutil.which("unshare") is None or shutil.which("tc") is None:
        return "unshare or tc is missing"
    result = subprocess.run(
        ["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    if result.returncode != 0:
        reason = (result.stderr or result.stdout).strip().splitlines()
        return f"the kernel has no netem qdisc ({reason[-1] if reason else 'tc failed'})"
    return None


def backend_missing() -> str | None:
    """Why Mininet networks cannot be built here (None when they can)."""
    if os.geteuid() != 0:
        return "the route app needs root to build Mininet networks (network namespaces, veth, bridges)"
    # the switches are Linux bridges made with iproute2 (network/build.py): bridge-utils' brctl is not needed
    for program, package in (("mnexec", "mininet"), ("ip", "iproute2"), ("iptables", "iptables"),
                             ("ifconfig", "net-tools")):
        if shutil.which(program) is None:
            return (f"{program} is missing: apt-get install -y --no-install-recommends "
                    f"mininet iproute2 iptables iputils-ping ({package})")
    try:
        from .mininet_import import import_mininet

        import_mininet()
    except ImportError as error:
        return str(error)
    return None
