"""`netarena netpol reach` reads bounded input: endless, deep or alias-bombed YAML is exit 2 with a message.

Each run is capped at 1 GiB of address space: reading /dev/zero to the end, or expanding a billion
laughs, would die there with a MemoryError (exit 1 and a traceback), so exit 2 proves the bound.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netarena.core.safe_yaml import MAX_DEPTH, MAX_SCALAR
from pytest_netarena.netpol.manifests import MAX_BYTES

POD = "kind: Pod\nmetadata: {name: a, namespace: x}\nspec: {containers: [{name: c, ports: [{containerPort: 80}]}]}\n"
PROBES = "- {from: x/a, to: x/a, port: 80}\n"


def capped():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def reach(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "netpol", "reach", *args],
                          capture_output=True, text=True, timeout=120, preexec_fn=capped)


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in "bcdefghi":
        previous = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [{','.join(['*' + previous] * 9)}]")
    lines.append("kind: Pod\nmetadata: {name: p}")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "billion-laughs": (billion_laughs(), "aliases are expanded"),
    # PyYAML may refuse deep flow collections itself, before our bound (its wording is its own, so unchecked)
    "deep-flow": ("[" * 10_000 + "]" * 10_000 + "\n", None),
    "deep-block": ("".join(" " * i + "- \n" for i in range(0, 2_000, 2)), f"nested more than {MAX_DEPTH} levels"),
    "deep-mapping": ("{a: " * 10_000 + "1" + "}" * 10_000 + "\n", "nested more than"),
    "huge-scalar": ("kind: Pod\nmetadata: {name: " + "x" * (MAX_SCALAR + 10) + "}\n", "a scalar of"),
    "too-big": ("# " + "x" * MAX_BYTES + "\n", f"larger than {MAX_BYTES} bytes"),
    "not-utf8": ("kind: Pod\n", "not UTF-8"),
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "probes.yaml").write_text(PROBES)
    return tmp_path


def test_dev_zero_as_manifest_and_as_probes(files):
    for args in (("-f", "/dev/zero", "--probes", str(files / "probes.yaml")),
                 ("-f", str(files / "pod.yaml"), "--probes", "/dev/zero")):
        result = reach(*args)
        assert result.returncode == 2, result.stderr[-2000:]
        assert "/dev/zero: larger than" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("role", ["manifest", "probes"])
def test_hostile_yaml_exits_2_with_a_message(files, case, role):
    text, message = HOSTILE[case]
    hostile = files / "hostile.yaml"
    if case == "not-utf8":
        hostile.write_bytes(b"kind: Pod\nmetadata: {name: \xff\xfe}\n")
    else:
        hostile.write_text(text)
    args = (("-f", str(hostile), "--probes", str(files / "probes.yaml")) if role == "manifest"
            else ("-f", str(files / "pod.yaml"), "--probes", str(hostile)))
    result = reach(*args)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith(f"netarena netpol reach: error: {hostile}: ") and result.stderr.count("\n") == 1
    assert (message is None or message in result.stderr) and result.stdout == ""


def test_ordinary_aliases_and_nesting_still_work(files):
    (files / "pods.yaml").write_text(
        "kind: List\nitems:\n"
        "- {kind: Pod, metadata: {name: a, namespace: x, labels: &l {app: a}},"
        " spec: {containers: [{name: c, ports: &p [{containerPort: 80}]}]}}\n"
        "- {kind: Pod, metadata: {name: b, namespace: x, labels: *l}, spec: {containers: [{name: c, ports: *p}]}}\n")
    (files / "probes.yaml").write_text("- {from: x/a, to: x/b, port: 80}\n- {from: x/a, to: x/b, port: 81}\n")
    result = reach("-f", str(files / "pods.yaml"), "--probes", str(files / "probes.yaml"), "--listening-ports")
    assert result.returncode == 0, result.stderr
    assert [line.endswith('"allowed": true}') for line in result.stdout.splitlines()] == [True, False]


def test_kubeconfig_is_bounded_too(files):
    result = reach("--kubeconfig", "/dev/zero", "--probes", str(files / "probes.yaml"))
    assert result.returncode == 2 and "larger than" in result.stderr and "Traceback" not in result.stderr
