"""`netarena serve-green`: serve one suite as an AgentBeats-compatible green agent."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..serving.options import add_limit_arguments, limits_from

DEFAULT_PORT = 9009


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def add_server_arguments(parser: argparse.ArgumentParser, default_port: int) -> None:
    """--host, --port and --card-url of a command that serves an A2A agent (serve-green, serve-purple)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=default_port,
                        help=f"port (default {default_port}; 0 picks a free one)")
    parser.add_argument("--card-url", default=None,
                        help="the URL the agent card advertises, when clients reach this server by another name")
    add_limit_arguments(parser)


def serve(command: str, build_app: Any, args: argparse.Namespace, banner: str) -> int:
    """Serve build_app on --host/--port until interrupted; exit status 2 when the port cannot be bound."""
    from .server import serve_forever

    def announce(url: str) -> None:
        print(f"{banner} listening on {url}", flush=True)

    try:
        limits = limits_from(args)
    except ValueError as error:
        print(f"netarena {command}: {error}", file=sys.stderr)
        return 2
    try:
        serve_forever(build_app, args.host, args.port, args.card_url, announce, limits)
    except OSError as error:
        print(f"netarena {command}: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve-green",
        help="serve a suite as an A2A green agent (AgentBeats assessments)",
        description="Serve one app's suite as an AgentBeats green agent over A2A (JSON-RPC, streaming). "
        'A request is a user message whose text is {"participants": {ROLE: URL}, "config": {...}} with exactly '
        "one participant; config keys: num_queries, prompt_style (or NetArena's prompt_type, or strategy, its old "
        "name), max_iterations, seed, levels, "
        "timeout_s (app options come only from --option, never from a request). Each query's result is appended to one artifact, then the summary "
        "(avg_correctness, avg_safety, avg_iterations or avg_latency_s).",
    )
    add_server_arguments(parser, DEFAULT_PORT)
    parser.add_argument("--app", default="k8s", help="the suite to serve: k8s (default), route, malt, or a registered app")
    parser.add_argument("--option", action="append", type=_pair, default=[], metavar="NAME=VALUE",
                        help="an app option for every assessment, e.g. route-size=2x1 or malt-topology=PATH (repeatable)")
    parser.add_argument("--compat", choices=("netarena", "none"), default=None,
                        help="score every assessment by NetArena's rules (a request's config.compat still wins)")
    parser.add_argument("--register-app", action="append", type=_pair, default=[], metavar="NAME=MODULE:ATTR",
                        help="register your own app before serving (as the netarena_apps ini key does)")
    parser.set_defaults(handler=serve_green)


def serve_green(args: argparse.Namespace) -> int:
    from ..apps import APP_ENTRY_POINTS, get_app, register_app
    from .agent import build_green_app

    for name, entry_point in args.register_app:
        register_app(name, entry_point)
    if args.app not in APP_ENTRY_POINTS:
        print(f"netarena serve-green: unknown app {args.app!r}; known: {', '.join(APP_ENTRY_POINTS)}", file=sys.stderr)
        return 2
    try:
        app = get_app(args.app)
    except (ImportError, AttributeError) as error:
        print(f"netarena serve-green: the {args.app} app does not load: {error}", file=sys.stderr)
        return 2
    problem = _option_problem(app, args.option)
    if problem:
        print(f"netarena serve-green: error: {problem}", file=sys.stderr)
        return 2
    options = {name.replace("-", "_"): value for name, value in args.option}
    return serve("serve-green", build_green_app(args.app, options, args.compat), args,
                 f"netarena green agent ({args.app})")


def _option_problem(app: Any, given: list[tuple[str, str]]) -> str:
    """Why the --option values cannot serve the app (a name it does not declare, a value its check refuses), or ""."""
    from ..apps.options import check_value
    from ..core.errors import UsageError

    specs = {spec.name: spec for spec in app.options}
    for name, value in given:
        if name not in specs:
            return f"unknown app option {name!r} for {app.name}; its options: {', '.join(sorted(specs)) or 'none'}"
        try:
            check_value(specs[name], value)
        except UsageError as error:
            return str(error)
    return ""
