"""Sandbox zygote: loads the graph once, then forks one confined child per piece of agent code.

Run as a script (`python -I zygote.py`), never imported by the grader: it depends only on the
standard library and networkx. Protocol on stdin/stdout, every message framed as an 8-byte
big-endian length followed by that many bytes:

  grader -> zygote  init    {"graph": node-link JSON, "limits": {...}}
  grader -> zygote  request {"code": str, "readonly": bool}
  zygote -> grader  header  {"status": "ok"|"error", "message": str, "mutated_input": bool, ...}
  zygote -> grader  payload the child's JSON result (empty on error), passed on unparsed

The child, before running the code: new process group; stdin/stdout/stderr to /dev/null; other
file descriptors closed; rlimits on CPU time, address space, processes, file size, open files and
core dumps; a new network namespace (when root: only a loopback that is down); chdir into an
empty directory it cannot write; drop to nobody (when root); no_new_privs; an audit hook that
refuses sockets, subprocesses, fork/exec/kill, ctypes, directory listing, file changes and any
open() outside the Python installation. The zygote enforces the wall-clock limit and the output
cap, and kills the child's whole process group afterwards.
"""

import builtins
import copy
import ctypes
import gc
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import sysconfig
import time
import traceback
import zlib

import networkx as nx

# modules agent code may import: loaded here because the unprivileged child cannot read the install
PRELOAD = (
    "__future__", "collections", "itertools", "functools", "heapq", "operator", "re", "statistics",
    "random", "string", "bisect", "typing", "dataclasses", "decimal", "fractions",
    "networkx.readwrite.json_graph",
)
for _name in PRELOAD:
    __import__(_name)

CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
NOBODY = 65534
BLOCKED_PREFIXES = (
    "socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "os.setuid", "os.chdir", "os.listdir", "os.scandir",
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.link", "os.symlink", "os.truncate",
    "os.chmod", "os.chown", "os.utime", "os.putenv", "os.unsetenv", "shutil.", "ctypes.",
    "pty.", "webbrowser.", "urllib.", "http.", "ftplib.", "smtplib.", "glob.", "sys.addaudithook",
    "os.startfile", "_posixsubprocess", "resource.setrlimit", "mmap.", "sqlite3.",
)
BLOCKED_IMPORTS = {"ctypes", "_ctypes", "subprocess", "socket", "_socket", "multiprocessing", "pty", "mmap"}


def read_message(stream):
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack(">Q", header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return data


def write_message(stream, data):
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def allowed_roots():
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    roots.add(os.path.dirname(nx.__path__[0]))
    return tuple(os.path.realpath(root) + os.sep for root in roots)


def make_hook(roots):
    def hook(event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC)
            )
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str) or writing or not os.path.abspath(path).startswith(roots):
                raise PermissionError(f"sandbox: opening {path!r} is not allowed (no file access)")
        elif event == "import":
            if args and str(args[0]).split(".")[0] in BLOCKED_IMPORTS:
                raise PermissionError(f"sandbox: importing {args[0]} is not allowed")
        elif event.startswith(BLOCKED_PREFIXES):
            raise PermissionError(f"sandbox: {event} is not allowed")

    return hook


