"""One pingmesh's result (which ordered pairs answered, by which protocols) and the text the agent reads of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: the protocols a pair must answer by to count as reachable (our rules); NetArena's pingmesh is ICMP only
PROTOCOLS = ("icmp", "tcp", "udp")
ICMP_ONLY = ("icmp",)
_NAMES = {"icmp": "ICMP echo", "tcp": "TCP", "udp": "UDP"}


@dataclass(frozen=True)
class Mesh:
    """One pingmesh over a fixed node order: the ordered pairs (src, dst) that answered by every protocol probed;
    for the others, the protocols that did answer (`partial`) and the first definite error seen (`errors`: a
    network or host unreachable, a refusal, a local firewall), as against a probe that simply got no answer."""

    nodes: tuple[str, ...]
    reachable: frozenset[tuple[str, str]]
    seconds: float = 0.0
    protocols: tuple[str, ...] = ICMP_ONLY
    partial: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    errors: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(src, dst) for src in self.nodes for dst in self.nodes if src != dst]

    @property
    def unreachable(self) -> list[tuple[str, str]]:
        return [pair for pair in self.pairs if pair not in self.reachable]

    @property
    def complete(self) -> bool:
        return not self.unreachable

    def same_as(self, other: Mesh) -> bool:
        """Whether the agent would read the same pingmesh: the same pairs answered, by the same protocols."""
        return self.reachable == other.reachable and dict(self.partial) == dict(other.partial)

    def failed(self, pair: tuple[str, str]) -> tuple[str, ...]:
        """The protocols pair did not answer by (all of them for a pair nothing answered)."""
        answered = self.partial.get(pair, frozenset())
        return tuple(protocol for protocol in self.protocols if protocol not in answered)

    def render(self) -> str:
        """Each row names what failed, so a wide network stays readable: '<src> -> all', '<src> -> none' or
        '<src> -> all except <dst> <dst>(tcp,udp)', a protocol list marking a destination that answered the others;
        then the summary line of Mininet's pingAll."""
        lines = [f"*** Ping: testing reachability by {_listed([_NAMES[p] for p in self.protocols])}: each row "
                 f"names the destinations its source did not reach"
                 + (", with the protocols that failed when the others answered" if len(self.protocols) > 1 else "")]
        for src in self.nodes:
            others = [dst for dst in self.nodes if dst != src]
            failed = [dst for dst in others if (src, dst) not in self.reachable]
            if not failed:
                row = "all"
            elif len(failed) == len(others) and not any((src, dst) in self.partial for dst in failed):
                row = "none"
            else:
                row = "all except " + " ".join(self._cell(src, dst) for dst in failed)
            lines.append(f"{src} -> {row}")
        lines.append(self.summary())
        return "\n".join(lines)

    def _cell(self, src: str, dst: str) -> str:
        failed = self.failed((src, dst))
        return dst if len(failed) == len(self.protocols) else f"{dst}({','.join(failed)})"

    def summary(self) -> str:
        """Mininet's pingAll summary line: the pairs that answered (by every protocol) of all pairs."""
        sent = len(self.pairs)
        received = sent - len(self.unreachable)
        loss = (sent - received) * 100 // sent if sent else 0
        return f"*** Results: {loss}% dropped ({received}/{sent} received)"


def with_answers_of(previous: Mesh, now: Mesh) -> Mesh:
    """`now`, measured by fewer protocols, completed by what `previous` found for the others (answers that could not
    have changed in between): a pair is reachable when it answers by every protocol of `previous`."""
    everything = set(previous.protocols)
    answered = {}
    for pair in previous.pairs:
        before = everything if pair in previous.reachable else set(previous.partial.get(pair, ()))
        fresh = set(now.protocols) if pair in now.reachable else set(now.partial.get(pair, ()))
        answered[pair] = (before - set(now.protocols)) | fresh
    reachable = frozenset(pair for pair, protocols in answered.items() if protocols == everything)
    partial = {pair: frozenset(protocols) for pair, protocols in answered.items() if protocols and pair not in reachable}
    return Mesh(previous.nodes, reachable, now.seconds, previous.protocols, partial, now.errors)


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
