"""Sets of object indices as Python ints, and an inverted label index that evaluates selectors on them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from ..core.selectors import LabelSelector


def iter_bits(bits: int) -> Iterator[int]:
    """Indices of the set bits, lowest first."""
    while bits:
        lowest = bits & -bits
        yield lowest.bit_length() - 1
        bits ^= lowest


def bits_of(indices) -> int:
    bits = 0
    for index in indices:
        bits |= 1 << index
    return bits


class LabelIndex:
    """For each label key (and key=value) the set of objects carrying it, so a selector costs a few
    big-int operations instead of one match per object."""

    def __init__(self, labels_per_object: Sequence[Mapping[str, str]]) -> None:
        self.all = (1 << len(labels_per_object)) - 1
        self._with_key: dict[str, int] = {}
        self._with_value: dict[tuple[str, str], int] = {}
        for index, labels in enumerate(labels_per_object):
            bit = 1 << index
            for key, value in labels.items():
                self._with_key[key] = self._with_key.get(key, 0) | bit
                self._with_value[(key, value)] = self._with_value.get((key, value), 0) | bit

    def select(self, selector: LabelSelector) -> int:
        bits = self.all
        for requirement in selector.requirements:
            if requirement.operator in ("In", "NotIn"):
                having = 0
                for value in requirement.values:
                    having |= self._with_value.get((requirement.key, value), 0)
                bits &= having if requirement.operator == "In" else ~having
            else:
                having = self._with_key.get(requirement.key, 0)
                bits &= having if requirement.operator == "Exists" else ~having
            if not bits:
                break
        return bits & self.all
