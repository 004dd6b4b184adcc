"""A box's shared libraries: only those its programs need, found from their ELF headers as the loader would find them.

A box once bound the host's whole /usr/lib, which brought other programs with it (a JVM and its REPL,
git, a second Python's library). Now its /usr/lib is a folder of the store holding the loader and the
closure of what the box's ELF files need (DT_NEEDED, searched in their run paths, the loader's cache
and its default folders), plus the plug-in folders a few programs load by name (iptables' extensions,
tc's, terminfo). Libraries the box's own binds carry (Python's, numpy's) are not added twice. Laid out
at the host's paths relative to /usr, the loader finds them without a cache of its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from . import elf
from .store import Store
from .views import cache_root

#: box folders a library view may fill, bound from the view's folder of the same name
TOPS = ("lib", "lib64", "lib32", "libx32")
#: folders of plug-ins some programs open by name (searched in each library folder and its architecture's
#: subfolder), by the program's name in the box
PLUGINS = {
    **{name: ("xtables",) for name in ("iptables", "iptables-save", "iptables-restore", "iptables-legacy",
                                      "iptables-legacy-save", "iptables-nft", "iptables-nft-save", "ip6tables",
                                      "ip6tables-save", "ip6tables-restore", "iptables-legacy-restore",
                                      "iptables-nft-restore")},
    "tc": ("tc",),
    "less": ("terminfo",),
    "more": ("terminfo",),
}
#: opened by the C library itself when a thread is cancelled or a stack unwound
ALWAYS = ("libgcc_s.so.1",)
DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


@functools.lru_cache(maxsize=1)
def _loader_cache() -> dict[str, tuple[str, ...]]:
    """{library name: host paths} as the loader's cache lists them (`ldconfig -p`); empty without ldconfig."""
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if os.path.exists(ldconfig):
            try:
                listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30,
                                         check=False).stdout
            except (OSError, subprocess.SubprocessError):
                return {}
            found: dict[str, list[str]] = {}
            for line in listing.splitlines():
                name, arrow, path = line.strip().partition(" => ")
                if arrow:
                    found.setdefault(name.split(" (", 1)[0], []).append(path.strip())
            return {name: tuple(paths) for name, paths in found.items()}
    return {}


@functools.lru_cache(maxsize=1)
def _default_dirs() -> tuple[str, ...]:
    """The loader's default folders, each with its architecture subfolders (Debian's multiarch layout)."""
    found = []
    for folder in DEFAULT_DIRS:
        if os.path.isdir(folder):
            found += sorted(str(sub) for sub in Path(folder).glob("*-linux-gnu*") if sub.is_dir())
            found.append(folder)
    return tuple(found)


def _serves(path: str, needs: elf.Needs) -> bool:
    found = elf.read(path)
    return found is not None and (found.machine, found.bits) == (needs.machine, needs.bits)


def resolve(name: str, needs: elf.Needs) -> str | None:
    """The host file the loader would open for library `name` of an object with these needs, or None."""
    if "/" in name:
        return name if os.path.isfile(name) else None
    candidates = [os.path.join(folder, name) for folder in needs.run_paths]
    candidates += _loader_cache().get(name, ())
    candidates += [os.path.join(folder, name) for folder in _default_dirs()]
    for candidate in candidates:
        if os.path.isfile(candidate) and _serves(candidate, needs):
            return candidate
    return None


def box_path(host_path: str, name: str) -> str:
    """Where a library found at host_path goes in the view (relative to /usr): its folder's place under /usr/lib*,
    or /usr/lib itself for one found elsewhere (a default folder of the loader)."""
    folder = os.path.realpath(os.path.dirname(host_path))
    folder = folder[len("/usr"):] if folder.startswith("/usr/") else folder
    top = folder.strip("/").split("/", 1)[0]
    return os.path.join(folder.strip("/"), name) if top in TOPS else os.path.join("lib", name)


def _elf_files(root: str) -> list[str]:
    """ELF files under a store folder (or the file itself): programs, shared objects, extension modules."""
    if os.path.isfile(root):
        return [root] if elf.is_elf(root) else []
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if (".so" in name or os.access(path, os.X_OK)) and not os.path.islink(path) and elf.is_elf(path):
                found.append(path)
    return found


