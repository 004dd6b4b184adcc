"""The native MALT wording before issue 45, one fixed sentence per operation, written again for a program (tests only).

It lets a test put the same programs to builtin:parser in the wording it compiles and in today's."""

from __future__ import annotations

from typing import Any

from pytest_netarena.apps.malt import ops
from pytest_netarena.apps.malt import schema as s


def _word(graph, name: str) -> str:
    kinds = graph.nodes[name]["type"]
    return s.KIND_WORDS[s.PACKET_SWITCH if s.PACKET_SWITCH in kinds else kinds[0]]


def _gbps(bps: int) -> str:
    return f"{bps} bps ({bps // 1_000_000_000} Gbps)"


def _sentence(step: dict[str, Any], graph) -> str:
    op = step["op"]
    if op == "add_port":
        return (f"Add a new port named {step['port']} with {s.CAPACITY} {_gbps(step['capacity'])} to the packet "
                f"switch {step['switch']}.")
    if op == "add_switch":
        ports, count = step["ports"], len(step["ports"])
        return (f"Add a new packet switch named {step['switch']} to the {_word(graph, step['parent'])} "
                f"{step['parent']}, with {count} port{'s' if count > 1 else ''} ({', '.join(p for p, _ in ports)}), "
                f"each with {s.CAPACITY} {_gbps(ports[0][1])}.")
    if op == "remove":
        what = "port" if ops.has_kind(graph, step["name"], s.PORT) else "packet switch"
        return f"Remove the {what} {step['name']} from the graph."
    if op == "for_update":
        return (f"For each packet switch directly contained in the {_word(graph, step['parent'])} {step['parent']}, "
                f"set the {s.CAPACITY} of its port named <switch name>.p1 to {_gbps(step['capacity'])}.")
    if op == "if":
        add = step["else"][0]
        return (f"If the total {s.CAPACITY} of the ports of the packet switch {step['switch']} is greater than "
                f"{step['above']} bps, remove its port {step['then'][0]['name']}; otherwise add a new port named "
                f"{add['port']} with {s.CAPACITY} {_gbps(add['capacity'])} to it.")
    word = _word(graph, step["parent"])
    if op == "list":
        return (f"List the names of all direct children of the {word} {step['parent']} (nodes it RK_CONTAINS). "
                "Return type 'list': a list of names (any order).")
    if op == "rank":
        return (f"Rank the direct children of the {word} {step['parent']} by total {s.CAPACITY}, highest first (ties "
                "by name, ascending). Return type 'list': a list of [name, capacity] pairs.")
    return (f"Count the {step['kind']} nodes contained in the {word} {step['parent']} at any depth. "
            "Return type 'text': the number.")


def old_question(program: list[dict[str, Any]], graph) -> str:
    """The question queries.py wrote for this program before issue 45."""
    sentences = [_sentence(program[0], graph)]
    if len(program) == 1 and program[0]["op"] in ops.MUTATIONS:
        sentences.append("Return type 'graph' with the updated graph.")
    elif len(program) > 1:
        sentences.append("Then, on the updated graph: " + _sentence(program[1], graph))
        sentences.append("Also return the changed graph as updated_graph.")
    return " ".join(sentences)
