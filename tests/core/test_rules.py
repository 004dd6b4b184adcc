"""Whose rules score a run: parsed from --compat, and read back from run folders old and new."""

from __future__ import annotations

import pytest

from pytest_netarena.core.app import NETARENA, RunOptions, parse_rules, rules_of
from pytest_netarena.core.errors import UsageError


def test_compat_values_name_the_rules() -> None:
    assert [parse_rules(value) for value in (None, "", "none", "Default", " NetArena ")] == \
        ["default", "default", "default", "default", NETARENA]
    with pytest.raises(UsageError, match="--compat takes netarena"):
        parse_rules("strict")
    assert RunOptions(rules=NETARENA).netarena_compat and not RunOptions().netarena_compat


def test_run_folders_say_rules_and_older_ones_profile() -> None:
    assert rules_of({"rules": NETARENA}) == NETARENA
    assert rules_of({"profile": NETARENA}) == NETARENA  # written before the key was renamed
    assert rules_of({"rules": "default", "profile": NETARENA}) == "default"
    assert rules_of({}) == "default"


def test_the_rules_are_one_value_each_front_door_reads() -> None:
    from pytest_netarena.core.rules import NETARENA_RULES, OURS

    assert RunOptions().ruleset is OURS and RunOptions(rules=NETARENA).ruleset is NETARENA_RULES
    assert OURS.states_budget and OURS.offers_tools and OURS.unresolving_metrics == ("overly_permissive",)
    assert not (NETARENA_RULES.states_budget or NETARENA_RULES.offers_tools or NETARENA_RULES.unresolving_metrics)
    assert NETARENA_RULES.netarena and not OURS.netarena


@pytest.mark.parametrize("app_name", ["k8s", "route", "malt"])
def test_each_built_in_app_is_ruled_and_its_netarena_app_is_its_hook(app_name: str) -> None:
    from pytest_netarena.apps import get_app

    app = get_app(app_name)
    ours, theirs = app.for_rules("default"), app.for_rules(NETARENA)
    assert type(theirs).__module__ == f"pytest_netarena.apps.{app_name}.netarena.app"
    assert isinstance(theirs, type(ours)) and theirs is not ours
    options = {"k8s": {}, "route": {"route_size": "2x1"}, "malt": {"malt_topology": "synthetic:200"}}[app_name]
    compat = RunOptions(seed=1, queries=1, rules=NETARENA, extra=options)
    assert list(app.categories(compat)) == list(theirs.categories(compat)) != list(ours.categories(compat))
    assert app.impossible_categories(compat) == () and ours.impossible_categories(RunOptions(extra=options))
    drawn = app.generate(compat)
    assert drawn and [query.category for query in drawn] == [query.category for query in theirs.generate(compat)]
    if app_name != "k8s":  # their queries say whose rules drew them (k8s's built-ins are alike under both)
        assert all(query.params.get("rules") == NETARENA for query in drawn)
    assert app.netarena_prompt() == theirs.prompt_for(compat) == app.prompt_for(compat)


def test_a_ruled_app_sends_each_call_to_the_app_of_its_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from pytest_netarena.core.catalogue import Category
    from pytest_netarena.core.ruled import RuledApp

    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "plugin"))
    import sys
    import types

    from toy_app import CounterApp

    class Theirs(CounterApp):
        def categories(self, options):
            return [Category(1, "theirs")]

        def draw_params(self, category, chooser, options):
            return {"target": 5, "rules": NETARENA}

    module = types.ModuleType("ruled_toy_theirs")
    module.THEIRS = Theirs()
    monkeypatch.setitem(sys.modules, "ruled_toy_theirs", module)
    app = RuledApp(CounterApp(), "ruled_toy_theirs:THEIRS")
    assert app.name == "toy" and app.builtin_agent_names == ("oracle", "reckless")
    ours_query = app.generate(RunOptions(seed=1, queries=1, levels=(1,)))[0]
    theirs_query = app.generate(RunOptions(seed=1, queries=1, levels=(1,), rules=NETARENA))[0]
    assert (ours_query.category, theirs_query.category) == ("set", "theirs")
    agent = app.builtin_agent("oracle", theirs_query, None)  # by the rules its query was drawn under
    assert agent.text == "set 5"


def test_a_ruled_app_forwards_every_method_an_app_has() -> None:
    """Every method of core/app.py's App is RuledApp's own, so none falls to App's default and skips both apps (a
    method added to App later, such as run_facts, was answered by App's empty default and run.json lost the MALT
    topology)."""
    import inspect

    from pytest_netarena.core.app import App
    from pytest_netarena.core.ruled import RuledApp

    methods = {name for name, value in vars(App).items() if inspect.isfunction(value) and not name.startswith("_")}
    assert {"run_facts", "preflight", "make_environment"} <= methods
    assert sorted(name for name in methods if name not in vars(RuledApp)) == []
