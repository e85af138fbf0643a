"""Severity bands of the context usage ratio: normal, info, warning, danger, critical."""

from __future__ import annotations

from typing import Literal

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
