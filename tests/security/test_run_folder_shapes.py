"""Run folders of the wrong shape: small, valid UTF-8 JSON whose fields have the wrong type or range. Every reader
(`netarena report`, `report compare`, `export sft`, `export atif`) ends with one line naming the file, the line and
the field (exit 2), never a traceback, and an export writes nothing (on the old code 15 of 60 reader runs ended
in a traceback)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_netarena.cli import main

#: a raw JSON number no float holds (the readers' json accepts it: it is within Python's 4,300-digit cap)
HUGE = "1" + "0" * 4000


def episode() -> dict:
    return {"query": {"id": "k8s-L1-change_port-0000", "app": "k8s", "level": 1, "category": "change_port",
                      "seed": 1},
            "agent": "builtin:oracle", "trial": 0, "outcome": "resolved", "correct": True, "safe": True,
            "metrics": {"overly_permissive": False}, "first_observation": "fix it", "agent_s": 0.5, "wall_s": 1.0,
            "tokens": 3, "usage": {"tokens_in": 1, "tokens_out": 2, "cost_usd": 0.0}, "prompt_style": "zero-shot",
            "steps": [{"index": 1, "reply": "kubectl get pods", "action": "kubectl get pods", "observation": "ok",
                       "output": "ok", "refused": False, "violations": [], "agent_s": 0.5, "exec_s": 0.1,
                       "check_s": 0.0, "usage": {"tokens_in": 1, "tokens_out": 2, "cost_usd": 0.0}}]}


RUN = {"run_id": "r", "seed": 1, "sandboxed": True, "rules": "default", "agents": ["builtin:oracle"],
       "options": {"max_steps": 10, "prompt_style": "zero-shot"}, "versions": {"pytest-netarena": "0"},
       "fingerprint": {"python": "3.11"}}


def write(folder: Path, run: str | None = None, lines: list[str] | None = None, summary: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(run if run is not None else json.dumps(RUN))
    (folder / "episodes.jsonl").write_text("\n".join(lines if lines is not None else [json.dumps(episode())]) + "\n")
    if summary is not None:
        (folder / "summary.json").write_text(summary)
    return folder


def with_field(document: dict, path: str, raw: str) -> str:
    """document as JSON with the field at path (dotted; digits index lists) set to the raw JSON text."""
    marker = "@@HOSTILE@@"
    target = document
    *parents, last = path.split(".")
    for step in parents:
        target = target[int(step)] if step.isdigit() else target[step]
    target[int(last) if last.isdigit() else last] = marker
    return json.dumps(document).replace(json.dumps(marker), raw)


#: (file, field, raw JSON); the field named in the error
EPISODE_FIELDS = [("wall_s", "null"), ("wall_s", HUGE), ("wall_s", "NaN"), ("agent_s", "-Infinity"),
                  ("steps", "[1, null]"), ("trial", '"x"'), ("agent", "5"), ("query.level", '"one"'),
                  ("outcome", '"won"'), ("tokens", "1.5"), ("usage.cost_usd", HUGE), ("metrics", '"x"'),
                  ("steps.0.usage.tokens_in", '"1"'), ("steps.0.reply", "null"), ("query", "[]"),
                  ("prompt_style", "5"), ("strategy", "[]")]  # strategy: prompt_style's old name
RUN_FIELDS = [("fingerprint", '"x"'), ("agents", "5"), ("seed", '"x"'), ("options", '"x"'),
              ("options.max_steps", '"ten"'), ("versions", "[1]"), ("rules", "3"), ("profile", "3"),
              ("options.prompt_style", "5"), ("options.strategy", "{}")]
SUMMARY_FIELDS = [("budget", '"x"'), ("budget.tokens", '"x"'), ("gates", "[1]"), ("gates.0.value", "NaN")]
SUMMARY = {"budget": {"tokens": 1, "cost_usd": 0.0, "stopped": False}, "gates": [
    {"metric": "resolved", "app": "all", "agent": "a", "threshold": 0.5, "value": 1.0, "passed": True}]}


def readers(folder: Path, good: Path, out: Path) -> dict[str, list[str]]:
    return {"report": ["report", str(folder), "--no-plots"],
            "report compare": ["report", "compare", str(good), str(folder)],
            "export sft": ["export", "sft", str(folder), "--format", "openai", "--out", str(out / "sft")],
            "export atif": ["export", "atif", str(folder), "--out", str(out / "atif")]}


def refused(capsys, argv: list[str], *words: str) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (argv, code, captured.err[-3000:])
    assert all(word in lines[0] for word in words), (words, lines[0])
    assert len(lines[0]) < 400, lines[0]


def named(field: str) -> str:
    """How an error names a dotted field: list positions in brackets (steps.0.reply is steps[0].reply)."""
    return "field " + re.sub(r"\.(\d+)", r"[\1]", field)


def cases() -> list[tuple[str, str, str]]:
    return ([("episodes.jsonl", field, raw) for field, raw in EPISODE_FIELDS]
            + [("run.json", field, raw) for field, raw in RUN_FIELDS])


@pytest.mark.parametrize("file, field, raw", cases(), ids=[f"{f}:{n}={r[:12]}" for f, n, r in cases()])
def test_every_reader_names_the_file_line_and_field_of_a_wrong_shape(tmp_path: Path, capsys, file, field, raw):
    pytest.importorskip("atif")
    good = write(tmp_path / "good")
    if file == "run.json":
        folder = write(tmp_path / "bad", run=with_field(json.loads(json.dumps(RUN)), field, raw))
        words = ["run.json", named(field)]
    else:
        lines = [json.dumps(episode()), with_field(episode(), field, raw)]
        folder = write(tmp_path / "bad", lines=lines)
        words = ["episodes.jsonl: line 2", named(field if field != "steps" else "steps.0")]
    out = tmp_path / "out"
    for name, argv in readers(folder, good, out).items():
        refused(capsys, argv, *words)
        assert not out.exists() or not any(path.is_file() for path in out.rglob("*")), name  # nothing written
    assert not (folder / "report.html").exists() and not (folder / "summary.json").exists()


@pytest.mark.parametrize("field, raw", SUMMARY_FIELDS, ids=[f"{n}={r}" for n, r in SUMMARY_FIELDS])
def test_a_summary_of_the_wrong_shape_is_named_by_report_and_merge(tmp_path: Path, capsys, field, raw):
    summary = with_field(json.loads(json.dumps(SUMMARY)), field, raw)
    folder = write(tmp_path / "bad", summary=summary)
    refused(capsys, ["report", str(folder), "--no-plots"], "summary.json", named(field))
    shard = write(tmp_path / "shard", run=json.dumps({**RUN, "shard": "1/1"}), summary=summary)
    refused(capsys, ["report", "merge", str(shard), "--out", str(tmp_path / "merged"), "--no-plots"],
            "summary.json", named(field))


def test_a_step_budget_of_5000_digits_in_the_first_observation_is_no_budget(tmp_path: Path, capsys):
    """The exports read the budget the model was told from its first observation: digits no int() takes are text."""
    pytest.importorskip("atif")
    folder = write(tmp_path / "run", lines=[with_field(episode(), "first_observation",
                                                       json.dumps("[Step 1 of " + "9" * 5000 + "; go] fix it"))])
    out = tmp_path / "out"
    for name, argv in readers(folder, folder, out).items():
        assert main(argv) == 0, (name, capsys.readouterr().err[-2000:])


def test_well_formed_folders_still_read(tmp_path: Path, capsys):
    pytest.importorskip("atif")
    good = write(tmp_path / "good", summary=json.dumps(SUMMARY))
    out = tmp_path / "out"
    for name, argv in readers(good, good, out).items():
        assert main(argv) == 0, (name, capsys.readouterr().err)
    assert (out / "sft" / "data.jsonl").is_file() and len(list((out / "atif").glob("*.json"))) == 1


def test_an_export_that_fails_part_way_writes_nothing(tmp_path: Path, capsys):
    """A later folder of the wrong shape, or a file the export cannot put in place: no file of the export appears
    and no temporary file is left (the episodes of the good folder were read first)."""
    pytest.importorskip("atif")
    good = write(tmp_path / "good")
    bad = write(tmp_path / "bad", lines=[with_field(episode(), "wall_s", "null")])
    for kind, extra in (("sft", ["--format", "openai"]), ("atif", [])):
        out = tmp_path / f"out-{kind}"
        refused(capsys, ["export", kind, str(good), str(bad), *extra, "--out", str(out)], "field wall_s")
        assert not out.exists() or not list(out.iterdir())
        out.mkdir(exist_ok=True)
        (out / "sources.jsonl").mkdir()  # in the way of the last file the export writes
        refused(capsys, ["export", kind, str(good), *extra, "--out", str(out)], "sources.jsonl", "in the way")
        assert [path.name for path in out.iterdir()] == ["sources.jsonl"], list(out.iterdir())
