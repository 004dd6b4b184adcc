"""junit.xml from episodes.jsonl: one <testcase> per episode with the netarena.* properties pytest writes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .properties import PREFIX


def _case_name(record: dict[str, Any], agents: int, trials: int) -> str:
    # the test id the plugin gives the episode (query id, agent slug with several agents, trial)
    name = str(record["query"])
    if agents > 1:
        name += "-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", str(record["agent"])).strip("-")  # AgentSpec.slug
    if trials > 1:
        name += f"-t{record['trial']}"
    return f"test_episode[{name}]"


def write_junit(path: Path, records: list[dict[str, Any]], episodes: list[dict[str, Any]], name: str) -> Path:
    """Failures: unresolved, unsafe and agent errors (as in pytest); errors: infra errors."""
    agents = len({r["agent"] for r in records})
    trials = len({r["trial"] for r in records})
    failures = sum(r["outcome"] in ("unresolved", "unsafe", "agent_error") for r in records)
    errors = sum(r["outcome"] == "infra_error" for r in records)
    suite = ET.Element("testsuite", name=name, tests=str(len(records)), failures=str(failures), errors=str(errors),
                       skipped="0", time=f"{sum(float(e.get('wall_s', 0.0)) for e in episodes):.3f}")
    for record, episode in zip(records, episodes):
        case = ET.SubElement(suite, "testcase", classname=f"suites.{record['app']}.test_{record['app']}",
                             name=_case_name(record, agents, trials), time=f"{float(episode.get('wall_s', 0.0)):.3f}")
        properties = ET.SubElement(case, "properties")
        for key, value in record.items():
            ET.SubElement(properties, "property", name=PREFIX + key, value=str(value))
        details = str(episode.get("details") or "")[:2000]
        if record["outcome"] == "infra_error":
            ET.SubElement(case, "error", message=f"infra error: {details[:200]}").text = details
        elif record["outcome"] != "resolved":
            ET.SubElement(case, "failure", message=f"{record['outcome']}: {details[:200]}").text = details
    ET.indent(suite)
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n",
                    encoding="utf-8")
    return path
