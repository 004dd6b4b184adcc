"""Scores reproduce: one seed, run twice in fresh processes, gives the same queries and the same transcripts."""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = "424242"
#: fields that measure time, not behaviour, and the opaque episode id (random, so it tells an agent nothing)
TIMING = re.compile(r"(_s|_at|_ms)$|^episode_id$")
#: clocks in command output: ping's round-trip times ("time=0.041 ms", "rtt min/avg/max/mdev = ... ms") and
#: iptables-save's dates, kubectl's AGE column ("5s", "2m3s": objects are stamped with the wall clock when an environment starts)
#: identifiers the kernel hands out (interface indexes, random MAC addresses and the link-local addresses made
#: from them, still "tentative" while the kernel checks them for duplicates), not the agent's doing
KERNEL = re.compile(r"@if\d+|(?<=link/ether )[0-9a-f:]{17}|fe80::[0-9a-f:]+(/64 scope link)?( tentative)?")
CLOCKS = re.compile(r"(?<=on )\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}|time=\d+(\.\d+)? ms|= [\d./]+ ms|(?<= )\d+[smhd](\d+[smh])? +(?=\S)")


def same_names(episode: dict) -> dict:
    """The episode with its network's name prefix (random per process, so that workers never collide) made fixed."""
    found = re.search(r"Router (\w+?)r0 ", episode.get("first_observation", ""))
    if not found:
        return episode
    return json.loads(json.dumps(episode).replace(found.group(1), "NET"))


def without_timing(value):
    """value with every timing field dropped and round-trip times blanked."""
    if isinstance(value, dict):
        return {key: without_timing(item) for key, item in value.items() if not TIMING.search(key)}
    if isinstance(value, list):
        return [without_timing(item) for item in value]
    if isinstance(value, str):
        return KERNEL.sub("K", CLOCKS.sub("T", value))
    return value


def run_once(app: str, where: Path) -> list[dict]:
    """The episodes of one run of the app's suite in a fresh python process (one process: node names are stable)."""
    where.mkdir()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONHASHSEED": "random"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "suites" / app), f"--seed={SEED}", "--queries=1",
         "--levels=1", "--agent=builtin:oracle", "--agent=builtin:expert", "-p", "no:randomly", "-p", "no:xdist",
         f"--reports-dir={where}", "-q", "-o", "netarena_plots=false"],  # k8s: the default mode, live where it can
        cwd=where, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    if " skipped" in done.stdout and " passed" not in done.stdout and " failed" not in done.stdout:
        pytest.skip(f"the {app} suite skipped here: {done.stdout.strip().splitlines()[-1]}")
    (path,) = where.glob("*/episodes.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("app", ["k8s", "route", "malt"])
def test_the_same_seed_gives_the_same_queries_and_transcripts(app: str, tmp_path: Path) -> None:
    first, second = run_once(app, tmp_path / "first"), run_once(app, tmp_path / "second")
    key = lambda episode: (episode["query"]["id"], episode["agent"], episode["trial"])  # noqa: E731
    first, second = sorted(first, key=key), sorted(second, key=key)
    assert {episode["agent"] for episode in first} == {"builtin:oracle", "builtin:expert"}
    assert len(first) >= 6 and [e["query"] for e in first] == [e["query"] for e in second]
    if app == "k8s":  # the pods ran where they can: the live mode is the one that reproduces here
        from pytest_netarena.cluster import live_support

        assert {e["setting"] for e in first} == {"live" if live_support().ok else "api-only"}
    for one, other in zip(first, second):
        one, other = (json.dumps(without_timing(same_names(episode)), indent=1, sort_keys=True)
                      for episode in (one, other))
        assert one == other, "\n".join(list(difflib.unified_diff(one.splitlines(), other.splitlines(), n=0))[:8])
