"""What a boxed Python sees: this interpreter's binary and standard library, and the packages an app names, read-only.

Nothing else of the host's Python is bound: not its site-packages (other libraries, the editable
finder that names the checkout), not its tests, not the checkout, not the reports. Each part is a copy
in the store (store.py), so the box's mount table does not name where the host's Python is installed.
Python finds its standard library from where its binary sits (/opt/python/bin -> /opt/python/lib/pythonX.Y),
and the zygote puts /opt/netarena/lib (the named packages, each with the folder of shared libraries its
wheel brings in, as numpy.libs) on sys.path itself.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .store import store

PREFIX = "/opt/python"
LIBRARIES = "/opt/netarena/lib"
#: left out of the standard library's copy: other libraries (and the editable finder naming the checkout), and
#: what no answer imports (Python's own tests, IDLE, Tk, turtle demos, pip's installer, 2to3; the build's
#: configuration folder, which holds the static library, is left out by its name below)
LEFT_OUT = ("site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3")
#: left out of the packages' copies: their own test suites
PACKAGE_LEFT_OUT = ("tests",)


@dataclass(frozen=True)
class PythonView:
    """(host path, box path) pairs to bind read-only, and the argv that starts Python in the box."""

    binds: tuple[tuple[str, str], ...]
    python: str  #: the interpreter's path inside the box
    env: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=None)
def python_view(packages: tuple[str, ...], env: tuple[tuple[str, str], ...] = ()) -> PythonView:
    """This Python with `packages` (import names; the first one must be installed, the others may be absent)."""
    version = f"python{sysconfig.get_config_var('VERSION') or '.'.join(map(str, sys.version_info[:2]))}"
    binary = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    box_stdlib = f"{PREFIX}/lib/{version}"
    box_python = f"{PREFIX}/bin/{version}"
    held = store()
    build = os.path.basename(sysconfig.get_config_var("LIBPL") or "")
    binds = [(held.copy(binary), box_python), (held.copy(stdlib, exclude=(*LEFT_OUT, build)), box_stdlib)]
    dynload = os.path.realpath(sysconfig.get_paths()["platstdlib"]) + "/lib-dynload"
    if os.path.isdir(dynload) and not dynload.startswith(stdlib + os.sep):
        binds.append((held.copy(dynload), f"{box_stdlib}/lib-dynload"))
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if libdir and soname and os.path.isfile(os.path.join(libdir, soname)):
        binds.append((held.copy(os.path.realpath(os.path.join(libdir, soname))), f"{PREFIX}/lib/{soname}"))
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
    binds = [(store().copy(str(package), exclude=PACKAGE_LEFT_OUT), f"{LIBRARIES}/{name}")]
    libraries = package.parent / f"{name}.libs"
    if libraries.is_dir():
        binds.append((store().copy(str(libraries)), f"{LIBRARIES}/{name}.libs"))
    return binds
