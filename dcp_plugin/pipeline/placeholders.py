"""Turns pruning decisions into placeholder patches and applies them to the outgoing messages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal, overload

from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.protection import PATH_KEYS
from dcp_plugin.pipeline.tokens import estimate_json_tokens

# Stable strings: the same text every time keeps the provider's prompt cache warm.
DUPLICATE_PLACEHOLDER = "[dcp: output removed - the same call was made again later; see the newer result]"
SUPERSEDED_PLACEHOLDER = "[dcp: content removed - this file was read back later]"
FAILED_INPUT_PLACEHOLDER = "[dcp: input removed - call failed turns ago]"
SWEPT_PLACEHOLDER = "[dcp: removed by /dcp sweep]"

Field = Literal["input", "output"]
Patch = tuple[CallRecord, dict[str, Any]]


class Desync(Exception):
    """A decided call is no longer where the ledger saw it: the history changed under us."""


def shrink_strings(value: Any, placeholder: str, keep: frozenset[str] = frozenset(), depth: int = 0) -> Any:
    """``value`` with every string longer than ``placeholder``, at every depth, replaced by it.

    Shorter strings stay: a placeholder must never make a request bigger. Mapping keys in
    ``keep`` (path arguments) keep their values at the top level.
    """
    if isinstance(value, str):
        return placeholder if len(value) > len(placeholder) else value
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {
            k: v if (depth == 0 and k in keep) else shrink_strings(v, placeholder, frozenset(), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [shrink_strings(v, placeholder, frozenset(), depth + 1) for v in value]
    return value


def replacement(reason: str, state: dict[str, Any]) -> tuple[Field | None, Any]:
    """Which field of a call's state a decision replaces and with what; (None, None) when nothing shrinks."""
    error = state.get("status") == "error"
    if reason == "deduplication" or (reason == "sweep" and not error):
        placeholder = DUPLICATE_PLACEHOLDER if reason == "deduplication" else SWEPT_PLACEHOLDER
        output = state.get("output")
        if isinstance(output, str) and len(output) <= len(placeholder):
            return None, None
        return "output", placeholder
    tool_input = state.get("input")
    if not isinstance(tool_input, dict):
        return None, None
    if reason == "supersedeWrites":
        value = shrink_strings(tool_input, SUPERSEDED_PLACEHOLDER, frozenset(PATH_KEYS))
    elif reason == "purgeErrors":
        value = shrink_strings(tool_input, FAILED_INPUT_PLACEHOLDER)
    else:
        value = shrink_strings(tool_input, SWEPT_PLACEHOLDER)
    return ("input", value) if value != tool_input else (None, None)


def decide_replacement(record: CallRecord, reason: str, state: dict[str, Any]) -> None:
    """Fix a decided call's placeholder and its saving once; later requests reuse them."""
    name, value = replacement(reason, state)
    record.reason = reason
    record.field = name
    record.value = value
    record.tokens_saved = (
        max(0, estimate_json_tokens(state.get(name) or "") - estimate_json_tokens(value)) if name else 0
    )


class Patches(Sequence[Patch]):
    """The (record, state) pairs of one request, held as two parallel lists.

    A long session re-applies thousands of placeholders on every request. One tuple per pair
    would be thousands of new container objects per request, each one the cyclic collector
    then has to scan (measured: about a quarter of a warm request at 20,000 messages); two
    flat lists cost two objects. Iterating yields ``(record, state)`` pairs as before.
    """

    __slots__ = ("records", "states")

    def __init__(self, records: list[CallRecord] | None = None, states: list[dict[str, Any]] | None = None) -> None:
        self.records: list[CallRecord] = records if records is not None else []
        self.states: list[dict[str, Any]] = states if states is not None else []

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Patch]:
        return zip(self.records, self.states)

    @overload
    def __getitem__(self, index: int) -> Patch: ...

    @overload
    def __getitem__(self, index: slice) -> Patches: ...

    def __getitem__(self, index: int | slice) -> Patch | Patches:
        if isinstance(index, slice):
            return Patches(self.records[index], self.states[index])
        return self.records[index], self.states[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Patches):
            return self.records == other.records and self.states == other.states
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"Patches({list(self)!r})"


def plan(messages: list[Any], decided: list[CallRecord]) -> Patches:
    """(record, state) pairs for every decided call that has a placeholder; Desync if one moved.

    Pure: nothing in ``messages`` changes (the bridge plans against its never-patched mirror).
    """
    records: list[CallRecord] = []
    states: list[dict[str, Any]] = []
    keep_record = records.append
    keep_state = states.append
    for record in decided:
        if record.field is None:
            continue
        call_id = record.call_id
        try:
            part = messages[record.message_index]["parts"][record.part_index]
            state = part["state"]
        except (IndexError, KeyError, TypeError):
            raise Desync(call_id) from None
        if type(state) is not dict or part.get("callID", call_id) != call_id:
            raise Desync(call_id)
        keep_record(record)
        keep_state(state)
    return Patches(records, states)


def apply(patches: Sequence[Patch]) -> None:
    """Write the placeholders; plain dict stores, so this step cannot fail halfway."""
    for record, state in patches:
        value = record.value
        # Inputs are copied so that a host mutating what it sent cannot alter our cached value.
        state[record.field] = dict(value) if type(value) is dict else value  # type: ignore[index]


def to_wire(messages: list[Any], patches: Sequence[Patch]) -> list[dict[str, Any]]:
    """The patches as plain JSON for a bridge client, addressed by ids and positions."""
    out: list[dict[str, Any]] = []
    for record, _ in patches:
        info = messages[record.message_index].get("info") or {}
        out.append(
            {
                "messageIndex": record.message_index,
                "partIndex": record.part_index,
                "messageID": info.get("id") if isinstance(info, dict) else None,
                "partID": record.part_id,
                "callID": record.call_id,
                "field": record.field,
                "value": record.value,
            }
        )
    return out
