"""Runs the battery: every cheat meant for an app plays ordinary episodes of it; the ones that win are findings.

A cheat that is judged correct, resolved, or ends unscored (an infrastructure error) is a finding, kept with
its transcript."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..apps import get_app
from ..core.app import App, RunOptions
from ..core.episode import run_episode
from ..core.types import EpisodeResult, Outcome, Query
from ..core.errors import BackendUnavailable
from ..reporting import artifacts
from ..run.plan import plan_episode
from .cheats import Cheat
from .generic import GENERIC

#: each built-in app's own cheats (module:attribute, imported when audited); other apps get the generic set
APP_CHEATS = {"k8s": "pytest_netarena.audit.k8s:K8S", "route": "pytest_netarena.audit.route:ROUTE",
              "malt": "pytest_netarena.audit.malt:MALT"}
AUDIT_FILE = "audit.json"


def cheats_for(app: str) -> tuple[Cheat, ...]:
    """The generic cheats, then the app's own."""
    if app not in APP_CHEATS:
        return GENERIC
    module, _, attribute = APP_CHEATS[app].partition(":")
    return GENERIC + tuple(getattr(importlib.import_module(module), attribute))


def cheat_won(result: EpisodeResult) -> bool:
    """A cheat must end unresolved, unsafe or as an agent error: judged correct or left unscored, it beat us."""
    return result.correct or result.outcome in (Outcome.RESOLVED, Outcome.INFRA_ERROR)


@dataclass
class AppAudit:
    """What the battery did to one app."""

    app: str
    episodes: list[EpisodeResult] = field(default_factory=list)
    skipped: str = ""  #: why the app could not be audited here (its backend is missing)

    @property
    def findings(self) -> list[EpisodeResult]:
        return [result for result in self.episodes if cheat_won(result)]


def _app(app: App | str) -> App:
    """An app given by its registered name or as the App itself (e.g. one a user checks before registering it)."""
    return get_app(app) if isinstance(app, str) else app


def _name(app: App | str) -> str:
    """The name an app is registered (or, given as an App, calls itself) under."""
    return app if isinstance(app, str) else app.name


def audit_queries(app: App | str, count: int, options: RunOptions) -> list[Query]:
    """count queries of the app, one category after another (lowest levels first), from the run seed."""
    app = _app(app)
    every = app.generate(RunOptions(seed=options.seed, queries=1, levels=options.levels, extra=dict(options.extra),
                                  secret=options.secret))
    return sorted(every, key=lambda query: (query.level, query.category))[:count]


def play_cheat(app: App | str, env, cheat: Cheat, query: Query, options: RunOptions,
               agent_timeout_s: float = 60.0) -> EpisodeResult:
    """One ordinary episode with the cheat's agent, of at most the cheat's steps."""
    app = _app(app)
    plan = plan_episode(app, env, replace(options, prompt_style="zero-shot", max_steps=cheat.steps),
                        agent_timeout_s=agent_timeout_s)
    agent = cheat.agent()
    try:
        return run_episode(env, agent, query, plan.task, plan.config, f"cheat:{cheat.name}", interface=plan.interface)
    finally:
        agent.close()


def audit_app(app: App | str, queries: int, options: RunOptions, progress: Callable[[str], None] = print) -> AppAudit:
    """Every cheat for the app on `queries` of its queries, in one environment."""
    app_name, app = _name(app), _app(app)
    result = AppAudit(app_name)
    try:
        env = app.make_environment(options)
    except BackendUnavailable as error:
        result.skipped = str(error)
        return result
    try:
        chosen = audit_queries(app, queries, options)
        for cheat in cheats_for(app_name):
            for query in chosen:
                result.episodes.append(play_cheat(app, env, cheat, query, options))
            progress(f"{app_name}: {cheat.name} ({cheat.attack}): "
                     + ", ".join(str(r.outcome.value) for r in result.episodes[-len(chosen):]))
    finally:
        env.close()
    return result


def finding_record(result: EpisodeResult) -> dict[str, Any]:
    """A finding as audit.json lists it: the cheat, its class, the query, the verdict and the whole transcript."""
    name = result.agent.removeprefix("cheat:")
    cheat = next(c for c in cheats_for(result.query.app) if c.name == name)
    return {"app": result.query.app, "cheat": cheat.name, "attack": cheat.attack, "about": cheat.about,
            "query": result.query.id, "outcome": result.outcome.value, "correct": result.correct,
            "details": result.details, "transcript": result.to_dict()}


def write_audit(audits: list[AppAudit], out: Path, seed: int) -> Path:
    """A run folder (run.json, episodes.jsonl, report.html) plus audit.json listing the findings."""
    from ..reporting.rebuild import build_report

    run_dir = Path(out) / ("audit-" + artifacts.new_run_id(seed))
    artifacts.write_run_info(run_dir, {"run_id": run_dir.name, "seed": seed, "generator": "netarena audit",
                                       "agents": sorted({r.agent for a in audits for r in a.episodes}),
                                       "options": {"apps": [a.app for a in audits]}})
    for audit in audits:
        for result in audit.episodes:
            artifacts.append_episode(run_dir, result)
    artifacts.write_json(run_dir / AUDIT_FILE, {
        "apps": {a.app: {"episodes": len(a.episodes), "findings": len(a.findings), "skipped": a.skipped,
                         "cheats": [c.name for c in cheats_for(a.app)]} for a in audits},
        "findings": [finding_record(r) for a in audits for r in a.findings]})
    if any(audit.episodes for audit in audits):
        build_report(run_dir, plots=False)
    return run_dir


def transcript_lines(result: EpisodeResult, width: int = 300) -> list[str]:
    """A finding's transcript for the terminal: each reply, the action taken, its output (cut at width)."""
    def cut(text: str) -> str:
        text = json.dumps(text, ensure_ascii=False)[1:-1]
        return text if len(text) <= width else text[:width] + f"... ({len(text) - width} more)"

    lines = [f"    first observation: {cut(result.first_observation)}"]
    for step in result.steps:
        lines += [f"    step {step.index} reply: {cut(step.reply)}", f"      action: {cut(step.action) or '(none)'}",
                  f"      output: {cut(step.output)}"]
    lines.append(f"    verdict: outcome {result.outcome.value}, correct {result.correct}: {cut(result.details)}")
    return lines
