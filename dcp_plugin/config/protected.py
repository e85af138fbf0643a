"""The tools no automatic strategy and no sweep may prune: config adds to this list, never removes from it."""

from __future__ import annotations

# Tools whose calls no automatic strategy and no sweep may prune; config can add, never remove.
HARDCODED_PROTECTED_TOOLS: frozenset[str] = frozenset(
    {
        "task",
        "todowrite",
        "todoread",
        "discard",
        "extract",
        "batch",
        "write",
        "edit",
        "plan_enter",
        "plan_exit",
    }
)
