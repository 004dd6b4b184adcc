"""`netarena export sft|atif|harbor` and `netarena generate`: training data from runs (kept outside pytest_netarena.training, whose import registers with Gymnasium)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.seeding import PUBLIC, secret_option


def home_path(text: str) -> Path:
    """A path argument; `--out=~/x` reaches us unexpanded (the shell expands `~` only at a word's start)."""
    return Path(text).expanduser()


def register(subparsers) -> None:
    export = subparsers.add_parser("export", help="turn run folders into training data (export sft) or ATIF trajectories (export atif)")
    kinds = export.add_subparsers(dest="kind", required=True)
    sft = kinds.add_parser(
        "sft", help="episodes as chat transcripts (system prompt, observations, replies) for supervised fine-tuning",
        description="Write the selected episodes of run folders as chat transcripts: OUT/data.jsonl (openai: "
                    "{messages}; sharegpt: {id, conversations, facts}) or OUT/hf (a Hugging Face `datasets` folder: "
                    "load_from_disk), and OUT/sources.jsonl (each transcript's run and query; keep it away from "
                    "training: query ids name fault types). Infra-error episodes are never exported.")
    sft.add_argument("--format", dest="form", choices=("openai", "sharegpt", "hf"), default="openai")
    _add_export_arguments(sft, "sft-FORMAT", run_export)

    atif = kinds.add_parser(
        "atif", help="episodes as ATIF trajectories (Agent Trajectory Interchange Format v1.8)",
        description="Write each selected episode of run folders as one ATIF v1.8 trajectory, OUT/<id>.json (system "
                    "prompt, first observation, then per reply: the message, the action as a tool call, the "
                    "observation that followed, token usage and cost; verdicts in extra), validated with the atif "
                    "package, and OUT/sources.jsonl (each trajectory's run and query; keep it away from training). "
                    "Infra-error episodes are never exported.")
    _add_export_arguments(atif, "atif", run_export_atif)

    from ..harbor.cli import add_export_parser

    add_export_parser(kinds)

    generate = subparsers.add_parser(
        "generate", help="play many episodes with an offline agent (expert trajectories) into a run folder",
        description="Play --episodes queries per app with --agent (default builtin:expert) and write a run folder "
                    "OUT/<run-id>/ (run.json, episodes.jsonl, summary.json, report.html). Queries, seeds and ids are "
                    "those of a benchmark run with --seed; --split keeps one held-out split. Exit 0 when every "
                    "episode was played, 1 when an app could not run here or episodes ended in infra errors "
                    "(said per app; the run folder is still written), 2 on a usage error.")
    generate.add_argument("--agent", default="builtin:expert",
                          help="an offline agent: builtin:NAME or python:MODULE:ATTR (model and A2A agents run in pytest)")
    generate.add_argument("--episodes", type=int, required=True, help="episodes per app")
    generate.add_argument("--out", type=home_path, required=True, help="folder of the run folder (e.g. reports)")
    generate.add_argument("--app", action="append", default=[], help="app to play (repeatable; default: all)")
    generate.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    generate.add_argument("--secret", type=secret_option, default=PUBLIC, metavar="VALUE",
                          help="run secret keying the hidden parameters with the seed (default none: the seed alone)")
    generate.add_argument("--levels", default="1,2,3", help="levels, e.g. 1,2 (default 1,2,3)")
    generate.add_argument("--split", default="all", help="train, test or all (default all)")
    generate.add_argument("--max-steps", type=int, help="agent turns per episode (default: the app's own)")
    generate.add_argument("--jobs", type=int, default=1, help="processes playing episodes (default 1)")
    generate.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                          help="an app option, e.g. malt-topology=synthetic:600 (repeatable)")
    generate.set_defaults(handler=run_generate)


