"""`netarena kube serve`: run the embedded Kubernetes API server until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import threading


def register(subparsers) -> None:
    kube = subparsers.add_parser("kube", help="embedded Kubernetes API server")
    commands = kube.add_subparsers(dest="kube_command", required=True)
    serve = commands.add_parser("serve", help="serve the embedded Kubernetes API on 127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="TCP port (0 = pick a free one)")
    serve.add_argument("--kubeconfig", default=None, help="write a kubeconfig for the server here once it answers")
    serve.add_argument("--no-controllers", action="store_true", help="no Deployment/ReplicaSet/endpoint controllers")
    serve.set_defaults(handler=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    from .server import EmbeddedAPIServer

    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    server = EmbeddedAPIServer(port=args.port, controllers=not args.no_controllers).start()
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
