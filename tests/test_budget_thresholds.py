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


def test_32k_window_falls_back_to_proportions_and_hard_collapses_onto_auto() -> None:
    assert ladder(32_000) == (19_200, 22_400, 22_400, 12_000)


def test_10k_window_with_negative_absolute_values_still_gives_a_ladder() -> None:
    assert ladder(10_000) == (6_000, 7_000, 7_000, -10_000)


def test_proportional_values_round_down() -> None:
    assert ladder(32_768) == (19_660, 22_937, 22_937, 12_768)


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
    [(109_999, 76_999), (110_000, 77_000), (110_001, 77_001)],
)
def test_auto_is_continuous_where_proportional_meets_absolute(window: int, expected_auto: int) -> None:
    # 0.7·W == W − 33K at W = 110K
    assert compute_thresholds(window).auto == expected_auto


@pytest.mark.parametrize(
    ("window", "expected_warn"),
    [(132_499, 79_499), (132_500, 79_500), (132_501, 79_501)],
)
def test_warn_is_continuous_where_proportional_meets_absolute(window: int, expected_warn: int) -> None:
    # 0.6·W == (W − 33K) − 20K at W = 132.5K
    assert compute_thresholds(window).warn == expected_warn


def test_hard_separates_from_auto_just_above_76_7k() -> None:
    assert compute_thresholds(76_600).hard == compute_thresholds(76_600).auto
    t = compute_thresholds(80_000)
    assert t.hard == 57_000 and t.auto == 56_000


def test_tier_checks_hard_first_so_a_collapsed_window_reports_hard() -> None:
    t = compute_thresholds(32_000)
    assert tier(22_400, t) == "hard"


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
