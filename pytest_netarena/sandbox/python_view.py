"""What a boxed Python sees: this interpreter's binary and standard library, and the packages an app names, read-only.

Nothing else of the host's Python is bound: not its site-packages (other libraries, the editable
finder that names the checkout), not the checkout, not the reports. Python finds its standard
library from where its binary sits (/opt/python/bin -> /opt/python/lib/pythonX.Y), and the zygote
puts /opt/netarena/lib (the named packages, each with the folder of shared libraries its wheel
brings in, as numpy.libs) on sys.path itself.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .views import cache_root, tree_view

PREFIX = "/opt/python"
LIBRARIES = "/opt/netarena/lib"


@dataclass(frozen=True)
class PythonView:
    """(host path, box path) pairs to bind read-only, and the argv that starts Python in the box."""

    binds: tuple[tuple[str, str], ...]
    python: str  #: the interpreter's path inside the box
    env: tuple[tuple[str, str], ...]


def _empty_dir() -> str:
    path = cache_root() / "empty"
    path.mkdir(parents=True, exist_ok=True, mode=0o755)
    return str(path)


@functools.cache
def python_view(packages: tuple[str, ...], env: tuple[tuple[str, str], ...] = ()) -> PythonView:
    """This Python with `packages` (import names; the first one must be installed, the others may be absent)."""
    version = f"python{sysconfig.get_config_var('VERSION') or '.'.join(map(str, sys.version_info[:2]))}"
    binary = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    box_stdlib = f"{PREFIX}/lib/{version}"
    box_python = f"{PREFIX}/bin/{version}"
    binds = [(binary, box_python), (stdlib, box_stdlib)]
    dynload = os.path.realpath(sysconfig.get_paths()["platstdlib"]) + "/lib-dynload"
    if os.path.isdir(dynload) and not dynload.startswith(stdlib + os.sep):
        binds.append((dynload, f"{box_stdlib}/lib-dynload"))
    for site in ("site-packages", "dist-packages"):
        if os.path.isdir(os.path.join(stdlib, site)):
            binds.append((_empty_dir(), f"{box_stdlib}/{site}"))  # hide the host's other libraries
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if libdir and soname and os.path.isfile(os.path.join(libdir, soname)):
        binds.append((os.path.realpath(os.path.join(libdir, soname)), f"{PREFIX}/lib/{soname}"))
    for index, name in enumerate(packages):
        binds.extend(_package_binds(name, required=index == 0))
    return PythonView(tuple(binds), box_python, (("LD_LIBRARY_PATH", f"{PREFIX}/lib"), *env))


def package_folder(name: str) -> Path:
    """The host folder of an installed package (ModuleNotFoundError if it is missing)."""
    found = importlib.util.find_spec(name)
    if found is None or found.origin is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return Path(found.origin).resolve().parent


def _package_binds(name: str, required: bool) -> list[tuple[str, str]]:
    """A package and the folder of shared libraries its wheel links by relative path (as numpy.libs)."""
    try:
        package = package_folder(name)
    except ModuleNotFoundError:
        if required:
            raise
        return []
    binds = [(tree_view(str(package)), f"{LIBRARIES}/{name}")]
    libraries = package.parent / f"{name}.libs"
    if libraries.is_dir():
        binds.append((tree_view(str(libraries)), f"{LIBRARIES}/{name}.libs"))
    return binds
