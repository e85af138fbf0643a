"""`/dcp context`: what the session's context is made of, what pruning saves, and how full the window is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.budget.render import ladder_lines
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.pipeline.conversation import call_id_of, info_of, parts_of
from dcp_plugin.pipeline.placeholders import Decision
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.pipeline.tokens import (
    DEFAULT_IMAGE_TOKENS,
    estimate_part_tokens,
    last_reported_prompt_tokens,
    reported_usage,
)

STRATEGIES: tuple[str, ...] = ALL_REASONS
BAR_WIDTH = 20
ESTIMATE_NOTE = "~ marks estimates (text chars/4, JSON chars/2, images a fixed amount)"


@dataclass
class ContextBreakdown:
    """The numbers behind `/dcp context` and `dcp context FILE`.

    ``system`` is derived from provider-reported usage (the first reported prompt minus
    the estimate of the messages it carried) and is None when no usage was reported;
    ``user``, ``assistant`` and ``tools`` are estimates of what goes out now, after
    pruning. ``saved`` holds, per strategy, (calls, estimated tokens removed from this
    context).
    """

    session_id: str
    messages: int
    system: int | None
    user: int
    assistant: int
    tools: int
    tool_calls: int
    pruned_calls: int
    saved: dict[str, tuple[int, int]] = field(default_factory=dict)
    reported_prompt: int | None = None
    snapshot: ContextSnapshot | None = None

    @property
    def total_now(self) -> int:
        return (self.system or 0) + self.user + self.assistant + self.tools

    @property
    def tokens_saved(self) -> int:
        return sum(tokens for _, tokens in self.saved.values())

    @property
    def total_without(self) -> int:
        return self.total_now + self.tokens_saved

    def categories(self) -> list[tuple[str, int | None, bool, str]]:
        """(name, tokens, estimated, note) rows in display order."""
        system_note = "from provider usage" if self.system is not None else "unknown: no provider usage reported yet"
        return [
            ("System", self.system, False, system_note),
            ("User", self.user, True, ""),
            ("Assistant", self.assistant, True, ""),
            ("Tools", self.tools, True, f"{self.tool_calls:,} calls in context, {self.pruned_calls:,} pruned"),
        ]

    def to_dict(self) -> dict[str, Any]:
        total = self.total_now
        return {
            "session": self.session_id,
            "messages": self.messages,
            "categories": {
                name.lower(): {
                    "tokens": tokens,
                    "estimated": estimated,
                    "percent": round(100 * (tokens or 0) / total, 1) if total else 0.0,
                }
                for name, tokens, estimated, _ in self.categories()
            },
            "tool_calls": self.tool_calls,
            "pruned_calls": self.pruned_calls,
            "total_now": total,
            "total_without_plugin": self.total_without,
            "tokens_saved": self.tokens_saved,
            "saved_by_strategy": {
                name: {"calls": calls, "tokens": tokens} for name, (calls, tokens) in self.saved.items()
            },
            "provider_reported_prompt": self.reported_prompt,
            "snapshot": self.snapshot.to_dict() if self.snapshot is not None else None,
        }


def _patched_part(part: dict[str, Any], decisions: list[Decision]) -> dict[str, Any]:
    state = part.get("state")
    patched = dict(state) if isinstance(state, dict) else {}
    for decision in decisions:
        patched[decision.field] = decision.value
    return {**part, "state": patched}


def build_breakdown(
    session_id: str,
    messages: Sequence[Any],
    in_force: Iterable[Decision],
    snapshot: ContextSnapshot | None = None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
) -> ContextBreakdown:
    """The breakdown of ``messages`` as they go out with the placeholders of ``in_force`` applied."""
    at: dict[tuple[int, int], list[Decision]] = {}
    for decision in in_force:
        at.setdefault((decision.record.message_index, decision.record.part_index), []).append(decision)
    saved = {name: (0, 0) for name in STRATEGIES}
    user = assistant = tools = tool_calls = pruned = 0
    message_totals: list[int] = []
    for mi, message in enumerate(messages):
        is_assistant = info_of(message).get("role") == "assistant"
        total = 0
        for pi, part in enumerate(parts_of(message)):
            if not isinstance(part, dict):
                continue
            tokens = estimate_part_tokens(part, image_tokens)
            if part.get("type") == "tool":
                tool_calls += 1
                decisions = [
                    d for d in at.get((mi, pi), ()) if call_id_of(part, message, mi, pi) == d.call_id
                ]
                if decisions:
                    now = estimate_part_tokens(_patched_part(part, decisions), image_tokens)
                    removed, tokens = tokens - now, now
                    if removed > 0:
                        pruned += 1
                        reason = decisions[0].strategy
                        calls, before = saved.get(reason, (0, 0))
                        saved[reason] = (calls + 1, before + removed)
                tools += tokens
            elif is_assistant:
                assistant += tokens
            else:
                user += tokens
            total += tokens
        message_totals.append(total)
    system = None
    for index, message in enumerate(messages):
        usage = reported_usage(message) if isinstance(message, dict) else None
        if usage is not None:
            system = max(0, usage.prompt - sum(message_totals[:index]))
            break
    return ContextBreakdown(
        session_id=session_id,
        messages=len(messages),
        system=system,
        user=user,
        assistant=assistant,
        tools=tools,
        tool_calls=tool_calls,
        pruned_calls=pruned,
        saved=saved,
        reported_prompt=last_reported_prompt_tokens([m for m in messages if isinstance(m, dict)]),
        snapshot=snapshot,
    )


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A monospace bar: filled blocks for ``fraction`` of ``width``."""
    filled = max(0, min(width, round(fraction * width)))
    return "█" * filled + "░" * (width - filled)


def amount(tokens: int | None, estimated: bool) -> str:
    """'~1,234' for an estimate, '1,234' for a derived number, '?' when unknown."""
    if tokens is None:
        return "?"
    return f"~{tokens:,}" if estimated else f"{tokens:,}"


def render_text(b: ContextBreakdown) -> str:
    """The plain-text reply (monospace-friendly)."""
    total = b.total_now
    lines = [f"DCP context of session {b.session_id}: {b.messages:,} messages, ~{total:,} tokens now", ""]
    for name, tokens, estimated, note in b.categories():
        share = (tokens or 0) / total if total else 0.0
        row = f"  {name:<10}{amount(tokens, estimated):>10}  {share * 100:5.1f}%  {bar(share)}"
        lines.append(f"{row}  {note}" if note else row)
    saved = b.tokens_saved
    percent = f" ({100 * saved / b.total_without:.1f}% of it)" if b.total_without else ""
    lines += [
        "",
        f"  Total now            ~{total:,} tokens",
        f"  Without the plugin   ~{b.total_without:,} tokens",
        f"  Saved by pruning     ~{saved:,} tokens per request{percent}",
    ]
    for name, (calls, tokens) in b.saved.items():
        lines.append(f"    {name:<17}{calls:>5,} {'call ' if calls == 1 else 'calls'}  ~{tokens:,} tokens")
    lines += ["", "Context budget:"]
    if b.snapshot is not None:
        lines += [f"  {line}" for line in ladder_lines(b.snapshot)]
    else:
        lines.append("  no request seen yet in this session")
    reported = (
        f"; the provider reported {b.reported_prompt:,} prompt tokens for the last request"
        if b.reported_prompt is not None
        else "; no provider usage reported yet"
    )
    lines += ["", ESTIMATE_NOTE + reported + "."]
    return "\n".join(lines)
