"""The persistence queue: what each session saves (decisions, sweeps, pins, counters, its snapshot) and when."""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dcp_plugin import store as store_mod
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.scheduler import PointCost
from dcp_plugin.store import BUSY_TIMEOUT_MS, REQUEST_WAIT_MS

log = logging.getLogger("dcp_plugin")

# Queued writes go out at most this often from the request path (and at exit, and on commands).
FLUSH_INTERVAL_SECONDS = 10.0


class _UserStore:
    """The user's own database, at the default path of the environment the host runs in."""

    def __repr__(self) -> str:
        return "USER_STORE"


USER_STORE: Any = _UserStore()


def user_store_if_kept() -> Any:
    """USER_STORE when the user's database folder exists (the OpenCode plugin made it), else None.

    A library host (``Pruner()``, the LangChain middleware, a pluggy host) used by someone who does
    not run OpenCode then leaves no OpenCode storage folder behind.
    """
    return USER_STORE if store_mod.data_dir().is_dir() else None
_LIVE: weakref.WeakSet[Persistence] = weakref.WeakSet()


def _flush_all_at_exit() -> None:
    for queue in list(_LIVE):
        queue.flush(force=True, at_exit=True)


atexit.register(_flush_all_at_exit)


def _waiting(store: Any, wait_ms: int) -> dict[str, int]:
    """How long ``store`` may wait for a locked file, as keyword arguments (a store of another kind takes none)."""
    return {"wait_ms": wait_ms} if isinstance(store, store_mod.Store) else {}


