"""Deduplication: of calls with the same tool and input, only the newest completed one keeps its output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import DEDUPLICATION, DeduplicationConfig
from dcp_plugin.pipeline.decisions import CallRecord, ReplaceOutput
from dcp_plugin.pipeline.ledger import signature
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


class Deduplication(ObserveOnly):
    """Remembers the newest completed call per signature; older ones become obsolete."""

    def __init__(self, protected_tools: frozenset[str], ignore_fields: Mapping[str, tuple[str, ...]]) -> None:
        self.protected_tools = protected_tools
        self.ignore_fields = ignore_fields
        self._newest: dict[bytes, CallRecord] = {}

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status != "completed" or call.protected or record.tool in self.protected_tools:
            return ()
        key = duplicate_signature(record.tool, call.input, self.ignore_fields)
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
