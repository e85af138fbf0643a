"""`/dcp sweep [N]`: choose the tool calls to prune by hand, and describe what was swept and skipped."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.commands.calls import call_label, relative
from dcp_plugin.host.notifications import plural
from dcp_plugin.pipeline.conversation import FINAL_STATUSES, info_of
from dcp_plugin.pipeline.ledger import CallRecord, Ledger
from dcp_plugin.pipeline.placeholders import Decision
from dcp_plugin.pipeline.protection import PathProtector, extract_paths
from dcp_plugin.pipeline.strategies import DEDUPLICATION
from dcp_plugin.pipeline.strategies.deduplication import duplicate_signature

PINNED = "pinned"


@dataclass
class SweepPlan:
    """The calls in scope split into those to prune and those skipped, with why, and how to name each."""

    scope: str
    eligible: list[CallRecord] = field(default_factory=list)
    skipped: list[tuple[CallRecord, str]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    waiting: list[Decision] = field(default_factory=list)  # decided, not written yet: written now

    def label(self, record: CallRecord) -> str:
        """The tool and its key argument (`read src/a.py`), as the user saw the call."""
        return self.labels.get(record.call_id, record.tool)


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
    directory: str | None = None,
    ignore_fields: Mapping[str, tuple[str, ...]] | None = None,
    pinned: Container[str] = (),
) -> SweepPlan:
    """Which calls a sweep prunes: pinned, protected (tools and paths), unfinished and already pruned calls are skipped.

    So is the result older identical calls were deduplicated against: their placeholders
    send the model to it ("see the newer result"), so it must stay.
    """
    if count is None:
        start = last_turn_start(messages)
        in_scope = [r for r in records if r.message_index > start]
        plan = SweepPlan(scope="since your last message")
    else:
        in_scope = list(records[-count:])
        plan = SweepPlan(scope=f"in the last {plural(count, 'tool call')}")
    history = list(messages)
    ignored = ignore_fields or {}
    referenced = _deduplicated_against(records, history, ignored) if in_scope else {}
    for record in in_scope:
        state = Ledger.state_of(history, record) or {}
        status = state.get("status", record.status)
        tool_input = state.get("input")
        plan.labels[record.call_id] = call_label(record.tool, tool_input, directory)
        paths = extract_paths(record.tool, tool_input)
        owner = record.output_decision or record.input_decision
        older = referenced.get(duplicate_signature(record.tool, tool_input, ignored), 0) if owner is None else 0
        if record.call_id in pinned:
            plan.skipped.append((record, PINNED if record.ident is None else f"{PINNED} (id {record.ident})"))
        elif owner is not None and owner.applied_at is None:
            # Decided but waiting for the cache scheduler: the user's sweep writes it now.
            plan.waiting.append(owner)
        elif owner is not None:
            plan.skipped.append((record, f"already pruned ({owner.strategy})"))
        elif status not in FINAL_STATUSES:
            plan.skipped.append((record, "still running"))
        elif record.tool in protected_tools:
            plan.skipped.append((record, "protected tool"))
        elif paths and protector.is_protected(paths):
            plan.skipped.append((record, f"protected path ({relative(paths[0], directory)})"))
        elif older:
            plan.skipped.append((record, f"kept: {plural(older, 'earlier identical call')} point at this result"))
        else:
            plan.eligible.append(record)
    return plan


def _deduplicated_against(
    records: Sequence[CallRecord], messages: list[Any], ignore_fields: Mapping[str, tuple[str, ...]]
) -> dict[bytes, int]:
    """Per call signature, how many calls carry a placeholder that refers to the newest such call."""
    counts: dict[bytes, int] = {}
    for record in records:
        decision = record.output_decision
        if decision is not None and decision.strategy == DEDUPLICATION:
            state = Ledger.state_of(messages, record) or {}
            key = duplicate_signature(record.tool, state.get("input"), ignore_fields)
            counts[key] = counts.get(key, 0) + 1
    return counts


def _left_out(plan: SweepPlan, swept: Sequence[Decision]) -> list[tuple[CallRecord, str]]:
    """Eligible calls the sweep found nothing to remove from, and why."""
    done = {d.call_id for d in swept}
    return [
        (r, "failed call: its error message stays and its input is too short to shrink" if r.status == "error"
         else "nothing to remove (its output is already shorter than the placeholder)")
        for r in plan.eligible
        if r.call_id not in done
    ]


def render_text(plan: SweepPlan, swept: Sequence[Decision]) -> str:
    """The reply: what was swept (with the tokens it saves per request), then what was skipped and why."""
    if not swept and not plan.skipped and not plan.eligible:
        return f"dcp sweep: no tool calls {plan.scope}; nothing to sweep."
    tokens = sum(d.tokens_saved for d in swept)
    lines = [f"dcp sweep: pruned {plural(len(swept), 'tool call')} {plan.scope} (~{tokens:,} tokens per request)"]
    lines += [f"  - {plan.label(d.record)}: ~{d.tokens_saved:,} tokens" for d in swept]
    skipped = [*plan.skipped, *_left_out(plan, swept)]
    if skipped:
        lines.append(f"Skipped {plural(len(skipped), 'call')}:")
        lines += [f"  - {plan.label(r)}: {why}" for r, why in skipped]
    kept = sum(1 for _, why in plan.skipped if why.startswith(PINNED))
    if kept:
        lines.append(f"Kept {plural(kept, 'pinned output')}; /dcp unpin <id> lets one be pruned.")
    return "\n".join(lines)
