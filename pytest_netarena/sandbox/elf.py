"""What an ELF file needs to run, read from its headers and never by running it: its loader, libraries and run paths."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

MAGIC = b"\x7fELF"
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 15, 29
#: bounds on what is read of one file (real files are far below them)
MAX_HEADERS = 4096
MAX_DYNAMIC = 1 << 20
MAX_STRINGS = 16 << 20


@dataclass(frozen=True)
class Needs:
    """An ELF file's needs: `machine` and `bits` say which libraries can serve it (e_machine, 32 or 64)."""

    machine: int
    bits: int
    interpreter: str | None  #: the loader (PT_INTERP) of a dynamically linked program
    needed: tuple[str, ...]  #: DT_NEEDED names, in order
    run_paths: tuple[str, ...]  #: DT_RPATH and DT_RUNPATH entries, $ORIGIN replaced by the file's folder


def is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(4) == MAGIC
    except OSError:
        return False


def read(path: str) -> Needs | None:
    """The needs of the ELF file at path; None when it is no ELF file or its headers cannot be read."""
    try:
        with open(path, "rb") as file:
            return _read(file, os.path.dirname(os.path.realpath(path)))
    except (OSError, struct.error, ValueError, UnicodeDecodeError):
        return None


def _read(file, origin: str) -> Needs | None:
    ident = file.read(16)
    if len(ident) < 16 or ident[:4] != MAGIC or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        return None
    bits = 32 if ident[4] == 1 else 64
    order = "<" if ident[5] == 1 else ">"
    header = struct.unpack(order + ("HHIIIIIHHHHHH" if bits == 32 else "HHIQQQIHHHHHH"),
                           file.read(36 if bits == 32 else 48))
    machine, phoff, phentsize, phnum = header[1], header[4], header[8], header[9]
    if phnum > MAX_HEADERS:
        return None
    layout = order + ("IIIIIIII" if bits == 32 else "IIQQQQQQ")
    segments = []
    for index in range(phnum):
        file.seek(phoff + index * phentsize)
        fields = struct.unpack(layout, file.read(struct.calcsize(layout)))
        if bits == 32:  # p_type p_offset p_vaddr p_paddr p_filesz p_memsz p_flags p_align
            segments.append((fields[0], fields[1], fields[2], fields[4]))
        else:  # p_type p_flags p_offset p_vaddr p_paddr p_filesz p_memsz p_align
            segments.append((fields[0], fields[2], fields[3], fields[5]))
    interpreter = None
    needed: list[str] = []
    run_paths: list[str] = []
    for kind, offset, _, size in segments:
        if kind == PT_INTERP and size < 4096:
            file.seek(offset)
            interpreter = file.read(size).split(b"\0", 1)[0].decode()
        elif kind == PT_DYNAMIC and size <= MAX_DYNAMIC:
            file.seek(offset)
            needed, run_paths = _dynamic(file, file.read(size), order, bits, segments)
    paths = tuple(entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                  for value in run_paths for entry in value.split(":") if entry)
    return Needs(machine, bits, interpreter, tuple(needed), paths)


def _dynamic(file, data: bytes, order: str, bits: int, segments) -> tuple[list[str], list[str]]:
    entry = order + ("iI" if bits == 32 else "qQ")
    width = struct.calcsize(entry)
    tags: list[tuple[int, int]] = []
    for start in range(0, len(data) - width + 1, width):
        tag, value = struct.unpack_from(entry, data, start)
        if tag == DT_NULL:
            break
        tags.append((tag, value))
    table = dict(tags)
    address, size = table.get(DT_STRTAB), min(table.get(DT_STRSZ, 0), MAX_STRINGS)
    offset = _file_offset(address, segments) if address is not None else None
    if offset is None or size <= 0:
        return [], []
    file.seek(offset)
    strings = file.read(size)

    def string(at: int) -> str:
        return strings[at:strings.index(b"\0", at)].decode()

    needed = [string(value) for tag, value in tags if tag == DT_NEEDED]
    run_paths = [string(value) for tag, value in tags if tag in (DT_RPATH, DT_RUNPATH)]
    return needed, run_paths


def _file_offset(address: int, segments) -> int | None:
    for kind, offset, vaddr, size in segments:
        if kind == PT_LOAD and vaddr <= address < vaddr + size:
            return address - vaddr + offset
    return None
