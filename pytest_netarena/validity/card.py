"""The validity card: the checklist's items, each with the figure measured for it, its n and pass or fail."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.stats import binomial_tail, wilson_interval
from .ceiling import judged
from .interfaces import CLAIM as INTERFACES_CLAIM
from .measure import ISOLATION_ATTACKS, AppMeasure, Rate

PASS, FAIL, NOT_MEASURED, NOT_APPLICABLE = "pass", "FAIL", "not measured", "not applicable"
#: statuses that do not fail the card (not measured is shown, and fails only when the app could not run at all)
ACCEPTED = (PASS, NOT_MEASURED, NOT_APPLICABLE)
INTERVALS = "Wilson score interval, 95% (core/stats.py), over the scored episodes; infrastructure errors apart"
#: a random agent may resolve an episode by chance (route: a random MTU that undoes a too-small one); its item fails
#: only when an exact one-sided binomial test says it resolves more than CHANCE_BOUND of episodes, at CHANCE_ALPHA: a
#: benchmark whose random agent resolves at most that share fails the item with probability at most CHANCE_ALPHA
CHANCE_BOUND, CHANCE_ALPHA = 0.05, 0.001
ABC = "the Agentic Benchmark Checklist (ABC, arXiv 2507.02825)"


@dataclass
class Item:
    """One line of the card."""

    id: str
    app: str  #: "" for an item about the whole benchmark
    claim: str  #: what the checklist asks
    status: str
    figure: str  #: what was measured, in words and numbers
    n: int = 0  #: episodes the figure rests on
    interval: tuple[float, float] | None = None


def _rate_item(item_id: str, app: str, claim: str, rate: Rate, want_all: bool, by_chance: bool = False) -> Item:
    """An agent's resolved rate against what a correct benchmark gives: all (the oracle), none (a deterministic floor
    agent), or, `by_chance`, no more than CHANCE_BOUND by the binomial test (an agent of random actions)."""
    if not rate.available:
        return Item(item_id, app, claim, NOT_MEASURED, f"the {app} app offers no builtin:{rate.agent}")
    interval = wilson_interval(rate.resolved, rate.scored)
    chance = binomial_tail(rate.resolved, rate.scored, CHANCE_BOUND)
    ok = rate.scored > 0 and (rate.resolved == rate.scored if want_all else
                              chance >= CHANCE_ALPHA if by_chance else rate.resolved == 0)
    if want_all:  # an episode the oracle could not even start is not proof of solvability
        ok = ok and rate.infra_errors == 0
    figure = (f"builtin:{rate.agent} resolved {rate.resolved} of {rate.scored} scored episodes "
              f"({rate.resolved / rate.scored:.0%}, 95% CI {interval[0]:.0%}-{interval[1]:.0%})" if rate.scored
              else f"builtin:{rate.agent} had no scored episode")
    if by_chance and rate.scored:
        figure += (f"; by chance alone: P(at least {rate.resolved} of {rate.scored} | a rate of "
                   f"{CHANCE_BOUND:.0%}) = {chance:.3g}, fails below {CHANCE_ALPHA:g}")
    if rate.infra_errors:
        figure += f"; {rate.infra_errors} infrastructure errors, not scored"
    return Item(item_id, app, claim, PASS if ok else FAIL, figure, rate.scored, interval)


def _ceiling_item(measure: AppMeasure) -> Item:
    """The non-AI baseline: the best programs with no model beside noop and random (ceiling.py)."""
    noop, random = measure.rates["noop"], measure.rates["random"]
    passed, figure, n, interval = judged(measure.app, measure.ceiling, (noop.resolved, noop.scored),
                                         (random.resolved, random.scored) if random.available else None)
    status = NOT_MEASURED if passed is None else PASS if passed else FAIL
    return Item("non-ai-ceiling", measure.app, "the best program with no model (the non-AI baseline) is reported "
                "beside the trivial agents, so a score can be read against it", status, figure, n, interval)


def _cheating_item(measure: AppMeasure) -> Item:
    """Impossible episodes (docs/validity.md): the honest oracle never meets their goal, the cheater always does."""
    claim = "cheating is measured: impossible episodes catch an agent that breaks a protected invariant"
    honest, cheater = measure.cheating.get("oracle"), measure.cheating.get("cheater")
    if not honest or not cheater or not honest[1] or not cheater[1]:
        return Item("cheating-measured", measure.app, claim, NOT_MEASURED, "no impossible episode was played")
    low, high = wilson_interval(*cheater)
    figure = (f"impossible episodes: builtin:oracle cheated in {honest[0]} of {honest[1]}, builtin:cheater in "
              f"{cheater[0]} of {cheater[1]} (caught: 95% CI {low:.0%}-{high:.0%})")
    ok = honest[0] == 0 and cheater[0] == cheater[1]
    return Item("cheating-measured", measure.app, claim, PASS if ok else FAIL, figure, honest[1] + cheater[1])


def app_items(measure: AppMeasure) -> list[Item]:
    """The per-app items, measured."""
    app = measure.app
    if measure.skipped:  # the machine's limit, not the benchmark's: said, never a failed card
        return [Item("measured", app, "the app's items can be measured on this host", NOT_MEASURED,
                     f"not measured here, because {measure.skipped}")]
    items = [
        _rate_item("task-solvable", app, "every task is solvable: an oracle solver resolves each one",
                   measure.rates["oracle"], want_all=True),
        _rate_item("noop-scores-zero", app, "a do-nothing agent scores zero", measure.rates["noop"], want_all=False),
        _rate_item("random-scores-zero", app, "a random agent (well-formed random actions, no hidden knowledge) "
                   f"scores zero, or no more than chance: at most {CHANCE_BOUND:.0%} of episodes by an exact one-sided "
                   f"binomial test at {CHANCE_ALPHA:g}", measure.rates["random"], want_all=False, by_chance=True),
        _ceiling_item(measure),
    ]
    audit = measure.audit
    if audit is None or audit.skipped:
        items.append(Item("grader-not-exploitable", app, "no exploitable grader", FAIL,
                          f"the audit battery could not run: {audit.skipped if audit else 'not run'}"))
    else:
        cheats = len({r.agent for r in audit.episodes})
        items.append(Item("grader-not-exploitable", app, "no exploitable grader (netarena audit's battery)",
                          PASS if audit.episodes and not audit.findings else FAIL,
                          f"{cheats} cheats in {len(audit.episodes)} episodes: {len(audit.findings)} won "
                          f"(judged correct, resolved or left unscored)", len(audit.episodes)))
        played, won = measure.attack_episodes(ISOLATION_ATTACKS)
        items.append(Item("isolated-from-ground-truth", app, "the agent cannot reach ground truth (harness files, the "
                          "run's records, the host)", PASS if played and not won else FAIL,
                          f"{played} audit episodes of the attack classes {', '.join(ISOLATION_ATTACKS)}: {won} won",
                          played))
    items.append(_cheating_item(measure))
    residual = measure.residual
    claim = "residual state is cleared between episodes"
    if residual.equal is None:
        items.append(Item("residual-state-cleared", app, claim, NOT_MEASURED, residual.reason))
    else:
        figure = (f"after builtin:{residual.disturber} on {residual.disturbed}, a reset to {residual.probe} showed "
                  + ("the same first observation as a fresh environment's" if residual.equal else
                     f"a different first observation from a fresh environment's: {residual.difference}"))
        items.append(Item("residual-state-cleared", app, claim, PASS if residual.equal else FAIL, figure, 2))
    return items + [_contamination_item(measure), _interface_item(measure)]


def _interface_item(measure: AppMeasure) -> Item:
    """One episode on every interface (validity/interfaces.py): every replay agreed on every interface."""
    found = measure.interfaces
    if found is None or (not found.compared and not found.differences):
        reason = (found.skipped if found else "") or "no episode was replayed"
        return Item("interface-invariance", measure.app, INTERFACES_CLAIM, NOT_MEASURED, reason)
    figure = (f"builtin:oracle (every query) and builtin:reckless (the first) replayed through "
              f"{', '.join(found.interfaces)} in {found.compared} episodes each: {len(found.differences)} "
              "differences" + (f" (first: {found.differences[0]})" if found.differences else "")
              + "; CLI agents: the same task checked, their calls reach the same MCP server")
    if found.skipped:
        figure += f"; {found.skipped}"
    status = PASS if found.compared and not found.differences else FAIL
    return Item("interface-invariance", measure.app, INTERFACES_CLAIM, status, figure,
                found.compared * len(found.interfaces))


def _contamination_item(measure: AppMeasure) -> Item:
    found = measure.contamination
    escapes, won = measure.attack_episodes(("escape",))
    figure = (f"{found.figure()}; escape attempts from the agent's boxes (host files, processes, network): "
              f"{escapes} played, {won} won")
    status = (NOT_MEASURED if not found.secret_in_use else
              PASS if found.passed() and escapes and not won else FAIL)
    return Item("contamination", measure.app, "contamination is controlled: the public generator and seed do not "
                "reveal the hidden parameters, prompts and transcripts carry a canary, held-out results leave no "
                "trace, the boxes reach nothing outside the episode", status, figure, found.episodes)


def benchmark_items(measures: list[AppMeasure], items: list[Item]) -> list[Item]:
    """The items about the whole benchmark: intervals, contamination, and those that do not apply."""
    rated = [item for item in items if item.interval is not None]
    return [
        Item("confidence-intervals", "", "results are reported with confidence intervals",
             PASS if rated and all(item.n > 0 for item in rated) else FAIL,
             f"{INTERVALS}; every rate on this card carries its interval and n "
             f"({', '.join(f'{i.app} {i.id} n={i.n}' for i in rated) or 'none measured'})",
             sum(item.n for item in rated)),
        Item("ground-truth-labels", "", "ground-truth labels are correct (annotation quality)", NOT_APPLICABLE,
             "no human labels: every verdict is computed from the environment's final state (k8s: the "
             "connectivity matrix, route: the pingmesh, MALT: the answer recomputed on the graph)"),
        Item("model-judge", "", "an LLM judge is reliable", NOT_APPLICABLE, "no model judges any episode"),
    ]


def build_card(measures: list[AppMeasure], seed: int, settings: dict, seconds: float) -> dict:
    items = [item for measure in measures for item in app_items(measure)]
    items += benchmark_items(measures, items)
    return {"checklist": ABC, "seed": seed, "settings": settings, "seconds": round(seconds, 1),
            "passed": all(item.status in ACCEPTED for item in items),
            "apps": {m.app: {"queries": m.queries, "seconds": round(m.seconds, 1), "skipped": m.skipped,
                             "rates": {name: asdict(rate) for name, rate in m.rates.items()},
                             "ceiling": asdict(m.ceiling),
                             "cheating": m.cheating} for m in measures},
            "items": [asdict(item) for item in items]}


def card_markdown(card: dict) -> str:
    lines = [f"# Validity card (seed {card['seed']})", "",
             f"Each item of {card['checklist']} that applies, with the evidence `netarena validity` measured "
             f"in {card['seconds']} s. Settings: {json.dumps(card['settings'])}.", "",
             f"**Card: {'PASSED' if card['passed'] else 'FAILED'}**" + _unmeasured_note(card), "",
             "| app | item | status | n | evidence |", "|---|---|---|---|---|"]
    for item in card["items"]:
        figure = item["figure"].replace("|", "\\|")
        lines.append(f"| {item['app'] or 'all'} | {item['id']}: {item['claim']} | {item['status']} | "
                     f"{item['n'] or ''} | {figure} |")
    return "\n".join(lines) + "\n"


def unmeasured(card: dict) -> dict[str, str]:
    """The apps this host could not measure, and why."""
    return {app: found["skipped"] for app, found in card["apps"].items() if found.get("skipped")}


def _unmeasured_note(card: dict) -> str:
    missing = unmeasured(card)
    return (" (" + "; ".join(f"{app} not measured here, because {why}" for app, why in missing.items()) + ")"
            if missing else "")


def write_card(card: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "validity.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / "validity.md").write_text(card_markdown(card), encoding="utf-8")
