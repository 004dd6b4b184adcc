"""Every module of the package imports on its own, in an interpreter that has imported nothing of it before."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

# Runs in a fresh interpreter: forks once per module, so each child starts with no pytest_netarena
# module loaded (a fresh interpreter for the package) without paying the start-up once per module.
DRIVER = r"""
import json, os, sys, traceback
failures = {}
for outside in json.loads(sys.argv[2]):  # third-party modules, loaded once before the forks; ours are not
    try:
        __import__(outside)
    except ImportError:
        pass  # the module that needs it says so below
for name in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(name)
            code = 0
        except BaseException:
            os.write(write, traceback.format_exc().encode()[-3000:])
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failures[name] = message or f"wait status {status}"
print(json.dumps(failures))
"""

#: third-party modules most of the package's modules import, loaded once in the parent (24 → 14 s of the forks'
#: CPU); the large ones (litellm, verifiers, datasets, matplotlib) cost more to copy into every fork than they save
SHARED_DEPENDENCIES = ["pytest", "numpy", "gymnasium", "yaml", "networkx", "httpx", "anyio", "pydantic", "cryptography"]


#: modules of an extra outside `all` (`rl`: verifiers 0.3 needs mcp<2), and the package each may miss here
OUTSIDE_ALL = {"pytest_netarena.training.verifiers_env": "verifiers"}


def package_modules() -> list[str]:
    spec = importlib.util.find_spec("pytest_netarena")  # locates the package without importing it
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    names = package_modules()
    assert len(names) > 50 and "pytest_netarena.apps.k8s.agents.expert" in names
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(names), json.dumps(SHARED_DEPENDENCIES)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    failures = json.loads(done.stdout.strip().splitlines()[-1])
    for name, module in OUTSIDE_ALL.items():  # its extra cannot install beside `all`: missing is its only excuse
        if name in failures and failures[name].rstrip().endswith(f"No module named '{module}'"):
            del failures[name]
    assert failures == {}, "\n\n".join(f"{name}:\n{message}" for name, message in failures.items())
