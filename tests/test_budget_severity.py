"""Severity bands of seed 001 at their edges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget import severity, usage_ratio
from dcp_plugin.budget.severity import SEVERITIES


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
