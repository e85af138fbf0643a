"""Purge errors: a failed call at least `turns` user turns old loses its string inputs; the error stays."""

from __future__ import annotations

import heapq

from dcp_plugin.pipeline.ledger import CallRecord


class PurgeErrors:
    """Failed calls waiting to grow old enough, ordered by the turn they were made in."""

    def __init__(self, turns: int, protected_tools: frozenset[str]) -> None:
        self.turns = turns
        self.protected_tools = protected_tools
        self._waiting: list[tuple[int, int, CallRecord]] = []

    def observe(self, record: CallRecord, path_protected: bool) -> None:
        """Index a finished call; errored ones start waiting."""
        if record.status == "error" and not path_protected and record.tool not in self.protected_tools:
            heapq.heappush(self._waiting, (record.turn, record.seq, record))

    def due(self, current_turn: int) -> list[CallRecord]:
        """Failed calls whose age (current turn − their turn) reached the threshold."""
        out: list[CallRecord] = []
        waiting = self._waiting
        while waiting and current_turn - waiting[0][0] >= self.turns:
            out.append(heapq.heappop(waiting)[2])
        return out
