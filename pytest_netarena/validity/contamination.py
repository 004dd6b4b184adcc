"""The contamination item's evidence: the run secret, the canary and the held-out lines, checked on real episodes.

The secret must key the hidden parameters and never reach an agent's view; the canary must mark the prompt and
every transcript line; a held-out line must keep nothing an agent said or saw.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ..agents.prompting import build_system_prompt
from ..apps import get_app
from ..core.app import RunOptions
from ..core.canary import has_canary
from ..core.seeding import PUBLIC
from ..core.splits import HELDOUT_SEEDS, aggregate_only
from ..core.types import EpisodeResult, Query
from ..reporting.artifacts import episode_line


@dataclass
class Contamination:
    """What was measured for one app (counts, so the card shows its n)."""

    secret_in_use: bool = False
    queries: int = 0
    keyed: int = 0  #: queries whose hidden parameters differ from the seed-only draw of the same id
    episodes: int = 0  #: the reference agents' episodes scanned
    secret_seen: int = 0  #: episodes whose prompt, observations or replies hold the secret
    canary_prompt: bool = False  #: the app's system prompt carries the canary
    canary_lines: int = 0  #: episodes.jsonl lines that carry it
    heldout_clean: int = 0  #: held-out lines without any reply, observation or hidden parameter of their episode

    def passed(self) -> bool:
        return (self.secret_in_use and self.keyed > 0 and self.episodes > 0 and self.secret_seen == 0
                and self.canary_prompt and self.canary_lines == self.heldout_clean == self.episodes)

    def figure(self) -> str:
        if not self.secret_in_use:
            return "no run secret (--secret none): the hidden parameters follow from the public seed alone"
        return (f"hidden parameters keyed by a run secret: {self.keyed} of {self.queries} queries differ from the "
                f"seed-only draw; the secret in {self.secret_seen} of {self.episodes} agents' views; canary in the "
                f"system prompt {'yes' if self.canary_prompt else 'NO'} and in {self.canary_lines} of {self.episodes} "
                f"transcript lines; held-out lines (seeds {HELDOUT_SEEDS.start}-{HELDOUT_SEEDS.stop - 1}) free of "
                f"replies, observations and hidden parameters: {self.heldout_clean} of {self.episodes}")


def _traces(result: EpisodeResult) -> list[str]:
    """What of an episode a held-out line must not hold: what the agent said and saw, the hidden parameters."""
    found = [result.first_observation, json.dumps(result.query.params, sort_keys=True)]
    for step in result.steps:
        found += [step.reply, step.observation, step.output]
    return [text for text in found if len(text.strip()) >= 8]


def measure_contamination(app_name: str, options: RunOptions, keyed: list[Query],
                          results: list[EpisodeResult]) -> Contamination:
    """`keyed`: the app's queries under `options` (its run secret), as the run drew them."""
    app = get_app(app_name)
    found = Contamination(secret_in_use=options.secret != PUBLIC)
    public = {query.id: query.params for query in app.generate(replace(options, secret=PUBLIC))}
    found.queries = len(keyed)
    found.keyed = sum(query.params != public.get(query.id) for query in keyed)
    prompt = build_system_prompt(app.prompt_for(options), options.prompt_style, options.max_steps)
    found.canary_prompt = has_canary(prompt)
    for result in results:
        found.episodes += 1
        view = prompt + json.dumps([(s.reply, s.observation) for s in result.steps]) + result.first_observation
        found.secret_seen += bool(found.secret_in_use and options.secret in view)
        found.canary_lines += has_canary(episode_line(result))
        line = episode_line(aggregate_only(result))
        found.heldout_clean += not any(json.dumps(trace)[1:-1] in line for trace in _traces(result))
    return found
