"""`netarena kube serve` (the embedded API server until SIGINT/SIGTERM) and `netarena kube task` (a Harbor task)."""

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
    serve.add_argument("--tls", action="store_true",
                       help="serve https with a CA of its own: the kubeconfig carries the CA and an admin client "
                            "certificate, ServiceAccount tokens are honoured and RBAC is enforced for them")
    serve.add_argument("--audit-log", metavar="FILE", default=None,
                       help="append refused requests (403 by RBAC, 401) here as audit.k8s.io Events, one JSON a line")
    serve.add_argument("--k8s-pods", "--pods", dest="pods", type=pods_choice, default="auto", metavar=PODS_METAVAR,
                       help="run the pods as processes with a data plane, exec and logs, as pytest's --k8s-pods: auto "
                            "(where this machine can: root, boxes, iptables), live (fail if it cannot), off (store "
                            "them only); --pods and 'on' are the old spellings")
    serve.add_argument("--node", metavar="SPEC", action="append", default=[],
                       help="a node of the cluster (repeat for several; one node when none): "
                            "NAME[,label=K=V][,taint=K=V:Effect][,cpu=N][,memory=Q][,pods=N][,role=control-plane]")
    serve.add_argument("--profile", choices=("plain", "k3s"), default="plain",
                       help="k3s: start with what k3s installs beside Kubernetes (traefik and its IngressClass and "
                            "CRDs, the local-path StorageClass, metrics-server; docs/kube.md)")
    serve.add_argument("--disable", metavar="COMPONENT", action="append", default=[],
                       help="with --profile k3s: leave out a bundled component as k3s --disable does (traefik, "
                            "local-storage, metrics-server)")
    serve.set_defaults(handler=serve_command)
    task = commands.add_parser("task", help="run a Harbor-layout live-cluster task (written for k3s) against a "
                                            "fresh embedded server and print its reward")
    task.add_argument("folder", help="the task folder (task.toml, environment/, solution/, tests/)")
    what = task.add_mutually_exclusive_group()
    what.add_argument("--solution", action="store_true", help="run solution/solve.sh as the agent")
    what.add_argument("--agent", metavar="COMMAND", default=None,
                      help="run `bash -c COMMAND` as the agent, in a sealed box that sees its workspace /app and "
                           "its kubeconfig /kube (the task's KUBECONFIG), never the tests, solution or admin "
                           "credentials")
    task.add_argument("--keep", metavar="DIR", default=None,
                      help="work in DIR and keep it (scripts as rewritten, logs, the audit log)")
    task.add_argument("--k8s-pods", "--pods", dest="pods", type=pods_choice, default="auto", metavar=PODS_METAVAR,
                      help="run the task's pods (as for serve); tasks that probe with kubectl exec need them")
    task.add_argument("-v", "--verbose", action="store_true", help="print each phase's output")
    task.set_defaults(handler=task_command)


#: --k8s-pods's values, as pytest's option spells them; "on" is the old spelling of "live"
PODS_VALUES = {"auto": "auto", "live": "live", "off": "off", "on": "live"}
PODS_METAVAR = "{auto,live,off}"


def pods_choice(text: str) -> str:
    if text not in PODS_VALUES:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from auto, live, off)")
    return PODS_VALUES[text]


class InputError(ValueError):
    """Input the command cannot use (too big, not YAML, too deep); exit status 2."""


def read_manifests(path: str, limit: int = MAX_INPUT) -> list[dict]:
    """The objects of a manifest file, read within bounds (a List's items are unpacked)."""
    from ..core.safe_read import TooLarge, read_capped
    from ..core.safe_yaml import load_documents

    try:
        raw = read_capped(path, limit)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    except TooLarge as error:
        raise InputError(str(error)) from None
    try:
        documents = load_documents(raw)
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None
    objects = []
    for document in documents:
        if not isinstance(document, dict) or not document.get("kind"):
            raise InputError(f"{path}: every document must be a Kubernetes object with a kind")
        objects.extend(document.get("items") or [] if document["kind"].endswith("List") else [document])
    return objects


