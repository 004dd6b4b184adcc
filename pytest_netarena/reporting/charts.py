"""report.html's inline SVG charts (radar, bars, histograms) and the escaping and percentages they share."""

from __future__ import annotations

import math
from html import escape
from typing import Any


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


DASHES = ("", "6 3", "2 3", "8 3 2 3")  # overlapping polygons (equal scores) stay visible


def _svg_start(title: str, width: float, height: float) -> list[str]:
    """A chart's opening tag and its title, centred."""
    return [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
            f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="14" font-weight="600">{_e(title)}</text>']


def radar_svg(title: str, axes: list[str], series: list[tuple[str, str, list[float | None]]], size: int = 300) -> str:
    """A radar (spider) chart, one polygon per agent; with fewer than three axes, horizontal bars instead."""
    if len(axes) < 3:
        return bars_svg(title, axes, series)
    margin = 10 + 6 * max(len(name) for name in axes)  # room for the axis labels left and right
    width, height = size + 2 * margin, size + 40
    cx, cy, radius = width / 2, size / 2 + 34, size / 2 - 28
    parts = _svg_start(title, width, height)

    def point(i: int, r: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / len(axes)
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    for ring in (0.25, 0.5, 0.75, 1.0):
        corners = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, radius * ring) for i in range(len(axes))))
        parts.append(f'<polygon points="{corners}" fill="none" stroke="#cfd8dc" stroke-width="1"/>')
        parts.append(f'<text x="{cx + 4:.1f}" y="{cy - radius * ring - 3:.1f}" font-size="9" fill="#90a4ae">{int(ring * 100)}%</text>')
    for i, name in enumerate(axes):
        x, y = point(i, radius)
        lx, ly = point(i, radius + 10)
        anchor = "middle" if abs(lx - cx) < 8 else ("start" if lx > cx else "end")
        dy = -4 if ly < cy - 8 else (12 if ly > cy + 8 else 4)
        parts.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#cfd8dc"/>')
        parts.append(f'<text x="{lx:.1f}" y="{ly + dy:.1f}" text-anchor="{anchor}" font-size="11">{_e(name)}</text>')
    for n, (agent, color, values) in enumerate(series):
        corners = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, radius * (v or 0.0)) for i, v in enumerate(values)))
        dash = DASHES[n % len(DASHES)]
        parts.append(f'<polygon points="{corners}" fill="{color}" fill-opacity="0.10" stroke="{color}" stroke-width="2"'
                     + (f' stroke-dasharray="{dash}"' if dash else "") + f'><title>{_e(agent)}: '
                     + _e(", ".join(f"{a} {pct(v)}" for a, v in zip(axes, values))) + "</title></polygon>")
        for i, value in enumerate(values):
            if value is not None:
                x, y = point(i, radius * value)
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"><title>{_e(agent)} · {_e(axes[i])}: {pct(value)}</title></circle>')
    return "".join(parts) + "</svg>"


def bars_svg(title: str, labels: list[str], series: list[tuple[str, str, list[float | None]]], width: int = 340) -> str:
    row = 14 * max(1, len(series)) + 10
    left, height = 110, 30 + row * len(labels) + 20
    span = width - left - 46
    parts = _svg_start(title, width, height)
    for i, label in enumerate(labels):
        top = 28 + i * row
        parts.append(f'<text x="{left - 6}" y="{top + row / 2:.1f}" text-anchor="end" font-size="11">{_e(label)}</text>')
        for j, (agent, color, values) in enumerate(series):
            value = values[i]
            if value is None:
                continue
            parts.append(f'<rect x="{left}" y="{top + j * 14}" width="{span * value:.1f}" height="11" fill="{color}" opacity="0.8">'
                         f'<title>{_e(agent)} · {_e(label)}: {pct(value)}</title></rect>'
                         f'<text x="{left + span * value + 4:.1f}" y="{top + j * 14 + 10}" font-size="10">{pct(value)}</text>')
    parts.append(f'<line x1="{left}" x2="{left}" y1="26" y2="{height - 18}" stroke="#90a4ae"/>')
    return "".join(parts) + "</svg>"


def histogram_svg(title: str, unit: str, series: list[tuple[str, str, list[float]]], width: int = 420, height: int = 220) -> str:
    values = [v for _, _, vs in series for v in vs]
    parts = _svg_start(title, width, height)
    if not values:
        return "".join(parts) + f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" fill="#90a4ae">no data</text></svg>'
    low, high = min(values), max(values)
    bins = 16
    step = (high - low) / bins if high > low else 1.0
    counts = []
    for _, _, vs in series:
        bucket = [0] * bins
        for v in vs:
            bucket[min(bins - 1, int((v - low) / step))] += 1
        counts.append(bucket)
    top = max(max(c) for c in counts) or 1
    left, bottom, plot_w, plot_h = 40, height - 34, width - 56, height - 64
    bar_w = plot_w / bins / max(1, len(series))
    for j, ((agent, color, _), bucket) in enumerate(zip(series, counts)):
        for i, count in enumerate(bucket):
            if count:
                h = plot_h * count / top
                x = left + i * plot_w / bins + j * bar_w
                parts.append(f'<rect x="{x:.1f}" y="{bottom - h:.1f}" width="{max(1.0, bar_w - 1):.1f}" height="{h:.1f}" fill="{color}" opacity="0.8">'
                             f'<title>{_e(agent)}: {count} episodes in [{low + i * step:.4g}, {low + (i + 1) * step:.4g}) {_e(unit)}</title></rect>')
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{bottom}" y2="{bottom}" stroke="#90a4ae"/>'
                 f'<line x1="{left}" x2="{left}" y1="{bottom}" y2="{bottom - plot_h}" stroke="#90a4ae"/>'
                 f'<text x="{left - 4}" y="{bottom - plot_h + 4}" text-anchor="end" font-size="10">{top}</text>'
                 f'<text x="{left - 4}" y="{bottom}" text-anchor="end" font-size="10">0</text>'
                 f'<text x="{left}" y="{bottom + 14}" font-size="10">{low:.4g}</text>'
                 f'<text x="{left + plot_w}" y="{bottom + 14}" text-anchor="end" font-size="10">{high:.4g}</text>'
                 f'<text x="{left + plot_w / 2}" y="{bottom + 26}" text-anchor="middle" font-size="11">{_e(unit)}</text>')
    return "".join(parts) + "</svg>"
