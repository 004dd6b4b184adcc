"""Without root: the k8s and MALT suites run their episodes in sealed boxes (made through user namespaces).

A root session runs each suite as uid 65534 (`setpriv`), from the checkout, with the documented command; only the
routing suite needs root.
"""

from __future__ import annotations

import json

import pytest

from pytest_netarena.testing import unprivileged

pytestmark = pytest.mark.skipif(unprivileged.unavailable() is not None, reason=str(unprivileged.unavailable()))


@pytest.mark.parametrize("app, episodes", [("k8s", 5), ("malt", 4)])
def test_the_suite_runs_sealed_episodes_as_an_unprivileged_user(app, episodes):
    with unprivileged.unprivileged_home() as home:
        reports = home / "reports"
        done = unprivileged.run_python(["-m", "pytest", f"suites/{app}", "--agent=builtin:oracle", "--queries=1",
                                        "--levels=1", f"--reports-dir={reports}", "-p", "no:randomly", "-rs"], home)
        summary = json.loads(next(reports.glob("*/summary.json")).read_text())
    assert done.returncode == 0 and f"{episodes} passed" in done.stdout and "skipped" not in done.stdout, \
        done.stdout[-3000:] + done.stderr[-2000:]
    assert "(user namespace mode)" in done.stdout
    assert summary["sandboxed"] is True
    (group,) = summary["groups"]
    assert group["overall"]["resolved"]["n"] == episodes
