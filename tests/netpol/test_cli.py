"""`netarena netpol reach` run as a subprocess: output format and order, and exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLUSTER = """\
apiVersion: v1
kind: Namespace
metadata: {name: x, labels: {ns: x}}
---
apiVersion: v1
kind: Namespace
metadata: {name: y, labels: {ns: y}}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a, namespace: x, labels: {pod: a}}
  spec: {containers: [{name: c, image: i, ports: [{containerPort: 80, name: http}, {containerPort: 53, protocol: UDP, name: dns}]}]}
  status: {podIP: 10.1.0.1}
- apiVersion: v1
  kind: Pod
  metadata: {name: b, namespace: y, labels: {pod: b}}
  spec: {containers: [{name: c, image: i}]}
  status: {podIP: 10.2.0.1}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: ignored, namespace: x}
"""
POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-y-http, namespace: x}
spec:
  podSelector: {matchLabels: {pod: a}}
  ingress:
  - from: [{namespaceSelector: {matchLabels: {ns: y}}}]
    ports: [{port: http}]
"""
PROBES = """\
- {from: y/b, to: x/a, port: http}
- {from: y/b, to: x/a, port: 80, protocol: TCP}
- {from: y/b, to: x/a, port: 53, protocol: UDP}
- {from: x/a, to: y/b, port: 9999, protocol: SCTP}
- {from: y/b, to: x/a, port: dns, protocol: UDP}
"""


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "netpol", "reach", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "probes.yaml").write_text(PROBES)
    return tmp_path


def test_prints_one_json_line_per_probe_in_input_order(files):
    result = run("-f", str(files / "cluster.yaml"), "-f", str(files / "policy.yaml"), "--probes", str(files / "probes.yaml"))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == [
        {"from": "y/b", "to": "x/a", "port": "http", "protocol": "TCP", "allowed": True},
        {"from": "y/b", "to": "x/a", "port": 80, "protocol": "TCP", "allowed": True},
        {"from": "y/b", "to": "x/a", "port": 53, "protocol": "UDP", "allowed": False},
        {"from": "x/a", "to": "y/b", "port": 9999, "protocol": "SCTP", "allowed": True},
        {"from": "y/b", "to": "x/a", "port": "dns", "protocol": "UDP", "allowed": False},
    ]


def test_without_the_policy_everything_is_allowed(files):
    result = run("-f", str(files / "cluster.yaml"), "--probes", str(files / "probes.yaml"))
    assert result.returncode == 0, result.stderr
    assert all(json.loads(line)["allowed"] for line in result.stdout.splitlines())


def test_explain_flag_adds_reasons(files):
    result = run("-f", str(files / "cluster.yaml"), "-f", str(files / "policy.yaml"), "--probes", str(files / "probes.yaml"), "--explain")
    first = json.loads(result.stdout.splitlines()[0])
    assert "x/only-y-http ingress[0] (peer 0)" in first["explanation"]


BAD_CASES = {
    "unknown-pod": ("probes.yaml", "- {from: y/zz, to: x/a, port: 80}\n", "unknown pod 'y/zz'"),
    "bad-probe-port": ("probes.yaml", "- {from: y/b, to: x/a, port: 0}\n", "port must be a number between 1 and 65535"),
    "bad-probe-protocol": ("probes.yaml", "- {from: y/b, to: x/a, port: 80, protocol: ICMP}\n", "protocol must be TCP, UDP or SCTP"),
    "bad-probe-ref": ("probes.yaml", "- {from: b, to: x/a, port: 80}\n", "'from' must be NAMESPACE/POD"),
    "probes-not-list": ("probes.yaml", "from: y/b\n", "expected a list of probes"),
    "malformed-yaml": ("policy.yaml", "kind: NetworkPolicy\n  bad: [\n", "malformed YAML"),
    "invalid-policy": ("policy.yaml", POLICY.replace("port: http", "port: 70000"), "spec.ingress[0].ports[0].port"),
    "bad-cidr": ("policy.yaml", POLICY.replace("{namespaceSelector: {matchLabels: {ns: y}}}", "{ipBlock: {cidr: 10.0.0.0/99}}"), "invalid CIDR"),
    "bad-operator": ("policy.yaml", POLICY.replace("{matchLabels: {ns: y}}", "{matchExpressions: [{key: ns, operator: Has}]}"), "unknown operator 'Has'"),
    "not-an-object": ("policy.yaml", "- just\n- a list\n", "is not a Kubernetes object"),
    "pod-bad-port": ("policy.yaml", "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{ports: [{containerPort: 0}]}]}\n", "containerPort"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_exits_2_with_a_clear_message(files, case):
    name, content, message = BAD_CASES[case]
    (files / name).write_text(content)
    result = run("-f", str(files / "cluster.yaml"), "-f", str(files / "policy.yaml"), "--probes", str(files / "probes.yaml"))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_missing_file_exits_2(files):
    result = run("-f", str(files / "nope.yaml"), "--probes", str(files / "probes.yaml"))
    assert result.returncode == 2 and "cannot read" in result.stderr and "Traceback" not in result.stderr


def test_needs_a_cluster_source(files):
    result = run("--probes", str(files / "probes.yaml"))
    assert result.returncode == 2 and "no cluster given" in result.stderr
