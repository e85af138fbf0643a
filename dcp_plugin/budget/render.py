"""Plain-text lines for `/dcp context`: the threshold ladder with the current tier, and the severity."""

from __future__ import annotations

from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.budget.thresholds import SUMMARY_RESERVE

MARKER = "<- current"
_LABEL_WIDTH = 17


def _line(label: str, value: int, note: str = "") -> str:
    text = f"{label:<{_LABEL_WIDTH}}{value:>12,}"
    return f"{text}  {note}" if note else text


def ladder_lines(snapshot: ContextSnapshot) -> list[str]:
    """Effective window, warn, auto and hard (marker on the tier reached), then severity."""
    t = snapshot.thresholds
    tokens = snapshot.estimated_input_tokens
    estimated = "" if snapshot.estimate_path == "reported" else ", estimated"
    here = f"{MARKER} ({tokens:,} tokens{estimated})"
    severity = (
        f"Severity: {snapshot.severity} ({snapshot.ratio * 100:.1f}% of {snapshot.context_limit:,}"
        f" tokens, limit from {snapshot.limit_source})"
    )
    if t is None:
        return [
            "Effective window: unknown (no context limit)",
            "Warn threshold:   unknown",
            "Auto threshold:   unknown",
            "Hard threshold:   unknown",
            severity,
        ]
    marks = {"warn": "", "auto": "", "hard": ""}
    if snapshot.tier in marks:
        marks[snapshot.tier] = here
    else:
        marks["warn"] = f"{MARKER}: below warn ({tokens:,} tokens{estimated})"
    return [
        _line("Effective window", t.effective_window, f"(window {t.window:,} - {SUMMARY_RESERVE:,} kept for the summary)"),
        _line("Warn threshold", t.warn, marks["warn"]),
        _line("Auto threshold", t.auto, marks["auto"]),
        _line("Hard threshold", t.hard, marks["hard"]),
        severity,
    ]
