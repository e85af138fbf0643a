"""`/dcp context`: what the session's context is made of, what pruning saves, and how full the window is."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.budget.render import ladder_lines
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.commands.stats import net_line
from dcp_plugin.cost.overhead import PluginText, plugin_text_line
from dcp_plugin.host.prune_notice import plural
from dcp_plugin.host.rows import PruneRow
from dcp_plugin.model.messages import call_id_of, info_of, parts_of
from dcp_plugin.model.tokens import (
    DEFAULT_IMAGE_TOKENS,
    RATIOS_NOTE,
    estimate_part_tokens,
    last_reported_prompt_tokens,
)
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.modeltools import RESTORE, Tally
from dcp_plugin.pipeline.strategies import ALL_REASONS, REASON_TEXT
from dcp_plugin.store import Stats

STRATEGIES: tuple[str, ...] = ALL_REASONS
BAR_WIDTH = 20
ESTIMATE_NOTE = f"Token counts are estimates ({RATIOS_NOTE}, images a fixed amount)"
LARGEST = 5


@dataclass(frozen=True)
class PrunedCall:
    """Pruned calls as the user knows them: tool and key argument, why, how many, and what they save."""

    label: str
    strategy: str
    tokens: int
    calls: int = 1


@dataclass
class ContextBreakdown:
    """The numbers behind `/dcp context` and `dcp context FILE`: one total, and what it is made of.

    ``user``, ``assistant`` and ``tools`` are estimates of what goes out now, after pruning.
    ``total`` is the context size the budget uses (anchored on the provider's reported
    prompt when there is one); ``system`` is what the messages do not account for (system
    prompt, tool definitions), None when no usage was reported. ``saved`` holds, per
    strategy, (calls with a placeholder, estimated tokens it removes from every request).
    """

    session_id: str
    messages: int
    user: int
    assistant: int
    tools: int
    tool_calls: int
    pruned_calls: int
    saved: dict[str, tuple[int, int]] = field(default_factory=dict)
    reported_prompt: int | None = None
    snapshot: ContextSnapshot | None = None
    largest: list[PrunedCall] = field(default_factory=list)
    waiting: tuple[int, int] = (0, 0)  # decided prunes the cache scheduler has not written yet: (calls, tokens)
    stats: Stats | None = None  # the session's accounting, the same `/dcp stats` shows
    model_tools: dict[str, Tally] = field(default_factory=dict)  # the model's calls of discard, extract, restore
    plugin_text: PluginText = PluginText()  # the plugin's own text in every request

    @property
    def content(self) -> int:
        """The messages' fixed-ratio estimate, after pruning."""
        return self.user + self.assistant + self.tools

    @property
    def anchored(self) -> bool:
        """Whether the total rests on a provider-reported prompt size."""
        return self.snapshot is not None and self.snapshot.estimate_path == "reported"

    @property
    def total(self) -> int:
        """The context now: the snapshot's figure (the one every other place shows), else the messages' estimate."""
        return self.snapshot.estimated_input_tokens if self.snapshot is not None else self.content

    @property
    def system(self) -> int | None:
        """The steady part outside the messages (learned from the first report); None without a report."""
        if not self.anchored or self.snapshot is None:
            return None
        return min(self.total, self.snapshot.system_tokens or 0)

    def message_shares(self) -> tuple[int, int, int]:
        """(user, assistant, tools) in the total's tokens: the rest of the total, in proportion to their estimates.

        The estimates count at fixed ratios and the total at the provider's: shared out this way,
        the rows add up to the one total and System stays what the prompt carries beyond the messages.
        """
        estimates = (self.user, self.assistant, self.tools)
        rest = self.total - (self.system or 0)
        content = self.content
        if content <= 0 or rest == content:
            return estimates
        exact = [rest * e / content for e in estimates]
        shares = [math.floor(x) for x in exact]
        # Largest remainders take the tokens rounding left over, so the rows sum to the total.
        for i in sorted(range(3), key=lambda i: shares[i] - exact[i])[: rest - sum(shares)]:
            shares[i] += 1
        return shares[0], shares[1], shares[2]

    @property
    def total_now(self) -> int:
        """Kept for JSON readers: the one total."""
        return self.total

    @property
    def tokens_saved(self) -> int:
        return sum(tokens for _, tokens in self.saved.values())

    @property
    def total_without(self) -> int:
        return self.total + self.tokens_saved

    def categories(self) -> list[tuple[str, int | None, str]]:
        """(name, tokens, note) rows in display order."""
        system_note = (
            "system prompt, tool definitions"
            if self.system is not None
            else "unknown: no usage reported yet"
        )
        user, assistant, tools = self.message_shares()
        return [
            ("System", self.system, system_note),
            ("User", user, ""),
            ("Assistant", assistant, ""),
            ("Tools", tools, f"{plural(self.tool_calls, 'call')}, {self.pruned_calls:,} pruned"),
        ]

    def to_dict(self) -> dict[str, Any]:
        total = self.total
        return {
            "session": self.session_id,
            "messages": self.messages,
            "categories": {
                name.lower(): {
                    "tokens": tokens,
                    "estimated": True,
                    "percent": round(100 * (tokens or 0) / total, 1) if total else 0.0,
                }
                for name, tokens, _ in self.categories()
            },
            # The messages' fixed-ratio estimates, after pruning, before they are shared out of the total.
            "estimates": {"user": self.user, "assistant": self.assistant, "tools": self.tools},
            "tool_calls": self.tool_calls,
            "pruned_calls": self.pruned_calls,
            "total_now": total,
            "total_without_plugin": self.total_without,
            "tokens_saved": self.tokens_saved,
            "saved_by_strategy": {
                name: {"calls": calls, "tokens": tokens} for name, (calls, tokens) in self.saved.items()
            },
            "largest_savings": [
                {"call": c.label, "strategy": c.strategy, "calls": c.calls, "tokens": c.tokens} for c in self.largest
            ],
            "model_tools": {
                name: {"calls": t.accepted, "refused": t.refused, "outputs": t.outputs, "tokens": t.tokens}
                for name, t in self.model_tools.items()
            },
            "provider_reported_prompt": self.reported_prompt,
            "snapshot": self.snapshot.to_dict() if self.snapshot is not None else None,
            "waiting": {"calls": self.waiting[0], "tokens": self.waiting[1]},
            "cost": None if self.stats is None else {
                "requests": self.stats.requests,
                "cost_without": round(self.stats.cost_without, 1),
                "cost_with": round(self.stats.cost_with, 1),
                "net_saved": round(self.stats.saved, 1),
                "rewritten_tokens": self.stats.rewritten,
            },
            "plugin_text": self.plugin_text.to_dict(),
        }


