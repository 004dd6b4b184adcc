"""What a pod's box holds: its file system, busybox's applets, its network namespace, its uid and limits.

A pod is code the agent controls (it can edit a Deployment's command), so its containers run in the
same sealed boxes as agent actions (`sandbox.BoxSpec`): a private uid per pod (its process limit is
the pod's), no capabilities, `no_new_privs`, its own PID namespace, no host file but the read-only
programs and libraries, and the pod's network namespace as its only network. Each container has a
root folder of its own on the cluster's size-capped scratch space, shared with `kubectl exec`
sessions in that container, so what the container wrote is there to read.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..sandbox import BoxSpec, Limits, NetNamespace, views

#: uids of pods: far from real users and from the agent boxes' range (sandbox.box.UID_BASE)
POD_UID_BASE = 1_700_000_000
_pod_numbers = itertools.count()
#: per-container bounds (the pod's cgroup bounds them together)
CONTAINER_LIMITS = Limits(wall_s=365 * 86400.0, cpu_s=3600, memory_bytes=512 << 20, processes=128,
                          file_bytes=8 << 20, open_files=256, output_bytes=1 << 20, tmp_bytes=16 << 20)
#: an exec session's bounds: wall clock and bytes of output per stream
EXEC_WALL_S = 60.0
EXEC_OUTPUT_BYTES = 4 << 20
#: entries of a container's root folder that belong to root: mount points and links the box needs
SKELETON_DIRS = ("usr", "usr/bin", "usr/lib", "etc", "proc", "dev", "run", "sys")
SKELETON_LINKS = {"bin": "usr/bin", "sbin": "usr/bin", "lib": "usr/lib", "usr/sbin": "bin"}
#: entries the container's own user owns (as a container's root would)
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


#: Debian's busybox builds nc without the netcat options everyone types (`nc -z -v -w 2 HOST PORT`, `nc -lvnp
#: PORT`), which busybox's own default build and the busybox image have: this wrapper, run by busybox's sh, takes
#: -z, -v and -n out of the arguments (alone or in a cluster such as -zvw2); with -z it connects and closes at once
#: (`-e true`: the exit status says whether the port answered), with -v it says so as netcat does.
NC_WRAPPER = """#!/bin/sh
scan=
verbose=
for argument do
  shift
  case $argument in
    -[!-]*)
      rest=$(printf '%s' "${argument#-}" | tr -d 'zvn')
      case ${argument#-} in *z*) scan=1 ;; esac
      case ${argument#-} in *v*) verbose=1 ;; esac
      [ -n "$rest" ] && set -- "$@" "-$rest"
      continue ;;
  esac
  set -- "$@" "$argument"
done
[ -z "$scan" ] && exec busybox nc "$@"
busybox nc "$@" -e true
status=$?
if [ "$status" -eq 0 ] && [ -n "$verbose" ] && [ "$#" -ge 2 ]; then
  eval "host=\\${$(($# - 1))} port=\\${$#}"
  echo "$host ($port) open" >&2
fi
exit "$status"
"""


def _script(name: str, text: str) -> str:
    """A wrapper script in the cache, named by its content (written once, atomically)."""
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
def _nc_wrapper() -> str:
    return _script("nc", NC_WRAPPER)


def programs() -> dict[str, str]:
    """/usr/bin of a busybox container: every applet (all one file), wget and nc through their wrappers."""
    binary = busybox()
    if not binary:
        return {}
    return {**dict.fromkeys((*applets(), "busybox"), binary), "wget": _wget_wrapper(), "nc": _nc_wrapper()}


def make_root(folder: Path, uid: int) -> str:
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
        (folder / name).mkdir(mode=0o755)
        os.chown(folder / name, uid, uid)
    os.chmod(folder, 0o1777)  # sticky: new entries are the container's, the skeleton stays root's
    return str(folder)


def hosts_file(pod_name: str, address: str) -> bytes:
    return (f"# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            f"{address}\t{pod_name}\n").encode()


def resolv_conf(namespace: str, nameserver: str) -> bytes:
    return (f"search {namespace}.svc.cluster.local svc.cluster.local cluster.local\nnameserver {nameserver}\n"
            "options ndots:5\n").encode()


def container_env(container: Mapping, pod_name: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The container's environment: the kubelet's service variables, then its own `env` (plain values only)."""
    env = {"HOSTNAME": pod_name, "HOME": "/root", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **extra}
    for variable in container.get("env") or ():
        name = variable.get("name")
        if isinstance(name, str) and name:
            value = variable.get("value")
            env[name] = value if isinstance(value, str) else ""
    return env


def spec(*, network: NetNamespace, root: str, uid: int, hostname: str, files: Mapping[str, bytes],
         env: Mapping[str, str], limits: Limits = CONTAINER_LIMITS) -> BoxSpec:
    # NET_RAW, as a container runtime gives by default (ping, traceroute): raw packets stay in the pod's own
    # namespace, and the node drops any whose source is not the pod's address (firewall.py)
    return BoxSpec(programs=programs(), files=dict(files), network=network, env=dict(env), limits=limits,
                   hostname=hostname[:63], uid=uid, root=root, caps=("NET_RAW",))
