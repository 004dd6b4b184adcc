"""User docs name files as a user has them (beside or inside the checkout), never as a developer's machine does."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
#: absolute paths of someone's machine: the project's work folder, home folders
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home/[\w.-]+|Users/[\w.-]+)/[\w./+-]*")
#: the working rules of the project's own helpers, not user documentation
INTERNAL = {"HELPERS.md"}


def test_docs_give_no_absolute_path_of_a_developers_machine():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{page.relative_to(ROOT)}:{number}: {match.group(0)}"
             for page in pages if page.name not in INTERNAL
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for match in MACHINE_PATH.finditer(line)]
    assert found == []
