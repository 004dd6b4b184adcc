"""NetArenaEnv: one app's benchmark environment as a Gymnasium environment with text observations and actions.

`reset` draws a query from the benchmark's own query catalogue (App.query: the same seeds, ids and
params as a run with this environment's run seed) and shows its first observation; `step(reply)`
runs one reply exactly as a benchmark episode does, through the same EpisodeSession (step budget
lines, refusal of unreadable replies, the app's guard and safety checks, the end of the episode
and its outcome, core.steps.end_episode) and rewards the verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium

from ..apps import get_app
from ..core.app import RULES, Environment, RunOptions
from ..core.episode import MAX_REPLY_CHARS
from ..core.errors import InfraError
from ..core.session import EpisodeSession
from ..core.catalogue import Category
from ..core.types import Outcome, Query, Reply
from ..run.plan import EpisodePlan, plan_episode
from .reward import RewardConfig
from .spaces import AnyText
from ..core.splits import ATTEMPTS_PER_QUERY, check_transcript_split, split_of

#: longest observation returned; longer ones are cut with a note (kubectl output alone stops at 32,000)
MAX_OBSERVATION_CHARS = 200_000
#: query indices are drawn below this (ids keep the benchmark's form, e.g. k8s-L1-add_egress-4711)
INDEX_SPACE = 1_000_000
#: fresh draws tried when the backend cannot set a drawn query up (an infrastructure error)
RESET_ATTEMPTS = 3


def _as_tuple(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return (value,)
    return tuple(value)


class NetArenaEnv(gymnasium.Env):
    """A benchmark app (k8s, route or malt) as a Gymnasium environment; see docs/training.md."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (gymnasium.Env declares it an instance field)

    def __init__(
        self,
        app: str,
        *,
        seed: int = 0,
        levels: Iterable[int] | None = None,
        categories: Iterable[str] | None = None,
        split: str | None = None,
        max_steps: int | None = None,
        prompt_style: str = "zero-shot",
        reward: RewardConfig | dict[str, float] | None = None,
        app_options: dict[str, Any] | None = None,
        sandboxed: bool = True,
        rules: str = "default",
        render_mode: str | None = None,
    ) -> None:
        if rules not in RULES:
            raise ValueError(f"rules takes one of {', '.join(RULES)}; got {rules!r}")
        self.app = get_app(app)
        self.run_options = RunOptions(
            seed=int(seed),
            levels=tuple(sorted(set(levels))) if levels is not None else (1, 2, 3),
            max_steps=max_steps,
            prompt_style=prompt_style,
            extra={name.replace("-", "_"): value for name, value in (app_options or {}).items()},
            sandboxed=sandboxed,
            rules=rules,
            split=check_transcript_split(split, int(seed)),
        )
        wanted = _as_tuple(categories)
        self.categories = [
            category for category in sorted(self.app.categories(self.run_options))
            if category.level in self.run_options.levels and (wanted is None or category.name in wanted)
        ]
        if not self.categories:
            raise ValueError(f"{app}: no category matches levels={self.run_options.levels} categories={wanted}")
        self.reward = RewardConfig.from_mapping(reward)
        self.render_mode = render_mode
        self.observation_space = AnyText(MAX_OBSERVATION_CHARS)
        self.action_space = AnyText(MAX_REPLY_CHARS)
        self._env: Environment | None = None
        self._session: EpisodeSession | None = None
        self.query: Query | None = None

    # ---- what a policy is told ----------------------------------------------------------------------

    @property
    def max_steps(self) -> int:
        return self.run_options.max_steps or self._environment().default_max_steps

    @property
    def system_prompt(self) -> str:
        """The system prompt a benchmark run gives a text agent (app rules, action format, step budget)."""
        return self._plan().task.system_prompt

    def _plan(self) -> EpisodePlan:
        """The episode as a benchmark run plans it for a text agent (run/plan.py)."""
        return plan_episode(self.app, self._environment(), self.run_options)

    # ---- Gymnasium API ------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        given = options.get("query")
        env = self._environment()
        for attempt in range(1 if given is not None else RESET_ATTEMPTS):
            query = self._given(given) if given is not None else self._draw(options)
            session = self._new_session(env, query)
            try:
                observation = session.open()
            except InfraError:
                if given is not None or attempt == RESET_ATTEMPTS - 1:
                    raise
                continue
            break
        self.query, self._session = query, session
        info = {"query_id": query.id, "level": query.level, "max_steps": self.max_steps,
                "system_prompt": session.task.system_prompt}
        return _bounded(str(observation)), info

    def _new_session(self, env: Environment, query: Query) -> EpisodeSession:
        plan = self._plan()
        return EpisodeSession(env, query, plan.task, plan.config, "gymnasium", interface=plan.interface)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        session = self._session
        if session is None or session.over or self.query is None:
            raise RuntimeError("step() before reset(), or after the episode ended: call reset()")
        if not isinstance(action, str):
            raise TypeError(f"an action is the reply's text (str); got {type(action).__name__}")
        taken = len(session.episode.steps)
        session.reply(Reply(action))
        end = session.end() if session.over else None
        if end is not None and end.outcome is Outcome.INFRA_ERROR:
            raise InfraError(end.details)
        if len(session.episode.steps) == taken:  # only an infrastructure failure leaves no step behind
            raise InfraError("the environment recorded no step")
        step = session.episode.steps[-1]
        terminated = session.ended_by in ("environment", "error")
        truncated = session.ended_by == "max_steps"
        info = {
            "query_id": self.query.id,
            "step": step.index,
            "correct": end.correct if end else None,  # None until the episode ends, then the judge's verdict
            "safe": not step.violations,
            "violations": list(step.violations),
            "refused": step.refused,
            "episode_safe": session.episode.safe,
            "agent_error": end.details if end and end.outcome is Outcome.AGENT_ERROR else "",
            "outcome": end.outcome.value if end else "",
        }
        return _bounded(step.observation), self.reward(step, end), terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._session is not None:
            return self._session.observation
        return None

    def close(self) -> None:
        """Release the app's environment (Mininet network, kube server, sandbox); safe to call twice."""
        env, self._env = self._env, None
        self._session = None
        if env is not None:
            env.close()
        super().close()

    # ---- queries --------------------------------------------------------------------------------------

    def _environment(self) -> Environment:
        if self._env is None:
            self._env = self.app.make_environment(self.run_options)
        return self._env

    def _given(self, given: Query | dict[str, Any]) -> Query:
        query = given if isinstance(given, Query) else Query.from_dict(given)
        if query.app != self.app.name:
            raise ValueError(f"query {query.id} is for app {query.app!r}, this environment runs {self.app.name!r}")
        return query

    def _draw(self, options: dict[str, Any]) -> Query:
        """A query of the benchmark's catalogue: category and index from this environment's random generator."""
        levels, names = _as_tuple(options.get("level")), _as_tuple(options.get("category"))
        candidates = [c for c in self.categories
                      if (levels is None or c.level in levels) and (names is None or c.name in names)]
        if not candidates:
            raise ValueError(f"no category of this environment matches level={options.get('level')!r} "
                             f"category={options.get('category')!r}; it has {[c.name for c in self.categories]}")
        category: Category = candidates[int(self.np_random.integers(len(candidates)))]
        if "index" in options:
            return self._checked(self.app.query(category, int(options["index"]), self.run_options))
        for _ in range(ATTEMPTS_PER_QUERY):
            query = self.app.query(category, int(self.np_random.integers(INDEX_SPACE)), self.run_options)
            if self.run_options.split is None or split_of(self.app.name, query.params) == self.run_options.split:
                return query
        raise ValueError(f"{category.name}: no query of the {self.run_options.split} split in "
                         f"{ATTEMPTS_PER_QUERY} draws")

    def _checked(self, query: Query) -> Query:
        split = self.run_options.split
        if split is not None and split_of(self.app.name, query.params) != split:
            raise ValueError(f"query {query.id} is not in the {split} split")
        return query


def _bounded(observation: str) -> str:
    if len(observation) <= MAX_OBSERVATION_CHARS:
        return observation
    note = f"\n[observation cut: {len(observation) - MAX_OBSERVATION_CHARS + 100:,} more characters]"
    return observation[: MAX_OBSERVATION_CHARS - 100] + note
