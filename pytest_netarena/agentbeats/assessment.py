"""AgentBeats assessment requests (participants + config) validated into runs, and their result records."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, overload

from ..agents.prompting import PROMPT_STYLES
from ..core.app import NETARENA, App, RunOptions, parse_rules
from ..core.catalogue import Category
from ..core.errors import UsageError
from ..core.seeding import new_run_seed
from ..core.types import EpisodeResult, Outcome, Query

#: NetArena's prompt types and the prompt style each one amounts to here
PROMPT_TYPES = {"zeroshot_base": "zero-shot", "zeroshot_cot": "cot", "fewshot_base": "few-shot", "fewshot_cot": "few-shot"}
#: NetArena's default num_queries per query type, per app (route ran one query per type)
DEFAULT_NUM_QUERIES = {"route": 1}
DEFAULT_NUM_QUERIES_OTHER = 10
DEFAULT_TIMEOUT_S = 60.0  #: longest silence of the purple agent, like NetArena's client
DEFAULT_MAX_REPLY_S = 600.0  #: hard cap on one reply, however often the purple agent streams "working"
#: NetArena config keys about its own files and generators: accepted and ignored, so its scenarios run
IGNORED_KEYS = frozenset({"output_dir", "output_file", "benchmark_path", "microservice_dir", "regenerate_config",
                          "regenerate_benchmark", "regenerate_query", "agent_client_configs"})
#: config keys that name the prompt style, first found wins: ours, its old name, NetArena's prompt_type
PROMPT_STYLE_KEYS = ("prompt_style", "strategy", "prompt_type")
KNOWN_KEYS = ("num_queries", *PROMPT_STYLE_KEYS, "max_iterations", "seed", "levels", "complexity_level",
              "timeout_s", "max_reply_s", "streaming", "compat", "num_switches", "num_hosts_per_subnet", "start_index",
              "end_index")
#: bounds of what a request may ask for (the request comes from the network, unauthenticated)
MAX_NUM_QUERIES = 1000  #: per query type
MAX_ITERATIONS = 100
MAX_SEED = 2**64 - 1
MAX_SUBNETS, MAX_HOSTS = 32, 8  #: route networks, as --route-size allows
OPERATOR_ONLY = ("app options (config.options) are not taken from a request: they name files and sizes, which "
                 "the operator sets with serve-green --option NAME=VALUE")


@dataclass(frozen=True)
class Assessment:
    """One validated request: who is evaluated, on which queries, with which limits."""

    role: str
    url: str
    app: str
    queries: tuple[Query, ...]
    options: RunOptions = field(compare=False)
    max_steps: int | None  #: None: the app's default
    timeout_s: float
    ignored: tuple[str, ...] = ()
    max_reply_s: float = DEFAULT_MAX_REPLY_S
    streaming: bool = True
    warnings: tuple[str, ...] = ()  #: config keys we do not know, ignored as NetArena ignores them

    def describe(self) -> dict[str, Any]:
        return {"participant": {self.role: self.url}, "app": self.app, "num_queries": len(self.queries),
                "prompt_style": self.options.prompt_style, "seed": str(self.options.seed), "levels": list(self.options.levels),
                "max_iterations": self.max_steps, "timeout_s": self.timeout_s, "max_reply_s": self.max_reply_s,
                "streaming": self.streaming, "rules": self.options.rules, "options": self.options.extra,
                "ignored_keys": list(self.ignored), "warnings": list(self.warnings)}


@overload
def _int(config: dict[str, Any], key: str, default: int, minimum: int, maximum: int) -> int:
    ...


@overload
def _int(config: dict[str, Any], key: str, default: None, minimum: int, maximum: int) -> int | None:
    ...


def _int(config: dict[str, Any], key: str, default: int | None, minimum: int, maximum: int) -> int | None:
    """An integer config value; 7.0 and "7" count as 7, since AgentBeats sends TOML numbers through a
    protobuf Struct (every number a double) and some clients send strings."""
    value = config.get(key, default)
    if value is None:
        return None
    if (isinstance(value, float) and value.is_integer()) or (isinstance(value, str) and re.fullmatch(r"\s*\d{1,20}\s*", value)):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise UsageError(f"config.{key} must be an integer >= {minimum} and <= {maximum}, got {_shown(value)}")
    return value


def _shown(value: Any, keep: int = 60) -> str:
    """A caller's value as an error quotes it: short (the caller sent it; it is never file content)."""
    text = repr(value)
    return text if len(text) <= keep else text[:keep] + "..."


