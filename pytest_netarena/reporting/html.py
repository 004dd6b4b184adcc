"""report.html: one self-contained page (inline CSS, JS and SVG; no network) with every table, chart and transcript."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from .charts import _e, histogram_svg, pct, radar_svg
from ..core.app import rules_of
from .fingerprint import SHOWN
from .page_assets import CSS, SCRIPT
from .cheating import html_section
from .completion import incomplete_line
from .summary import pass_hat_label

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
FIELD_LIMIT = 20_000  # characters of one reply/output shown; episodes.jsonl keeps everything
OUTCOMES = ("resolved", "unresolved", "unsafe", "agent_error", "infra_error")


def ci_text(rate: dict[str, Any]) -> str:
    if not rate.get("n"):
        return ""
    low, high = rate["ci95"]
    return f"[{100 * low:.1f}–{100 * high:.1f}]"


def number(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def _breakable(text: Any) -> str:
    """Escaped text that may wrap after + : / _ . and @, so long category and agent names never widen a table."""
    return re.sub(r"([+:/_.@])", r"\1<wbr>", _e(text))


def _mean_text(stats: dict[str, Any], digits: int = 2) -> str:
    mean, (low, high) = stats["mean"], stats["ci95"]
    if mean is None:
        return "–"
    low = max(0.0, low)  # steps and seconds are never negative; the normal interval can dip below 0
    return f"{number(mean, digits)} <span class=ci>[{number(low, digits)}–{number(high, digits)}]</span>"


def _colors(agents: list[str]) -> dict[str, str]:
    return {agent: PALETTE[i % len(PALETTE)] for i, agent in enumerate(agents)}


# ---- inline SVG charts ---------------------------------------------------------------------------


def _rate_bar(rate: dict[str, Any], color: str) -> str:
    """A small bar with its Wilson interval as a whisker, inline in a table cell."""
    if not rate.get("n"):
        return ""
    width, low, high = 70, rate["ci95"][0], rate["ci95"][1]
    return (f'<svg class=bar width="{width}" height="12" role="img" aria-label="{_e(pct(rate["rate"]))}">'
            f'<rect x="0" y="2" width="{width}" height="8" fill="#eceff1"/>'
            f'<rect x="0" y="2" width="{width * rate["rate"]:.1f}" height="8" fill="{color}" opacity="0.75"/>'
            f'<line x1="{width * low:.1f}" x2="{width * high:.1f}" y1="6" y2="6" stroke="#263238" stroke-width="1.5"/></svg>')


def _legend(colors: dict[str, str]) -> str:
    return "<div class=legend>" + "".join(f'<span><i style="background:{c}"></i>{_e(a)}</span>' for a, c in colors.items()) + "</div>"


def _run_header(run: dict[str, Any], episodes: int) -> str:
    if not run:
        return "<p class=note>This run has no run.json: run information is unknown.</p>"
    banner = ("<p class=unsandboxed><strong>UNSANDBOXED run:</strong> agent actions ran without sealed boxes "
              "(--unsandboxed), as the harness's user on the harness's machine.</p>") if run.get("sandboxed") is False else ""
    rows = [("run id", run.get("run_id", "")), ("seed", run.get("seed", "")),
            ("sealed boxes", "yes" if run.get("sandboxed", True) else "NO (--unsandboxed)"),
            ("rules", "NetArena's (--compat netarena)" if rules_of(run) == "netarena" else "pytest-netarena's"),
            ("agents", ", ".join(map(str, run.get("agents", [])))), ("episodes", episodes),
            ("hidden parameters", "from the seed and a run secret (kept private)" if run.get("secret_in_use")
             else "from the seed alone (no --secret)"), ("canary", run.get("canary", ""))]
    rows += [(f"option {key}", json.dumps(value) if not isinstance(value, str) else value)
             for key, value in sorted((run.get("options") or {}).items())]
    if run.get("args"):
        rows.append(("pytest arguments", " ".join(map(str, run["args"]))))
    rows.append(("platform", run.get("platform", "")))
    versions = ", ".join(f"{name} {version}" for name, version in sorted((run.get("versions") or {}).items()))
    rows.append(("versions", versions))
    found = run.get("fingerprint") or {}
    if found:
        rows.append(("environment", f"{found.get('digest')} (" + ", ".join(
            f"{key} {found.get(key)}" for key in SHOWN) + ")"))
    card = ('<p>Validity card of this benchmark: <a href="validity.md">validity.md</a> · '
            '<a href="validity.json">validity.json</a></p>') if run.get("validity_card") else ""
    return banner + _kv_table(rows) + card


def _incomplete(summary: dict[str, Any]) -> str:
    line = incomplete_line(summary)
    return f"<p class=unsandboxed><strong>{_e(line.split(':', 1)[0])}:</strong>{_e(line.split(':', 1)[1])}</p>" \
        if line else ""


def _stat_cells(stats: dict[str, Any], color: str, pass_hat: bool = False) -> str:
    """The cells after n; with pass_hat, pass^k (k = trials) first: it leads when queries ran several times."""
    cells = []
    if pass_hat:
        cells.append(f"<td class=num><b>{pct((stats.get('pass_hat_k') or {}).get('rate'))}</b></td>")
    for metric in ("resolved", "correctness", "safety"):
        rate = stats[metric]
        cells.append(f"<td class=num>{pct(rate['rate'])} <span class=ci>{ci_text(rate)}</span></td>")
        if metric == "resolved":  # the headline gets the bar
            cells.append(f"<td>{_rate_bar(rate, color)}</td>")
    cells.append(f"<td class=num>{_mean_text(stats['steps'])}</td>")
    cells.append(f"<td class=num>{_mean_text(stats['latency_s'], 3)}</td>")
    cells.append(f"<td class=num>{stats['infra_errors']}</td><td class=num>{stats['agent_errors']}</td>")
    return "".join(cells)


STAT_HEADER = ("<th>n</th><th>resolved [95% CI]</th><th></th><th>correct [95% CI]</th><th>safe [95% CI]</th>"
               "<th>steps [95% CI]</th><th>agent s [95% CI]</th><th>infra err</th><th>agent err</th>")

HEADLINE_NOTE = ("<p class=muted><b>resolved</b> is the headline: the final state is correct, every step was safe, "
                 "and (under pytest-netarena's rules) the fix admits no more than the intent (not overly permissive). "
                 "Correctness and safety are shown apart, but neither ranks alone: an agent that does nothing "
                 "is 100% safe.</p>")


def _stat_header(pass_hat_label: str | None) -> str:
    if not pass_hat_label:
        return STAT_HEADER
    lead = f'<th title="pass^k with k = trials: the chance of passing a query every time">{_e(pass_hat_label)}</th>'
    return STAT_HEADER.replace("<th>n</th>", "<th>n</th>" + lead, 1)


def _metric_lines(groups: list[dict[str, Any]]) -> str:
    """Extra measures scored apart from correctness (e.g. overly permissive policies), per agent."""
    lines = []
    for group in groups:
        for name, rate in sorted((group["overall"].get("metrics") or {}).items()):
            absent = rate.get("not_applicable", 0)
            absent_text = f"; n/a for {absent} episodes that are not correct" if absent else ""
            if not rate["n"]:
                lines.append(f"<li>{_breakable(group['agent'])}: {_e(name.replace('_', ' '))}: n/a "
                             f"(defined only for correct fixes){absent_text}</li>")
                continue
            lines.append(f"<li>{_breakable(group['agent'])}: {_e(name.replace('_', ' '))} in {pct(rate['rate'])} "
                         f"<span class=ci>{ci_text(rate)}</span> of {rate['n']} correct episodes{absent_text}</li>")
    return f"<h3>Other measures</h3><ul class=metrics>{''.join(lines)}</ul>" if lines else ""


def _app_section(app: str, groups: list[dict[str, Any]], colors: dict[str, str], records: list[dict[str, Any]]) -> str:
    label = pass_hat_label(groups)
    out = [f'<h2 id="app-{_e(app)}">App {_e(app)}</h2>', HEADLINE_NOTE, "<h3>Overall</h3><table><tr><th>agent</th>" +
           _stat_header(label) + "<th>tokens</th></tr>"]
    for group in groups:
        overall = group["overall"]
        via = f' <span class=muted>via {_e(group.get("interface", "text"))}</span>'
        out.append(f'<tr data-key="{_e(app)}|{_e(group["agent"])}|*|*"><td>{_breakable(group["agent"])}{via}</td><td class=num>{overall["scored"]}</td>'
                   + _stat_cells(overall, colors[group["agent"]], bool(label))
                   + f"<td class=num>{overall['tokens']}</td></tr>")  # costs: in Latency and cost below
    out.append("</table>")
    out.append(_metric_lines(groups))
    levels = sorted({c["level"] for g in groups for c in g["categories"]})
    for level in levels:
        names = sorted({c["category"] for g in groups for c in g["categories"] if c["level"] == level})
        out.append(f"<h3>Level {level}</h3><table><tr><th>category</th><th>agent</th>{STAT_HEADER}</tr>")  # pass^k per category: summary.json
        for name in names:
            for group in groups:
                stats = next((c for c in group["categories"] if c["level"] == level and c["category"] == name), None)
                if stats is None:
                    continue
                out.append(f'<tr data-key="{_e(app)}|{_e(group["agent"])}|{level}|{_e(name)}"><td>{_breakable(name)}</td><td>{_breakable(group["agent"])}</td>'
                           f'<td class=num>{stats["scored"]}</td>' + _stat_cells(stats, colors[group["agent"]]) + "</tr>")
        out.append("</table><div class=charts>")
        for metric, title in (("resolved", "Resolved"), ("correctness", "Correctness"), ("safety", "Safety")):
            series = []
            for group in groups:
                by_name = {c["category"]: c[metric]["rate"] for c in group["categories"] if c["level"] == level}
                series.append((group["agent"], colors[group["agent"]], [by_name.get(name) for name in names]))
            out.append(f"<div class=chart>{radar_svg(f'{title} · {app} L{level}', names, series)}</div>")
        out.append("</div>" + _legend({g["agent"]: colors[g["agent"]] for g in groups}))
    out.append(_distributions(app, groups, colors, records))
    return "".join(out)


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _distributions(app: str, groups: list[dict[str, Any]], colors: dict[str, str], records: list[dict[str, Any]]) -> str:
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record["app"] == app and record["outcome"] != "infra_error":
            by_agent[record["agent"]].append(record)
    agents = [g["agent"] for g in groups]
    out = ["<h3>Latency and cost</h3><table><tr><th>agent</th><th>median s</th><th>p90 s</th><th>max s</th>"
           "<th>median tokens</th><th>total cost $</th><th>$/episode</th><th>$/resolved</th></tr>"]
    for group in groups:
        agent, overall = group["agent"], group["overall"]
        items = by_agent[agent]
        latency = [float(r["latency_s"]) for r in items]
        tokens = [float(r["tokens"]) for r in items]
        # the summary's figures: every episode's cost (infra errors too), per episode and per resolved episode
        out.append(f"<tr><td>{_breakable(agent)}</td><td class=num>{number(_quantile(latency, 0.5), 3)}</td><td class=num>{number(_quantile(latency, 0.9), 3)}</td>"
                   f"<td class=num>{number(max(latency, default=None), 3)}</td><td class=num>{number(_quantile(tokens, 0.5), 0)}</td>"
                   f"<td class=num>{overall['cost_usd']:.4f}</td><td class=num>{number(overall['cost_per_episode_usd'], 5)}</td>"
                   f"<td class=num>{number(overall['cost_per_resolved_usd'], 5)}</td></tr>")
    out.append("</table><div class=charts>")
    for key, title, unit in (("latency_s", "agent time", "seconds"), ("cost_usd", "cost", "USD"), ("steps", "steps", "steps")):
        series = [(a, colors[a], [float(r[key]) for r in by_agent[a]]) for a in agents]
        if key == "cost_usd" and not any(v for _, _, vs in series for v in vs):
            out.append("<div class=chart><p class=muted>No model cost was recorded (built-in or local agents).</p></div>")
        else:
            out.append("<div class=chart>" + histogram_svg(f"{title} per episode · {app}", unit, series) + "</div>")
    return "".join(out) + "</div>"


def _table(columns: tuple[str, ...], rows: list[str]) -> str:
    return "<table><tr>" + "".join(f"<th>{column}</th>" for column in columns) + "</tr>" + "".join(rows) + "</table>"


def _kv_table(pairs: Any) -> str:
    return "<table class=kv>" + "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in pairs) + "</table>"


def _method_section(anchor: str, title: str, method: str, columns: tuple[str, ...], rows: list[str]) -> str:
    """A section of statistics: its heading, a paragraph on the method, and its table (nothing without rows)."""
    return f'<h2 id="{anchor}">{title}</h2><p>{method}</p>' + _table(columns, rows) if rows else ""


def _comparisons(comparisons: list[dict[str, Any]]) -> str:
    rows = []
    for c in comparisons:
        low, high = c["bootstrap_ci95"]
        interval = "" if low is None else f" <span class=ci>[{100 * low:+.1f}, {100 * high:+.1f}]</span>"
        difference = "–" if c["difference"] is None else f"{100 * c['difference']:+.1f} pts"
        needed = "; ".join(f"{'observed ' if q['observed'] else ''}{100 * q['difference']:.1f} pts: {q['pairs'] if q['pairs'] is not None else '–'}"
                           for q in c["queries_needed"])
        rows.append(f"<tr><td>{_e(c['app'])}</td><td>{_breakable(c['agent_a'])}</td><td>{_breakable(c['agent_b'])}</td><td>{_e(c['metric'])}</td>"
                    f"<td class=num>{c['pairs']}</td><td class=num>{pct(c['rate_a'])}</td><td class=num>{pct(c['rate_b'])}</td>"
                    f"<td class=num>{difference}{interval}</td><td class=num>{c['only_a']} / {c['only_b']}</td>"
                    f"<td class=num>{c['mcnemar_p']:.4g}</td><td>{_e(needed)}</td></tr>")
    return _method_section(
        "comparisons", "Paired comparisons",
        "Episodes pair up by query and trial (the same hidden problem for both agents). "
        "McNemar's exact test looks at the discordant pairs only; the interval is a paired bootstrap "
        "(percentile, seeded with the run's seed) of the difference A − B. "
        "<em>Queries needed</em>: pairs to detect that difference at 95% confidence and 80% power, "
        "n = (1.96·√ψ + 0.84·√(ψ − d²))² / d² (Connor 1987), with ψ the share of discordant pairs seen in this run.",
        ("app", "A", "B", "metric", "pairs", "A", "B", "A − B [bootstrap 95%]", "only A / only B", "McNemar p", "queries needed"),
        rows)


def _pass_k(rows: list[dict[str, Any]]) -> str:
    return _method_section(
        "pass-k", "pass@k and pass^k",
        "A trial passes when its test passes (resolved, every step safe). Per query with n trials of which c passed: "
        "pass@k = 1 − C(n−c, k)/C(n, k) (at least one of k passes), pass^k = C(c, k)/C(n, k) (all k pass); averaged over queries.",
        ("app", "agent", "level", "k", "queries", "pass@k", "pass^k"),
        [f"<tr><td>{_e(r['app'])}</td><td>{_breakable(r['agent'])}</td><td class=num>{r['level']}</td><td class=num>{r['k']}</td>"
         f"<td class=num>{r['queries']}</td><td class=num>{pct(r['pass_at_k'])}</td><td class=num>{pct(r['pass_hat_k'])}</td></tr>"
         for r in rows])


def _extras(summary: dict[str, Any]) -> str:
    out = []
    if summary.get("budget"):
        out.append("<h3>Budget</h3>" + _kv_table(sorted(summary["budget"].items())))
    if summary.get("gates"):
        rows = []
        for gate in summary["gates"]:
            value = gate.get("value")
            rows.append(f"<tr><td>{_e(gate.get('app', ''))}</td><td>{_e(gate.get('agent', ''))}</td><td>{_e(gate.get('metric', ''))}</td>"
                        f"<td class=num>{'–' if value is None else f'{value:.3f}'}</td><td class=num>{_e(gate.get('threshold', ''))}</td>"
                        f"<td>{'met' if gate.get('passed') else '<b style=color:var(--bad)>FAILED</b>'}</td></tr>")
        out.append("<h3>Bars</h3>" + _table(("app", "agent", "metric", "value", "bar", "verdict"), rows))
    return "".join(out)


def _clip(text: Any) -> str:
    text = "" if text is None else str(text)
    if len(text) <= FIELD_LIMIT:
        return _e(text)
    return _e(text[:FIELD_LIMIT]) + f"\n<span class=muted>… {len(text) - FIELD_LIMIT} more characters in episodes.jsonl</span>"


def _tool_call(call: Any) -> str:
    """A step's tool call (name, id, arguments as sent), or "" for an action read from text."""
    if not isinstance(call, dict):
        return ""
    return (f"<div><span class=lbl>tool call</span> <code>{_clip(str(call.get('name', '')))}</code>"
            f" <span class=muted>{_clip(str(call.get('call_id', '')))}</span></div>"
            f"<pre>{_clip(str(call.get('arguments', '')))}</pre>")


