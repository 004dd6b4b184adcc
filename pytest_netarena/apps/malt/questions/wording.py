"""How operators word MALT requests: `GRAMMAR`, its templates and terminals, which writes and reads questions.

Templates for references, clauses, requests and the context around them; terminals for names,
counts and capacities in the units people write.

A question's value is {"request": {"first": CLAUSE, "read": CLAUSE}} (either part may be absent); a
clause is {"op": ..., slots}; the references in it are refs.py's. What the writer may choose but a
reader need not recover is a hint (`_` keys): the kind word of a named node, whether the read comes
first, the context sentences around the request.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from ....core.catalogue import Chooser
from .. import schema as s
from .grammar import Grammar, Template, Terminal
from .refs import BLOCK

WORDS = {
    s.PACKET_SWITCH: ("switch", "packet switch"),
    s.PORT: ("port", "interface"),
    s.AGG_BLOCK: ("aggregation block", "agg block"),
    s.SPINEBLOCK: ("spine block",),
    s.SUPERBLOCK: ("superblock",),
    s.RACK: ("rack",),
    s.CONTROL_DOMAIN: ("control domain",),
    BLOCK: ("block",),
}
PLURALS = {s.PACKET_SWITCH: ("switches", "packet switches"), s.PORT: ("ports", "interfaces")}
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# ----- terminals -----------------------------------------------------------------------------------

#: a node name: no spaces, at least one digit (MALT's names all have one), not a capacity such as 10G
_NAME = re.compile(r"(?![\d.,]+\s?(?:G|Gbps|Mbps|Tbps|bps)\b)(?=[\w.\-]*\d)[A-Za-z0-9_][\w.\-]*[A-Za-z0-9_]|\d")
_UNITS = {"gigabits per second": 10**9, "gigabit per second": 10**9, "Gbps": 10**9, "Gb/s": 10**9, "Mbps": 10**6, "Tbps": 10**12, "bps": 1,
          "G": 10**9}
_CAPACITY = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?) ?(gigabits? per second|Gbps|Gb/s|Mbps|Tbps|bps|G)\b")
_INT = re.compile(r"\d+|" + "|".join(NUMBER_WORDS[1:]) + r"\b")


def _capacity_value(match: re.Match[str]) -> int | None:
    try:
        value = Decimal(match[1].replace(",", "")) * _UNITS[match[2]]
    except InvalidOperation:
        return None
    return int(value) if value == value.to_integral_value() and value > 0 else None


def capacity_forms(bps: int) -> list[str]:
    """The ways people write a capacity (networking units are decimal: 1G = 1 Gbps = 10^9 bps)."""
    forms = [f"{bps:,} bps", f"{bps} bps"]
    if bps % 10**9 == 0:
        g = bps // 10**9
        forms += [f"{g} Gbps", f"{g}G", f"{g} Gb/s", f"{g}Gbps", f"{g * 1000:,} Mbps",
                  f"{g} gigabit{'s' if g > 1 else ''} per second"]
        if g >= 100 and g % 100 == 0:
            forms.append(f"{Decimal(g) / 1000} Tbps")
    elif bps % 10**6 == 0:
        forms.append(f"{bps // 10**6:,} Mbps")
    return forms


def _write_int(value: int, chooser: Chooser) -> str:
    forms = [str(value)] + ([NUMBER_WORDS[value]] if 0 < value < len(NUMBER_WORDS) else [])
    return chooser.choice(forms)


TERMINALS = {
    "NAME": Terminal(_NAME, lambda m: m[0], lambda value, chooser: str(value)),
    "CAP": Terminal(_CAPACITY, _capacity_value, lambda value, chooser: chooser.choice(capacity_forms(value))),
    "INT": Terminal(_INT, lambda m: int(m[0]) if m[0].isdigit() else NUMBER_WORDS.index(m[0].lower()), _write_int),
    "DIGITS": Terminal(re.compile(r"\d+"), lambda m: int(m[0]), lambda value, chooser: str(value)),
}

# ----- references ----------------------------------------------------------------------------------

_METRICS = {
    ("capacity", True): ("with the most total capacity", "with the highest total capacity",
                         "with the largest total capacity"),
    ("capacity", False): ("with the least total capacity", "with the lowest total capacity",
                          "with the smallest total capacity"),
    ("ports", True): ("with the most ports",),
    ("ports", False): ("with the fewest ports",),
}
_WHOLE = ("in the whole datacenter", "in the fabric", "anywhere in the datacenter")
_SHARING = {
    s.RACK: ("the rack that houses the switches of {with:REF}", "the rack where the switches of {with:REF} are"),
    s.CONTROL_DOMAIN: ("the control domain that manages the switches of {with:REF}",
                       "the control domain in charge of {with:REF}"),
}


def _reference_templates() -> list[Template]:
    out = [Template("{name:NAME}", {"form": "name"})]
    for kind, words in WORDS.items():
        for word in words:
            if kind != BLOCK:
                out += [Template(f"{word} {{name:NAME}}", {"form": "name", "_kind": kind}),
                        Template(f"the {word} {{name:NAME}}", {"form": "name", "_kind": kind})]
            out += [Template(f"that {word}", {"form": "it", "_kind": kind}),
                    Template(f"the same {word}", {"form": "it", "_kind": kind})]
            holder = {"form": "holder", "kind": kind}
            out += [Template(text, holder) for text in (
                f"the {word} that holds {{of:REF}}", f"the {word} holding {{of:REF}}",
                f"the {word} containing {{of:REF}}", f"the {word} that {{of:REF}} sits in",
                f"the {word} that {{of:REF}} belongs to", f"{{of:NAMED}}'s {word}")]
            of_it = {**holder, "of": {"form": "it"}}
            out += [Template(f"its {word}", of_it)]
            out += [Template(text, {**of_it, "_gone": True}) for text in (
                f"the {word} it was in", f"the {word} it was on", f"the {word} that held it")]
            out += [Template(text, {**of_it, "_gone": False}) for text in (
                f"the {word} it is in", f"the {word} that holds it")]
            sharing = {"form": "sharing", "kind": kind}
            if kind != s.PORT and kind != s.PACKET_SWITCH:
                out += [Template(text, sharing) for text in (
                    f"the {word} whose switches sit in {{with:REF}}", f"the {word} that shares its switches with {{with:REF}}")]
            if kind == BLOCK:
                continue
            for (metric, most), phrases in _METRICS.items():
                if kind == s.PORT and metric == "ports":
                    continue
                extreme = {"form": "extreme", "kind": kind, "metric": metric, "most": most}
                for phrase in phrases:
                    out += [Template(f"the {word} {phrase} in {{in:REF}}", extreme),
                            Template(f"the {word} in {{in:REF}} {phrase}", extreme)]
                    out += [Template(f"the {word} {phrase} {whole}", {**extreme, "in": None}) for whole in _WHOLE]
        for text in _SHARING.get(kind, ()):
            out.append(Template(text, {"form": "sharing", "kind": kind}))
    for most, word in ((True, "fastest"), (False, "slowest")):
        extreme = {"form": "extreme", "kind": s.PORT, "metric": "capacity", "most": most}
        out += [Template(f"the {word} port of {{in:REF}}", extreme), Template(f"the {word} port on {{in:REF}}", extreme)]
    out += [Template(text, {"form": "port_at"}) for text in (
        "the {capacity:CAP} port of {of:REF}", "the {capacity:CAP} port on {of:REF}",
        "the port of {of:REF} that runs at {capacity:CAP}", "the only {capacity:CAP} port on {of:REF}")]
    return out


# ----- clauses -------------------------------------------------------------------------------------

_NEW_PORT = (
    Template("named {name:NAME}", {"form": "named"}), Template("called {name:NAME}", {"form": "named"}),
    Template("named <switch>.p<N>, where N is one more than the switch's highest port number", {"form": "next"}),
    Template("numbered one past the switch's highest port (<switch>.p<highest + 1>)", {"form": "next"}),
)
_ADD_PORT = (
    "add a {capacity:CAP} port to {switch:REF}, {port:NEWPORT}",
    "add a new port to {switch:REF} at {capacity:CAP}, {port:NEWPORT}",
    "give {switch:REF} one more port of {capacity:CAP}, {port:NEWPORT}",
    "hook up a new {capacity:CAP} interface on {switch:REF}, {port:NEWPORT}",
    "provision one more {capacity:CAP} port on {switch:REF}, {port:NEWPORT}",
)
_PORT_NAMES = ("(named <switch>.p1, <switch>.p2, ...)", "(named <switch>.p1 and up)", "(<switch>.p1 onwards)")
_ADD_SWITCH = tuple(f"{head} {names}" for names in _PORT_NAMES for head in (
    "add a new switch {switch:NAME} to {parent:REF} with {count:INT} ports of {capacity:CAP} each",
    "install switch {switch:NAME} in {parent:REF}: {count:INT} x {capacity:CAP} ports",
    "put a new packet switch called {switch:NAME} under {parent:REF}, with {count:INT} {capacity:CAP} ports",
)) + (
    "{parent:REF} gets a new switch, {switch:NAME}, with {count:INT} {capacity:CAP} ports named <switch>.p1 to "
    "<switch>.p{count:DIGITS}",
)
_ADD_ONE_PORT_SWITCH = (
    "add a new switch {switch:NAME} to {parent:REF} with a single {capacity:CAP} port (<switch>.p1)",
    "install switch {switch:NAME} in {parent:REF} with one port of {capacity:CAP}, named <switch>.p1",
)
_REMOVE = (
    "remove {target:REF}", "take {target:REF} out of the graph", "decommission {target:REF}",
    "delete {target:REF} from the topology", "drop {target:REF}", "pull {target:REF} out",
)
_REMOVED = ("{target:REF} is removed", "{target:REF} has been taken out", "we pull {target:REF}",
            "{target:REF} is decommissioned")
_LIST = ("list the direct children of {parent:REF}", "list everything {parent:REF} contains directly",
         "give me the names of the nodes directly under {parent:REF}", "name everything one level below {parent:REF}")
_LIST_Q = ("what does {parent:REF} contain directly", "which nodes sit directly under {parent:REF}",
           "what are the direct children of {parent:REF}")
_RANK = ("rank the direct children of {parent:REF} by total capacity, highest first",
         "order everything directly under {parent:REF} by total capacity, biggest first",
         "sort the direct children of {parent:REF} by their total capacity, most first")
_RANK_Q = ("how do the direct children of {parent:REF} rank by total capacity, highest first",
           "which direct children of {parent:REF} have the most total capacity (all of them, ranked highest first)")
_COUNT = ("count the {plural} in {{parent:REF}}", "give me the total number of {plural} under {{parent:REF}}",
          "count all {plural} below {{parent:REF}}, at any depth")
_COUNT_Q = ("how many {plural} are there in {{parent:REF}}", "how many {plural} does {{parent:REF}} have in total",
            "how many {plural} sit under {{parent:REF}}")
_FOR = (
    "set the port <switch>.p1 of every switch in {parent:REF} to {capacity:CAP}",
    "upgrade port <switch>.p1 of each switch in {parent:REF} to {capacity:CAP}",
    "change the capacity of port <switch>.p1 of every switch directly under {parent:REF} to {capacity:CAP}",
    "move the first port (<switch>.p1) of each switch in {parent:REF} to {capacity:CAP}",
)
_IF = (
    "if {switch:REF} carries more than {above:CAP} in total, remove {port:REF}; otherwise add a {capacity:CAP} port "
    "to it, {new:NEWPORT}",
    "check the total capacity of {switch:REF}: above {above:CAP}, take out {port:REF}; {above:CAP} or less, give it "
    "a new {capacity:CAP} port {new:NEWPORT}",
    "when {switch:REF} has over {above:CAP} of total capacity, drop {port:REF}; if not, add a port of {capacity:CAP} "
    "to it, {new:NEWPORT}",
)


def _clauses() -> dict[str, list[Template]]:
    count = [Template(text.format(plural=plural), {"op": "count", "kind": kind})
             for kind, plurals in PLURALS.items() for plural in plurals for text in _COUNT]
    count_q = [Template(text.format(plural=plural), {"op": "count", "kind": kind})
               for kind, plurals in PLURALS.items() for plural in plurals for text in _COUNT_Q]
    add_switch = [Template(t, {"op": "add_switch", "_many": True}) for t in _ADD_SWITCH]
    add_switch += [Template(t, {"op": "add_switch", "count": 1}) for t in _ADD_ONE_PORT_SWITCH]
    return {
        "NEWPORT": list(_NEW_PORT),
        "MUT": [Template(t, {"op": "add_port"}) for t in _ADD_PORT] + add_switch
        + [Template(t, {"op": "remove"}) for t in _REMOVE] + [Template(t, {"op": "for_update", "suffix": "p1"}) for t in _FOR],
        "COND": [Template(t, {"op": "if"}) for t in _IF],
        "DONE": [Template(t, {"op": "remove"}) for t in _REMOVED]
        + [Template("we " + t, {"op": "add_port"}) for t in _ADD_PORT[:3]]
        + [Template("we " + t, {"op": "add_switch", "_many": True}) for t in _ADD_SWITCH[:2]]
        + [Template("we " + t, {"op": "add_switch", "count": 1}) for t in _ADD_ONE_PORT_SWITCH],
        "READ": [Template(t, {"op": "list"}) for t in _LIST] + [Template(t, {"op": "rank"}) for t in _RANK] + count,
        "READ_Q": [Template(t, {"op": "list"}) for t in _LIST_Q] + [Template(t, {"op": "rank"}) for t in _RANK_Q]
        + count_q,
    }


# ----- requests and context ----------------------------------------------------------------------

_ALONE = ("{first:MUT}.", "please {first:MUT}.", "could you {first:MUT}?", "I need you to {first:MUT}.")
_READ_ALONE = ("{read:READ}.", "{read:READ_Q}?", "quick question: {read:READ_Q}?", "please {read:READ}.")
_THEN = ("{first:MUT}, then {read:READ}.", "{first:MUT}. Then {read:READ}.", "{first:MUT}. After that, {read:READ}.",
         "{first:MUT}. Once that is done, {read:READ_Q}?", "first {first:MUT}; then {read:READ}.",
         "once {first:DONE}, {read:READ_Q}?")
_READ_FIRST = ("{read:READ}, once you {first:MUT}.", "{read:READ_Q}, after we {first:MUT}?",
               "{read:READ_Q} once {first:DONE}?")
_IF_THEN = ("{first:COND}. Then {read:READ}.", "{first:COND}. After that, {read:READ}.",
            "{first:COND}. Once that is done, {read:READ_Q}?")
_PRE = ("we're planning the next build-out.", "this is for the quarterly capacity review.",
        "quick one before tonight's change window.", "following up on ticket NET-{_ticket:DIGITS}.",
        "the planning sheet is out of date, so go by the graph.",
        "{_other:NAME} is handled in a separate ticket, so leave it out.",
        "the {_capacity:CAP} upgrade is a different project; ignore it here.")
_POST = ("thanks!", "no need to touch anything else.", "don't worry about {_other:NAME}; another team has it.",
         "the numbers in last week's report may be stale.", "ping me if something looks off.")


def _requests() -> dict[str, list[Template]]:
    return {
        "REQUEST": [Template(t) for t in _ALONE + _READ_ALONE]
        + [Template(t, {"_order": "first"}) for t in _THEN + _IF_THEN]
        + [Template(t, {"_order": "read"}) for t in _READ_FIRST],
        "PRE": [Template(t) for t in _PRE],
        "POST": [Template(t) for t in _POST],
        "QUESTION": [Template("{request:REQUEST}"), Template("{_pre:PRE} {request:REQUEST}"),
                     Template("{request:REQUEST} {_post:POST}"), Template("{_pre:PRE} {request:REQUEST} {_post:POST}")],
    }


#: a node named outright: what a possessive may follow ("X's rack", never "the switch that holds X's rack")
_NAMED = [t for t in _reference_templates() if t.fixed.get("form") == "name"]
GRAMMAR = Grammar({"REF": _reference_templates(), "NAMED": _NAMED, **_clauses(), **_requests()}, TERMINALS,
                  nested=frozenset({"REF", "NAMED"}))

_SENTENCE = re.compile(r"(^|[.?!] )([a-z][a-z']*)(?=[ ,:;.!?])")


def capitalized(text: str) -> str:
    """Each sentence starting with a word (not a node name) starts with a capital."""
    return _SENTENCE.sub(lambda m: m[1] + m[2][0].upper() + m[2][1:], text)


def write_question(value: dict[str, Any], chooser: Chooser, depth: int) -> str:
    return capitalized(GRAMMAR.write("QUESTION", value, chooser, depth))


def read_question(text: str, depth: int = 3) -> list[dict[str, Any]]:
    """Every request the text may be read as (one for a sound question)."""
    return [value["request"] for value in GRAMMAR.read("QUESTION", " ".join(text.split()), depth)]
