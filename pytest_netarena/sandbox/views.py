"""What a box sees of the host: the programs an app allows, shared libraries, and a few /etc files."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
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

#: read-only host paths every box gets when they exist: shared libraries and their caches
LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/protocols", "/etc/services", "/etc/nsswitch.conf")
ETC_DIRS = ("/etc/iproute2", "/usr/share/iproute2")


@functools.cache
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


def view_dir(table: dict[str, str]) -> str:
    """A folder holding exactly these programs (hard links, or copies across file systems).

    A box binds it as /usr/bin in one mount (one bind per program costs ~0.2 ms each). Folders are
    named after their content, made once and reused; a changed program gets a new folder.
    """
    entries = []
    for name, path in sorted(table.items()):
        stat = os.stat(path)
        entries.append(f"{name}\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}")
    key = hashlib.sha256("\n".join(entries).encode()).hexdigest()[:20]

    def fill(staging: Path) -> None:
        placed: dict[str, Path] = {}  # a multi-call binary (busybox) under many names is one file, linked
        for name, path in table.items():
            if path in placed:
                os.link(placed[path], staging / name)
            else:
                _link_or_copy(path, staging / name)
                placed[path] = staging / name

    return _made_once(cache_root() / "views" / key, fill)


def _link_or_copy(source: str, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def _made_once(target: Path, fill) -> str:
    """target, made by fill(staging folder) and renamed into place once (another process may win the race)."""
    if target.is_dir():
        return str(target)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    try:
        fill(staging)
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:  # another process made the same folder first
            if not target.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return str(target)


def tree_view(source: str) -> str:
    """A copy of a library folder under the cache (hard links, or copies across file systems), named after its content.

    A box binds this copy instead of the folder itself, so its mount table shows a cache path, never where the
    harness is installed (a checkout's .venv names the checkout and the user's home).
    """
    files, named = [], []
    for folder, dirs, names in os.walk(source):
        dirs.sort()
        for name in sorted(names):
            stat = os.stat(os.path.join(folder, name))
            files.append(f"{os.path.relpath(os.path.join(folder, name), source)}\0{stat.st_size}\0{stat.st_mtime_ns}")
            if "__pycache__" not in folder:  # compiled files come and go; they are copied, not part of the name
                named.append(files[-1])
    key = hashlib.sha256("\n".join(named).encode()).hexdigest()[:20]

    def fill(staging: Path) -> None:
        for entry in files:
            relative = entry.split("\0", 1)[0]
            (staging / relative).parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            _link_or_copy(os.path.join(source, relative), staging / relative)
        for folder, dirs, _ in os.walk(staging):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)

    return _made_once(cache_root() / "libraries" / f"{os.path.basename(source)}-{key}", fill)
