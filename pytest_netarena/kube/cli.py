"""`netarena kube serve`: run the embedded Kubernetes API server until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

#: the most bytes --load reads (a manifest file of a large application is well under 1 MiB)
MAX_INPUT = 8 << 20


def register(subparsers) -> None:
    kube = subparsers.add_parser("kube", help="embedded Kubernetes API server")
    commands = kube.add_subparsers(dest="kube_command", required=True)
    serve = commands.add_parser("serve", help="serve the embedded Kubernetes API on 127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="TCP port (0 = pick a free one)")
    serve.add_argument("--kubeconfig", default=None, help="write a kubeconfig for the server here once it answers")
    serve.add_argument("--no-controllers", action="store_true", help="no Deployment/ReplicaSet/endpoint controllers")
    serve.add_argument("--load", metavar="FILE", default=None,
                       help="manifests (YAML or JSON, '-' for stdin) to create before serving")
    serve.set_defaults(handler=serve_command)


class InputError(ValueError):
    """Input the command cannot use (too big, not YAML, too deep); exit status 2."""


def read_manifests(path: str, limit: int = MAX_INPUT) -> list[dict]:
    """The objects of a manifest file, read within bounds (a List's items are unpacked)."""
    from .safeyaml import load_all

    try:
        if path == "-":
            raw = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(limit + 1)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if len(raw) > limit:
        raise InputError(f"{path} is larger than {limit} bytes")
    try:
        documents = load_all(raw)
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None
    objects = []
    for document in documents:
        if not isinstance(document, dict) or not document.get("kind"):
            raise InputError(f"{path}: every document must be a Kubernetes object with a kind")
        objects.extend(document.get("items") or [] if document["kind"].endswith("List") else [document])
    return objects


def serve_command(args: argparse.Namespace) -> int:
    from . import errors
    from .server import EmbeddedAPIServer

    objects = []
    if args.load:
        try:
            objects = read_manifests(args.load)
        except InputError as error:
            print(f"netarena kube serve: {error}", file=sys.stderr)
            return 2

    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    server = EmbeddedAPIServer(port=args.port, controllers=not args.no_controllers)
    try:
        server.apply_objects(objects)
    except (errors.ApiError, KeyError, TypeError, ValueError) as error:
        print(f"netarena kube serve: cannot load {args.load}: {getattr(error, 'message', error)}", file=sys.stderr)
        return 2
    server.start()
    try:
        server.wait_ready()
        if args.kubeconfig:
            server.write_kubeconfig(args.kubeconfig)
        print(server.url, flush=True)
        if args.kubeconfig:
            print(f"kubeconfig: {args.kubeconfig}", flush=True)
        while not done.wait(0.5):
            pass
    finally:
        server.stop()
    return 0
