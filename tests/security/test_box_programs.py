"""Red team (issue 43, item 9): the read-only /usr/lib bind brought other programs into every box (Java with its REPL,
git, a second Python, npm). A box's /usr/lib now holds only the libraries its programs need: from boxes of every
kind, none of the host's other programs is there, and the box's own programs still run."""

from __future__ import annotations

import glob
import os

import pytest

from pytest_netarena.sandbox import views

from .conftest import malt_box, needs_boxes
from .kinds import pod_cluster, shell_in_box  # noqa: F401 - fixtures

#: programs (and a second Python's library) under the host's /usr/lib that no box offers; those present here count
CANDIDATES = ("/usr/lib/jvm/*/bin/java", "/usr/lib/jvm/*/bin/jshell", "/usr/lib/git-core/git", "/usr/lib/python3*/os.py",
              "/usr/lib/node_modules/npm/bin/npm-cli.js", "/usr/lib/chromium/chromium", "/usr/lib/llvm-*/bin/clang",
              "/usr/lib/gcc/*/*/cc1", "/usr/lib/x86_64-linux-gnu/perl-base/strict.pm", "/usr/lib/apt/methods/http")


def other_programs() -> list[str]:
    found = sorted(path for pattern in CANDIDATES for path in glob.glob(pattern))
    if not found:
        pytest.skip("none of the other programs this test looks for is installed here")
    return found


#: per kind: the box's own programs, which must still run (a pod's busybox applets; the rest as the app uses them)
OWN = {
    "k8s": "kubectl version --client -o json | jq -r .clientVersion.major; echo '[1,2]' | jq length; "
           "echo a b | awk '{print $2}'; ps -o pid= -p $$ >/dev/null && echo PS-OK; less --version | head -1",
    "route": "ip -V; tc -V; iptables -L -n | head -1; ip6tables -L -n | head -1; ping -c1 -W1 127.0.0.1 | tail -1",
    "cli": "echo SHELL-OK; ls / | wc -l; command -v node >/dev/null && node -e \"console.log('NODE', 1 + 1)\"",
    "pod": "busybox | head -1; wget --help 2>&1 | head -1; echo POD-OK",
}
WORKED = {"k8s": ("PS-OK", "less "), "route": ("iproute2", "Chain INPUT", "rtt min/avg/max"),
          "cli": ("SHELL-OK",), "pod": ("BusyBox", "POD-OK")}


def test_no_box_holds_another_program_and_its_own_still_run(shell_in_box, request) -> None:
    kind = request.node.callspec.params["shell_in_box"]
    others = other_programs()
    looked = " ".join(others)
    node = kind == "cli" and views.find_program("node") is not None  # a CLI that runs on node gets it
    output = shell_in_box(f"for p in {looked}; do [ -e $p ] && echo FOUND:$p; done; ls /usr/lib; echo END; {OWN[kind]}",
                          ("node",) if node else ())
    assert "END" in output, output
    assert "FOUND:" not in output, output
    for name in ("jvm", "git-core", "node_modules", "chromium"):
        assert f"\n{name}\n" not in f"\n{output}", output
    for expected in (*WORKED[kind], *(("NODE 2",) if node else ())):
        assert expected in output, output


@needs_boxes
def test_a_malt_answer_finds_no_other_program_and_its_libraries_still_load() -> None:
    others = other_programs()
    code = ("import os, numpy, networkx\n"
            f"OTHERS = {others!r}\n"
            "def process_graph(graph_data):\n"
            "    return {'found': [p for p in OTHERS if os.path.exists(p)], 'lib': sorted(os.listdir('/usr/lib')),\n"
            "            'numpy': int(numpy.arange(4).sum()), 'nodes': networkx.number_of_nodes(graph_data)}")
    box = malt_box()
    try:
        result = box.run(code)
    finally:
        box.close()
    assert result.ok, result.error
    assert result.value["found"] == [] and (result.value["numpy"], result.value["nodes"]) == (6, 200)
    assert not {"jvm", "git-core", "node_modules", "chromium"} & set(result.value["lib"]), result.value["lib"]
    assert os.path.exists(others[0])  # still there on the host: the box, not the machine, lacks it
