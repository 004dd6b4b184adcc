"""The tree names files as any checkout has them (beside or inside it), never as one developer's machine does."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
#: absolute paths of someone's machine: the project's work folder, home folders
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home/[\w.-]+|Users/[\w.-]+)/[\w./+-]*")
#: in code, /root and /home/... are the box's own folders; the project's work folder is one machine's
CODE_PATH = re.compile(r"(?<![\w.])/(?:work|Users/[\w.-]+)/[\w./+-]*")
#: files beside the code that are run as they are: CI's script, the bootstrap and lock scripts
SCRIPTS = (".ci/run", "scripts/bootstrap", "scripts/lock")


def machine_paths(files: list[Path], pattern: re.Pattern[str], root: Path = ROOT) -> list[str]:
    """`FILE:LINE: PATH` for every path of the pattern in the files."""
    return [f"{path.relative_to(root)}:{number}: {match.group(0)}"
            for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            for match in pattern.finditer(line)]


def test_docs_give_no_absolute_path_of_a_developers_machine():
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert machine_paths(pages, MACHINE_PATH) == []


def test_code_tests_and_scripts_name_no_path_of_a_developers_machine():
    """Cheats, tests, helpers and CI probe or read paths any checkout has, never one machine's folders; a NetArena
    checkout comes from --netarena-checkout or the environment, with no default."""
    files = [path for folder in ("pytest_netarena", "tests", "benchmarks", "scripts")
             for path in sorted((ROOT / folder).rglob("*.py")) if path != Path(__file__).resolve()]
    files += [ROOT / name for name in SCRIPTS if (ROOT / name).is_file()]
    assert machine_paths(files, CODE_PATH) == []


def test_a_default_that_names_a_machine_folder_is_caught(tmp_path: Path):
    """The NetArena mirror's old default: an environment variable's fallback is a path like any other."""
    machine_folder = "/" + "work/.mirror/Froot-NetSys+NetArena/repo"  # split, so this file names no machine itself
    old = tmp_path / "old.py"
    old.write_text(f'MIRROR = Path(os.environ.get("NETARENA_MIRROR", "{machine_folder}"))\n'
                   'HOME_DATA = "/Users/someone/data"\nBOX_HOME = "/root/.config"  # the box\'s own folder\n')
    assert machine_paths([old], CODE_PATH, tmp_path) == [f"old.py:1: {machine_folder}",
                                                         "old.py:2: /Users/someone/data"]


def test_netarenas_files_come_from_a_checkout_or_mirror_the_user_names(tmp_path: Path, monkeypatch) -> None:
    import subprocess

    from pytest_netarena.testing.netarena_checkout import CHECKOUT_ENV, MIRROR_ENV, malt_checkout, netarena_source

    monkeypatch.delenv(CHECKOUT_ENV, raising=False)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    source, why = netarena_source()
    assert source is None and "--netarena-checkout PATH" in why and MIRROR_ENV in why  # no default of any machine
    checkout = tmp_path / "NetArena"
    (checkout / "app-k8s").mkdir(parents=True)
    (checkout / "app-k8s" / "rules.py").write_text("RANGE = 3\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(checkout)]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run([*git, *argv], check=True, capture_output=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(tmp_path / "mirror")], check=True)
    for name, folder, bare in ((CHECKOUT_ENV, checkout, False), (MIRROR_ENV, tmp_path / "mirror", True),
                               (CHECKOUT_ENV, tmp_path / "mirror", True)):  # either form under either name
        monkeypatch.delenv(CHECKOUT_ENV, raising=False)
        monkeypatch.setenv(name, str(folder))
        source, _ = netarena_source()
        assert source is not None and source.bare is bare and source.read("app-k8s/rules.py") == b"RANGE = 3\n"
        root, why = malt_checkout(tmp_path / "copy")
        assert root is None and "app-malt/data/malt-graph.textproto.txt" in why
    monkeypatch.setenv(CHECKOUT_ENV, str(tmp_path / "nowhere"))
    assert netarena_source() == (None, f"{CHECKOUT_ENV}={tmp_path / 'nowhere'} is not a folder")


def test_the_tests_option_names_the_checkout(tmp_path: Path, pytestconfig, monkeypatch) -> None:
    """`--netarena-checkout PATH` is an option of these tests, and names the checkout through the environment (so
    subprocesses and xdist workers see it too)."""
    from pytest_netarena.testing.netarena_checkout import CHECKOUT_ENV, netarena_source

    tests_conftest = next(plugin for plugin in pytestconfig.pluginmanager.get_plugins()
                          if Path(getattr(plugin, "__file__", "") or "/").resolve() == ROOT / "tests" / "conftest.py")
    pytestconfig.getoption("--netarena-checkout")  # registered: an unknown option raises ValueError

    class Given:
        def getoption(self, name: str) -> str:
            assert name == "--netarena-checkout"
            return str(tmp_path)

    monkeypatch.setenv(CHECKOUT_ENV, "")  # recorded, so the value pytest_configure sets is undone after the test
    monkeypatch.delenv(CHECKOUT_ENV)
    tests_conftest.pytest_configure(Given())
    source, _ = netarena_source()
    assert source is not None and source.path == tmp_path.resolve() and not source.bare
