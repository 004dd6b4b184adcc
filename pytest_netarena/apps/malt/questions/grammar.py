"""A small grammar of templates that writes a value as text through a Chooser and reads text back into every value.

A template is text with slots, `{key:SYMBOL}`, and fixed fields: matching it gives the value
`fixed | {key: what SYMBOL matched}` (a slot whose key is `*` passes its value through). Writing a
value picks one template of its symbol that says every field of the value (`fixed` equal, the rest
in slots) and writes each slot's part. Keys starting with `_` are hints for the writer (a kind word,
say) and are dropped from what is read. Reading is exhaustive: `read` returns every value the whole
text matches, so a test can tell an ambiguous wording from a sound one. Symbols listed as `nested`
(references) may hold each other only to a bounded depth, which also bounds left recursion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....core.catalogue import Chooser

_SLOT = re.compile(r"\{([*\w]+):(\w+)\}")
#: fields whose fixed values sort a symbol's templates before each is asked whether it can say a value
_GATE_KEYS = ("form", "op", "kind")


@dataclass(frozen=True)
class Slot:
    key: str
    symbol: str


@dataclass(frozen=True)
class Template:
    """One wording of a symbol: literal text and slots, and the fields it fixes."""

    text: str
    fixed: Mapping[str, Any] = field(default_factory=dict)

    @property
    def parts(self) -> tuple[str | Slot, ...]:
        parts: list[str | Slot] = []
        at = 0
        for match in _SLOT.finditer(self.text):
            if match.start() > at:
                parts.append(self.text[at:match.start()])
            parts.append(Slot(match[1], match[2]))
            at = match.end()
        if at < len(self.text):
            parts.append(self.text[at:])
        return tuple(parts)


@dataclass(frozen=True)
class Terminal:
    """A symbol read by a regular expression and written by a function (names, numbers, capacities)."""

    pattern: re.Pattern[str]
    value: Callable[[re.Match[str]], Any]  #: the value of a match (None: no value here)
    write: Callable[[Any, Chooser], str]


def _plain(value: Any) -> Any:
    """A read value without the writer's hints, hashable for de-duplication."""
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items() if not k.startswith("_")))
    if isinstance(value, list):
        return tuple(_plain(v) for v in value)
    return value


