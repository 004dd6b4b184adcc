"""What the MALT box sees: this Python's binary, standard library, networkx and numpy, read-only, at fixed paths.

Nothing else of the host's Python is bound: not its site-packages (other libraries, the editable
finder that names the checkout), not the checkout, not the reports. Python finds its standard
library from where its binary sits (/opt/python/bin -> /opt/python/lib/pythonX.Y), and the zygote
puts /opt/netarena/lib (networkx and numpy, with the shared libraries numpy's wheel brings in
numpy.libs) on sys.path itself.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ...sandbox.views import tree_view

PREFIX = "/opt/python"
LIBRARIES = "/opt/netarena/lib"
ZYGOTE = "/opt/netarena/zygote.py"
#: numpy's BLAS starts no threads: the zygote imports numpy before it forks, and an answer may not start threads
THREADS_ENV = (("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"))
#: folders bwrap creates as 0700 parents of the binds: the zygote opens them to the answers' uids
PARENTS = ("/opt", PREFIX, f"{PREFIX}/bin", f"{PREFIX}/lib", "/opt/netarena", LIBRARIES)


@dataclass(frozen=True)
class Runtime:
    """(host path, box path) pairs to bind read-only, and the argv that starts Python in the box."""

    binds: tuple[tuple[str, str], ...]
    python: str  #: the interpreter's path inside the box
    env: tuple[tuple[str, str], ...]


def _empty_dir() -> str:
    from ...sandbox import views

    path = views.cache_root() / "empty"
    path.mkdir(parents=True, exist_ok=True, mode=0o755)
    return str(path)


@functools.lru_cache(maxsize=1)
def runtime() -> Runtime:
    import networkx

    version = f"python{sysconfig.get_config_var('VERSION') or '.'.join(map(str, sys.version_info[:2]))}"
    binary = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    box_stdlib = f"{PREFIX}/lib/{version}"
    box_python = f"{PREFIX}/bin/{version}"
    binds = [(binary, box_python), (stdlib, box_stdlib)]
    dynload = os.path.realpath(sysconfig.get_paths()["platstdlib"]) + "/lib-dynload"
    if os.path.isdir(dynload) and not dynload.startswith(stdlib + os.sep):
        binds.append((dynload, f"{box_stdlib}/lib-dynload"))
    for packages in ("site-packages", "dist-packages"):
        if os.path.isdir(os.path.join(stdlib, packages)):
            binds.append((_empty_dir(), f"{box_stdlib}/{packages}"))  # hide the host's other libraries
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if libdir and soname and os.path.isfile(os.path.join(libdir, soname)):
        binds.append((os.path.realpath(os.path.join(libdir, soname)), f"{PREFIX}/lib/{soname}"))
    binds.append((tree_view(str(Path(networkx.__file__).resolve().parent)), f"{LIBRARIES}/networkx"))
    binds.extend(_numpy_binds())
    return Runtime(tuple(binds), box_python, (("LD_LIBRARY_PATH", f"{PREFIX}/lib"), *THREADS_ENV))


def _numpy_binds() -> list[tuple[str, str]]:
    """numpy's package and the folder of shared libraries its wheel links by relative path (numpy.libs)."""
    import importlib.util

    found = importlib.util.find_spec("numpy")
    if found is None or found.origin is None:
        return []
    package = Path(found.origin).resolve().parent
    binds = [(tree_view(str(package)), f"{LIBRARIES}/numpy")]
    libraries = package.parent / "numpy.libs"
    if libraries.is_dir():
        binds.append((tree_view(str(libraries)), f"{LIBRARIES}/numpy.libs"))
    return binds