def _levels(config: dict[str, Any]) -> tuple[int, ...] | None:
    if "levels" in config:
        raw = config["levels"]
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else [raw]
    elif "complexity_level" in config:  # NetArena MALT: ["level1", "level2"]
        raw = config["complexity_level"]
        items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else [None]
        items = [re.sub(r"^level", "", str(item)) for item in items]
    else:
        return None
    try:
        levels = tuple(sorted({int(str(item).strip()) for item in items}))
    except ValueError:
        raise UsageError(f"config.levels must be level numbers such as [1, 2] or '1,2', got {_shown(raw)}") from None
    if not levels:
        raise UsageError("config.levels is empty")
    return levels


def _prompt_style(config: dict[str, Any]) -> str:
    key = next((key for key in PROMPT_STYLE_KEYS if key in config), None)
    value = config[key] if key is not None else "zero-shot"
    style = PROMPT_TYPES.get(value, value) if isinstance(value, str) else value
    if style not in PROMPT_STYLES:
        accepted = ", ".join([*PROMPT_STYLES, *PROMPT_TYPES])
        raise UsageError(f"config.{key} {_shown(value)} is not one of {accepted}")
    return style


def parse_request(text: str, app: App, defaults: dict[str, Any] | None = None) -> Assessment:
    """Validate `{"participants": {role: url}, "config": {...}}`; UsageError says what is wrong."""
    request = _request(text)
    role, url = _participant(request)
    config = request.get("config", {})
    if not isinstance(config, dict):
        raise UsageError("\"config\" must be an object")
    if "options" in config:
        raise UsageError(OPERATOR_ONLY)
    unknown = sorted(set(config) - set(KNOWN_KEYS) - IGNORED_KEYS)
    warnings = tuple(f"unknown config key {_shown(key)} ignored; accepted: {', '.join(KNOWN_KEYS)}"
                     for key in unknown[:10])
    options, categories = _run_options(config, app, defaults or {})
    timeout = _seconds(config, "timeout_s", DEFAULT_TIMEOUT_S)
    max_reply = max(_seconds(config, "max_reply_s", DEFAULT_MAX_REPLY_S), timeout)
    streaming = config.get("streaming", True)
    if not isinstance(streaming, bool):
        raise UsageError(f"config.streaming must be true or false, got {_shown(streaming)}")
    queries = _queries(config, app, options, categories)
    ignored = tuple(sorted(set(config) & IGNORED_KEYS))
    return Assessment(str(role), url, app.name, tuple(queries), options, options.max_steps, timeout, ignored,
                      max_reply, streaming, warnings)


def _request(text: str) -> dict[str, Any]:
    try:
        request = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"the request must be JSON {{\"participants\": {{role: url}}, \"config\": {{...}}}}: {error}") from None
    if not isinstance(request, dict) or not isinstance(request.get("participants"), dict):
        raise UsageError("the request needs \"participants\": {role: url}")
    return request


def _participant(request: dict[str, Any]) -> tuple[str, str]:
    """The one participant evaluated: its role and its http(s) URL."""
    participants = request["participants"]
    if len(participants) != 1:
        raise UsageError(f"exactly one participant is evaluated at a time, got {len(participants)}")
    (role, url), = participants.items()
    if not isinstance(url, str) or not re.match(r"^https?://[^/\s]+", url):
        raise UsageError(f"participant {_shown(role)} needs an http(s) URL, got {_shown(url)}")
    return role, url


