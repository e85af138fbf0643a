"""The warn/auto/hard compaction ladder computed from a model's context window."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

# Room kept at the top of the window for the summary itself; equal to the side query's
# output cap, which only holds because thinking is off for that query.
SUMMARY_RESERVE = 20_000
COMPACT_MAX_OUTPUT_TOKENS = SUMMARY_RESERVE
AUTOCOMPACT_BUFFER = 13_000
WARN_BUFFER = 20_000
HARD_BUFFER = 3_000
# Proportional floors (in tenths, so the arithmetic stays in integers): small windows
# are governed by these, large ones by the absolute buffers above.
AUTO_TENTHS = 7
WARN_TENTHS = 6

Tier = Literal["below-warn", "warn", "auto", "hard"]
TIERS: tuple[Tier, ...] = ("below-warn", "warn", "auto", "hard")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Token counts at which to warn, compact automatically, and force compaction."""

    warn: int
    auto: int
    hard: int
    effective_window: int
    window: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Thresholds:
        try:
            return cls(**{k: int(data[k]) for k in ("warn", "auto", "hard", "effective_window", "window")})
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"thresholds: expected integer keys warn, auto, hard, effective_window, window; {exc}") from exc


def compute_thresholds(window: int) -> Thresholds:
    """The ladder for a context window of ``window`` tokens.

    effective = window − 20K; auto = max(0.7·window, effective − 13K);
    warn = max(0.6·window, auto − 20K); hard = max(effective − 3K, auto).
    Proportional values are rounded down, so a threshold never fires later than the
    exact formula. Always warn ≤ auto ≤ hard; in windows up to about 76.7K hard
    collapses onto auto.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"context window must be a positive integer number of tokens, got {window!r}")
    effective = window - SUMMARY_RESERVE
    auto = max(window * AUTO_TENTHS // 10, effective - AUTOCOMPACT_BUFFER)
    warn = max(window * WARN_TENTHS // 10, auto - WARN_BUFFER)
    hard = max(effective - HARD_BUFFER, auto)
    return Thresholds(warn=warn, auto=auto, hard=hard, effective_window=effective, window=window)


def tier(tokens: int, thresholds: Thresholds) -> Tier:
    """Which rung of the ladder ``tokens`` has reached (hard is checked first)."""
    if tokens >= thresholds.hard:
        return "hard"
    if tokens >= thresholds.auto:
        return "auto"
    if tokens >= thresholds.warn:
        return "warn"
    return "below-warn"
