"""MALT answers have no network: not the harness's TCP listeners, unix sockets (named or abstract), nor the outside."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from .conftest import accepted, malt_box, needs_boxes


@needs_boxes
def test_answers_reach_no_listener_of_the_harness_and_no_network(listener, tmp_path: Path):
    server, port = listener
    path = tmp_path / "harness.sock"
    abstract = b"\0netarena-malt-redteam-" + os.urandom(4).hex().encode()
    named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hidden = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp_path.chmod(0o755)
    box = malt_box()
    try:
        named.bind(str(path))
        os.chmod(path, 0o777)
        hidden.bind(abstract)
        for unix in (named, hidden):
            unix.listen(1)
            unix.settimeout(0.5)
        code = (f"import socket\nTARGETS = [(socket.AF_UNIX, {str(path)!r}), (socket.AF_UNIX, {abstract!r}),\n"
                f"           (socket.AF_INET, ('127.0.0.1', {port})), (socket.AF_INET, ('10.0.0.1', {port})),\n"
                "           (socket.AF_INET, ('1.1.1.1', 53)), (socket.AF_INET6, ('::1', 22))]\n"
                "def process_graph(graph_data):\n"
                "    report = []\n"
                "    for family, address in TARGETS:\n"
                "        s = socket.socket(family, socket.SOCK_STREAM)\n"
                "        s.settimeout(2)\n"
                "        try:\n"
                "            s.connect(address)\n"
                "            report.append('CONNECTED %r' % (address,))\n"
                "        except OSError as error:\n"
                "            report.append(str(error))\n"
                "    interfaces = [l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]]\n"
                "    return {'type': 'list', 'data': [report, interfaces]}")
        result = box.run(code)
        assert result.ok, result.error
        report, interfaces = result.value["data"]
        assert not any(line.startswith("CONNECTED") for line in report), report
        assert interfaces == ["lo"]
        assert not accepted(server) and not accepted(named) and not accepted(hidden)
    finally:
        box.close()
        named.close()
        hidden.close()
