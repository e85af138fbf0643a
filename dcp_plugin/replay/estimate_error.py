"""The estimator's error per request: how far the replay's own prompt estimate lands from the reported prompt."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# The one definition, shown by `dcp replay`, its JSON and `python -m benchmarks.estimate_accuracy`.
DEFINITION = (
    "|estimate - reported| / reported per request whose answer reports usage, where estimate is the "
    "replay's prompt without the plugin and without any provider anchor (the prompt overhead learned "
    "from the first reported usage + the fixed-ratio estimate of the messages sent, a step counting at "
    "least the output it reported) and reported is "
    "input + cache read + cache write of the answer; the request the overhead was learned from is left out"
)


@dataclass(frozen=True, slots=True)
class EstimateError:
    """Relative errors of the pure estimate, one per request that has a reported prompt to compare with."""

    errors: tuple[float, ...] = ()

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int | None]]) -> EstimateError:
        """From ``(estimate, reported)`` per request; requests without a reported prompt are skipped."""
        return cls(tuple(abs(estimate - reported) / reported for estimate, reported in pairs if reported))

    def plus(self, other: EstimateError) -> EstimateError:
        return EstimateError(self.errors + other.errors)

    @property
    def requests(self) -> int:
        return len(self.errors)

    @property
    def median(self) -> float | None:
        return statistics.median(self.errors) if self.errors else None

    @property
    def p90(self) -> float | None:
        """The 90th percentile by nearest rank: the smallest error at least 90 % of the requests reach or beat."""
        if not self.errors:
            return None
        ordered = sorted(self.errors)
        return ordered[math.ceil(0.9 * len(ordered)) - 1]

    def to_dict(self) -> dict[str, Any]:
        median, p90 = self.median, self.p90
        return {
            "requests_with_reported_usage": self.requests,
            "median_percent": None if median is None else round(100 * median, 2),
            "p90_percent": None if p90 is None else round(100 * p90, 2),
        }

    def summary(self) -> str:
        """One sentence for a report: median and p90 in percent, and over how many requests."""
        median, p90 = self.median, self.p90
        if median is None or p90 is None:
            return "Estimator error per request: no request with reported usage to compare with."
        return (
            f"Estimator error per request: median {100 * median:.1f} %, p90 {100 * p90:.1f} % "
            f"(|estimate - reported| / reported, over {self.requests:,} requests with reported usage)."
        )
