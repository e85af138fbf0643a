"""Context tips follow the ladder: warn ≤ t < auto, auto ≤ t < hard, t ≥ hard; fallback without it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget import compute_thresholds, context_tip, tip_text
from dcp_plugin.budget.tips import TipId

T = compute_thresholds(200_000)


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(146_999, None), (147_000, "context-warn"), (166_999, "context-warn"), (167_000, "context-high"),
     (176_999, "context-high"), (177_000, "context-critical")],
)
def test_tip_at_each_threshold_edge(tokens: int, expected: str | None) -> None:
    assert context_tip(tokens, T) == expected


def test_tips_fire_in_order_as_tokens_climb_past_a_failing_compaction() -> None:
    seen: list[str] = []
    for tokens in range(140_000, 190_001, 1_000):
        tip = context_tip(tokens, T)
        if tip and (not seen or seen[-1] != tip):
            seen.append(tip)
    assert seen == ["context-warn", "context-high", "context-critical"]


def test_a_small_window_has_every_band() -> None:
    t = compute_thresholds(32_000)
    tips = {context_tip(n, t) for n in range(0, 40_000, 50)}
    assert {"context-warn", "context-high", "context-critical"} <= tips


@given(st.integers(min_value=1, max_value=5_000_000), st.integers(min_value=0, max_value=6_000_000))
def test_exactly_one_band_matches_and_it_agrees_with_the_thresholds(window: int, tokens: int) -> None:
    t = compute_thresholds(window)
    tip = context_tip(tokens, t)
    bands = {
        "context-warn": t.warn <= tokens < t.auto,
        "context-high": t.auto <= tokens < t.hard,
        "context-critical": tokens >= t.hard,
    }
    assert [name for name, hit in bands.items() if hit] == ([tip] if tip else [])


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [(0.5, None), (0.70, "context-warn"), (0.85, "context-high"), (0.97, "context-critical")],
)
def test_without_thresholds_the_ratio_decides(ratio: float, expected: str | None) -> None:
    assert context_tip(0, None, ratio) == expected


def test_without_thresholds_or_ratio_there_is_no_tip() -> None:
    assert context_tip(10**9, None) is None


def test_critical_tip_says_to_compact_before_the_window_overflows() -> None:
    assert "compact the session before it overflows" in tip_text("context-critical", 180_000, 200_000)


def test_tip_text_shows_the_numbers() -> None:
    assert "150,000 of 200,000 tokens" in tip_text("context-warn", 150_000, 200_000)


@pytest.mark.parametrize("tip", ["context-warn", "context-high"])
def test_a_tip_below_the_hard_limit_advises_compacting_and_never_says_the_host_compacts(tip: TipId) -> None:
    text = tip_text(tip, 24_000, 32_000)
    assert "advised" in text
    assert "automatic" not in text and "keeps the session going" not in text and "will be due" not in text
