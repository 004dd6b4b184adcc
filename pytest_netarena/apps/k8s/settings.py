"""The k8s app's options read once (K8sSettings): app, backend, pods, story and rules, their defaults and the mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..options import default_of

if TYPE_CHECKING:
    from ...core.app import RunOptions

PODS_CHOICES = ("auto", "live", "off")
#: the defaults, as apps/options.py declares them (the one place they are written)
DEFAULT_APP, DEFAULT_BACKEND = default_of("k8s", "k8s-app"), default_of("k8s", "k8s-backend")
DEFAULT_PODS, DEFAULT_STORY = default_of("k8s", "k8s-pods"), default_of("k8s", "k8s-story")


@dataclass(frozen=True)
class K8sSettings:
    """A run's k8s options as given (each read here, once) and what they decide: the mode and the report label.
    The app reads them from here and hands them down (make_backend, the environment, the prompt)."""

    app: str  #: --k8s-app: online-boutique or synthetic:N[:SEED]
    backend: str  #: --k8s-backend: embedded or kubeconfig[:CONTEXT]
    pods: str  #: --k8s-pods: auto, live or off
    story: str  #: --k8s-story: mismatch or operator
    netarena: bool  #: NetArena's rules (--compat netarena)

    @classmethod
    def of(cls, options: RunOptions) -> K8sSettings:
        return cls(options.get("k8s-app", DEFAULT_APP), options.get("k8s-backend", DEFAULT_BACKEND) or "",
                   options.get("k8s-pods", DEFAULT_PODS), options.get("k8s-story", DEFAULT_STORY),
                   options.ruleset.netarena)

    @property
    def real_cluster(self) -> bool:
        return self.backend == "kubeconfig" or self.backend.startswith("kubeconfig:")

    @property
    def mode(self) -> str:
        """What the agent may inspect: "live" (the pods run: exec, logs, events; a real cluster's always do) or
        "api-only" (the embedded API server alone). NetArena's rules forbid exec: api-only. `--k8s-pods auto` runs
        them where this machine can (root, boxes, iptables, busybox)."""
        if self.real_cluster:
            return "live"
        if self.netarena or self.pods == "off":
            return "api-only"
        if self.pods == "live":
            return "live"
        from ...cluster import live_support

        return "live" if live_support().ok else "api-only"

    @property
    def setting(self) -> str:
        """The label reports give this run's k8s rows (NetArena's rules: none, as NetArena has no modes)."""
        if self.netarena:
            return ""
        return self.mode + ("+operator" if self.story == "operator" else "")

    def why_api_only(self) -> str:
        if self.pods == "off":
            return ", as --k8s-pods off asks"
        from ...cluster import live_support

        return f": pods cannot run here ({live_support().reason})"

