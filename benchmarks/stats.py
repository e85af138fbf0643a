"""Summaries of repeated timings: median and p95 (nearest rank), in milliseconds."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest sample with ``fraction`` of the samples at or below it."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summary(samples_ms: Sequence[float]) -> dict[str, float | int]:
    """Median, p95, min and the number of samples, rounded to microseconds."""
    if not samples_ms:
        return {"median": 0.0, "p95": 0.0, "min": 0.0, "n": 0}
    return {
        "median": round(statistics.median(samples_ms), 3),
        "p95": round(percentile(samples_ms, 0.95), 3),
        "min": round(min(samples_ms), 3),
        "n": len(samples_ms),
    }
