"""What a run reports: the header, a failed test's short account, and the run files the controller writes (RunReporter)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ..apps import available_apps
from ..core.errors import InfraError
from ..core.types import Outcome
from ..reporting import artifacts, completion
from ..reporting.properties import record_from_properties
from ..reporting.summary import possible, render_table, settings_of, summarize
from ..run.corpus import read_found
from ..run.gates import EXIT_BELOW_BAR, check_gates
from .assertions import render_transcript
from .collection import Case, benchmark_case
from .runfile import run_info
from .state import (BUDGET_SKIP, EPISODE_LINE_KEY, FOLDED_KEY, NO_AGENT_MESSAGE, RESULT_KEY, SCALE_KEY, SETTINGS_KEY,
                    WARNINGS_KEY)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash[SETTINGS_KEY]
    agents = ", ".join(a.raw for a in settings.agents) or "none"
    options = settings.run_options
    scale = config.stash[SCALE_KEY].options
    lines = [
        f"netarena: seed={settings.seed} agents={agents} prompt-style={options.prompt_style} "
        f"queries/category={options.queries} levels={','.join(map(str, options.levels))} trials={settings.trials}"
        + (f" split={options.split}" if options.split else "")
        + f" tool-calls={options.tool_calls if options.ruleset.offers_tools else 'never (NetArena: text)'}",
        f"netarena: reports in {settings.run_dir}",
        _sandbox_line(options.sandboxed),
    ]
    if options.ruleset.netarena:
        lines.append("netarena: --compat netarena: NetArena's rules, not ours (docs/netarena.md lists every difference)")
    if scale.shard is not None:
        lines.append(f"netarena: shard {scale.shard} of the collection (`netarena report merge` joins the shards' folders)")
    folded = config.stash.get(FOLDED_KEY, None)
    if folded is not None:
        lines.append(folded.header())
    elif scale.in_flight is not None and scale.in_flight > 1:
        lines.append(f"netarena: {scale.in_flight} episodes in flight per process, each in its own environment")
    for app in available_apps().values():
        lines.extend(f"netarena: {app.name}: {note}" for note in app.header_notes(options))
    lines.extend(f"netarena: warning: {warning}" for warning in config.stash.get(WARNINGS_KEY, []))
    return lines


def _sandbox_line(sandboxed: bool) -> str:
    if not sandboxed:
        return ("netarena: UNSANDBOXED: agent actions run without sealed boxes, as this user, on this machine "
                "(--unsandboxed); every report of this run says so")
    from ..sandbox import support

    found = support()
    if found.ok:
        return f"netarena: sealed boxes: bubblewrap {found.bwrap} ({'root' if found.root else 'user namespace'} mode)"
    return f"netarena: sealed boxes unavailable ({found.reason}): apps that need them skip; see --unsandboxed"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if benchmark_case(item) is not None:
        report.netarena_benchmark = True  # xdist ships a report's attributes to the controller
    result = item.stash.get(RESULT_KEY, None)
    if result is not None and report.failed and report.when in ("setup", "call"):
        if result.outcome is Outcome.INFRA_ERROR and call.excinfo is not None and call.excinfo.errisinstance(InfraError):
            report.longrepr = _infra_account(item, result)  # what failed and where the details are, not our traceback
            if item.config.get_verbosity() < 2:
                return report
        if item.config.get_verbosity() >= 2:
            report.sections.append(("netarena transcript", render_transcript(result)))
        else:  # the failure says what happened; the whole transcript is one command away
            run_dir = item.config.stash[SETTINGS_KEY].run_dir
            report.sections.append(("netarena", f"full transcript: {run_dir}/episodes.jsonl, episode "
                                                f"{result.episode_id} (also in report.html; -vv prints it here)"))
    if report.when == "teardown":
        # xdist ships a report's attributes to the controller: the transcript travels with its test
        line = item.stash.get(EPISODE_LINE_KEY, None)
        if line is not None:
            report.netarena_episode = line
    return report


#: how much of an infrastructure error's message its account shows (the whole is in episodes.jsonl)
INFRA_ACCOUNT_CHARS = 600


def _infra_account(item: pytest.Item, result: Any) -> str:
    """An infrastructure error in a few lines: what failed, that it is not counted against the agent, where its
    record is."""
    details = " ".join(str(result.details).split())
    if len(details) > INFRA_ACCOUNT_CHARS:
        details = details[:INFRA_ACCOUNT_CHARS] + "..."
    run_dir = item.config.stash[SETTINGS_KEY].run_dir
    return (f"infrastructure error, not counted against the agent: {details}\n"
            f"the episode's record: {run_dir}/episodes.jsonl, episode {result.episode_id} (also in report.html); "
            "a run resumed with --resume runs it again")


def _apps_of(records: list[dict[str, Any]]) -> list[str]:
    """The apps of episode records (a summary record's "app", an episode line's query's)."""
    found = (record.get("app") or (record.get("query") or {}).get("app") for record in records)
    return [str(app) for app in found if app]


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(text).removeprefix("Skipped: ")


class RunReporter:
    """Collects episode records from test reports (which xdist ships from workers) and writes the run files."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.no_agent_skips = 0
        self.budget_skips = 0
        self.benchmarks: set[str] = set()  #: benchmark tests reported
        self.skips: dict[str, str] = {}  #: benchmark test -> why it was skipped
        self.expected: int | None = None  #: episodes selected, when this process collected them
        self.gate_verdicts: list[dict[str, Any]] = []
        self.report_note = ""
        self.nothing_ran = ""  #: why no episode ran, when none did
        self.completeness: dict[str, Any] = {}  #: summary.json's complete (and incomplete) at the session's end

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items or not self.config.pluginmanager.hasplugin("dsession"):
            self.expected = sum(isinstance(benchmark_case(item), Case) for item in session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and NO_AGENT_MESSAGE in str(report.longrepr):
            self.no_agent_skips += 1
        if report.skipped and BUDGET_SKIP in str(report.longrepr):
            self.budget_skips += 1
        if getattr(report, "netarena_benchmark", False):
            self.benchmarks.add(report.nodeid)
            if report.skipped:
                self.skips[report.nodeid] = _skip_reason(report)
        if report.when == "teardown":
            line = getattr(report, "netarena_episode", None)
            if line:
                self._record_line(line)
            record = record_from_properties(list(report.user_properties))
            if record is not None:
                self.records.append(record)

    def _record_line(self, line: str) -> None:
        settings = self.config.stash[SETTINGS_KEY]
        if not (settings.run_dir / "run.json").exists():  # the run begins: incomplete until it ends
            artifacts.write_run_info(settings.run_dir, run_info(self.config, _apps_of([json.loads(line)])))
            if not (settings.run_dir / "summary.json").exists():
                artifacts.write_summary(settings.run_dir, {"schema_version": 1, "groups": [],
                                                           **completion.started(settings.run_dir, self._expected())})
        artifacts.append_line(settings.run_dir / "episodes.jsonl", line)

    def _expected(self) -> int | None:
        """Episodes the run selected (None for an adversarial search, whose episodes are not known beforehand)."""
        settings, scale = self.config.stash[SETTINGS_KEY], self.config.stash[SCALE_KEY]
        if settings.search is not None:
            return None
        if self.expected is None and scale.service is not None and scale.service.item_apps is not None:
            return sum(1 for app in scale.service.item_apps if app)  # xdist: as the first worker collected
        return self.expected

    def _completeness(self, session: pytest.Session) -> dict[str, Any]:
        settings = self.config.stash[SETTINGS_KEY]
        why = ""
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:
            why = "interrupted"
        elif session.shouldfail or session.shouldstop:
            why = f"stopped early: {session.shouldfail or session.shouldstop}"
        done = len({(r["query"], r["agent"], r["trial"]) for r in self.records})
        return completion.finished(settings.run_dir, done, self._expected(), len(self.skips), why)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        settings = self.config.stash[SETTINGS_KEY]
        if self.records:
            artifacts.write_run_info(settings.run_dir, {**run_info(self.config, _apps_of(self.records)),
                                                        "settings": settings_of(self.records),
                                                        "args": list(self.config.invocation_params.args)})
            summary = summarize(self.records)
            summary["sandboxed"] = settings.run_options.sandboxed
            summary["rules"] = settings.run_options.rules
            if self.skips:  # every reason, in the summary, the terminal and report.html
                summary["skipped"] = completion.skipped(self.skips)
            self.completeness = self._completeness(session)
            summary.update(self.completeness)
            if settings.run_budget.capped:
                service = self.config.stash[SCALE_KEY].service
                assert service is not None, "the summary is written by the controller, which holds the run's service"
                spent = service.ledger.spent()
                summary["budget"] = {"max_tokens": settings.run_budget.max_tokens, "max_cost_usd": settings.run_budget.max_cost_usd,
                                     "tokens": spent.tokens, "cost_usd": spent.cost_usd,
                                     "stopped": self.budget_skips > 0, "episodes_not_run": self.budget_skips}
            self.gate_verdicts = check_gates(settings.gates, possible(self.records))
            if self.gate_verdicts:
                summary["gates"] = self.gate_verdicts
            artifacts.write_summary(settings.run_dir, summary)
            plots = self.config.getoption("plots")
            plots = self.config.getini("netarena_plots") if plots is None else plots
            self.report_note = _build_html_report(settings.run_dir, plots)
            if self.gate_verdicts and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                # with bars set, the bars decide: a failed episode is expected, a run below the bar is not
                passed = all(v["passed"] for v in self.gate_verdicts)
                session.exitstatus = pytest.ExitCode.OK if passed else EXIT_BELOW_BAR
        elif self.no_agent_skips:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif not self._empty_shard(session):
            self._nothing_ran(session)

    def _nothing_ran(self, session: pytest.Session) -> None:
        """No episode ran: never a pass with bars set; said in one line, and recorded, whenever benchmark tests were
        selected (a session that only ran other tests stays quiet unless it set bars)."""
        settings = self.config.stash[SETTINGS_KEY]
        if self.config.option.collectonly or session.exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        if not self.benchmarks and not settings.gates:
            return
        self.nothing_ran = "no episode ran: " + self._why_nothing_ran()
        if settings.gates:
            bars = sorted({f"--min-{gate.metric}" for gate in settings.gates})
            self.nothing_ran += f"; the bars ({', '.join(bars)}) fail: nothing was scored"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = EXIT_BELOW_BAR
        artifacts.write_run_info(settings.run_dir, {**run_info(self.config), "args": list(self.config.invocation_params.args)})
        artifacts.write_summary(settings.run_dir, {
            "schema_version": 1, "groups": [], "sandboxed": settings.run_options.sandboxed, "complete": True,
            "nothing_ran": {"reason": self.nothing_ran, "selected": len(self.benchmarks), "skipped": len(self.skips)},
            **({"skipped": completion.skipped(self.skips)} if self.skips else {})})

    def _why_nothing_ran(self) -> str:
        if not self.benchmarks:
            return ("no benchmark test was selected (check the test paths, -k and -m; `pytest suites "
                    "--agent=builtin:oracle` runs every suite)")
        reasons = Counter(self.skips.values())
        said = "; ".join(reason if len(reasons) == 1 else f"{count}: {reason}" for reason, count in reasons.most_common(3))
        more = f"; {len(reasons) - 3} other reasons" if len(reasons) > 3 else ""
        skipped = f"{len(self.skips)} of {len(self.benchmarks)} skipped ({said}{more})" if self.skips else ""
        errored = len(self.benchmarks) - len(self.skips)
        return ", ".join(part for part in (skipped, f"{errored} ended in errors before their episode" if errored else "")
                         if part)

    def _empty_shard(self, session: pytest.Session) -> bool:
        """A shard whose slice of a non-empty collection is empty still leaves a run folder for the merge."""
        scale, settings = self.config.stash[SCALE_KEY], self.config.stash[SETTINGS_KEY]
        service = scale.service
        if scale.options.shard is None or service is None or not service.collection.get("total"):
            return False
        if service.collection.get("selected"):
            return False
        artifacts.write_run_info(settings.run_dir, {**run_info(self.config), "args": list(self.config.invocation_params.args)})
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK
        return True

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.no_agent_skips:
            terminalreporter.write_line(f"pytest-netarena: {self.no_agent_skips} episodes skipped: {NO_AGENT_MESSAGE}", red=True)
        settings = self.config.stash[SETTINGS_KEY]
        found = read_found(settings.run_dir / "found.jsonl")
        if found:
            terminalreporter.section("netarena adversarial search")
            for entry in found:
                terminalreporter.write_line(f"{entry['query']['id']}: {entry['agent']} -> {entry['outcome']}; params {entry['query']['params']}")
                terminalreporter.write_line(f"  reproduce: {entry['reproduce']}")
            terminalreporter.write_line(f"corpus of found cases: {settings.run_dir / 'found.jsonl'}")
        skipped = completion.skipped_lines({"skipped": completion.skipped(self.skips)}) if self.skips else []
        if self.nothing_ran:
            terminalreporter.section("netarena summary")
            terminalreporter.write_line(self.nothing_ran, red=bool(settings.gates), yellow=not settings.gates)
            for line in skipped[1:]:
                terminalreporter.write_line(line, yellow=True)
            terminalreporter.write_line(f"recorded in {settings.run_dir / 'summary.json'}")
        if not self.records:
            return
        terminalreporter.section("netarena summary")
        if not settings.run_options.sandboxed:
            terminalreporter.write_line("UNSANDBOXED run: agent actions ran without sealed boxes", red=True)
        summary = summarize(self.records)
        for line in render_table(summary):
            terminalreporter.write_line(line)
        for line in skipped:
            terminalreporter.write_line(line, yellow=True)
        if self.budget_skips:
            terminalreporter.write_line(f"budget: {self.budget_skips} episodes not run because the run's budget was spent", yellow=True)
        for verdict in self.gate_verdicts:
            value = "n/a" if verdict["value"] is None else f"{verdict['value']:.3f}"
            word = "met" if verdict["passed"] else "FAILED"
            terminalreporter.write_line(
                f"bar {word}: {verdict['metric']} of {verdict['agent']} on {verdict['app']} is {value}, bar {verdict['threshold']:g}",
                green=verdict["passed"], red=not verdict["passed"])
        if self.report_note:
            terminalreporter.write_line(self.report_note)
        terminalreporter.write_line(f"seed {settings.seed}; reports in {settings.run_dir}")
        incomplete = completion.incomplete_line(self.completeness)
        if incomplete:
            terminalreporter.write_line(incomplete, red=True)


def _build_html_report(run_dir: Path, plots: bool) -> str:
    """Write report.html and plots; a reporting problem is a note, never a failed run."""
    from ..reporting.rebuild import ReportError, build_report

    try:
        return f"report: {build_report(run_dir, plots=plots)}"
    except ReportError as error:
        return f"report.html not written: {error}"
    except Exception as error:  # a plotting bug must not cost the user the run's results
        return f"report.html not written (internal error, please report it): {type(error).__name__}: {error}"