def pods_starter(choice: str):
    """pods(server) for --k8s-pods: a started LiveCluster, or None where pods cannot run (auto); raises for live."""
    choice = PODS_VALUES.get(choice, choice)
    if choice == "off":
        return None

    def start(server):
        from ..cluster import LiveCluster, live_support

        support = live_support()
        if not support.ok:
            if choice == "live":
                raise InputError(f"--k8s-pods live: pods cannot run here: {support.reason}")
            return None
        return LiveCluster(server).start()

    return start


def cluster_shape(args: argparse.Namespace) -> tuple[list | None, object]:
    """The nodes and k3s profile --node, --profile and --disable ask for; InputError for a value that does not read."""
    from .k3s import COMPONENTS, Profile
    from .nodes import parse_option

    try:
        nodes = [parse_option(text) for text in args.node] or None
    except ValueError as error:
        raise InputError(f"--node: {error}") from None
    if nodes and len({n.name for n in nodes}) != len(nodes):
        raise InputError("--node: two nodes have the same name")
    unknown = [name for name in args.disable if name not in COMPONENTS]
    if unknown:
        raise InputError(f"--disable: unknown component {unknown[0]!r} (one of {', '.join(COMPONENTS)})")
    if args.disable and args.profile != "k3s":
        raise InputError("--disable needs --profile k3s")
    return nodes, Profile(frozenset(args.disable)) if args.profile == "k3s" else None


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

    try:
        nodes, profile = cluster_shape(args)
    except InputError as error:
        print(f"netarena kube serve: {error}", file=sys.stderr)
        return 2
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    server = EmbeddedAPIServer(port=args.port, controllers=not args.no_controllers, tls=args.tls,
                               audit_log=args.audit_log, nodes=nodes, profile=profile)
    try:
        server.apply_objects(objects)
    except (errors.ApiError, KeyError, TypeError, ValueError) as error:
        print(f"netarena kube serve: cannot load {args.load}: {getattr(error, 'message', error)}", file=sys.stderr)
        return 2
    server.start()
    runtime = None
    try:
        server.wait_ready()
        try:
            runtime = pods_starter(args.pods)(server) if args.pods != "off" else None
        except InputError as error:
            print(f"netarena kube serve: {error}", file=sys.stderr)
            return 2
        print(f"mode: {server.mode}", file=sys.stderr, flush=True)
        if args.kubeconfig:
            server.write_kubeconfig(args.kubeconfig)
        print(server.url, flush=True)
        if args.kubeconfig:
            print(f"kubeconfig: {args.kubeconfig}", flush=True)
        while not done.wait(0.5):
            pass
    finally:
        if runtime is not None:
            runtime.stop()
        server.stop()
    return 0


def task_command(args: argparse.Namespace) -> int:
    """Exit 0 when the verifier's reward is 1, 1 when it is not, 2 for a folder that is not a task, 3 when the
    bootstrap failed (the task never started)."""
    import os

    from .harbor import TaskError, run_task

    def echo(phase) -> None:
        status = "stopped" if phase.returncode is None else f"exit {phase.returncode}"
        print(f"{phase.name}: {status} in {phase.seconds:.1f} s", flush=True)
        if args.verbose or (phase.name == "bootstrap" and phase.returncode != 0):
            print("  " + phase.log.rstrip().replace("\n", "\n  "), flush=True)

    if args.keep:
        if os.path.exists(args.keep) and os.listdir(args.keep):
            print(f"netarena kube task: --keep {args.keep} is not empty", file=sys.stderr)
            return 2
        os.makedirs(args.keep, exist_ok=True)
    try:
        result = run_task(args.folder, agent=args.agent, solution=args.solution, keep=bool(args.keep),
                          work=args.keep, echo=echo, pods=pods_starter(args.pods))
    except (TaskError, InputError) as error:
        print(f"netarena kube task: {error}", file=sys.stderr)
        return 2
    if result.phases and result.phases[0].returncode != 0:
        print("reward: none (the bootstrap failed)", flush=True)
        return 3
    print(f"mode: {result.mode}", flush=True)
    print(f"reward: {'none' if result.reward is None else f'{result.reward:g}'}", flush=True)
    if args.keep:
        print(f"work folder: {result.folder}", flush=True)
    return 0 if result.passed else 1