def _episode(episode: dict[str, Any]) -> str:
    query, outcome = episode["query"], str(episode["outcome"])
    steps = episode["steps"]
    first_unsafe = next((s.get("index") for s in steps if s.get("violations")), None)
    head = (f'<span class="badge {_e(outcome)}">{_e(outcome)}</span><b>{_e(query["id"])}</b> · {_e(episode["agent"])}'
            f' via {_e(episode.get("interface", "text"))}'
            f' · trial {_e(episode["trial"])} · {len(steps)} step{"" if len(steps) == 1 else "s"} · {number(episode.get("agent_s"), 2)} s'
            f' · {_e(episode.get("tokens", 0))} tokens' + (f" · <span class=first-flag>first unsafe: step {first_unsafe}</span>" if first_unsafe else ""))
    body = [f"<div class=body><p>resolved: <b>{_e(outcome == 'resolved')}</b> · correct: <b>{_e(episode['correct'])}</b>"
            f" · safe: <b>{_e(episode['safe'])}</b>"
            f" · prompt style: {_e(episode.get('prompt_style', ''))} · seed {_e(query.get('seed', ''))}"
            + (f" · ended by: {_e(episode['ended_by'])}" if episode.get("ended_by") else "") + "</p>"]
    if episode.get("details"):
        body.append(f"<p>verdict: {_e(episode['details'])}</p>")
    if query.get("params"):
        body.append(f"<details><summary>hidden query parameters</summary><pre>{_clip(json.dumps(query['params'], indent=1, sort_keys=True, default=str))}</pre></details>")
    body.append(f"<div class=step><h4>observation 0</h4><pre>{_clip(episode.get('first_observation', ''))}</pre></div>")
    for step in steps:
        index = step.get("index")
        classes = ["step"] + (["unsafe"] if step.get("violations") else []) + (["first-unsafe"] if index == first_unsafe else []) \
            + (["refused"] if step.get("refused") else [])
        flags = (" <span class=first-flag>first unsafe step</span>" if index == first_unsafe else "") + (" · refused" if step.get("refused") else "")
        body.append(f'<div class="{" ".join(classes)}"><h4>step {_e(index)}{flags} <span class=muted>· agent {number(step.get("agent_s"), 2)} s'
                    f' · exec {number(step.get("exec_s"), 3)} s</span></h4>'
                    f"<div class=lbl>reply</div><pre>{_clip(step.get('reply', ''))}</pre>" + _tool_call(step.get("tool_call")) +
                    f"<div><span class=lbl>action</span> <code>{_clip(step.get('action', '')) or '<i>none parsed</i>'}</code></div>"
                    f"<div class=lbl>output</div><pre>{_clip(step.get('output', ''))}</pre>")
        if step.get("violations"):
            body.append("<ul class=violations>" + "".join(f"<li>{_clip(v)}</li>" for v in step["violations"]) + "</ul>")
        if step.get("observation") and step.get("observation") != step.get("output"):
            body.append(f"<details><summary>observation shown next</summary><pre>{_clip(step['observation'])}</pre></details>")
        body.append("</div>")
    if isinstance(episode.get("finish"), dict):
        body.append(f"<div class=step><h4>finish</h4>{_tool_call(episode['finish'])}</div>")
    return (f'<div class=episode data-outcome="{_e(outcome)}"><details><summary>{head}</summary>' + "".join(body) + "</div></details></div>")


