"""One YAML loader, one set of bounds: the API server's bodies and the netpol engine's manifests refuse the same input."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from pytest_netarena.core.safe_yaml import MAX_DEPTH, MAX_NODES, MAX_SCALAR, YAMLRefused, load_documents
from pytest_netarena.netpol.errors import ManifestError
from pytest_netarena.netpol.manifests import load_yaml_documents


def nested(depth: int) -> str:
    """A ConfigMap whose data holds a block sequence `depth` levels deep in all (the object counts as one)."""
    lines = ["kind: ConfigMap", "metadata: {name: deep}", "data:"]
    lines += [" " * (2 * level) + "- " for level in range(1, depth)]
    return "\n".join(lines) + "\n"


def alias_bomb() -> str:
    lines = ["kind: ConfigMap", "metadata: {name: bomb}", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 8):
        previous, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 10)}]")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "deep nesting": (nested(MAX_DEPTH + 1), "nested more than"),
    "deep flow nesting": ("[" * 20_000 + "]" * 20_000 + "\n", "nest"),  # libyaml stops it first, in its words
    "alias bomb": (alias_bomb(), "once aliases are expanded"),
    "too many values": ("kind: ConfigMap\nmetadata: {name: many}\ndata: [" + "1," * MAX_NODES + "1]\n",
                        "once aliases are expanded"),
    "huge scalar": ("kind: ConfigMap\nmetadata: {name: " + "x" * (MAX_SCALAR + 1) + "}\n", "a scalar of"),
    "recursive alias": ("kind: ConfigMap\nmetadata: {name: loop}\ndata: &x [*x]\n", "recursive alias"),
}
#: just inside each bound: the loader must not be stricter than it says
BORDERLINE = {
    "deepest nesting": nested(MAX_DEPTH),
    "most values": "kind: ConfigMap\nmetadata: {name: many}\ndata: [" + "1," * (MAX_NODES - 20) + "1]\n",
    "longest scalar": "kind: ConfigMap\nmetadata: {name: " + "x" * MAX_SCALAR + "}\n",
    "shared aliases": "kind: ConfigMap\nmetadata: {name: a, labels: &l {app: a}}\ndata: {x: *l, y: *l}\n",
}


@pytest.fixture(scope="module")
def api_server():
    pytest.importorskip("kubernetes_validate")
    from pytest_netarena.kube import EmbeddedAPIServer

    server = EmbeddedAPIServer().start()
    yield server
    server.stop()


def post_yaml(server, text: str) -> tuple[int, dict]:
    request = urllib.request.Request(server.url + "/api/v1/namespaces/default/configmaps", method="POST",
                                     data=text.encode(), headers={"Content-Type": "application/yaml"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_both_rooms_refuse_the_same_hostile_yaml(case, api_server, tmp_path):
    text, message = HOSTILE[case]
    with pytest.raises(YAMLRefused, match=message):
        load_documents(text)
    code, status = post_yaml(api_server, text)
    assert code == 400 and status["reason"] == "BadRequest" and message in status["message"], status
    manifest = tmp_path / "hostile.yaml"
    manifest.write_text(text)
    with pytest.raises(ManifestError, match=message):
        load_yaml_documents(manifest)


@pytest.mark.parametrize("case", sorted(BORDERLINE))
def test_input_just_inside_the_bounds_is_read_by_both(case, tmp_path):
    from pytest_netarena.kube.bodies import decode_yaml

    text = BORDERLINE[case]
    assert decode_yaml(text.encode())["kind"] == "ConfigMap"
    manifest = tmp_path / "fine.yaml"
    manifest.write_text(text)
    assert load_yaml_documents(manifest)[0]["kind"] == "ConfigMap"


def test_anchors_do_not_reach_across_documents():
    # the second document's alias is undefined there: refused as malformed, never sized by the first's anchor
    with pytest.raises(YAMLRefused, match="malformed YAML"):
        load_documents("a: &a [1, 2]\n---\nb: *a\n")
