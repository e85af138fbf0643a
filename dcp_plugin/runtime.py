"""The plugin's runtime: sessions, config and the per-request pipeline behind the hooks."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcp_plugin import store as store_mod
from dcp_plugin.budget.compaction import CompactionController, CompactionOutcome
from dcp_plugin.budget.limits import host_context_limit
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.conversation import info_of, session_id_of
from dcp_plugin.ledger import CallRecord
from dcp_plugin.pruner import Desync, Patches, apply, plan
from dcp_plugin.session import SessionState

log = logging.getLogger("dcp_plugin")

Notify = Callable[[str | None, str], None]

# Queued writes go out at most this often from the request path (and at exit, and on commands).
FLUSH_INTERVAL_SECONDS = 10.0
_DEFAULT_STORE = object()
_LIVE_RUNTIMES: weakref.WeakSet[Runtime] = weakref.WeakSet()


def _flush_all_at_exit() -> None:
    for runtime in list(_LIVE_RUNTIMES):
        runtime._flush(force=True)


atexit.register(_flush_all_at_exit)


@dataclass(eq=False)
class _Book:
    """What the runtime keeps per session beside the pruning state: snapshot, persistence, stats."""

    state: SessionState
    tracker: BudgetTracker = field(default_factory=BudgetTracker)
    snapshot: ContextSnapshot | None = None
    resyncs: int = 0
    known: set[str] = field(default_factory=set)  # call ids already persisted (any process)
    decisions: list[store_mod.Decision] = field(default_factory=list)
    manual: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    saved_sent: int = 0
    snapshot_dirty: bool = False
    decided_ref: list[CallRecord] | None = None
    decided_len: int = 0
    saved_now: int = 0
    compaction: CompactionController | None = None
    restored_manual: dict[str, str] = field(default_factory=dict)  # sweeps saved by earlier processes

    def dirty(self) -> bool:
        return bool(self.decisions or self.manual or self.requests or self.snapshot_dirty)

    def take(self) -> store_mod.SessionBatch:
        """The pending writes, handed over and cleared."""
        batch = store_mod.SessionBatch(
            self.state.session_id,
            self.decisions,
            self.manual,
            self.requests,
            self.saved_sent,
            self.snapshot.to_dict() if self.snapshot_dirty and self.snapshot is not None else None,
        )
        self.decisions, self.manual, self.requests, self.saved_sent, self.snapshot_dirty = [], {}, 0, 0, False
        return batch

    def give_back(self, batch: store_mod.SessionBatch) -> None:
        """Pending writes that could not be saved, kept for the next flush."""
        self.decisions[:0] = batch.decisions
        self.manual = {**batch.manual, **self.manual}
        self.requests += batch.requests
        self.saved_sent += batch.tokens_saved_sent
        self.snapshot_dirty = self.snapshot_dirty or batch.snapshot is not None


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
        self._books: dict[str, _Book] = {}
        self._book_lock = threading.RLock()
        self._store_choice: Any = _DEFAULT_STORE
        self._last_flush = 0.0
        self._debug_log: Any = None
        _LIVE_RUNTIMES.add(self)

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
            self._on_new_session(state)
        else:
            state.reconfigure(config)
        return state

    # -- the hot path ------------------------------------------------------------------------
    def plan(self, messages: list[Any], input: dict[str, Any] | None = None) -> tuple[SessionState | None, Patches]:
        """Sync the session with ``messages`` and return the patches to send; may raise."""
        config = self.config()
        if not config.enabled:
            return None, Patches()
        session_id = session_id_of(input, messages)
        with self._lock:
            state = self.session(session_id, config)
            state.update(messages)
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
        """Work that follows a pruned request; never raises.

        Debug log and notification of new decisions, the context snapshot, and persistence.
        Writes are queued and go out in one short transaction at most every
        FLUSH_INTERVAL_SECONDS, and at exit: automatic decisions follow from the history
        (a restarted host recomputes them), so only their statistics wait. Manual sweeps
        are written at once by the command.
        """
        try:
            with self._book_lock:
                book = self._book_of(state)
                decisions = state.take_new_decisions()
                if decisions:
                    self._record(state, book, decisions)
                self._observe(state, book, messages, input)
                book.requests += 1
                book.saved_sent += self._saved_now(state, book)
            self._flush()
        except Exception:  # noqa: BLE001 - bookkeeping must never break the request
            log.exception("dcp: post-request bookkeeping failed")

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

    def use_store(self, store: store_mod.Store | None) -> None:
        """Persist to ``store`` (tests, embedding hosts), or nowhere with None (replays, benchmarks)."""
        with self._book_lock:
            self._store_choice = store

    def compaction_advice(self, session_id: str, messages: list[Any] | None = None) -> CompactionOutcome | None:
        """What the compaction controller says for a session's latest snapshot; None when unknown.

        For hosts that call it before a request. It runs the host's ``summarize`` side query
        only when the snapshot reached the auto threshold and ``contextBudget.compaction``
        is enabled; the controller's circuit breaker stops repeated failures. Never raises.
        """
        try:
            book = self._books.get(session_id)
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

    # -- bookkeeping behind after_request and command -----------------------------------------
    def _store(self) -> store_mod.Store | None:
        choice = self._store_choice
        if choice is _DEFAULT_STORE:
            return store_mod.shared(store_mod.default_path(), lambda text: self.report(None, text))
        return choice  # type: ignore[no-any-return]

    def _on_new_session(self, state: SessionState) -> None:
        """First sight of a session: load what earlier processes saved (manual sweeps first of all)."""
        try:
            with self._book_lock:
                book = self._new_book(state)
            for call_id, reason in book.restored_manual.items():
                state.manual.setdefault(call_id, reason)
        except Exception:  # noqa: BLE001 - an unreadable store only means starting fresh
            log.exception("dcp: could not restore the saved state of session %s", state.session_id)

    def _new_book(self, state: SessionState) -> _Book:
        store = self._store()
        stored = store.load_session(state.session_id) if store is not None else store_mod.StoredSession()
        book = _Book(state=state, resyncs=state.resyncs, known=set(stored.pruned), restored_manual=stored.manual)
        if stored.snapshot:
            try:
                book.snapshot = ContextSnapshot.from_dict(stored.snapshot)
            except ValueError:
                book.snapshot = None
        self._books[state.session_id] = book
        return book

    def _book_of(self, state: SessionState) -> _Book:
        book = self._books.get(state.session_id)
        if book is None or book.state is not state:
            book = self._new_book(state)
        return book

    def _record(self, state: SessionState, book: _Book, decisions: list[CallRecord], notify: bool = True) -> None:
        """Debug-log, queue for the store and notify new decisions (each call once per session, ever)."""
        self._debug(state, decisions)
        fresh = [r for r in decisions if r.call_id not in book.known]
        for record in fresh:
            book.known.add(record.call_id)
            book.decisions.append(
                store_mod.Decision(record.call_id, record.tool, record.reason or "", record.tokens_saved)
            )
        if notify and self.notify is not None:
            from dcp_plugin.notifications import format_notification
            from dcp_plugin.strategies import SWEEP

            text = format_notification([r for r in fresh if r.reason != SWEEP], state.config.prune_notification)
            if text is not None:
                try:
                    self.notify(state.session_id, text)
                except Exception:  # noqa: BLE001 - a broken notify must not break the request
                    log.exception("dcp: the host's notify failed")

    def _debug(self, state: SessionState, decisions: list[CallRecord]) -> None:
        if not state.config.debug:
            return
        from dcp_plugin.debuglog import DebugLog, state_dir

        path = state_dir() / "debug.log"
        debug_log = self._debug_log
        if debug_log is None or debug_log.path != path:
            if debug_log is not None:
                debug_log.close()
            debug_log = self._debug_log = DebugLog(path)
        for r in decisions:
            debug_log.decision(
                state.session_id,
                r.call_id,
                r.tool,
                r.reason or "",
                f"turn={r.turn} field={r.field or '-'} tokens_saved={r.tokens_saved}",
            )

    def _observe(
        self, state: SessionState, book: _Book, messages: list[Any], input: dict[str, Any] | None
    ) -> ContextSnapshot:
        """Bring the session's context snapshot up to date (incremental)."""
        if state.resyncs != book.resyncs:
            book.tracker.reset()
            book.resyncs = state.resyncs
        model = input.get("model") if isinstance(input, dict) else None
        startup_model = self.context.get("model") if isinstance(self.context, dict) else None
        limit = host_context_limit(model)
        if limit is None:
            limit = host_context_limit(startup_model)
        model_id = _last_model_id(messages) or _model_id(model) or _model_id(startup_model)
        image_tokens = state.config.context_budget.image_token_estimate
        book.snapshot = book.tracker.observe(messages, limit, model_id, image_tokens)
        book.snapshot_dirty = True
        return book.snapshot

    @staticmethod
    def _saved_now(state: SessionState, book: _Book) -> int:
        """Tokens the current decisions save per request, kept incrementally."""
        decided = state.decided
        if decided is not book.decided_ref or len(decided) < book.decided_len:
            book.decided_ref, book.decided_len, book.saved_now = decided, 0, 0
        if len(decided) > book.decided_len:
            book.saved_now += sum(r.tokens_saved for r in decided[book.decided_len :])
            book.decided_len = len(decided)
        return book.saved_now

    def _flush(self, force: bool = False) -> None:
        """Write pending bookkeeping of every session in one transaction; never raises."""
        try:
            now = time.monotonic()
            with self._book_lock:
                if not force and now - self._last_flush < FLUSH_INTERVAL_SECONDS:
                    return
                self._last_flush = now
                store = self._store()
                pending = [(book, book.take()) for book in self._books.values() if book.dirty()]
                # Sessions the host dropped are forgotten once their writes are out.
                for sid, book in list(self._books.items()):
                    if self.sessions.get(sid) is not book.state:
                        del self._books[sid]
            if store is None or not pending:
                return
            if not store.save([batch for _, batch in pending]) and store.available:
                with self._book_lock:
                    for book, batch in pending:
                        book.give_back(batch)
        except Exception:  # noqa: BLE001
            log.exception("dcp: saving the pruning state failed")

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
        with self._book_lock:
            book = self._book_of(state) if state is not None else self._books.get(session_id)
            if state is not None and book is not None:
                decisions = state.take_new_decisions()
                if decisions:
                    self._record(state, book, decisions)
            if messages is not None and state is not None and book is not None:
                snapshot = self._observe(state, book, messages, input)
            elif messages is not None:
                snapshot = BudgetTracker().observe(messages, None, _last_model_id(messages))
            elif book is not None:
                snapshot = book.snapshot

        def record_sweep(records: list[CallRecord]) -> None:
            if state is None:
                return
            with self._book_lock:
                target = self._book_of(state)
                for record in records:
                    target.manual[record.call_id] = record.reason or "sweep"
                self._record(state, target, state.take_new_decisions(), notify=False)
            self._flush(force=True)

        def stats() -> tuple[store_mod.Stats | None, store_mod.Stats | None]:
            self._flush(force=True)
            store = self._store()
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


def _model_id(model: Any) -> str | None:
    if isinstance(model, dict):
        for key in ("id", "modelID"):
            value = model.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _last_model_id(messages: list[Any]) -> str | None:
    """The model of the newest assistant message (OpenCode's ``info.modelID``)."""
    for message in reversed(messages):
        info = info_of(message)
        if info.get("role") == "assistant":
            value = info.get("modelID")
            return value if isinstance(value, str) and value else None
    return None
