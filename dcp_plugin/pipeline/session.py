"""Per-session pruning state: the ledger, the strategy indexes and the decisions taken so far."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.ledger import CallRecord, Ledger
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths
from dcp_plugin.pipeline.placeholders import Patches, decide_replacement
from dcp_plugin.pipeline.strategies import (
    DEDUPLICATION,
    PURGE_ERRORS,
    SUPERSEDE_WRITES,
    Deduplication,
    PurgeErrors,
    SupersedeWrites,
)


class SessionState:
    """Everything the plugin remembers about one session between requests."""

    def __init__(self, session_id: str, config: DcpConfig, directory: str) -> None:
        self.session_id = session_id
        self.directory = directory
        self.manual: dict[str, str] = {}
        self.new_decisions: list[CallRecord] = []
        self.resyncs = 0
        # The placeholders of the latest request, as sent (replay and tools undo them from here).
        self.last_patches: Sequence[Any] = Patches()
        self._configure(config)
        self._reset(keep_seen=False)

    def _configure(self, config: DcpConfig) -> None:
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, self.directory)

    def _reset(self, keep_seen: bool = True) -> None:
        """Forget everything derived from the history; manual decisions stay."""
        reported: set[str] = getattr(self, "_already_reported", set()) if keep_seen else set()
        self._already_reported = reported | {r.call_id for r in getattr(self, "decided", ())}
        config = self.config
        self.ledger = Ledger()
        self.decided: list[CallRecord] = []
        self.dedup = Deduplication(config.dedup_protected())
        self.supersede = SupersedeWrites()
        self.purge = PurgeErrors(config.strategies.purge_errors.turns, config.purge_protected())
        self._young: list[tuple[int, int, CallRecord, str]] = []

    def reconfigure(self, config: DcpConfig) -> None:
        """Adopt a changed config: decisions are recomputed from scratch on the next update."""
        # The config source hands back the same object until a file changes: skip the deep compare.
        if config is not self.config and config != self.config:
            self._configure(config)
            self._reset()

    def update(self, messages: list[Any]) -> None:
        """Bring the state up to date with ``messages`` (incremental unless history was rewritten)."""
        if not self.ledger.cursor.continues(messages):
            self.resync()
        self._advance(messages)

    def resync(self) -> None:
        """Start over on the next update, as if the history were new."""
        self.resyncs += 1
        self._reset()

    def _advance(self, messages: list[Any]) -> None:
        ledger = self.ledger
        result = ledger.sync(messages)
        strategies = self.config.strategies
        dedup_on = strategies.deduplication.enabled
        supersede_on = strategies.supersede_writes.enabled
        purge_on = strategies.purge_errors.enabled
        by_strategy: dict[str, list[CallRecord]] = {DEDUPLICATION: [], SUPERSEDE_WRITES: [], PURGE_ERRORS: []}
        manual: list[CallRecord] = []
        for record in result.finished:
            state = ledger.state_of(messages, record) or {}
            tool_input = state.get("input")
            paths = extract_paths(record.tool, tool_input)
            protected = self.protector.is_protected(paths) if paths else False
            if record.call_id in self.manual:
                manual.append(record)
            if dedup_on:
                obsolete = self.dedup.observe(record, tool_input, protected)
                if obsolete is not None:
                    by_strategy[DEDUPLICATION].append(obsolete)
            if supersede_on and paths:
                key = absolute_path(paths[0], self.directory)
                by_strategy[SUPERSEDE_WRITES].extend(self.supersede.observe(record, key, protected))
            if purge_on:
                self.purge.observe(record, protected)
        if purge_on:
            by_strategy[PURGE_ERRORS].extend(self.purge.due(ledger.turn))
        for record in manual:
            self._decide(messages, record, self.manual[record.call_id])
        for reason, records in by_strategy.items():
            for record in records:
                self._gate(messages, record, reason)
        self._release_young(messages)

    def _gate(self, messages: list[Any], record: CallRecord, reason: str) -> None:
        protection = self.config.turn_protection
        if protection.enabled and self.ledger.turn - record.turn < protection.turns:
            heapq.heappush(self._young, (record.turn, record.seq, record, reason))
        else:
            self._decide(messages, record, reason)

    def _release_young(self, messages: list[Any]) -> None:
        young = self._young
        if not young:
            return
        limit = self.ledger.turn - self.config.turn_protection.turns
        while young and young[0][0] <= limit:
            _, _, record, reason = heapq.heappop(young)
            self._decide(messages, record, reason)

    def _decide(self, messages: list[Any], record: CallRecord, reason: str) -> None:
        if record.reason is not None:
            return
        decide_replacement(record, reason, self.ledger.state_of(messages, record) or {})
        self.decided.append(record)
        if record.call_id not in self._already_reported:
            self.new_decisions.append(record)

    def add_manual(self, messages: list[Any], records: list[CallRecord], reason: str) -> list[CallRecord]:
        """Prune calls by explicit user request; returns those newly pruned."""
        done: list[CallRecord] = []
        for record in records:
            self.manual[record.call_id] = reason
            if record.reason is None:
                self._decide(messages, record, reason)
                done.append(record)
        return done

    def take_new_decisions(self) -> list[CallRecord]:
        """Decisions made since the last call, for notifications, logs and persistence."""
        out, self.new_decisions = self.new_decisions, []
        return out

    def saved_by_strategy(self) -> dict[str, tuple[int, int]]:
        """Per strategy: (calls pruned, estimated tokens saved per request)."""
        totals: dict[str, tuple[int, int]] = {}
        for record in self.decided:
            count, tokens = totals.get(record.reason or "", (0, 0))
            totals[record.reason or ""] = (count + 1, tokens + record.tokens_saved)
        return totals
