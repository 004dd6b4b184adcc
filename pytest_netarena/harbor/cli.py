"""`netarena harbor serve|verdict|ready` (what an exported task's sidecar runs) and `netarena export harbor`'s handler."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: the sidecar's own loopback (the agent's container never reaches it): where the collect hook asks for the verdict
CONTROL_OFFSET = 1


def register(subparsers) -> None:
    harbor = subparsers.add_parser("harbor", help="the episode service of an exported Harbor task (its sidecar)")
    commands = harbor.add_subparsers(dest="harbor_command", required=True)
    serve = commands.add_parser("serve", help="play the episode of EPISODE_JSON for the agent's container: /mcp and "
                                              "/act on --port, the verdict on request (netarena harbor verdict)")
    serve.add_argument("episode", type=Path, help="the task's episode.json (its hidden query)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--host", default="0.0.0.0", help="address the agent's container reaches (default all)")
    serve.set_defaults(handler=run_serve)
    verdict = commands.add_parser("verdict", help="end the served episode, judge it and write its verdict to --out")
    verdict.add_argument("--out", type=Path, required=True)
    verdict.add_argument("--port", type=int, default=8765)
    verdict.set_defaults(handler=run_verdict)
    ready = commands.add_parser("ready", help="exit 0 once the service answers (a healthcheck)")
    ready.add_argument("--port", type=int, default=8765)
    ready.set_defaults(handler=run_ready)


def add_export_parser(kinds) -> None:
    """`netarena export harbor` (registered under `netarena export` by training/cli.py)."""
    export = kinds.add_parser(
        "harbor", help="episodes of run folders as Harbor task folders and a dataset manifest",
        description="Write one Harbor task folder per query of the run folders (a pytest run or `netarena generate`): "
                    "the instruction, the agent's container and the sidecar that plays and judges the episode, the "
                    "oracle's solution/solve.sh and tests/test.sh; OUT/dataset.toml lists them for Harbor's registry "
                    "(docs/harbor.md). A query the built-in oracle does not resolve is not exported.")
    export.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    export.add_argument("--out", type=Path, required=True, help="the dataset folder")
    export.add_argument("--app", action="append", default=[], help="only this app (repeatable)")
    export.add_argument("--level", action="append", type=int, default=[], help="only this level (repeatable)")
    export.add_argument("--limit", type=int, default=None, help="at most this many tasks")
    export.add_argument("--force", action="store_true", help="replace task folders that exist")
    export.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from .export import Selection, export_harbor

    def write() -> str:
        names = export_harbor([path.expanduser() for path in args.runs], args.out.expanduser(),
                              Selection(tuple(args.app), tuple(args.level), args.limit), force=args.force,
                              echo=lambda line: print(line, flush=True))
        return f"{len(names)} Harbor tasks exported to {args.out} (dataset.toml lists them)"

    return exported("harbor", write)


def exported(kind: str, write: Callable[[], str]) -> int:
    """Run one `netarena export KIND`: write() says what it wrote. Exit 0, else 1 when nothing matches and 2 on a
    usage error (nothing written either way)."""
    from ..core.errors import NothingToExport, UsageError

    try:
        print(write())
    except NothingToExport as error:
        print(f"netarena export {kind}: {error}", file=sys.stderr)
        return 1
    except UsageError as error:
        print(f"netarena export {kind}: error: {error}", file=sys.stderr)
        return 2
    return 0


def run_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from ..mcp.asgi import Routes
    from ..serving import Listener, listening_socket
    from .service import EpisodeFile, EpisodeService, routes

    service = EpisodeService(EpisodeFile.read(args.episode))
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())

    async def control(scope, receive, send) -> None:
        import anyio

        from ..serving import plain

        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body") or len(body) > 4096:
                break
        out = json.loads(body or b"{}").get("out") or "/netarena/verdict"
        verdict = await anyio.to_thread.run_sync(service.write_verdict, out)
        await plain(send, 200, json.dumps(verdict) + "\n")

    hosts = [f"netarena:{args.port}", f"127.0.0.1:{args.port}", f"localhost:{args.port}"]
    agents = listening_socket(host=args.host, port=args.port)
    own = listening_socket(host="127.0.0.1", port=args.port + CONTROL_OFFSET)
    with Listener(routes(service, hosts), [agents], lifespan=True, log_level="warning", name="netarena-harbor"), \
            Listener(Routes({"/verdict": control}), [own], name="netarena-harbor-control"):
        print(f"netarena harbor: serving the {service.app.name} episode on port {args.port}", flush=True)
        while not done.wait(0.5):
            pass
    service.close()
    return 0


def run_verdict(args: argparse.Namespace) -> int:
    import urllib.request

    request = urllib.request.Request(f"http://127.0.0.1:{args.port + CONTROL_OFFSET}/verdict", method="POST",
                                     data=json.dumps({"out": str(args.out)}).encode())
    with urllib.request.urlopen(request, timeout=300) as answer:
        print(answer.read().decode().strip())
    return 0


def run_ready(args: argparse.Namespace) -> int:
    import socket

    for _ in range(5):
        try:
            socket.create_connection(("127.0.0.1", args.port), timeout=2).close()
            return 0
        except OSError:
            time.sleep(1)
    return 1
