"""The house stands: no import circles, rooms that keep their walls, few root modules, small modules with docstrings.

Plain AST analysis of the package's source (nothing of it is imported). Every import statement counts, at module
level or in a function, under `if TYPE_CHECKING:` or in a `try:`, relative ones resolved; `from pkg import name`
imports `pkg.name` when that is a module, else `pkg`. A room is a folder directly under pytest_netarena/;
docs/design.md draws the map of the rooms and says what each may import, and these tests hold the code to it.
Each check also runs on a small package made here with its defect, so a check that could not fail would fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_netarena"

MAX_ROOT_MODULES = 5
MAX_LINES = 500
#: every app's common rooms (docs/design.md, "Every app has the same rooms")
APP_LAYOUT = ("__init__.py", "app.py", "environment.py", "prompt.py", "replies.py", "agents/__init__.py",
              "netarena/__init__.py", "netarena/app.py", "netarena/rules.py", "netarena/grade.py",
              "netarena/environment.py", "netarena/prompt.py")
#: a line of the map: `├── run/   what it does   → core agents reporting.summary` (or `→ nothing`)
MAP_LINE = re.compile(r"^[├└]── (?P<name>\w+)(?:/|\.py)\s.*→ (?P<imports>[\w. ]+?)\s*$")


@dataclass(frozen=True)
class Module:
    name: str  #: dotted, e.g. pytest_netarena.apps.k8s.app
    path: Path
    is_package: bool  #: an __init__.py

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@cache
def modules(package: Path) -> dict[str, Module]:
    """Every module under the package folder, by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        found[name] = Module(name, path, is_package)
    return found


@cache
def tree(module: Module) -> ast.Module:
    return ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))


def absolute(module: Module, level: int, name: str | None) -> str:
    """The dotted name an import statement names (`from ..core import x` in apps.k8s.app -> pytest_netarena.core)."""
    if level == 0:
        return name or ""
    base = module.package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports(module: Module, known: dict[str, Module]) -> set[str]:
    """The modules of the package that this module imports, anywhere in it."""
    named: set[str] = set()
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(module, node.level, node.module)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                named.add(submodule if submodule in known else source)
    return {name for name in named if name in known and name != module.name}


