"""Per-session pruning state: the ledger, the strategies in registry order, and the decisions taken so far."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.ledger import CallRecord, Ledger
from dcp_plugin.pipeline.placeholders import Decision, Edit, decide, sweep_edit
from dcp_plugin.pipeline.protection import PathProtector, absolute_path, extract_paths
from dcp_plugin.pipeline.strategies import REGISTRY, SWEEP, FinishedCall, Progress, Strategy

# Process-wide, so that an epoch of a dropped session never equals one of a new session.
_EPOCHS = itertools.count(1)


def build_strategies(config: DcpConfig) -> list[tuple[str, Strategy]]:
    """The enabled strategies, in registry order, each built from its own config section."""
    built: list[tuple[str, Strategy]] = []
    for spec in REGISTRY:
        strategy = spec.build(config.strategies.section(spec.name))
        if strategy is not None:
            built.append((spec.name, strategy))
    return built


class SessionState:
    """Everything the plugin remembers about one session between requests.

    Decisions of one *epoch* only grow: they start over (a new epoch) when the history is
    rewritten, the config changes, or a caller asks for it; consumers that cache anything
    derived from the decisions compare epochs, never object identities. A decision is first
    pending, then applied: from the request it is applied in on, its placeholder is written
    on every request.
    """

    def __init__(
        self, session_id: str, config: DcpConfig, directory: str, manual: Mapping[str, str] | None = None
    ) -> None:
        self.session_id = session_id
        self.directory = directory
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, directory)
        # Calls pruned by the user (call id -> reason): survive every restart and are re-applied.
        self.manual: dict[str, str] = dict(manual or {})
        self.restarts = 0
        self.epoch = 0
        self.requests = 0  # updates in this epoch: the request index a decision is applied in
        self.ledger = Ledger()
        self.strategies: list[tuple[str, Strategy]] = []
        self.decisions: list[Decision] = []  # every decision of this epoch, in the order made
        self.pending: list[Decision] = []
        self.applied: list[Decision] = []  # in the order applied; a prefix never changes within an epoch
        self.new_applied: list[Decision] = []  # applied since the last take_new_applied()
        self.saved_tokens = 0  # tokens the applied decisions in force remove from every request
        self.in_force_count = 0  # how many applied decisions are in force
        self._young: list[tuple[int, int, CallRecord, str, Edit]] = []
        self._start_over()

    # -- lifecycle ---------------------------------------------------------------------------
    def _start_over(self) -> None:
        """A new epoch: forget everything derived from the history (manual sweeps stay)."""
        self.epoch = next(_EPOCHS)
        self.requests = 0
        self.ledger = Ledger()
        self.strategies = build_strategies(self.config)
        self.decisions = []
        self.pending = []
        self.applied = []
        self.new_applied = []
        self.saved_tokens = 0
        self.in_force_count = 0
        self._young = []

    def restart(self) -> None:
        """Start over on the next update, as if the history were new."""
        self.restarts += 1
        self._start_over()

    def reconfigure(self, config: DcpConfig) -> None:
        """Adopt a changed config: decisions are recomputed from scratch on the next update."""
        # The config source hands back the same object until a file changes: skip the deep compare.
        if config is self.config or config == self.config:
            return
        self.config = config
        self.protector = PathProtector(config.protected_file_patterns, self.directory)
        self.restart()

    # -- the request path --------------------------------------------------------------------
    def update(self, messages: Sequence[Any], changed_from: int | None = None) -> None:
        """Bring the state up to date with ``messages`` (incremental unless the history was rewritten).

        ``changed_from``: the host resent messages from this index on (their ids unchanged).
        """
        if not self.ledger.continues(messages, changed_from):
            self.restart()
            changed_from = None
        self._advance(messages, changed_from)
        self.requests += 1
        self._schedule()

    def _advance(self, messages: Sequence[Any], changed_from: int | None) -> None:
        ledger = self.ledger
        result = ledger.sync(messages, changed_from)
        proposals: dict[str, list[tuple[CallRecord, Edit]]] = {name: [] for name, _ in self.strategies}
        manual: list[CallRecord] = []
        for record in result.finished:
            state = ledger.state_of(messages, record) or {}
            paths = extract_paths(record.tool, state.get("input"))
            call = FinishedCall(
                record,
                state,
                paths,
                absolute_path(paths[0], self.directory) if paths else None,
                self.protector.is_protected(paths) if paths else False,
            )
            if record.call_id in self.manual:
                manual.append(record)
            for name, strategy in self.strategies:
                proposals[name].extend(strategy.observe(call))
        progress = Progress(ledger.turn, result.new_turns)
        for name, strategy in self.strategies:
            proposals[name].extend(strategy.advance(progress))
        for record in manual:
            state = ledger.state_of(messages, record) or {}
            self._decide(messages, record, self.manual[record.call_id], sweep_edit(state))
        # Strategy order decides ties: the first strategy to claim a field keeps it.
        for name, found in proposals.items():
            for record, edit in found:
                self._gate(messages, record, name, edit)
        self._release_young(messages)

    def _gate(self, messages: Sequence[Any], record: CallRecord, name: str, edit: Edit) -> None:
        protection = self.config.turn_protection
        if protection.enabled and self.ledger.turn - record.turn < protection.turns:
            heapq.heappush(self._young, (record.turn, record.seq, record, name, edit))
        else:
            self._decide(messages, record, name, edit)

    def _release_young(self, messages: Sequence[Any]) -> None:
        young = self._young
        if not young:
            return
        limit = self.ledger.turn - self.config.turn_protection.turns
        while young and young[0][0] <= limit:
            _, _, record, name, edit = heapq.heappop(young)
            self._decide(messages, record, name, edit)

    def _decide(self, messages: Sequence[Any], record: CallRecord, name: str, edit: Edit) -> Decision | None:
        state = self.ledger.state_of(messages, record)
        decision = decide(record, name, edit, state) if state is not None else None
        if decision is None:
            return None
        current = record.output_decision if decision.field == "output" else record.input_decision
        if current is not None:
            # The first decision on a field keeps it; only a partial cut gives way to a whole replacement.
            if current.cuts is None or decision.cuts is not None:
                return None
            self._retire(current)
        if decision.field == "output":
            record.output_decision = decision
        else:
            record.input_decision = decision
        self.decisions.append(decision)
        self.pending.append(decision)
        return decision

    def _retire(self, decision: Decision) -> None:
        decision.superseded = True
        if decision.applied_at is None:
            self.pending.remove(decision)
        else:
            self.saved_tokens -= decision.tokens_saved
            self.in_force_count -= 1

    def _schedule(self) -> None:
        """Write every pending decision from this request on."""
        for decision in self.pending:
            self._apply(decision)
        self.pending = []

    def _apply(self, decision: Decision) -> None:
        decision.applied_at = self.requests
        self.applied.append(decision)
        self.new_applied.append(decision)
        self.saved_tokens += decision.tokens_saved
        self.in_force_count += 1

    # -- user decisions ----------------------------------------------------------------------
    def sweep(self, messages: Sequence[Any], records: Sequence[CallRecord], reason: str = SWEEP) -> list[Decision]:
        """Prune calls by explicit user request, at once; returns the decisions that took effect."""
        done: list[Decision] = []
        for record in records:
            self.manual[record.call_id] = reason
            state = self.ledger.state_of(messages, record)
            if state is None:
                continue
            decision = self._decide(messages, record, reason, sweep_edit(state))
            if decision is not None:
                self.pending.remove(decision)
                self._apply(decision)
                done.append(decision)
        return done

    # -- what consumers read -----------------------------------------------------------------
    def in_force(self) -> list[Decision]:
        """The applied decisions whose placeholders are written now, in the order applied."""
        return [d for d in self.applied if not d.superseded]

    def take_new_applied(self) -> list[Decision]:
        """Decisions applied since the last call (notifications, logs, persistence)."""
        out, self.new_applied = self.new_applied, []
        return out

    def saved_by_strategy(self) -> dict[str, tuple[int, int]]:
        """Per strategy: (calls pruned, estimated tokens saved per request), decisions in force only."""
        totals: dict[str, tuple[int, int]] = {}
        for decision in self.applied:
            if decision.superseded:
                continue
            count, tokens = totals.get(decision.strategy, (0, 0))
            totals[decision.strategy] = (count + 1, tokens + decision.tokens_saved)
        return totals
