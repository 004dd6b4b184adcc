"""The fenced blocks of the project's Markdown pages that a reader would run in a shell, with the marker before each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SHELL_TAGS = frozenset({"bash", "sh", "shell", "console", "zsh"})
#: an untagged block is a shell block when its first command starts with one of these
COMMANDS = frozenset({"pytest", "python", "python3", "netarena", "pip", "pip3", "git", "kind", "kubectl", "docker",
                      "sudo", "cd", "curl", "apt-get", "uv", "export", "helm", "scripts/bootstrap", "scripts/lock"})
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>[\w ]+?)\s*:\s*(?P<text>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class DocBlock:
    """One fenced block: where it is, its tag, its text, and the HTML comment on the line before it."""

    page: Path
    line: int  #: 1-based line of the opening fence
    tag: str
    text: str
    marker: tuple[str, str] | None  #: ("not run here", reason), ("recipe", name), ...

    @property
    def id(self) -> str:
        words = re.sub(r"[^\w.:=/-]+", " ", self.text.strip().splitlines()[0] if self.text.strip() else "").split()
        return f"{self.page.name}:{self.line}:{'-'.join(words[:3])}"

    @property
    def is_workflow(self) -> bool:
        """A GitHub Actions workflow: its `run:` steps are shell."""
        return self.tag in ("yaml", "yml") and re.search(r"^jobs:", self.text, re.M) is not None \
            and "steps:" in self.text

    @property
    def is_shell(self) -> bool:
        if self.tag in SHELL_TAGS:
            return True
        if self.tag:
            return False
        for line in self.text.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                word = line.split()[0]
                return word in COMMANDS or word.startswith(("./", ".venv/"))
        return False


def fenced_blocks(page: Path) -> list[DocBlock]:
    """Every fenced block of a CommonMark page (a fence closes with the same character, at least as long)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = next((j for j in range(index + 1, len(lines)) if closing.match(lines[j])), len(lines))
        body = [line[min(indent, len(line) - len(line.lstrip(" "))):] for line in lines[index + 1:end]]
        previous = lines[index - 1] if index else ""
        marker = _MARKER.match(previous)
        blocks.append(DocBlock(page, index + 1, opening["info"].strip().split(" ")[0].lower(), "\n".join(body) + "\n",
                            (marker["kind"].strip(), marker["text"]) if marker else None))
        index = end + 1
    return blocks


def runnable_blocks(pages: list[Path]) -> list[DocBlock]:
    """The blocks a reader would run in a shell: shell-tagged or command-led blocks and workflows."""
    return [block for page in pages for block in fenced_blocks(page) if block.is_shell or block.is_workflow]
