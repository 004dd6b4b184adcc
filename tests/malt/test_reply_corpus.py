"""How MALT replies are read: a corpus of replies in the styles models write, and the program each must give."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.malt import APP
from pytest_netarena.apps.malt.replies import NO_CODE, read_program

P = '''def process_graph(graph_data):
    kids = [c for c, e in graph_data.succ["ju1.a1.m1"].items() if e["type"] == "RK_CONTAINS" and c != "ju1.a1.m1"]
    return {"type": "list", "data": kids}'''
H = '''def kids(g, n):
    return [c for c, e in g.succ[n].items() if e["type"] == "RK_CONTAINS" and c != n]'''
PH = '''def process_graph(graph_data):
    return {"type": "list", "data": kids(graph_data, "ju1.a1.m1")}'''
IMPORTS = "import networkx as nx\nfrom collections import deque"
EXPECTED_JSON = '{"type": "list", "data": ["ju1.a1.m1.s2c1"]}'
DRAFT = '''def process_graph(graph_data):
    return {"type": "list", "data": list(graph_data.successors("ju1.a1.m1"))}'''


def fence(code: str, tag: str = "python", marks: str = "```") -> str:
    return f"{marks}{tag}\n{code}\n{marks}"


def indent(text: str, by: str) -> str:
    return "\n".join(by + line if line else line for line in text.split("\n"))


DRAFT_THEN_FIX = (f"First try:\n```python\n{DRAFT}\n```\nWait, that includes the self-loop. "
                  f"Fixed:\n```python\n{P}\n```")

# (name, reply, the program it must give; None: no program, and the refusal must contain the string after it)
CORPUS: list[tuple[str, str, str | None, str]] = [
    ("python fence", fence(P), P, ""),
    ("py tag", fence(P, "py"), P, ""),
    ("Python3 tag, capitals", fence(P, "Python3"), P, ""),
    ("no tag", fence(P, ""), P, ""),
    ("tilde fence", fence(P, "python", "~~~"), P, ""),
    ("four backticks", fence(P, "python", "````"), P, ""),
    ("tag with a title", fence(P, "python title=solution.py"), P, ""),
    ("braced tag", fence(P, "{python}"), P, ""),
    ("ipython tag", fence(P, "ipython"), P, ""),
    ("CRLF line endings", ("Here it is:\n" + fence(P) + "\n").replace("\n", "\r\n"), P, ""),
    ("byte-order mark", "\ufeff" + fence(P), P, ""),
    ("cut off before the closing fence", "Sure.\n```python\n" + P + "\n", P, ""),
    ("prose before and after", f"Let me walk the containment edges.\n\n{fence(P)}\n\nThis lists the children.", P, ""),
    ("bold label", f"**Code:**\n\n{fence(P)}", P, ""),
    ("ReAct action", f"Thought: I need the direct children.\nAction:\n{fence(P)}", P, ""),
    ("helper block, then process_graph", f"First a helper:\n{fence(H)}\nThen the answer:\n{fence(PH)}", H + "\n\n" + PH, ""),
    ("process_graph block, then its helper", f"{fence(PH)}\nwhere\n{fence(H)}", PH + "\n\n" + H, ""),
    ("imports, helper, process_graph in three blocks", f"{fence(IMPORTS)}\n{fence(H)}\n{fence(PH)}",
     IMPORTS + "\n\n" + H + "\n\n" + PH, ""),
    ("untagged helper, tagged main", f"{fence(H, '')}\n{fence(PH)}", H + "\n\n" + PH, ""),
    ("draft then fix: two answers, refused", DRAFT_THEN_FIX, None, "defines process_graph 2 different ways"),
    ("the same definition twice is one answer", f"{fence(P)}\nAgain, complete:\n{fence(P)}", P, ""),
    ("cot quoting expected output as json first", "The output should look like\n" + fence(EXPECTED_JSON, "json")
     + f"\nSo the code is:\n{fence(P)}", P, ""),
    ("cot quoting an earlier output as text", f"{fence('ju1.a1.m1.s2c1  ju1.a1.m1.s2c2', 'text')}\n{fence(P)}", P, ""),
    ("untagged output table is not code", f"{fence('name      capacity' + chr(10) + 'ju1.a1   400', '')}\n{fence(P)}", P, ""),
    ("bash and python blocks", f"{fence('pip install networkx', 'bash')}\n{fence(P)}", P, ""),
    ("diff block ignored", f"{fence('- old' + chr(10) + '+ new', 'diff')}\n{fence(P)}", P, ""),
    ("usage example in the same block", fence(P + "\n\n\nG = nx.DiGraph()\nprint(process_graph(G))"),
     P + "\n\n\nG = nx.DiGraph()", ""),
    ("usage example in its own block", f"{fence(P)}\nExample usage:\n{fence('result = process_graph(G)' + chr(10) + 'print(result)')}",
     P, ""),
    ("main guard", fence(P + '\n\nif __name__ == "__main__":\n    print(process_graph(None))'), P, ""),
    ("exploration block before the answer", f"{fence('print(graph_data.number_of_nodes())')}\n{fence(P)}", P, ""),
    ("REPL prompts", fence(">>> " + P.replace("\n", "\n... ") + "\n>>> 1 + 1\n2", "pycon"), P + "\n1 + 1", ""),
    ("indented inside a list item", "1. Define the function:\n\n" + indent(fence(P), "   "), P, ""),
    ("comments and blank lines kept", fence("# children of the block\n\n" + P + "  # done\n"), "# children of the block\n\n" + P + "  # done", ""),
    ("future import first", fence("from __future__ import annotations\n\n" + P), "from __future__ import annotations\n\n" + P, ""),
    ("decorated helper", fence("import functools\n\n@functools.lru_cache\ndef f(x):\n    return x") + "\n" + fence(P),
     "import functools\n\n@functools.lru_cache\ndef f(x):\n    return x\n\n" + P, ""),
    ("helper class", fence("class Walker:\n    pass") + "\n" + fence(P), "class Walker:\n    pass\n\n" + P, ""),
    ("other parameter name", fence(P.replace("graph_data", "graph")), P.replace("graph_data", "graph"), ""),
    ("syntax error still runs (the error is reported)", fence("def process_graph(graph_data)\n    return 1"),
     "def process_graph(graph_data)\n    return 1", ""),
    ("inline mention after the code", f"{fence(P)}\nCall `process_graph(graph_data)` to get the list.", P, ""),
    ("no fence: code between prose", f"Here is my solution:\n\n{P}\n\nIt returns the children.", P, ""),
    ("no fence: import above the def", f"Solution:\n{IMPORTS}\n\n{P}\nDone.", IMPORTS + "\n\n" + P, ""),
    ("JSON object with the code", '{"code": ' + __import__("json").dumps(P) + "}", P, ""),
    ("NBSP in indentation", fence(P.replace("    return", "\u00a0\u00a0\u00a0\u00a0return")), P, ""),
    ("nothing but prose", "The aggregation block has 16 switches.", None, NO_CODE),
    ("an answer object instead of code", 'Answer: {"type": "text", "data": 16}', None, "answer object, not code"),
    ("a shell block only", fence("python solve.py", "bash"), None, NO_CODE),
    ("empty reply", "", None, NO_CODE),
]


# chain-of-thought runs (the prompt says the action comes last): the last process_graph is the answer
COT_CORPUS: list[tuple[str, str, str]] = [
    ("draft then fix", DRAFT_THEN_FIX, P),
    ("draft with a helper, then a fix using it", f"{fence(H + chr(10) * 3 + DRAFT)}\nBetter:\n{fence(PH)}",
     H + "\n\n" + PH),
    ("reasoning, a sketch, then the code", "Step 1: find the block.\n" + fence(EXPECTED_JSON, "json")
     + f"\nStep 2: the code.\n{fence(DRAFT)}\nStep 3: skip self-loops; final answer:\n{fence(P)}", P),
]


@pytest.mark.parametrize("name, reply, program", COT_CORPUS, ids=[c[0] for c in COT_CORPUS])
def test_in_chain_of_thought_the_last_definition_answers(name, reply, program):
    assert read_program(reply, last_wins=True).code == program
    assert read_program(reply).code is None  # elsewhere two answers are refused


@pytest.mark.parametrize("name, reply, program, refusal", CORPUS, ids=[c[0] for c in CORPUS])
def test_reply_gives_its_program(name, reply, program, refusal):
    read = read_program(reply)
    if program is None:
        assert read.code is None and refusal in read.problem
    else:
        assert read.code == program


def test_the_corpus_is_large_and_varied():
    assert len(CORPUS) + len(COT_CORPUS) >= 40 and len(CORPUS) >= 40
    assert sum(program is None for _, _, program, _ in CORPUS) >= 4


def test_every_prompt_example_is_accepted():
    for _, reply in APP.prompt().examples:
        read = read_program(reply)
        assert read.code is not None and read.code == reply.split("```python\n")[1].split("\n```")[0]


def test_split_programs_run_as_one(small_env):
    from pytest_netarena.core.app import RunOptions

    query = next(q for q in APP.generate(RunOptions(seed=4, queries=1, extra={"malt_topology": "synthetic:600"}))
                 if q.category == "list")
    parent = query.params["program"][0]["parent"]
    reply = (f"A helper first:\n{fence(H)}\nNow the answer:\n"
             f"{fence(PH.replace('ju1.a1.m1', parent))}\nExample:\n{fence('print(process_graph(G))')}")
    small_env.reset(query)
    outcome = small_env.step(reply)
    assert outcome.agent_error is None and small_env.judge().correct, small_env.judge().details