def strip_hints(value: Any) -> Any:
    """The value as read: every `_` key dropped, at any depth."""
    if isinstance(value, dict):
        return {k: strip_hints(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [strip_hints(v) for v in value]
    return value


class Grammar:
    def __init__(self, rules: Mapping[str, Sequence[Template]], terminals: Mapping[str, Terminal],
                 nested: frozenset[str] = frozenset()) -> None:
        self.rules = {symbol: [(t, t.parts) for t in templates] for symbol, templates in rules.items()}
        self.terminals = terminals
        self.nested = nested
        #: per symbol, its templates grouped by the literal they open with (read tests each literal once), and
        #: those that open with a slot
        self.openings: dict[str, tuple[dict[str, list], list]] = {}
        for symbol, templates in self.rules.items():
            by_literal: dict[str, list] = {}
            by_slot = []
            for template, parts in templates:
                if parts and isinstance(parts[0], str):
                    by_literal.setdefault(parts[0].lower(), []).append((template, parts))
                else:
                    by_slot.append((template, parts))
            self.openings[symbol] = (by_literal, by_slot)
        #: per template, the keys of its slots and every key it says (fixed or in a slot)
        self._keys = {}
        for templates in self.rules.values():
            for template, parts in templates:
                keys = frozenset(p.key for p in parts if isinstance(p, Slot))
                self._keys[id(template)] = (keys, keys | set(template.fixed))
        #: per symbol, its templates by the fields that most often tell templates apart (None: not fixed)
        self.gates: dict[str, dict[tuple, list]] = {}
        self._gated_memo: dict[tuple, list] = {}
        for symbol, templates in self.rules.items():
            for template, parts in templates:
                gate = tuple(_plain(template.fixed.get(key)) for key in _GATE_KEYS)
                self.gates.setdefault(symbol, {}).setdefault(gate, []).append((template, parts))
        unknown = {p.symbol for ts in self.rules.values() for _, parts in ts for p in parts
                   if isinstance(p, Slot) and p.symbol not in self.rules and p.symbol not in terminals}
        if unknown:
            raise ValueError(f"templates name unknown symbols: {sorted(unknown)}")

    # ----- writing ------------------------------------------------------------------------------

    def says(self, template: Template, parts: tuple[str | Slot, ...], value: Any) -> bool:
        """The template can say this value: its fixed fields equal the value's, its slots hold the rest."""
        keys, said = self._keys[id(template)]
        if "*" in keys:
            return True
        if not isinstance(value, dict):
            return False
        if any(key not in value or value[key] != wanted for key, wanted in template.fixed.items()):
            return False
        return all(key in said for key in value if key[0] != "_") and keys <= value.keys()

    def write(self, symbol: str, value: Any, chooser: Chooser, depth: int = 3) -> str:
        """The value in words: a template of the symbol chosen among those that can say all of it."""
        return self._write(symbol, value, chooser, depth, {})

    def _write(self, symbol: str, value: Any, chooser: Chooser, depth: int, memo: dict) -> str:
        if symbol in self.terminals:
            return self.terminals[symbol].write(value, chooser)
        options = [(t, parts) for t, parts in self._gated(symbol, value) if self._can(symbol, t, parts, value, depth, memo)]
        if not options:
            raise ValueError(f"no wording of {symbol} says {value!r}")
        _, parts = chooser.choice(options)
        out = []
        for part in parts:
            if isinstance(part, Slot):
                inner = value if part.key == "*" else value[part.key]
                out.append(self._write(part.symbol, inner, chooser, self._inner_depth(symbol, part, depth), memo))
            else:
                out.append(part)
        return "".join(out)

    def _gated(self, symbol: str, value: Any) -> list:
        """The templates of a symbol whose gate fields do not contradict the value (in the symbol's order)."""
        gates = self.gates[symbol]
        if not isinstance(value, dict):
            return gates.get((None,) * len(_GATE_KEYS), [])
        key = (symbol, *(_plain(value.get(k)) for k in _GATE_KEYS))
        if key not in self._gated_memo:
            wanted = [(None,) if v is None else (None, v) for v in key[1:]]
            self._gated_memo[key] = [t for gate, templates in gates.items()
                                     if all(g in options for g, options in zip(gate, wanted)) for t in templates]
        return self._gated_memo[key]

    def _inner_depth(self, outer: str, slot: Slot, depth: int) -> int:
        """A reference inside a reference is one level deeper (passing a value through is not)."""
        return depth - 1 if slot.key != "*" and outer in self.nested and slot.symbol in self.nested else depth

    def _can(self, symbol: str, template: Template, parts: tuple[str | Slot, ...], value: Any, depth: int,
             memo: dict) -> bool:
        if not self.says(template, parts, value):
            return False
        for part in parts:
            if isinstance(part, Slot):
                inner_depth = self._inner_depth(symbol, part, depth)
                inner = value if part.key == "*" else value[part.key]
                if inner_depth < 0 or not self._writable(part.symbol, inner, inner_depth, memo):
                    return False
        return True

    def _writable(self, symbol: str, value: Any, depth: int, memo: dict) -> bool:
        if symbol in self.terminals:
            return True
        key = (symbol, id(value), depth)  # the values live as long as the write that keeps this memo
        if key not in memo:
            memo[key] = False  # a symbol that needs itself to say the same value cannot say it
            memo[key] = any(self._can(symbol, t, parts, value, depth, memo) for t, parts in self._gated(symbol, value))
        return memo[key]

    # ----- reading ------------------------------------------------------------------------------

    def read(self, symbol: str, text: str, depth: int = 3) -> list[Any]:
        """Every distinct value of `symbol` that matches the whole text (hints dropped)."""
        reader = _Reader(self, text)
        found: dict[Any, Any] = {}
        for value, end in reader.match(symbol, 0, depth):
            if end == len(text):
                found.setdefault(_plain(value), strip_hints(value))
        return list(found.values())


class _Reader:
    """One text read: every (value, end) of each symbol at each position and depth, computed once."""

    def __init__(self, grammar: Grammar, text: str) -> None:
        self.grammar = grammar
        self.text = text
        self.lower = text.lower()
        self.memo: dict[tuple[str, int, int], list[tuple[Any, int]]] = {}

    def match(self, symbol: str, at: int, depth: int) -> list[tuple[Any, int]]:
        key = (symbol, at, depth)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = []  # a symbol re-entered at the same place and depth matches nothing more
        grammar = self.grammar
        if symbol in grammar.terminals:
            terminal = grammar.terminals[symbol]
            found = terminal.pattern.match(self.text, at)
            value = terminal.value(found) if found else None
            result = [(value, found.end())] if found and value is not None else []
        else:
            result = []
            by_literal, by_slot = grammar.openings[symbol]
            for literal, templates in by_literal.items():
                if self.lower.startswith(literal, at):
                    for template, parts in templates:
                        result += self._template(symbol, template, parts, at, depth)
            for template, parts in by_slot:
                result += self._template(symbol, template, parts, at, depth)
        self.memo[key] = result
        return result

    def _template(self, symbol: str, template: Template, parts: tuple[str | Slot, ...], at: int,
                  depth: int) -> list[tuple[Any, int]]:
        states: list[tuple[dict[str, Any] | Any, int]] = [(dict(template.fixed), at)]
        for part in parts:
            next_states = []
            for value, position in states:
                if isinstance(part, str):
                    if self.lower.startswith(part.lower(), position):
                        next_states.append((value, position + len(part)))
                    continue
                inner_depth = self.grammar._inner_depth(symbol, part, depth)
                if inner_depth < 0:
                    continue
                for inner, end in self.match(part.symbol, position, inner_depth):
                    if part.key == "*":
                        next_states.append((inner, end))
                    elif part.key in value and _plain(value[part.key]) != _plain(inner):
                        continue  # a slot said twice must say the same both times
                    else:
                        next_states.append(({**value, part.key: inner}, end))
            states = next_states
            if not states:
                break
        return states
