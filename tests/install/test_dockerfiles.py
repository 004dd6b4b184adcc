"""The green and purple Dockerfiles, replayed without a Docker engine: their COPY and pip steps in a fresh
virtualenv, then their entry point with the arguments AgentBeats passes (--host, --port, --card-url)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pytest_netarena.testing.openai_server import OpenAIStubServer

ROOT = Path(__file__).resolve().parents[2]


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, argument) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def replay(dockerfile: Path, workdir: Path, venv: Path) -> tuple[list[str], dict[str, str]]:
    """Run the image's COPY and pip steps into venv; return (entry point + CMD argv, environment)."""
    env: dict[str, str] = {}
    entry: list[str] = []
    for name, argument in instructions(dockerfile):
        if name == "ARG" and "=" in argument:
            key, value = argument.split("=", 1)
            env[key] = value
        elif name == "ENV":
            for key, value in (pair.split("=", 1) for pair in shlex.split(argument)):
                env[key] = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], value)
        elif name == "COPY":
            *sources, _ = argument.split()
            for source in sources:
                target = workdir / Path(source).name
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy2(ROOT / source, target)
        elif name == "RUN" and "pip install" in argument:
            for step in argument.split("&&"):
                words = shlex.split(step)
                assert words[:2] == ["pip", "install"], step
                if "-r" in words:  # the lock: this machine's venv already holds exactly it
                    assert words[words.index("-r") + 1] == "requirements.lock" and "--require-hashes" in words
                    continue
                packages = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
                # dependencies come from this machine (the venv sees them); the project itself installs fresh
                done = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                                       "install", "--no-deps", "-q", "--disable-pip-version-check", *packages],
                                      cwd=workdir, capture_output=True, text=True, timeout=300, check=False)
                assert done.returncode == 0, done.stderr[-2000:]
        elif name == "ENTRYPOINT":
            entry = json.loads(argument)
        elif name == "CMD":
            assert json.loads(argument)[:2] == ["--host", "0.0.0.0"]  # listens beyond the container
    return entry, env


@pytest.mark.parametrize("image, role", [("green", "NetArena K8s Evaluation Agent"), ("purple", "openai:gpt-4o")])
def test_the_image_installs_and_serves_with_agentbeats_arguments(image, role, make_venv, tmp_path):
    with contextlib.ExitStack() as stack:
        _serve_the_image(stack, image, role, make_venv, tmp_path)


def _serve_the_image(stack, image, role, make_venv, tmp_path):
    venv = make_venv()
    workdir = tmp_path / "opt"
    workdir.mkdir()
    entry, image_env = replay(ROOT / "docker" / f"{image}.Dockerfile", workdir, venv)
    card_url = f"http://{image}.agentbeats.example:9009/"
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env = {**base, **image_env, "PATH": f"{venv / 'bin'}{os.pathsep}{base['PATH']}", "OPENAI_API_KEY": "unused"}
    # serve-purple checks its model once at start (one real request): a stub provider of the test's own answers it
    provider = stack.enter_context(OpenAIStubServer(["unused"]))
    model = ["--llm-api-base", provider.url + "/v1"] if image == "purple" else []
    process = subprocess.Popen([*entry, "--host", "127.0.0.1", "--port", "0", "--card-url", card_url, *model],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert " listening on http://127.0.0.1:" in line, process.stderr.read() if process.poll() is not None else line
        card = httpx.get(line.split()[-1] + ".well-known/agent-card.json", timeout=10).json()
    finally:
        process.terminate()
        process.wait(10)
    assert card["name"] == role
    assert card_url in json.dumps(card)  # the card advertises the URL AgentBeats gave, not the bound one
    installed = subprocess.run([str(venv / "bin" / "python"), "-c", "import pytest_netarena; print(pytest_netarena.__file__)"],
                               capture_output=True, text=True, env=base, cwd=tmp_path, check=True)
    assert str(venv) in installed.stdout  # the image's own install, not this checkout
