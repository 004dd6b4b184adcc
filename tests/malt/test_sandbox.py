"""Agent code that misbehaves is recorded as an agent error (or unsafe) and the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.environment import MaltEnvironment
from pytest_netarena.sandbox.forkserver import ChildLimits
from pytest_netarena.core.app import RunOptions

from .conftest import SMALL

#: a file of the harness outside the box: this checkout's build file
HARNESS_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"


@pytest.fixture(scope="module")
def env(small_graph):
    environment = MaltEnvironment(small_graph, ChildLimits(cpu_s=1, wall_s=3, memory_mb=256, output_bytes=2**21))
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
    "fork bomb": ("import os\ndef process_graph(graph_data):\n    while True:\n        os.fork()",
                  "BlockingIOError: [Errno 11] Resource temporarily unavailable"),
    "reading a harness file": (f"def process_graph(graph_data):\n    return open({str(HARNESS_FILE)!r}).read()",
                               "No such file or directory"),
    "subprocess": ("import subprocess\ndef process_graph(graph_data):\n    return subprocess.run(['id'])",
                   "Error"),
    "writing a file": ("def process_graph(graph_data):\n    open('out.txt', 'w').write('x')", "PermissionError"),
    "no function": ("answer = 42", "does not define process_graph"),
    "another function name": ("def solve(graph):\n    return 1", "it defines solve"),
    "exiting": ("import os\ndef process_graph(graph_data):\n    os._exit(0)", "without returning a result"),
    "not JSON": ("def process_graph(graph_data):\n    return object()", "cannot be returned"),
    "not a dict": ("def process_graph(graph_data):\n    return [1, 2]", "bad return value: process_graph returned a bare list"),
    "bare graph": ("def process_graph(graph_data):\n    return graph_data",
                   'bad return value: process_graph returned a bare graph; wrap it: {"type": "graph"'),
    "bare number": ("def process_graph(graph_data):\n    return 16", '{"type": "text", "data": 16}'),
    "no return": ("def process_graph(graph_data):\n    graph_data.number_of_nodes()", "returned None"),
    "a pair": ("def process_graph(graph_data):\n    return 'text', 3", "return a dict instead"),
    "bad type": ("def process_graph(graph_data):\n    return {'type': 'count', 'data': 3}", "(for this answer use 'text')"),
    "answer not data": ("def process_graph(graph_data):\n    return {'type': 'text', 'answer': 3}", "name it 'data'"),
    "bad graph": ("def process_graph(graph_data):\n    return {'type': 'graph', 'updated_graph': {'nodes': [1]}}",
                  "node-link" ),
    "NaN": ("def process_graph(graph_data):\n    return {'type': 'text', 'data': 1} if False else float('nan')",
            "Out of range float values"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_code_shows_its_error_and_the_episode_goes_on(env, queries, case):
    body, message = BAD[case]
    env.reset(queries["list"])
    outcome = env.step(code(body))
    assert not outcome.done and outcome.agent_error is None and message in outcome.output, outcome.output
    assert message in outcome.observation and "process_graph(graph_data)" in outcome.observation
    assert not env.judge().correct and message in env.judge().details


def test_the_answer_runs_boxed_with_a_private_uid_and_no_network(env):
    import os

    if os.geteuid() != 0:
        pytest.skip("private uids need root")
    body = ("import os\ndef process_graph(graph_data):\n"
            "    return [os.getuid(), os.getcwd(), sorted(os.listdir('/')), open('/proc/net/dev').read().count(':'),"
            " open('/proc/self/status').read().split('CapEff:')[1].split()[0], len([p for p in os.listdir('/proc') if p.isdigit()])]")
    result = env.sandbox.run(body)
    assert result.ok, result.error
    uid, cwd, top, interfaces, caps, processes = result.value
    from pytest_netarena.sandbox.box import UID_BASE

    assert uid >= UID_BASE and cwd == "/"
    assert "work" not in top and "root" not in top
    assert interfaces == 1 and caps == "0000000000000000"
    assert processes <= 3  # its own PID namespace: the box's init, the zygote and itself


def test_reply_without_code_is_a_refused_step_not_the_end(env, queries):
    env.reset(queries["list"])
    outcome = env.step("I think the answer is 42.")
    assert outcome.agent_error is None and not outcome.done
    assert outcome.refused and "no Python code" in outcome.output and not env.judge().correct


def test_code_is_found_amid_prose_and_unlabelled_fences(env, queries):
    from pytest_netarena.apps.malt.agents.builtin import oracle_code

    query = queries["rank"]
    env.reset(query)
    reply = f"Sure! Here is my reasoning.\n\n```\n{oracle_code(query)}\n```\nHope this helps."
    outcome = env.step(reply)
    assert outcome.agent_error is None and env.judge().correct


def test_read_only_question_returning_a_changed_graph_is_unsafe(env, queries):
    env.reset(queries["list"])
    parent = queries["list"].params["program"][0]["parent"]
    in_place = ("def process_graph(graph_data):\n"
                f"    kids = sorted(c for c, e in graph_data.succ[{parent!r}].items() if e['type'] == 'RK_CONTAINS' and c != {parent!r})\n"
                "    graph_data.nodes[kids[0]]['note'] = 'touched'\n"
                "    return {'type': 'list', 'data': kids}")
    outcome = env.step(code(in_place))
    # its own copy: changing it in place harms nothing, and only the returned graph is judged
    assert env.judge().correct and outcome.violations == ()
    env.reset(queries["list"])
    returned = in_place.replace("return {'type': 'list', 'data': kids}",
                                "return {'type': 'list', 'data': kids, 'updated_graph': graph_data}")
    outcome = env.step(code(returned))
    assert any("read-only question returned a changed graph" in v for v in outcome.violations)


def test_the_run_continues_after_errors(env, queries):
    from pytest_netarena.apps.malt.agents.builtin import oracle_code

    for body, _ in BAD.values():
        env.reset(queries["add"])
        env.step(code(body))
    query = queries["remove+count"]
    env.reset(query)
    outcome = env.step(code(oracle_code(query)))
    assert outcome.agent_error is None and outcome.violations == () and env.judge().correct


def test_a_dead_zygote_is_restarted(env, queries):
    from pytest_netarena.apps.malt.agents.builtin import oracle_code

    env.sandbox.run("def process_graph(graph_data):\n    return 1")
    env.sandbox.process.kill()
    env.sandbox.process.wait()
    query = queries["list"]
    env.reset(query)
    outcome = env.step(code(oracle_code(query)))
    assert outcome.agent_error is None and env.judge().correct


def test_cpu_limit_is_enforced_apart_from_wall_time(small_graph):
    from pytest_netarena.apps.malt import runtime

    sandbox = runtime.box(small_graph, ChildLimits(cpu_s=1, wall_s=60))
    try:
        result = sandbox.run("def process_graph(graph_data):\n    while True:\n        pass")
    finally:
        sandbox.close()
    assert not result.ok and result.error == "CPU time limit of 1 s exceeded"


def test_agent_code_does_not_see_the_graders_environment(small_graph, monkeypatch):
    from pytest_netarena.apps.malt import runtime

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    sandbox = runtime.box(small_graph, boxed=False)  # even unboxed: no environment is passed on
    try:
        result = sandbox.run("import os\ndef process_graph(graph_data):\n    return dict(os.environ)")
    finally:
        sandbox.close()
    assert result.ok and "OPENAI_API_KEY" not in result.value and "sk-secret" not in str(result.value)


def test_without_boxes_the_app_is_unavailable_unless_unsandboxed(monkeypatch, tmp_path):
    from pytest_netarena import sandbox
    from pytest_netarena.core.errors import BackendUnavailable

    monkeypatch.setenv("NETARENA_BWRAP", str(tmp_path / "no-bwrap"))
    sandbox.support.cache_clear()
    try:
        with pytest.raises(BackendUnavailable, match="needs sealed boxes.*--unsandboxed"):
            APP.make_environment(RunOptions(extra={"malt_topology": SMALL}))
        unboxed = APP.make_environment(RunOptions(extra={"malt_topology": SMALL}, sandboxed=False))
        try:
            result = unboxed.sandbox.run("def process_graph(graph_data):\n    return graph_data.number_of_nodes()")
        finally:
            unboxed.close()
        assert result.ok and result.value > 0 and not unboxed.boxed
    finally:
        sandbox.support.cache_clear()


NUMPY_SHAPES = {
    "list": "np.array(truth)",
    "rank": "[(np.str_(name), np.int64(capacity)) for name, capacity in truth]",
    "remove+count": "np.int64(truth)",
}


@pytest.mark.parametrize("category", sorted(NUMPY_SHAPES))
def test_an_answer_importing_numpy_and_returning_numpy_values_is_graded_correctly(env, queries, category):
    query = queries[category]
    env.reset(query)
    truth = env.expected["data"]
    edit = ""
    if query.params["mutates"]:  # remove+count: make the change on the graph it returns
        removed = query.params["program"][0]["name"]
        edit = f"    graph_data.remove_node({removed!r})\n"
    kind = "text" if category.endswith("count") else "list"
    graph = ", 'updated_graph': nx.node_link_data(graph_data, edges='edges')" if edit else ""
    reply = code(f"import numpy as np\n\ndef process_graph(graph_data):\n{edit}    truth = {truth!r}\n"
                 f"    return {{'type': {kind!r}, 'data': {NUMPY_SHAPES[category]}{graph}}}")
    outcome = env.step(reply)
    assert outcome.agent_error is None, outcome.agent_error
    assert env.judge().correct, env.judge().details


def test_numpy_values_come_back_as_plain_json_with_their_types_noted(env):
    result = env.sandbox.run(
        "import numpy as np\n"
        "def process_graph(graph_data):\n"
        "    caps = np.array([1, 2, 3])\n"
        "    return {'sum': caps.sum(), 'mean': caps.mean(), 'caps': caps, 'flag': caps.any(), 'pair': (1, 2),"
        " 'names': {'b', 'a'}, 'grid': np.zeros((2, 2), dtype=np.int32)}")
    assert result.ok, result.error
    assert result.value == {"sum": 6, "mean": 2.0, "caps": [1, 2, 3], "flag": True, "pair": [1, 2],
                            "names": ["a", "b"], "grid": [[0, 0], [0, 0]]}
    assert type(result.value["sum"]) is int and type(result.value["flag"]) is bool
    assert dict(result.kinds) == {("sum",): "numpy.int64", ("mean",): "numpy.float64", ("caps",): "numpy.ndarray",
                                  ("flag",): "numpy.bool", ("pair",): "tuple", ("names",): "set",
                                  ("grid",): "numpy.ndarray"}