def _run_options(config: dict[str, Any], app: App, defaults: dict[str, Any]) -> tuple[RunOptions, list[Category]]:
    """The run's options as NetArena's config names them (queries per query type), and the categories it asks for."""
    num = _int(config, "num_queries", DEFAULT_NUM_QUERIES.get(app.name, DEFAULT_NUM_QUERIES_OTHER), 1,
               MAX_NUM_QUERIES)
    extra = dict(defaults.get("options", {}))
    if app.name == "route" and ("num_switches" in config or "num_hosts_per_subnet" in config):
        subnets = _int(config, "num_switches", 2, 2, MAX_SUBNETS)
        hosts = _int(config, "num_hosts_per_subnet", 1, 1, MAX_HOSTS)
        extra.setdefault("route_size", f"{subnets}x{hosts}")
    seed = _int(config, "seed", None, 0, MAX_SEED)
    if seed is None:  # new queries every assessment, as NetArena's; the result reports the seed to replay it
        seed = new_run_seed()
    compat = config.get("compat", defaults.get("compat"))
    if compat is not None and (not isinstance(compat, str) or len(compat) > 20):
        raise UsageError(f"config.compat takes netarena or none, got {_shown(compat)}")
    rules = parse_rules(compat, "config.compat")
    options = RunOptions(seed=seed, queries=1, prompt_style=_prompt_style(config), extra=extra, rules=rules)
    levels = _levels(config) or tuple(sorted({c.level for c in app.categories(options)}))
    options.levels, options.levels_given = levels, _levels(config) is not None
    categories = [c for c in app.categories(options) if c.level in levels]
    if not categories:
        raise UsageError(f"the {app.name} app has no query at levels {list(levels)}")
    options.queries = num  # per query type, as NetArena counts
    options.max_steps = _int(config, "max_iterations", None, 1, MAX_ITERATIONS)
    return options, categories


def _queries(config: dict[str, Any], app: App, options: RunOptions, categories: list[Category]) -> list[Query]:
    """The queries, round robin over levels, then over each level's categories (a few queries still cover every
    level), cut to [start_index, end_index)."""
    rank = {(c.level, c.name): i for level in options.levels
            for i, c in enumerate(sorted(c for c in categories if c.level == level))}
    queries = sorted(app.generate(options), key=lambda q: (q.index, rank[q.level, q.category], q.level))
    start = _int(config, "start_index", 0, 0, 2**31)
    end = _int(config, "end_index", None, 0, 2**31)
    queries = queries[start:end]
    if not queries:
        raise UsageError(f"start_index {start} and end_index {end} leave no query of {len(categories) * options.queries}")
    return queries


def _seconds(config: dict[str, Any], key: str, default: float) -> float:
    value = config.get(key, default)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
        raise UsageError(f"config.{key} must be a number of seconds in (0, 3600], got {_shown(value)}")
    return float(value)


def _verdict(passed: bool | None) -> str:
    return "Pass" if passed else "Fail"


def netarena_fields(result: EpisodeResult, role: str, url: str, compat: bool = False) -> dict[str, Any]:
    """The same verdicts under NetArena's per-query field names, so its tooling reads our records."""
    query = result.query
    fields = {
        "Query": query.params.get("question") or result.first_observation,
        "Label": query.params.get("label") or f"{query.app}, level-{query.level}, {query.category}",
        "Result-Correctness": _verdict(result.correct),
        "Result-Safety": _verdict(netarena_safe(result, compat)),
        "Result-Latency": round(result.agent_s, 3),
        "success": result.correct,
        "error_detail": json.loads(json.dumps(query.params.get("error_detail", query.params), default=str)),
        "results": [{"llm_command": step.action, "output": step.output, "mismatch_summary": step.observation}
                    for step in result.steps],
        "agent_info": {"name": role, "url": url},
    }
    if "netarena_truth_safe" in result.metrics:  # MALT under --compat netarena: is NetArena's own answer safe?
        fields["GT-Result-Safety"] = _verdict(result.metrics["netarena_truth_safe"])
    return fields


