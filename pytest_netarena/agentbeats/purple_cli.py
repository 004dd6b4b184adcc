"""`netarena serve-purple`: any model or Python agent served as an A2A purple agent (AgentBeats participant)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from typing import Any

from .cli import add_server_arguments, serve

DEFAULT_PORT = 9019
#: a purple agent is stateless: each message holds the green agent's whole prompt, so the model's own
#: system message only says so
SYSTEM_PROMPT = ("You are a network operations agent evaluated by a benchmark. Each message holds the task, "
                 "the rules and the conversation so far; answer with your next action as it asks.")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve-purple",
        help="serve an agent (e.g. openai:gpt-4o) as an A2A purple agent for green agents and AgentBeats",
        description="Serve a model agent (PROVIDER:MODEL, e.g. openai:gpt-4o) or a Python agent "
        "(python:MODULE:CLASS) as an A2A purple agent. Each message is answered statelessly: the text is the "
        "green agent's whole prompt; the reply is the agent's answer, with token usage and cost in its metadata.",
    )
    parser.add_argument("--agent", required=True, help="the agent spec, as for pytest --agent (not builtin:*)")
    add_server_arguments(parser, DEFAULT_PORT)
    parser.add_argument("--llm-api-base", default=None, help="base URL of an OpenAI-compatible endpoint")
    parser.add_argument("--llm-client", choices=("auto", "litellm"), default="auto",
                        help="auto (default): openai: models over plain HTTP, the others through litellm; "
                        "litellm: always litellm")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    parser.add_argument("--name", default=None, help="the agent card's name (default: the agent spec)")
    parser.set_defaults(handler=serve_purple)


class StatelessResponder:
    """respond(text) for the A2A executor: one fresh agent turn per message.

    Messages are answered side by side (a green agent with episodes in flight sends several at
    once, and a model turn is mostly waiting), except with `serial`: a python: spec may name one
    agent object rather than a class, and one object cannot hold two conversations at once.
    """

    def __init__(self, make_agent: Any, serial: bool = False) -> None:
        self.make_agent = make_agent
        self._lock: Any = threading.Lock() if serial else contextlib.nullcontext()

    def __call__(self, text: str) -> Any:
        from ..run.plan import turn_task

        with self._lock:
            agent = self.make_agent()
            try:
                agent.reset(turn_task(SYSTEM_PROMPT))
                return agent.act(text)
            finally:
                agent.close()


def make_responder(raw_spec: str, args: argparse.Namespace) -> StatelessResponder:
    """The responder for a spec; UsageError for built-in agents, which need the episode's hidden state."""
    from ..agents.spec import load_python_agent, parse_agent_spec
    from ..core.errors import UsageError

    if raw_spec.strip().startswith(("builtin:", "a2a:")):
        raise UsageError(f"serve-purple serves model (PROVIDER:MODEL) and python:MODULE:CLASS agents, not {raw_spec!r}: "
                         "built-in agents read the episode's hidden state, and a2a: agents are servers already")
    spec = parse_agent_spec(raw_spec, ())
    if spec.kind == "python":
        return StatelessResponder(lambda: load_python_agent(spec.target), serial=True)
    if spec.kind == "model":
        from dataclasses import replace

        from ..agents.model_agent import ModelAgent, ModelSettings
        from ..agents.preflight import check_agents

        given = {"api_base": args.llm_api_base, "temperature": args.temperature, "client": args.llm_client}
        settings = ModelSettings.from_options(given, spec.target)  # bad settings fail now, not at the first message
        ModelAgent(spec.target, settings)
        # a missing or refused key, or an endpoint out of reach, fails the start, not every assessment later
        check_agents([replace(spec, settings={k: v for k, v in given.items() if v is not None})])
        return StatelessResponder(lambda: ModelAgent(spec.target, settings))
    raise UsageError(f"serve-purple serves model (PROVIDER:MODEL) and python:MODULE:CLASS agents, not {raw_spec!r}")


def serve_purple(args: argparse.Namespace) -> int:
    from ..core.errors import UsageError
    from .purple import purple_app

    try:
        respond = make_responder(args.agent, args)
    except UsageError as error:
        print(f"netarena serve-purple: {error}", file=sys.stderr)
        return 2
    description = f"pytest-netarena purple agent answering with {args.agent}."
    return serve("serve-purple", purple_app(respond, name=args.name or args.agent, description=description), args,
                 f"netarena purple agent ({args.agent})")
