"""An attacker's shell in a real box of every kind: a k8s action, a route node's command, a CLI agent's box, a pod.

The red team's stand-in for a bug in a box's programs (a shell that runs what the attacker wants) is
bash with the tools an attack needs added to the box's programs (`unshare`, `mount`, ...): the box is
the app's own, made by the app's own code, only its /usr/bin holds more. A pod needs nothing added:
its busybox already has `unshare`, `mount` and `nsenter`. MALT's answers are Python, so they attack
with ctypes (tests write them in each module).

`shell_in_box` is a fixture parametrized over the kinds: a test that takes it runs once per kind, each
skipping where that kind cannot be made here (route and CLI boxes need root, pods a live cluster). A module
using it imports both fixtures: `from .kinds import pod_cluster, shell_in_box`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from pytest_netarena.sandbox import views

from .conftest import FORWARD_OFF, act, box_reason, k8s_query, route_query, route_reason

KINDS = ("k8s", "route", "cli", "pod")
Shell = Callable[..., str]  #: shell(script, tools=()) -> what the box printed


def tools(names: tuple[str, ...]) -> dict[str, str]:
    found = views.programs(names)
    missing = set(names) - set(found)
    if missing:
        pytest.skip(f"not installed here: {', '.join(sorted(missing))}")
    return found


def _k8s(request) -> Shell:
    env = request.getfixturevalue("k8s_env")
    env.reset(k8s_query())
    runner = env.runner

    def shell(script: str, added: tuple[str, ...] = ()) -> str:
        kept = runner.programs
        runner.programs = {**kept, **tools(added)}
        try:  # the reply must hold a kubectl command to be run at all
            return act(env, f"kubectl version --client >/dev/null; {script}").output
        finally:
            runner.programs = kept

    return shell


def _route(request) -> Shell:
    if route_reason() is not None:
        pytest.skip(str(route_reason()))
    from pytest_netarena.apps.route.agents.builtin import action

    env = request.getfixturevalue("route_env")
    env.reset(route_query(FORWARD_OFF))
    router = env.topology.router

    def shell(script: str, added: tuple[str, ...] = ()) -> str:
        boxes = env.boxes
        kept, timeout = boxes._programs, env.command_timeout_s
        boxes._programs = {**kept, **tools(added)}
        # an attack gets time to finish on a loaded machine: what it reaches is under test here, not the timeout
        env.command_timeout_s = 30.0
        try:
            outcome = env.step(action(router, script))
        finally:
            boxes._programs, env.command_timeout_s = kept, timeout
        assert not outcome.refused, outcome.output
        return outcome.output

    return shell


def _cli(request) -> Shell:
    import os

    if box_reason() is not None or os.geteuid() != 0:
        pytest.skip("a CLI agent's box needs boxes made as root")
    from pytest_netarena.mcp.clibox import cli_box, run_cli
    from pytest_netarena.sandbox import NetNamespace

    folder = request.getfixturevalue("tmp_path")
    (folder / "cli").write_text("the CLI's install\n")
    namespace = NetNamespace.create()
    request.addfinalizer(namespace.close)

    def shell(script: str, added: tuple[str, ...] = ()) -> str:
        spec = cli_box(str(folder), namespace, {"LANG": "C.UTF-8"})
        spec = replace(spec, programs={**views.programs(views.SHELL_TOOLS), **tools(added)})
        return run_cli(spec, ["bash", "-c", script], lambda: "").output

    return shell


class PodCluster:
    """An embedded API server with live pods, and one busybox pod that sleeps, to exec into."""

    def __init__(self, folder) -> None:
        from pytest_netarena.cluster import LiveCluster
        from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env

        self.server = EmbeddedAPIServer().start()
        self.live = LiveCluster(self.server, backoff_s=0.5).start()
        self.env = kubectl_env(self.server, folder)
        self.server.apply_objects([{
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "attacker", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}])
        self.live.wait_ready(60, "default")

    def exec(self, script: str, timeout: float = 120) -> str:
        import subprocess

        from pytest_netarena.kube import kubectl_path

        done = subprocess.run([kubectl_path(), "exec", "attacker", "--", "sh", "-c", script], env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        return done.stdout + done.stderr

    def stop(self) -> None:
        self.live.stop()
        self.server.stop()


@pytest.fixture(scope="module")
def pod_cluster(tmp_path_factory) -> Iterator[PodCluster]:
    from pytest_netarena.cluster import live_support

    if not live_support().ok:
        pytest.skip(f"pods cannot run here: {live_support().reason}")
    made = PodCluster(tmp_path_factory.mktemp("kubectl"))
    yield made
    made.stop()


def _pod(request) -> Shell:
    cluster = request.getfixturevalue("pod_cluster")

    def shell(script: str, added: tuple[str, ...] = ()) -> str:
        assert not added, "a pod's busybox holds its own tools"
        return cluster.exec(script)

    return shell


@pytest.fixture(params=KINDS)
def shell_in_box(request) -> Shell:
    """shell(script, tools=()): what `bash -c script` printed in a real box of this kind (a pod: busybox sh), with
    `tools` (program names on the host) added to the box's programs."""
    if box_reason() is not None:
        pytest.skip(f"no sealed boxes here: {box_reason()}")
    return {"k8s": _k8s, "route": _route, "cli": _cli, "pod": _pod}[request.param](request)

