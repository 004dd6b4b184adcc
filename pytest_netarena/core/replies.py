"""Finding the parts of a model's reply the way a person would: code fences, inline code, labelled lines, objects.

Apps decide what an action is (a shell command, a JSON object, a Python program); this module only
cuts a reply into candidate pieces, in reply order, and never raises on any text.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

#: an opening fence: three or more backticks or tildes, then an optional info string (language tag)
_OPEN = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_INLINE = re.compile(r"(?<!`)(`{1,2})(?!`)(?P<code>[^\n]+?)(?<!`)\1(?!`)")
#: a "$ " shell prompt at the start of a line
PROMPT = re.compile(r"^[ \t]*\$[ \t]+")
_LABEL = re.compile(r"^[ \t>*_]*(?P<label>[A-Za-z][A-Za-z ]{0,20}?)[ \t]*[*_]*:[*_]*[ \t]*(?P<rest>.*)$")


@dataclass(frozen=True)
class Block:
    """A fenced block of a reply."""

    text: str  #: the content between the fences, newlines normalised, no trailing newline
    language: str  #: the info string's first word, lower case ("" when there is none)
    start: int  #: where the block starts in the normalised reply (blocks come in reply order)
    closed: bool = True  #: False when the reply ended inside the block (a cut-off reply)


def normalise(reply: str) -> str:
    """CRLF and CR line endings to LF, a leading byte-order mark dropped, NBSP to space."""
    return reply.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")


def fenced_blocks(reply: str) -> list[Block]:
    """Every fenced block (``` or ~~~, any language tag), in order; an unclosed last fence runs to the end."""
    text = normalise(reply)
    lines = text.split("\n")
    blocks: list[Block] = []
    offset = 0
    index = 0
    positions = []
    for line in lines:
        positions.append(offset)
        offset += len(line) + 1
    while index < len(lines):
        opening = _OPEN.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening.group("fence")
        info = opening.group("info").strip()
        body: list[str] = []
        closed = False
        cursor = index + 1
        while cursor < len(lines):
            stripped = lines[cursor].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                closed = True
                break
            body.append(lines[cursor])
            cursor += 1
        language = info.split()[0].lower() if info else ""
        blocks.append(Block("\n".join(body).strip("\n"), language, positions[index], closed))
        index = cursor + 1
    return blocks


def outside_fences(reply: str) -> str:
    """The reply's prose: everything not inside a fenced block."""
    text = normalise(reply)
    kept, inside, fence = [], False, ""
    for line in text.split("\n"):
        opening = _OPEN.match(line)
        if not inside and opening is not None:
            inside, fence = True, opening.group("fence")
            continue
        if inside:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                inside = False
            continue
        kept.append(line)
    return "\n".join(kept)


def inline_code(reply: str) -> list[str]:
    """Inline `code` spans of the prose (single or double backticks), in order."""
    return [match.group("code").strip() for match in _INLINE.finditer(outside_fences(reply)) if match.group("code").strip()]


def labelled(reply: str, labels: tuple[str, ...]) -> list[str]:
    """What follows a label such as "Action:" or "Command:" on its line (markdown emphasis tolerated)."""
    wanted = {label.lower() for label in labels}
    found = []
    for line in outside_fences(reply).split("\n"):
        match = _LABEL.match(line)
        if match and match.group("label").strip().lower() in wanted and match.group("rest").strip():
            found.append(match.group("rest").strip())
    return found


def objects(reply: str, python_style: bool = True) -> list[tuple[int, dict[str, Any]]]:
    """Every top-level {...} object in the reply that parses as JSON (or, with python_style, as a Python
    dict literal with single quotes), with its offset; nested objects are not listed twice."""
    text = normalise(reply)
    decoder = json.JSONDecoder()
    found: list[tuple[int, dict[str, Any]]] = []
    position = text.find("{")
    while position != -1:
        value, end = _object_at(text, position, decoder, python_style)
        if isinstance(value, dict):
            found.append((position, value))
            position = text.find("{", end)
        else:
            position = text.find("{", position + 1)
    return found


def _object_at(text: str, position: int, decoder: json.JSONDecoder, python_style: bool) -> tuple[Any, int]:
    try:
        return decoder.raw_decode(text, position)
    except (json.JSONDecodeError, RecursionError):
        pass
    if not python_style:
        return None, position
    end = _balanced_end(text, position)
    if end is None:
        return None, position
    try:
        value = ast.literal_eval(text[position:end])
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None, position
    return value, end


def _balanced_end(text: str, start: int, limit: int = 100_000) -> int | None:
    """The end of the {...} starting at start, skipping quoted strings; None when it never closes."""
    depth, quote, escaped = 0, "", False
    for index in range(start, min(len(text), start + limit)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def strip_prompt(line: str) -> str:
    """A shell line without a leading "$ " prompt marker ("#" lines stay: in a shell they are comments)."""
    return PROMPT.sub("", line, count=1)


#: what no action may hold: control characters but tab, newline, carriage return and form feed, and surrogates
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def unprintable(action: str) -> str | None:
    """Why a decoded action (a command, a program) cannot be run as text, or None. A JSON string may
    spell a NUL or a lone surrogate with escapes ("\\u0000") that the raw reply never held."""
    found = _UNPRINTABLE.search(action)
    if found is None:
        return None
    char, where = found.group(), found.start() + 1
    if "\ud800" <= char <= "\udfff":
        return f"it holds an unpaired surrogate (U+{ord(char):04X}) at character {where}; send plain UTF-8 text"
    name = "a NUL character" if char == "\0" else "a control character"
    return f"it holds {name} (U+{ord(char):04X}) at character {where}; send printable text"
