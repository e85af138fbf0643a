"""A session's state on first sight: resumed from its checkpoint, else built anew with the store's pins and sweeps."""

from __future__ import annotations

from typing import Any

from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.checkpoint_policy import CheckpointPolicy
from dcp_plugin.host.held import HeldSession
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.host.session_budget import SessionBudget
from dcp_plugin.host.tool_service import ToolService
from dcp_plugin.pipeline.session import SessionState


class FirstSight:
    """Makes the sessions the runtime holds, and catches up those first seen while the store failed."""

    def __init__(self, persistence: Persistence, checkpoints: CheckpointPolicy, tools: ToolService, what_if: bool) -> None:
        self._persistence = persistence
        self._checkpoints = checkpoints
        self._tools = tools
        self._what_if = what_if

    def make(self, session_id: str, config: DcpConfig, directory: str, root: str | None) -> HeldSession:
        """The session as the store and its checkpoint leave it (it reads the disk: call outside the runtime lock)."""
        stored = self._persistence.load(session_id)
        offered = self._tools.offered
        state = self._checkpoints.resume(session_id, config, stored, directory, root, offered)
        resumed = state is not None
        if state is None:
            state = SessionState(
                session_id,
                config,
                directory,
                manual=stored.manual,
                root=root,
                tools_offered=offered,
                pinned=stored.pinned,
                # The store counted requests this plugin sent for the session: their counts are of pruned requests.
                pruned_live=stored.requests > 0,
                what_if=self._what_if,
            )
        made = HeldSession(state, SessionBudget(stored_snapshot(stored.snapshot)), stored=stored.complete)
        if resumed:
            made.checkpointed = (state.epoch, state.messages_read)
        return made

    def catch_up(self, session: HeldSession) -> None:
        """A session first seen while the store failed: once it answers, take its saved pins and sweeps (hold its lock).

        Pins must hold whatever the store does; the first load is retried (the store itself backs
        off between attempts) until it succeeds.
        """
        stored = self._persistence.load(session.state.session_id)
        if not stored.complete:
            return
        session.stored = True
        state = session.state
        state.pin(stored.pinned)
        swept = {call_id: reason for call_id, reason in stored.manual.items() if call_id not in state.pinned}
        if any(state.manual.get(call_id) != reason for call_id, reason in swept.items()):
            state.manual.update(swept)
            state.restart()


def stored_snapshot(stored: dict[str, Any] | None) -> ContextSnapshot | None:
    """The context snapshot the store kept, None when none or unreadable."""
    try:
        return ContextSnapshot.from_dict(stored) if stored else None
    except ValueError:
        return None
