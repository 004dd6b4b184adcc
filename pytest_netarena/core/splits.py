"""Held-out splits: every query belongs to `train` or `test` by a hash of its fault signature; `heldout` runs.

The signature is what makes two queries the same problem: an app's faults (route, k8s: the fault
types, targets and values, not the network's size) or, without faults, all its hidden params (MALT:
the program). The hash never depends on the run seed, the index or the process, so a query drawn
by any run, any seed or any Gymnasium reset lands in the same split, and a model trained on
`train` queries is evaluated on problems it could not have seen.

`heldout` is an evaluation that leaves no per-episode trace: `test` problems, a seed from HELDOUT_SEEDS
(a range no other run may use), always a run secret, and results kept as counts and rates only
(`aggregate_only`: no prompt, reply, observation, hidden parameter or query seed is written anywhere).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import replace
from typing import Any

from .types import EpisodeResult, Outcome, Query, Step

SPLITS = ("train", "test")
HELDOUT = "heldout"
#: run seeds of held-out runs only: a run of another split refuses them, so their queries never reach a transcript
HELDOUT_SEEDS = range(900_000_000, 1_000_000_000)
#: the share of the query catalogue held out for evaluation, in thousandths
TEST_PER_MILLE = 200
#: indices tried per wanted query before a category is declared too small for its split
ATTEMPTS_PER_QUERY = 200


def signature(app: str, params: dict[str, Any]) -> str:
    """The canonical text of a query's problem (its faults, or all its params when it has none)."""
    key = params["faults"] if isinstance(params.get("faults"), list) else params
    return json.dumps({"app": app, "problem": key}, sort_keys=True, separators=(",", ":"), default=str)


def split_of(app: str, params: dict[str, Any]) -> str:
    """"train" or "test" for a query's hidden params; stable across runs, machines and Python versions."""
    digest = hashlib.sha256(signature(app, params).encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") % 1000 < TEST_PER_MILLE else "train"


def check_split(value: Any) -> str | None:
    """A --split value: "train", "test", "heldout" or "all" (None); ValueError otherwise."""
    text = "" if value is None else str(value).strip().lower()
    if text in ("", "all"):
        return None
    if text not in (*SPLITS, HELDOUT):
        raise ValueError(f"--split takes train, test, heldout or all; got {value!r}")
    return text


def problem_split(split: str | None) -> str | None:
    """The split of the query space a run's --split draws from (a held-out run takes the test problems)."""
    return "test" if split == HELDOUT else split


def check_seed_range(seed: int, split: str | None) -> None:
    """ValueError when a run seed is on the wrong side of the held-out range for the run's split."""
    inside = seed in HELDOUT_SEEDS
    if split == HELDOUT and not inside:
        raise ValueError(f"--split heldout takes a seed of the held-out range, {HELDOUT_SEEDS.start} to {HELDOUT_SEEDS.stop - 1} "
                         f"(or none: one is drawn); got {seed}")
    if split != HELDOUT and inside:
        raise ValueError(f"seed {seed} is in the held-out range {HELDOUT_SEEDS.start}-{HELDOUT_SEEDS.stop - 1}: "
                         "only --split heldout runs use it")


def check_transcript_split(value: Any, seed: int) -> str | None:
    """check_split for what writes or hands out transcripts (generate, Gymnasium): never the held-out runs'."""
    split = check_split(value)
    if split == HELDOUT:
        raise ValueError("held-out runs keep no transcripts: generate and train on train, test or all")
    check_seed_range(seed, split)
    return split


def new_heldout_seed() -> int:
    return HELDOUT_SEEDS.start + secrets.randbelow(len(HELDOUT_SEEDS))


def aggregate_only(result: EpisodeResult) -> EpisodeResult:
    """What a held-out run keeps of an episode: its outcome and counts (steps as blanks, so means still hold),
    and nothing an agent said or saw, no hidden parameter and no seed (which would re-derive them)."""
    query = Query(result.query.app, result.query.level, result.query.category, result.query.index, 0, {})
    blank = tuple(Step(step.index, "", "", "", "", (), step.refused, step.agent_s, step.exec_s, step.check_s,
                       step.usage, None, step.turn) for step in result.steps)
    return replace(result, query=query, steps=blank, first_observation="", episode_id="", finish=None, tools=(),
                   details=result.details if result.outcome is Outcome.INFRA_ERROR else "")
