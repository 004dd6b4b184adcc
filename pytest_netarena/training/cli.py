"""`netarena export sft|atif` and `netarena generate`: training data from runs (kept outside pytest_netarena.training, whose import registers with Gymnasium)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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

    generate = subparsers.add_parser(
        "generate", help="play many episodes with an offline agent (expert trajectories) into a run folder",
        description="Play --episodes queries per app with --agent (default builtin:expert) and write a run folder "
                    "OUT/<run-id>/ (run.json, episodes.jsonl, summary.json, report.html). Queries, seeds and ids are "
                    "those of a benchmark run with --seed; --split keeps one held-out split.")
    generate.add_argument("--agent", default="builtin:expert", help="agent spec: builtin:NAME or python:MODULE:ATTR")
    generate.add_argument("--episodes", type=int, required=True, help="episodes per app")
    generate.add_argument("--out", type=home_path, required=True, help="folder of the run folder (e.g. reports)")
    generate.add_argument("--app", action="append", default=[], help="app to play (repeatable; default: all)")
    generate.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
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
    parser.add_argument("--level", action="append", type=int, default=[], help="only this level (repeatable)")
    parser.set_defaults(handler=handler)


def _filters(args: argparse.Namespace):
    from .export import Filters

    return Filters(resolved=args.resolved, safe=args.safe, apps=tuple(args.app), levels=tuple(args.level))


def run_export(args: argparse.Namespace) -> int:
    from .export import export

    return _export(args, f"sft-{args.form}", "episodes",
                   lambda runs, out, filters: export(runs, out, args.form, filters))


def run_export_atif(args: argparse.Namespace) -> int:
    from .atif import export_atif

    return _export(args, "atif", "trajectories", export_atif)


def _export(args: argparse.Namespace, default_out: str, noun: str, write) -> int:
    """write(runs, out, filters) -> how many were written; --out defaults to default_out in the first run."""
    from ..core.errors import UsageError

    out = args.out or args.runs[0] / default_out
    try:
        count = write(list(args.runs), out, _filters(args))
    except UsageError as error:
        print(f"netarena export {args.kind}: error: {error}", file=sys.stderr)
        return 2
    print(f"{count} {noun} exported to {out}")
    return 0


def run_generate(args: argparse.Namespace) -> int:
    from ..apps import available_apps
    from ..core.errors import UsageError
    from ..run.settings import app_options, parse_levels
    from .generate import GenerateConfig, generate
    from ..core.splits import check_split

    try:
        apps = tuple(args.app) or tuple(sorted(available_apps()))
        unknown = [app for app in apps if app not in available_apps()]
        if unknown:
            raise UsageError(f"unknown app {', '.join(unknown)}; apps: {', '.join(sorted(available_apps()))}")
        if args.episodes < 1 or args.jobs < 1 or args.seed < 0:
            raise UsageError("--episodes and --jobs must be at least 1, --seed zero or more")
        extra = app_options(args.option)
        split = check_split(args.split)
        config = GenerateConfig(agent=args.agent, episodes=args.episodes, apps=apps, seed=args.seed,
                                levels=parse_levels(args.levels), split=split, max_steps=args.max_steps,
                                jobs=args.jobs, extra=extra)
        from ..agents.spec import parse_agent_spec

        builtins = tuple(sorted({n for app in available_apps().values() for n in app.builtin_agent_names}))
        parse_agent_spec(args.agent, builtins)
    except (UsageError, ValueError) as error:
        print(f"netarena generate: error: {error}", file=sys.stderr)
        return 2
    run_dir = generate(config, args.out)
    print(run_dir)
    return 0
