"""The warn/auto/hard compaction ladder computed from a model's context window."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from mypy_extensions import mypyc_attr

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
# In a small window the absolute reserves would eat it (32K minus 20K for a summary leaves 12K,
# below the warning line): there the summary reserve is a sixth of the window and the hard
# buffer a fortieth. Both reach their absolute values at 120K, so every window from 120K up
# keeps the ladder it always had.
RESERVE_DIVISOR = 6
HARD_DIVISOR = 40

Tier = Literal["below-warn", "warn", "auto", "hard"]
TIERS: tuple[Tier, ...] = ("below-warn", "warn", "auto", "hard")


@mypyc_attr(allow_interpreted_subclasses=True)
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


def summary_reserve(window: int) -> int:
    """Tokens kept at the top of ``window`` for a summary: 20K, or a sixth of a window under 120K."""
    return min(SUMMARY_RESERVE, -(-window // RESERVE_DIVISOR))


def compute_thresholds(window: object) -> Thresholds:
    """The ladder for a context window of ``window`` tokens.

    reserve = min(20K, W/6); effective = W − reserve; auto = max(0.7·W, effective − 13K);
    warn = max(0.6·W, auto − 20K); hard = max(W − min(23K, W/6 + W/40), auto).
    Proportional values are rounded so a threshold never fires later than the exact
    formula. Always warn ≤ auto ≤ hard ≤ effective ≤ window, and from 8K up the three
    rungs are apart; 200K gives warn 147K, auto 167K, hard 177K, effective 180K.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"context window must be a positive integer number of tokens, got {window!r}")
    effective = window - summary_reserve(window)
    auto = max(window * AUTO_TENTHS // 10, effective - AUTOCOMPACT_BUFFER)
    warn = max(window * WARN_TENTHS // 10, auto - WARN_BUFFER)
    # W − min(23K, W/6 + W/40) in one rounding, so hard never steps back as the window grows.
    gap = -(-window * (HARD_DIVISOR + RESERVE_DIVISOR) // (HARD_DIVISOR * RESERVE_DIVISOR))
    hard = max(window - min(SUMMARY_RESERVE + HARD_BUFFER, gap), auto)
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
