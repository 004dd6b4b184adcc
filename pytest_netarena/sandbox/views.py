"""What a box sees of the host: the programs an app allows (found on the host) and a few /etc files; where caches go."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: a shell and the text tools operators pipe command output through
SHELL_TOOLS = (
    "bash", "sh", "cat", "head", "tail", "grep", "egrep", "fgrep", "sed", "awk", "sort", "uniq", "wc", "cut", "tr",
    "tee", "echo", "printf", "true", "false", "test", "[", "ls", "env", "sleep", "xargs", "base64", "diff", "jq",
    "column", "paste", "nl", "fold", "fmt", "seq", "date", "id", "whoami", "basename", "dirname", "yes", "expr",
    "comm", "join", "rev", "tac", "od", "xxd", "less", "more", "timeout", "mktemp", "touch", "mkdir", "rm", "cp",
    "mv", "ln", "chmod", "stat", "find", "readlink", "realpath", "pwd", "uname", "hostname", "ps", "kill",
)

#: host files and folders every box gets (copied into the store) when they exist: names of protocols and services,
#: how names are looked up, iproute2's tables
ETC_FILES = ("/etc/protocols", "/etc/services", "/etc/nsswitch.conf")
ETC_DIRS = ("/etc/iproute2", "/usr/share/iproute2")


@functools.lru_cache(maxsize=None)
def find_program(name: str) -> str | None:
    """The real file a program name resolves to on the host (symlinks followed), or None."""
    found = shutil.which(name, path=HOST_PATH)
    return os.path.realpath(found) if found else None


def programs(names: tuple[str, ...] | list[str]) -> dict[str, str]:
    """{name: host file} for the names installed here; missing ones are left out."""
    table = {}
    for name in names:
        path = find_program(name)
        if path is not None:
            table[name] = path
    return table


def passwd(uid: int) -> bytes:
    return (f"root:x:0:0:root:/root:/bin/bash\nagent:x:{uid}:{uid}:agent:/home/agent:/bin/bash\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n").encode()


def group(uid: int) -> bytes:
    return f"root:x:0:\nagent:x:{uid}:\nnogroup:x:65534:\n".encode()


HOSTS = b"127.0.0.1 localhost\n::1 localhost\n"


def cache_root() -> Path:
    """Where prepared views are kept between runs ($NETARENA_CACHE, else a system or user cache folder)."""
    configured = os.environ.get("NETARENA_CACHE")
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/var/cache/netarena")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "netarena"
