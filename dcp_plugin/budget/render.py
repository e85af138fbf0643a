"""Plain-text lines for `/dcp context`: the threshold ladder with the tier reached, and the severity.

The token count itself is shown once, as the context total above the ladder: the ladder
only says where that total stands.
"""

from __future__ import annotations

from dcp_plugin.budget.snapshot import ContextSnapshot

MARKER = "<- current"
_LABEL_WIDTH = 17


def _line(label: str, value: int | None, note: str = "") -> str:
    shown = f"{value:>12,}" if value is not None else " " * 12
    text = f"{label:<{_LABEL_WIDTH}}{shown}"
    return f"{text}  {note}" if note else text


def severity_line(snapshot: ContextSnapshot) -> str:
    """How full the window is, as a severity band and a share of the model's limit."""
    return (
        f"Severity: {snapshot.severity} ({snapshot.ratio * 100:.1f}% of {snapshot.context_limit:,}"
        f" tokens, limit from {snapshot.limit_source})"
    )


def ladder_lines(snapshot: ContextSnapshot) -> list[str]:
    """Effective window, warn, auto and hard, the marker on the tier reached (its own line below warn), then severity."""
    t = snapshot.thresholds
    if t is None:
        return [
            "Effective window: unknown (no context limit)",
            "Warn threshold:   unknown",
            "Auto threshold:   unknown",
            "Hard threshold:   unknown",
            severity_line(snapshot),
        ]
    marks = {"warn": "", "auto": "", "hard": ""}
    if snapshot.tier in marks:
        marks[snapshot.tier] = MARKER
    lines = [_line("Effective window", t.effective_window, f"(window {t.window:,} - {t.window - t.effective_window:,} kept for the summary)")]
    if snapshot.tier not in marks:
        lines.append(_line("Below warn", None, MARKER))
    lines += [
        _line("Warn threshold", t.warn, marks["warn"]),
        _line("Auto threshold", t.auto, marks["auto"]),
        _line("Hard threshold", t.hard, marks["hard"]),
        severity_line(snapshot),
    ]
    return lines
