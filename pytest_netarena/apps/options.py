"""The built-in apps' options, declared here so that pytest can list them in every session without loading an app.

Each check imports its app only when a value is checked; each app's `options` are these.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..core.app import OptionSpec
from ..core.errors import UsageError


def _check(target: str) -> Callable[[str], object]:
    """The check function `module:name`, imported when it is first called."""
    module_name, _, name = target.partition(":")

    def check(value: str) -> object:
        return getattr(importlib.import_module(module_name), name)(value)

    check.__qualname__ = check.__name__ = name
    return check


BUILTIN_OPTIONS: dict[str, tuple[OptionSpec, ...]] = {
    "k8s": (
        OptionSpec("k8s-app", "application: online-boutique (default) or synthetic:N[:SEED] "
                   "(N services, random acyclic call graph)", "online-boutique",
                   check=_check("pytest_netarena.apps.k8s.app:check_k8s_app"), metavar="APP"),
        OptionSpec("k8s-backend", "cluster: embedded (default: in-process API server + policy engine) or "
                   "kubeconfig[:CONTEXT] (a real cluster from $KUBECONFIG whose CNI enforces "
                   "NetworkPolicy; see docs/k8s.md)", "embedded",
                   check=_check("pytest_netarena.apps.k8s.app:check_backend"), metavar="BACKEND"),
        OptionSpec("k8s-pods", "the embedded cluster's pods: auto (default: they run where this machine can, and "
                   "the agent may kubectl exec, logs and events: mode live), live (they must run) or off (the API "
                   "server alone: mode api-only); reports label each row with the mode", "auto",
                   check=_check("pytest_netarena.apps.k8s.app:check_pods"), metavar="PODS"),
        OptionSpec("k8s-story", "what the task tells the agent: mismatch (default: the intent and the mismatch "
                   "report after every command) or operator (only what users and a security scan report, the "
                   "architecture notes and constraints; unrelated workloads and noisy events stand beside the "
                   "app; the verdict is the same)", "mismatch",
                   check=_check("pytest_netarena.apps.k8s.app:check_story"), metavar="STORY"),
    ),
    "malt": (
        OptionSpec("malt-topology", "MALT topology: a textproto file (e.g. malt-graph.textproto.txt) or "
                   "synthetic[:NODES[:SEED]] (default: a synthetic topology of the real one's size, 5,493 nodes)",
                   check=_check("pytest_netarena.apps.malt.app:check_topology"), path=True, metavar="PATH"),
        OptionSpec("netarena-data", "a NetArena checkout: MALT runs on its real topology "
                   "(app-malt/data/malt-graph.textproto.txt, read in NetArena's conventions under --compat netarena); "
                   "it replaces --malt-topology",
                   check=_check("pytest_netarena.apps.malt.app:check_netarena_data"), path=True, metavar="DIR"),
    ),
    "route": (
        OptionSpec("route-size", "route networks of SUBNETSxHOSTS (e.g. 4x4, up to 32x8) instead of sizes drawn "
                   "from the seed (2-8 subnets x 1-4 hosts)",
                   check=_check("pytest_netarena.apps.route.app:parse_size"), metavar="NxH"),
    ),
}


def check_value(spec: OptionSpec, value: object) -> None:
    """Run an option's own check on a value the user gave: a UsageError of one line naming the option."""
    if spec.check is None:
        return
    try:
        spec.check(str(value))
    except (UsageError, ValueError) as error:
        message = " ".join(str(error).split())  # one line, whatever the app wrote
        if f"--{spec.name}" not in message:
            message = f"--{spec.name} {value!r}: {message}"
        raise UsageError(message) from None


def default_of(app: str, name: str) -> object:
    """The default of a built-in app's option, as declared above: the one place it is written."""
    return next(spec.default for spec in BUILTIN_OPTIONS[app] if spec.name == name)
