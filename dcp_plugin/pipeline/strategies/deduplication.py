"""Deduplication: of calls with the same tool and input, only the newest completed one keeps its output."""

from __future__ import annotations

from typing import Any

from dcp_plugin.pipeline.ledger import CallRecord, signature


class Deduplication:
    """Remembers the newest completed call per signature; older ones become candidates."""

    def __init__(self, protected_tools: frozenset[str]) -> None:
        self.protected_tools = protected_tools
        self._newest: dict[bytes, CallRecord] = {}

    def observe(self, record: CallRecord, tool_input: Any, path_protected: bool) -> CallRecord | None:
        """Index a finished call; return the call it makes obsolete, if any."""
        if record.status != "completed" or path_protected or record.tool in self.protected_tools:
            return None
        key = signature(record.tool, tool_input)
        newest = self._newest.get(key)
        if newest is None:
            self._newest[key] = record
            return None
        if newest.seq < record.seq:
            self._newest[key] = record
            return newest
        # A call that finished late but sits earlier in the conversation is the obsolete one.
        return record
