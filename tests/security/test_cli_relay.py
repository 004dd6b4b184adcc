"""The model relay of a CLI agent's box, attacked from inside the box: it forwards only the model calls of the CLI's
profile, whatever the path's dot segments, encodings or headers say, and what the harness holds does not grow with
what the box sends.

bash runs in the box in the place of Claude Code (`cli_stand_in.BashClaude`: the real profile, its key from
ANTHROPIC_API_KEY); the provider is a server of the test's own that records every request it gets.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest

from ..mcp_server.conftest import toy_app  # noqa: F401
from .cli_stand_in import Provider, play, program_folder
from .conftest import needs_root_boxes

pytestmark = needs_root_boxes

#: requests a box might send to reach another endpoint of the provider with the real key (each must be 403)
ESCAPES = [
    ("DELETE", "/model/../../admin/api_keys/k1"),
    ("GET", "/model/%2e%2e/%2e%2e/admin/api_keys"),
    ("GET", "/model/%2E%2E/v1/organizations/users"),
    ("POST", "/model/v1%2fmessages"),
    ("POST", "/model/v1/messages/..%2f..%2f..%2fadmin%2fapi_keys"),
    ("POST", "/model/v1/messages/../../../admin/api_keys"),
    ("POST", "/model/v1\\messages"),
    ("POST", "/model/v1/..\\..\\admin"),
    ("POST", "/model//v1/messages"),
    ("POST", "/model/./v1/messages"),
    ("POST", "/model/v1/files"),
    ("POST", "/model/v1/messages/batches"),
    ("DELETE", "/model/v1/messages"),
    ("PUT", "/model/v1/messages"),
    ("POST", "/model/v1/messages?beta=true&key=x"),
    ("POST", "/model"),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return program_folder(tmp_path)


def test_the_relay_forwards_only_the_profiles_model_calls(toy_app, folder, monkeypatch) -> None:
    key = f"sk-real-{secrets.token_hex(8)}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    overrides = r"X-HTTP-Method-Override: DELETE\r\nX-Original-URL: /admin/api_keys\r\nX-Forwarded-Host: evil.example\r\n"
    script = "".join(f"ask {method} '{target}'\n" for method, target in ESCAPES)
    script += f"ask POST '/model/v1/messages?beta=true' $'{overrides}'\n"
    with Provider() as provider:
        profile, _ = play(toy_app, folder, script, provider.url)
    answers = dict(re.findall(r"^ASKED (\S+ \S+) -> (.*)$", profile.output, re.M))
    assert len(answers) == len(ESCAPES) + 1, profile.output[-3000:]
    for method, target in ESCAPES:
        assert answers[f"{method} {target}"].startswith("HTTP/1.1 403"), (method, target, answers)
    assert answers["POST /model/v1/messages?beta=true"].startswith("HTTP/1.1 200"), answers
    # only the model call reached the provider: at its own path, with the real key, no override header
    assert [(seen.method, seen.target) for seen in provider.seen] == [("POST", "/v1/messages?beta=true")], \
        [(seen.method, seen.target) for seen in provider.seen]
    (honest,) = provider.seen
    assert honest.headers.get("x-api-key") == key and honest.size == 2
    assert not {"x-http-method-override", "x-original-url", "x-forwarded-host"} & set(honest.headers)
    assert key not in profile.output


#: the flood of the red team: twelve 30 MiB model requests at once (the old relay held each whole: +762 MiB)
FLOOD_REQUESTS, FLOOD_MIB = 12, 30
FLOOD = r"""
post() {
  exec {c}<>/dev/tcp/127.0.0.1/$port || return
  printf 'POST /model/v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' $((MIB << 20)) >&$c
  printf -v mib '%*s' 1048576 ''
  for ((i = 0; i < MIB; i++)); do printf '%s' "$mib" >&$c || break; done
  local status=""; read -r -t 60 status <&$c
  echo "FLOOD ${status%$'\r'}"
}
for ((n = 0; n < REQUESTS; n++)); do post & done
wait
"""


def peak_rss_reset() -> int:
    """Reset this process's peak resident size to its current one (Linux 4.0+); the current size in KiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kib("VmHWM")


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def test_a_flood_of_huge_model_requests_does_not_grow_the_harness(toy_app, folder) -> None:
    script = f"MIB={FLOOD_MIB}; REQUESTS={FLOOD_REQUESTS}\n{FLOOD}"
    with Provider() as provider:
        play(toy_app, folder, "ask POST '/model/v1/messages?beta=true'", provider.url)  # what any episode loads
        before = peak_rss_reset()
        profile, _ = play(toy_app, folder, script, provider.url)
        grown_mib = (_status_kib("VmHWM") - before) / 1024
    statuses = re.findall(r"^FLOOD (.*)$", profile.output, re.M)
    assert len(statuses) == FLOOD_REQUESTS, profile.output[-2000:]
    # relayed, or told to retry ("" when the listener's reset beat the answer to bash)
    assert {status[9:12] for status in statuses} <= {"200", "429", ""} and "HTTP/1.1 200 OK" in statuses, statuses
    assert provider.seen and all(seen.size <= FLOOD_MIB << 20 for seen in provider.seen)
    # the harness's peak grew by less than one request (the old relay held every request whole, some twice)
    assert grown_mib < FLOOD_MIB, f"the harness grew by {grown_mib:.0f} MiB"


#: requests whose framing is the box's own doing: each must end as the box's error, never as the endpoint's failure
MISFRAMED = r"""
exec {c}<>/dev/tcp/127.0.0.1/$port
printf 'POST /model/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n%0100d\r\n0\r\n\r\n' 0 >&$c
read -r -t 20 status <&$c; echo "BOTH ${status%$'\r'}"; exec {c}>&-
exec {c}<>/dev/tcp/127.0.0.1/$port
printf 'POST /model/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"cut": "short' >&$c; exec {c}>&-
exec {c}<>/dev/tcp/127.0.0.1/$port
printf 'POST /model/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\n\r\n' >&$c
read -r -t 20 status <&$c; echo "HUGE ${status%$'\r'}"; exec {c}>&-
exit 3
"""


def test_a_box_cannot_make_its_own_failure_the_endpoints(toy_app, folder) -> None:
    """A CLI that fails while the endpoint failed is an infrastructure error: requests framed two ways, cut short or
    too large are refused or dropped as the box's, so a box that sends them and fails is still an agent error."""
    with Provider() as provider:
        profile, result = play(toy_app, folder, MISFRAMED, provider.url)
    assert "BOTH HTTP/1.1 400" in profile.output and "HUGE HTTP/1.1 413" in profile.output, profile.output[-2000:]
    assert result.outcome.value == "agent_error" and "exited with status 3" in result.details, result.details
    assert all(seen.size < 1000 for seen in provider.seen)  # the cut request never arrived whole
