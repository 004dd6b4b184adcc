"""The sandbox room imports no app: every import of its modules, function-level ones too, stays outside apps/."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path


def imported(path: Path, package: str) -> set[str]:
    """Every module name an import statement anywhere in the file names (relative ones resolved)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_no_sandbox_module_imports_an_app() -> None:
    spec = importlib.util.find_spec("pytest_netarena.sandbox")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.rglob("*.py"))
    assert {path.name for path in files} >= {"box.py", "zygote.py"}
    upward = {f"{path.relative_to(folder)}: {name}" for path in files
              for name in imported(path, ".".join(["pytest_netarena.sandbox", *path.relative_to(folder).parent.parts]))
              if name.startswith("pytest_netarena.apps")}
    assert not upward, sorted(upward)
