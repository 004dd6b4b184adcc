"""Where the benchmark suites and their data are: inside the installed package (a wheel) or atop a checkout."""

from __future__ import annotations

from pathlib import Path

#: the folder of the imported pytest_netarena package
PACKAGE = Path(__file__).resolve().parent.parent


def located(name: str) -> Path:
    """`suites` or `fixtures`: the package's own copy (a wheel carries one), else the checkout's."""
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


def fixtures(*parts: str) -> Path:
    """A data folder, e.g. fixtures("k8s") (the checkout's fixtures/k8s, or pytest_netarena/fixtures/k8s)."""
    return located("fixtures").joinpath(*parts)


def suites(*parts: str) -> Path:
    """The benchmark suites folder, or one app's suite: suites("k8s")."""
    return located("suites").joinpath(*parts)


def inside_package(path: Path) -> bool:
    """True for a folder of the installed package itself (never a place to write reports into)."""
    return path.resolve().is_relative_to(PACKAGE)