def _plugin_dirs(programs: Iterable[str]) -> list[str]:
    wanted = sorted({folder for program in programs for folder in PLUGINS.get(program, ())})
    found = []
    for name in wanted:
        for library in DEFAULT_DIRS:
            for candidate in (Path(library) / name, *Path(library).glob(f"*-linux-gnu*/{name}")):
                if candidate.is_dir() and str(candidate.resolve()) not in found:
                    found.append(str(candidate.resolve()))
    return found


def closure(roots: tuple[str, ...], programs: tuple[str, ...]) -> dict[str, str]:
    """{path relative to /usr: host file} of every library the ELF files under roots (paths the harness reads) need,
    and the plug-ins of the named programs; a library a root itself holds (by name) is left to it."""
    objects = [path for root in roots for path in _elf_files(root)]
    provided = {os.path.basename(path) for path in objects}
    placed: dict[str, str] = {}
    queue = list(objects)
    for folder in _plugin_dirs(programs):
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                placed.setdefault(box_path(str(path), path.name), os.path.realpath(path))
                queue.append(str(path))
    dynamic: elf.Needs | None = None
    while queue:
        needs = elf.read(queue.pop())
        if needs is None:
            continue
        if needs.interpreter and os.path.isfile(needs.interpreter):
            dynamic = dynamic or needs
            relative = needs.interpreter.lstrip("/")
            relative = relative[len("usr/"):] if relative.startswith("usr/") else relative
            if relative not in placed:
                placed[relative] = os.path.realpath(needs.interpreter)
        for name in needs.needed:
            if name in provided:
                continue
            found = resolve(name, needs)
            if found is None:
                continue  # missing on the host as well: the program fails there too
            relative = box_path(found, name)
            if relative not in placed:
                placed[relative] = os.path.realpath(found)
                queue.append(found)
    for name in ALWAYS if dynamic is not None else ():
        found = resolve(name, dynamic)
        if found is not None:
            placed.setdefault(box_path(found, name), os.path.realpath(found))
    return placed


def _known_closure(store: Store, roots: tuple[str, ...], programs: tuple[str, ...]) -> dict[str, str]:
    """closure(), read from the cache of an earlier process when it computed the same one (the store's entries are
    named after their content, so the same names mean the same files; a changed loader cache means new libraries)."""
    try:
        stamp = os.stat("/etc/ld.so.cache").st_mtime_ns
    except OSError:
        stamp = 0
    names = [os.path.relpath(root, store.root) for root in roots]
    key = hashlib.sha256("\0".join([*names, "", *programs, str(stamp)]).encode()).hexdigest()[:24]
    path = cache_root() / "closures" / f"{key}.json"
    try:
        known = json.loads(path.read_text())
        if isinstance(known, dict) and all(isinstance(host, str) and os.path.isfile(host) for host in known.values()):
            return known
    except (OSError, ValueError):
        pass
    placed = closure(tuple(store.local(root) for root in roots), programs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as staging:
            json.dump(placed, staging)
        os.replace(staging.name, path)
    except OSError:
        pass  # computed again next time
    return placed


@functools.lru_cache(maxsize=64)
def view(store: Store, roots: tuple[str, ...], programs: tuple[str, ...]) -> dict[str, str]:
    """{box folder (/usr/lib...): store folder} holding what the ELF files under `roots` (store paths, which never
    change) need, and the plug-ins of the named programs."""
    placed = _known_closure(store, roots, programs)
    entries = []
    for relative, host in sorted(placed.items()):
        info = os.stat(host)
        entries.append(f"{relative}\0{host}\0{info.st_size}\0{info.st_mtime_ns}")
    if os.path.isdir("/usr/lib64"):
        entries.append("lib64/")  # the loader's folder stays, as the box's /lib64 link points to it
    key = hashlib.sha256("\n".join(entries).encode()).hexdigest()[:24]

    def fill(staging: Path) -> None:
        for top in TOPS:
            if top == "lib" or (top == "lib64" and os.path.isdir("/usr/lib64")):
                (staging / top).mkdir()
        for relative, host in sorted(placed.items()):
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            store.place(host, target)
        for folder, dirs, _ in os.walk(staging):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)

    made = store.folder("lib", key, fill)
    return {f"/usr/{top}": os.path.join(made, top) for top in TOPS if os.path.isdir(store.local(os.path.join(made, top)))}
