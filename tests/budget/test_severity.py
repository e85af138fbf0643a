"""Severity bands of seed 001 at their edges."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget import severity, usage_ratio
from dcp_plugin.budget.severity import SEVERITIES
from dcp_plugin.budget.snapshot import build_snapshot


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        (0, "normal"), (69, "normal"), (70, "info"), (84, "info"), (85, "warning"),
        (91, "warning"), (92, "danger"), (96, "danger"), (97, "critical"), (100, "critical"),
        (150, "critical"),
    ],
)
def test_band_of_a_percentage(used: int, expected: str) -> None:
    assert severity(usage_ratio(used, 100)) == expected


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(139_999, "normal"), (140_000, "info"), (169_999, "info"), (170_000, "warning"),
     (183_999, "warning"), (184_000, "danger"), (193_999, "danger"), (194_000, "critical")],
)
def test_band_edges_on_a_200k_window(tokens: int, expected: str) -> None:
    assert severity(usage_ratio(tokens, 200_000)) == expected


def test_ratio_of_a_zero_limit_is_zero() -> None:
    assert usage_ratio(5_000, 0) == 0.0


@given(st.floats(min_value=0, max_value=2), st.floats(min_value=0, max_value=2))
def test_severity_never_decreases_as_the_ratio_grows(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert SEVERITIES.index(severity(lo)) <= SEVERITIES.index(severity(hi))


@settings(max_examples=400, deadline=None)
@given(st.integers(8_000, 1_000_000), st.floats(0.0, 1.2))
def test_severity_and_ladder_agree_at_every_window(window: int, share: float) -> None:
    tokens = int(window * share)
    snap = build_snapshot(tokens, None, window)
    assert snap.thresholds is not None and snap.tier is not None
    expected = {"below-warn": "normal", "warn": "info", "auto": "warning", "hard": "danger"}[snap.tier]
    full = tokens >= snap.thresholds.effective_window
    assert snap.severity == ("critical" if full else expected)


@settings(max_examples=200, deadline=None)
@given(st.integers(8_000, 1_000_000), st.integers(0, 1_200_000), st.integers(0, 1_200_000))
def test_severity_never_falls_as_the_context_grows(window: int, a: int, b: int) -> None:
    low, high = sorted((a, b))
    rank = SEVERITIES.index
    assert rank(build_snapshot(low, None, window).severity) <= rank(build_snapshot(high, None, window).severity)


def test_at_26721_of_32k_the_severity_says_what_the_hard_rung_says() -> None:
    snap = build_snapshot(26_721, None, 32_000)
    assert snap.tier == "hard"
    assert snap.severity == "critical"  # past the effective window of 26,666
