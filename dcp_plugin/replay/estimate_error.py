"""The estimator's error per request: how far the replay's own prompt estimate lands from the reported prompt."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcp_plugin.replay.coverage import SessionReports

# The one definition, shown by `dcp replay`, its JSON and `python -m benchmarks.estimate_accuracy`.
DEFINITION = (
    "|estimate - reported| / reported per request whose answer's usage counts some of the messages, where "
    "reported is input + cache read + cache write of the answer and estimate is the replay's own estimate "
    "of what that usage counts, without the plugin and without any provider anchor: the prompt overhead of "
    "the history sent (learned from its first such report, which is left out) + the fixed-ratio estimate "
    "of the messages counted, a step counting at least the output it reported. A report that records no "
    "cache write and less than half of what was added as input lost its cache writes: it counts the "
    "prefix read from the cache, the previous reported request's messages. Reports that count no message, "
    "or without cache writes read less than that prefix (a cache miss), are left out"
)


@dataclass(frozen=True, slots=True)
class EstimateError:
    """Relative errors of the pure estimate, one per request that has a reported prompt to compare with."""

    errors: tuple[float, ...] = ()
    partial: int = 0  # scored reports without cache writes (scored against the prefix they read)
    unscored: int = 0  # reports left out: nothing the replay estimates, or an overhead's source

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int | None]], partial: int = 0, unscored: int = 0) -> EstimateError:
        """From ``(estimate, reported)`` per request; requests without a reported prompt are skipped."""
        errors = tuple(abs(estimate - reported) / reported for estimate, reported in pairs if reported)
        return cls(errors, partial, unscored)

    @classmethod
    def of_reports(cls, reports: SessionReports) -> EstimateError:
        """From a session's scored reports (:func:`dcp_plugin.replay.coverage.session_reports`)."""
        scored = [s for s in reports.scored if s is not None]
        return cls.of(((s.estimate, s.reported) for s in scored), sum(s.partial for s in scored), reports.unscored)

    def plus(self, other: EstimateError) -> EstimateError:
        return EstimateError(self.errors + other.errors, self.partial + other.partial, self.unscored + other.unscored)

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
            "without_cache_writes": self.partial,
            "reports_left_out": self.unscored,
            "median_percent": None if median is None else round(100 * median, 2),
            "p90_percent": None if p90 is None else round(100 * p90, 2),
        }

    def summary(self) -> str:
        """One sentence for a report: median and p90 in percent, and over how many requests."""
        median, p90 = self.median, self.p90
        if median is None or p90 is None:
            return "Estimator error per request: no request with reported usage to compare with."
        partial = (
            f"; {self.partial:,} of them recorded no cache write and are scored against the prefix they read"
            if self.partial else ""
        )
        left_out = f"; {self.unscored:,} report{'' if self.unscored == 1 else 's'} left out" if self.unscored else ""
        return (
            f"Estimator error per request: median {100 * median:.1f} %, p90 {100 * p90:.1f} % "
            f"(|estimate - reported| / reported, over {self.requests:,} requests with reported usage{partial}{left_out})."
        )
