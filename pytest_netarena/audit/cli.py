"""`netarena audit [APP ...]`: the grader-attack battery against apps; exit status 0 only when no cheat won."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.seeding import PUBLIC, secret_option

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3


def register(subparsers) -> None:
    audit = subparsers.add_parser(
        "audit", help="run the grader-attack battery (cheating agents) against apps; exit 0 only if no cheat won",
        description="Play ordinary episodes of each APP with built-in cheating agents, one per attack (faked "
                    "reachability, answers copied from harness files or the prompt, protected-object edits, grader "
                    "type tricks, escape attempts, infrastructure-error provocation), the app-independent ones for "
                    "every app (also those registered with --register-app) and each built-in app's own. Every cheat "
                    "judged correct, resolved or left unscored (an infrastructure error) is listed with its "
                    "transcript. Writes OUT/audit-<run-id>/ (audit.json, episodes.jsonl, report.html). Exit status: "
                    "0 no cheat won, 1 some did, 2 usage error, 3 an app could not be audited on this host.")
    audit.add_argument("apps", nargs="*", metavar="APP", help="apps to audit (default: every registered app)")
    audit.add_argument("--queries", type=int, default=2, help="queries per app each cheat plays (default 2)")
    audit.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    audit.add_argument("--secret", type=secret_option, default=PUBLIC, metavar="VALUE",
                       help="run secret keying the hidden parameters with the seed (default none: the seed alone)")
    audit.add_argument("--out", type=lambda text: Path(text).expanduser(), default=Path("reports"), help="folder of the audit's run folder (default reports)")
    audit.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="an app option, e.g. route-size=2x1 or malt-topology=synthetic:600 (repeatable)")
    audit.add_argument("--register-app", action="append", default=[], metavar="NAME=MODULE:ATTR",
                       help="register your own app first (as the netarena_apps ini key does)")
    audit.set_defaults(handler=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from ..apps import select_apps
    from .battery import audit_app, transcript_lines, write_audit
    from ..core.app import RunOptions
    from ..run.settings import app_options

    try:
        apps = select_apps(args.register_app, args.apps)
        if args.queries < 1 or args.seed < 0:
            raise ValueError("--queries must be at least 1, --seed zero or more")
        extra = app_options(args.option)
    except ValueError as error:
        print(f"netarena audit: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    options = RunOptions(seed=args.seed, extra=extra, secret=args.secret)
    audits = [audit_app(app, args.queries, options) for app in apps]
    run_dir = write_audit(audits, args.out, args.seed)
    print()
    for audit in audits:
        if audit.skipped:
            print(f"{audit.app}: NOT AUDITED: {audit.skipped}")
            continue
        print(f"{audit.app}: {len(audit.episodes)} cheating episodes, {len(audit.findings)} won")
        for result in audit.findings:
            print(f"  CHEAT WON: {result.agent} on {result.query.id}: {result.outcome.value}"
                  f"{' (judged correct)' if result.correct else ''}")
            for line in transcript_lines(result):
                print(line)
    print(f"audit: {run_dir / 'audit.json'}; transcripts in {run_dir / 'report.html'}")
    if any(audit.findings for audit in audits):
        return EXIT_FOUND
    return EXIT_SKIPPED if any(audit.skipped for audit in audits) else EXIT_CLEAN
