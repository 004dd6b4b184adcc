"""Packs the benchmark suites and their data into the package; everything else about the build is in pyproject.toml.

A checkout keeps suites/ and fixtures/ at its top level; a wheel carries them as pytest_netarena/suites and
pytest_netarena/fixtures (see pytest_netarena/core/resources.py), so an installed package runs the benchmark on its own.
"""

from pathlib import Path

from setuptools import find_packages, setup

MAPPED = {"pytest_netarena.suites": "suites", "pytest_netarena.fixtures": "fixtures"}


def packages_under(package: str, folder: str) -> list[str]:
    """The package of a folder and of every folder below it named like a Python package (their modules ship)."""
    below = (path.relative_to(folder).parts for path in sorted(Path(folder).rglob("*")) if path.is_dir())
    named = [parts for parts in below if all(part.isidentifier() for part in parts)]
    return [package] + [".".join((package, *parts)) for parts in named]


setup(
    packages=[*find_packages(include=["pytest_netarena", "pytest_netarena.*"]),
              *packages_under("pytest_netarena.suites", "suites"), "pytest_netarena.fixtures"],
    package_dir=MAPPED,
    # data of any kind under fixtures/ (one package, recursive globs); data files beside the suites' modules
    package_data={"pytest_netarena.fixtures": ["**/*"], "pytest_netarena.suites": ["**/*.yaml", "**/*.json", "**/*.txt"]},
    exclude_package_data={"": ["__pycache__/*", "*.pyc"]},
)