@cache
def import_graph(package: Path) -> dict[str, set[str]]:
    known = modules(package)
    return {name: imports(module, known) for name, module in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest circle through each strongly connected group of modules, as the modules it goes through."""
    import networkx as nx

    digraph = nx.DiGraph((importer, imported) for importer, targets in graph.items() for imported in targets)
    found = []
    for group in nx.strongly_connected_components(digraph):
        if len(group) < 2:
            continue
        inside = digraph.subgraph(group)
        # the shortest way back to each module: its shortest path to a module that imports it, then the edge back
        back = [nx.shortest_path(inside, start, end) + [start] for start in sorted(group)
                for end in sorted(inside.predecessors(start))]
        found.append(min(back, key=lambda circle: (len(circle), circle)))
    return sorted(found)


def room(name: str) -> str:
    """The room of a module: the folder or root module under the package (`pytest_netarena.apps.k8s.app` -> `apps`);
    `__init__` for the package's own __init__.py."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def app_of(name: str) -> str | None:
    """`k8s` for `pytest_netarena.apps.k8s.x`; None outside an app (the registry's modules `pytest_netarena.apps`
    and `pytest_netarena.apps.options` included: an app is a package)."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] != "apps" or (len(parts) == 3 and _is_module(parts)):
        return None
    return parts[2]


def _is_module(parts: list[str]) -> bool:
    """`pytest_netarena.apps.options`: a module file of the apps room, beside the app packages."""
    return (PACKAGE.joinpath(*parts[1:]).with_suffix(".py")).is_file()


# ---- the checks: each returns what is wrong (nothing when the house stands) -------------------------------------


def circles(package: Path) -> list[str]:
    return [" -> ".join(circle) for circle in cycles(import_graph(package))]


def root_modules(package: Path) -> list[str]:
    found = sorted(path.name for path in package.glob("*.py"))
    return [f"{len(found)} modules at the root: {', '.join(found)}"] if len(found) > MAX_ROOT_MODULES else []


def long_modules(package: Path) -> list[str]:
    lengths = {module.path: len(module.path.read_text(encoding="utf-8").splitlines())
               for module in modules(package).values()}
    return [f"{path.relative_to(package.parent)}: {lines} lines" for path, lines in sorted(lengths.items())
            if lines > MAX_LINES]


def modules_without_a_docstring(package: Path) -> list[str]:
    """Modules with no docstring, or whose docstring does not open with its role on one line of its own."""
    wrong = []
    for module in modules(package).values():
        lines = (ast.get_docstring(tree(module), clean=False) or "").split("\n")
        if not lines[0].strip():
            wrong.append(f"{module.path.relative_to(package.parent)}: no docstring saying its role")
        elif len(lines) > 1 and lines[1].strip():
            wrong.append(f"{module.path.relative_to(package.parent)}: the docstring's first line runs on")
    return wrong


def crossings(package: Path, may_not: Callable[[str, str], bool]) -> list[str]:
    """Every import `importer -> imported` for which may_not(importer, imported) holds."""
    return [f"{importer} imports {imported}" for importer, imported_names in sorted(import_graph(package).items())
            for imported in sorted(imported_names) if may_not(importer, imported)]


def core_leaves(importer: str, imported: str) -> bool:
    return room(importer) == "core" and room(imported) != "core"


def app_to_app(importer: str, imported: str) -> bool:
    importer_app, imported_app = app_of(importer), app_of(imported)
    return importer_app is not None and imported_app is not None and importer_app != imported_app


def sandbox_to_apps(importer: str, imported: str) -> bool:
    return room(importer) == "sandbox" and room(imported) == "apps"


def core_imports_pytest(package: Path) -> list[str]:
    wrong = []
    for module in modules(package).values():
        if room(module.name) != "core":
            continue
        for node in ast.walk(tree(module)):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            wrong += [f"{module.name} imports {name}" for name in names if name.split(".")[0] in ("pytest", "_pytest")]
    return wrong


def apps_out_of_layout(package: Path) -> list[str]:
    apps = sorted(folder for folder in (package / "apps").iterdir() if (folder / "__init__.py").is_file())
    wrong = [f"apps/{folder.name}/{part}: missing" for folder in apps for part in APP_LAYOUT
             if not (folder / part).is_file()]
    for folder in apps:
        entry = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
        assigned = {target.id for node in entry.body if isinstance(node, ast.Assign)
                    for target in node.targets if isinstance(target, ast.Name)}
        if "APP" not in assigned:
            wrong.append(f"apps/{folder.name}/__init__.py: no `APP = ...` entry point")
    return wrong


def room_map(design: Path) -> dict[str, set[str]]:
    """The map's rooms and what each may import, from the first block of design.md's section "The map of the rooms"."""
    text = design.read_text(encoding="utf-8")
    section = text[text.index("## 1. The map of the rooms"):]
    block = section[section.index("```"):]
    block = block[: block.index("```", 3)]
    found = {}
    for line in block.splitlines():
        matched = MAP_LINE.match(line)
        if matched:
            allowed = set(matched["imports"].split())
            found[matched["name"]] = set() if allowed == {"nothing"} else allowed
    return found


def off_the_map(package: Path) -> list[str]:
    """Rooms the map misses or names wrongly, and imports across a wall the map does not open."""
    design = package.parent / "docs" / "design.md"
    walls = room_map(design)
    rooms = {room(name) for name in modules(package)}
    wrong = [f"{name}: a room of the package missing from the map" for name in sorted(rooms - set(walls))]
    wrong += [f"{name}: on the map but not in the package" for name in sorted(set(walls) - rooms)]

    def allowed(importer: str, imported: str) -> bool:
        inside = imported.removeprefix(package.name + ".") if imported != package.name else "__init__"
        return any(inside == entry or inside.startswith(entry + ".") for entry in walls.get(room(importer), ()))

    return wrong + [f"{crossing}: not allowed by {design.name}'s map" for crossing in crossings(
        package, lambda importer, imported: room(importer) != room(imported) and not allowed(importer, imported))]


#: what an episode tells its agent (Task) and how it is played (EpisodeConfig): built by the planner alone
PLANNED = ("Task", "EpisodeConfig")


def episodes_planned_elsewhere(package: Path) -> list[str]:
    """Every call that builds a Task or an EpisodeConfig outside run/plan.py: each front door plans its episodes
    with run.plan.plan_episode, so that an episode is the same on every interface (issue 48)."""
    planner = f"{package.name}.run.plan"
    wrong = []
    for module in modules(package).values():
        if module.name == planner:
            continue
        for node in ast.walk(tree(module)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in PLANNED:
                wrong.append(f"{module.path.relative_to(package.parent)}:{node.lineno}: builds a {called}; "
                             "plan the episode with run.plan.plan_episode")
    return wrong


def class_names_defined_twice(package: Path) -> list[str]:
    """Every class name (private ones too) defined in more than one place of the package, so that a name says which
    thing it is. Different apps may each define one of the same name: they never import each other, and the common
    layout gives them the same roles (each app's OracleAgent, its replies' Action)."""
    places: dict[str, list[tuple[str, str]]] = {}
    for module in modules(package).values():
        for node in ast.walk(tree(module)):
            if isinstance(node, ast.ClassDef):
                where = f"{module.path.relative_to(package.parent)}:{node.lineno}"
                places.setdefault(node.name, []).append((where, app_of(module.name) or ""))
    wrong = []
    for name, found in sorted(places.items()):
        outside_apps = [where for where, app in found if not app]
        per_app = {app: [where for where, owner in found if owner == app] for app in {app for _, app in found if app}}
        if len(outside_apps) + min(len(per_app), 1) > 1 or any(len(wheres) > 1 for wheres in per_app.values()):
            wrong.append(f"class {name} is defined in {', '.join(where for where, _ in found)}")
    return wrong


CHECKS = {
    "circles": circles,
    "root_modules": root_modules,
    "long_modules": long_modules,
    "docstrings": modules_without_a_docstring,
    "core_leaves": lambda package: crossings(package, core_leaves),
    "core_imports_pytest": core_imports_pytest,
    "app_to_app": lambda package: crossings(package, app_to_app),
    "sandbox_to_apps": lambda package: crossings(package, sandbox_to_apps),
    "app_layout": apps_out_of_layout,
    "room_map": off_the_map,
    "planner": episodes_planned_elsewhere,
    "class_names": class_names_defined_twice,
}

# ---- the house --------------------------------------------------------------------------------------------------


def test_no_import_circles() -> None:
    found = circles(PACKAGE)
    assert not found, "import circles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(found)


def test_at_most_five_modules_at_the_package_root() -> None:
    assert not root_modules(PACKAGE), f"{root_modules(PACKAGE)}: move all but the entry points into rooms"


def test_no_module_is_over_500_lines() -> None:
    assert not long_modules(PACKAGE), "\n".join(long_modules(PACKAGE))


def test_every_module_opens_with_a_one_line_docstring_saying_its_role() -> None:
    assert not modules_without_a_docstring(PACKAGE), "\n".join(modules_without_a_docstring(PACKAGE))


def test_core_imports_nothing_from_other_rooms_and_no_pytest() -> None:
    found = crossings(PACKAGE, core_leaves) + core_imports_pytest(PACKAGE)
    assert not found, "\n".join(found)


def test_apps_do_not_import_each_other() -> None:
    assert not crossings(PACKAGE, app_to_app), "\n".join(crossings(PACKAGE, app_to_app))


def test_sandbox_imports_nothing_from_apps() -> None:
    assert not crossings(PACKAGE, sandbox_to_apps), "\n".join(crossings(PACKAGE, sandbox_to_apps))


def test_every_app_has_the_common_layout() -> None:
    assert not apps_out_of_layout(PACKAGE), "\n".join(apps_out_of_layout(PACKAGE))


def test_only_the_planner_builds_an_episodes_task_and_configuration() -> None:
    assert (PACKAGE / "run" / "plan.py").is_file()  # the planner is where the check looks for it
    assert not episodes_planned_elsewhere(PACKAGE), "\n".join(episodes_planned_elsewhere(PACKAGE))


def test_no_class_name_is_defined_twice_in_the_package() -> None:
    assert not class_names_defined_twice(PACKAGE), "\n".join(class_names_defined_twice(PACKAGE))


def test_rooms_import_only_what_the_map_in_design_md_allows() -> None:
    assert len(room_map(ROOT / "docs" / "design.md")) > 10  # the map was found and read
    assert not off_the_map(PACKAGE), "\n".join(off_the_map(PACKAGE))


# ---- each check catches its defect ----------------------------------------------------------------------------


def write(package: Path, files: dict[str, str | None]) -> Path:
    """Files relative to the package folder (`../docs/...` beside it); None removes one."""
    for relative, text in files.items():
        path = package / relative
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def sound_app(name: str) -> dict[str, str | None]:
    return {f"apps/{name}/{part}": f'"""The {name} app\'s {part}."""\n' for part in APP_LAYOUT} | {
        f"apps/{name}/__init__.py": f'"""The {name} app."""\nfrom .app import App\nAPP = App()\n'}