def _episodes(episodes: list[dict[str, Any]]) -> str:
    ordered = sorted(episodes, key=lambda e: (str(e["query"]["app"]), str(e["query"]["id"]), int(e["trial"]), str(e["agent"])))
    options = "".join(f'<option value="{o}">{o}</option>' for o in OUTCOMES)
    return ('<h2 id="episodes">Episodes</h2><div class=filters><input id=filter type=search '
            'placeholder="filter: words in the query id, agent, replies, outputs, violations…" aria-label="filter episodes"> '
            f'<select id=outcome-filter aria-label="outcome"><option value="">all outcomes</option>{options}</select> '
            '<button id=expand type=button>expand shown</button> <button id=collapse type=button>collapse</button> '
            '<span id=shown class=muted></span></div>' + "".join(_episode(e) for e in ordered))


def _plots(plots: list[Path], note: str) -> str:
    if not plots:
        return f'<h2 id="plots">Plots</h2><p class=muted>{_e(note or "no plots")}</p>' if note else ""
    stems: dict[str, list[Path]] = {}
    for path in plots:
        stems.setdefault(path.with_suffix("").as_posix(), []).append(path)
    links = "".join(f"<li>{_e(stem)}: " + " · ".join(f'<a href="{_e(p.as_posix())}">{_e(p.suffix[1:])}</a>' for p in paths) + "</li>"
                    for stem, paths in stems.items())
    return f'<h2 id="plots">Plots</h2><p>PNG and SVG figures beside this file, for papers:</p><ul>{links}</ul>'


