"""requirements.lock pins, with hashes, a version of every package pyproject.toml asks for, within its ranges."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) from requirements.lock."""
    entries: dict[str, tuple[str, list[str]]] = {}
    text = (ROOT / "requirements.lock").read_text()
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        head = block.split(" ", 1)[0].strip()
        if "==" in head:
            name, version = head.split("==")
            entries[canonicalize_name(name)] = (version, re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return entries


def extras_in_all() -> set[str]:
    """The extras `all` names (the lock is made for `all`; an extra left out of it cannot install beside it)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (everything,) = [Requirement(line) for line in extras["all"]]
    return set(everything.extras)


def requested() -> list[Requirement]:
    """The package's own requirements and those of every extra in `all` (self-references left out)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    lines = [*project["dependencies"], *(r for name in extras_in_all() for r in extras[name])]
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) != "pytest-netarena"]


def test_every_extra_but_rl_is_in_all() -> None:
    """`rl` (verifiers 0.3, which needs mcp<2) is the one extra outside `all` (docs/training.md)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) - {"all"} - extras_in_all() == {"rl"}


def test_every_requirement_is_locked_within_its_range() -> None:
    pins = locked()
    for requirement in requested():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in requirements.lock: run scripts/lock"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), \
            f"requirements.lock has {name}=={version}, outside {requirement}: run scripts/lock"


def test_every_pin_has_a_hash_and_the_build_backend_is_locked() -> None:
    pins = locked()
    assert len(pins) > 50
    assert not [name for name, (_, hashes) in pins.items() if not hashes]
    assert "setuptools" in pins  # bootstrap installs the checkout without build isolation
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    for requirement in map(Requirement, build):
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)][0])
