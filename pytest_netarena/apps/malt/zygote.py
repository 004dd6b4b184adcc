"""MALT zygote: holds Python, networkx, numpy and the topology in memory, and forks one child per answer.

Run as a script inside the MALT box (`python -I -S zygote.py`), never imported by the grader; it
depends only on the standard library, networkx and (when present) numpy. Its stdin is a SOCK_SEQPACKET control socket
to the grader; every message is one JSON packet:

  grader -> zygote  {"op": "init", "limits": {...}, "libraries": path}  + fd: a pipe carrying the graph
  zygote -> grader  {"status": "ready", ...}
  grader -> zygote  {"op": "run", "uid": int|null, "limits": {...}}  + fds: code pipe (read), result pipe (write)
  grader -> zygote  {"op": "kill"}    (optional, while a child runs: the grader stopped reading)
  zygote -> grader  {"exit": int|null, "signal": int|null, "timed_out": bool, "elapsed_s": float, "cpu_s": float}

The answer's code and its result travel through pipes the grader made and only the child holds:
they never enter the zygote's memory, so a later child (forked from it) cannot find an earlier
answer there. The child drops to the private uid it was given (no capabilities left), under
rlimits (address space, CPU, file size, open files, no core, one process: no fork, no threads).

The child's result is `R` + the value as plain JSON + a newline + its notes as JSON: [path, kind]
for each place where the value held a Python type JSON lacks (tuple, set, a numpy scalar or array,
a networkx graph), written there in its JSON form; --compat netarena restores them, since
NetArena compares the Python values themselves. Or `E` + the error.
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
import socket
import sys
import time
import traceback

PRELOAD = (
    "__future__", "collections", "itertools", "functools", "heapq", "operator", "re", "statistics",
    "random", "string", "bisect", "typing", "dataclasses", "decimal", "fractions",
)
PR_SET_NO_NEW_PRIVS = 38
MAX_CODE = 1 << 20
MAX_ERROR = 2000
#: notes on converted types kept per result (a ranking of thousands of tuples fits)
MAX_NOTES = 100_000
LIBC = ctypes.CDLL(None)


def read_all(fd, limit):
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[: 1 << 16]):]


def drop(uid, limits):
    """Everything the child does to itself before it reads and runs the answer's code."""
    with open("/proc/self/statm") as statm:
        vsize = int(statm.read().split()[0]) * resource.getpagesize()
    cpu = max(1, math.ceil(limits["cpu_s"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (vsize + limits["memory_mb"] * 2**20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # uid 0 -> uid: every capability is gone
    # counted per uid: the child is its uid's one process, so fork and threads fail
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.chdir("/")


JSON_SCALARS = (str, int, float, bool, type(None))


def scan(value, path, notes):
    """Note in notes, as [path, kind], each place where value holds a type JSON lacks but encode()
    (or json itself, for a tuple) converts: tuples, sets, numpy values, networkx graphs (not inside
    a graph or array, whose JSON forms are plain). `path` is a stack the scan pushes and pops."""
    kind = type(value)
    if kind in JSON_SCALARS:
        return
    if kind.__module__ == "numpy":
        note(notes, path, f"numpy.{kind.__name__}")
        return
    if isinstance(value, dict):
        items = dict.items(value)  # what json writes, whatever a subclass says
    elif isinstance(value, (list, tuple)):
        if isinstance(value, tuple):
            note(notes, path, "tuple")
        items = enumerate(list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value))
    elif isinstance(value, (set, frozenset)):
        note(notes, path, "set")
        items = enumerate(sorted(value, key=str))  # encode's order
    else:
        import networkx as nx

        if isinstance(value, nx.Graph):
            note(notes, path, f"networkx.{type(value).__name__}")
        return  # a scalar subclass (json writes its base type), or what encode() refuses
    named = isinstance(value, dict)
    for key, item in items:
        if type(item) not in JSON_SCALARS:
            path.append(json_key(key) if named else key)
            scan(item, path, notes)
            path.pop()


def encode(value):
    """json.dumps's `default`: what JSON lacks, as plain data (scan() notes each)."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    import networkx as nx

    if isinstance(value, nx.Graph):
        return nx.node_link_data(value, edges="edges")
    raise TypeError(f"a {type(value).__name__} cannot be returned (use JSON values, numpy values or a networkx graph)")


def json_key(key):
    """A dict key as JSON writes it."""
    return key if isinstance(key, str) else json.dumps(key)


def note(notes, path, kind):
    if len(notes) < MAX_NOTES:
        notes.append([list(path), kind])


def result_payload(result):
    notes = []
    scan(result, [], notes)
    return b"R" + json.dumps(result, default=encode, allow_nan=False).encode() + b"\n" + json.dumps(notes).encode()


def describe(error, code_name):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == code_name]
    where = f" (line {frames[-1].lineno} of your code)" if frames else ""
    if isinstance(error, SyntaxError) and error.filename == code_name:
        where = f" (line {error.lineno} of your code)"
    text = f"{type(error).__name__}: {error}"
    if len(text) > MAX_ERROR:
        text = text[:MAX_ERROR] + "..."
    return text + where


def child(code_fd, result_fd, uid, limits, graph):
    """Runs in the forked child; never returns."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, code_fd)
        os.closerange(code_fd + 1, result_fd)
        os.closerange(result_fd + 1, 1 << 16)
        drop(uid, limits)
        code = read_all(code_fd, MAX_CODE).decode("utf-8", "replace")
        os.close(code_fd)
    except BaseException:  # noqa: BLE001 - reported by the exit status
        os._exit(70)
    import networkx as nx

    code_name = "<agent code>"
    try:
        compiled = compile(code, code_name, "exec")
        namespace = {"__name__": "agent", "__builtins__": builtins, "nx": nx, "networkx": nx,
                     "json": json, "copy": copy, "math": math}
        exec(compiled, namespace)  # noqa: S102 - untrusted code, in this boxed child only
        function = namespace.get("process_graph")
        if not callable(function):
            defined = sorted(k for k, v in namespace.items() if callable(v) and getattr(v, "__module__", "") == "agent")
            hint = f"; it defines {', '.join(defined[:5])}" if defined else ""
            raise NameError(f"the code does not define process_graph(graph_data){hint}")
        result = function(graph)
        payload = result_payload(result)
    except MemoryError:
        payload = b"EMemoryError: the code used more memory than allowed"
    except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: all agent errors
        try:
            payload = b"E" + describe(error, code_name).encode("utf-8", "replace")
        except BaseException:  # noqa: BLE001
            payload = b"Ethe code raised an exception that could not be described"
    try:
        write_all(result_fd, payload)
    except BaseException:  # noqa: BLE001
        os._exit(71)
    os._exit(0)


def run_one(control, message, fds, graph):
    code_fd, result_fd = fds
    limits = message["limits"]
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        child(code_fd, result_fd, message.get("uid"), limits, graph)
    os.close(code_fd)
    os.close(result_fd)
    watch = os.pidfd_open(pid)
    deadline = started + limits["wall_s"]
    timed_out, killed, grader_gone = False, False, False
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([watch, control], [], [], left)
        if watch in ready:
            break
        if control in ready:
            data = control.recv(4096)
            if not data:
                grader_gone = True
                break
            if json.loads(data).get("op") == "kill":
                killed = True
                break
    if timed_out or killed or grader_gone:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status, usage = os.wait4(pid, 0)
    os.close(watch)
    if grader_gone:
        sys.exit(0)
    return {
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "elapsed_s": time.perf_counter() - started,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


def close_writable(paths):
    """Root boxes: bwrap's 0700 parents become traversable and its 01777 tmpfs mounts unwritable for
    the answers' uids (the zygote, uid 0, owns them; other uids only see them)."""
    for path in paths:
        try:
            os.chmod(path, 0o755)
        except OSError:
            pass


def main():
    control = socket.socket(fileno=0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    data, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
    init = json.loads(data)
    sys.path.insert(0, init["libraries"])
    import networkx as nx

    for name in PRELOAD:
        __import__(name)
    try:
        import numpy  # noqa: F401 - imported once here (single-threaded: OPENBLAS_NUM_THREADS=1), not per answer
    except ImportError:
        pass
    with os.fdopen(fds[0], "rb") as source:
        graph_data = json.loads(source.read())
    graph = nx.node_link_graph(graph_data, directed=True, multigraph=False, edges="edges")
    del graph_data
    close_writable(init.get("chmod", ()))
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    gc.collect()
    gc.freeze()  # fewer copy-on-write pages in every child
    control.send(json.dumps({"status": "ready", "uid": os.geteuid(), "pid": os.getpid()}).encode())
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not data:
            break
        message = json.loads(data)
        if message.get("op") != "run" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        control.send(json.dumps(run_one(control, message, fds, graph)).encode())


if __name__ == "__main__":
    main()
