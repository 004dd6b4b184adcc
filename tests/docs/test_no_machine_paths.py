"""User docs name files as a user has them (beside or inside the checkout), never as a developer's machine does."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
#: absolute paths of someone's machine: the project's work folder, home folders
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home/[\w.-]+|Users/[\w.-]+)/[\w./+-]*")
#: the working rules of the project's own helpers, not user documentation
INTERNAL: set[str] = set()
#: a NetArena checkout for the compat tests, overridable with NETARENA_MIRROR (the tests skip without one)
MIRROR_DEFAULT = "NETARENA_MIRROR"
#: in code, /root and /home/... are the box's own folders; the project's work folder is one machine's
CODE_PATH = re.compile(r"(?<![\w.])/(?:work|Users/[\w.-]+)/[\w./+-]*")


def test_docs_give_no_absolute_path_of_a_developers_machine():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{number}: {match.group(0)}"
             for page in pages if page.name not in INTERNAL
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for match in MACHINE_PATH.finditer(line)]
    assert found == []


def test_code_and_tests_name_no_path_of_a_developers_machine():
    """Cheats, tests and helpers probe or read paths any checkout has, never one machine's folders."""
    files = [path for folder in ("pytest_netarena", "tests", "benchmarks", "scripts")
             for path in sorted((ROOT / folder).rglob("*.py")) if path != Path(__file__).resolve()]
    found = [f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
             for path in files
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if MIRROR_DEFAULT not in line
             for match in CODE_PATH.finditer(line)]
    assert found == []
