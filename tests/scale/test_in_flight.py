"""--in-flight K: several episodes at once per process, each in an environment of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SLOW_AGENT = """
import os, threading, time
from pathlib import Path
from pytest_netarena.core.types import Reply
from toy_app import ToyAgent

class Agent(ToyAgent):
    '''Solves the toy task after thinking 0.3 s per reply; logs (pid, thread, start, end) of each reply.'''
    def answer(self, target):
        started = time.monotonic()
        time.sleep(0.3)
        with open(Path(os.environ["SLOW_LOG"]), "a") as log:
            log.write(f"{os.getpid()} {threading.get_ident()} {started} {time.monotonic()}\\n")
        return Reply(f"set {target}")
"""


@pytest.fixture
def slow(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    toy.makepyfile(slow_agent=SLOW_AGENT)
    monkeypatch.setenv("SLOW_LOG", str(toy.path / "replies.log"))
    return toy


def most_at_once(log: Path) -> dict[str, int]:
    """Per process, the largest number of replies being thought about at the same moment."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for line in log.read_text().splitlines():
        pid, _, start, end = line.split()
        spans.setdefault(pid, []).append((float(start), float(end)))
    return {pid: max(sum(s <= start < e for s, e in items) for start, _ in items) for pid, items in spans.items()}


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_episodes_run_side_by_side_each_with_its_own_environment(slow: pytest.Pytester, workers) -> None:
    result = slow.runpytest_subprocess("--agent=python:slow_agent:Agent", "--seed=2", "--queries=4", "--in-flight=3",
                                       *workers)
    # The toy environment holds one counter: episodes sharing one would overwrite each other's target.
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["*netarena: 3 episodes in flight per process*"])
    overlap = most_at_once(slow.path / "replies.log")
    assert len(overlap) == (2 if workers else 1) and all(n >= 2 for n in overlap.values()), overlap
    assert all(n <= 3 for n in overlap.values()), overlap
    (run,) = (slow.path / "reports").glob("*/episodes.jsonl")
    assert len({json.loads(line)["query"]["id"] for line in run.read_text().splitlines()}) == 8


def test_only_a_process_that_ends_with_the_run_freezes_its_heap(slow: pytest.Pytester) -> None:
    import gc

    # in process (pytester's inline run), the heap is the test runner's: nothing more may be frozen (tests/conftest.py
    # froze what the runner collected; frozen objects that are freed leave the count, so it may fall)
    before = gc.get_freeze_count()
    slow.runpytest_inprocess("--agent=python:slow_agent:Agent", "--seed=2", "--queries=1", "--in-flight=2"
                             ).assert_outcomes(passed=2)
    assert gc.get_freeze_count() <= before
    # a pytest of its own freezes it as it ends (pytest's five final collections then skip it)
    slow.makeconftest("import atexit, gc\n"
                      "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n")
    result = slow.runpytest_subprocess("--agent=python:slow_agent:Agent", "--seed=2", "--queries=1", "--in-flight=2",
                                       "-s")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*frozen at exit: True*"])


WAITING_APP = """
from toy_app import CounterApp

class WaitingApp(CounterApp):
    episodes_in_flight = {flight}
    concurrent_environments = {concurrent}

APP = WaitingApp()
"""


@pytest.mark.parametrize(("flight", "concurrent", "args", "expected"), [
    (3, True, (), 3),  # the app's own default, whatever the agent (route's case)
    (3, True, ("--in-flight=1",), 1),  # the run says otherwise
    (1, True, (), 1),  # an app that does not ask keeps its episodes on the test's thread
    (3, False, ("--in-flight=3",), 1),  # environments that cannot live side by side never fly
], ids=["app-default", "in-flight-1-wins", "default-one", "not-concurrent"])
def test_an_app_sets_its_own_episodes_in_flight(slow: pytest.Pytester, flight, concurrent, args, expected) -> None:
    slow.makepyfile(waiting_app=WAITING_APP.format(flight=flight, concurrent=concurrent))
    slow.makeini("[pytest]\nnetarena_apps = toy = waiting_app:APP\nnetarena_plots = false\n")
    result = slow.runpytest_subprocess("--agent=python:slow_agent:Agent", "--seed=2", "--queries=4", *args)
    result.assert_outcomes(passed=8)
    (overlap,) = most_at_once(slow.path / "replies.log").values()
    assert overlap == expected


def test_flight_counts() -> None:
    from pytest_netarena.apps import get_app
    from pytest_netarena.scale.inflight import flies, flight

    route, k8s = get_app("route"), get_app("k8s")
    assert flight(None, [route, k8s]) == 3 and flight(None, [k8s]) == 1 and flight(None, []) == 1
    assert flight(1, [route]) == 1 and flight(5, [k8s]) == 5
    assert flies(None, route) and not flies(None, k8s) and flies(2, k8s) and not flies(1, route)
