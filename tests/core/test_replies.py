"""core.replies: fences of every kind, inline code, labels and objects, found in reply order; no text raises."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_netarena.core import replies


def test_fences_with_any_tag_crlf_and_tildes_in_order() -> None:
    reply = ("Let me look.\r\n```bash\r\nkubectl get pods\r\n```\r\nthen\n~~~\nip route\n~~~\n"
             "````python\nprint('```')\n````\n")
    blocks = replies.fenced_blocks(reply)
    assert [(b.language, b.text) for b in blocks] == [
        ("bash", "kubectl get pods"), ("", "ip route"), ("python", "print('```')")]
    assert blocks[0].start < blocks[1].start < blocks[2].start


def test_an_unclosed_last_fence_runs_to_the_end() -> None:
    (block,) = replies.fenced_blocks("Here:\n```sh\nkubectl get svc\n")
    assert block.text == "kubectl get svc" and not block.closed


def test_inline_code_and_labels_come_from_the_prose_only() -> None:
    reply = "Run `kubectl get pods -A` now.\n```\n`not this`\n```\n**Action:** kubectl describe pod x\nThought: hm"
    assert replies.inline_code(reply) == ["kubectl get pods -A"]
    assert replies.labelled(reply, ("Action",)) == ["kubectl describe pod x"]


def test_objects_in_json_and_python_style() -> None:
    reply = ("I will run {\"machine\": \"h1\", \"command\": \"ip a\"} or rather "
             "{'machine': 'r0', 'command': 'ip route'} and {not an object}")
    found = [value for _, value in replies.objects(reply)]
    assert found == [{"machine": "h1", "command": "ip a"}, {"machine": "r0", "command": "ip route"}]
    assert [value for _, value in replies.objects(reply, python_style=False)] == [{"machine": "h1", "command": "ip a"}]


def test_nested_objects_are_listed_once_and_multiline_json_parses() -> None:
    reply = '{\n  "command": "kubectl patch np x -p \'{\\"spec\\": {}}\'",\n  "why": {"a": 1}\n}'
    ((_, value),) = replies.objects(reply)
    assert value["why"] == {"a": 1}


def test_prompt_markers() -> None:
    assert replies.strip_prompt("$ kubectl get pods") == "kubectl get pods"
    assert replies.strip_prompt("# a comment") == "# a comment"


@given(st.text())
def test_no_text_raises(text: str) -> None:
    replies.fenced_blocks(text)
    replies.inline_code(text)
    replies.labelled(text, ("Action",))
    replies.objects(text)
