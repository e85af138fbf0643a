"""The warn/auto/hard ladder of seed 000 and the tier a token count has reached."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget import Thresholds, compute_thresholds, tier


def ladder(window: int) -> tuple[int, int, int, int]:
    t = compute_thresholds(window)
    return t.warn, t.auto, t.hard, t.effective_window


def test_200k_window_matches_the_design_card() -> None:
    assert ladder(200_000) == (147_000, 167_000, 177_000, 180_000)


def test_1m_window_is_governed_by_the_absolute_buffers() -> None:
    assert ladder(1_000_000) == (947_000, 967_000, 977_000, 980_000)


def test_128k_window_is_hybrid_warn_proportional_auto_and_hard_absolute() -> None:
    assert ladder(128_000) == (76_800, 95_000, 105_000, 108_000)


def test_32k_window_keeps_a_sixth_for_the_summary_and_the_warning_below_the_usable_window() -> None:
    # reserve ⌈32,000 / 6⌉ = 5,334; hard 32,000 − ⌈32,000 · 23/120⌉ = 25,866
    assert ladder(32_000) == (19_200, 22_400, 25_866, 26_666)


def test_8k_window_still_gives_three_separate_rungs() -> None:
    assert ladder(8_000) == (4_800, 5_600, 6_466, 6_666)


def test_proportional_values_round_towards_firing_earlier() -> None:
    # reserve ⌈32,768 / 6⌉ = 5,462; hard 32,768 − ⌈32,768 · 23/120⌉ = 26,487
    assert ladder(32_768) == (19_660, 22_937, 26_487, 27_306)


@given(st.integers(min_value=8_000, max_value=1_000_000))
def test_from_8k_to_1m_every_rung_is_apart_and_inside_the_usable_window(window: int) -> None:
    t = compute_thresholds(window)
    assert t.warn < t.auto < t.hard <= t.effective_window < t.window
    # the reserve and the gap above hard stay at most their absolute sizes
    assert t.window - t.effective_window <= 20_000
    assert t.effective_window - t.hard <= 3_000


@given(st.integers(min_value=120_000, max_value=20_000_000))
def test_from_120k_up_the_ladder_is_the_absolute_one(window: int) -> None:
    t = compute_thresholds(window)
    assert t.effective_window == window - 20_000
    assert t.hard == max(window - 23_000, t.auto)


@pytest.mark.parametrize("window", [0, -5, 1.5, True, None])
def test_a_window_that_is_not_a_positive_integer_is_rejected(window: object) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        compute_thresholds(window)  # type: ignore[arg-type]


@given(st.integers(min_value=1, max_value=20_000_000))
def test_warn_auto_hard_are_always_ordered(window: int) -> None:
    t = compute_thresholds(window)
    assert t.warn <= t.auto <= t.hard


@given(st.integers(min_value=1, max_value=20_000_000))
def test_every_threshold_grows_with_the_window_by_at_most_one_per_token(window: int) -> None:
    a, b = compute_thresholds(window), compute_thresholds(window + 1)
    for field in ("warn", "auto", "hard", "effective_window"):
        step = getattr(b, field) - getattr(a, field)
        assert 0 <= step <= 1


@pytest.mark.parametrize(
    ("window", "expected_auto"),
    [(97_499, 68_249), (97_500, 68_250), (97_501, 68_250), (97_502, 68_251)],
)
def test_auto_is_continuous_where_proportional_meets_absolute(window: int, expected_auto: int) -> None:
    # 0.7·W == 5/6·W − 13K at W = 97.5K
    assert compute_thresholds(window).auto == expected_auto


@pytest.mark.parametrize(
    ("window", "expected_warn"),
    [(132_499, 79_499), (132_500, 79_500), (132_501, 79_501)],
)
def test_warn_is_continuous_where_proportional_meets_absolute(window: int, expected_warn: int) -> None:
    # 0.6·W == (W − 33K) − 20K at W = 132.5K
    assert compute_thresholds(window).warn == expected_warn


def test_hard_stays_above_auto_where_the_absolute_ladder_would_fold_it() -> None:
    t = compute_thresholds(76_600)
    assert (t.auto, t.hard) == (53_620, 61_918)


def test_tier_checks_hard_first_so_a_rung_shared_by_auto_and_hard_reports_hard() -> None:
    t = Thresholds(warn=10, auto=20, hard=20, effective_window=30, window=40)
    assert tier(20, t) == "hard"


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(0, "below-warn"), (146_999, "below-warn"), (147_000, "warn"), (166_999, "warn"),
     (167_000, "auto"), (176_999, "auto"), (177_000, "hard"), (500_000, "hard")],
)
def test_tier_at_each_edge_of_the_200k_ladder(tokens: int, expected: str) -> None:
    assert tier(tokens, compute_thresholds(200_000)) == expected


def test_thresholds_round_trip_through_a_dict() -> None:
    t = compute_thresholds(200_000)
    assert Thresholds.from_dict(t.to_dict()) == t


def test_malformed_thresholds_dict_names_the_keys() -> None:
    with pytest.raises(ValueError, match="warn, auto, hard"):
        Thresholds.from_dict({"warn": 1})
