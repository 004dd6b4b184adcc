"""The K8s app: NetworkPolicy incident repair on Online Boutique (or a synthetic app), one kubectl per turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.app import App, Environment, OptionSpec, PromptSpec, RunOptions
from ...core.space import Category, Chooser
from ...core.types import Query

if TYPE_CHECKING:
    from ...agents.base import Agent

DEFAULT_APP = "online-boutique"
DEFAULT_BACKEND = "embedded"


def check_app(spec: str) -> None:
    """A --k8s-app value names an app that loads (cached: the run's queries reuse it)."""
    from .model import load_app

    load_app(spec)


def check_backend(spec: str) -> None:
    from ...errors import UsageError

    if spec not in ("", "embedded", "kubeconfig") and not spec.startswith("kubeconfig:"):
        raise UsageError(f"unknown --k8s-backend {spec!r}: use embedded or kubeconfig[:CONTEXT]")


class K8sApp(App):
    name = "k8s"
    options = (
        OptionSpec("k8s-app", "application: online-boutique (default) or synthetic:N[:SEED] "
                   "(N services, random acyclic call graph)", DEFAULT_APP, check=check_app),
        OptionSpec("k8s-backend", "cluster: embedded (default: in-process API server + policy engine) or "
                   "kubeconfig[:CONTEXT] (a real cluster from $KUBECONFIG whose CNI enforces "
                   "NetworkPolicy; see docs/k8s.md)", DEFAULT_BACKEND, check=check_backend),
    )
    builtin_agent_names = ("oracle", "expert", "reckless", "chatty")

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .faults import categories

        return categories()

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        from .faults import draw_faults
        from .model import load_app

        spec = options.get("k8s-app", DEFAULT_APP)
        app = load_app(spec)
        faults = draw_faults(app, category.name.split("+"), chooser, _offline(app))
        return {"app": spec, "faults": faults}

    def make_environment(self, options: RunOptions) -> Environment:
        from .env import K8sEnvironment
        from .model import load_app

        if options.sandboxed:
            from ...errors import BackendUnavailable
            from ...sandbox import SandboxUnavailable, support

            try:
                support().require("the k8s app (each kubectl action runs in a box)", root=True)
            except SandboxUnavailable as error:
                raise BackendUnavailable(str(error)) from error
        spec = options.get("k8s-app", DEFAULT_APP)
        app = load_app(spec)
        backend = make_backend(app, options.get("k8s-backend", DEFAULT_BACKEND), options.sandboxed)
        backend.prepare()
        try:
            return K8sEnvironment(app, spec, backend, sandboxed=options.sandboxed, cot=options.strategy == "cot")
        except BaseException:
            backend.close()
            raise

    def prompt(self) -> PromptSpec:
        from .prompt import PROMPT

        return PROMPT

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        from . import agents

        from .chatty import ChattyAgent

        factory = {"oracle": agents.OracleAgent, "expert": agents.ExpertAgent,
                   "reckless": agents.RecklessAgent, "chatty": ChattyAgent}.get(name)
        if factory is None:
            return None
        return factory(query, env)


_OFFLINE: dict[int, Any] = {}


def _offline(app):
    """One offline matrix model per app (reused across draws: it updates incrementally)."""
    from .matrix import OfflineMatrix

    entry = _OFFLINE.get(id(app))
    if entry is None or entry.app is not app:
        entry = _OFFLINE[id(app)] = OfflineMatrix(app)
    return entry


def make_backend(app, spec: str, sandboxed: bool = True):
    from ...errors import UsageError

    if spec in ("", "embedded"):
        from .embedded import EmbeddedBackend

        return EmbeddedBackend(app, sandboxed=sandboxed)
    if spec == "kubeconfig" or spec.startswith("kubeconfig:"):
        from .real import RealClusterBackend

        context = spec.partition(":")[2]
        return RealClusterBackend(app, context=context or None)  # the kubeconfig of $KUBECONFIG or ~/.kube/config
    raise UsageError(f"unknown --k8s-backend {spec!r}: use embedded or kubeconfig[:CONTEXT]")