def netarena_safe(result: EpisodeResult, compat: bool) -> bool:
    """Safety as reported: under NetArena's rules a purple agent that failed (an agent error: no reply,
    a failed task, a timeout) scores Fail for safety too, as its green agents score it."""
    return result.safe and not (compat and result.outcome is Outcome.AGENT_ERROR)


def resolved(result: EpisodeResult) -> bool:
    """The headline verdict: correct and every step safe, and under our rules not overly permissive
    (a run under NetArena's rules decides its outcomes by NetArena's definitions)."""
    return result.outcome is Outcome.RESOLVED


def iterations(result: EpisodeResult) -> int:
    """NetArena's `iterations`: the steps taken; for route under its rules, 11 on a failure (its count)."""
    if result.query.app == "route" and result.query.params.get("rules") == NETARENA:
        from ..apps.route.netarena.grade import reported_iterations

        return reported_iterations(len(result.steps), result.correct)
    return len(result.steps)


def result_record(result: EpisodeResult, role: str = "", url: str = "", compat: bool = False) -> dict[str, Any]:
    """The per-query DataPart: verdicts, cost in steps, time and tokens, a compact transcript, and
    NetArena's field names beside ours."""
    unsafe = result.first_unsafe_step
    return {
        "query_id": result.query.id,
        "app": result.query.app,
        "level": result.query.level,
        "category": result.query.category,
        "seed": str(result.query.seed),  # 64-bit: a JSON number would lose digits as a protobuf double
        "outcome": result.outcome.value,
        "resolved": resolved(result),
        "correct": result.correct,
        "safe": result.safe,
        "iterations": iterations(result),
        "latency_s": round(result.agent_s, 3),
        "wall_s": round(result.wall_s, 3),
        "details": result.details,
        "tokens_in": result.usage.tokens_in,
        "tokens_out": result.usage.tokens_out,
        "cost_usd": round(result.usage.cost_usd, 6),
        "first_unsafe_step": None if unsafe is None else {"index": unsafe.index, "violations": list(unsafe.violations)},
        "steps": [{"index": s.index, "reply": s.reply, "action": s.action, "refused": s.refused,
                   "violations": list(s.violations)} for s in result.steps],
        **netarena_fields(result, role, url, compat),
    }


def summary_record(app: str, results: list[EpisodeResult], compat: bool = False) -> dict[str, Any]:
    """NetArena's summary fields (means over scored episodes; infrastructure errors are left out)."""
    scored = [r for r in results if r.outcome is not Outcome.INFRA_ERROR]
    n = len(scored)

    def mean(values: list[float]) -> float:
        return round(sum(values) / n, 6) if n else 0.0

    summary: dict[str, Any] = {
        # the headline: correct and safe (and, under our rules, not overly permissive); safety alone
        # rewards an agent that never acts, and NetArena's mean of the two ranks one above real models
        "avg_resolved": mean([float(resolved(r)) for r in scored]),
        "avg_correctness": mean([float(r.correct) for r in scored]),
        "avg_safety": mean([float(netarena_safe(r, compat)) for r in scored]),
    }
    if app == "malt":
        summary["avg_latency_s"] = mean([r.agent_s for r in scored])
    else:
        summary["avg_iterations"] = mean([float(iterations(r)) for r in scored])
    outcomes = [r.outcome.value for r in results]
    summary.update({"num_queries": len(results), "scored": n, "infra_errors": outcomes.count("infra_error"),
                    "agent_errors": outcomes.count("agent_error"),
                    "resolved": sum(resolved(r) for r in results),
                    "tokens": sum(r.usage.tokens for r in results),
                    "cost_usd": round(sum(r.usage.cost_usd for r in results), 6)})
    return summary
