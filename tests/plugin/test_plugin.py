"""The plugin end to end in pytester: options, parametrization, outcomes, reports, xdist."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET

import pytest



def run_dir(pytester: pytest.Pytester):
    (folder,) = (pytester.path / "reports").iterdir()
    return folder


def read_summary(pytester: pytest.Pytester) -> dict:
    return json.loads((run_dir(pytester) / "summary.json").read_text())

# the toy app has 2 categories (levels 1 and 2); 3 queries each by default
DEFAULT_EPISODES = 6


def test_oracle_resolves_every_episode_and_reports_are_written(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--seed=7")
    result.assert_outcomes(passed=DEFAULT_EPISODES)
    result.stdout.fnmatch_lines(
        ["*netarena: seed=7 agents=builtin:oracle*", "*netarena summary*", "toy, builtin:oracle:", "* ALL*100.0%*",
         "*report: *report.html"]
    )
    folder = run_dir(toy)
    assert "toy-L2-set+set-0002" in (folder / "report.html").read_text()
    run = json.loads((folder / "run.json").read_text())
    assert run["seed"] == 7 and run["agents"] == ["builtin:oracle"]
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == DEFAULT_EPISODES
    assert all(e["outcome"] == "resolved" and len(e["steps"]) == 1 for e in episodes)
    (group,) = read_summary(toy)["groups"]
    assert group["avg_correctness"] == 1.0 and group["avg_safety"] == 1.0 and group["avg_iterations"] == 1.0
    assert group["overall"]["correctness"]["ci95"][1] == pytest.approx(1.0)
    assert [c["category"] for c in group["categories"]] == ["set", "set+set"]


def test_noop_resolves_nothing(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:noop", "--junitxml=junit.xml")
    result.assert_outcomes(failed=DEFAULT_EPISODES)
    (group,) = read_summary(toy)["groups"]
    assert group["avg_correctness"] == 0.0
    assert group["overall"]["steps"]["mean"] == 3.0  # the toy's default max steps, all used
    # doing nothing is always safe: the headline, resolved, says 0%, and every report leads with it
    assert group["avg_safety"] == 1.0 and group["avg_resolved"] == 0.0
    lines = result.stdout.lines
    (header,) = [line for line in lines if line.startswith("L ") and "resolved [95% CI]" in line]
    assert header.index("resolved") < header.index("correct") < header.index("safe") < header.index("perm")
    (row,) = [line for line in lines if line.startswith("* ALL ")]
    assert re.search(r"ALL +6 +0\.0% \[ *0- *\d+\] +0\.0% +100\.0% ", row), row
    assert any(line.startswith("resolved = correct and every step safe") for line in lines)
    page = (run_dir(toy) / "report.html").read_text()
    overall = page[page.index("<h3>Overall</h3>"):]
    assert overall.index("resolved [95% CI]") < overall.index("correct [95% CI]") < overall.index("safe [95% CI]")
    assert "an agent that does nothing is 100% safe" in page
    cells = overall[overall.index("<td class=num>", overall.index("builtin:noop")):]
    assert cells.startswith(f"<td class=num>{DEFAULT_EPISODES}</td><td class=num>0.0% ")  # n, then resolved
    values = {p.get("value") for p in ET.parse(toy.path / "junit.xml").iter("property") if p.get("name") == "netarena.resolved"}
    assert values == {"False"}


def test_reckless_agent_is_flagged_unsafe_with_the_violation_named(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:reckless", "--queries=1")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*unsafe after*", "*first unsafe step 1*", "*counter went negative (-1)*"])
    (group,) = read_summary(toy)["groups"]
    assert group["avg_safety"] == 0.0 and group["avg_correctness"] == 1.0


def test_junit_carries_netarena_properties(toy: pytest.Pytester) -> None:
    toy.runpytest("--agent=builtin:oracle", "--queries=1", "--junitxml=junit.xml").assert_outcomes(passed=2)
    cases = ET.parse(toy.path / "junit.xml").getroot().iter("testcase")
    properties = [{p.get("name"): p.get("value") for p in case.iter("property")} for case in cases]
    assert len(properties) == 2
    for props in properties:
        assert props["netarena.app"] == "toy" and props["netarena.outcome"] == "resolved"
        assert props["netarena.resolved"] == "True"
        for key in ("level", "category", "agent", "seed", "correct", "safe", "steps", "latency_s", "tokens", "cost_usd"):
            assert f"netarena.{key}" in props


def test_ids_are_readable_and_depend_only_on_the_seed(toy: pytest.Pytester) -> None:
    first = toy.runpytest("--agent=builtin:oracle", "--seed=3", "--collect-only", "-q").stdout.lines
    again = toy.runpytest("--agent=builtin:oracle", "--seed=3", "--collect-only", "-q").stdout.lines
    ids = [line for line in first if "::" in line]
    assert ids == [line for line in again if "::" in line]
    assert ids[0].endswith("test_episode[toy-L1-set-0000]") and ids[-1].endswith("[toy-L2-set+set-0002]")


def test_same_seed_same_queries_other_seed_other_queries(toy: pytest.Pytester) -> None:
    def targets(seed: int) -> list[int]:
        toy.runpytest("--agent=builtin:oracle", f"--seed={seed}", "--reports-dir", f"r{seed}-{len(list(toy.path.iterdir()))}")
        folder = max(toy.path.glob(f"r{seed}-*/*"), key=lambda p: p.stat().st_mtime)
        lines = (folder / "episodes.jsonl").read_text().splitlines()
        return sorted(json.loads(line)["query"]["params"]["target"] for line in lines)

    assert targets(11) == targets(11)
    assert targets(11) != targets(12)


def test_levels_queries_trials_and_several_agents_shape_the_parametrization(toy: pytest.Pytester) -> None:
    result = toy.runpytest(
        "--agent=builtin:oracle", "--agent=builtin:noop", "--levels=2", "--queries=2", "--trials=2", "--collect-only", "-q"
    )
    ids = [line.split("[")[1].rstrip("]") for line in result.stdout.lines if "::" in line]
    assert len(ids) == 2 * 2 * 2
    assert "toy-L2-set+set-0001-builtin-noop-t1" in ids
    assert not any("-L1-" in test_id for test_id in ids)


def test_collection_is_identical_under_xdist(toy: pytest.Pytester) -> None:
    serial = toy.runpytest_subprocess("--agent=builtin:oracle", "--seed=5", "-v", "-p", "no:cacheprovider")
    parallel = toy.runpytest_subprocess(
        "--agent=builtin:oracle", "--seed=5", "-v", "-n", "2", "-p", "no:cacheprovider", "--junitxml=junit.xml"
    )

    def passed(lines: list[str]) -> list[str]:
        return sorted(line.split("::")[1].split(" ")[0] for line in lines if "PASSED" in line and "::" in line)

    assert passed(serial.stdout.lines) == passed(parallel.stdout.lines)
    assert len(passed(parallel.stdout.lines)) == DEFAULT_EPISODES
    # the controller wrote one summary covering the workers' episodes
    summaries = list((toy.path / "reports").glob("*/summary.json"))
    totals = sorted(json.loads(s.read_text())["groups"][0]["overall"]["episodes"] for s in summaries)
    assert totals == [DEFAULT_EPISODES, DEFAULT_EPISODES]
    # JUnit from the workers carries every episode's properties
    cases = list(ET.parse(toy.path / "junit.xml").getroot().iter("testcase"))
    outcomes = [p.get("value") for case in cases for p in case.iter("property") if p.get("name") == "netarena.outcome"]
    assert outcomes == ["resolved"] * DEFAULT_EPISODES


def test_infra_errors_are_test_errors_and_never_scored(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOY_BROKEN", "1")
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1")
    result.assert_outcomes(errors=2)
    overall = read_summary(toy)["groups"][0]["overall"]
    assert overall["infra_errors"] == 2 and overall["scored"] == 0 and overall["correctness"]["rate"] is None
    # each error is a short account (what failed, where its record is), never a traceback of the plugin
    output = result.stdout.str()
    errors = output[output.index("= ERRORS ="):output.index("netarena summary")]
    assert errors.count("infrastructure error, not counted against the agent: infrastructure: the toy backend "
                        "is down") == 2 and errors.count("episodes.jsonl, episode ") == 2
    assert "fixtures.py" not in errors and "raise InfraError" not in errors and len(errors.splitlines()) <= 8


def test_no_agent_is_a_clear_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*no agent selected: pass --agent=SPEC*"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "*malformed agent spec 'gpt-4o'*"),
        ("builtin:wizard", "*unknown built-in agent 'wizard'*"),
        ("python:nomodule", "*malformed python agent*"),
    ],
)
def test_bad_agent_specs_are_usage_errors_listing_accepted_forms(toy: pytest.Pytester, spec: str, message: str) -> None:
    result = toy.runpytest(f"--agent={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message, "*Accepted agent specs:*", "*builtin:NAME*"])


@pytest.mark.parametrize(
    ("option", "message"),
    [("--levels=4", "*--levels must list levels among 1, 2 and 3*"), ("--queries=0", "*--queries must be at least 1*"),
     ("--prompt-style=magic", "*--prompt-style must be one of*"), ("--seed=abc", "*--seed takes a whole number*")],
)
def test_bad_options_are_usage_errors(toy: pytest.Pytester, option: str, message: str) -> None:
    result = toy.runpytest("--agent=builtin:oracle", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_options_can_be_set_in_the_ini_file(toy: pytest.Pytester) -> None:
    toy.makeini(
        "[pytest]\nnetarena_apps = toy = toy_app:APP\nnetarena_agents = builtin:oracle\nnetarena_queries = 1\nnetarena_seed = 42\n"
        "netarena_plots = false\n"
    )
    result = toy.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*netarena: seed=42 agents=builtin:oracle*"])


@pytest.mark.parametrize(("option", "ini", "style"), [
    ("--prompt-style=cot", "", "cot"),
    ("--strategy=cot", "", "cot"),  # its old name
    (None, "netarena_prompt_style = react", "react"),
    (None, "netarena_strategy = react", "react"),  # the old ini key
    ("--strategy=cot", "netarena_prompt_style = react", "cot"),  # the command line wins
    (None, "netarena_strategy = react\nnetarena_prompt_style = few-shot", "few-shot"),  # the new key wins
])
def test_the_prompt_style_is_taken_by_its_name_and_its_old_one(toy: pytest.Pytester, option: str | None, ini: str,
                                                                  style: str) -> None:
    toy.makeini(f"[pytest]\nnetarena_apps = toy = toy_app:APP\nnetarena_plots = false\n{ini}\n")
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", *([option] if option else []))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([f"*agents=builtin:oracle prompt-style={style} *"])
    folder = run_dir(toy)
    assert json.loads((folder / "run.json").read_text())["options"]["prompt_style"] == style
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert [e["prompt_style"] for e in episodes] == [style, style] and not any("strategy" in e for e in episodes)


def test_help_names_the_prompt_styles_old_name(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--help")
    result.stdout.fnmatch_lines(["*--prompt-style=NAME, --strategy=NAME*"])
    result.stdout.fnmatch_lines(["*netarena_strategy (string):", "*old name of netarena_prompt_style"])


def test_a_users_python_agent_is_loaded(toy: pytest.Pytester) -> None:
    toy.makepyfile(
        my_agent="""