def _patched_part(part: Mapping[str, Any], decisions: list[PruneRow]) -> dict[str, Any]:
    state = part.get("state")
    patched = dict(state) if isinstance(state, dict) else {}
    for decision in decisions:
        patched[decision.field] = decision.value
    return {**part, "state": patched}


def build_breakdown(
    session_id: str,
    messages: Sequence[Any],
    in_force: Iterable[PruneRow],
    snapshot: ContextSnapshot | None = None,
    image_tokens: int = DEFAULT_IMAGE_TOKENS,
    directory: str | None = None,
) -> ContextBreakdown:
    """The breakdown of ``messages`` as they go out with the placeholders of ``in_force`` applied.

    A decided call whose placeholder would not be smaller than what it replaces keeps its
    content, so it is not counted as pruned.
    """
    at: dict[tuple[int, int], list[PruneRow]] = {}
    for decision in in_force:
        at.setdefault((decision.message_index, decision.part_index), []).append(decision)
    saved = {name: (0, 0) for name in STRATEGIES}
    pruned_calls: list[PrunedCall] = []
    user = assistant = tools = tool_calls = 0
    for mi, message in enumerate(messages):
        is_assistant = info_of(message).get("role") == "assistant"
        for pi, part in enumerate(parts_of(message)):
            if not isinstance(part, dict):
                continue
            tokens = estimate_part_tokens(part, image_tokens)
            if part.get("type") == "tool":
                tool_calls += 1
                decisions = [d for d in at.get((mi, pi), ()) if call_id_of(part, message, mi, pi) == d.call_id]
                if decisions:
                    now = estimate_part_tokens(_patched_part(part, decisions), image_tokens)
                    if now < tokens:
                        reason = decisions[0].strategy
                        calls, before = saved.get(reason, (0, 0))
                        saved[reason] = (calls + 1, before + tokens - now)
                        state = part.get("state")
                        tool_input = state.get("input") if isinstance(state, dict) else None
                        label = call_label(str(part.get("tool") or decisions[0].tool), tool_input, directory)
                        pruned_calls.append(PrunedCall(label, reason, tokens - now))
                        tokens = now
                tools += tokens
            elif is_assistant:
                assistant += tokens
            else:
                user += tokens
    largest = sorted(_grouped(pruned_calls), key=lambda c: (-c.tokens, c.label))[:LARGEST]
    return ContextBreakdown(
        session_id=session_id,
        messages=len(messages),
        user=user,
        assistant=assistant,
        tools=tools,
        tool_calls=tool_calls,
        pruned_calls=len(pruned_calls),
        saved=saved,
        reported_prompt=last_reported_prompt_tokens([m for m in messages if isinstance(m, dict)]),
        snapshot=snapshot,
        largest=largest,
    )