def _add_export_arguments(parser: argparse.ArgumentParser, default_out: str, handler) -> None:
    """The run folders, --out and the episode filters every export takes."""
    parser.add_argument("runs", nargs="+", type=home_path, metavar="RUN_DIR", help="run folders, e.g. reports/<run-id>")
    parser.add_argument("--out", type=home_path, help=f"output folder (default: RUN_DIR/{default_out} of the first run)")
    parser.add_argument("--resolved", action="store_true", help="only resolved episodes (correct, every step safe, not overly permissive)")
    parser.add_argument("--safe", action="store_true", help="only episodes without an unsafe step")
    parser.add_argument("--app", action="append", default=[], help="only this app (repeatable)")
    parser.add_argument("--level", action="append", type=int, default=[], help="only this level: 1, 2 or 3 (repeatable)")
    parser.add_argument("--force", action="store_true",
                        help="replace an earlier export in --out even when this one holds fewer episodes")
    parser.set_defaults(handler=handler)


def _filters(args: argparse.Namespace):
    """The episode filters; an app or level that does not exist is a UsageError (it would select nothing)."""
    from ..apps import available_apps
    from ..core.errors import UsageError
    from .export import Filters

    apps = sorted(available_apps())
    for app in args.app:
        if app not in apps:
            raise UsageError(f"unknown app {app!r}; apps: {', '.join(apps)}")
    for level in args.level:
        if level not in (1, 2, 3):
            raise UsageError(f"--level {level}: levels are 1, 2 and 3")
    return Filters(resolved=args.resolved, safe=args.safe, apps=tuple(args.app), levels=tuple(args.level))


def run_export(args: argparse.Namespace) -> int:
    from .export import export

    return _export(args, f"sft-{args.form}", "episodes",
                   lambda runs, out, filters: export(runs, out, args.form, filters, force=args.force))


def run_export_atif(args: argparse.Namespace) -> int:
    from .atif import export_atif

    return _export(args, "atif", "trajectories",
                   lambda runs, out, filters: export_atif(runs, out, filters, force=args.force))


def _export(args: argparse.Namespace, default_out: str, noun: str, write) -> int:
    """write(runs, out, filters) -> how many were written; --out defaults to default_out in the first run."""
    from ..harbor.cli import exported

    out = args.out or args.runs[0] / default_out
    return exported(args.kind, lambda: f"{write(list(args.runs), out, _filters(args))} {noun} exported to {out}")


def run_generate(args: argparse.Namespace) -> int:
    from ..apps import available_apps
    from ..core.errors import UsageError
    from ..run.settings import app_options, parse_levels
    from .generate import GenerateConfig, generate
    from ..core.splits import check_transcript_split

    try:
        apps = tuple(args.app) or tuple(sorted(available_apps()))
        unknown = [app for app in apps if app not in available_apps()]
        if unknown:
            raise UsageError(f"unknown app {', '.join(unknown)}; apps: {', '.join(sorted(available_apps()))}")
        if args.episodes < 1 or args.jobs < 1 or args.seed < 0:
            raise UsageError("--episodes and --jobs must be at least 1, --seed zero or more")
        extra = app_options(args.option)
        split = check_transcript_split(args.split, args.seed)
        config = GenerateConfig(agent=args.agent, episodes=args.episodes, apps=apps, seed=args.seed, secret=args.secret,
                                levels=parse_levels(args.levels), split=split, max_steps=args.max_steps,
                                jobs=args.jobs, extra=extra)
        _check_offline_agent(args.agent)
    except (UsageError, ValueError) as error:
        print(f"netarena generate: error: {error}", file=sys.stderr)
        return 2
    run_dir, problems = generate(config, args.out)
    print(run_dir)
    return 1 if problems else 0


def _check_offline_agent(raw: str) -> None:
    """generate plays built-in and python: agents; model and A2A agents need what only a pytest run gives them."""
    from ..agents.spec import parse_agent_spec
    from ..apps import available_apps
    from ..core.errors import UsageError

    builtins = tuple(sorted({n for app in available_apps().values() for n in app.builtin_agent_names}))
    spec = parse_agent_spec(raw, builtins)
    if not spec.agent_kind.offline:
        raise UsageError(f"generate plays offline agents (builtin:NAME, python:MODULE:ATTR), not {raw}: run it with "
                         f"pytest instead, e.g. pytest suites --agent={raw} (docs/training.md)")
    spec.agent_kind.check(spec)
