"""`netarena validity [APP ...]` measures the validity card and writes it; `netarena check-app APP` runs check_app."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..core.seeding import secret_option

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_UNMEASURED = 0, 1, 2, 3


def register(subparsers) -> None:
    validity = subparsers.add_parser(
        "validity", help="measure the validity card (Agentic Benchmark Checklist items) of apps; exit 0 if it passes",
        description="For each APP, play the oracle, the do-nothing and the random built-in agents on every generated "
                    "query, check that a reset after a state-changing episode equals a fresh environment's, and run "
                    "the audit battery; then write OUT/validity.md and OUT/validity.json with each checklist item, "
                    "its measured figure, its n and pass or fail. Exit status: 0 every applicable item passes, "
                    "1 some item failed, 2 usage error, 3 nothing failed but an app could not be measured on this host.")
    validity.add_argument("apps", nargs="*", metavar="APP", help="apps to measure (default: k8s route malt)")
    validity.add_argument("--queries", type=int, default=1, help="queries per category, level 1 (default 1)")
    validity.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    validity.add_argument("--secret", type=secret_option, default=None, metavar="VALUE",
                          help="run secret keying the hidden parameters with the seed (default: a fresh one, not "
                               "kept; --secret none: the seed alone, and the contamination item is not measured)")
    validity.add_argument("--out", type=lambda text: Path(text).expanduser(), default=None,
                          help="folder of the card (default reports/validity-SEED)")
    validity.add_argument("--max-steps", type=int, default=None,
                          help="step budget of every episode (default: each app's own); the card records it")
    validity.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                          help="an app option (repeatable); defaults: route-size=2x1, malt-topology=synthetic:300")
    validity.add_argument("--register-app", action="append", default=[], metavar="NAME=MODULE:ATTR",
                          help="register your own app first (as the netarena_apps ini key does)")
    validity.set_defaults(handler=run_validity)
    check = subparsers.add_parser(
        "check-app", help="check that an app keeps every app's guarantees (check_app); exit 0 if it does",
        description="Check an app as pytest_netarena.validity.check_app does: seeded generation, every fault breaks "
                    "something, solvable by its builtin:oracle, no hidden parameter in what the agent sees, a grader "
                    "that survives the audit battery. Exit status: 0 all kept, 1 some broken (each named with its "
                    "query), 2 usage error, 3 the app cannot run on this host.")
    check.add_argument("app", metavar="APP|MODULE:ATTR", help="a registered app's name, or MODULE:ATTR of an App")
    check.add_argument("--episodes", type=int, default=3, help="queries played, one per category (default 3)")
    check.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    check.add_argument("--no-audit", action="store_true", help="leave out the audit battery (the slowest part)")
    check.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="an app option (repeatable); defaults: route-size=2x1, malt-topology=synthetic:300")
    check.set_defaults(handler=run_check_app)


def _usage(args: argparse.Namespace) -> tuple[list[str], dict]:
    from ..apps import select_apps
    from ..run.settings import app_options

    apps = select_apps(args.register_app, args.apps, ["k8s", "route", "malt"])
    if args.queries < 1 or args.seed < 0 or (args.max_steps is not None and args.max_steps < 1):
        raise ValueError("--queries and --max-steps must be at least 1, --seed zero or more")
    from .conformance import SMALL

    return apps, SMALL | app_options(args.option)


def run_validity(args: argparse.Namespace) -> int:
    from ..core.app import RunOptions
    from ..core.errors import UsageError
    from ..core.seeding import new_run_secret
    from .card import build_card, unmeasured, write_card
    from .measure import measure_app

    try:
        apps, extra = _usage(args)
    except (ValueError, UsageError) as error:
        print(f"netarena validity: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    started = time.monotonic()
    # a fresh secret unless one is given: the card shows the controls at work (--secret none shows them off)
    secret = new_run_secret() if args.secret is None else args.secret
    options = RunOptions(seed=args.seed, queries=args.queries, levels=(1,), max_steps=args.max_steps, extra=extra,
                         secret=secret)
    measures = [measure_app(app, options, args.queries, print) for app in apps]
    card = build_card(measures, args.seed, {"apps": apps, "queries_per_category": args.queries, "levels": [1],
                                            "max_steps": args.max_steps or "each app's own", "options": extra,
                                            "secret": "given" if args.secret else "drawn, not kept" if secret else "none"},
                      time.monotonic() - started)
    out = args.out or Path("reports") / f"validity-{args.seed}"
    write_card(card, out)
    if (out / "run.json").is_file() and (out / "episodes.jsonl").is_file():  # a run's folder: its report.html links the card
        from ..reporting.rebuild import build_report

        build_report(out)
    print()
    for item in card["items"]:
        print(f"{item['status']:>14}  {item['app'] or 'all'} {item['id']}: {item['figure']}")
    missing = unmeasured(card)
    print(f"validity card: {'PASSED' if card['passed'] else 'FAILED'}"
          + "".join(f"; {app} not measured here, because {why}" for app, why in missing.items())
          + f": {out / 'validity.md'}, {out / 'validity.json'}")
    if not card["passed"]:
        return EXIT_FAILED
    return EXIT_UNMEASURED if missing else EXIT_PASSED


def _app_to_check(target: str):
    """The App a check-app argument names: MODULE:ATTR, or a registered app's name."""
    import importlib

    from ..apps import get_app
    from ..core.app import App

    if ":" not in target:
        try:
            return get_app(target)
        except KeyError:
            raise ValueError(f"unknown app {target!r}: give a registered app's name or MODULE:ATTR") from None
    module_name, _, attr = target.partition(":")
    try:
        app = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot load {target}: {error}") from None
    if not isinstance(app, App):
        kind = "class" if isinstance(app, type) else type(app).__name__
        raise ValueError(f"{target} is a {kind}, not an App instance")
    return app


def run_check_app(args: argparse.Namespace) -> int:
    from ..core.app import RunOptions
    from ..core.errors import BackendUnavailable, UsageError
    from ..run.settings import app_options
    from .conformance import SMALL, check_app

    try:
        app = _app_to_check(args.app)
        if args.episodes < 1 or args.seed < 0:
            raise ValueError("--episodes must be at least 1, --seed zero or more")
        options = RunOptions(seed=args.seed, queries=1, levels=(1,), extra=SMALL | app_options(args.option))
    except (ValueError, UsageError) as error:
        print(f"netarena check-app: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    try:
        check = check_app(app, options, episodes=args.episodes, audit=not args.no_audit, raise_on_failure=False)
    except BackendUnavailable as error:
        print(f"netarena check-app: {app.name} cannot run on this host: {error}", file=sys.stderr)
        return EXIT_UNMEASURED
    print("\n".join(check.lines()))
    print(f"check-app {app.name}: " + ("every guarantee kept" if check.passed else
                                       f"{len(check.failures)} broken: {', '.join(sorted(check.broken()))}"))
    return EXIT_PASSED if check.passed else EXIT_FAILED
