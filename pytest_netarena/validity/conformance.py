"""`check_app(app)`: the guarantees every app must keep, checked on a few episodes, as Gymnasium's check_env does.

seeded-generation        the same seed draws the same queries (ids and hidden params), another seed others
faults-break-something   after reset, before any action, the grader judges the state incorrect
solvable-by-oracle       the app's builtin:oracle resolves every sampled query
hidden-state-unseen      no hidden parameter is in what an agent sees: prompt, tools, observations
grader-survives-audit    no cheat of `netarena audit`'s battery wins (judged correct, resolved or unscored)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..agents.spec import GENERIC_BUILTINS, parse_agent_spec
from ..apps import get_app
from ..audit.battery import audit_queries, cheat_won, cheats_for, play_cheat
from ..core.app import App, Environment, RunOptions
from ..core.errors import InfraError
from ..core.types import EpisodeResult, Outcome, Query
from ..run.plan import TEXT, Traits, plan_episode
from ..run.runner import play

GUARANTEES = ("seeded-generation", "faults-break-something", "solvable-by-oracle", "hidden-state-unseen",
              "grader-survives-audit")
#: small sizes for the built-in apps (other apps ignore these keys)
SMALL = {"route_size": "2x1", "malt_topology": "synthetic:300"}
#: a hidden value shorter than this may be in an observation by chance (a port, a word of the question)
MIN_HIDDEN_CHARS = 6
AGENT_TIMEOUT_S = 60.0
#: other seeds tried before "the generator ignores the seed"
OTHER_SEEDS = 4
#: string hashing of the two processes that must draw the same queries (as xdist workers must): set and dict orders
#: of strings differ between them
HASH_SEEDS = ("0", "1")
#: run in a fresh interpreter: the queries of MODULE:ATTR under RunOptions(**JSON), as JSON
_DRAW = ("import json, sys\nfrom dataclasses import asdict\nfrom importlib import import_module\n"
         "from pytest_netarena.core.app import RunOptions\nmodule, _, attr = sys.argv[1].partition(':')\n"
         "app = getattr(import_module(module), attr)\noptions = RunOptions(**json.loads(sys.argv[2]))\n"
         "print(json.dumps([[q.id, q.params] for q in app.generate(options)], sort_keys=True, default=repr))\n")


@dataclass(frozen=True)
class Failure:
    """One broken guarantee, on one query ("" when it is about the app as a whole)."""

    guarantee: str
    query: str
    message: str

    def __str__(self) -> str:
        return f"{self.guarantee}: {self.query or 'the app'}: {self.message}"


@dataclass
class AppCheck:
    """What check_app checked: the sampled queries, each guarantee's figure, and what failed."""

    app: str
    queries: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)  #: guarantee -> what was checked, in words
    failures: list[Failure] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def broken(self) -> set[str]:
        """The guarantees that failed."""
        return {failure.guarantee for failure in self.failures}

    def lines(self) -> list[str]:
        """One line per guarantee: PASS or FAIL, and what was checked; then every failure."""
        broken = self.broken()
        return ([f"{'FAIL' if name in broken else 'pass'}  {name}: {self.figures.get(name, 'not checked')}"
                 for name in GUARANTEES if name in self.figures]
                + [f"  {failure}" for failure in self.failures])


class AppCheckError(AssertionError):
    """check_app found broken guarantees; `check` holds every one of them."""

    def __init__(self, check: AppCheck) -> None:
        self.check = check
        failures = "\n".join(f"  {failure}" for failure in check.failures)
        super().__init__(f"app {check.app!r} breaks {len(check.failures)} guarantee(s):\n{failures}")


def check_app(app: App | str, options: RunOptions | None = None, *, episodes: int = 3, audit: bool = True,
              processes: bool = True, raise_on_failure: bool = True,
              progress: Callable[[str], None] | None = None) -> AppCheck:
    """Check that an app (an App, or the name of a registered one) keeps every app's guarantees.

    Plays `episodes` sampled queries (one per category, lowest levels first) with the app's builtin:oracle and, with
    `audit`, the audit battery on one query; with `processes`, draws the queries again in two fresh interpreters
    (the app must then be an attribute of an importable module). Raises AppCheckError naming each broken guarantee
    and its query (or, with raise_on_failure=False, returns them in the AppCheck); BackendUnavailable when the app
    cannot run here.
    """
    app = get_app(app) if isinstance(app, str) else app
    options = options or RunOptions(seed=0, queries=1, levels=(1,), extra=dict(SMALL))
    say = progress or (lambda line: None)
    check = AppCheck(app.name)
    _check_generation(app, options, check, processes)
    queries = audit_queries(app, episodes, options)
    check.queries = [query.id for query in queries]
    if queries:
        env = app.make_environment(options)
        try:
            _check_episodes(app, env, options, queries, check, say)
            if audit:
                _check_audit(app, env, options, queries[0], check, say)
        finally:
            env.close()
    if check.failures and raise_on_failure:
        raise AppCheckError(check)
    return check


