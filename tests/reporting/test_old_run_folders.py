"""Run folders written before the prompt style was renamed (episodes.jsonl lines and run.json's options say
"strategy") still rebuild, merge, compare and export as the same folders written today."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pytest_netarena.cli import main
from pytest_netarena.core.types import EpisodeResult


def lines_of(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def write_lines(run: Path, episodes: list[dict]) -> None:
    (run / "episodes.jsonl").write_text("".join(json.dumps(episode) + "\n" for episode in episodes))


def in_style(make_run, run: Path, style: str) -> Path:
    """A run folder of real toy episodes played in `style`, as today's plugin writes it."""
    make_run(run, agents=("oracle", "half"), trials=1, queries=2)
    edit_run_info(run, lambda info: info["options"].update(prompt_style=style))
    write_lines(run, [{**episode, "prompt_style": style} for episode in lines_of(run)])
    return run


def edit_run_info(run: Path, change) -> None:
    info = json.loads((run / "run.json").read_text())
    change(info)
    (run / "run.json").write_text(json.dumps(info))


def old_line(episode: dict) -> dict:
    """An episodes.jsonl line as the plugin wrote it before the rename."""
    line = {key: value for key, value in episode.items() if key != "prompt_style"}
    return {**line, "strategy": episode["prompt_style"]}


def as_written_before(run: Path, to: Path) -> Path:
    """A copy of the folder as the plugin wrote it before the rename: "strategy" wherever "prompt_style" is now."""
    shutil.copytree(run, to)
    edit_run_info(to, lambda info: info["options"].update(strategy=info["options"].pop("prompt_style")))
    write_lines(to, [old_line(episode) for episode in lines_of(to)])
    assert "prompt_style" not in (to / "run.json").read_text() + (to / "episodes.jsonl").read_text()
    return to


def test_an_old_folder_rebuilds_as_the_same_folder_written_today(make_run, tmp_path: Path, capsys) -> None:
    new = in_style(make_run, tmp_path / "new", "cot")
    old = as_written_before(new, tmp_path / "old")
    for run in (new, old):
        assert main(["report", str(run), "--no-plots"]) == 0, capsys.readouterr().err
    assert json.loads((old / "summary.json").read_text()) == json.loads((new / "summary.json").read_text())
    page = (old / "report.html").read_text()
    assert "prompt style: cot" in page and "option prompt_style" in page and "strategy" not in page
    assert page == (new / "report.html").read_text()
    results = [EpisodeResult.from_dict(line) for line in lines_of(old)]
    assert results == [EpisodeResult.from_dict(line) for line in lines_of(new)]
    assert {result.prompt_style for result in results} == {"cot"}


def test_an_old_shard_merges_with_a_new_one_and_compares_with_it(make_run, tmp_path: Path, capsys) -> None:
    """A run whose first shard ran before the rename and whose second ran after: one run, merged in today's keys."""
    whole = in_style(make_run, tmp_path / "whole", "react")
    episodes = lines_of(whole)
    first = as_written_before(whole, tmp_path / "one")
    second = Path(shutil.copytree(whole, tmp_path / "two"))
    for shard, run in (("1/2", first), ("2/2", second)):
        edit_run_info(run, lambda info: info.update(shard=shard))
    write_lines(first, [old_line(episode) for episode in episodes[::2]])
    write_lines(second, episodes[1::2])
    merged = tmp_path / "merged"
    assert main(["report", "merge", str(first), str(second), "--out", str(merged), "--no-plots"]) == 0, \
        capsys.readouterr().err
    info = json.loads((merged / "run.json").read_text())
    assert info["options"]["prompt_style"] == "react" and "strategy" not in info["options"]
    assert sorted(json.dumps(e, sort_keys=True) for e in lines_of(merged)) == \
        sorted(json.dumps(e, sort_keys=True) for e in lines_of(whole))
    capsys.readouterr()
    assert main(["report", "compare", str(first), str(whole)]) == main(["report", "compare", str(second), str(whole)]) == 0
    assert "different" not in capsys.readouterr().out


def test_an_old_folder_gives_the_exports_the_prompt_style_its_episodes_had(make_run, tmp_path: Path) -> None:
    """The exports rebuild each episode's system prompt from its prompt style, read as `report` reads the folder."""
    from pytest_netarena.reporting.rebuild import load_episodes, read_run
    from pytest_netarena.training.export import prompt_style_of

    old = as_written_before(in_style(make_run, tmp_path / "new", "cot"), tmp_path / "old")
    run = read_run(old)
    assert {prompt_style_of(episode, run) for episode in load_episodes(old)} == {"cot"}  # not defaulted to zero-shot
    assert prompt_style_of({}, run) == "cot"  # an episode that names none: its run's
