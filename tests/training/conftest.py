"""Shared fixtures of the training tests: Gymnasium and datasets (skip when missing), route backend, host state."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from pytest_netarena.apps.malt import ops

SMALL_MALT = "synthetic:300"
PREFIX_RE = re.compile(r"\bna[0-9a-z]{4}(?=r0|h\d|s\d)")


@pytest.fixture(scope="session")
def gym():
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install pytest-netarena[train])")
    import pytest_netarena.training  # noqa: F401  (registers the environments)

    return gymnasium


@pytest.fixture(scope="session")
def verifiers_python() -> str:
    """Python of verifiers 0.3's own cached venv (it cannot share ours: it declares mcp<2); skips saying why."""
    from pytest_netarena.testing.venvs import VenvError

    from .verifiers_venv import verifiers_venv

    try:
        return str(verifiers_venv() / "bin" / "python")
    except VenvError as error:
        pytest.skip(f"cannot make verifiers' venv here (pip install pytest-netarena[rl] beside no mcp): {error}")


def run_with_verifiers(python: str, argv: list[str], stdin: str = "", timeout: float = 600) -> subprocess.CompletedProcess:
    """A command run by verifiers' Python, this checkout first on its path."""
    from .verifiers_venv import ROOT, verifiers_env

    return subprocess.run([python, *argv], input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=verifiers_env(), cwd=str(ROOT))


@pytest.fixture(scope="session")
def hf_datasets():
    return pytest.importorskip("datasets", reason="datasets is not installed (pip install pytest-netarena[train])")


def route_reason() -> str | None:
    if os.geteuid() != 0:
        return "route environments need root (Mininet network namespaces, veth pairs, bridges)"
    from pytest_netarena.apps.route.network.capabilities import backend_missing

    return backend_missing()


@pytest.fixture
def route_backend() -> None:
    reason = route_reason()
    if reason:
        pytest.skip(reason)


class Host:
    """Readings of the machine's links, network namespaces and processes, for before/after comparisons."""

    @staticmethod
    def links() -> set[str]:
        return host_links()

    @staticmethod
    def netns() -> set[str]:
        return host_netns()

    @staticmethod
    def descendants(pid: int) -> set[int]:
        return descendants(pid)

    @staticmethod
    def processes_naming(words: set[str]) -> list[str]:
        return processes_naming(words)

    prefix_re = PREFIX_RE

    @staticmethod
    def leased_by_another(prefix: str) -> bool:
        """Whether a live process (after our environments closed: someone else's) holds this route prefix now."""
        from pytest_netarena.apps.route.network.leases import LEASE_DIR, owner_alive

        return owner_alive(LEASE_DIR / f"{prefix}.pid")


@pytest.fixture
def host() -> type[Host]:
    return Host


def host_links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {line.split(":", 2)[1].strip().split("@")[0] for line in out.splitlines() if line.count(":") >= 2}


def host_netns() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def descendants(pid: int) -> set[int]:
    """Every live process below pid (from /proc/*/stat parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def processes_naming(words: set[str]) -> list[str]:
    """Command lines of live processes that mention any of the words (e.g. Mininet node shells of a prefix)."""
    hits = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(word in cmdline for word in words):
            hits.append(f"{entry.name}: {cmdline}")
    return hits


@pytest.fixture(scope="session")
def hidden_values():
    """hidden_values(episode, malt_graph): what a model must not learn from exported data (export sft, export atif)."""
    return _hidden


def _hidden(episode: dict, graph) -> set[str]:
    """What the model must not learn from its data: fault names and values, ground truth, grader details."""
    query = episode["query"]
    hidden = {query["id"], query["category"], str(query["seed"])}
    if episode["details"] and episode["details"] not in ("correct",):
        hidden.add(episode["details"])
    for fault in query["params"].get("faults", []):
        hidden.add(fault["type"])
        hidden.update(str(fault[key]) for key in ("method", "new_port") if key in fault)
    if query["app"] == "malt":
        params = query["params"]
        work = graph.copy() if params["mutates"] else graph
        kind, data, _ = ops.run_program(work, params["program"])
        hidden.add(json.dumps(data))
        if kind == "list":  # each child name or [name, capacity] pair of the answer
            hidden.update(item if isinstance(item, str) else json.dumps(item) for item in data)
        hidden.add(json.dumps(params["program"]))
    if episode["steps"]:
        hidden.add(episode["steps"][-1]["observation"])  # shown to nobody: the episode was over
    return {value for value in hidden if len(value) >= 4}
