"""MALT answers cannot change the libraries the box shares: networkx's and numpy's files are read-only,
and what one answer changes in its memory is gone for the next."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.malt import runtime
from pytest_netarena.sandbox.forkserver import ChildLimits

from .conftest import needs_boxes

# every way an answer could change a library's files: append, create beside it, replace, chmod, remove
TAMPER = '''
import os
import networkx, numpy

def process_graph(graph_data):
    found = {}
    for library in (networkx, numpy):
        folder = os.path.dirname(library.__file__)
        init = library.__file__
        attempts = {
            "append": lambda: open(init, "a").write("\\nTAMPERED = True\\n"),
            "create": lambda: open(os.path.join(folder, "tampered.py"), "w").write("x = 1"),
            "replace": lambda: os.replace(init, init + ".moved"),
            "chmod": lambda: os.chmod(init, 0o777),
            "remove": lambda: os.remove(init),
            "mkdir": lambda: os.mkdir(os.path.join(folder, "tampered")),
        }
        for name, attempt in attempts.items():
            try:
                attempt()
                found[library.__name__ + " " + name] = "DONE"
            except OSError as error:
                found[library.__name__ + " " + name] = type(error).__name__
        found[library.__name__ + " folder"] = folder
    return found
'''

PATCH = '''
import networkx, numpy

def process_graph(graph_data):
    numpy.sum = lambda *args, **kwargs: 42
    networkx.number_of_nodes = lambda graph: 42
    numpy.core_tampered = True
    return "patched"
'''

CHECK = '''
import networkx, numpy

def process_graph(graph_data):
    return [int(numpy.sum(numpy.array([1, 2]))), networkx.number_of_nodes(graph_data),
            hasattr(numpy, "core_tampered"), hasattr(numpy, "TAMPERED")]
'''


@pytest.fixture(scope="module")
def box():
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_edge("a", "b")
    sandbox = runtime.box(graph, ChildLimits(wall_s=20))
    yield sandbox
    sandbox.close()


@needs_boxes
def test_networkx_and_numpy_files_are_read_only_in_the_box(box):
    result = box.run(TAMPER)
    assert result.ok, result.error
    attempts = {name: outcome for name, outcome in result.value.items() if not name.endswith("folder")}
    assert len(attempts) == 12 and "DONE" not in attempts.values(), attempts
    assert result.value["numpy folder"] == "/opt/netarena/lib/numpy"  # the box's view, not the host's path
    assert result.value["networkx folder"] == "/opt/netarena/lib/networkx"


@needs_boxes
def test_a_library_patched_by_one_answer_is_intact_for_the_next(box):
    patched = box.run(PATCH)
    assert patched.ok and patched.value == "patched", patched
    after = box.run(CHECK)
    assert after.ok, after.error
    assert after.value == [3, 2, False, False]
