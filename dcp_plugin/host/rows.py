"""Frozen rows of a session's calls and decisions: what the commands read, never the live records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dcp_plugin.pipeline.decisions import CallRecord, Cut, Decision, Field, Value
from dcp_plugin.pipeline.sweep import Skip, Skipped


@dataclass(frozen=True, slots=True)
class CallRow:
    """One tool call as it stood when read: where it is, its short id, and what prunes it.

    ``pruned_by`` is the strategy of the decision owning one of its fields (None when nothing
    prunes it); ``written`` says whether that decision's placeholder is written yet.
    """

    call_id: str
    tool: str
    message_index: int
    part_index: int
    ident: str | None
    status: str
    pruned_by: str | None = None
    written: bool = False


@dataclass(frozen=True, slots=True)
class PruneRow:
    """One decision as it stood when read: the call and field it prunes, what it writes there, what it saves."""

    call_id: str
    tool: str
    message_index: int
    part_index: int
    strategy: str
    field: Field
    value: Value
    tokens_saved: int
    cuts: tuple[Cut, ...] | None = None
    applied_at: int | None = None  # the session request it was first written in; None while it waits


@dataclass(frozen=True, slots=True)
class SkipRow:
    """One call a sweep left alone, why, and what names the reason (see :class:`~dcp_plugin.pipeline.sweep.Skip`)."""

    call: CallRow
    why: Skip
    detail: str | int | None = None


def call_row(record: CallRecord) -> CallRow:
    """The row of one call record."""
    owner = record.output_decision or record.input_decision
    return CallRow(
        record.call_id,
        record.tool,
        record.message_index,
        record.part_index,
        record.ident,
        record.status,
        owner.strategy if owner is not None else None,
        owner is not None and owner.applied_at is not None,
    )


def call_rows(records: Iterable[CallRecord]) -> tuple[CallRow, ...]:
    """The rows of call records, in order."""
    return tuple(map(call_row, records))


def prune_rows(decisions: Iterable[Decision]) -> tuple[PruneRow, ...]:
    """The rows of decisions, in order."""
    return tuple(
        PruneRow(
            d.call_id,
            d.tool,
            d.record.message_index,
            d.record.part_index,
            d.strategy,
            d.field,
            d.value,
            d.tokens_saved,
            d.cuts,
            d.applied_at,
        )
        for d in decisions
    )


def skip_rows(skipped: Iterable[Skipped]) -> tuple[SkipRow, ...]:
    """The rows of the calls a sweep left alone, in order."""
    return tuple(SkipRow(call_row(s.record), s.why, s.detail) for s in skipped)
