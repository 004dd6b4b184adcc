"""The contract every application (k8s, route, malt) fulfils, and query generation from a seed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .rules import NETARENA, RULES, Ruleset, parse_rules, require_rules, rules_of, ruleset_named
from .seeding import PUBLIC, hidden_seed
from .catalogue import Category, Chooser, RandomChooser
from .splits import ATTEMPTS_PER_QUERY, problem_split, split_of
from .tools import Tool, ToolCall
from .types import Judgement, Query, StepOutcome

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["NETARENA", "RULES", "App", "Environment", "OptionSpec", "PromptSpec", "RunOptions", "Ruleset", "parse_rules",
           "require_rules", "rules_of"]


@dataclass(frozen=True)
class OptionSpec:
    """An app-specific option (registered by the plugin as --NAME). Its value is text wherever it is given (command
    line, ini file, --option NAME=VALUE, a resumed run): `check` is what parses it, so every source parses alike."""

    name: str  #: e.g. "malt-topology"
    help: str
    default: Any = None
    #: checks a value the user gave (command line or ini) before anything runs: raises UsageError
    #: (or ValueError) saying what is wrong; the run then ends with a one-line usage error
    check: Callable[[str], object] | None = None
    path: bool = False  #: the value may name a file or folder: a leading `~` is expanded
    metavar: str = "VALUE"  #: the value's name in --help, e.g. NxH or PATH

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class PromptSpec:
    """The text an app gives every agent; each prompt style composes these parts into a system prompt."""

    role: str  #: who the agent is and what the environment is
    rules: str  #: what it may and may not do
    action_format: str  #: exactly how to write one action as a text reply (the text interface only)
    examples: tuple[tuple[str, str], ...] = ()  #: (observation, reply) pairs obeying the format
    #: what an action or answer must hold on every interface (text, tools, MCP, CLI), e.g. MALT's answer object:
    #: stated after the action format, or after how to act through tools
    answer_format: str = ""


@dataclass
class RunOptions:
    """The options of one run that apps see (no pytest objects)."""

    seed: int = 0
    queries: int = 3  #: queries per category
    levels: tuple[int, ...] = (1, 2, 3)
    levels_given: bool = True  #: False when the run named no levels: an app may then apply its own default
    max_steps: int | None = None  #: None: the app's default
    prompt_style: str = "zero-shot"  #: one of agents.prompting.PROMPT_STYLES (--prompt-style)
    extra: dict[str, Any] = field(default_factory=dict)  #: app-specific options by dest name
    sandboxed: bool = True  #: agent actions run in sealed boxes (False only with --unsandboxed)
    rules: str = "default"  #: whose rules score the run: "default" (ours) or "netarena" (--compat netarena)
    split: str | None = None  #: "train" or "test": only queries of that held-out split (None: all)
    #: keys the hidden parameters with the seed (core/seeding.hidden_seed); PUBLIC: the seed alone. Never shown
    #: to an agent, never written where an agent or a report reader looks (run.json's private part only)
    secret: str = PUBLIC
    #: --tool-calls: "auto" (offer tools to agents that take them), "always" or "never" (the text protocol only)
    tool_calls: str = "auto"

    @property
    def ruleset(self) -> Ruleset:
        """The run's rules as one value: what they change in an episode (core/rules.py)."""
        return ruleset_named(self.rules)

    @property
    def netarena_compat(self) -> bool:
        """True when the run reproduces NetArena's rules (docs/netarena.md lists every difference): the ruleset's
        `netarena`. What the rules change is read from the ruleset, or is an app's own (App.for_rules)."""
        return self.ruleset.netarena

    def get(self, name: str, default: Any = None) -> Any:
        value = self.extra.get(name.replace("-", "_"))
        return default if value is None else value


