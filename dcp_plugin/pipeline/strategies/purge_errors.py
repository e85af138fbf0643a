"""Purge errors: a failed call at least `turns` user turns old loses its string inputs; the error stays."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from mypy_extensions import mypyc_attr

from dcp_plugin.config.protected import HARDCODED_PROTECTED_TOOLS
from dcp_plugin.config.strategies import PURGE_ERRORS, PurgeErrorsConfig
from dcp_plugin.pipeline.decisions import CallRecord, ShrinkInput
from dcp_plugin.pipeline.placeholders import FAILED_INPUT_PLACEHOLDER
from dcp_plugin.pipeline.strategies.base import FinishedCall, Progress, Proposal, StrategySpec

NAME = PURGE_ERRORS
EDIT = ShrinkInput(FAILED_INPUT_PLACEHOLDER)


@mypyc_attr(allow_interpreted_subclasses=True)
class PurgeErrors:
    """Failed calls waiting to grow old enough, ordered by the turn they were made in."""

    def __init__(self, turns: int, protected_tools: frozenset[str]) -> None:
        self.turns = turns
        self.protected_tools = protected_tools
        self._waiting: list[tuple[int, int, CallRecord]] = []

    def looks_at(self, tool: str, status: str) -> bool:
        """Only failed calls of unprotected tools wait."""
        return status == "error" and tool not in self.protected_tools

    def observe(self, call: FinishedCall) -> Iterable[Proposal]:
        record = call.record
        if record.status == "error" and not call.protected and record.tool not in self.protected_tools:
            heapq.heappush(self._waiting, (record.turn, record.seq, record))
        return ()

    def advance(self, progress: Progress) -> Iterable[Proposal]:
        """Failed calls whose age (current turn − their turn) reached the threshold."""
        out: list[Proposal] = []
        waiting = self._waiting
        while waiting and progress.turn - waiting[0][0] >= self.turns:
            out.append((heapq.heappop(waiting)[2], EDIT))
        return out


def build(config: PurgeErrorsConfig) -> PurgeErrors | None:
    if not config.enabled:
        return None
    return PurgeErrors(config.turns, HARDCODED_PROTECTED_TOOLS | frozenset(config.protected_tools))


SPEC = StrategySpec(NAME, "failed call, input removed", PurgeErrorsConfig, build)