def _grouped(calls: list[PrunedCall]) -> list[PrunedCall]:
    """One entry per (label, strategy): the same file read ten times is one line."""
    groups: dict[tuple[str, str], PrunedCall] = {}
    for c in calls:
        seen = groups.get((c.label, c.strategy))
        groups[(c.label, c.strategy)] = c if seen is None else PrunedCall(c.label, c.strategy, seen.tokens + c.tokens, seen.calls + 1)
    return list(groups.values())


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A monospace bar: filled blocks for ``fraction`` of ``width``."""
    filled = max(0, min(width, round(fraction * width)))
    return "█" * filled + "░" * (width - filled)


def amount(tokens: int | None) -> str:
    """'~1,234' (every number here is an estimate or derived from one), '?' when unknown."""
    return "?" if tokens is None else f"~{tokens:,}"


def total_line(b: ContextBreakdown) -> str:
    """The one total: every other number on the screen is a part of it or a share of the window."""
    return f"Context now: ~{b.total:,} tokens"


def savings_line(b: ContextBreakdown) -> str:
    """What pruning takes off every request."""
    saved = b.tokens_saved
    if not saved:
        return "Pruning: nothing pruned yet."
    return (
        f"Pruning removes ~{saved:,} tokens from every request "
        f"({100 * saved / b.total_without:.1f}% less than without the plugin):"
    )


def largest_line(c: PrunedCall) -> str:
    """`read src/a.py (3 calls, repeated later): ~2,400 tokens`."""
    times = f"{c.calls} calls, " if c.calls > 1 else ""
    return f"{c.label} ({times}{REASON_TEXT.get(c.strategy, c.strategy)}): ~{c.tokens:,} tokens"


def cache_lines(b: ContextBreakdown) -> list[str]:
    """Prunes waiting for the cache scheduler, and what the session's requests cost with and without the plugin."""
    lines: list[str] = []
    calls, tokens = b.waiting
    if calls:
        they, them = ("it is", "it") if calls == 1 else ("they are", "them")
        lines.append(
            f"{plural(calls, 'prune')} waiting (~{tokens:,} tokens per request): {they} written when the "
            f"prompt cache expires or when writing {them} pays"
        )
    if b.stats is not None and b.stats.requests:
        net = net_line(b.stats).removeprefix("net cost: ")
        lines.append(f"Net cost so far ({plural(b.stats.requests, 'request')}): {net}")
    own = plugin_text_line(b.plugin_text)
    if own:
        lines.append(own)
    return lines


def model_tools_line(tallies: dict[str, Tally]) -> str:
    """`The model's tools: discard 2 calls (5 outputs), restore 1 call (1 output back, ~800 tokens); 1 refused`."""
    parts = []
    for name, t in tallies.items():
        if not t.accepted:
            continue
        back = f" back, ~{t.tokens:,} tokens" if name == RESTORE else ""
        parts.append(f"{name} {plural(t.accepted, 'call')} ({plural(t.outputs, 'output')}{back})")
    refused = sum(t.refused for t in tallies.values())
    tail = f"; {refused:,} refused" if refused else ""
    return f"The model's tools: {', '.join(parts) or 'no accepted call'}{tail}"


def source_note(b: ContextBreakdown) -> str:
    """Where the total comes from, and which numbers are estimates."""
    snap = b.snapshot
    if b.anchored and snap is not None and snap.provider_reported_tokens is not None:
        after = b.total - snap.provider_reported_tokens + snap.pruned_since
        since = f", less ~{snap.pruned_since:,} pruned since," if snap.pruned_since else ""
        return (
            f"The total is the provider's count for the last request ({snap.provider_reported_tokens:,}){since} plus "
            f"~{max(0, after):,} estimated for what came after. {ESTIMATE_NOTE}."
        )
    return f"No provider usage reported yet: the total is the messages' estimate. {ESTIMATE_NOTE}."


def render_text(b: ContextBreakdown) -> str:
    """The plain-text reply (monospace-friendly)."""
    total = b.total
    lines = [f"DCP context of session {b.session_id}: {b.messages:,} messages", "", total_line(b)]
    for name, tokens, note in b.categories():
        share = (tokens or 0) / total if total else 0.0
        row = f"  {name:<10}{amount(tokens):>10}  {share * 100:5.1f}%  {bar(share)}"
        lines.append(f"{row}  {note}" if note else row)
    lines += ["", savings_line(b)]
    for name, (calls, tokens) in b.saved.items():
        if calls:
            lines.append(f"  {name:<17}{calls:>5,} {'call ' if calls == 1 else 'calls'}  ~{tokens:,} tokens")
    if b.largest:
        lines.append("Largest savings:")
        lines += [f"  {largest_line(c)}" for c in b.largest]
    lines += cache_lines(b)
    if b.model_tools:
        lines.append(model_tools_line(b.model_tools))
    lines += ["", "Context budget:"]
    if b.snapshot is not None:
        lines += [f"  {line}" for line in ladder_lines(b.snapshot)]
    else:
        lines.append("  no request seen yet in this session")
    lines += ["", source_note(b)]
    return "\n".join(lines)
