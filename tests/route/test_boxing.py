"""Where node commands run: a sealed box by default, no box with --unsandboxed, and a clear refusal to run
when boxes cannot be made here (root, Mininet)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pytest_netarena.apps.route import APP
from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.core.app import RunOptions
from pytest_netarena.sandbox import box

from .conftest import fault, make_query, needs_mininet

pytestmark = needs_mininet
ROOT = Path(__file__).parents[2]


def test_a_node_command_runs_boxed_by_default_and_unboxed_only_with_unsandboxed(route_env):
    query = make_query([fault("disable_routing", "ip_forward_off", 2)], subnets=2, hosts=1)
    probe = "id -u; hostname; ls / | tr '\\n' ' '"
    route_env.reset(query)
    router = route_env.topology.router
    boxed = route_env.step(action(router, probe)).output.split("\n")
    assert int(boxed[0]) >= box.UID_BASE and boxed[1] == router and "root" not in boxed[2].split()
    unboxed_env = APP.make_environment(RunOptions(sandboxed=False))
    try:
        unboxed_env.reset(query)
        output = unboxed_env.step(action(unboxed_env.topology.router, probe)).output.split("\n")
        assert output[0] == "0" and "root" in output[2].split()
    finally:
        unboxed_env.close()


def test_without_boxes_the_app_is_unavailable_with_the_fix_unless_unsandboxed():
    code = ("from pytest_netarena.apps.route import APP\nfrom pytest_netarena.core.app import RunOptions\n"
            "from pytest_netarena.core.errors import BackendUnavailable\n"
            "try:\n    APP.make_environment(RunOptions()).close()\n    print('MADE')\n"
            "except BackendUnavailable as error:\n    print('UNAVAILABLE', error)\n"
            "APP.make_environment(RunOptions(sandboxed=False)).close()\nprint('UNSANDBOXED MADE')\n")
    env = {**os.environ, "NETARENA_BWRAP": "/nonexistent/bwrap", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "UNAVAILABLE" in result.stdout and "MADE\n" not in result.stdout.replace("UNSANDBOXED MADE", "")
    assert "--unsandboxed" in result.stdout and "UNSANDBOXED MADE" in result.stdout, result.stderr
