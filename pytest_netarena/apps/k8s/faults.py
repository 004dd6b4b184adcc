"""The fault catalogue: five NetworkPolicy mutations, the level mix, and drawing only effective faults.

A fault is a JSON-able dict {"type", "policy", ...params}. Mutations follow NetArena's injector
(drop the first ingress rule; append `from` rules for two apps without ports; set every ingress
port / protocol; replace allow-all egress by rules to two apps). Every draw goes through the
Chooser, simplest option first, and every fault must change the connectivity matrix of the state
it is applied to; the sequence as a whole must leave the matrix broken. A candidate that would be
a no-op is removed and the choice made again, so the draw stays deterministic for a given seed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ...core.catalogue import Category, Chooser
from .matrix import Matrix, OfflineMatrix, intended_matrix
from .workloads.model import AppSpec

REMOVE_INGRESS, ADD_INGRESS = "remove_ingress", "add_ingress"
CHANGE_PORT, CHANGE_PROTOCOL, ADD_EGRESS = "change_port", "change_protocol", "add_egress"
FAULT_TYPES = (REMOVE_INGRESS, ADD_INGRESS, CHANGE_PORT, CHANGE_PROTOCOL, ADD_EGRESS)

LEVELS: dict[int, tuple[tuple[str, ...], ...]] = {
    1: tuple((fault,) for fault in FAULT_TYPES),
    2: ((REMOVE_INGRESS, ADD_INGRESS), (REMOVE_INGRESS, CHANGE_PORT), (REMOVE_INGRESS, CHANGE_PROTOCOL),
        (ADD_INGRESS, CHANGE_PORT), (ADD_INGRESS, CHANGE_PROTOCOL), (CHANGE_PORT, CHANGE_PROTOCOL)),
    3: ((CHANGE_PORT, ADD_EGRESS), (CHANGE_PROTOCOL, ADD_EGRESS), (REMOVE_INGRESS, ADD_EGRESS),
        (ADD_INGRESS, ADD_EGRESS)),
}
PROTOCOLS = ("UDP", "SCTP")  #: NetArena's change_protocol values
PORT_RANGE = (1, 65535)  #: NetArena's change_port range
APPS_PER_RULE = 2  #: NetArena samples two apps for add_ingress / add_egress
PARAM_ATTEMPTS = 3


class NoEffectiveFault(ValueError):
    """No target and parameters of this fault type change the matrix of the given state."""


def categories() -> list[Category]:
    return [Category(level, "+".join(types)) for level, combos in LEVELS.items() for types in combos]


def _app_selector(app: str) -> dict[str, Any]:
    return {"podSelector": {"matchLabels": {"app": app}}}


def _ingress_ports(policy: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [port for rule in policy["spec"].get("ingress") or () for port in rule.get("ports") or ()]


def apply_fault(policies: Mapping[str, dict], fault: Mapping[str, Any]) -> dict[str, dict]:
    """A new policy set with `fault` applied (the input is not modified)."""
    result = dict(policies)
    policy = copy.deepcopy(result[fault["policy"]])
    spec = policy["spec"]
    kind = fault["type"]
    if kind == REMOVE_INGRESS:
        spec["ingress"] = list(spec.get("ingress") or ())[1:]
    elif kind == ADD_INGRESS:
        spec["ingress"] = list(spec.get("ingress") or ()) + [{"from": [_app_selector(a)]} for a in fault["apps"]]
    elif kind == CHANGE_PORT:
        for port in _ingress_ports(policy):
            port["port"] = fault["new_port"]
    elif kind == CHANGE_PROTOCOL:
        for port in _ingress_ports(policy):
            port["protocol"] = fault["new_protocol"]
    elif kind == ADD_EGRESS:
        kept = [rule for rule in spec.get("egress") or () if rule]
        spec["egress"] = kept + [{"to": [_app_selector(a)]} for a in fault["apps"]]
    else:
        raise ValueError(f"unknown fault type {kind!r}")
    result[fault["policy"]] = policy
    return result


def apply_faults(policies: Mapping[str, dict], faults: Sequence[Mapping[str, Any]]) -> dict[str, dict]:
    for fault in faults:
        policies = apply_fault(policies, fault)
    return dict(policies)


def _types(policy: Mapping[str, Any]) -> list[str]:
    return list(policy["spec"].get("policyTypes") or ["Ingress"])


def eligible_policies(kind: str, policies: Mapping[str, dict]) -> list[str]:
    """Policies the mutation can change at all, in name order (the simplest first)."""
    names = []
    for name in sorted(policies):
        policy = policies[name]
        has_ingress = "Ingress" in _types(policy)
        if kind == REMOVE_INGRESS:
            ok = has_ingress and bool(policy["spec"].get("ingress"))
        elif kind == ADD_INGRESS:
            ok = has_ingress
        elif kind in (CHANGE_PORT, CHANGE_PROTOCOL):
            ok = has_ingress and bool(_ingress_ports(policy))
        else:
            ok = "Egress" in _types(policy) and any(not rule for rule in policy["spec"].get("egress") or ())
        if ok:
            names.append(name)
    return names


def _policy_workload(policy: Mapping[str, Any]) -> str | None:
    return (policy["spec"].get("podSelector") or {}).get("matchLabels", {}).get("app")


def _draw_params(kind: str, name: str, policies: Mapping[str, dict], matrix: Matrix, app: AppSpec,
                 chooser: Chooser) -> dict[str, Any] | None:
    policy = policies[name]
    target = _policy_workload(policy) or name
    if kind == REMOVE_INGRESS:
        return {}
    if kind == ADD_INGRESS:
        # Sources that cannot already reach every port of the target's service.
        sources = [w for w in app.names if w != target and any(
            not allowed for flow, allowed in matrix.items() if flow.source == w and flow.service == target)]
        if not sources:
            return None
        return {"apps": sorted(chooser.sample(sources, min(APPS_PER_RULE, len(sources))))}
    if kind == CHANGE_PORT:
        current = sorted({port.get("port") for port in _ingress_ports(policy) if isinstance(port.get("port"), int)})
        low, high = PORT_RANGE
        drawn = chooser.integer(low, high - len(current))
        for used in current:  # skip the ports in use so the draw is never a no-op
            if drawn >= used:
                drawn += 1
        return {"new_port": drawn}
    if kind == CHANGE_PROTOCOL:
        current = {port.get("protocol", "TCP") for port in _ingress_ports(policy)}
        options = [p for p in PROTOCOLS if {p} != current]
        return {"new_protocol": chooser.choice(options)}
    others = [w for w in app.servers if w != target]
    if not others:
        return None
    return {"apps": sorted(chooser.sample(others, min(APPS_PER_RULE, len(others))))}


def draw_faults(app: AppSpec, types: Sequence[str], chooser: Chooser,
                offline: OfflineMatrix | None = None) -> list[dict[str, Any]]:
    """Draw one effective fault per type, in order; raises NoEffectiveFault if none exists."""
    offline = offline or OfflineMatrix(app)
    intent = intended_matrix(app)
    policies = dict(app.healthy_view())  # apply_fault copies what it changes
    matrix = dict(intent)
    faults: list[dict[str, Any]] = []
    for position, kind in enumerate(types):
        last = position == len(types) - 1
        candidates = eligible_policies(kind, policies)
        while True:
            if not candidates:
                raise NoEffectiveFault(f"no {kind} fault changes the matrix after {faults}")
            name = chooser.choice(candidates)
            for _ in range(PARAM_ATTEMPTS):
                params = _draw_params(kind, name, policies, matrix, app, chooser)
                if params is None:
                    break
                fault = {"type": kind, "policy": name, **params}
                mutated = apply_fault(policies, fault)
                new_matrix = offline.matrix(mutated)
                if new_matrix != matrix and (not last or new_matrix != intent):
                    break
            else:
                params = None
            if params is not None and new_matrix != matrix and (not last or new_matrix != intent):
                faults.append(fault)
                policies, matrix = mutated, new_matrix
                break
            candidates = [c for c in candidates if c != name]
    return faults


def describe(fault: Mapping[str, Any]) -> str:
    """A human line for transcripts and oracle comments."""
    extra = {k: v for k, v in fault.items() if k not in ("type", "policy")}
    details = ", ".join(f"{k}={v}" for k, v in extra.items())
    return f"{fault['type']}({fault['policy']}{', ' + details if details else ''})"