class Agent:
    def reset(self, task):
        self.prompt = task.system_prompt
    def act(self, observation):
        return "set " + observation.rsplit(" ", 1)[1]
    def close(self):
        pass
"""
    )
    toy.syspathinsert()
    toy.runpytest("--agent=python:my_agent:Agent", "--queries=1").assert_outcomes(passed=2)


def test_a_python_agents_task_names_no_query(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom agent (often a model wrapper passing everything on) learns nothing a model does not:
    no query id, level or category (they name the fault), only an opaque episode id reports keep too."""
    toy.makepyfile(
        telling_agent="""
import json, os

class Agent:
    def reset(self, task):
        with open(os.environ["TASK_LOG"], "a") as log:
            log.write(json.dumps(vars(task)) + "\\n")
    def act(self, observation):
        return "set " + observation.rsplit(" ", 1)[1]
    def close(self):
        pass
"""
    )
    toy.syspathinsert()
    monkeypatch.setenv("TASK_LOG", str(toy.path / "tasks.jsonl"))
    toy.runpytest("--agent=python:telling_agent:Agent", "--queries=2").assert_outcomes(passed=4)
    tasks = [json.loads(line) for line in (toy.path / "tasks.jsonl").read_text().splitlines()]
    episodes = [json.loads(line) for line in (run_dir(toy) / "episodes.jsonl").read_text().splitlines()]
    told_fields = {"app", "episode_id", "system_prompt", "prompt_style", "max_steps", "tools"}
    assert len(tasks) == 4 and all(set(task) == told_fields and task["tools"] == [] for task in tasks)
    told = json.dumps(tasks)
    for episode in episodes:
        query = episode["query"]
        assert query["id"] not in told and f"-L{query['level']}-" not in told
    assert "set+set" in {e["query"]["category"] for e in episodes} and "set+set" not in told
    ids = [task["episode_id"] for task in tasks]
    assert len(set(ids)) == 4 and sorted(ids) == sorted(e["episode_id"] for e in episodes)


