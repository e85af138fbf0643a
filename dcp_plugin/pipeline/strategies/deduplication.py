"""Deduplication: of calls with the same tool and input, only the newest completed one keeps its output."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from mypy_extensions import mypyc_attr

from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import DEDUPLICATION, DeduplicationConfig
from dcp_plugin.model.jsontext import CompactJson
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.ledger import drop_nulls, signature
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec

NAME = DEDUPLICATION
EDIT = ReplaceOutput(DUPLICATE_PLACEHOLDER)


def without_fields(tool_input: object, fields: Iterable[str]) -> object:
    """The input with the named top-level keys left out (cosmetic fields that do not change the call)."""
    if not isinstance(tool_input, dict):
        return tool_input
    drop = frozenset(fields)
    return {k: v for k, v in tool_input.items() if k not in drop}


def duplicate_signature(tool: str, tool_input: object, ignore_fields: Mapping[str, tuple[str, ...]]) -> bytes:
    """The signature deduplication groups calls by: tool and input, without the tool's cosmetic fields."""
    ignored = ignore_fields.get(tool)
    return signature(tool, tool_input if not ignored else without_fields(tool_input, ignored))


# Only for inputs that are not plainly flat (rare): see duplicate_key.
_SORTED_JSON = CompactJson(sort_keys=True)
# Whole numbers below this are written as their digits whatever the interpreter's digit limit.
_SMALL_INT = 10**18

FlatKey = frozenset[tuple[str, str | int]]


def _flat_items(tool_input: dict[Any, Any], ignored: tuple[str, ...]) -> FlatKey | None:
    """The items of an input of strings and whole numbers under string keys, without nulls and ``ignored`` keys; None for another input.

    The signature writes such an input as a flat object whose text its items alone decide, in
    any order: two of them are written alike exactly when their items are equal.
    """
    items = []
    for key, value in tool_input.items():
        if value is None or key in ignored:
            continue  # the signature leaves nulls and cosmetic fields out
        kind = type(value)
        if type(key) is not str or not (kind is str or (kind is int and -_SMALL_INT < value < _SMALL_INT)):
            return None  # bool is not int here: True and 1 are equal items but not equal text
        items.append((key, value))
    return frozenset(items)


def _written_flat(tool_input: dict[Any, Any], ignored: tuple[str, ...]) -> FlatKey | None:
    """The items of an input the signature writes as a flat input's text (a number as a key, an object through str); None otherwise."""
    trimmed = without_fields(tool_input, ignored) if ignored else tool_input
    try:
        text = _SORTED_JSON.encode(drop_nulls(trimmed))
        decoded = json.loads(text)
        if type(decoded) is not dict:
            return None
        flat = _flat_items(decoded, ())
        # Keys sorted as numbers are not in text order: only the text itself tells.
        return flat if flat is not None and _SORTED_JSON.encode(decoded) == text else None
    except (TypeError, ValueError, RecursionError):
        return None


def duplicate_key(tool: str, tool_input: object, ignore_fields: Mapping[str, tuple[str, ...]]) -> bytes | tuple[str, FlatKey]:
    """What the strategy groups calls by: equal exactly when :func:`duplicate_signature` is.

    Nearly every input of a history is a flat object of strings and numbers (a path, a command
    and its description, a pattern): those are grouped by the tool and their items, without
    encoding and hashing the input.
    """
    if isinstance(tool_input, dict):
        ignored = ignore_fields.get(tool) or ()
        flat = _flat_items(tool_input, ignored)
        if flat is None:
            flat = _written_flat(tool_input, ignored)
        if flat is not None:
            return (tool, flat)
    return duplicate_signature(tool, tool_input, ignore_fields)


@mypyc_attr(allow_interpreted_subclasses=True)
class Deduplication(ObserveOnly):
    """Remembers the newest completed call per signature; older ones become obsolete."""

    def __init__(self, protected_tools: frozenset[str], ignore_fields: Mapping[str, tuple[str, ...]]) -> None:
        self.protected_tools = protected_tools
        self.ignore_fields = ignore_fields
        self._newest: dict[bytes | tuple[str, FlatKey], CallRecord] = {}

    def looks_at(self, tool: str, status: str) -> bool:
        """Only completed calls of unprotected tools are grouped."""
        return status == "completed" and tool not in self.protected_tools

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status != "completed" or call.protected or record.tool in self.protected_tools:
            return ()
        key = duplicate_key(record.tool, call.input, self.ignore_fields)
        newest = self._newest.get(key)
        if newest is None:
            self._newest[key] = record
            return ()
        if newest.seq < record.seq:
            self._newest[key] = record
            # An output a whole placeholder keeps already (masked before it was read again) gets
            # no proposal: the arbiter would refuse it.
            return () if newest.output_kept else ((newest, EDIT),)
        # A call that finished late but sits earlier in the conversation is the obsolete one.
        return ((record, EDIT),)


def build(config: DeduplicationConfig) -> Deduplication | None:
    if not config.enabled:
        return None
    return Deduplication(HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools), config.ignore_fields)


SPEC = StrategySpec(NAME, "same call made again later", DeduplicationConfig, build)
