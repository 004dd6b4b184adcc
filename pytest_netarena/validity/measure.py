"""Measurements for the card: reference agents' resolved rates, the audit battery, residual state between episodes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..agents.spec import GENERIC_BUILTINS, parse_agent_spec
from ..apps import get_app
from ..audit.battery import AppAudit, audit_app, cheat_won, cheats_for
from ..audit.cheats import ATTACKS
from ..core.app import Environment, RunOptions
from ..core.errors import BackendUnavailable, InfraError
from ..core.types import EpisodeResult, Outcome, Query
from ..run.runner import play
from .ceiling import Ceiling, measure_ceiling, measure_compat
from .contamination import Contamination, measure_contamination
from .interfaces import InterfaceMeasure, measure_interfaces

#: the reference agents whose resolved rates the card shows (each played on every query)
REFERENCE_AGENTS = ("oracle", "noop", "random")
#: the agents played on the app's impossible episodes (--impossible): an honest one, and one that cheats
IMPOSSIBLE_AGENTS = ("oracle", "cheater")
#: the agent that changes the state before the residual-state check (oracle when the app has none)
DISTURBER = "reckless"
#: the audit's attack classes that try to reach ground truth from inside the episode
ISOLATION_ATTACKS = ("copied-answers", "escape")
AGENT_TIMEOUT_S = 60.0


@dataclass
class Rate:
    """How one agent did on the app's queries: resolved of scored, infrastructure errors apart."""

    agent: str
    resolved: int = 0
    scored: int = 0  #: episodes that ended with a verdict (not an infrastructure error)
    infra_errors: int = 0
    available: bool = True  #: False: the app offers no such built-in agent
    outcomes: list[str] = field(default_factory=list)

    def add(self, result: EpisodeResult) -> None:
        self.outcomes.append(result.outcome.value)
        if result.outcome is Outcome.INFRA_ERROR:
            self.infra_errors += 1
            return
        self.scored += 1
        self.resolved += result.outcome is Outcome.RESOLVED


@dataclass
class Residual:
    """The residual-state check: a reset after a state-changing episode against a fresh environment's reset."""

    disturber: str = ""
    disturbed: str = ""  #: the disturbing episode's query and outcome
    probe: str = ""  #: the query reset to afterwards
    equal: bool | None = None  #: None: not measured
    difference: str = ""  #: the first differing line pair, when unequal
    reason: str = ""  #: why not measured


@dataclass
class AppMeasure:
    """Everything the card says about one app."""

    app: str
    queries: list[str] = field(default_factory=list)
    rates: dict[str, Rate] = field(default_factory=dict)
    audit: AppAudit | None = None
    residual: Residual = field(default_factory=Residual)
    contamination: Contamination = field(default_factory=Contamination)
    skipped: str = ""  #: why the app could not be measured on this host
    seconds: float = 0.0
    #: impossible episodes: agent -> [cheated, scored] (an app without impossible categories: empty)
    cheating: dict[str, list[int]] = field(default_factory=dict)
    interfaces: InterfaceMeasure | None = None  #: the scripted agents replayed through every interface
    ceiling: Ceiling = field(default_factory=Ceiling)  #: the best programs with no model (ceiling.py)

    def attack_episodes(self, attacks: tuple[str, ...]) -> tuple[int, int]:
        """(episodes, won) of the audit's cheats of these attack classes."""
        names = {f"cheat:{c.name}" for c in cheats_for(self.app) if c.attack in attacks}
        episodes = [r for r in (self.audit.episodes if self.audit else []) if r.agent in names]
        return len(episodes), sum(1 for r in episodes if cheat_won(r))


assert set(ISOLATION_ATTACKS) <= set(ATTACKS)


def _instance_free(text: str, env: Environment) -> str:
    """An observation without the names of the environment's instance (route networks carry a per-build prefix)."""
    prefix = getattr(getattr(env, "topology", None), "prefix", "")
    return text.replace(prefix, "{net}") if prefix else text


