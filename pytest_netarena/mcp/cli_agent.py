"""A CLI agent under test (`--agent=cli:codex`, `cli:claude-code`): the CLI plays the episode in a box through its MCP server.

Per episode the harness makes a private network namespace holding only loopback (as root directly, else owned
by a user namespace of its own, so a plain user runs CLI agents too), and listens inside it
(from its own process) with one guarded HTTP listener (`serving.Listener`): the episode's MCP server at
/mcp, bearer-gated, and the model relay at /model, which forwards only the model calls of the CLI's
profile to the real endpoint, with the real key. The CLI runs
non-interactively in a sealed box joined to that namespace (clibox.py), with the task as its prompt and
its own tools off, so every action it takes is a call to our MCP server: a step in our boxes, judged.

It ends as an agent error, with the tail of its output kept, when it exits with a failure before the
episode ended, makes no request at all for the agent timeout (a hang), outlives its deadline, or keeps
running `grace_s` after the episode ended. A failure while the model endpoint could not be reached is an
infrastructure error. Token usage and cost come from its machine-readable output.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import BackendUnavailable, InfraError, UsageError
from ..core.types import Task
from ..serving import ConnectionLimits
from .clis import PROFILES, CliProfile

if TYPE_CHECKING:
    from ..core.session import EpisodeSession

#: how much of a failed CLI's output an error keeps (the end, where the failure is)
KEPT_OUTPUT = 4000


class CliAgentError(Exception):
    """The CLI failed, hung or ignored the end of its episode (an agent error; the message holds its output)."""


class CliAgent:
    """Plays an episode by running a CLI agent in a box against the episode's MCP server."""

    interface = "cli"
    #: the limits of the box's listener: every connection comes from the box's one address, so `per_peer` is its cap
    listener_limits = ConnectionLimits()

    def __init__(self, profile: CliProfile, model: str | None = None, api_base: str | None = None,
                 timeout_s: float = 300.0, grace_s: float = 60.0) -> None:
        self.profile = profile
        self.model = model or None
        self.api_base = (api_base or profile.default_base).rstrip("/")
        self.timeout_s = timeout_s  #: the agent timeout: no request at all for this long is a hang
        self.grace_s = grace_s  #: how long it may run on after the episode ended
        self.task: Task | None = None
        self.last_run: dict[str, float | str | None] = {}  #: figures of the last run (benchmarks read them)

    def reset(self, task: Task) -> None:
        self.task = task

    def close(self) -> None:
        pass

    def drive(self, session: EpisodeSession) -> None:
        from ..sandbox.userns import new_network_namespace
        from ..serving import Listener, listening_socket, url_of
        from .clibox import cli_box, run_cli
        from .relay import Relay
        from .server import Activity, build_server
        from .transport import MCP_PATH, http_routes

        folder, _ = self.profile.locate()
        activity = Activity()
        try:  # as root a namespace of our own, else one in a user namespace, as k8s's boxes have it
            namespace = new_network_namespace()
        except OSError as error:  # the machine could not make it: ours, never the agent's
            raise InfraError(f"the network namespace of {self.profile.name}'s box could not be made: {error}") from error
        try:
            try:
                sock = listening_socket(make=namespace.socket)
            except OSError as error:
                raise InfraError(f"the listener in {self.profile.name}'s box could not be made: {error}") from error
            base = url_of(sock)
            relay = Relay("/model", self.api_base, self.profile.credentials(), self.timeout_s, activity,
                          self.profile.model_calls)
            token = secrets.token_urlsafe(32)
            host = base.removeprefix("http://")
            routes = http_routes(build_server(session, activity), token, [host], idle_s=self.timeout_s * 4,
                                 limit=2 << 20, extra={"/model": relay})
            launch = self.profile.launch(self.model, session.task.system_prompt, cli_prompt(session), f"{base}/model",
                                         f"{base}{MCP_PATH}", token, self.timeout_s)
            deadline = time.monotonic() + _overall_s(session, self.timeout_s)
            over_since: list[float] = []

            def should_stop() -> str:
                now = time.monotonic()
                if session.over:
                    over_since[:1] = over_since[:1] or [now]
                    if now - over_since[0] > self.grace_s:
                        return f"it kept running {self.grace_s:g} s after the episode ended"
                if now > deadline:
                    return "it ran past its deadline"
                if activity.idle_s() > self.timeout_s:
                    return f"it made no request for {self.timeout_s:g} s"
                return ""

            with Listener(routes, [sock], self.listener_limits, lifespan=True, log_level="critical",
                          name="cli-box-listener"):
                spawned = time.monotonic()
                try:
                    ended = run_cli(cli_box(str(folder), namespace, launch.env, launch.files,
                                            mount=self.profile.mount), launch.argv, should_stop)
                except OSError as error:  # the box itself could not be made: ours, not the agent's
                    raise InfraError(f"the box of {self.profile.name} could not start: {error}") from error
        finally:
            namespace.close()
        self.last_run = {"start_to_first_call_s": (activity.first_call_at - spawned) if activity.first_call_at else None,
                         "elapsed_s": ended.elapsed_s, "calls": activity.calls, "model_requests": relay.requests}
        report = self.profile.read(ended.output, self.model)
        session.add_usage(report.usage)
        self._judge_run(session, ended, report, relay.failures, relay.refusals)

    def _key_refused(self) -> str:
        """Whether the endpoint refuses the operator's key, asked by the harness itself ("" when it does not): a 401
        or 403 the box met may be of its own making (a model the key may not use), this one cannot be."""
        from ..agents import reach

        answer = reach.send(reach.api_listing(self.profile.api, self.api_base, self.profile.key()))
        return f"HTTP {answer.status}" if answer.status in (401, 403) else ""

    def _judge_run(self, session: EpisodeSession, ended, report, failures: list[str],
                   refusals: Sequence[str] = ()) -> None:
        tail = ended.output[-KEPT_OUTPUT:]
        if ended.why_stopped:
            raise CliAgentError(f"{self.profile.name} was stopped: {ended.why_stopped}; its output ended: {tail}")
        if ended.returncode != 0 or (report.errors and not session.over):
            if failures:
                raise InfraError(f"the model endpoint failed ({failures[-1]}) and {self.profile.name} exited with "
                                 f"status {ended.returncode}")
            refused = self._key_refused() if refusals else ""
            if refused:  # the operator's key, as the harness's own request shows: never the agent's failure
                raise InfraError(f"the model endpoint refused the key ({refused}) and {self.profile.name} exited "
                                 f"with status {ended.returncode}")
            raise CliAgentError(f"{self.profile.name} exited with status {ended.returncode}"
                                + (f" ({report.errors[-1]})" if report.errors else "") + f"; its output ended: {tail}")


