"""Deduplication: of calls with the same tool and input, only the newest completed one keeps its output."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

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


# Only for inputs with one item that is not plainly a string under a string key (rare): see duplicate_key.
_SORTED_JSON = CompactJson(sort_keys=True)


def _one_string(tool_input: dict[Any, Any]) -> tuple[str, str] | None:
    """The key and value of an input whose one item besides nulls is a string under a string key, as the signature encodes it."""
    found: tuple[Any, Any] | None = None
    for key, value in tool_input.items():
        if value is None:
            continue  # the signature leaves nulls out
        if found is not None:
            return None
        found = (key, value)
    if found is None:
        return None
    key, value = found
    if isinstance(value, (dict, list, tuple, int, float)):
        return None  # written as an object, an array or a number, never as a string (a todo list)
    if isinstance(key, str) and isinstance(value, str):
        return key, value
    # Another key or value the encoder writes as a string (a number as a key, an object through
    # str): the text tells, as it does for the signature.
    try:
        decoded = json.loads(_SORTED_JSON.encode(drop_nulls(tool_input)))
    except (TypeError, ValueError, RecursionError):
        return None
    if isinstance(decoded, dict) and len(decoded) == 1:
        ((text_key, text_value),) = decoded.items()
        if isinstance(text_value, str):
            return text_key, text_value
    return None


def duplicate_key(tool: str, tool_input: object, ignore_fields: Mapping[str, tuple[str, ...]]) -> bytes | tuple[str, str, str]:
    """What the strategy groups calls by: equal exactly when :func:`duplicate_signature` is.

    Most calls of a history are reads whose input is one path: those are grouped by the tool, the
    key and the string, without encoding and hashing the input.
    """
    if isinstance(tool_input, dict) and not ignore_fields.get(tool):
        one = _one_string(tool_input)
        if one is not None:
            return (tool, *one)
    return duplicate_signature(tool, tool_input, ignore_fields)


class Deduplication(ObserveOnly):
    """Remembers the newest completed call per signature; older ones become obsolete."""

    def __init__(self, protected_tools: frozenset[str], ignore_fields: Mapping[str, tuple[str, ...]]) -> None:
        self.protected_tools = protected_tools
        self.ignore_fields = ignore_fields
        self._newest: dict[bytes | tuple[str, str, str], CallRecord] = {}

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
            return ((newest, EDIT),)
        # A call that finished late but sits earlier in the conversation is the obsolete one.
        return ((record, EDIT),)


def build(config: DeduplicationConfig) -> Deduplication | None:
    if not config.enabled:
        return None
    return Deduplication(HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools), config.ignore_fields)


SPEC = StrategySpec(NAME, "same call made again later", DeduplicationConfig, build)