def _plain(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=repr)


def _check_generation(app: App, options: RunOptions, check: AppCheck, processes: bool) -> None:
    name = "seeded-generation"
    first = app.generate(options)

    def fail(query: str, message: str) -> None:
        check.failures.append(Failure(name, query, message))

    if not first:
        fail("", f"generate() drew no query for levels {list(options.levels)}: nothing could be checked")
        return
    again = app.generate(options)
    for one, two in zip(first, again):
        if (one.id, _plain(one.params)) != (two.id, _plain(two.params)):
            fail(one.id, f"seed {options.seed} drew it twice with different hidden params: {_plain(one.params)[:200]} "
                         f"then {_plain(two.params)[:200]} (every random choice must go through the Chooser)")
            break
    if len(first) != len(again):
        fail("", f"seed {options.seed} drew {len(first)} queries, then {len(again)}")
    repeatable = not check.failures
    if len({query.id for query in first}) != len(first):
        fail("", "two queries share an id")
    for query in first:
        try:
            json.dumps(query.params, allow_nan=False)
        except (TypeError, ValueError) as error:
            fail(query.id, f"its params are not plain JSON (runs store them in episodes.jsonl): {error}")
    drawn = [_plain(query.params) for query in first]
    # a small space may draw the same params from two seeds by chance: only all OTHER_SEEDS alike is a failure
    others = [options.seed + offset for offset in range(1, OTHER_SEEDS + 1)]
    differs = next((seed for seed in others
                    if [_plain(q.params) for q in app.generate(replace(options, seed=seed))] != drawn), None)
    if differs is None:
        fail("", f"seeds {options.seed} to {others[-1]} all drew the same hidden params for the {len(first)} "
                 "queries: the generator ignores the seed")
    across = _check_processes(app, options, fail) if repeatable and processes else "not drawn in other processes"
    check.figures[name] = (f"{len(first)} queries drawn twice from seed {options.seed}, the same; "
                           f"seed {differs} drew others; {across}")


def _entry_point(app: App) -> str | None:
    """MODULE:ATTR naming this very App instance, when its module holds it (not a script run as __main__)."""
    module = sys.modules.get(type(app).__module__)
    if module is None or module.__name__ == "__main__":
        return None
    attr = next((name for name, value in vars(module).items() if value is app), None)
    return f"{module.__name__}:{attr}" if attr else None


def _check_processes(app: App, options: RunOptions, fail: Callable[[str, str], None]) -> str:
    """Draw the queries in two fresh interpreters whose string hashing differs; they must agree. Returns the figure."""
    target = _entry_point(app)
    if target is None:
        return "not drawn in other processes (the app is not an attribute of an importable module)"
    from dataclasses import asdict

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    drawn = []
    for hash_seed in HASH_SEEDS:
        done = subprocess.run([sys.executable, "-c", _DRAW, target, json.dumps(asdict(options), default=list)],
                              env={**env, "PYTHONHASHSEED": hash_seed}, capture_output=True, text=True, timeout=300,
                              check=False)
        if done.returncode:
            fail("", f"{target} could not draw its queries in a fresh interpreter: {done.stderr.strip()[-300:]}")
            return "other processes failed"
        drawn.append(json.loads(done.stdout))
    if drawn[0] != drawn[1]:
        query = next((one[0] for one, two in zip(*drawn) if one != two), "")
        fail(query, f"two processes drew other queries from seed {options.seed} (PYTHONHASHSEED {HASH_SEEDS[0]} and "
                    f"{HASH_SEEDS[1]}): the draw depends on what differs between processes, such as the order of a set "
                    "of strings, so xdist workers would disagree")
    return f"two fresh processes (PYTHONHASHSEED {' and '.join(HASH_SEEDS)}) drew the same"


