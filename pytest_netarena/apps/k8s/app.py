"""The K8s app: NetworkPolicy incident repair on Online Boutique (or a synthetic app), one kubectl per turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.app import App, Environment, PromptSpec, RunOptions
from ...core.catalogue import Category, Chooser
from ...core.types import Query
from ..options import BUILTIN_OPTIONS
from .settings import DEFAULT_APP, DEFAULT_BACKEND, DEFAULT_PODS, DEFAULT_STORY, PODS_CHOICES, K8sSettings

if TYPE_CHECKING:
    from ...core.agent import Agent

__all__ = ["DEFAULT_APP", "DEFAULT_BACKEND", "DEFAULT_PODS", "DEFAULT_STORY", "PODS_CHOICES", "K8sApp", "K8sSettings",
           "k8s_mode", "k8s_setting", "make_backend"]


def check_k8s_app(spec: str) -> None:
    """A --k8s-app value names an app that loads (cached: the run's queries reuse it)."""
    from .workloads.load import load_app

    load_app(spec)


def check_pods(value: str) -> None:
    from ...core.errors import UsageError

    if value not in PODS_CHOICES:
        raise UsageError(f"unknown --k8s-pods {value!r}: use auto, live or off")


def check_story(value: str) -> None:
    from ...core.errors import UsageError
    from .story import STORIES

    if value not in STORIES:
        raise UsageError(f"unknown --k8s-story {value!r}: use mismatch or operator")


def k8s_mode(options: RunOptions) -> str:
    """What the agent may inspect in this run: "live" or "api-only" (K8sSettings.mode)."""
    return K8sSettings.of(options).mode


def k8s_setting(options: RunOptions) -> str:
    """The label reports give this run's k8s rows (K8sSettings.setting)."""
    return K8sSettings.of(options).setting


def check_backend(spec: str) -> None:
    from ...core.errors import UsageError

    if spec not in ("", "embedded", "kubeconfig") and not spec.startswith("kubeconfig:"):
        raise UsageError(f"unknown --k8s-backend {spec!r}: use embedded or kubeconfig[:CONTEXT]")


class K8sApp(App):
    name = "k8s"
    options = BUILTIN_OPTIONS["k8s"]
    builtin_agent_names = ("oracle", "expert", "reckless", "chatty", "random", "cheater")

    def categories(self, options: RunOptions) -> Sequence[Category]:
        from .faults import categories

        return categories()

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        from .impossible import CATEGORIES

        return CATEGORIES

    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        from .faults import draw_faults
        from .workloads.load import load_app

        spec = K8sSettings.of(options).app
        app = load_app(spec)
        if category.level == 0:
            from .impossible import draw

            return draw(app, spec, chooser)
        faults = draw_faults(app, category.name.split("+"), chooser, _offline(app))
        return {"app": spec, "faults": faults}

    def make_environment(self, options: RunOptions) -> Environment:
        from .workloads.load import load_app

        if options.sandboxed:
            from ...sandbox import support

            support().require("the k8s app (each kubectl action runs in a box)")
        settings = K8sSettings.of(options)
        app = load_app(settings.app)
        backend = make_backend(app, settings, options.sandboxed)
        backend.prepare()
        try:
            return self._environment(app, settings, backend, options)
        except BaseException:
            backend.close()
            raise

    def _environment(self, app, settings: K8sSettings, backend, options: RunOptions) -> Environment:
        """The environment of these rules on a prepared backend (NetArena's: netarena/app.py)."""
        from .environment import K8sEnvironment

        return K8sEnvironment(app, settings.app, backend, sandboxed=options.sandboxed,
                              cot=options.prompt_style == "cot", story=settings.story, setting=settings.setting)

    def preflight(self, options: RunOptions) -> None:
        from ...core.errors import UsageError

        settings = K8sSettings.of(options)
        if settings.real_cluster:
            check_real_cluster(settings)
        elif settings.pods == "live":
            from ...cluster import live_support

            if not live_support().ok:
                raise UsageError(f"--k8s-pods live: pods cannot run here: {live_support().reason}")

    def prompt(self) -> PromptSpec:
        from .prompt import PROMPT

        return PROMPT

    def prompt_for(self, options: RunOptions) -> PromptSpec:
        """Our prompt for the run's mode and story."""
        from .prompt import prompt

        settings = K8sSettings.of(options)
        return prompt(settings.mode, settings.story)

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        if options is None:
            return []
        settings = K8sSettings.of(options)
        what = ("the pods run: the agent may kubectl exec, logs and events" if settings.mode == "live" else
                "the API server alone: no exec or logs" + settings.why_api_only())
        return [f"mode {settings.mode} ({what}); story {settings.story}; reports label its rows [{settings.setting}]"]

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        from .agents import builtin as agents

        from .agents.chatty import ChattyAgent
        from .agents.random_agent import RandomAgent

        factory = {"oracle": agents.OracleAgent, "expert": agents.ExpertAgent,
                   "reckless": agents.RecklessAgent, "chatty": ChattyAgent, "random": RandomAgent,
                   "cheater": agents.CheaterAgent}.get(name)
        if factory is None:
            return None
        return factory(query, env)


def check_real_cluster(settings: K8sSettings) -> None:
    """UsageError when the real cluster --k8s-backend names cannot be reached."""
    from ...core.errors import UsageError
    from .backends.real import unreachable

    problem = unreachable(settings.backend.partition(":")[2] or None)
    if problem:
        raise UsageError(f"--k8s-backend {settings.backend}: {problem}")


_OFFLINE: dict[int, Any] = {}


def _offline(app):
    """One offline matrix model per app (reused across draws: it updates incrementally)."""
    from .matrix import OfflineMatrix

    entry = _OFFLINE.get(id(app))
    if entry is None or entry.app is not app:
        entry = _OFFLINE[id(app)] = OfflineMatrix(app)
    return entry


def make_backend(app, settings: K8sSettings | str, sandboxed: bool = True):
    """The backend the run's settings name (a bare --k8s-backend value: its defaults otherwise): the embedded API
    server, with its pods running in mode live (pytest_netarena.cluster) and the operator story's unrelated
    workloads and events, or a real cluster."""
    from ...core.errors import UsageError

    if isinstance(settings, str):
        settings = K8sSettings(DEFAULT_APP, settings, "off", DEFAULT_STORY, False)
    if settings.backend in ("", "embedded"):
        from .backends.embedded import EmbeddedBackend

        return EmbeddedBackend(app, sandboxed=sandboxed, pods="live" if settings.mode == "live" else "off",
                               distractors=settings.story == "operator")
    if settings.real_cluster:
        from .backends.real import RealClusterBackend

        context = settings.backend.partition(":")[2]
        return RealClusterBackend(app, context=context or None)  # the kubeconfig of $KUBECONFIG or ~/.kube/config
    raise UsageError(f"unknown --k8s-backend {settings.backend!r}: use embedded or kubeconfig[:CONTEXT]")
