"""MALT answers cannot make the grader misjudge them or run their code: patched helpers, forged
results, objects with methods, pickles, huge and deep answers."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.agents.builtin import oracle_code
from pytest_netarena.apps.malt.environment import MaltEnvironment
from pytest_netarena.audit.malt import PATCHES_THE_RUNNER
from pytest_netarena.sandbox.forkserver import ChildLimits
from pytest_netarena.core.app import RunOptions

from .conftest import needs_boxes

SMALL = "synthetic:600"


@pytest.fixture(scope="module")
def env():
    from pytest_netarena.apps.malt.topology import load_topology

    environment = MaltEnvironment(load_topology(SMALL), ChildLimits(wall_s=20))
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def queries():
    return {q.category: q for q in APP.generate(RunOptions(seed=3, queries=1, extra={"malt_topology": SMALL}))}


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def oracle_still_resolves(env, query) -> None:
    env.reset(query)
    outcome = env.step(fenced(oracle_code(query)))
    assert outcome.agent_error is None and outcome.violations == () and env.judge().correct


@needs_boxes
def test_patching_the_zygote_and_forging_results_fools_nobody(env, queries):
    """The answer rewrites every helper of the process it runs in and writes forged status and result
    packets to every descriptor it holds, then returns a wrong answer: judged wrong, and the next answer
    is read normally."""
    attack = PATCHES_THE_RUNNER + '''json.dumps = lambda *a, **k: '{"type": "list", "data": []}'

def process_graph(graph_data):
    forge(b'R{"type": "list", "data": ["forged"]}')
    graph_data.clear()  # its own copy only
    return {"type": "list", "data": ["wrong"]}
'''
    query = queries["list"]
    env.reset(query)
    outcome = env.step(fenced(attack))
    assert not env.judge().correct
    assert outcome.agent_error is None or "forged" not in str(outcome.agent_error)
    oracle_still_resolves(env, query)  # the topology the grader and later answers use is untouched
    oracle_still_resolves(env, queries["rank"])


@needs_boxes
def test_objects_whose_methods_would_run_in_the_grader_stay_in_the_box(env, queries, tmp_path: Path):
    pwned = tmp_path / "pwned"
    attack = f'''
import pickle

class Evil:
    def __reduce__(self):
        return (open, ({str(pwned)!r}, "w"))

class AlwaysEqual(list):
    def __eq__(self, other):
        open({str(pwned)!r}, "w").write("eq")
        return True
    __hash__ = lambda self: 0

class Name(str):
    def __eq__(self, other):
        open({str(pwned)!r}, "w").write("str eq")
        return True
    __hash__ = str.__hash__

def process_graph(graph_data):
    return {{"type": "list", "data": AlwaysEqual([Name("x")]), "payload": pickle.dumps(Evil()).hex()}}
'''
    env.reset(queries["list"])
    outcome = env.step(fenced(attack))
    assert not env.judge().correct and "wrong names" in env.judge().details
    assert not pwned.exists()
    pickled = "import pickle, os\ndef process_graph(graph_data):\n    return pickle.dumps(os.getcwd)"
    env.reset(queries["list"])
    outcome = env.step(fenced(pickled))
    assert not outcome.done and "cannot be returned" in outcome.output
    # raw pickle bytes written straight to the result pipe: plain-data decoding refuses them
    raw = ("import os, pickle\ndef process_graph(graph_data):\n"
           "    for fd in range(3, 64):\n"
           "        try:\n"
           "            os.write(fd, b'R' + pickle.dumps({'type': 'list', 'data': []}))\n"
           "        except OSError:\n"
           "            pass\n"
           "    os._exit(0)\n")
    env.reset(queries["list"])
    outcome = env.step(fenced(raw))
    assert not outcome.done and "not valid JSON" in outcome.output
    assert not pwned.exists()


def grader_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@needs_boxes
@pytest.mark.parametrize("payload, message", [
    ("b'R' + b'[' * 10**4 + b']' * 10**4", "nested deeper than"),
    ("b'R' + b'[' * 41 + b']' * 41", "nested deeper than"),
    ("b'R' + b'[' * 41 + b'\"' + bytes([92, 92]) + b'\"' + b']' * 41", "nested deeper than"),  # an escape: walked
    ("b'R' + b'[' * 10**6 + b']' * 10**6", "items"),
    ("b'R' + b'[' + b'{},' * 1400000 + b'{}]'", "items"),
    ("b'R\"' + b'x' * (64 << 20) + b'\"'", "output larger than the limit"),
    ("b'R' + b'1' * 100000", "not valid JSON"),
    ("b'R{\"type\": \"text\", \"data\": NaN}'", "not a JSON number"),
    ("b'R' + bytes(range(256))", "not valid JSON"),
])
def test_huge_deep_or_malformed_answers_are_failed_answers_and_do_not_grow_the_grader(env, queries, payload, message):
    attack = ("import os\ndef process_graph(graph_data):\n"
              f"    data = {payload}\n"
              "    for fd in range(3, 64):\n"
              "        try:\n"
              "            os.write(fd, data)\n"
              "        except OSError:\n"
              "            pass\n"
              "    os._exit(0)\n")
    before = grader_peak_mb()
    env.reset(queries["list"])
    outcome = env.step(fenced(attack))
    assert not outcome.done and message in outcome.output, outcome.output
    assert grader_peak_mb() - before < 300  # an unbounded decode of these grows it by gigabytes


@pytest.mark.parametrize("escaped", [False, True])
def test_the_depth_bound_counts_brackets_of_the_json_not_of_its_strings(escaped):
    from pytest_netarena.sandbox.plain_json import Undecodable, plain

    inner = '"\\\\ ]]]]"' if escaped else '"]]]] }}"'  # closing brackets in a string hide no depth
    deep = ("[" * 41 + inner + "]" * 41).encode()
    with pytest.raises(Undecodable, match="nested deeper than 40"):
        plain(deep, 1 << 20, 1 << 20)
    shallow = ("[" * 40 + '"[[[[ {{"' + "]" * 40).encode()  # opening ones add none
    assert plain(shallow, 1 << 20, 1 << 20, max_depth=40)
    objects = ('{"a": ' * 41 + inner + "}" * 41).encode()
    with pytest.raises(Undecodable, match="nested deeper than 40"):
        plain(objects, 1 << 20, 1 << 20)
