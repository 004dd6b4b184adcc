"""The MALT `chatty` agent: the expert's code, written the way chat models write replies.

It answers like the expert (expert.py: from the question text alone) but varies the form by the
question, in the styles of tests/malt/test_reply_corpus.py: chain of thought with a JSON sketch of
the answer first, helpers and process_graph in separate blocks, an untagged fence with CRLF
endings, a ReAct `Action:` with a ~~~ fence, code with no fence at all, a usage example after the
code, and (in chain-of-thought runs only, where the action comes last) a draft then a fix. Every form must be read as the same program (a test runs the default suite).
"""

from __future__ import annotations

import re
import zlib

from ....core.types import Reply, Task
from .expert import expert_code

_DRAFT = '''def process_graph(graph_data):
    # first idea: networkx successors (but that also follows RK_CONTROLS self-loops)
    return {"type": "text", "data": graph_data.number_of_nodes()}'''


def _split(code: str) -> tuple[str, str]:
    at = code.index("def process_graph")
    return code[:at].rstrip("\n"), code[at:].rstrip("\n")


def _cot(helpers: str, main: str) -> str:
    return ("Let me think step by step. The answer must be a dict such as\n"
            "```json\n{\"type\": \"list\", \"data\": [\"...\"]}\n```\n"
            "I will follow RK_CONTAINS edges only and skip self-loops. First the helpers:\n\n"
            f"```python\n{helpers}\n```\n\nThen the function itself:\n\n```py\n{main}\n```\n\n"
            "Example usage:\n```python\nresult = process_graph(G)\nprint(result)\n```\n")


def _draft_then_fix(helpers: str, main: str) -> str:
    return (f"A first draft:\n```python\n{_DRAFT}\n```\nWait, that counts every node. Fixed version:\n\n"
            f"```python\n{helpers}\n\n\n{main}\n```")


def _untagged_crlf(helpers: str, main: str) -> str:
    return f"Sure! Here is the code:\n\n```\n{helpers}\n\n\n{main}\n```\nHope this helps.\n".replace("\n", "\r\n")


def _react(helpers: str, main: str) -> str:
    return (f"Thought: the question names the nodes; I compute over the graph.\n"
            f"Action:\n~~~python\n# helpers\n{helpers}\n\n\n{main}\n\n\nif __name__ == \"__main__\":\n"
            "    print(process_graph(None))\n~~~\n")


def _no_fence(helpers: str, main: str) -> str:
    return f"My solution:\n\n{helpers}\n\n\n{main}\n\nThis returns the answer in the required format."


def _usage_after(helpers: str, main: str) -> str:
    return (f"```python\n{helpers}\n\n\n{main}\n\n\n# quick check\nG = None\nprint(process_graph(G))\n```\n"
            "The check at the end shows how to call it.")


STYLES = (_cot, _untagged_crlf, _react, _no_fence, _usage_after)
#: a draft, then a fix, is one answer only where the action comes last (chain-of-thought runs)
COT_STYLES = (*STYLES, _draft_then_fix)


class ChattyAgent:
    """The expert's answers in a chat model's many reply forms (chosen by the question)."""

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        match = re.search(r"Question:\s*(.*?)(?:\n\n|$)", observation, re.S)
        question = match[1] if match else observation
        code, _ = expert_code(question)
        styles = COT_STYLES if getattr(self.task, "prompt_style", "") == "cot" else STYLES
        style = styles[zlib.crc32(question.encode()) % len(styles)]
        return Reply(style(*_split(code)))

    def close(self) -> None:
        pass
