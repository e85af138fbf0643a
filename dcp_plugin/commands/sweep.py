"""`/dcp sweep [N]`: choose the tool calls to prune by hand, and describe what was swept and skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.pipeline.conversation import FINAL_STATUSES, info_of
from dcp_plugin.pipeline.ledger import CallRecord, Ledger
from dcp_plugin.pipeline.placeholders import Decision
from dcp_plugin.host.notifications import plural
from dcp_plugin.pipeline.protection import PathProtector, extract_paths


@dataclass
class SweepPlan:
    """The calls in scope split into those to prune and those skipped, with why."""

    scope: str
    eligible: list[CallRecord] = field(default_factory=list)
    skipped: list[tuple[CallRecord, str]] = field(default_factory=list)


def parse_count(args: Sequence[str]) -> int | None:
    """N from the arguments (None: since the last user message); ValueError saying what is wrong."""
    if not args:
        return None
    if len(args) > 1:
        raise ValueError(f"expected at most one number, got {' '.join(args)!r}")
    try:
        count = int(args[0])
    except ValueError:
        raise ValueError(f"expected a number of tool calls, got {args[0]!r}") from None
    if count < 1:
        raise ValueError(f"the number of tool calls must be at least 1, got {count}")
    return count


def last_turn_start(messages: Sequence[Any]) -> int:
    """Index of the user message that opened the last answered turn; -1 when there is none.

    Trailing user messages (the command itself, when the host already stored it) do not
    count: the sweep targets what the model did after the user's last real request.
    """
    index = len(messages) - 1
    while index >= 0 and info_of(messages[index]).get("role") == "user":
        index -= 1
    while index >= 0 and info_of(messages[index]).get("role") != "user":
        index -= 1
    return index


def select(
    records: Sequence[CallRecord],
    messages: Sequence[Any],
    count: int | None,
    protected_tools: frozenset[str],
    protector: PathProtector,
) -> SweepPlan:
    """Which calls a sweep prunes: protected tools and paths, unfinished and already pruned calls are skipped."""
    if count is None:
        start = last_turn_start(messages)
        in_scope = [r for r in records if r.message_index > start]
        plan = SweepPlan(scope="since your last message")
    else:
        in_scope = list(records[-count:])
        plan = SweepPlan(scope=f"in the last {plural(count, 'tool call')}")
    history = list(messages)
    for record in in_scope:
        state = Ledger.state_of(history, record) or {}
        status = state.get("status", record.status)
        paths = extract_paths(record.tool, state.get("input"))
        owner = record.output_decision or record.input_decision
        if owner is not None:
            plan.skipped.append((record, f"already pruned ({owner.strategy})"))
        elif status not in FINAL_STATUSES:
            plan.skipped.append((record, "still running"))
        elif record.tool in protected_tools:
            plan.skipped.append((record, "protected tool"))
        elif paths and protector.is_protected(paths):
            plan.skipped.append((record, f"protected path ({paths[0]})"))
        else:
            plan.eligible.append(record)
    return plan


def render_text(scope: str, swept: Sequence[Decision], skipped: Sequence[tuple[CallRecord, str]]) -> str:
    """The reply: what was swept (with the tokens it saves per request), then what was skipped and why."""
    if not swept and not skipped:
        return f"dcp sweep: no tool calls {scope}; nothing to sweep."
    tokens = sum(d.tokens_saved for d in swept)
    lines = [f"dcp sweep: pruned {plural(len(swept), 'tool call')} {scope} (~{tokens:,} tokens per request)"]
    lines += [f"  - {d.tool} {d.call_id}: ~{d.tokens_saved:,} tokens" for d in swept]
    if skipped:
        lines.append(f"Skipped {plural(len(skipped), 'call')}:")
        lines += [f"  - {r.tool} {r.call_id}: {why}" for r, why in skipped]
    return "\n".join(lines)
