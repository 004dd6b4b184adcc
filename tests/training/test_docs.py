"""docs/training.md's Gymnasium example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_the_worked_gymnasium_example_runs_as_written(gym, capsys) -> None:
    match = re.search(r"<!-- example: gym -->\n```python\n(.*?)\n```\n", DOC.read_text(), re.S)
    assert match, "docs/training.md has no gym example"
    exec(compile(match.group(1), str(DOC), "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0].startswith("malt-L1-") and "1.0 True True" in lines
    # every comment beside a print() shows what it prints (its parts around "..."), in order: never another budget
    shown = " ".join(printed.split())
    comments = re.findall(r"^print\(.*\)\s+# (.*)$", match.group(1), re.M)
    assert len(comments) >= 3
    at = 0
    for comment in comments:
        for part in filter(None, (" ".join(piece.split()) for piece in comment.split("..."))):
            found = shown.find(part, at)
            assert found >= 0, (part, shown[at:at + 300])
            at = found + len(part)
    first, last = (float(x) for x in lines[-1].split(" -> "))
    assert last > first


def test_the_verifiers_example_runs_as_written(verifiers_python) -> None:
    """Run by verifiers 0.3's own Python (its venv: it declares mcp<2)."""
    from .conftest import run_with_verifiers

    match = re.search(r"<!-- example: verifiers -->\n```python\n(.*?)\n```\n", DOC.read_text(), re.S)
    assert match, "docs/training.md has no verifiers example"
    done = run_with_verifiers(verifiers_python, ["-c", match.group(1)])
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "[-0.3, -0.3]"