class Persistence:
    """Per-session writes queued on the request path and saved in one short transaction.

    Automatic decisions follow from the history (a restarted host recomputes them), so only
    their statistics wait for the next flush (at most every FLUSH_INTERVAL_SECONDS, and at
    exit); sweeps are written at once. ``reported`` holds, per session, every call id already
    counted (by this process or, per the store, an earlier one): the one place that says a
    decision was already reported, so a restart or a rewritten history never counts or
    notifies a call twice.
    """

    def __init__(self, store: Any = None, warn: Callable[[str], None] | None = None) -> None:
        self._choice: Any = store
        self._resolved: store_mod.Store | None = None
        self._warn = warn
        self._pending: dict[str, store_mod.SessionBatch] = {}
        self._reported: dict[str, set[str]] = {}
        self._lock = threading.RLock()
        self._last_flush = 0.0
        _LIVE.add(self)

    def use(self, store: Any) -> None:
        """Persist to ``store``, to the user's database with USER_STORE, or nowhere with None."""
        with self._lock:
            self._choice = store
            self._resolved = None

    def store(self) -> store_mod.Store | None:
        """The store in use; the user's database path is fixed the first time it is needed."""
        with self._lock:
            if self._choice is None:
                return None
            if self._resolved is None:
                if self._choice is USER_STORE:
                    self._resolved = store_mod.shared(store_mod.default_path(), self._warn)
                else:
                    self._resolved = self._choice
            return self._resolved

    def load(self, session_id: str) -> store_mod.StoredSession:
        """What earlier processes saved for a session; empty when nothing is known, not ``complete`` when the store fails."""
        stored = store_mod.StoredSession()
        try:
            store = self.store()
            if store is not None:
                stored = store.load_session(session_id, **_waiting(store, REQUEST_WAIT_MS))
        except Exception:  # noqa: BLE001 - an unreadable store only means starting fresh (and asking again)
            log.exception("dcp: could not restore the saved state of session %s", session_id)
            stored = store_mod.StoredSession(complete=False)
        with self._lock:
            self._reported.setdefault(session_id, set()).update(stored.pruned)
        return stored

    def _queue(self, session_id: str) -> store_mod.SessionBatch:
        """The session's writes waiting for the next flush (hold the lock)."""
        queued = self._pending.get(session_id)
        if queued is None:
            queued = self._pending[session_id] = store_mod.SessionBatch(session_id)
        return queued

    def record(self, session_id: str, decisions: Iterable[Decision]) -> list[Decision]:
        """Queue newly applied decisions; returns those never reported before for this session."""
        fresh: list[Decision] = []
        with self._lock:
            reported = self._reported.setdefault(session_id, set())
            rows = self._queue(session_id).decisions
            # A first sight of a long session queues every decision of its history: the record is read
            # once each, and each row is a plain tuple (see store.PrunedRow).
            for decision in decisions:
                record = decision.record
                call_id = record.call_id
                if call_id in reported:
                    continue
                reported.add(call_id)
                fresh.append(decision)
                rows.append((call_id, record.tool, decision.strategy, decision.tokens_saved))
        return fresh

    def record_restores(self, session_id: str, restores: Iterable[store_mod.Restore]) -> None:
        """Queue the model's restore calls (the store counts each call once, however often it is queued)."""
        with self._lock:
            self._queue(session_id).restores.extend(restores)

    def record_manual(self, session_id: str, manual: Mapping[str, str]) -> None:
        """Queue user decisions (sweeps) and save them now: they cannot be recomputed from the history."""
        with self._lock:
            self._queue(session_id).manual.update(manual)
        self.flush(force=True)

    def record_pins(self, session_id: str, pins: Mapping[str, bool]) -> None:
        """Queue pins (True) and unpins (False) and save them now; a pin takes back a queued sweep of its call."""
        with self._lock:
            pending = self._queue(session_id)
            for call_id, pinned in pins.items():
                pending.pins[call_id] = pinned
                if pinned:
                    pending.manual.pop(call_id, None)
        self.flush(force=True)

    def count_request(
        self, session_id: str, saved_tokens: int, snapshot: Mapping[str, Any] | None, cost: PointCost | None = None
    ) -> None:
        """Queue one request's counters (tokens saved, its cost with and without the plugin) and the snapshot."""
        with self._lock:
            pending = self._queue(session_id)
            pending.requests += 1
            pending.tokens_saved_sent += saved_tokens
            if cost is not None:
                pending.cost_without += cost.cost_without
                pending.cost_with += cost.cost_with
                pending.rewritten += cost.rewritten
            if snapshot is not None:
                pending.snapshot = snapshot

    def forget(self, session_id: str) -> None:
        """Stop tracking a session once its queued writes are out."""
        self.flush(force=True)
        with self._lock:
            self._reported.pop(session_id, None)
            self._pending.pop(session_id, None)

    def stats(self, session_id: str) -> tuple[store_mod.Stats | None, store_mod.Stats | None]:
        """(this session's, all sessions') saved statistics after a flush; (None, None) without a store."""
        self.flush(force=True)
        store = self.store()
        if store is None:
            return None, None
        wait = _waiting(store, REQUEST_WAIT_MS)
        session = store.stats(session_id, **wait)
        if session is None and self.busy():
            return None, None  # one short wait per command is enough
        return session, store.stats(None, **wait)

    def busy(self) -> bool:
        """Whether the store's latest answer was "locked by another process" (then nothing waited long for it)."""
        store = self._resolved if self._choice is not None else None
        return bool(getattr(store, "busy", False))

    def flush(self, force: bool = False, at_exit: bool = False) -> None:
        """Write every session's pending writes in one transaction; never raises.

        At exit only a store already opened is written: the user's database path was fixed
        when it was first needed, so a process whose environment changed since (tests that
        isolated HOME) never writes into another one.
        """
        try:
            now = time.monotonic()
            with self._lock:
                if not force and now - self._last_flush < FLUSH_INTERVAL_SECONDS:
                    return
                self._last_flush = now
                if at_exit and self._resolved is None:
                    return
                store = self.store()
                if store is None:
                    self._pending.clear()
                    return
                taken = [self._pending.pop(sid) for sid, queued in list(self._pending.items()) if not queued.empty()]
            if not taken:
                return
            # Nothing is lost to a short wait: what is not saved is given back and saved on the next flush.
            wait = _waiting(store, BUSY_TIMEOUT_MS if at_exit else REQUEST_WAIT_MS)
            if not store.save(taken, **wait) and store.available:
                with self._lock:
                    for batch in taken:
                        self._queue(batch.session_id).give_back(batch)
        except Exception:  # noqa: BLE001
            log.exception("dcp: saving the pruning state failed")
