"""Import Mininet's Python module: PyPI's if installed, else Debian's package, without the rest of dist-packages.

Debian's `mininet` package (the one the README installs, which also provides `mnexec`) puts the
module under /usr/lib/python3/dist-packages, which our pyenv Python does not search. Adding that
whole directory to sys.path would shadow our own packages with Debian's older copies, so only the
`mininet` package is loaded from there.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import shutil
import sys
import warnings
from types import ModuleType

DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def import_mininet() -> ModuleType:
    """The `mininet` package; ImportError naming the fix when it is nowhere."""
    if "mininet" not in sys.modules:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mininet.node imports distutils (deprecated)
            try:
                importlib.import_module("mininet")
            except ModuleNotFoundError:
                spec = importlib.machinery.PathFinder.find_spec("mininet", [DEBIAN_DIST_PACKAGES])
                if spec is None or spec.loader is None:
                    raise ImportError(
                        "Mininet is not installed: apt-get install -y --no-install-recommends "
                        "mininet iproute2 iptables iputils-ping"
                    ) from None
                module = importlib.util.module_from_spec(spec)
                sys.modules["mininet"] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules["mininet"]
                    raise
            for name in ("mininet.net", "mininet.node", "mininet.nodelib", "mininet.link", "mininet.log"):
                importlib.import_module(name)
    if shutil.which("mnexec") is None:
        raise ImportError("mnexec is missing (PyPI's mininet lacks it): install Debian's mininet package")
    return sys.modules["mininet"]