def _check_episodes(app: App, env: Environment, options: RunOptions, queries: list[Query], check: AppCheck,
                    say: Callable[[str], None]) -> None:
    names = tuple(dict.fromkeys((*app.builtin_agent_names, *GENERIC_BUILTINS)))
    prompts = [("the system prompt", plan_episode(app, env, options, traits).task.system_prompt)
               for traits in (TEXT, Traits(wants_tools=True))]
    has_oracle = "oracle" in app.builtin_agent_names
    if not has_oracle:
        check.failures.append(Failure("solvable-by-oracle", "", "the app offers no builtin:oracle "
                                      "(App.builtin_agent_names), so no task is shown solvable"))
    for query in queries:
        shown = _check_broken(env, query, check)
        result = None
        if has_oracle:
            result = play(app, env, parse_agent_spec("builtin:oracle", names), query, options, AGENT_TIMEOUT_S)
            _check_oracle(result, check)
            shown += _seen_in(result)
        _check_unseen(query, [*prompts, *shown], check)
        say(f"{app.name}: {query.id}: " + (f"oracle {result.outcome.value}" if result else "no oracle"))
    checked = ", ".join(check.queries)
    check.figures.setdefault("faults-break-something", f"the grader judged {len(queries)} broken states "
                                                       f"incorrect ({checked})")
    if has_oracle:
        check.figures["solvable-by-oracle"] = f"builtin:oracle played {len(queries)} episodes ({checked})"
    check.figures["hidden-state-unseen"] = (f"the prompt, the tools and {len(queries)} episodes' observations "
                                            "hold no query id, seed, fault type or params of the query")


def _check_broken(env: Environment, query: Query, check: AppCheck) -> list[tuple[str, str]]:
    """Reset to the query and judge at once: the faults must have broken something. Returns what the agent saw."""
    name = "faults-break-something"
    try:
        observation = env.reset(query)
        verdict = env.judge()
    except InfraError as error:
        check.failures.append(Failure(name, query.id, f"reset or judge failed: {error}"))
        return []
    if verdict.correct:
        check.failures.append(Failure(name, query.id, "the grader judged the state correct right after reset, "
                                      f"before any action: the faults broke nothing ({verdict.details})"))
    return [("the first observation", observation),
            ("the tools offered", json.dumps([tool.to_function() for tool in env.tools()]))]


def _check_oracle(result: EpisodeResult, check: AppCheck) -> None:
    if result.outcome is not Outcome.RESOLVED:
        check.failures.append(Failure("solvable-by-oracle", result.query.id,
                                      f"builtin:oracle ended {result.outcome.value} after {len(result.steps)} steps: "
                                      f"{result.details}"))


def _seen_in(result: EpisodeResult) -> list[tuple[str, str]]:
    """What the episode showed its agent: the first observation and each step's but the last (the episode was over)."""
    return [(f"the oracle's episode, observation {number}", text)
            for number, text in enumerate([result.first_observation, *(s.observation for s in result.steps[:-1])])]


def hidden_values(query: Query) -> set[str]:
    """What an agent must never read, in any app: the query's id and seed, its params as JSON (whole and each
    structured part), and the type of each fault they hold."""
    values = {query.id, str(query.seed), _plain(query.params), json.dumps(query.params)}
    for part in _parts(query.params):
        values.add(json.dumps(part))
        if isinstance(part, dict) and isinstance(part.get("type"), str):
            values.add(part["type"])
    return {value for value in values if len(value) >= MIN_HIDDEN_CHARS}


def _parts(value: Any) -> Iterator[Any]:
    """Every dict and list nested in the params (not the params themselves)."""
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        if isinstance(child, (dict, list)) and child:
            yield child
            yield from _parts(child)


def _check_unseen(query: Query, shown: list[tuple[str, str]], check: AppCheck) -> None:
    for value in sorted(hidden_values(query)):
        where = next((where for where, text in shown if value in text), None)
        if where is not None:
            check.failures.append(Failure("hidden-state-unseen", query.id,
                                          f"{value[:120]!r} is shown to the agent in {where}"))


def _check_audit(app: App, env: Environment, options: RunOptions, query: Query, check: AppCheck,
                 say: Callable[[str], None]) -> None:
    """The audit battery's cheats, each on `query` (the first sampled one), in the same environment."""
    played = [play_cheat(app, env, cheat, query, options, AGENT_TIMEOUT_S) for cheat in cheats_for(app.name)]
    for result in played:
        say(f"{app.name}: {result.agent}: {result.outcome.value}")
        if cheat_won(result):
            check.failures.append(Failure("grader-survives-audit", query.id,
                                          f"{result.agent} won: outcome {result.outcome.value}, correct "
                                          f"{result.correct}: {result.details[:200]}"))
    check.figures["grader-survives-audit"] = f"{len(played)} cheats of the audit battery each played {query.id}"