SOUND_MAP = """# design

## 1. The map of the rooms

```
pytest_netarena/
├── __init__.py  the package     → nothing
├── cli.py       the command     → core.episode
├── apps/        the apps        → core sandbox
├── sandbox/     the boxes       → core
└── core/        the core        → nothing
```
"""

SOUND: dict[str, str | None] = {
    "../docs/design.md": SOUND_MAP,
    "__init__.py": '"""The package."""\n',
    "cli.py": '"""The command line."""\nfrom .core import episode\n',
    "core/__init__.py": '"""The core."""\n',
    "core/episode.py": '"""The episode loop.\n\nMore words.\n"""\nfrom . import types\nfrom .types import Query\n',
    "core/types.py": '"""Values."""\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pytest_netarena.core\n',
    "sandbox/__init__.py": '"""Boxes."""\nfrom ..core.types import Query\n',
    "apps/__init__.py": '"""The registry."""\n',
    **sound_app("one"), **sound_app("two"),
    # one name in two apps: the same role in each (class_names)
    "apps/one/replies.py": '"""Replies."""\nclass Action:\n    pass\n',
    "apps/two/replies.py": '"""Replies."""\nclass Action:\n    pass\n',
}

#: check -> the defects it must catch, each as files added to (or, with None, removed from) the sound package
DEFECTS: dict[str, list[dict[str, str | None]]] = {
    "circles": [{"core/types.py": '"""Values."""\ndef later():\n    from .episode import run\n'},
                {"core/types.py": '"""Values."""\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_netarena.core import episode\n'}],
    "root_modules": [{f"extra{n}.py": f'"""Extra {n}."""\n' for n in range(4)}],
    "long_modules": [{"core/types.py": '"""Values."""\n' + "x = 1\n" * MAX_LINES}],
    "docstrings": [{"core/types.py": "x = 1\n"}, {"core/types.py": '""\n'},
                   {"core/types.py": '"""Values that run\non to a second line."""\n'}],
    "core_leaves": [{"core/types.py": '"""Values."""\ndef later():\n    from pytest_netarena.sandbox import run\n'}],
    "core_imports_pytest": [{"core/types.py": '"""Values."""\nimport pytest\n'},
                            {"core/types.py": '"""Values."""\nfrom _pytest.config import Config\n'}],
    "app_to_app": [{"apps/one/replies.py": '"""Replies."""\nfrom ..two import prompt\n'}],
    "sandbox_to_apps": [{"sandbox/box.py": '"""A box."""\nfrom pytest_netarena.apps.one.netarena import rules\n'}],
    "app_layout": [{"apps/two/netarena/prompt.py": None}, {"apps/one/__init__.py": '"""The one app."""\n'}],
    "room_map": [{"cli.py": '"""The command line."""\nfrom .sandbox import box\n'},  # a wall the map keeps shut
                 {"cli.py": '"""The command line."""\nfrom .core import types\n'},  # core.episode only
                 {"extra/__init__.py": '"""A room nobody drew."""\n'},
                 {"sandbox/__init__.py": None}],
    "class_names": [{"core/types.py": '"""Values."""\nclass Query:\n    pass\n',
                     "sandbox/box.py": '"""A box."""\nclass Query:\n    pass\n'},  # two rooms
                    {"core/types.py": '"""Values."""\nclass Query:\n    pass\n',
                     "apps/one/replies.py": '"""Replies."""\nclass Query:\n    pass\n'},  # a room and an app
                    {"apps/one/replies.py": '"""Replies."""\nclass _Reply:\n    pass\n',
                     "apps/one/prompt.py": '"""A prompt."""\ndef made():\n    class _Reply:\n        pass\n'}],
    "planner": [{"apps/one/environment.py": '"""An env."""\nfrom ...core.types import Task\nTASK = Task("one", "", "", "", 1)\n'},
                {"cli.py": '"""The command line."""\nfrom .core import episode\nepisode.EpisodeConfig(max_steps=3)\n'}],
}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_each_check_passes_a_sound_package_and_catches_its_defects(check: str, tmp_path: Path) -> None:
    sound = write(tmp_path / "sound" / "pytest_netarena", SOUND)
    assert CHECKS[check](sound) == []
    for number, defect in enumerate(DEFECTS[check]):
        broken = write(write(tmp_path / f"broken{number}" / "pytest_netarena", SOUND), defect)
        assert CHECKS[check](broken), f"{check} misses defect {number}: {defect}"


def test_a_circle_is_reported_as_the_modules_it_goes_through(tmp_path: Path) -> None:
    package = write(tmp_path / "pytest_netarena", {
        "__init__.py": "", "a.py": "from . import b\n", "b.py": "import pytest_netarena.c\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import thing\n",
        "d.py": "from . import a\n", "e.py": "from .d import a\n"})
    assert circles(package) == ["pytest_netarena.a -> pytest_netarena.b -> pytest_netarena.c -> pytest_netarena.a"]
