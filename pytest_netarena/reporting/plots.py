"""PNG and SVG figures for papers (matplotlib, Agg): rates per category with CIs, radars per level, latency."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

FORMATS = ("png", "svg")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_") or "x"


def write_plots(summary: dict[str, Any], records: list[dict[str, Any]], out_dir: Path) -> tuple[list[Path], str]:
    """Write every figure in both formats; returns (paths, note). Without matplotlib, no paths and a note why."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed: pip install matplotlib to get PNG/SVG plots"
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    apps = sorted({group["app"] for group in summary["groups"]})
    for app in apps:
        groups = [group for group in summary["groups"] if group["app"] == app]
        written += _save(plt, _rates_figure(plt, app, groups), out_dir / f"rates_{_safe(app)}")
        for level in sorted({c["level"] for g in groups for c in g["categories"]}):
            written += _save(plt, _radar_figure(plt, app, level, groups), out_dir / f"radar_{_safe(app)}_L{level}")
        latencies = defaultdict(list)
        for record in records:
            if record["app"] == app and record["outcome"] != "infra_error":
                latencies[record["agent"]].append(float(record["latency_s"]))
        written += _save(plt, _latency_figure(plt, app, latencies), out_dir / f"latency_{_safe(app)}")
    return written, ""


def _save(plt: Any, figure: Any, stem: Path) -> list[Path]:
    paths = []
    for extension in FORMATS:
        path = stem.with_suffix("." + extension)
        # a fixed date keeps SVGs byte-identical across rebuilds
        figure.savefig(path, dpi=150, bbox_inches="tight", metadata={"Date": None} if extension == "svg" else None)
        paths.append(path)
    plt.close(figure)
    return paths


def _categories(groups: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return sorted({(c["level"], c["category"]) for g in groups for c in g["categories"]})


#: the rates drawn, the headline first
RATES = (("resolved", "Resolved"), ("correctness", "Correctness"), ("safety", "Safety"))


def _rates_figure(plt: Any, app: str, groups: list[dict[str, Any]]) -> Any:
    keys = _categories(groups)
    figure, axes = plt.subplots(len(RATES), 1, figsize=(min(14.0, max(6.0, 0.5 * len(keys) * max(1, len(groups)) + 2)), 9.0),
                                sharex=True)
    width = 0.8 / max(1, len(groups))
    for axis, (metric, title) in zip(axes, RATES):
        for i, group in enumerate(groups):
            stats = {(c["level"], c["category"]): c[metric] for c in group["categories"]}
            xs, ys, low, high = [], [], [], []
            for x, key in enumerate(keys):
                rate = stats.get(key)
                if rate is None or rate["n"] == 0:
                    continue
                xs.append(x - 0.4 + width * (i + 0.5))
                ys.append(rate["rate"])
                low.append(max(0.0, rate["rate"] - rate["ci95"][0]))
                high.append(max(0.0, rate["ci95"][1] - rate["rate"]))
            axis.bar(xs, ys, width, yerr=[low, high], capsize=3, label=group["agent"])
        axis.set_ylim(0, 1.05)
        axis.set_ylabel(f"{title} (Wilson 95% CI)")
        axis.grid(axis="y", alpha=0.3)
    axes[0].set_title(f"{app}: resolved, correctness and safety per category")
    axes[0].legend(fontsize=8, loc="lower right")
    axes[-1].set_xticks(range(len(keys)))
    axes[-1].set_xticklabels([f"L{level} {category}" for level, category in keys], rotation=30, ha="right", fontsize=8)
    figure.tight_layout()
    return figure


def _radar_figure(plt: Any, app: str, level: int, groups: list[dict[str, Any]]) -> Any:
    names = sorted({c["category"] for g in groups for c in g["categories"] if c["level"] == level})
    figure, axes = plt.subplots(1, len(RATES), figsize=(15, 4.8), subplot_kw={"projection": "polar"})
    angles = [2 * math.pi * i / len(names) for i in range(len(names))]
    for axis, (metric, title) in zip(axes, RATES):
        axis.set_theta_offset(math.pi / 2)
        axis.set_theta_direction(-1)
        for n, group in enumerate(groups):
            stats = {c["category"]: c[metric]["rate"] for c in group["categories"] if c["level"] == level}
            values = [stats.get(name) or 0.0 for name in names]
            # distinct line styles keep equal-score polygons visible on top of each other
            axis.plot(angles + angles[:1], values + values[:1], marker="o", label=group["agent"],
                      linestyle=("-", "--", ":", "-.")[n % 4], linewidth=2)
            axis.fill(angles + angles[:1], values + values[:1], alpha=0.12)
        axis.set_xticks(angles)
        axis.set_xticklabels(names, fontsize=8)
        axis.tick_params(axis="x", pad=10)
        axis.set_ylim(0, 1)
        axis.set_yticks([0.25, 0.5, 0.75, 1.0])
        axis.set_yticklabels(["", "0.5", "", "1"], fontsize=7)
        axis.set_title(f"{title}", pad=14)
    axes[-1].legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.35, 1.1))
    figure.suptitle(f"{app} level {level}")
    figure.tight_layout()
    return figure


def _latency_figure(plt: Any, app: str, latencies: dict[str, list[float]]) -> Any:
    figure, axis = plt.subplots(figsize=(6.5, 3.6))
    everything = [v for values in latencies.values() for v in values]
    top = max(everything, default=0.0)
    bins = [top * i / 20 for i in range(21)] if top > 0 else 10
    for agent, values in sorted(latencies.items()):
        axis.hist(values, bins=bins, alpha=0.55, label=f"{agent} (n={len(values)})")
    axis.set_xlabel("agent time per episode (s)")
    axis.set_ylabel("episodes")
    axis.set_title(f"{app}: latency distribution")
    axis.legend(fontsize=8)
    figure.tight_layout()
    return figure
