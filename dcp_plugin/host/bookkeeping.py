"""The bookkeeping after each request: what was applied is saved and logged, the user told, the budget kept."""

from __future__ import annotations

import threading
from typing import Any

from dcp_plugin import store as store_mod
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.budget.tips import TipId, tip_text
from dcp_plugin.cost.requests import net_sentence
from dcp_plugin.host.held import HeldSession
from dcp_plugin.host.notifier import Notifier
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.host.prune_notice import format_notification
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.scheduler import PointCost
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.pipeline.strategies import SWEEP


class Bookkeeper:
    """Records what each request of a session did: the store's queue, the debug log, notices and the budget."""

    def __init__(self, persistence: Persistence, notifier: Notifier) -> None:
        self._persistence = persistence
        self._notifier = notifier
        self._debug_log: Any = None
        self._log_lock = threading.Lock()  # one log file for every session

    def record(
        self, session: HeldSession, count: int, context: ContextSnapshot, *, request: bool
    ) -> tuple[ContextSnapshot, TipId | None]:
        """Save, log and announce what the request of ``count`` messages applied; the context snapshot and a
        changed tip (hold its lock). ``context``: the context now, read from the messages as stored.

        ``request=False`` for a sync that sent nothing (a command): counters stay as they are.
        """
        state = session.state
        cost = _request_cost(state, count)
        fresh = self.record_applied(state)
        if fresh is not None and request:
            self._notify_pruned(state, [d for d in fresh if d.strategy != SWEEP])
        restores = state.take_new_restores()
        if restores:
            self._persistence.record_restores(
                state.session_id, [store_mod.Restore(v.call_id, v.outputs, v.tokens) for v in restores]
            )
        snapshot = session.budget.record(context)
        tip = session.budget.tip_change()
        if request:
            # What pruning saves, without the prunable lists (the plugin's own text, shown apart).
            saved = state.saved_tokens + state.list_tokens
            self._persistence.count_request(state.session_id, saved, snapshot.to_dict(), cost)
        return snapshot, tip

    def announce(self, session_id: str, snapshot: ContextSnapshot, tip: TipId | None, notify: bool) -> None:
        """Tell the user of a changed budget tip (when ``notify``), and let the store's queue go out when due."""
        if tip is not None and notify:
            self._notifier.news(session_id, f"dcp: {tip_text(tip, snapshot.estimated_input_tokens, snapshot.context_limit)}")
        self._persistence.flush()

    def record_applied(self, state: SessionState) -> list[Decision] | None:
        """Queue and log the decisions applied since the last call; those new to the store, None when none was."""
        applied = state.take_new_applied()
        if not applied:
            return None
        fresh = self._persistence.record(state.session_id, applied)
        self._debug(state, fresh)
        return fresh

    def _notify_pruned(self, state: SessionState, decisions: list[Decision]) -> None:
        totals = state.cost_totals
        net = net_sentence(totals.cost_without, totals.cost_with)
        text = format_notification(decisions, state.config.prune_notification, net)
        if text is not None:
            self._notifier.news(state.session_id, text)

    def _debug(self, state: SessionState, decisions: list[Decision]) -> None:
        if not state.config.debug:
            return
        from dcp_plugin.host.debuglog import DebugLog, state_dir

        path = state_dir() / "debug.log"
        with self._log_lock:
            if self._debug_log is None or self._debug_log.path != path:
                if self._debug_log is not None:
                    self._debug_log.close()
                self._debug_log = DebugLog(path)
            for d in decisions:
                self._debug_log.decision(
                    state.session_id,
                    d.call_id,
                    d.tool,
                    d.strategy,
                    f"turn={d.record.turn} field={d.field} tokens_saved={d.tokens_saved}",
                )


def _request_cost(state: SessionState, count: int) -> PointCost | None:
    """The cost of the request holding the first ``count`` messages, when the latest update scheduled it.

    Only the request being sent now is counted: earlier requests of the implied history were
    counted when they were made (or went out without the plugin).
    """
    cost = state.take_latest_cost()
    return cost if cost is not None and cost.count == count else None
