"""One session's context budget: a snapshot after every request, tier changes for the tips, compaction advice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dcp_plugin.budget.compaction import CompactionController, CompactionOutcome
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.budget.tips import TipId
from dcp_plugin.model.messages import Message


class SessionBudget:
    """How full one session's context is, updated after every request (incremental within an epoch)."""

    def __init__(self, stored: ContextSnapshot | None = None) -> None:
        self.latest: ContextSnapshot | None = stored
        self.compaction: CompactionController | None = None
        self._tip: TipId | None = stored.tip if stored is not None else None

    def record(self, snapshot: ContextSnapshot) -> ContextSnapshot:
        """Keep the session's latest context figure (tips and compaction advice read it)."""
        self.latest = snapshot
        return snapshot

    def tip_change(self) -> TipId | None:
        """The latest snapshot's tip when it differs from the last one reported, else None."""
        tip = self.latest.tip if self.latest is not None else None
        changed = tip != self._tip
        self._tip = tip
        return tip if changed else None

    def compaction_advice(
        self, enabled: bool, summarize: Callable[[dict[str, Any]], Any] | None, messages: Sequence[Message]
    ) -> CompactionOutcome | None:
        """What the compaction controller says for the latest snapshot; None before any request."""
        snap = self.latest
        if snap is None:
            return None
        if self.compaction is None:
            self.compaction = CompactionController(enabled=enabled)
        self.compaction.enabled = enabled
        return self.compaction.before_request(snap.estimated_input_tokens, snap.thresholds, summarize, messages)
