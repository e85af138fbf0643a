"""The plugin's runtime: the sessions of one host process, and the one per-request API every façade calls.

It takes and returns plain values and knows no hook shapes. :meth:`Runtime.prepare` syncs a session
with the messages about to be sent and returns the :class:`Outgoing` patches; :meth:`Runtime.finish`
does the bookkeeping of a sent request (:mod:`.bookkeeping`) and never raises; :meth:`Runtime.prune`
is both, for hosts that hand the outgoing list itself. The rest are the user's operations and the
model's tools (:mod:`.tool_service`); checkpoints follow :mod:`.checkpoint_policy`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from dcp_plugin.budget.compaction import CompactionOutcome
from dcp_plugin.budget.snapshot import ContextSnapshot
from dcp_plugin.config.discovery import project_root
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.bookkeeping import Bookkeeper
from dcp_plugin.host.checkpoint_policy import CheckpointPolicy
from dcp_plugin.host.config_slot import ConfigProvider, ConfigSlot, StaticConfig
from dcp_plugin.host.first_sight import FirstSight, stored_snapshot
from dcp_plugin.host.hostspec import HostStartup, Summarize
from dcp_plugin.host.idle import IDLE_SECONDS, MAX_SESSIONS, SessionLru
from dcp_plugin.host.notifier import Notifier, Notify
from dcp_plugin.host.persistence import Persistence
from dcp_plugin.host.registry import SessionRegistry
from dcp_plugin.host.results import Outgoing, PinOutcome, SessionView, SweepOutcome, ToolResult
from dcp_plugin.host.tool_service import ToolService
from dcp_plugin.host.views import session_view
from dcp_plugin.model.continuity import Continuity
from dcp_plugin.model.messages import Message, as_messages
from dcp_plugin.model.refs import ModelRef, request_model
from dcp_plugin.pipeline.patches import Desync
from dcp_plugin.pipeline.strategies import SWEEP

# Importable from here, where callers and the documentation have always found them.
__all__ = ["ConfigProvider", "Outgoing", "PinOutcome", "Runtime", "SessionView", "StaticConfig", "SweepOutcome", "ToolResult"]

log = logging.getLogger("dcp_plugin")


class Runtime:
    """Holds every session of one host process and runs the pipeline for each request."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        config: DcpConfig | ConfigProvider | None = None,
        *,
        store: Any = None,
        notify: Notify | None = None,
        create_global_config: bool = False,
        max_sessions: int = MAX_SESSIONS,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        what_if: bool = False,
    ) -> None:
        # A what-if (a replay of a recorded session): what it sends reaches no provider, so the counts
        # in the history stay those of the requests as recorded (whole, unless the store says otherwise).
        self.what_if = what_if
        self.directory = str(Path(directory) if directory is not None else Path.cwd())
        self.project_root: str | None = None  # relative protected patterns are anchored here
        self.notifier = Notifier(notify)
        self._config = ConfigSlot(config, self.notifier, create_global=create_global_config)
        self._persistence = Persistence(store, self.notifier.warn)
        self._checkpoints = CheckpointPolicy(self._persistence)
        self._books = Bookkeeper(self._persistence, self.notifier)
        self._tools = ToolService(self.config)
        first_sight = FirstSight(self._persistence, self._checkpoints, self._tools, what_if)
        lru = SessionLru(max_sessions, idle_seconds, clock)
        self._registry = SessionRegistry(lru, first_sight, self._checkpoints, self._persistence, self._tools)
        self._summarize: Summarize | None = None
        self._startup_model: ModelRef | None = None
        # Answered by the services themselves (their docstrings say what each does).
        self.use_store = self._persistence.use  # USER_STORE for the user's database, None for nowhere
        self.flush = partial(self._persistence.flush, force=True)
        self.stored_stats, self.store_busy = self._persistence.stats, self._persistence.busy
        self.wait_for_notices, self.wait_for_checkpoints = self.notifier.wait, self._checkpoints.wait
        self.tool_definitions, self.system_text = self._tools.definitions, self._tools.system_text
        # drop: forget a session (its saved state stays; it is restored on next sight). last_sent:
        # what a session's latest request wrote (replay and benchmarks undo and count it).
        self.drop, self.session_ids, self.last_sent = self._registry.drop, self._registry.ids, self._registry.last

    # -- setup -------------------------------------------------------------------------------
    def startup(self, host: HostStartup) -> None:
        """Adopt the host's directory and capabilities (see ``hostspec.host_startup``); absent ones are cleared."""
        if host.directory is not None:
            if host.directory != self.directory:
                self._config.moved()
            self.directory = str(Path(host.directory))
        self.project_root = str(project_root(self.directory, host.worktree))
        self.notifier.host = host.notify
        self._summarize, self._startup_model = host.summarize, host.model
        if not host.persist:
            self._persistence.use(None)
        self._config.started(self.directory)

    def config(self) -> DcpConfig:
        """The effective config, re-read cheaply when a file changed."""
        return self._config.get(self.directory)

    def use_config(self, config: DcpConfig | None) -> None:
        """Pin a config (a CLI's --config), or go back to the config files with None."""
        self._config.pin(config)

    # -- the request path --------------------------------------------------------------------
    def prepare(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        model: ModelRef | None = None,
        continuity: Continuity | None = None,
        since: tuple[int, int] | None = None,
        request: bool = True,
        write: bool = False,
    ) -> Outgoing | None:
        """Sync a session with the messages about to be sent; the patches to write, None when disabled.

        ``continuity``: what the host says of the list since the last call (the bridge's verdict on
        its delta, a pluggy host's ``Continuity.unchanged_before``), None when it says nothing. ``since``: the token of the patches the caller holds
        (from the previous :class:`Outgoing`); when still valid only newer patches are returned.
        ``request=False``: sync without scheduling a request (a command reads the state). ``write``:
        the patches are also written into ``messages`` (see :meth:`prune`), the context figure taken before.
        Raises on an internal failure (nothing then written): callers fail open (send the request unpruned).
        """
        config = self.config()
        if not config.enabled:
            return None
        messages, session = as_messages(messages), self._registry.get(session_id, config, self.directory, self.project_root)
        with self._registry.locked(session) as state:
            self._registry.forget_sent(session_id)  # until this request is planned: if it fails, it wrote nothing
            host_model = self._host_model(model)
            verdict = state.update(messages, continuity, request=request, model=host_model)
            # The newest model a message names, blanks filled from the host's, then the startup one.
            known = request_model(state.latest_model, host_model)
            session.model = None if known == ModelRef() else known
            # Bookkeeping reads the history as stored: with ``write``, before the placeholders go in.
            context = state.context_now(messages, session.model) if write else None
            try:
                patches, incremental = state.patches(messages, since, verdict, request=request, write=write)
            except Desync:
                # A safety net behind the verdict: it said the list continues, yet a decided call
                # moved (a host that rewrote without saying so). Walked again as rewritten, once.
                verdict = state.update(messages, Continuity.REWRITTEN, request=request, model=host_model)
                context = state.context_now(messages, session.model) if write else None
                patches, incremental = state.patches(messages, None, verdict, request=request, write=write)
            token = (state.epoch, len(state.applied))
            outgoing = Outgoing(
                session_id, state.epoch, patches, incremental, token, session.model, state.saved_tokens, state.in_force_count,
                context,
            )
            self._registry.remember(outgoing)
        return outgoing

    def _host_model(self, model: ModelRef | None) -> ModelRef:
        """The host's model for a request, blanks filled from the startup one."""
        return (model or ModelRef()).merged_over(self._startup_model)

    def finish(self, outgoing: Outgoing, messages: Sequence[Message], *, request: bool = True) -> ContextSnapshot | None:
        """Bookkeeping of a sent request (see :class:`.Bookkeeper`), its checkpoint when due, idle sessions let go; never raises.

        ``request=False`` for a sync that sent nothing (a command): counters stay as they are.
        """
        try:
            session = self._registry.find(outgoing.session_id)
            if session is None:
                return None
            with self._registry.locked(session) as state:
                notify = request and state.config.context_budget.notify
                context = outgoing.context or state.context_now(as_messages(messages), session.model)
                snapshot, tip = self._books.record(session, len(messages), context, request=request)
                if request:
                    self._checkpoints.save_if_due(session)
            self._books.announce(outgoing.session_id, snapshot, tip, notify)
            self._registry.evict(outgoing.session_id)
            return snapshot
        except Exception:  # noqa: BLE001 - bookkeeping must never break the request
            log.exception("dcp: post-request bookkeeping failed")
            return None

    def prune(self, session_id: str, messages: list[Message], *, model: ModelRef | None = None, continuity: Continuity | None = None) -> None:
        """Prune ``messages`` in place before they are sent (prepare writing its patches, then finish), or leave them untouched.

        For hosts that hand the outgoing list itself (``continuity``: as for :meth:`prepare`). Never
        raises: on an internal failure the request goes out unpruned.
        """
        try:
            outgoing = self.prepare(session_id, messages, model=model, continuity=continuity, write=True) if messages else None
            if outgoing is None:
                return
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning failed; the request is sent unchanged")
            return
        self.finish(outgoing, messages)

    # -- the user's operations ---------------------------------------------------------------
    def reset(self, session_id: str) -> None:
        """Start a session's decisions over on its next request (the host says its history was rewritten)."""
        session = self._registry.find(session_id)
        if session is not None:
            with self._registry.locked(session) as state:
                state.restart()

    def view(self, session_id: str) -> SessionView | None:
        """A read-only picture of a session (frozen rows of its calls and decisions), None when it was never seen."""
        session = self._registry.find(session_id)
        if session is None:
            return None
        with self._registry.locked(session):
            return session_view(session, self._tools.offered)

    def snapshot(self, session_id: str) -> ContextSnapshot | None:
        """The latest context snapshot of a session (restored from the store when not seen yet)."""
        session = self._registry.find(session_id)
        if session is not None:
            with self._registry.locked(session):
                return session.budget.latest
        return stored_snapshot(self._persistence.load(session_id).snapshot)

    def compaction_advice(self, session_id: str, messages: Sequence[Message] | None = None) -> CompactionOutcome | None:
        """What the compaction controller says for a session's latest snapshot; None when unknown. Never raises.

        Runs the host's ``summarize`` side query only when the snapshot reached the auto threshold and
        ``contextBudget.compaction`` is enabled; the controller's circuit breaker stops repeated failures.
        """
        try:
            enabled = self.config().context_budget.compaction.enabled
            session = self._registry.find(session_id)
            return session.budget.compaction_advice(enabled, self._summarize, list(as_messages(messages or []))) if session else None
        except Exception:  # noqa: BLE001 - advice is optional; the request goes on without it
            log.exception("dcp: compaction advice failed")
            return None

    def sweep(self, session_id: str, messages: Sequence[Message], count: int | None) -> SweepOutcome | None:
        """Prune every finished call since the last user message (or the last ``count`` calls) at once."""
        session = self._registry.find(session_id)
        if session is None:
            return None
        with self._registry.locked(session) as state:
            selection = state.sweep_plan(messages := as_messages(messages), count)
            swept = state.sweep(messages, selection.eligible, waiting=selection.waiting)
            self._books.record_applied(state)
        self._persistence.record_manual(session_id, {d.call_id: d.strategy for d in swept if d.strategy == SWEEP})
        return SweepOutcome.of(selection, swept, state.directory)

    def pin(self, session_id: str, idents: Sequence[str], pinned: bool = True) -> PinOutcome | None:
        """Pin (or unpin) the calls the short ids name in the session as last synced; None for an unknown session.

        A change starts the session's decisions over on its next request, so a pinned output
        that carried a placeholder goes out whole again, and an unpinned one may be pruned again.
        Pins are saved at once, like sweeps.
        """
        session = self._registry.find(session_id)
        if session is None:
            return None
        with self._registry.locked(session) as state:
            found, unknown = state.calls_named(idents)
            changed = set(state.pin([r.call_id for r in found], pinned))
        self._persistence.record_pins(session_id, {call_id: pinned for call_id in changed})
        return PinOutcome.of(pinned, found, changed, unknown)

    def sync_for_command(
        self, session_id: str, messages: Sequence[Message] | None, model: ModelRef | None
    ) -> ContextSnapshot | None:
        """Bring a session up to date for a command without counting a request; its snapshot."""
        if messages is None:
            return self.snapshot(session_id)
        outgoing = None
        try:
            outgoing = self.prepare(session_id, messages, model=model, request=False)
        except Exception:  # noqa: BLE001 - report what is known rather than nothing
            log.exception("dcp: could not sync session %s for /dcp", session_id)
        return self.finish(outgoing, messages, request=False) if outgoing is not None else None

    # -- the model's tools (see ToolService) -------------------------------------------------
    def execute_tool(
        self,
        session_id: str,
        name: str,
        arguments: object,
        messages: Sequence[Message],
        *,
        call_id: str | None = None,
        model: ModelRef | None = None,
    ) -> ToolResult | None:
        """Run a call of discard, extract or restore (see :meth:`.ToolService.execute`); None for another tool."""
        opened = self._registry.opener(session_id, self.directory, self.project_root)
        return self._tools.execute(name, arguments, as_messages(messages), call_id, opened, self._host_model(model))
