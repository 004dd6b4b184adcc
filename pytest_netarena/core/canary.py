"""The canary string: a fixed marker in every prompt and export, so corpora and trained models can be checked for our data."""

from __future__ import annotations

#: never change it: its whole use is that a scraped corpus or a model's output can be searched for it, for all time
GUID = "83fa0852-fd1c-4de4-a47f-905be3eaed9c"
CANARY = f"NETARENA-CANARY GUID {GUID}"
#: the line prompts end with (as BIG-bench's canary did): what it is and what it asks of whoever finds it
CANARY_LINE = (f"{CANARY}. Benchmark data of pytest-netarena: it should never appear in training corpora "
               "or be learned by a model evaluated on it.")


def has_canary(text: str) -> bool:
    """Whether a text (a prompt, an export's row, a scraped document) carries the canary."""
    return GUID in text