class Environment(ABC):
    """A reactive or constructive environment, reset once per episode, stepped once per reply."""

    #: maximum agent turns when the run does not say otherwise
    default_max_steps: int = 10
    #: what of this environment an agent's score depends on beyond the query (k8s: "live" when pods run and
    #: the agent may probe them, "api-only" when not): each episode carries it, and reports label the agent's
    #: rows with it, so episodes of different settings are never pooled into one row
    setting: str = ""
    #: the current episode's agent acts through tools (set by core.steps.Episode before each reset), so that
    #: observations speak the interface's words: of tool calls, not of replies to write
    uses_tools: bool = False

    @abstractmethod
    def reset(self, query: Query) -> str:
        """Restore the healthy state, inject the query's faults, verify they break something.

        Returns the first observation (the symptom), shown before the agent's first action.
        Raises InfraError when the backend cannot do this.
        """

    @abstractmethod
    def step(self, reply: str) -> StepOutcome:
        """Parse one agent reply, guard it, execute it, observe and check the new state."""

    def tools(self) -> tuple[Tool, ...]:
        """The app's actions as tools (the core adds `finish`); empty: text replies only. Asked after reset too,
        when a tool's schema may name what the episode holds (e.g. its nodes)."""
        return ()

    def run_action(self, name: str, arguments: dict[str, Any]) -> StepOutcome:
        """Execute one action given as a tool call whose arguments fit the tool's schema: what `step` does with
        the same action read from a reply, so the verdicts are the same whichever way it arrives."""
        offered = ", ".join(tool.name for tool in self.tools()) or "none: reply in text"
        return self.refuse(f"unknown tool {name!r}; the tools are: {offered}")

    def tool_call_of(self, reply: str) -> ToolCall | None:
        """The tool call carrying the one action a text reply holds, as run_action takes it (None: the reply holds
        none, or no tool is offered). How a text agent's actions are replayed through tools, so that the validity
        card can hold the interfaces to the same verdicts (validity/interfaces.py); the default knows none."""
        return None

    @abstractmethod
    def judge(self) -> Judgement:
        """Decide whether the final state is correct (reads the backend, never the transcript)."""

    def refuse(self, message: str) -> StepOutcome:
        """The outcome of a reply that is refused before the environment reads it (e.g. hostile bytes).

        Nothing runs and the state is unchanged; single-turn apps override this to end the episode.
        """
        return StepOutcome(action="", output=f"Refused: {message}",
                           observation=f"Refused: {message}\nNothing was run; the state is unchanged.", refused=True)

    def close(self) -> None:
        """Release everything the environment holds (called once per worker)."""


