"""The fork server's zygote: holds Python, networkx, numpy and the graph in memory, and forks one child per answer.

Run as a script inside the box (`python -I -S zygote.py`; forkserver.py starts it), never imported
by the grader; it depends only on the standard library, networkx and (when the box holds it) numpy.
Its stdin is a SOCK_SEQPACKET control socket to the grader; every message is one JSON packet:

  grader -> zygote  {"op": "init", "libraries": path, "chmod": [path, ...], "diff": bool, "filter": hex}
                    + fd: a pipe carrying the graph
  zygote -> grader  {"status": "ready", ...}
  grader -> zygote  {"op": "run", "uid": int|null, "isolate": bool, "limits": {...}}  + fds: code pipe (read), result pipe (write)
  grader -> zygote  {"op": "kill"}    (optional, while a child runs: the grader stopped reading)
  zygote -> grader  {"exit": int|null, "signal": int|null, "timed_out": bool, "sealed": bool, "elapsed_s": float,
                     "cpu_s": float}   (sealed: the child set itself up before reading the code)

The answer's code and its result travel through pipes the grader made and only the child holds:
they never enter the zygote's memory, so a later child (forked from it) cannot find an earlier
answer there. The child drops to the private uid it was given (no capabilities left), under
rlimits (address space, CPU, file size, open files, no core, one process: no fork, no threads).

Each child then enters an IPC namespace of its own (in a user namespace of its own, whose
capabilities it drops at once): no SysV object or message queue outlives the answer or reaches
another one. Then it loads the seccomp program the grader sent at init (sandbox/seccomp.py): no more
unshare (the box's own filter allows only that one user and IPC namespace, and no mount, setns or
namespace flag of clone at all), and shmget, msgget, semget and mq_open fail (EPERM), so no memory
escapes the address-space limit through shared segments.

The child's result is `R` + the value as plain JSON + a newline + its notes as JSON: [path, kind]
for each place where the value held a Python type JSON lacks (tuple, set, a numpy scalar or array,
a networkx graph), written there in its JSON form; --compat netarena restores them, since
NetArena compares the Python values themselves. Or `E` + the error. When the grader asks for diffs
(init "diff"), a DiGraph in the value is written as its changes to the input graph (graph_diff), read
against the grader's own copy of that graph (sandbox/graph_diff.py).
"""

import bisect
import builtins
import copy
import ctypes
import gc
import json
import marshal
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
PR_SET_NO_NEW_PRIVS, PR_GET_DUMPABLE, PR_SET_DUMPABLE = 38, 3, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
CLONE_NEWIPC, CLONE_NEWUSER = 0x08000000, 0x10000000
#: the seccomp program each answer's process loads before it reads the code (set at init; empty: none)
SEALING = {"filter": b""}
MAX_CODE = 1 << 20
MAX_ERROR = 2000
#: notes on converted types kept per result (a ranking of thousands of tuples fits)
MAX_NOTES = 100_000
LIBC = ctypes.CDLL(None, use_errno=True)


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


def drop(uid, limits, isolate):
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
    if isolate:
        own_ipc_namespace()
    # counted per uid: the child is its uid's one process, so fork and threads fail
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"], limits["nproc"]))
    LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if isolate and SEALING["filter"]:
        load_filter(SEALING["filter"])
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
class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def own_ipc_namespace():
    """A fresh IPC namespace, dying with the child; the user namespace it needs keeps no capability."""
    uid, gid = os.getuid(), os.getgid()
    if LIBC.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    dumpable = LIBC.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    LIBC.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a uid change made /proc/self root's: ours while we write
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as mapping:  # the same ids inside as outside
            mapping.write(text)
    LIBC.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)
    empty = (CapData * 2)()
    if LIBC.capset(ctypes.byref(CapHeader(0x20080522, 0)), empty) != 0:  # _LINUX_CAPABILITY_VERSION_3
        raise OSError(ctypes.get_errno(), "capset")


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def load_filter(program):
    """Seccomp: load a compiled filter (struct sock_filter entries, as sandbox/seccomp.py writes them)."""
    count = len(program) // ctypes.sizeof(SockFilter)
    filters = (SockFilter * count).from_buffer_copy(program[:count * ctypes.sizeof(SockFilter)])
    if LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(SockFprog(count, filters)), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


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


