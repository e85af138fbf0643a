"""The plugin's runtime: sessions, config and the per-request pipeline behind the hooks."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcp_plugin.host import store as store_mod
from dcp_plugin.host.bookkeeping import Bookkeeper, last_model_id
from dcp_plugin.budget.compaction import CompactionController, CompactionOutcome
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.conversation import session_id_of
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.placeholders import Desync, Patches, apply, plan
from dcp_plugin.pipeline.session import SessionState

log = logging.getLogger("dcp_plugin")

Notify = Callable[[str | None, str], None]

class StaticConfig:
    """A config source that always answers the same config (tests, embedding hosts)."""

    def __init__(self, config: DcpConfig | None = None) -> None:
        self.config = config or DcpConfig()

    def get(self) -> DcpConfig:
        """The config."""
        return self.config


class Runtime:
    """Holds every session of one host process and runs the pipeline for each request."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, config_source: Any = None) -> None:
        self.directory = str(Path(directory) if directory is not None else Path.cwd())
        self.notify: Notify | None = None
        self.context: dict[str, Any] = {}
        self._config_source = config_source
        self.sessions: dict[str, SessionState] = {}
        self._lock = threading.RLock()
        self.bookkeeper = Bookkeeper(self)

    # -- host wiring -------------------------------------------------------------------------
    def startup(self, context: dict[str, Any]) -> None:
        """Adopt the host's directory and capabilities."""
        if not isinstance(context, dict):
            return
        self.context = context
        directory = context.get("directory")
        if isinstance(directory, (str, os.PathLike)) and str(directory):
            if str(directory) != self.directory and self._config_source is not None and not isinstance(
                self._config_source, StaticConfig
            ):
                self._config_source = None
            self.directory = str(Path(directory))
        notify = context.get("notify")
        self.notify = notify if callable(notify) else None

    def report(self, session_id: str | None, text: str) -> None:
        """Show a message to the user through the host, else on stderr; never raises."""
        try:
            if self.notify is not None:
                self.notify(session_id, text)
                return
        except Exception:  # noqa: BLE001 - a broken notify must not break the request
            log.exception("dcp: the host's notify failed")
        print(text if text.startswith("dcp") else f"dcp: {text}", file=sys.stderr)

    def config(self) -> DcpConfig:
        """The effective config, reloaded cheaply when a file changed."""
        if self._config_source is None:
            self._config_source = self._make_config_source()
        return self._config_source.get()

    def use_config(self, config: DcpConfig | None) -> None:
        """Pin a config (a CLI's --config), or go back to the config files with None."""
        self._config_source = StaticConfig(config) if config is not None else None

    def _make_config_source(self) -> Any:
        from dcp_plugin.config.source import ConfigSource

        return ConfigSource(Path(self.directory), self.report)

    def session(self, session_id: str, config: DcpConfig | None = None) -> SessionState:
        """The state of a session, created on first sight."""
        state = self.sessions.get(session_id)
        config = config or self.config()
        if state is None:
            state = self.sessions[session_id] = SessionState(session_id, config, self.directory)
            self.bookkeeper.restore(state)
        else:
            state.reconfigure(config)
        return state

    # -- the hot path ------------------------------------------------------------------------
    def sync(self, messages: list[Any], input: dict[str, Any] | None = None) -> SessionState | None:
        """Bring the session of ``messages`` up to date (None when the plugin is disabled); may raise."""
        config = self.config()
        if not config.enabled:
            return None
        with self._lock:
            state = self.session(session_id_of(input, messages), config)
            state.update(messages)
            return state

    def plan(self, messages: list[Any], input: dict[str, Any] | None = None) -> tuple[SessionState | None, Patches]:
        """Sync the session with ``messages`` and return the patches to send; may raise."""
        with self._lock:
            state = self.sync(messages, input)
            if state is None:
                return None, Patches()
            try:
                patches = plan(messages, state.decided)
            except Desync:
                # The prefix fingerprint matched but a part moved: rebuild from scratch once.
                state.resync()
                state.update(messages)
                patches = plan(messages, state.decided)
            state.last_patches = patches
        return state, patches

    def transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """The chat_messages_transform hook: prune in place, or leave everything untouched."""
        try:
            messages = output.get("messages") if isinstance(output, dict) else None
            if not isinstance(messages, list) or not messages:
                return
            state, patches = self.plan(messages, input if isinstance(input, dict) else None)
            apply(patches)
        except Exception:  # noqa: BLE001 - fail open: the request goes out unpruned
            log.exception("dcp: pruning failed; the request is sent unchanged")
            return
        if state is not None:
            self.after_request(state, messages, input if isinstance(input, dict) else None)

    def after_request(self, state: SessionState, messages: list[Any], input: dict[str, Any] | None = None) -> None:
        """Snapshot, notifications, debug log and persistence after a request; never raises."""
        self.bookkeeper.after_request(state, messages, input)

    def use_store(self, store: store_mod.Store | None) -> None:
        """Persist to ``store`` (tests, embedding hosts), or nowhere with None (replays, benchmarks)."""
        self.bookkeeper.use_store(store)

    def command(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """The command_execute_before hook: answers `/dcp ...`; other commands are left alone."""
        if not isinstance(input, dict) or not isinstance(output, dict):
            return
        name = input.get("command")
        if not isinstance(name, str) or name.strip().lstrip("/") != "dcp":
            return
        try:
            config = self.config()
            if not config.enabled or not config.commands.enabled:
                return
        except Exception:  # noqa: BLE001
            log.exception("dcp: could not read the config for /dcp")
            return
        arguments = input.get("arguments")
        arguments = arguments if isinstance(arguments, str) else ""
        try:
            text = self._run_command(input, arguments)
        except Exception as exc:  # noqa: BLE001 - answer the user rather than send /dcp to the model
            log.exception("dcp: /dcp %s failed", arguments)
            text = f"dcp: /dcp {arguments} failed: {type(exc).__name__}: {exc}".replace("  ", " ")
        output["handled"] = True
        parts = output.get("parts")
        if not isinstance(parts, list):
            parts = output["parts"] = []
        parts.append({"type": "text", "text": text})

    def compaction_advice(self, session_id: str, messages: list[Any] | None = None) -> CompactionOutcome | None:
        """What the compaction controller says for a session's latest snapshot; None when unknown.

        For hosts that call it before a request. It runs the host's ``summarize`` side query
        only when the snapshot reached the auto threshold and ``contextBudget.compaction``
        is enabled; the controller's circuit breaker stops repeated failures. Never raises.
        """
        try:
            book = self.bookkeeper.books.get(session_id)
            if book is None or book.snapshot is None:
                return None
            enabled = self.config().context_budget.compaction.enabled
            if book.compaction is None:
                book.compaction = CompactionController(enabled=enabled)
            book.compaction.enabled = enabled
            summarize = self.context.get("summarize") if isinstance(self.context, dict) else None
            snap = book.snapshot
            return book.compaction.before_request(
                snap.estimated_input_tokens, snap.thresholds, summarize if callable(summarize) else None, messages or []
            )
        except Exception:  # noqa: BLE001 - advice is optional; the request goes on without it
            log.exception("dcp: compaction advice failed")
            return None

    def _run_command(self, input: dict[str, Any], arguments: str) -> str:
        from dcp_plugin.commands.dispatch import CommandEnv, run

        messages = input.get("messages")
        messages = messages if isinstance(messages, list) and messages else None
        session_id = session_id_of(input, messages or [])
        state: SessionState | None = None
        snapshot: ContextSnapshot | None = None
        if messages is not None:
            try:
                state, _ = self.plan(messages, input)
            except Exception:  # noqa: BLE001 - report what is known rather than nothing
                log.exception("dcp: could not sync session %s for /dcp", session_id)
                state = self.sessions.get(session_id)
        else:
            state = self.sessions.get(session_id)
        with self.bookkeeper.lock:
            book = self.bookkeeper.book_of(state) if state is not None else self.bookkeeper.books.get(session_id)
            if state is not None and book is not None:
                decisions = state.take_new_decisions()
                if decisions:
                    self.bookkeeper.record(state, book, decisions)
            if messages is not None and state is not None and book is not None:
                snapshot = self.bookkeeper.observe(state, book, messages, input)
            elif messages is not None:
                snapshot = BudgetTracker().observe(messages, None, last_model_id(messages))
            elif book is not None:
                snapshot = book.snapshot

        def record_sweep(records: list[CallRecord]) -> None:
            if state is None:
                return
            with self.bookkeeper.lock:
                target = self.bookkeeper.book_of(state)
                for record in records:
                    target.manual[record.call_id] = record.reason or "sweep"
                self.bookkeeper.record(state, target, state.take_new_decisions(), notify=False)
            self.bookkeeper.flush(force=True)

        def stats() -> tuple[store_mod.Stats | None, store_mod.Stats | None]:
            self.bookkeeper.flush(force=True)
            store = self.bookkeeper.store()
            if store is None:
                return None, None
            return store.stats(session_id), store.stats(None)

        env = CommandEnv(
            session_id=session_id,
            messages=messages,
            state=state,
            config=state.config if state is not None else self.config(),
            snapshot=snapshot,
            record_sweep=record_sweep,
            stored_stats=stats,
        )
        with self._lock:  # a sweep changes the session's decisions, like a request does
            return run(env, arguments)
