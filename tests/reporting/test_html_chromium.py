"""report.html in headless Chromium: it renders, logs nothing to the console, shows summary.json's numbers,
filters episodes, and shows agent text as text."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_netarena.reporting import artifacts
from pytest_netarena.reporting.rebuild import build_report, load_episodes
from pytest_netarena.testing.browser import Browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")


def browse(url: str, profile: Path, *options: str) -> tuple[str, list[str]]:
    """(stdout, console lines): Chromium logs every console message, errors included, as INFO:CONSOLE."""
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", *options, url],
        capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


class Dom(HTMLParser):
    """The text of every <tr data-key>, the tags seen, and the text of elements with an id."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.rows: dict[str, str] = {}
        self.by_id: dict[str, str] = {}
        self.tags: list[str] = []
        self.text: list[str] = []
        self._row: str | None = None
        self._id: str | None = None
        self.feed(markup)

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "tr" and "data-key" in attrs:
            self._row = attrs["data-key"]
            self.rows[self._row] = ""
        if attrs.get("id") and tag == "span":
            self._id = attrs["id"]
            self.by_id[self._id] = ""

    def handle_endtag(self, tag) -> None:
        if tag == "tr":
            self._row = None
        if tag == "span":
            self._id = None

    def handle_data(self, data) -> None:
        self.text.append(data)
        if self._row is not None:
            self.rows[self._row] += data
        if self._id is not None:
            self.by_id[self._id] += data


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def test_report_renders_cleanly_and_shows_the_numbers_of_summary_json(built: Path, run_dir: Path, tmp_path: Path) -> None:
    markup, console = browse(built.as_uri(), tmp_path / "profile", "--dump-dom")
    assert console == []  # no errors, no CSP violations, no logging at all
    dom = Dom(markup)
    summary = json.loads((run_dir / "summary.json").read_text())
    checked = 0
    for group in summary["groups"]:
        rows = [("*", "*", group["overall"])] + [(c["level"], c["category"], c) for c in group["categories"]]
        for level, category, stats in rows:
            text = dom.rows[f"{group['app']}|{group['agent']}|{level}|{category}"]
            for metric in ("correctness", "safety"):
                rate = stats[metric]
                low, high = rate["ci95"]
                assert f"{pct(rate['rate'])} [{100 * low:.1f}–{100 * high:.1f}]" in text, (metric, text)
            assert f"{stats['steps']['mean']:.2f}" in text
            checked += 1
    assert checked == sum(1 + len(g["categories"]) for g in summary["groups"]) >= 20
    page_text = " ".join(dom.text)
    for comparison in summary["comparisons"]:
        assert f"{comparison['mcnemar_p']:.4g}" in page_text
    for row in summary["pass_k"]:
        assert pct(row["pass_at_k"]) in page_text and pct(row["pass_hat_k"]) in page_text
    episodes = len(load_episodes(run_dir))
    assert dom.by_id["shown"] == f"{episodes} of {episodes} episodes shown"  # the script ran


def test_filter_box_narrows_the_episodes(built: Path, tmp_path: Path) -> None:
    markup, console = browse(built.as_uri() + "#filter=half%20toy-L2", tmp_path / "profile", "--dump-dom")
    assert console == []
    total = Dom(markup).by_id["shown"].split(" of ")[1].split()[0]
    assert Dom(markup).by_id["shown"] == f"8 of {total} episodes shown"  # 4 queries x 2 trials
    visible = re.findall(r'<div class="episode" data-outcome="(\w+)">', markup)  # hidden ones carry hidden=""
    assert sorted(visible) == ["resolved"] * 4 + ["unresolved"] * 4


def test_agent_text_is_shown_as_text_never_run(says, tmp_path: Path) -> None:
    run = tmp_path / "run"
    attack = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
    artifacts.append_episode(run, says(f"set -3 {attack}", f"evil{attack}"))
    artifacts.append_episode(run, says("set 1", "plain"))
    page = build_report(run, plots=False)
    markup, console = browse(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert console == []
    dom = Dom(markup)
    assert dom.tags.count("script") == 1 and "img" not in dom.tags
    assert "<title>pytest-netarena run</title>" in markup
    assert f"set -3 {attack}" in " ".join(dom.text)  # shown verbatim, as text
    assert "first unsafe step" in " ".join(dom.text)


def test_screenshot_renders(built: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _, console = browse(built.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2200",
                        "--hide-scrollbars")
    assert console == []
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000  # a blank page is a few kB


# what a long run looks like: the longest fault combinations and agent specs users write
LONG_CATEGORIES = {2: ("drop_traffic_to_from_subnet+wrong_routing_table", "remove_ingress+change_protocol"),
                   3: ("disable_interface+drop_traffic_to_from_subnet+wrong_routing_table",
                       "remove_ingress+change_protocol+add_egress")}
LONG_AGENTS = {"oracle": "openai:gpt-4o-2024-08-06", "half": "a2a:http://127.0.0.1:9019/agents/network-operator",
               "reckless": "python:my_company.agents.routing_v2:CarefulOperatorAgent"}
# every element that sticks out of the viewport, unless an ancestor clips or scrolls it; every box that scrolls
LAYOUT = r"""(() => {
  const width = document.documentElement.clientWidth, sticking = [], scrolling = [];
  const held = e => { for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
                        if (getComputedStyle(p).overflowX !== 'visible') return true; return false; };
  for (const e of document.querySelectorAll('main *')) {
    const box = e.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 0.5 && !held(e)) sticking.push(e.tagName + ' ' + e.textContent.slice(0, 40));
    if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.tagName !== 'PRE' && e.scrollWidth > e.clientWidth + 0.5)
      scrolling.push(e.tagName + ' after ' + (e.previousElementSibling || {}).textContent);
  }
  return {page: document.documentElement.scrollWidth, width, sticking, scrolling};
})()"""


@pytest.fixture
def long_report(make_run, tmp_path: Path) -> Path:
    """A run with long category names at levels 2 and 3 and long agent specs, of three trials (pass^3 leads)."""
    run = tmp_path / "long" / "20250101-000000-8"
    results = make_run(tmp_path / "base" / "20250101-000000-9", trials=3)
    for result in results:
        if result.query.app != "toy":
            continue
        for level, names in LONG_CATEGORIES.items():
            query = dataclasses.replace(result.query, level=level, category=names[result.query.index % len(names)])
            artifacts.append_episode(run, dataclasses.replace(result, query=query, agent=LONG_AGENTS[result.agent]))
    return build_report(run, plots=False)


def test_the_page_never_scrolls_sideways_and_tables_fit_from_1024_px(long_report: Path) -> None:
    assert ">pass^3</th>" in long_report.read_text()  # the widest overall table: pass^k leads it
    layouts = {}
    with Browser(CHROMIUM) as browser:
        for width in (1920, 1400, 1024, 390):  # desktop, laptop, tablet, phone
            layouts[width] = browser.open(long_report.as_uri(), width).evaluate(LAYOUT)
    for width, layout in layouts.items():
        assert layout["width"] == width
        assert layout["page"] == width and layout["sticking"] == [], (width, layout)
        if width >= 1024:
            assert layout["scrolling"] == [], (width, layout)  # every table fits: nothing to scroll
        else:
            assert layout["scrolling"], (width, layout)  # a phone scrolls the wide tables inside themselves