#: the key of a graph sent as its changes against the input graph (graph_diff.py reads it)
DIFF = "graph_diff"
#: nodes per signature of a run of nodes: a run unchanged since the start is told by one comparison
RUN = 64


class Base:
    """The input graph as the zygote built it, taken before any answer runs: its node order and a strict
    signature (marshal: exact types, unlike ==) of each node's attributes and of each node's out-edges, and of
    each run of RUN nodes; its JSON's bytes and items (a diff's graph is at most that much larger than the diff)."""

    def __init__(self, graph, graph_json=b""):
        self.size, self.items = len(graph_json), items_in(graph_json)
        self.order = list(graph._node)
        self.position = {node: index for index, node in enumerate(self.order)}
        attrs, out = list(graph._node.values()), list(map(graph._adj.__getitem__, self.order))
        self.nodes, self.out = list(map(signature, attrs)), list(map(signature, out))
        self.node_runs, self.out_runs = run_signatures(attrs), run_signatures(out)


def run_signatures(values):
    return [signature(values[start:start + RUN]) for start in range(0, len(values), RUN)]


def signature(value):
    """marshal bytes of value (version 2: no references, so equal values give equal bytes), or None where
    marshal refuses it (a numpy value, a subclass...): then it counts as changed."""
    try:
        return marshal.dumps(value, 2)
    except (ValueError, TypeError):
        return None


def changed_among(values, at, kept, signed, runs):
    """Indices below kept whose value's signature differs from the input's (at: each one's input position);
    a run of RUN input nodes all kept is compared at once."""
    changed, i = [], 0
    while i < kept:
        run = at[i] // RUN
        end = min((run + 1) * RUN, len(signed))
        j = bisect.bisect_left(at, end, i, kept)
        whole_run = at[i] == run * RUN and j - i == end - run * RUN
        if not whole_run or runs[run] is None or signature(values[i:j]) != runs[run]:
            changed += [k for k in range(i, j) if signed[at[k]] is None or signature(values[k]) != signed[at[k]]]
        i = j
    return changed


def graph_diff(graph, base):
    """A DiGraph as its changes against the input graph, in node-link terms: node-link's JSON of the graph
    is the input's, less the `removed` nodes, with the `nodes` entries replacing (same id) or following
    (new id) the input's, and the out-edges of the `out` nodes and of every new node given in `edges`.
    What is not named is the input's, byte for byte (marshal signatures); the answer's own graph is read,
    as nx.node_link_data reads it, so a value JSON refuses fails here as there."""
    nodes, adj = graph._node, graph._adj
    order = list(nodes)
    kept = len(order)
    if order != base.order:  # the longest start of the order that is the input's order, less some nodes
        last, kept = -1, 0
        for node in order:
            at = base.position.get(node)
            if at is None or at <= last:
                break
            last, kept = at, kept + 1
    whole = kept == len(base.order)  # every input node is kept, in its order: the usual case
    at = range(kept) if whole else [base.position[node] for node in order[:kept]]
    changed = changed_among(list(nodes.values()), at, kept, base.nodes, base.node_runs)
    rewired = changed_among(list(map(adj.__getitem__, order)), at, kept, base.out, base.out_runs)
    entries = [{**nodes[order[i]], "id": order[i]} for i in changed]
    entries += [{**nodes[node], "id": node} for node in order[kept:]]
    sources = [order[i] for i in rewired]
    edges = [{**data, "source": u, "target": v} for u in sources + order[kept:] for v, data in adj[u].items()]
    survivors = set(() if whole else at)
    removed = [] if whole else [node for i, node in enumerate(base.order) if i not in survivors]
    return {DIFF: 1, "graph": graph.graph, "removed": removed, "out": sources, "nodes": entries, "edges": edges}


