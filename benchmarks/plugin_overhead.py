"""What the installed plugin costs a pytest session that has nothing to do with it.

    python benchmarks/plugin_overhead.py [--runs 15]

Makes a one-test project in a temporary folder and times `python -m pytest -q` there, with the
plugin (as every pytest of this environment loads it) and without it (`-p no:netarena`), and
prints the medians, their difference and which pytest_netarena modules the session imported.

Target (issue 28): no header line, no sandbox trial, no app imported; the difference is noise.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORTED = "import sys; print(sorted(m for m in sys.modules if m.startswith('pytest_netarena')))"


def timed(project: Path, extra: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=project,
                   check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_one.py").write_text("def test_one():\n    assert True\n")
        (project / "conftest.py").write_text(
            "import atexit\natexit.register(lambda: exec(" + repr(IMPORTED) + "))\n")
        with_plugin, without = [], []
        for _ in range(args.runs):  # interleaved: load on the machine hits both alike
            with_plugin.append(timed(project, []))
            without.append(timed(project, ["-p", "no:netarena"]))
        output = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"], cwd=project,
                                capture_output=True, text=True).stdout
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"with the plugin:    median {a * 1000:.0f} ms over {args.runs} runs")
    print(f"without (-p no:netarena): median {b * 1000:.0f} ms")
    print(f"overhead: {(a - b) * 1000:+.0f} ms")
    imported = [line for line in output.splitlines() if line.startswith("[")]
    print(f"pytest_netarena modules imported: {imported[-1] if imported else '(none printed)'}")
    header = [line for line in output.splitlines() if line.startswith("netarena")]
    print(f"netarena lines printed: {len(header)}")


if __name__ == "__main__":
    main()
