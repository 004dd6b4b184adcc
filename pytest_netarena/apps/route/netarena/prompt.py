"""The route prompt under --compat netarena: our role and format, NetArena's observations, deny-list and rules."""

from __future__ import annotations

from ....core.app import PromptSpec
from . import rules as compat
from ..prompt import ACTION_FORMAT

ROLE = """You are a network engineer repairing a Linux network emulated with Mininet. One Linux router \
connects several subnets; each subnet is a switch (a Linux bridge) with hosts that use the router as \
their default gateway. Faults were injected into the router, so some nodes cannot reach each other. \
Your goal: a pingall in which every connection succeeds (0% dropped). Diagnose first, then fix, and \
do not break what works: a turn after which the overall loss is higher than before is unsafe."""

RULES = """- You see the topology first. Before every turn you get the log of your previous turns (the pingall \
then, your machine and command, the packet loss, and the command's output) and the current pingall: one \
line per source node, "<src> -> " then, per destination, its name or X, then \
"*** Results: <loss>% dropped (<received>/<sent> received)".
- Names carry a per-episode prefix (e.g. na0a01r0, na0a01h2, na0a01r0-eth2); use them exactly.
- One command line per turn, run as root in a shell on the node you name (ip, ifconfig, iptables, \
iptables-save, sysctl, tc, arp, ss and common shell tools).
- A command containing any of {denied} is skipped without a word, and so is a turn whose machine is \
unknown. Ping results are given to you: do not ping.
- The task ends as soon as a pingall shows 0% dropped."""


def netarena_prompt() -> PromptSpec:
    denied = ", ".join(f'"{word}"' for word in compat.DENIED)
    rules = RULES.format(denied=denied)
    return PromptSpec(role=ROLE, rules=rules, action_format=ACTION_FORMAT.split("\nAlso accepted")[0])
