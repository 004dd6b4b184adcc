"""What a pod's box holds: its file system, busybox's applets, its network namespace, its uid and limits.

A pod is code the agent controls (it can edit a Deployment's command), so its containers run in the
same sealed boxes as agent actions (`sandbox.BoxSpec`): a private uid per pod (its process limit is
the pod's), no capabilities, `no_new_privs`, its own PID namespace, no host file but the read-only
programs and libraries, and the pod's network namespace as its only network. Each container has a
root folder of its own on the cluster's size-capped scratch space, shared with `kubectl exec`
sessions in that container, so what the container wrote is there to read.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..sandbox import BoxSpec, Limits, Mount, NetNamespace, views
from .images import Image

#: uids of pods: far from real users and from the agent boxes' range (sandbox.box.UID_BASE)
POD_UID_BASE = 1_700_000_000
#: the group every pod's processes run as: a file one pod leaves in a volume another pod mounts (a claim, a hostPath)
#: stays writable to it, as it is between containers that all run as root; no host file has this group
POD_GID = 1_699_999_999
_pod_numbers = itertools.count()
#: per-container bounds (the pod's cgroup bounds them together)
CONTAINER_LIMITS = Limits(wall_s=365 * 86400.0, cpu_s=3600, memory_bytes=512 << 20, processes=128,
                          file_bytes=8 << 20, open_files=256, output_bytes=1 << 20, tmp_bytes=16 << 20)
#: a Go program (kubectl) reserves more address space than it uses: images holding one get this much (the pod's
#: cgroup still bounds what it really uses)
CLIENT_ADDRESS_SPACE = 2 << 30
#: an exec session's bounds: wall clock and bytes of output per stream
EXEC_WALL_S = 60.0
EXEC_OUTPUT_BYTES = 4 << 20
#: entries of a container's root folder that belong to root: mount points and links the box needs
SKELETON_DIRS = ("usr", "usr/bin", "usr/lib", "etc", "proc", "dev", "run", "sys")
SKELETON_LINKS = {"bin": "usr/bin", "sbin": "usr/bin", "lib": "usr/lib", "usr/sbin": "bin"}
#: entries the container's user may add to (a container's root could): root's own, sticky, so that a mount point
#: made in one (/var/run/secrets/...) is root's and cannot be swapped for a link (sandbox/mounts.py)
OWN_DIRS = ("root", "home", "var", "opt", "srv", "mnt")


def pod_uid() -> int:
    """A uid for a new pod (its containers and exec sessions share it, and so its process limit)."""
    return POD_UID_BASE + (os.getpid() % 100_000) * 1000 + next(_pod_numbers) % 1000


@functools.lru_cache(maxsize=1)
def busybox() -> str | None:
    return views.find_program("busybox")


@functools.lru_cache(maxsize=1)
def applets() -> tuple[str, ...]:
    """The applets of the host's busybox (Debian's package), by name."""
    binary = busybox()
    if binary is None:
        return ()
    listing = subprocess.run([binary, "--list"], capture_output=True, text=True, timeout=20, check=False).stdout
    return tuple(name for name in listing.split() if name and "/" not in name)


#: Debian's busybox 1.35 crashes on `wget -T SECONDS` (a null write while parsing the option); this wrapper, run
#: by busybox's sh, takes the option out and bounds the download with busybox's timeout, saying what wget says.
#: The bound is SIGKILL: SIGINT is ignored wherever the harness was started as a background job (a shell without
#: job control ignores it there, and every process after inherits that), and wget then waited for TCP's own
#: give-up, minutes, instead of the seconds asked for
WGET_WRAPPER = """#!/bin/sh
seconds=
wanted=
for argument do
  shift
  if [ -n "$wanted" ]; then seconds=$argument; wanted=; continue; fi
  case $argument in
    -T) wanted=1; continue ;;
    -T[0-9]*) seconds=${argument#-T}; continue ;;
  esac
  set -- "$@" "$argument"
done
[ -z "$seconds" ] && exec busybox wget "$@"
busybox timeout -s KILL "$seconds" busybox wget "$@"
status=$?
if [ "$status" -eq 137 ]; then echo "wget: download timed out" >&2; exit 1; fi
exit "$status"
"""


#: applets of the busybox image that Debian's build leaves out, as scripts run by busybox's sh
SHIMS = {
    "printenv": r"""#!/bin/sh
[ $# -eq 0 ] && exec busybox env
status=0
for name do
  case $name in ''|*[!A-Za-z0-9_]*) status=1; continue ;; esac
  if eval "[ -n \"\${$name+set}\" ]"; then eval "printf '%s\n' \"\$$name\""; else status=1; fi
done
exit $status
""",
    # busybox 1.36's nc has -z (connect, then close), -v and -n: Debian's small nc has none of them; they are taken out
    # of the arguments (alone or in a cluster such as -zvw2 or -lvnp), and `-e true` connects and closes at once
    "nc": r"""#!/bin/sh
scan=
verbose=
seconds=
wanted=
for argument do
  shift
  if [ "$wanted" = w ]; then seconds=$argument; wanted=; continue; fi
  case $argument in
    -|--*) set -- "$@" "$argument"; continue ;;
    -*)
      flags=${argument#-}
      case $flags in *w*)
        after=${flags#*w}
        flags=${flags%%w*}
        if [ -n "$after" ]; then seconds=$after; else wanted=w; fi ;;
      esac
      case $flags in *z*) scan=1 ;; esac
      case $flags in *v*) verbose=1 ;; esac
      rest=$(printf '%s' "$flags" | tr -d 'zvn')
      [ -n "$rest" ] && set -- "$@" "-$rest"
      continue ;;
  esac
  set -- "$@" "$argument"