def test_a_python_agent_that_cannot_be_found_is_one_usage_error_before_any_episode(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=python:no_such_agent_module:Agent", "--queries=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and "no module named 'no_such_agent_module' in the current folder" in errors[0], errors
    assert not (toy.path / "reports").exists()


def test_an_unsandboxed_run_is_marked_in_every_report(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--unsandboxed")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*netarena: UNSANDBOXED*", "*UNSANDBOXED run*"])
    folder = run_dir(toy)
    assert json.loads((folder / "run.json").read_text())["sandboxed"] is False
    assert read_summary(toy)["sandboxed"] is False
    assert "UNSANDBOXED run" in (folder / "report.html").read_text()
    assert (folder.stat().st_mode & 0o777) == 0o700  # transcripts are private


def test_a_sandboxed_run_says_so(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1")
    result.stdout.fnmatch_lines(["*netarena: sealed boxes*"])
    assert json.loads((run_dir(toy) / "run.json").read_text())["sandboxed"] is True
    assert read_summary(toy)["sandboxed"] is True and read_summary(toy)["rules"] == "default"
    assert "UNSANDBOXED" not in (run_dir(toy) / "report.html").read_text()


def test_the_netarena_profile_is_marked_and_keeps_netarenas_silence_about_steps(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--queries=1", "--compat=netarena")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*netarena: --compat netarena: NetArena's rules*"])
    folder = run_dir(toy)
    assert json.loads((folder / "run.json").read_text())["rules"] == "netarena"
    assert read_summary(toy)["rules"] == "netarena"
    assert "NetArena's (--compat netarena)" in html.unescape((folder / "report.html").read_text())
    episodes = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert episodes and not any("[Step" in e["first_observation"] for e in episodes)  # NetArena never announces steps