def _skipped(skipped: dict[str, Any]) -> str:
    """Every reason episodes were skipped for, with how many and of which apps (they are not run and not scored)."""
    if not skipped.get("episodes"):
        return ""
    rows = "".join(f"<tr><td>{_e(entry.get('reason', ''))}</td><td>{_e(', '.join(entry.get('apps', [])))}</td>"
                   f"<td class=num>{int(entry.get('episodes', 0))}</td></tr>" for entry in skipped.get("reasons", []))
    count = int(skipped["episodes"])
    return (f'<h2 id="skipped">Skipped</h2><p>{count} episode{"" if count == 1 else "s"} of this run were not run and '
            "are not scored, because:</p><table><tr><th>reason</th><th>apps</th><th>episodes</th></tr>"
            f"{rows}</table>")


def render_report(run: dict[str, Any], summary: dict[str, Any], episodes: list[dict[str, Any]],
                  records: list[dict[str, Any]], plots: list[Path] = (), plot_note: str = "",  # type: ignore[assignment]
                  superseded: int = 0) -> str:
    """The whole page. Every value that came from an agent or the run is escaped."""
    agents = sorted({g["agent"] for g in summary["groups"]})
    colors = _colors(agents)
    apps = sorted({g["app"] for g in summary["groups"]})
    title = f"pytest-netarena run {run.get('run_id', '')}".strip()
    sections = [_app_section(app, [g for g in summary["groups"] if g["app"] == app], colors, records) for app in apps]
    nav = '<a href="#skipped">skipped</a>' if (summary.get("skipped") or {}).get("episodes") else ""
    nav += "".join(f'<a href="#app-{_e(a)}">{_e(a)}</a>' for a in apps)
    nav += '<a href="#comparisons">comparisons</a>' if summary.get("comparisons") else ""
    nav += '<a href="#pass-k">pass@k</a>' if summary.get("pass_k") else ""
    nav += '<a href="#cheating">impossible</a>' if summary.get("cheating") else ""
    nav += '<a href="#episodes">episodes</a>'
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    # the policy forbids any network fetch and any script but ours, even if escaping ever failed
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{script_hash}'"
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name=viewport content="width=device-width, initial-scale=1"><title>{_e(title)}</title><style>{CSS}</style></head>'
        f"<body><main><h1>{_e(title)}</h1><p class=muted>pytest-netarena report · {len(episodes)} episodes · "
        f"rates with Wilson 95% intervals, infrastructure errors never scored"
        + (f" · {superseded} earlier attempts replaced by their re-runs (--resume)" if superseded else "") + "</p>"
        + _incomplete(summary) + f"<nav>{nav}</nav>"
        f'<h2 id="run">Run</h2>{_run_header(run, len(episodes))}{_extras(summary)}'
        + _skipped(summary.get("skipped") or {}) + "".join(sections) + html_section(summary.get("cheating") or []) + _comparisons(summary.get("comparisons", []))
        + _pass_k(summary.get("pass_k", []))
        + _plots(list(plots), plot_note) + _episodes(episodes)
        + f"</main><script>{SCRIPT}</script></body></html>\n"
    )
