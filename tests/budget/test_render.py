"""`/dcp context` ladder lines: effective window, warn, auto, hard with the marker on the tier reached, then severity."""

from __future__ import annotations

from dcp_plugin.budget import EstimateBasis, build_snapshot, ladder_lines


def test_four_ladder_lines_and_a_severity_line_with_the_marker_at_auto() -> None:
    snap = build_snapshot(171_234, 170_000, 200_000, "exact", "claude-sonnet-4", basis=EstimateBasis("reported"))
    assert ladder_lines(snap) == [
        "Effective window      180,000  (window 200,000 - 20,000 kept for the summary)",
        "Warn threshold        147,000",
        "Auto threshold        167,000  <- current",
        "Hard threshold        177,000",
        "Severity: warning (85.6% of 200,000 tokens, limit from exact)",
    ]


def test_marker_sits_on_the_hard_line_past_hard() -> None:
    lines = ladder_lines(build_snapshot(190_000, None, 200_000))
    assert lines[3].endswith("<- current")
    assert "<-" not in lines[1] + lines[2]


def test_marker_sits_on_the_warn_line_between_warn_and_auto() -> None:
    lines = ladder_lines(build_snapshot(150_000, None, 200_000))
    assert [line.endswith("<- current") for line in lines[1:4]] == [True, False, False]


def test_below_warn_the_marker_gets_its_own_line_and_the_warn_line_none() -> None:
    lines = ladder_lines(build_snapshot(20_000, 19_000, 200_000, basis=EstimateBasis("reported")))
    assert lines[1] == "Below warn                     <- current"
    assert lines[2] == "Warn threshold        147,000"
    assert lines[5].startswith("Severity: normal (10.0%")


def test_the_ladder_repeats_no_token_total() -> None:
    lines = ladder_lines(build_snapshot(171_234, 170_000, 200_000, basis=EstimateBasis("reported")))
    assert not any("171,234" in line or "170,000" in line for line in lines)


def test_without_a_context_limit_the_ladder_is_unknown() -> None:
    lines = ladder_lines(build_snapshot(500, None, 0))
    assert lines[:4] == [
        "Effective window: unknown (no context limit)",
        "Warn threshold:   unknown",
        "Auto threshold:   unknown",
        "Hard threshold:   unknown",
    ]