def items_in(text):
    """What the grader counts as items (plain_json): commas and opening brackets."""
    return text.count(b",") + text.count(b"[") + text.count(b"{")


class Whole(Exception):
    """A graph its changes cannot describe (internals replaced): the value goes as whole graphs."""


def result_payload(result, base=None, limits=None):
    """`R` + the value as JSON + a newline + the notes. With a base, a DiGraph goes as its changes against it,
    unless the whole graph's JSON might pass the grader's bounds (limits) where the changes do not: then
    whole, so every bound the grader applies gives the verdict the whole graph's JSON gets."""
    notes = []
    scan(result, [], notes)
    noted = json.dumps(notes).encode()
    if base is not None and limits and "output_items" in limits and len(notes) < MAX_NOTES:
        import networkx as nx

        diffs = {}

        def default(value):
            if type(value) is nx.DiGraph:
                if id(value) not in diffs:
                    try:
                        diffs[id(value)] = graph_diff(value, base)
                    except Exception as error:  # noqa: BLE001 - node_link_data says what is wrong (or runs out)
                        raise Whole from error
                markers.append(1)
                return diffs[id(value)]
            return encode(value)

        markers = []
        try:
            text = json.dumps(result, default=default, allow_nan=False).encode()
        except Whole:
            text, markers = b"", [None]
        size = len(text) + len(markers) * (base.size + 8) + 2 + len(noted)
        if text and (not markers or (size <= limits["output_bytes"] + 1
                                     and items_in(text) + len(markers) * (base.items + 2) <= limits["output_items"])):
            return b"R" + text + b"\n" + noted
    return b"R" + json.dumps(result, default=encode, allow_nan=False).encode() + b"\n" + noted


def describe(error, code_name):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == code_name]
    where = f" (line {frames[-1].lineno} of your code)" if frames else ""
    if isinstance(error, SyntaxError) and error.filename == code_name:
        where = f" (line {error.lineno} of your code)"
    text = f"{type(error).__name__}: {error}"
    if len(text) > MAX_ERROR:
        text = text[:MAX_ERROR] + "..."
    return text + where


def child(code_fd, result_fd, sealed_fd, uid, limits, isolate, graph, base):
    """Runs in the forked child; never returns. One byte on sealed_fd says the child is sealed (its
    limits, uid and namespaces in place) before any of the answer's code is read."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        low = 3
        for kept in sorted((code_fd, result_fd, sealed_fd)):
            os.closerange(low, kept)
            low = kept + 1
        os.closerange(low, 1 << 16)
        drop(uid, limits, isolate)
        os.write(sealed_fd, b"1")
        os.close(sealed_fd)
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
        payload = result_payload(result, base, limits)
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


def run_one(control, message, fds, graph, base):
    code_fd, result_fd = fds
    limits = message["limits"]
    started = time.perf_counter()
    sealed_r, sealed_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(sealed_r)
        child(code_fd, result_fd, sealed_w, message.get("uid"), limits, message.get("isolate", True), graph, base)
    os.close(code_fd)
    os.close(result_fd)
    os.close(sealed_w)
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
    sealed = os.read(sealed_r, 1) == b"1"  # the child is gone: this never blocks
    os.close(sealed_r)
    if grader_gone:
        sys.exit(0)
    return {
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "sealed": sealed,
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
    SEALING["filter"] = bytes.fromhex(init.get("filter") or "")
    sys.path.insert(0, init["libraries"])
    import networkx as nx

    for name in PRELOAD:
        __import__(name)
    try:
        import numpy  # noqa: F401 - imported once here (single-threaded: OPENBLAS_NUM_THREADS=1), not per answer
    except ImportError:
        pass
    with os.fdopen(fds[0], "rb") as source:
        graph_json = source.read()
    graph = nx.node_link_graph(json.loads(graph_json), directed=True, multigraph=False, edges="edges")
    base = Base(graph, graph_json) if init.get("diff") else None
    del graph_json
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
        control.send(json.dumps(run_one(control, message, fds, graph, base)).encode())


if __name__ == "__main__":
    main()