def confine(limits, workdir):
    """Everything the child does to itself before running untrusted code."""
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    with open("/proc/self/statm") as statm:
        vsize = int(statm.read().split()[0]) * resource.getpagesize()
    cpu = math.ceil(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (vsize + limits["memory_mb"] * 2**20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    libc = ctypes.CDLL(None, use_errno=True)
    if os.geteuid() == 0 and limits.get("netns", True) and libc.unshare(CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
    os.chdir(workdir)
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    # processes are counted per user: the child itself is nobody's one allowed process
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"],) * 2)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def encode(value):
    if isinstance(value, nx.Graph):
        return nx.node_link_data(value, edges="edges")
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    raise TypeError(f"a {type(value).__name__} cannot be returned (use JSON values or a networkx graph)")


def describe(error, code_name):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == code_name]
    where = f" (line {frames[-1].lineno} of your code)" if frames else ""
    if isinstance(error, SyntaxError) and error.filename == code_name:
        where = f" (line {error.lineno} of your code)"
    text = f"{type(error).__name__}: {error}"
    if len(text) > 1500:
        text = text[:1500] + "..."
    return text + where


def child(write_fd, request, graph, fingerprint, limits, workdir, roots):
    status = 0
    try:
        try:
            confine(limits, workdir)
        except BaseException as error:  # noqa: BLE001 - the sandbox could not be built: not the agent's fault
            os.write(write_fd, b"I" + f"sandbox setup failed: {error!r}".encode())
            os._exit(3)
        for name in list(sys.modules):
            if name.split(".")[0] in BLOCKED_IMPORTS:
                del sys.modules[name]  # so that importing them again meets the audit hook
        sys.addaudithook(make_hook(roots))
        code_name = "<agent code>"
        try:
            compiled = compile(request["code"], code_name, "exec")
            namespace = {"__name__": "agent", "__builtins__": builtins, "nx": nx, "networkx": nx,
                         "json": json, "copy": copy, "math": math}
            exec(compiled, namespace)  # noqa: S102 - untrusted code, in this confined child only
            function = namespace.get("process_graph")
            if not callable(function):
                raise NameError("the code does not define process_graph(graph_data)")  # noqa: TRY004
            result = function(graph)
            payload = json.dumps(result, default=encode, allow_nan=False).encode()
            mutated = request.get("readonly") and graph_fingerprint(graph) != fingerprint
            os.write(write_fd, (b"M" if mutated else b"R"))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view[: 1 << 20]) :]
        except MemoryError:
            os.write(write_fd, b"E" + b"MemoryError: the code used more memory than allowed")
        except RecursionError as error:
            os.write(write_fd, b"E" + describe(error, code_name).encode())
        except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: all agent errors
            os.write(write_fd, b"E" + describe(error, code_name).encode(errors="replace"))
    except BaseException:  # noqa: BLE001 - the result pipe broke: exit with a status
        status = 4
    os._exit(status)


def graph_fingerprint(graph):
    text = repr(list(graph.nodes(data=True))) + repr(list(graph.edges(data=True)))
    return (graph.number_of_nodes(), graph.number_of_edges(), zlib.crc32(text.encode()))


def kill_group(pid):
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def run_one(request, graph, fingerprint, limits, workdir, roots):
    read_fd, write_fd = os.pipe()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        child(write_fd, request, graph, fingerprint, limits, workdir, roots)
    os.close(write_fd)
    chunks, size, problem = [], 0, None
    deadline = started + limits["wall_s"]
    cap = limits["output_bytes"] + 1
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            problem = f"wall-clock time limit of {limits['wall_s']:g} s exceeded"
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            problem = f"output larger than the limit of {limits['output_bytes']} bytes"
            break
    os.close(read_fd)
    kill_group(pid)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - started
    data = b"".join(chunks)
    header = {"status": "error", "message": problem, "mutated_input": False, "elapsed_s": elapsed}
    if problem:
        return header, b""
    tag, body = data[:1], data[1:]
    if tag in (b"R", b"M") and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        header.update(status="ok", message="", mutated_input=tag == b"M")
        return header, body
    if tag == b"E":
        header["message"] = body.decode(errors="replace")
    elif tag == b"I":
        header.update(status="infra", message=body.decode(errors="replace"))
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL) and elapsed >= limits["cpu_s"] * 0.9:
        header["message"] = f"CPU time limit of {limits['cpu_s']:g} s exceeded"
    elif os.WIFSIGNALED(status):
        header["message"] = f"the code was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        header["message"] = f"the code ended the process (exit status {code}) without returning a result"
    return header, b""


def probe_netns():
    """Whether this machine lets us create network namespaces (root without CAP_SYS_ADMIN cannot)."""
    if os.geteuid() != 0:
        return False
    pid = os.fork()
    if pid == 0:
        os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but protocol messages on the real stdout
    init = json.loads(read_message(stdin))
    limits = init["limits"]
    graph = nx.node_link_graph(init.pop("graph"), directed=True, multigraph=False, edges="edges")
    fingerprint = graph_fingerprint(graph)
    workdir = init["workdir"]  # empty, made by the grader, which also removes it
    roots = allowed_roots()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    gc.collect()
    gc.freeze()  # fewer copy-on-write pages in every child
    limits["netns"] = probe_netns()
    isolation = {"netns": limits["netns"], "nobody": os.geteuid() == 0}
    write_message(stdout, json.dumps({"status": "ready", "isolation": isolation}).encode())
    while True:
        message = read_message(stdin)
        if message is None:
            break
        header, payload = run_one(json.loads(message), graph, fingerprint, limits, workdir, roots)
        write_message(stdout, json.dumps(header).encode())
        write_message(stdout, payload)


if __name__ == "__main__":
    main()
