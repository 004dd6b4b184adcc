"""One's own agent (python:MODULE:ATTR) is debuggable: tracebacks kept, wrong return types named, bad specs one error."""

from __future__ import annotations

import json
import sys

import pytest

AGENTS = """
class Raising:
    def reset(self, task):
        pass
    def act(self, observation):
        return helper(observation)
    def close(self):
        pass

def helper(observation):
    raise KeyError("no such counter")

class ReturnsNone(Raising):
    def act(self, observation):
        return None

class ReturnsBytes(Raising):
    def act(self, observation):
        return b"set 3"

class ReturnsDict(Raising):
    def act(self, observation):
        return {"command": "set 3"}

class NoReset:
    def act(self, observation):
        return "set 3"
    def close(self):
        pass

def factory_of_nothing():
    return 42
"""


@pytest.fixture
def agents(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # another test of this worker may have imported a module of the same name: this file's must be read
    monkeypatch.delitem(sys.modules, "my_agents", raising=False)
    toy.makepyfile(my_agents=AGENTS)
    toy.syspathinsert()
    return toy


def episodes_of(pytester: pytest.Pytester) -> list[dict]:
    (path,) = (pytester.path / "reports").glob("*/episodes.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_exception_in_act_keeps_its_traceback(agents: pytest.Pytester) -> None:
    result = agents.runpytest("--agent=python:my_agents:Raising", "--queries=1")
    result.assert_outcomes(failed=2)
    (first, _) = episodes_of(agents)
    assert first["outcome"] == "agent_error"
    details = first["details"]
    assert "Traceback (most recent call last)" in details
    assert "my_agents.py" in details and "in helper" in details and "KeyError: 'no such counter'" in details
    # the terminal shows the traceback's tail: where it was raised
    result.stdout.fnmatch_lines(["*in helper*", "*KeyError: 'no such counter'*"])


@pytest.mark.parametrize(("name", "said"), [
    ("ReturnsNone", "act() returned None, not text: return the reply as a str (or a Reply)"),
    ("ReturnsBytes", "act() returned bytes (b'set 3'), not text: decode it, e.g. reply.decode()"),
    ("ReturnsDict", "act() returned dict ({'command': 'set 3'}), not text: return the reply as a str (or a Reply)"),
])
def test_a_reply_that_is_not_text_is_an_agent_error_naming_it(agents: pytest.Pytester, name: str, said: str) -> None:
    result = agents.runpytest(f"--agent=python:my_agents:{name}", "--queries=1")
    result.assert_outcomes(failed=2)
    for episode in episodes_of(agents):
        assert episode["outcome"] == "agent_error" and episode["steps"] == []
        assert said in episode["details"]
    result.stdout.fnmatch_lines([f"*{said}*"])


@pytest.mark.parametrize(("spec", "said"), [
    ("python:my_agents:Missing", "python:my_agents:Missing: module my_agents has no attribute 'Missing'"),
    ("python:my_agents:NoReset", "python:my_agents:NoReset gives an object without reset(): an agent needs "
                                 "reset(task), act(observation) and close()"),
    ("python:my_agents:factory_of_nothing", "python:my_agents:factory_of_nothing gives int, not an agent: an agent "
                                            "needs reset(task), act(observation) and close()"),
])
def test_a_bad_python_spec_is_one_usage_error_before_collection(agents: pytest.Pytester, spec: str, said: str) -> None:
    result = agents.runpytest(f"--agent={spec}", "--queries=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and said in errors[0], errors
    assert "Traceback" not in result.stdout.str() and not (agents.path / "reports").exists()