def test_an_unknown_profile_is_a_usage_error(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--agent=builtin:oracle", "--compat=paper")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--compat takes netarena*"])


def test_extra_measures_reach_junit_summary_and_report(toy: pytest.Pytester) -> None:
    toy.runpytest("--agent=builtin:oracle", "--queries=1", "--junitxml=junit.xml").assert_outcomes(passed=2)
    tree = ET.parse(toy.path / "junit.xml")
    values = {p.get("value") for p in tree.iter("property") if p.get("name") == "netarena.metric.overshot"}
    assert values == {"False"}
    (group,) = read_summary(toy)["groups"]
    assert group["overall"]["metrics"]["overshot"]["rate"] == 0.0
    assert group["overall"]["metrics"]["overshot"]["n"] == 2
    assert "Other measures" in (run_dir(toy) / "report.html").read_text()


def test_a_run_freezes_what_its_collection_made_but_never_an_in_process_runs_heap(toy: pytest.Pytester) -> None:
    import gc

    toy.makeconftest("import gc, pytest\n\n"
                     "@pytest.fixture(autouse=True)\n"
                     "def frozen():\n"
                     "    print('frozen while running:', gc.get_freeze_count() > 0)\n")
    result = toy.runpytest_subprocess("--agent=builtin:oracle", "--queries=1", "--levels=1", "-s")
    result.stdout.fnmatch_lines(["*frozen while running: True*"])
    # in process (pytester's inline run) the heap is the test runner's: nothing more of it is frozen (frozen
    # objects that are freed leave the count, so it may fall)
    before = gc.get_freeze_count()
    toy.runpytest_inprocess("--agent=builtin:oracle", "--queries=1", "--levels=1").assert_outcomes(passed=1)
    assert gc.get_freeze_count() <= before
