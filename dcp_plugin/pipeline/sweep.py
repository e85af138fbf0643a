"""Which tool calls a sweep prunes: the calls in scope, split into those to prune and those skipped, with why."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.model.messages import FINAL_STATUSES, info_of
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.protection import PathProtector, extract_paths
from dcp_plugin.pipeline.strategies import DEDUPLICATION
from dcp_plugin.pipeline.strategies.deduplication import duplicate_signature


class Skip(Enum):
    """Why a sweep leaves a call in its scope alone."""

    PINNED = "pinned"  # detail: the call's short id, when it has one
    PRUNED = "already pruned"  # detail: the strategy that pruned it
    RUNNING = "still running"
    PROTECTED_TOOL = "protected tool"
    PROTECTED_PATH = "protected path"  # detail: the protected path the call names (or its command prints)
    REFERENCED = "referenced"  # detail: how many earlier identical calls point at its result


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class Skipped:
    """One call a sweep leaves alone, why, and what names the reason (see :class:`Skip`)."""

    record: CallRecord
    why: Skip
    detail: str | int | None = None


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass
class SweepPlan:
    """The calls in scope split into those to prune and those skipped, with why.

    ``count`` is the scope: the last ``count`` calls, or (None) every call since the last user
    message. ``inputs`` holds each call's input as the messages carry it, to name the call.
    """

    count: int | None
    eligible: list[CallRecord] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    inputs: dict[str, Any] = field(default_factory=dict)
    waiting: list[Decision] = field(default_factory=list)  # decided, not written yet: written now


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
    else:
        in_scope = list(records[-count:])
    plan = SweepPlan(count)
    history = list(messages)
    ignored = ignore_fields or {}
    referenced = _deduplicated_against(records, history, ignored) if in_scope else {}
    for record in in_scope:
        state = Ledger.state_of(history, record) or {}
        status = state.get("status", record.status)
        tool_input = state.get("input")
        plan.inputs[record.call_id] = tool_input
        paths = extract_paths(record.tool, tool_input)
        owner = record.output_decision or record.input_decision
        older = referenced.get(duplicate_signature(record.tool, tool_input, ignored), 0) if owner is None else 0
        if record.call_id in pinned:
            plan.skipped.append(Skipped(record, Skip.PINNED, record.ident))
        elif owner is not None and owner.applied_at is None:
            # Decided but waiting for the cache scheduler: the user's sweep writes it now.
            plan.waiting.append(owner)
        elif owner is not None:
            plan.skipped.append(Skipped(record, Skip.PRUNED, owner.strategy))
        elif status not in FINAL_STATUSES:
            plan.skipped.append(Skipped(record, Skip.RUNNING))
        elif record.tool in protected_tools:
            plan.skipped.append(Skipped(record, Skip.PROTECTED_TOOL))
        elif (protected := protector.protected_path(record.tool, tool_input, paths)) is not None:
            plan.skipped.append(Skipped(record, Skip.PROTECTED_PATH, protected))
        elif older:
            plan.skipped.append(Skipped(record, Skip.REFERENCED, older))
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
