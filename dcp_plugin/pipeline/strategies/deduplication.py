"""Deduplication: of calls with the same tool and input, only the newest completed one keeps its output."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from dcp_plugin.config.section import Section
from dcp_plugin.pipeline.ledger import CallRecord, signature
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, ReplaceOutput
from dcp_plugin.pipeline.protection import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.pipeline.strategies.base import FinishedCall, ObserveOnly, Proposal, StrategySpec

NAME = "deduplication"
EDIT = ReplaceOutput(DUPLICATE_PLACEHOLDER)


class DeduplicationConfig(Section):
    enabled: bool = True
    protected_tools: tuple[str, ...] = Field(default=(), alias="protectedTools")


class Deduplication(ObserveOnly):
    """Remembers the newest completed call per signature; older ones become obsolete."""

    def __init__(self, protected_tools: frozenset[str]) -> None:
        self.protected_tools = protected_tools
        self._newest: dict[bytes, CallRecord] = {}

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status != "completed" or call.protected or record.tool in self.protected_tools:
            return ()
        key = signature(record.tool, call.input)
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
    return Deduplication(HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools))


SPEC = StrategySpec(NAME, "same call made again later", DeduplicationConfig, build)
