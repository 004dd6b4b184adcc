"""`netarena mcp --app APP` (one episode served over MCP) and `netarena cli-agents` (install and list CLI agents)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
import time
from pathlib import Path

from ..core.seeding import PUBLIC, secret_option
from ..serving.options import add_limit_arguments, limits_from


#: environment variable that may hold the bearer token of `netarena mcp --http` (kept off the command line)
TOKEN_ENV = "NETARENA_MCP_TOKEN"


def home_path(text: str) -> Path:
    return Path(text).expanduser()


def register(subparsers) -> None:
    serve = subparsers.add_parser(
        "mcp", help="serve one episode over MCP (stdio, or streamable HTTP on loopback) to any MCP client",
        description="Serve one episode of APP over MCP: the tools are the app's actions and finish; the task (system "
                    "prompt and first symptom) is the server's instructions and its prompt `task`. Every call is "
                    "one step, run in our boxes and judged for safety. When the client disconnects, calls finish, "
                    "the step budget is spent or a deadline passes, the episode is judged and written as a run "
                    "folder under --out, and its verdict is printed (to stderr over stdio).")
    serve.add_argument("--app", required=True, help="the app to play: k8s, route or malt")
    serve.add_argument("--seed", type=int, default=0, help="run seed: picks the query as a benchmark run would (default 0)")
    serve.add_argument("--secret", type=secret_option, default=PUBLIC, metavar="VALUE",
                       help="run secret keying the hidden parameters with the seed (default none: the seed alone)")
    serve.add_argument("--levels", default="1,2,3", help="levels to draw from, e.g. 1 or 1,2 (default 1,2,3)")
    serve.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="an app option, e.g. malt-topology=synthetic:200 (repeatable)")
    serve.add_argument("--max-steps", type=int, help="steps the client may take (default: the app's own)")
    serve.add_argument("--prompt-style", "--strategy", dest="prompt_style", default="zero-shot", metavar="NAME",
                       help="prompt style of the task text: zero-shot (default), cot, few-shot or react (--strategy is "
                            "its old name)")
    serve.add_argument("--out", type=home_path, default=Path("reports"), help="folder of the run folder (default reports)")
    serve.add_argument("--http", metavar="HOST:PORT",
                       help="serve streamable HTTP at http://HOST:PORT/mcp (a loopback address) instead of stdio")
    serve.add_argument("--token", help=f"bearer token for --http (default: ${TOKEN_ENV}, else a new one, printed)")
    serve.add_argument("--idle-timeout", type=float, default=300.0,
                       help="seconds the client may send nothing before the episode ends as an agent error (default 300)")
    serve.add_argument("--timeout", type=float, default=3600.0,
                       help="seconds the whole episode may take (default 3600)")
    add_limit_arguments(serve.add_argument_group("--http listener limits"))
    serve.set_defaults(handler=run_serve)

    clis = subparsers.add_parser("cli-agents", help="install or list the CLI agents (cli:codex, cli:claude-code)")
    actions = clis.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", help="install CLI agents from npm at their pinned versions (outside any checkout)")
    install.add_argument("names", nargs="+", help="codex, claude-code")
    install.set_defaults(handler=run_install)
    listing = actions.add_parser("list", help="each CLI agent, its pinned version and where it is installed")
    listing.set_defaults(handler=run_list)


def loopback_address(text: str) -> tuple[str, int]:
    """(host, port) of --http HOST:PORT; UsageError unless HOST is a loopback address."""
    from ..core.errors import UsageError

    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else ""
    if host == "localhost":
        host = "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host).is_loopback
        number = int(port)
    except ValueError:
        raise UsageError(f"--http takes HOST:PORT with a loopback HOST, e.g. 127.0.0.1:8765; got {text!r}") from None
    if not loopback:
        raise UsageError(f"--http serves on loopback only (127.0.0.1, ::1); {host} is not a loopback address")
    if not 0 <= number <= 65535:
        raise UsageError(f"--http: port {number} is out of range")
    return host, number


def run_serve(args: argparse.Namespace) -> int:
    from ..core.errors import BackendUnavailable, UsageError
    from ..run.settings import app_options, check_app_options, parse_levels
    from ..run.values import prompt_style
    from .episode import ServeConfig, open_episode

    try:
        from ..apps import available_apps

        apps = available_apps()
        if args.app not in apps:
            raise UsageError(f"unknown app {args.app!r}; apps: {', '.join(sorted(apps))}")
        if args.seed < 0 or (args.max_steps is not None and args.max_steps < 1):
            raise UsageError("--seed must be zero or more and --max-steps at least 1")
        if not (args.idle_timeout > 0 and args.timeout > 0):
            raise UsageError("--idle-timeout and --timeout take a number of seconds above 0")
        address = loopback_address(args.http) if args.http else None
        limits = limits_from(args)
        extra = app_options(args.option)
        check_app_options(apps, extra)
        config = ServeConfig(app=args.app, seed=args.seed, secret=args.secret, levels=parse_levels(args.levels),
                             extra=extra, max_steps=args.max_steps, prompt_style=prompt_style(args.prompt_style),
                             agent_timeout_s=args.idle_timeout)
        import mcp  # noqa: F401  (the SDK: a clear error now rather than after the episode started)
    except ImportError:
        print("netarena mcp: error: the MCP SDK is not installed (pip install 'pytest-netarena[mcp]')", file=sys.stderr)
        return 2
    except (UsageError, ValueError) as error:
        print(f"netarena mcp: error: {error}", file=sys.stderr)
        return 2
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if address is None else \
        (lambda text: print(text, flush=True))
    protocol = None if address is not None else _stdio()  # before anything could print to stdout
    try:
        served = open_episode(config, args.out)
    except BackendUnavailable as error:
        say(f"netarena mcp: cannot run the {args.app} app here: {error}")
        return 4
    return _serve(served, args, address, limits, protocol, say)


def _stdio():
    from .transport import stdio_streams

    return stdio_streams()


def _serve(served, args: argparse.Namespace, address, limits, protocol, say) -> int:
    import asyncio
    import secrets

    from .episode import judge, record, verdict
    from .server import Activity, build_server
    from .transport import Watch, serve_stdio

    activity = Activity()
    watch = Watch(activity, lambda: served.session.over, idle_s=args.idle_timeout, overall_s=args.timeout)
    why = "the episode could not start"
    if not served.session.over:
        server = build_server(served.session, activity, judged=lambda: judge(served, activity.client))
        try:
            if address is None:
                stdin, stdout = protocol
                why = asyncio.run(serve_stdio(server, watch, stdin, stdout))
            else:
                token = args.token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(32)
                why = _serve_http(server, watch, address, limits, token,
                                  args.token is None and not os.environ.get(TOKEN_ENV), args.idle_timeout, say)
        except KeyboardInterrupt:
            why = "interrupted"
        except Exception as error:  # our transport broke: the episode is still judged and written, as ours to blame
            why = "failed"
            if not served.session.over:
                served.session.fail(f"the MCP transport failed: {type(error).__name__}: {error}", infra=True)
        if why not in ("over", "the client closed the connection", "failed") and not served.session.over:
            if why == "interrupted":
                pass  # the user stopped it: judged as it stands
            else:
                served.session.fail(f"the MCP client was stopped: {why}")
    result = record(served, activity.client)
    say(verdict(result, served.run_dir))
    return 1 if result.outcome.value == "infra_error" else 0


def _serve_http(server, watch, address: tuple[str, int], limits, token: str, announce_token: bool, idle_s: float,
                say) -> str:
    from ..serving import MAX_BODY_BYTES, Listener, listening_socket, url_of
    from .transport import MCP_PATH, http_routes

    sock = listening_socket(host=address[0], port=address[1])
    base = url_of(sock)
    host = base.removeprefix("http://")
    hosts = [host, host.replace("127.0.0.1", "localhost")] if "127.0.0.1" in host else [host]
    routes = http_routes(server, token, hosts, idle_s=idle_s, limit=MAX_BODY_BYTES)
    with Listener(routes, [sock], limits, lifespan=True, log_level="critical", name="netarena-mcp"):
        say(f"netarena mcp: serving {base}{MCP_PATH}")
        if announce_token:
            say(f"netarena mcp: bearer token {token}")
        while True:
            why = watch.why_stop()
            if why:
                return why
            time.sleep(0.2)


def run_install(args: argparse.Namespace) -> int:
    from ..core.errors import UsageError
    from .clis import PROFILES
    from .install import install

    unknown = [name for name in args.names if name not in PROFILES]
    if unknown:
        print(f"netarena cli-agents: error: unknown CLI agent {', '.join(unknown)}; known: {', '.join(PROFILES)}",
              file=sys.stderr)
        return 2
    for name in args.names:
        profile = PROFILES[name]()
        started = time.perf_counter()
        try:
            folder = install(profile.package, profile.version)
        except UsageError as error:
            print(f"netarena cli-agents: error: {error}", file=sys.stderr)
            return 4
        print(f"{name}: {profile.package}@{profile.version} in {folder} ({time.perf_counter() - started:.1f} s)")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from .clis import PROFILES

    for name, kind in PROFILES.items():
        profile = kind()
        folder, _ = profile.locate()
        state = "installed" if folder.is_dir() else "not installed"
        print(f"cli:{name}  {profile.package}@{profile.version}  {state}  {folder}")
    return 0
