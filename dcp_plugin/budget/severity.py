"""Severity bands of the context usage ratio: normal, info, warning, danger, critical."""

from __future__ import annotations

from typing import Literal

from dcp_plugin.budget.thresholds import Thresholds, Tier

Severity = Literal["normal", "info", "warning", "danger", "critical"]
SEVERITIES: tuple[Severity, ...] = ("normal", "info", "warning", "danger", "critical")

# Lower edge of each band above "normal"; a ratio exactly on an edge belongs to the
# higher band.
BANDS: tuple[tuple[float, Severity], ...] = (
    (0.97, "critical"),
    (0.92, "danger"),
    (0.85, "warning"),
    (0.70, "info"),
)


def severity(ratio: float) -> Severity:
    """Band of a usage ratio (0–1, may exceed 1): <70 % normal, <85 % info, <92 % warning,
    <97 % danger, else critical. NaN counts as normal (nothing is known)."""
    for edge, name in BANDS:
        if ratio >= edge:
            return name
    return "normal"


def usage_ratio(tokens: int, limit: int) -> float:
    """tokens / limit, 0.0 for a non-positive limit."""
    return tokens / limit if limit > 0 else 0.0


# The band of each rung of the ladder: with a window known, the severity says where the ladder stands.
SEVERITY_OF_TIER: dict[Tier, Severity] = {"below-warn": "normal", "warn": "info", "auto": "warning", "hard": "danger"}


def ladder_severity(tokens: int, thresholds: Thresholds) -> Severity:
    """The band of the rung ``tokens`` reached: normal below warn, info from warn, warning from auto,
    danger from hard, critical once the effective window (what is left beside the summary) is full.

    One scale with the ladder ``/dcp context`` shows, at every window: a line saying "hard" never
    sits beside a severity saying "info".
    """
    from dcp_plugin.budget.thresholds import tier

    if tokens >= thresholds.effective_window:
        return "critical"
    return SEVERITY_OF_TIER[tier(tokens, thresholds)]