done
if [ -z "$scan" ]; then exec busybox nc ${seconds:+-w "$seconds"} "$@"; fi
busybox nc -w "${seconds:-5}" "$@" -e true
status=$?
if [ "$status" -eq 0 ] && [ -n "$verbose" ] && [ "$#" -ge 2 ]; then
  eval "host=\${$(($# - 1))} port=\${$#}"
  echo "$host ($port) open" >&2
fi
exit "$status"
""",
    "nohup": """#!/bin/sh
trap '' HUP
exec "$@"
""",
}


def _script(name: str, text: str) -> str:
    folder = views.cache_root() / "scripts"
    folder.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = folder / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    if not path.exists():
        staging = path.with_name(path.name + f".{os.getpid()}")
        staging.write_text(text)
        staging.chmod(0o755)
        staging.replace(path)
    return str(path)


@functools.lru_cache(maxsize=1)
def _wget_wrapper() -> str:
    return _script("wget", WGET_WRAPPER)


@functools.lru_cache(maxsize=1)
def _shims() -> dict[str, str]:
    return {name: _script(name, text) for name, text in SHIMS.items()}


def programs(clients: tuple[str, ...] = ()) -> dict[str, str]:
    """/usr/bin of a busybox container: every applet (all one file), wget and the shims as scripts, and the API
    clients its image holds (kubectl, curl: images.clients)."""
    binary = busybox()
    if not binary:
        return {}
    found = {**dict.fromkeys((*applets(), "busybox"), binary), **_shims(), "wget": _wget_wrapper()}
    for name in clients:
        path = _client(name)
        if path:
            found[name] = path
    return found


@functools.cache
def _client(name: str) -> str | None:
    if name == "kubectl":
        from ..kube.kubectl import kubectl_path

        try:
            return kubectl_path()
        except (OSError, RuntimeError):
            return None
    return views.find_program(name)


def make_root(folder: Path) -> str:
    """A container's root folder: root-owned mount points and links in a sticky folder anyone may add to."""
    folder.mkdir(parents=True)
    for name in SKELETON_DIRS:
        (folder / name).mkdir(mode=0o755, exist_ok=True)
    for name, target in SKELETON_LINKS.items():
        os.symlink(target, folder / name)
    if os.path.isdir("/usr/lib64"):
        (folder / "usr" / "lib64").mkdir(mode=0o755)
        os.symlink("usr/lib64", folder / "lib64")
    (folder / "tmp").mkdir()
    os.chmod(folder / "tmp", 0o1777)
    for name in OWN_DIRS:
        (folder / name).mkdir()
        os.chmod(folder / name, 0o1777)
    os.chmod(folder, 0o1777)  # sticky: new entries are the container's, the skeleton stays root's
    return str(folder)


def hosts_file(hostname: str, address: str, fqdn: str = "") -> bytes:
    names = f"{fqdn}\t{hostname}" if fqdn else hostname
    return (f"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            f"{address}\t{names}\n").encode()


def resolv_conf(namespace: str, nameserver: str) -> bytes:
    return (f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\nnameserver {nameserver}\n"
            "options ndots:5\n").encode()


def cgroup_files(container: Mapping) -> dict[str, bytes]:
    """The container's own cgroup (v2) as it reads it at /sys/fs/cgroup: cpu.max and memory.max from its limits,
    cpu.weight from its request (what an app that sizes itself, or checks its throttling, looks at)."""
    from ..kube.quantity import parse

    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    cpu, memory = parse(limits.get("cpu")), parse(limits.get("memory"))
    shares = max(2, int(parse(requests.get("cpu") or limits.get("cpu")) * 1024)) if (
        requests.get("cpu") or limits.get("cpu")) else 2
    weight = 1 + ((shares - 2) * 9999) // 262142  # the kubelet's shares-to-weight conversion
    return {"/sys/fs/cgroup/cpu.max": (f"{max(1000, int(cpu * 100000))} 100000" if cpu else "max 100000").encode() + b"\n",
            "/sys/fs/cgroup/memory.max": (str(int(memory)) if memory else "max").encode() + b"\n",
            "/sys/fs/cgroup/cpu.weight": f"{weight}\n".encode()}


def spec(*, network: NetNamespace, root: str, uid: int, hostname: str, files: Mapping[str, bytes],
         env: Mapping[str, str], limits: Limits = CONTAINER_LIMITS, mounts: tuple[Mount, ...] = (),
         image: Image | None = None) -> BoxSpec:
    # NET_RAW, as a container runtime gives by default (ping, traceroute): raw packets stay in the pod's own
    # namespace, and the node drops any whose source is not the pod's address (firewall.py)
    if image is not None and "kubectl" in image.clients:
        limits = dataclasses.replace(limits, memory_bytes=max(limits.memory_bytes, CLIENT_ADDRESS_SPACE))
    return BoxSpec(programs=programs(image.clients if image is not None else ()), files=dict(files), network=network,
                   env=dict(env), limits=limits, hostname=hostname[:63], uid=uid, gid=POD_GID, root=root,
                   caps=("NET_RAW",), mounts=mounts)
