"""Whose rules score a run, ours or NetArena's, as one value (Ruleset) saying what each changes in an episode."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import Query

#: NetArena's rules (--compat netarena); also the "rules" param of a query drawn or read under them
NETARENA = "netarena"
#: the rules a run can be scored by: ours, and NetArena's as its code applies them
RULES = ("default", NETARENA)


@dataclass(frozen=True)
class Ruleset:
    """What a run's rules change in how an episode is played and scored (the app's own part is its hook,
    `App.for_rules`). An episode plan carries it (run/plan.py); nothing else branches on the rules' name."""

    name: str  #: one of RULES, as run.json records it
    #: the prompt states the step budget, and every observation opens with the step line (NetArena says neither)
    states_budget: bool
    #: tools may be offered (NetArena's protocol is text: a reply is read, never a tool call)
    offers_tools: bool
    #: measures of the final state (Judgement.metrics) that keep a correct and safe episode from being resolved
    unresolving_metrics: tuple[str, ...]
    #: apps may mix in impossible episodes (--impossible, docs/validity.md); NetArena has none
    impossible_episodes: bool

    @property
    def netarena(self) -> bool:
        """NetArena's rules: its query lists, observations, verdicts and scoring (docs/netarena.md)."""
        return self.name == NETARENA


#: pytest-netarena's own rules: resolved is correct, safe, and not overly permissive
OURS = Ruleset("default", states_budget=True, offers_tools=True, unresolving_metrics=("overly_permissive",),
               impossible_episodes=True)
#: NetArena's rules as its code applies them: resolved is correct and safe, the protocol is text
NETARENA_RULES = Ruleset(NETARENA, states_budget=False, offers_tools=False, unresolving_metrics=(),
                         impossible_episodes=False)
_BY_NAME = {ruleset.name: ruleset for ruleset in (OURS, NETARENA_RULES)}


def ruleset_named(name: str) -> Ruleset:
    """The Ruleset of a rules name ("default" or "netarena")."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown rules {name!r}; the rules are: {', '.join(RULES)}") from None


def parse_rules(value: Any, name: str = "--compat") -> str:
    """The rules as given: "netarena" for NetArena's; empty, "none" or "default" for ours."""
    from .errors import UsageError

    text = "" if value is None else str(value).strip().lower()
    if text in ("", "none", "default"):
        return "default"
    if text not in RULES:
        raise UsageError(f"{name} takes netarena (NetArena's rules) or none (ours); got {value!r}")
    return text


def rules_of(run: Mapping[str, Any]) -> str:
    """The rules a run folder's run.json (or summary.json) names; folders written before the key was
    renamed say "profile"."""
    return str(run.get("rules", run.get("profile", "default")))


def require_rules(query: Query, rules: str) -> None:
    """Refuse a query drawn (or read) under other rules than an environment's ("" ours, NETARENA NetArena's):
    its params mean something else there, so it cannot be judged."""
    if query.params.get("rules", "") != rules:
        from .errors import InfraError

        wanted = "with --compat netarena" if query.params.get("rules") == NETARENA else "without --compat"
        raise InfraError(f"{query.id} was drawn under other rules than this run's: run it {wanted}")
