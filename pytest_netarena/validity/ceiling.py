"""The non-AI ceiling: the best built-in programs with no model, played on an app's queries, beside noop and random.

It is the checklist's non-AI baseline. MALT's is `builtin:parser`, a template compiler of the question
text (the native wording before issue 45 and NetArena's, which topped NetArena's public leaderboard):
the native questions must hold it to a fifth, and it is also played under --compat netarena, where it
answers NetArena's questions as it answers NetArena's own. k8s and route have no such compiler to fear:
their scripted `builtin:expert` acts on what the agent reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..agents.spec import parse_agent_spec
from ..core.app import App, Environment, RunOptions
from ..core.stats import wilson_interval
from ..core.types import EpisodeResult, Outcome, Query
from ..run.runner import play

#: per app, its programs with no model, the ceiling first; apps not listed: their builtin:expert, if offered
CEILINGS = {"malt": ("parser", "expert"), "k8s": ("expert",), "route": ("expert",)}
DEFAULT = ("expert",)
#: what each program is, as the card says it
WHAT = {
    ("malt", "parser"): "a template compiler of the question text: the native wording before issue 45 and NetArena's",
    ("malt", "expert"): "a reader written with today's wording grammar at hand",
}
SCRIPTED = "a scripted agent that acts on what the agent reads"
#: the most the ceiling program may resolve, where the benchmark claims a bound
BOUNDS = {"malt": 0.2}
#: apps whose ceiling program is also played under --compat netarena
COMPAT = ("malt",)
AGENT_TIMEOUT_S = 60.0


@dataclass
class Count:
    """One program's episodes: resolved and correct of scored, infrastructure errors apart."""

    agent: str
    resolved: int = 0
    correct: int = 0
    scored: int = 0
    infra_errors: int = 0

    def add(self, result: EpisodeResult) -> None:
        if result.outcome is Outcome.INFRA_ERROR:
            self.infra_errors += 1
            return
        self.scored += 1
        self.resolved += result.outcome is Outcome.RESOLVED
        self.correct += bool(result.correct)


@dataclass
class Ceiling:
    counts: list[Count] = field(default_factory=list)  #: the ceiling program first
    max_steps: int | None = None  #: the card's step budget, when it caps each app's own
    compat: Count | None = None  #: the ceiling program under --compat netarena, where the card plays it


def ceiling_agents(app_name: str, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(agent for agent in CEILINGS.get(app_name, DEFAULT) if agent in names)


def _played(app: App, env: Environment, agent: str, queries: list[Query], options: RunOptions,
            names: Sequence[str]) -> Count:
    count = Count(agent)
    for query in queries:
        count.add(play(app, env, parse_agent_spec(f"builtin:{agent}", tuple(names)), query, options, AGENT_TIMEOUT_S))
    return count


def measure_ceiling(app: App, env: Environment, queries: list[Query], options: RunOptions, names: Sequence[str],
                    progress: Callable[[str], None]) -> Ceiling:
    ceiling = Ceiling(max_steps=options.max_steps)
    for agent in ceiling_agents(app.name, names):
        ceiling.counts.append(_played(app, env, agent, queries, options, names))
        count = ceiling.counts[-1]
        progress(f"{app.name}: builtin:{agent} (no model) resolved {count.resolved} of {count.scored} "
                 f"({count.infra_errors} infrastructure errors)")
    return ceiling


def measure_compat(app: App, ceiling: Ceiling, options: RunOptions, names: Sequence[str],
                   progress: Callable[[str], None]) -> None:
    """The ceiling program on the app's queries under --compat netarena (NetArena's wording and rules)."""
    if app.name not in COMPAT or not ceiling.counts:
        return
    compat = replace(options, rules="netarena")
    env = app.make_environment(compat)
    try:
        ceiling.compat = _played(app, env, ceiling.counts[0].agent, app.generate(compat), compat, names)
    finally:
        env.close()
    progress(f"{app.name}: under --compat netarena builtin:{ceiling.compat.agent} answered {ceiling.compat.correct} "
             f"of {ceiling.compat.scored} correctly")


def _rate(count: Count | tuple[int, int], what: str) -> str:
    resolved, scored = (count.resolved, count.scored) if isinstance(count, Count) else count
    if not scored:
        return f"{what} had no scored episode"
    low, high = wilson_interval(resolved, scored)
    return f"{what} resolved {resolved} of {scored} ({resolved / scored:.0%}, 95% CI {low:.0%}-{high:.0%})"


def judged(app_name: str, ceiling: Ceiling, noop: tuple[int, int], random: tuple[int, int] | None
           ) -> tuple[bool | None, str, int, tuple[float, float] | None]:
    """(passed, or None when not measured; the figure; n; the ceiling program's interval)."""
    if not ceiling.counts:
        return None, "the app offers no built-in program with no model to stand as its non-AI ceiling", 0, None
    first = ceiling.counts[0]
    within = f" within the card's {ceiling.max_steps} steps" if ceiling.max_steps else ""
    parts = [_rate(count, f"builtin:{count.agent} ({WHAT.get((app_name, count.agent), SCRIPTED)})") + within
             for count in ceiling.counts]
    floors = f"builtin:noop {noop[0]} of {noop[1]}" + (f", builtin:random {random[0]} of {random[1]}" if random else "")
    parts.append(f"beside {floors}")
    passed = first.scored > 0
    bound = BOUNDS.get(app_name)
    if bound is not None:
        held = first.resolved <= bound * first.scored
        passed = passed and held
        parts.append(f"the native tasks must hold builtin:{first.agent} to {bound:.0%}: "
                     + ("they do" if held else "they DO NOT"))
    elif first.scored and first.resolved == first.scored:
        parts.append("a program with no model solves these tasks: a score shows how close an agent comes to it")
    compat = ceiling.compat
    if compat is not None and compat.scored:
        parts.append(f"under --compat netarena builtin:{compat.agent} answered {compat.correct} of {compat.scored} "
                     "correctly: NetArena's wording is solved by a template compiler with no model, as NetArena's "
                     "own benchmark is")
    if any(count.infra_errors for count in ceiling.counts):
        parts.append(f"{sum(count.infra_errors for count in ceiling.counts)} infrastructure errors, not scored")
    return passed, "; ".join(parts), first.scored, wilson_interval(first.resolved, first.scored) if first.scored else None
