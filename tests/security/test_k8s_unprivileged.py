"""The k8s red team again, as an unprivileged user: the same attacks must fail against boxes made without root.

A root session runs test_k8s_box.py and test_k8s_requests.py as root (directly) and here once more as uid 65534
(`setpriv`), whose boxes get their private network namespace through a user namespace and reach the API server
through a listener made inside it. A session that is not root ran those modules unprivileged already.
"""

from __future__ import annotations

import ast
from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_netarena.testing import unprivileged

MODULES = ("test_k8s_box.py", "test_k8s_requests.py")
HERE = Path(__file__).parent


def functions_of(module: str) -> set[str]:
    tree = ast.parse((HERE / module).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


@pytest.mark.skipif(unprivileged.unavailable() is not None, reason=str(unprivileged.unavailable()))
def test_every_k8s_attack_fails_against_boxes_made_without_root():
    with unprivileged.unprivileged_home() as home:
        junit = home / "junit.xml"
        done = unprivileged.run_python(
            ["-m", "pytest", *(str(HERE / module) for module in MODULES), "-q", "-p", "no:randomly",
             "-p", "no:cacheprovider", f"--basetemp={home / 'tmp'}", f"--junitxml={junit}", "-rs"], home)
        assert junit.exists(), done.stdout[-3000:] + done.stderr[-3000:]
        cases = list(ElementTree.parse(junit).iter("testcase"))
    outcomes = {case.get("name"): [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
                for case in cases}
    assert set(outcomes) == functions_of(MODULES[0]) | functions_of(MODULES[1]), done.stdout[-3000:]
    assert all(not problems for problems in outcomes.values()), done.stdout[-6000:]
    assert done.returncode == 0
