"""User files are hostile input too: a corpus, a run folder or a recording that is nested too deep,
not UTF-8 or a link out of its folder ends with a one-line error (exit 2 or 4), never a traceback;
a corrupt recording is an infrastructure error, never the model's."""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

import pytest

from pytest_netarena.cli import main

DEEP = "[" * 100_000 + "]" * 100_000
NOT_UTF8 = b'{"query": {"id": "toy-L1-set-0000", "app": "toy"}, "note": "\xff\xfe\xc3"}\n'


def episode(secret: str = "") -> dict:
    return {"query": {"id": "toy-L1-set-0000", "app": "toy", "level": 1, "category": "set", "seed": 1},
            "agent": "a", "trial": 0, "outcome": "resolved", "correct": True, "safe": True, "metrics": {},
            "steps": [{"index": 1, "reply": f"set 1 {secret}", "action": "set 1", "observation": "ok", "output": "ok",
                       "refused": False, "violations": []}], "first_observation": "make it 1"}


def run_folder(path: Path, run: bytes, episodes: bytes) -> Path:
    path.mkdir(parents=True)
    (path / "run.json").write_bytes(run)
    (path / "episodes.jsonl").write_bytes(episodes)
    return path


@pytest.mark.parametrize("content", [DEEP.encode(), NOT_UTF8], ids=["deep", "not-utf8"])
def test_a_hostile_corpus_is_a_one_line_usage_error(toy: pytest.Pytester, content: bytes) -> None:
    corpus = toy.path / "corpus.jsonl"
    corpus.write_bytes(content)
    result = toy.runpytest("--agent=builtin:oracle", f"--corpus={corpus}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and "--corpus" in errors[0], errors
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_hostile_run_folders_are_one_line_errors_for_export_and_merge(tmp_path: Path, capsys) -> None:
    good_run = json.dumps({"run_id": "r", "seed": 1, "shard": "1/1"}).encode()
    good_episodes = (json.dumps(episode()) + "\n").encode()
    secret = f"CANARY-{secrets.token_hex(8)}"
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps(episode(secret)) + "\n")
    linked = run_folder(tmp_path / "linked", good_run, b"")
    (linked / "episodes.jsonl").unlink()
    (linked / "episodes.jsonl").symlink_to(outside)
    folders = {
        "deep episodes": run_folder(tmp_path / "deep", good_run, DEEP.encode() + b"\n"),
        "non-UTF-8 episodes": run_folder(tmp_path / "bytes", good_run, NOT_UTF8),
        "non-UTF-8 run.json": run_folder(tmp_path / "run", b'{"seed": 1, "shard": "1/1", "x": "\xff"}', good_episodes),
        "episodes linked out of the folder": linked,
    }
    for why, folder in folders.items():
        out = tmp_path / f"sft-{folder.name}"
        code = main(["export", "sft", str(folder), "--format", "openai", "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2, (why, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (why, err)
        assert not any(secret in path.read_text() for path in out.rglob("*") if path.is_file()), why
        merged = tmp_path / f"merged-{folder.name}"
        code = main(["report", "merge", str(folder), "--out", str(merged), "--no-plots"])
        err = capsys.readouterr().err
        assert code == 2, (why, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (why, err)
        assert not any(secret in path.read_text() for path in merged.rglob("*") if path.is_file()), why


def toy_model(request: dict) -> str:
    target = re.search(r"make it (\d+)", request["messages"][-1]["content"])
    return f"set {target.group(1)}" if target else "set 1"


@pytest.mark.parametrize("corruption", [NOT_UTF8, b'{"reply": "set 1", "usage": {"tokens_in": 1'],
                         ids=["not-utf8", "cut-off"])
def test_a_corrupt_recording_is_an_infra_error_not_the_models(toy: pytest.Pytester, monkeypatch,
                                                              corruption: bytes) -> None:
    from pytest_netarena.testing.openai_server import OpenAIStubServer

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with OpenAIStubServer(toy_model) as server:
        recorded = toy.runpytest_subprocess("--agent=openai:gpt-4o", f"--llm-api-base={server.url}/v1",
                                            "--llm-record=recording", "--seed=8", "--queries=1", "--reports-dir=first")
    recorded.assert_outcomes(passed=2)
    recordings = list((toy.path / "recording").glob("*.json"))
    assert len(recordings) == 2
    for path in recordings:
        path.write_bytes(corruption)
    replayed = toy.runpytest_subprocess("--agent=openai:gpt-4o", "--llm-api-base=http://127.0.0.1:9/v1",
                                        "--llm-replay=recording", "--seed=8", "--queries=1", "--reports-dir=second")
    replayed.assert_outcomes(errors=2)  # infrastructure errors; the old reader failed both as agent errors
    (episodes,) = (toy.path / "second").glob("*/episodes.jsonl")
    outcomes = [json.loads(line)["outcome"] for line in episodes.read_text().splitlines()]
    assert outcomes == ["infra_error", "infra_error"]


def test_oversized_files_fifos_and_devices_are_refused_unread(tmp_path: Path, capsys) -> None:
    from pytest_netarena.core import safe_read

    big = tmp_path / "big.json"
    big.write_bytes(b'"' + b"x" * (2 << 20) + b'"')
    with pytest.raises(safe_read.UsageError, match="larger than"):
        safe_read.read_json(big, limit=1 << 20)  # a 2 MiB file under a 1 MiB cap
    for path in (Path("/dev/zero"),):
        with pytest.raises(safe_read.UsageError, match="not a regular file"):
            safe_read.read_text(path)
    run = run_folder(tmp_path / "fifo", json.dumps({"run_id": "r", "seed": 1}).encode(), b"")
    (run / "episodes.jsonl").unlink()
    os.mkfifo(run / "episodes.jsonl")  # nobody writes it: a reader that opened it plainly would wait forever
    assert main(["export", "sft", str(run), "--format", "openai", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
