"""Agent code that misbehaves is recorded as an agent error (or unsafe) and the run goes on."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.environment import MaltEnvironment
from pytest_netarena.apps.malt.sandbox import Limits
from pytest_netarena.core.app import RunOptions

from .conftest import SMALL


@pytest.fixture(scope="module")
def env(small_graph):
    environment = MaltEnvironment(small_graph, Limits(cpu_s=1, wall_s=3, memory_mb=256, output_bytes=2**21))
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def queries():
    generated = APP.generate(RunOptions(seed=3, queries=1, extra={"malt_topology": SMALL}))
    return {query.category: query for query in generated}


def code(body: str) -> str:
    return f"```python\n{body}\n```"


BAD = {
    "syntax error": ("def process_graph(graph_data)\n    return 1", "SyntaxError"),
    "exception": ("def process_graph(graph_data):\n    return 1 / 0", "ZeroDivisionError: division by zero (line 2"),
    # on a loaded machine 1 s of CPU can take more than 3 s of wall time: either limit may fire first
    "infinite loop": ("def process_graph(graph_data):\n    while True:\n        pass", "time limit of"),
    "sleeping": ("import time\ndef process_graph(graph_data):\n    time.sleep(60)", "wall-clock time limit of 3 s exceeded"),
    "huge output": ("def process_graph(graph_data):\n    return {'type': 'text', 'data': 'x' * 10**7}",
                    "output larger than the limit"),
    "memory hog": ("def process_graph(graph_data):\n    return [bytearray(2**20) for _ in range(4096)]", "MemoryError"),
    "fork bomb": ("import os\ndef process_graph(graph_data):\n    while True:\n        os.fork()", "os.fork is not allowed"),
    "reading /etc/passwd": ("def process_graph(graph_data):\n    return open('/etc/passwd').read()",
                            "opening '/etc/passwd' is not allowed"),
    "opening a socket": ("import socket\ndef process_graph(graph_data):\n    socket.create_connection(('127.0.0.1', 22))",
                         "importing socket is not allowed"),
    "os.system": ("import os\ndef process_graph(graph_data):\n    return os.system('id')", "os.system is not allowed"),
    "subprocess": ("import subprocess\ndef process_graph(graph_data):\n    return subprocess.run(['id'])",
                   "importing subprocess is not allowed"),
    "writing a file": ("def process_graph(graph_data):\n    open('out.txt', 'w').write('x')", "opening 'out.txt' is not allowed"),
    "no function": ("answer = 42", "does not define process_graph"),
    "exiting": ("import os\ndef process_graph(graph_data):\n    os._exit(0)", "without returning a result"),
    "not JSON": ("def process_graph(graph_data):\n    return object()", "cannot be returned"),
    "not a dict": ("def process_graph(graph_data):\n    return [1, 2]", "bad return value: process_graph must return a dict"),
    "bad type": ("def process_graph(graph_data):\n    return {'type': 'table', 'data': []}", "'type' must be one of"),
    "bad graph": ("def process_graph(graph_data):\n    return {'type': 'graph', 'updated_graph': {'nodes': [1]}}",
                  "node-link" ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_code_is_an_agent_error(env, queries, case):
    body, message = BAD[case]
    env.reset(queries["list"])
    outcome = env.step(code(body))
    assert outcome.done and outcome.agent_error and message in outcome.agent_error, outcome.agent_error
    assert not env.judge().correct


def test_the_sandbox_is_unprivileged_and_offline(env):
    import os

    if os.geteuid() != 0:
        pytest.skip("dropping privileges and network namespaces need root")
    body = ("import os\ndef process_graph(graph_data):\n"
            "    return [os.getuid(), os.getgid(), os.getcwd(), open('/proc/net/dev').read()]")
    result = env.sandbox.run(body.replace("open('/proc/net/dev').read()", "''"))
    uid, gid, cwd, _ = result.value
    assert (uid, gid) == (65534, 65534) and "malt-sandbox-" in cwd
    listing = env.sandbox.run("import os\ndef process_graph(graph_data):\n    return os.listdir('/sys/class/net')")
    assert not listing.ok and "os.listdir is not allowed" in listing.error


def test_confinement_leaves_only_loopback_and_no_way_to_fork():
    import json
    import os
    import subprocess
    import sys

    from pytest_netarena.apps.malt import zygote

    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    script = (
        "import json, os, sys, zygote\n"
        "out = os.dup(1)\n"
        "zygote.confine(json.loads(sys.argv[1]), '/')\n"
        "net = open('/proc/self/net/dev').read().split()\n"
        "try:\n    pid = os.fork()\nexcept OSError as error:\n    pid = str(error)\n"
        "if pid == 0:\n    os._exit(0)\n"
        "os.write(out, json.dumps([os.getuid(), [w for w in net if w.endswith(':')], pid]).encode())\n"
    )
    limits = {"cpu_s": 5, "memory_mb": 256, "fsize_bytes": 0, "nproc": 1}
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(limits)], capture_output=True, check=False,
                          cwd=os.path.dirname(zygote.__file__), timeout=60)
    assert proc.returncode == 0, proc.stderr
    uid, interfaces, fork = json.loads(proc.stdout)
    assert uid == 65534 and interfaces == ["lo:"]
    assert "Resource temporarily unavailable" in str(fork)


def test_reply_without_code_is_an_agent_error(env, queries):
    env.reset(queries["list"])
    outcome = env.step("I think the answer is 42.")
    assert outcome.agent_error and "no Python code" in outcome.agent_error and outcome.refused


def test_code_is_found_amid_prose_and_unlabelled_fences(env, queries):
    from pytest_netarena.apps.malt.agents import oracle_code

    query = queries["rank"]
    env.reset(query)
    reply = f"Sure! Here is my reasoning.\n\n```\n{oracle_code(query)}\n```\nHope this helps."
    outcome = env.step(reply)
    assert outcome.agent_error is None and env.judge().correct


def test_read_only_question_changing_the_graph_is_unsafe(env, queries):
    env.reset(queries["list"])
    parent = queries["list"].params["program"][0]["parent"]
    in_place = ("def process_graph(graph_data):\n"
                f"    kids = sorted(c for c, e in graph_data.succ[{parent!r}].items() if e['type'] == 'RK_CONTAINS' and c != {parent!r})\n"
                "    graph_data.nodes[kids[0]]['note'] = 'touched'\n"
                "    return {'type': 'list', 'data': kids}")
    outcome = env.step(code(in_place))
    assert env.judge().correct
    assert any("in place" in v for v in outcome.violations)
    env.reset(queries["list"])
    returned = in_place.replace("return {'type': 'list', 'data': kids}",
                                "return {'type': 'list', 'data': kids, 'updated_graph': graph_data}")
    outcome = env.step(code(returned))
    assert any("read-only question returned a changed graph" in v for v in outcome.violations)


def test_the_run_continues_after_errors(env, queries):
    from pytest_netarena.apps.malt.agents import oracle_code

    for body, _ in BAD.values():
        env.reset(queries["add"])
        env.step(code(body))
    query = queries["remove+count"]
    env.reset(query)
    outcome = env.step(code(oracle_code(query)))
    assert outcome.agent_error is None and outcome.violations == () and env.judge().correct


def test_a_dead_zygote_is_restarted(env, queries):
    from pytest_netarena.apps.malt.agents import oracle_code

    env.sandbox.run("def process_graph(graph_data):\n    return 1")
    env.sandbox.process.kill()
    env.sandbox.process.wait()
    query = queries["list"]
    env.reset(query)
    outcome = env.step(code(oracle_code(query)))
    assert outcome.agent_error is None and env.judge().correct
    assert env.sandbox.isolation.get("netns") in (True, False)


def test_cpu_limit_is_enforced_apart_from_wall_time(small_graph):
    from pytest_netarena.apps.malt.sandbox import Sandbox, node_link_json

    sandbox = Sandbox(node_link_json(small_graph), Limits(cpu_s=1, wall_s=60))
    try:
        result = sandbox.run("def process_graph(graph_data):\n    while True:\n        pass")
    finally:
        sandbox.close()
    assert not result.ok and result.error == "CPU time limit of 1 s exceeded"


def test_agent_code_does_not_see_the_graders_environment(small_graph, monkeypatch):
    from pytest_netarena.apps.malt.sandbox import Sandbox, node_link_json

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    sandbox = Sandbox(node_link_json(small_graph))
    try:
        result = sandbox.run("import os\ndef process_graph(graph_data):\n    return dict(os.environ)")
    finally:
        sandbox.close()
    assert result.ok and "OPENAI_API_KEY" not in result.value and "sk-secret" not in str(result.value)
