"""The green (evaluator) A2A agent: runs an assessment of one purple agent on one app, streaming results."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..agents.a2a_agent import A2AAgent, unreachable
from ..apps import get_app
from ..core.app import App, Environment
from ..core.episode import run_episode
from ..core.types import EpisodeResult, Outcome
from ..core.errors import UsageError
from ..run.plan import plan_episode
from .assessment import Assessment, parse_request, result_record, summary_record
from .server import RunningServer, Skill, make_asgi_app, make_card

#: seconds the episode's own guard waits beyond the A2A agent's deadline (which fires first, with a clearer reason)
EPISODE_GUARD_S = 5.0
TITLES = {"k8s": "K8s", "route": "Route", "malt": "MALT"}


def play_a2a(app: App, env: Environment, assessment: Assessment, index: int) -> EpisodeResult:
    """One episode of the assessment with an A2AAgent pointed at the participant."""
    query = assessment.queries[index]
    plan = plan_episode(app, env, assessment.options, agent_timeout_s=assessment.max_reply_s + EPISODE_GUARD_S)
    agent = A2AAgent(assessment.url, timeout_s=assessment.timeout_s, max_reply_s=assessment.max_reply_s,
                     streaming=assessment.streaming)
    try:
        return run_episode(env, agent, query, plan.task, plan.config, f"a2a:{assessment.url}",
                           interface=plan.interface)
    finally:
        agent.close()


def reach_participant(assessment: Assessment) -> str:
    """"" when the participant's agent card can be fetched, else why not (an assessment never scores
    an agent it could not reach: that would look like a valid zero)."""
    return unreachable(assessment.url, min(assessment.timeout_s, 30.0))


def request_text(message: Any) -> str:
    """The request JSON: the message's text parts, or its first data part (some clients send data)."""
    from google.protobuf.json_format import MessageToDict

    texts = [part.text for part in message.parts if part.HasField("text")]
    if any(text.strip() for text in texts):
        return "\n".join(texts)
    for part in message.parts:
        if part.HasField("data"):
            return json.dumps(MessageToDict(part.data))
    return ""


class GreenExecutor:
    """An a2a-sdk AgentExecutor evaluating the participant of each request on `app_name`.

    Assessments run one at a time (environments such as Mininet's are per machine); each one
    builds its environment, plays the queries in order, and closes it.
    """

    def __init__(self, app_name: str, options: dict[str, Any] | None = None, compat: str | None = None) -> None:
        self.app_name = app_name
        self.defaults = {"options": dict(options or {}), "compat": compat}
        self._lock = asyncio.Lock()

    async def execute(self, context: Any, event_queue: Any) -> None:
        from a2a.helpers import (
            new_data_part,
            new_task_from_user_message,
            new_text_message,
        )
        from a2a.server.tasks import TaskUpdater
        from a2a.types.a2a_pb2 import TaskState
        from a2a.utils.errors import InvalidParamsError

        app = get_app(self.app_name)
        try:
            assessment = parse_request(request_text(context.message), app, self.defaults)
        except UsageError as error:
            raise InvalidParamsError(message=str(error)) from None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Any:
            return new_text_message(text, context_id=task.context_id, task_id=task.id)

        await updater.update_status(TaskState.TASK_STATE_WORKING, say(
            "Starting assessment.\n" + json.dumps(assessment.describe(), indent=2)))
        unreachable = await asyncio.to_thread(reach_participant, assessment)
        if unreachable:
            await updater.failed(say(f"Assessment failed: the participant {assessment.role!r} cannot be reached: "
                                     f"{unreachable}"))
            return
        artifact_id = f"{task.id}-results"
        try:
            async with self._lock:
                results = await self._run(app, assessment, updater, artifact_id, say)
        except Exception as error:  # noqa: BLE001  (the environment could not be built or broke outside an episode)
            await updater.failed(say(f"Assessment failed: {type(error).__name__}: {error}"))
            return
        scored = [r for r in results if r.outcome is not Outcome.INFRA_ERROR]
        if not scored:
            await updater.failed(say(f"Every episode hit an infrastructure error; first: {results[0].details}"))
            return
        compat = assessment.options.ruleset.netarena
        summary = {**summary_record(app.name, results, compat), "seed": str(assessment.options.seed),
                   "rules": assessment.options.rules,
                   "warnings": list(assessment.warnings)}
        await updater.add_artifact([new_data_part(summary)], artifact_id=artifact_id, name="Result",
                                   append=True, last_chunk=True)
        await updater.complete(say("Assessment complete.\n" + json.dumps(summary)))

    async def _run(self, app: App, assessment: Assessment, updater: Any, artifact_id: str, say: Any) -> list[EpisodeResult]:
        from a2a.helpers import new_data_part
        from a2a.types.a2a_pb2 import TaskState

        env = await asyncio.to_thread(app.make_environment, assessment.options)
        results: list[EpisodeResult] = []
        try:
            for index in range(len(assessment.queries)):
                result = await asyncio.to_thread(play_a2a, app, env, assessment, index)
                results.append(result)
                record = result_record(result, assessment.role, assessment.url, assessment.options.ruleset.netarena)
                record = json.loads(json.dumps(record))  # plain JSON types for the Value
                await updater.add_artifact([new_data_part(record)], artifact_id=artifact_id, name="Result",
                                           append=index > 0)
                await updater.update_status(TaskState.TASK_STATE_WORKING, say(
                    f"Query {index + 1} processed by agent: \"{assessment.role}\" ({result.query.id}: {result.outcome.value})"))
        finally:
            await asyncio.to_thread(env.close)
        return results

    async def cancel(self, context: Any, event_queue: Any) -> None:
        from a2a.utils.errors import UnsupportedOperationError

        raise UnsupportedOperationError()


def green_card(app_name: str, url: str) -> Any:
    title = TITLES.get(app_name, app_name)
    skill = Skill(f"{app_name}_eval", f"{title} evaluation",
                  f"Evaluates one A2A agent on pytest-netarena's {app_name} suite: correctness, safety, steps, latency.",
                  ("benchmark", "networking", app_name))
    return make_card(f"NetArena {title} Evaluation Agent", f"pytest-netarena green agent for the {app_name} suite.",
                     url, [skill], input_modes=("text", "data"), output_modes=("data", "text"))


def build_green_app(app_name: str, options: dict[str, Any] | None = None, compat: str | None = None) -> Any:
    """A function url -> ASGI app of the green agent for app_name (the shape RunningServer takes)."""
    get_app(app_name)  # fail now, not at the first request, when the app does not load

    def build(url: str) -> Any:
        return make_asgi_app(green_card(app_name, url), GreenExecutor(app_name, options, compat))

    return build


def green_server(app_name: str, *, options: dict[str, Any] | None = None, compat: str | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """The green agent as a RunningServer (enter it to start)."""
    return RunningServer(build_green_app(app_name, options, compat), host, port)