def cli_prompt(session: EpisodeSession) -> str:
    """What a CLI agent is given as its prompt (the system prompt goes as its instructions): how to act, and the
    first observation."""
    return ("Act only through the tools of the `netarena` MCP server: each call is one step. Call its finish tool "
            f"when you are done.\n\nThe environment now shows:\n\n{session.first_observation}")


def _overall_s(session: EpisodeSession, timeout_s: float) -> float:
    """The whole run's deadline: the driver's own limit less a margin, else a timeout per step and one more."""
    limit = getattr(session.config, "drive_limit_s", None)
    if isinstance(limit, (int, float)) and limit > 30:
        return limit - 15
    return timeout_s * (session.config.max_steps + 1)


def read_target(value: str, raw: str) -> str:
    """The NAME[:MODEL] of `cli:NAME[:MODEL]` (agents/kinds.py): UsageError unless NAME is a known CLI agent."""
    name, sep, model = value.partition(":")
    if name not in PROFILES or (sep and not model.strip()):
        raise UsageError(f"unknown CLI agent {raw!r}; CLI agents: "
                         f"{', '.join(f'cli:{known}' for known in PROFILES)} (optionally :MODEL)")
    return value


def build(spec: Any, app: Any, query: Any, env: Any) -> CliAgent:
    """The agent of a cli:NAME[:MODEL] spec (agents/kinds.py), with the run's CLI settings."""
    return make_cli_agent(spec.target, spec.settings)


def check_reach(spec: Any) -> str:
    """A CLI agent: installed, its provider's key set (unless --llm-api-base names a server of the user's), and one
    real request to that provider with it. Returns a warning, or ""."""
    from ..agents import reach

    name = spec.target.partition(":")[0]
    profile = PROFILES[name]()
    who = f"--agent {spec.raw}"
    folder, _ = profile.locate()
    try:
        found = folder.is_dir()
    except OSError as error:  # e.g. another user's install folder
        raise UsageError(f"{who}: {name}'s install at {folder} cannot be read ({error.strerror}); install it for "
                         f"this user with `netarena cli-agents install {name}`") from None
    if not found:
        raise UsageError(f"{who}: {name} is not installed here ({folder} is missing); install "
                         f"{profile.package}@{profile.version} with `netarena cli-agents install {name}`")
    own_base = spec.settings.get("api_base")
    key = profile.key()
    if not own_base and not key:
        raise UsageError(f"{who}: {' or '.join(profile.key_env)} is not set (the key {name} sends to "
                         f"{profile.default_base}); set it, or point --llm-api-base at a server of your own")
    base = str(own_base or profile.default_base)
    request = reach.api_listing(profile.api, base, key)
    key_fix = f"set {' or '.join(profile.key_env)} to a key the provider accepts"
    reach_fix = "start the server first, or fix --llm-api-base or the route to the provider"
    return reach.judge(who, request, reach.send(request), key_fix, reach_fix)


def make_cli_agent(target: str, settings: dict) -> CliAgent:
    """The agent of `cli:NAME[:MODEL]`; BackendUnavailable (the episode skips, saying the fix) when that CLI is not
    installed or this machine cannot make its box."""
    from ..sandbox import support

    name, _, model = target.partition(":")
    profile = PROFILES[name]()
    folder, _ = profile.locate()
    if not folder.is_dir():
        raise BackendUnavailable(f"cli:{name} is not installed here ({folder} is missing); install "
                                 f"{profile.package}@{profile.version} with `netarena cli-agents install {name}`")
    support().require(f"cli:{name} (it runs in a sealed box)")  # a skip that says the fix, never the agent's error
    return CliAgent(profile, model or None, settings.get("api_base"), float(settings.get("timeout_s") or 300.0))