class App(ABC):
    """An application of the benchmark: its query catalogue, environment, prompt and built-in agents."""

    name: str
    options: tuple[OptionSpec, ...] = ()
    #: whether two of its environments may live side by side in one process (needed for episodes in flight)
    concurrent_environments: bool = True
    #: episodes one process runs at once when the run does not say (--in-flight): above 1 for an app whose
    #: episodes mostly wait on something other than the agent, so their waits overlap
    episodes_in_flight: int = 1

    @abstractmethod
    def categories(self, options: RunOptions) -> Sequence[Category]:
        """All query categories this app offers (all levels)."""

    @abstractmethod
    def draw_params(self, category: Category, chooser: Chooser, options: RunOptions) -> dict[str, Any]:
        """Draw one query's hidden parameters; the single description of the query catalogue."""

    @abstractmethod
    def make_environment(self, options: RunOptions) -> Environment:
        """Build this worker's environment; raises BackendUnavailable when it cannot run here."""

    @abstractmethod
    def prompt(self) -> PromptSpec:
        """The app's prompt parts."""

    def netarena_prompt(self) -> PromptSpec:
        """The prompt parts under --compat netarena (an app's netarena/prompt.py): an app whose NetArena
        rules differ in what an agent must know (e.g. its reply format) overrides this."""
        return self.prompt()

    def prompt_for(self, options: RunOptions) -> PromptSpec:
        """The prompt parts of a run, by its rules."""
        return self.netarena_prompt() if options.ruleset.netarena else self.prompt()

    def for_rules(self, rules: str) -> App:
        """The app under `rules` ("default" or "netarena"): itself, unless its NetArena rules make it another app
        (an app's netarena/app.py, registered with core.ruled.RuledApp, which sends each call to the right one)."""
        return self

    def builtin_agent(self, name: str, query: Query, env: Environment) -> Agent | None:
        """A built-in agent that needs app knowledge (oracle, expert, reckless), or None."""
        return None

    builtin_agent_names: tuple[str, ...] = ()

    def header_notes(self, options: RunOptions | None = None) -> list[str]:
        """Lines for the run header, e.g. fault methods this machine cannot run and why, or the mode a run's
        options resolve to here."""
        return []

    def run_facts(self, options: RunOptions) -> dict[str, Any]:
        """What run.json records of the world this app's episodes ran on, beyond the options (e.g. which topology:
        its source, size and digest), so a reader of the run can tell; {} by default."""
        return {}

    def preflight(self, options: RunOptions) -> None:
        """Once, in the process that starts the run: raise UsageError when a backend the user chose cannot be
        reached at all (a run of skips would look like success). Cheap checks only; the default checks nothing."""

    def simplifications(self, query: Query) -> list[Query]:
        """Structurally smaller queries to try once a failure is shrunk (single faults of a sequence).

        Hypothesis shrinks each draw, but cannot jump from a two-fault category to a one-fault one
        (the later draws change meaning). Apps whose params hold `faults: [{"type": ...}, ...]` get
        this for free; others may override it.
        """
        faults = query.params.get("faults")
        if not isinstance(faults, list) or len(faults) < 2:
            return []
        return [
            Query(self.name, 1, fault["type"], 0, query.seed, {**query.params, "faults": [fault]})
            for fault in faults
            if isinstance(fault, dict) and "type" in fault
        ]

    def impossible_categories(self, options: RunOptions) -> Sequence[Category]:
        """The app's impossible categories (--impossible, docs/validity.md): queries whose goal contradicts a
        protected invariant, so that only a forbidden action meets it; draw_params draws them like any other
        and marks their params with types.IMPOSSIBLE. None by default (and none under NetArena's rules)."""
        return ()

    def impossible_queries(self, options: RunOptions) -> list[Query]:
        """`options.queries` queries of each impossible category, seeded as every query is; never in generate()."""
        return [self.query(category, index, options)
                for category in sorted(self.impossible_categories(options)) for index in range(options.queries)]

    def generate(self, options: RunOptions) -> list[Query]:
        """The run's queries: a pure function of (app, seed, options), in a stable order."""
        queries: list[Query] = []
        for category in sorted(self.categories(options)):
            if category.level not in options.levels:
                continue
            if options.split is None:
                queries.extend(self.query(category, index, options) for index in range(options.queries))
                continue
            # a query keeps its index (and id) whatever the split: indices of the other split are skipped
            queries.extend(self._split_queries(category, options))
        return queries

    def _split_queries(self, category: Category, options: RunOptions) -> list[Query]:
        """The first `options.queries` queries of a category that fall in `options.split`, by index.

        A category whose catalogue is too small to hold that many distinct draws in the split yields fewer.
        """
        found: list[Query] = []
        for index in range(options.queries * ATTEMPTS_PER_QUERY):
            query = self.query(category, index, options)
            if split_of(self.name, query.params) == problem_split(options.split):
                found.append(query)
                if len(found) == options.queries:
                    break
        return found

    def query(self, category: Category, index: int, options: RunOptions) -> Query:
        """The query at `index` of a category: its seed derives from (run seed, app, category, index), keyed by
        the run's secret when it has one."""
        seed = hidden_seed(options.seed, options.secret, self.name, category.name, index)
        params = self.draw_params(category, RandomChooser(seed), options)
        return Query(self.name, category.level, category.name, index, seed, params)
