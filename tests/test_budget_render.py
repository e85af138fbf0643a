"""`/dcp context` ladder lines: effective window, warn, auto, hard with a marker, then severity."""

from __future__ import annotations

from dcp_plugin.budget import build_snapshot, ladder_lines


def test_four_ladder_lines_and_a_severity_line_with_the_marker_at_auto() -> None:
    snap = build_snapshot(171_234, 170_000, 200_000, "exact", "claude-sonnet-4", estimate_path="reported")
    assert ladder_lines(snap) == [
        "Effective window      180,000  (window 200,000 - 20,000 kept for the summary)",
        "Warn threshold        147,000",
        "Auto threshold        167,000  <- current (171,234 tokens)",
        "Hard threshold        177,000",
        "Severity: warning (85.6% of 200,000 tokens, limit from exact)",
    ]


def test_marker_sits_on_the_hard_line_past_hard() -> None:
    lines = ladder_lines(build_snapshot(190_000, None, 200_000))
    assert lines[3].endswith("<- current (190,000 tokens, estimated)")
    assert "<-" not in lines[1] + lines[2]


def test_below_warn_the_marker_says_so_on_the_warn_line() -> None:
    lines = ladder_lines(build_snapshot(20_000, 19_000, 200_000, estimate_path="reported"))
    assert lines[1].endswith("<- current: below warn (20,000 tokens)")
    assert lines[4].startswith("Severity: normal (10.0%")


def test_without_a_context_limit_the_ladder_is_unknown() -> None:
    lines = ladder_lines(build_snapshot(500, None, 0))
    assert lines[:4] == [
        "Effective window: unknown (no context limit)",
        "Warn threshold:   unknown",
        "Auto threshold:   unknown",
        "Hard threshold:   unknown",
    ]
