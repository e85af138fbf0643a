"""A line chart as plain inline SVG: series over the requests of a session, with marked requests.

Plain SVG written here rather than a plotting library: the report must open offline with no
script or font from the network, the project takes no dependency for it, and a few polylines
per chart keep even a long session's report small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

# At most this many points per line: a chart is ~900 px wide, more points draw nothing more,
# and a session of 50,000 requests would otherwise weigh megabytes per chart.
MAX_POINTS = 1200
WIDTH, HEIGHT = 900, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 14, 30


@dataclass(frozen=True, slots=True)
class Series:
    """One line: a value per request."""

    key: str
    label: str
    values: Sequence[float]
    color: str
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Markers:
    """Requests marked on the chart by a short tick (``band``: top, bottom, or a full-height line)."""

    key: str
    label: str
    requests: Sequence[int]  # 0-based request indices
    color: str
    band: str = "bottom"


def sample_indices(count: int, limit: int = MAX_POINTS) -> list[int]:
    """Which of ``count`` points a line draws: all of them up to ``limit``, else ``limit`` evenly spread, first and last kept."""
    if count <= limit:
        return list(range(count))
    return [round(i * (count - 1) / (limit - 1)) for i in range(limit)]


def compact(value: float) -> str:
    """An axis label: 1.2M, 350K, 42."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= size:
            return f"{value / size:.2f}".rstrip("0").rstrip(".") + suffix
    return f"{value:.0f}"


def _nice_top(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = float(10 ** (len(str(int(value))) - 1))
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10.0 * magnitude


def line_chart(key: str, title: str, count: int, series: Sequence[Series], markers: Sequence[Markers] = ()) -> str:
    """The chart as an ``<svg>`` element; each line carries ``data-points``, the number of points it draws."""
    indices = sample_indices(count)
    top = _nice_top(max((max(s.values, default=0.0) for s in series), default=0.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(index: int) -> float:
        return LEFT + (plot_w * index / (count - 1) if count > 1 else plot_w / 2)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / top)

    parts = [
        f'<svg class="chart" data-chart="{key}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in range(5):
        value = top * tick / 4
        ty = y(value)
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}"/>')
        parts.append(f'<text class="axis" x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{compact(value)}</text>')
    for tick in range(6):
        index = round((count - 1) * tick / 5) if count > 1 else 0
        parts.append(
            f'<text class="axis" x="{x(index):.1f}" y="{HEIGHT - 10}" text-anchor="middle">{index + 1}</text>'
        )
    for mark in markers:
        y1, y2 = {"top": (TOP, TOP + 10), "bottom": (TOP + plot_h - 10, TOP + plot_h)}.get(mark.band, (TOP, TOP + plot_h))
        ticks = "".join(
            f'<line x1="{x(r):.1f}" x2="{x(r):.1f}" y1="{y1}" y2="{y2}"><title>request {r + 1}: {escape(mark.label)}</title></line>'
            for r in mark.requests
        )
        parts.append(
            f'<g class="markers" data-markers="{mark.key}" data-count="{len(mark.requests)}" stroke="{mark.color}">{ticks}</g>'
        )
    for s in series:
        points = " ".join(f"{x(i):.1f},{y(s.values[i]):.1f}" for i in indices)
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        parts.append(
            f'<polyline class="series" data-series="{escape(s.key)}" data-points="{len(indices)}" fill="none" '
            f'stroke="{s.color}" stroke-width="1.6"{dash} points="{points}"><title>{escape(s.label)}</title></polyline>'
        )
    parts.append("</svg>")
    return "".join(parts)


def legend(series: Sequence[Series], markers: Sequence[Markers] = ()) -> str:
    """The chart's key as HTML: a swatch per line and per kind of mark."""
    items = [
        f'<span class="key"><span class="swatch{" dashed" if s.dashed else ""}" style="border-color:{s.color}"></span>'
        f"{escape(s.label)}</span>"
        for s in series
    ]
    items += [
        f'<span class="key"><span class="tick" style="background:{m.color}"></span>{escape(m.label)} ({len(m.requests):,})</span>'
        for m in markers
    ]
    return f'<div class="legend">{"".join(items)}</div>'