def _first_difference(first: str, second: str) -> str:
    for a, b in zip(first.splitlines() + [""], second.splitlines() + [""]):
        if a != b:
            return f"{a!r} vs {b!r}"
    return ""


def check_residual(app_name: str, env: Environment, queries: list[Query], options: RunOptions,
                   builtin_names: tuple[str, ...]) -> Residual:
    """Play a state-changing agent on one query in env, reset env to another, and compare that observation with
    a fresh environment's first one for the same query (both with instance names taken out)."""
    app = get_app(app_name)
    residual = Residual(disturber=DISTURBER if DISTURBER in builtin_names else "oracle")
    if len(queries) < 2:
        residual.reason = "needs two queries; the run generated fewer"
        return residual
    disturbed, probe = queries[0], queries[1]
    result = play(app, env, parse_agent_spec(f"builtin:{residual.disturber}", builtin_names), disturbed, options,
                  AGENT_TIMEOUT_S)
    residual.disturbed = f"{disturbed.id}: {result.outcome.value} after {len(result.steps)} steps"
    residual.probe = probe.id
    try:
        reused = _instance_free(env.reset(probe), env)
        fresh_env = app.make_environment(options)
        try:
            fresh = _instance_free(fresh_env.reset(probe), fresh_env)
        finally:
            fresh_env.close()
    except InfraError as error:
        residual.reason = f"a reset failed: {error}"
        return residual
    residual.equal = reused == fresh
    residual.difference = _first_difference(reused, fresh)
    return residual


def measure_app(app_name: str, options: RunOptions, audit_queries: int,
                progress: Callable[[str], None] = print) -> AppMeasure:
    """The reference agents on every generated query, the residual-state check, then the audit battery."""
    started = time.monotonic()
    app = get_app(app_name)
    measure = AppMeasure(app_name)
    queries = app.generate(options)
    measure.queries = [query.id for query in queries]
    names = tuple(dict.fromkeys((*app.builtin_agent_names, *GENERIC_BUILTINS)))
    try:
        env = app.make_environment(options)
    except BackendUnavailable as error:
        measure.skipped = str(error)
        return measure
    played: list[EpisodeResult] = []
    try:
        for agent in REFERENCE_AGENTS:
            rate = measure.rates[agent] = Rate(agent, available=agent in names)
            if not rate.available:
                continue
            for query in queries:
                played.append(play(app, env, parse_agent_spec(f"builtin:{agent}", names), query, options,
                                   AGENT_TIMEOUT_S))
                rate.add(played[-1])
            progress(f"{app_name}: builtin:{agent} resolved {rate.resolved} of {rate.scored} "
                     f"({rate.infra_errors} infrastructure errors)")
        measure.ceiling = measure_ceiling(app, env, queries, options, names, progress)
        impossible = app.impossible_queries(options)
        for agent in (a for a in IMPOSSIBLE_AGENTS if a in names):
            counts = measure.cheating[agent] = [0, 0]
            for query in impossible:
                result = play(app, env, parse_agent_spec(f"builtin:{agent}", names), query, options, AGENT_TIMEOUT_S)
                if result.outcome is not Outcome.INFRA_ERROR:
                    counts[0] += result.cheated
                    counts[1] += 1
            progress(f"{app_name}: builtin:{agent} cheated in {counts[0]} of {counts[1]} impossible episodes")
        measure.interfaces = measure_interfaces(app, env, options, queries, names, progress)
        measure.residual = check_residual(app_name, env, queries, options, names)
        progress(f"{app_name}: residual state cleared: {measure.residual.equal}")
    finally:
        env.close()
    measure_compat(app, measure.ceiling, options, names, progress)
    measure.contamination = measure_contamination(app_name, options, queries, played)
    progress(f"{app_name}: contamination controls: {measure.contamination.figure()}")
    measure.audit = audit_app(app_name, audit_queries, options, progress)
    measure.seconds = time.monotonic() - started
    return measure
