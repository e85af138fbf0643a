"""`/dcp` and `/dcp help`: the list of subcommands, one line each."""

from __future__ import annotations

SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("context", "what the session's context is made of, what pruning saves, how full the window is"),
    ("stats", "calls pruned and tokens saved in this session and across all sessions"),
    ("sweep [N]", "prune every tool output since your last message, or the last N tool calls"),
    ("pin [ID...]", "keep these tool outputs whole, never pruned; without ids: the pinned and newest outputs"),
    ("unpin ID...", "let pinned tool outputs be pruned again"),
    ("help", "this list"),
)


def help_text(unknown: str | None = None) -> str:
    """The help reply; names the unknown subcommand first when there was one."""
    width = max(len(name) for name, _ in SUBCOMMANDS)
    lines = []
    if unknown is not None:
        lines += [f"dcp: unknown subcommand '{unknown}'.", ""]
    lines.append("Dynamic Context Pruning commands:")
    lines += [f"  /dcp {name:<{width}}  {text}" for name, text in SUBCOMMANDS]
    return "\n".join(lines)
