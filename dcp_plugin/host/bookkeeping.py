"""Per-session bookkeeping beside pruning: context snapshots, notifications, debug log, persistence."""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dcp_plugin.host import store as store_mod
from dcp_plugin.budget.compaction import CompactionController
from dcp_plugin.budget.limits import host_context_limit
from dcp_plugin.budget.snapshot import BudgetTracker, ContextSnapshot
from dcp_plugin.pipeline.conversation import info_of
from dcp_plugin.pipeline.ledger import CallRecord
from dcp_plugin.pipeline.session import SessionState

if TYPE_CHECKING:
    from dcp_plugin.host.runtime import Runtime

log = logging.getLogger("dcp_plugin")

# Queued writes go out at most this often from the request path (and at exit, and on commands).
FLUSH_INTERVAL_SECONDS = 10.0
_DEFAULT_STORE = object()
_LIVE: weakref.WeakSet[Bookkeeper] = weakref.WeakSet()


def _flush_all_at_exit() -> None:
    for keeper in list(_LIVE):
        keeper.flush(force=True)


atexit.register(_flush_all_at_exit)


@dataclass(eq=False)
class SessionBook:
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


class Bookkeeper:
    """Everything a runtime keeps per session besides the pruning state, and when it is saved."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.books: dict[str, SessionBook] = {}
        self.lock = threading.RLock()
        self.store_choice: Any = _DEFAULT_STORE
        self.last_flush = 0.0
        self.debug_log: Any = None
        _LIVE.add(self)

    def use_store(self, store: store_mod.Store | None) -> None:
        """Persist to ``store`` (tests, embedding hosts), or nowhere with None (replays, benchmarks)."""
        with self.lock:
            self.store_choice = store

    def after_request(self, state: SessionState, messages: list[Any], input: dict[str, Any] | None = None) -> None:
        """Work that follows a pruned request; never raises.

        Debug log and notification of new decisions, the context snapshot, and persistence.
        Writes are queued and go out in one short transaction at most every
        FLUSH_INTERVAL_SECONDS, and at exit: automatic decisions follow from the history
        (a restarted host recomputes them), so only their statistics wait. Manual sweeps
        are written at once by the command.
        """
        try:
            with self.lock:
                book = self.book_of(state)
                decisions = state.take_new_decisions()
                if decisions:
                    self.record(state, book, decisions)
                self.observe(state, book, messages, input)
                book.requests += 1
                book.saved_sent += self.saved_now(state, book)
            self.flush()
        except Exception:  # noqa: BLE001 - bookkeeping must never break the request
            log.exception("dcp: post-request bookkeeping failed")

    def store(self) -> store_mod.Store | None:
        choice = self.store_choice
        if choice is _DEFAULT_STORE:
            return store_mod.shared(store_mod.default_path(), lambda text: self.runtime.report(None, text))
        return choice  # type: ignore[no-any-return]

    def restore(self, state: SessionState) -> None:
        """First sight of a session: load what earlier processes saved (manual sweeps first of all)."""
        try:
            with self.lock:
                book = self.new_book(state)
            for call_id, reason in book.restored_manual.items():
                state.manual.setdefault(call_id, reason)
        except Exception:  # noqa: BLE001 - an unreadable store only means starting fresh
            log.exception("dcp: could not restore the saved state of session %s", state.session_id)

    def new_book(self, state: SessionState) -> SessionBook:
        store = self.store()
        stored = store.load_session(state.session_id) if store is not None else store_mod.StoredSession()
        book = SessionBook(state=state, resyncs=state.resyncs, known=set(stored.pruned), restored_manual=stored.manual)
        if stored.snapshot:
            try:
                book.snapshot = ContextSnapshot.from_dict(stored.snapshot)
            except ValueError:
                book.snapshot = None
        self.books[state.session_id] = book
        return book

    def book_of(self, state: SessionState) -> SessionBook:
        book = self.books.get(state.session_id)
        if book is None or book.state is not state:
            book = self.new_book(state)
        return book

    def record(self, state: SessionState, book: SessionBook, decisions: list[CallRecord], notify: bool = True) -> None:
        """Debug-log, queue for the store and notify new decisions (each call once per session, ever)."""
        self.debug(state, decisions)
        fresh = [r for r in decisions if r.call_id not in book.known]
        for record in fresh:
            book.known.add(record.call_id)
            book.decisions.append(
                store_mod.Decision(record.call_id, record.tool, record.reason or "", record.tokens_saved)
            )
        if notify and self.runtime.notify is not None:
            from dcp_plugin.host.notifications import format_notification
            from dcp_plugin.pipeline.strategies import SWEEP

            text = format_notification([r for r in fresh if r.reason != SWEEP], state.config.prune_notification)
            if text is not None:
                try:
                    self.runtime.notify(state.session_id, text)
                except Exception:  # noqa: BLE001 - a broken notify must not break the request
                    log.exception("dcp: the host's notify failed")

    def debug(self, state: SessionState, decisions: list[CallRecord]) -> None:
        if not state.config.debug:
            return
        from dcp_plugin.host.debuglog import DebugLog, state_dir

        path = state_dir() / "debug.log"
        debug_log = self.debug_log
        if debug_log is None or debug_log.path != path:
            if debug_log is not None:
                debug_log.close()
            debug_log = self.debug_log = DebugLog(path)
        for r in decisions:
            debug_log.decision(
                state.session_id,
                r.call_id,
                r.tool,
                r.reason or "",
                f"turn={r.turn} field={r.field or '-'} tokens_saved={r.tokens_saved}",
            )

    def observe(
        self, state: SessionState, book: SessionBook, messages: list[Any], input: dict[str, Any] | None
    ) -> ContextSnapshot:
        """Bring the session's context snapshot up to date (incremental)."""
        if state.resyncs != book.resyncs:
            book.tracker.reset()
            book.resyncs = state.resyncs
        model = input.get("model") if isinstance(input, dict) else None
        startup_model = self.runtime.context.get("model") if isinstance(self.runtime.context, dict) else None
        limit = host_context_limit(model)
        if limit is None:
            limit = host_context_limit(startup_model)
        model_id = last_model_id(messages) or _model_id(model) or _model_id(startup_model)
        image_tokens = state.config.context_budget.image_token_estimate
        book.snapshot = book.tracker.observe(messages, limit, model_id, image_tokens)
        book.snapshot_dirty = True
        return book.snapshot

    @staticmethod
    def saved_now(state: SessionState, book: SessionBook) -> int:
        """Tokens the current decisions save per request, kept incrementally."""
        decided = state.decided
        if decided is not book.decided_ref or len(decided) < book.decided_len:
            book.decided_ref, book.decided_len, book.saved_now = decided, 0, 0
        if len(decided) > book.decided_len:
            book.saved_now += sum(r.tokens_saved for r in decided[book.decided_len :])
            book.decided_len = len(decided)
        return book.saved_now

    def flush(self, force: bool = False) -> None:
        """Write pending bookkeeping of every session in one transaction; never raises."""
        try:
            now = time.monotonic()
            with self.lock:
                if not force and now - self.last_flush < FLUSH_INTERVAL_SECONDS:
                    return
                self.last_flush = now
                store = self.store()
                pending = [(book, book.take()) for book in self.books.values() if book.dirty()]
                # Sessions the host dropped are forgotten once their writes are out.
                for sid, book in list(self.books.items()):
                    if self.runtime.sessions.get(sid) is not book.state:
                        del self.books[sid]
            if store is None or not pending:
                return
            if not store.save([batch for _, batch in pending]) and store.available:
                with self.lock:
                    for book, batch in pending:
                        book.give_back(batch)
        except Exception:  # noqa: BLE001
            log.exception("dcp: saving the pruning state failed")


def _model_id(model: Any) -> str | None:
    if isinstance(model, dict):
        for key in ("id", "modelID"):
            value = model.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def last_model_id(messages: list[Any]) -> str | None:
    """The model of the newest assistant message (OpenCode's ``info.modelID``)."""
    for message in reversed(messages):
        info = info_of(message)
        if info.get("role") == "assistant":
            value = info.get("modelID")
            return value if isinstance(value, str) and value else None
    return None
