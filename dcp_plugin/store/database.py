"""The one SQLite database of a user's sessions: opened lazily, written in whole batches, never raising.

Only metadata is stored (call ids, tool names, strategies, token counts, the context
snapshot), never conversation content. Every failure is caught here: a store that cannot
be used warns once and answers "nothing known", so the host keeps working.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dcp_plugin.store.errors import NotAStore, StoreUnavailable, is_busy, is_corruption, reason
from dcp_plugin.store.reading import open_read_only, query_session, query_stats
from dcp_plugin.store.rows import SessionBatch, Stats, StoredSession
from dcp_plugin.store.schema import (
    BUSY_TIMEOUT_MS,
    DIR_MODE,
    FILE_MODE,
    SCHEMA,
    SCHEMA_VERSION,
    SESSION_COLUMNS_V2,
    STATS_RESET_KEY,
    TABLES,
    table_names,
)
from dcp_plugin.xdg import make_dirs

log = logging.getLogger("dcp_plugin.store")

Warn = Callable[[str], None]

# After the store could not be opened, how long to answer "nothing known" before trying again.
RETRY_SECONDS = 30.0


def _stamp() -> str:
    return dt.datetime.now().strftime("%Y%m%dT%H%M%S")


class Store:
    """One SQLite database shared by every session (and every process) of a user.

    Opened lazily on first use. Writes are single ``BEGIN IMMEDIATE`` transactions so two
    processes interleave whole batches; counters are added, never overwritten, and a
    pruned call is keyed by (session, call id) so it counts once however often it is
    written. All public methods are thread-safe and never raise.
    """

    def __init__(
        self, path: str | os.PathLike[str], warn: Warn | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = Path(path)
        self.warn = warn
        self._clock = clock
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._unavailable: str | None = None  # for good: a newer schema
        self._retry_at: float | None = None  # after a failed open: answer "nothing known" until then
        self._warned: set[str] = set()
        self.moved_aside: list[Path] = []
        self.busy = False  # the latest operation found the file locked by another process for its whole wait
        self._wait_ms = BUSY_TIMEOUT_MS  # the busy timeout the open connection has
        # The open connection reads a file this process cannot write (a read-only mount): what is
        # stored still applies, nothing new is saved, and opening for writing is retried later.
        self.read_only = False

    # -- opening and recovery ---------------------------------------------------------------
    @property
    def available(self) -> bool:
        """False once the store gave up for this process (reason already warned about).

        A store that only failed to open (out of descriptors, a read-only mount) stays
        available: it retries later, and callers keep what they could not save.
        """
        return self._unavailable is None

    def _say(self, text: str) -> None:
        if text in self._warned:
            return
        self._warned.add(text)
        if self.warn is None:
            log.warning("%s", text)
            return
        try:
            self.warn(text)
        except Exception:  # noqa: BLE001 - a broken warn callback must not matter
            log.exception("dcp: the store's warning callback failed")

    def _connect(self, wait_ms: int) -> sqlite3.Connection:
        make_dirs(self.path.parent, DIR_MODE)
        if not self.path.exists():
            # Create it private before SQLite does (SQLite would use the umask).
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        deadline = time.monotonic() + wait_ms / 1000
        while True:
            conn = sqlite3.connect(self.path, timeout=wait_ms / 1000, isolation_level=None, check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout={wait_ms}")
                # Switching to WAL needs the file to itself and can answer "locked" at once, without
                # waiting, while another process opens the same new database: retry for a while.
                conn.execute("PRAGMA journal_mode=WAL").fetchone()
                conn.execute("PRAGMA synchronous=NORMAL")
                self._migrate(conn)
                self._wait_ms = wait_ms
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if not is_busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
            except BaseException:
                conn.close()
                raise

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        """Create the schema, or the tables missing from one of this version (repairs a half-made file)."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"schema version {version} was written by a newer dcp_plugin (this one knows {SCHEMA_VERSION}); "
                "upgrade dcp_plugin to keep persisting"
            )
        if version == SCHEMA_VERSION and set(TABLES) <= table_names(conn):
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # CREATE ... IF NOT EXISTS: another process may have done it while we waited for the lock.
            for statement in SCHEMA:
                conn.execute(statement)
            have = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
            for name, kind in SESSION_COLUMNS_V2:
                if name not in have:
                    conn.execute(f"ALTER TABLE sessions ADD COLUMN {name} {kind}")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _move_aside(self, why: BaseException) -> None:
        """Rename the database (and its WAL files) with a timestamp suffix so a fresh one is used."""
        suffix = f".corrupt-{_stamp()}"
        target = self.path.with_name(self.path.name + suffix)
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}{suffix}-{n}")
        os.replace(self.path, target)
        for extra in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + extra)
            if side.exists():
                os.replace(side, target.with_name(target.name + extra))
        self.moved_aside.append(target)
        self._say(
            f"dcp: the state database {self.path} is damaged ({why}); moved it to {target} and started a fresh one"
        )

    def _connection(self, wait_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
        """The open connection; opens on first use, moves a corrupt file aside, backs off when unavailable."""
        if self._conn is not None:
            if not (self.read_only and self._retry_at is not None and self._clock() >= self._retry_at):
                return self._conn
            self._close_quietly()  # read-only for a while: try for writing again
        if self._unavailable is not None:
            raise StoreUnavailable(self._unavailable)
        if self._retry_at is not None and self._clock() < self._retry_at:
            raise StoreUnavailable(f"{self.path} is unavailable; retrying later")
        try:
            try:
                self._conn = self._connect(wait_ms)
            except sqlite3.DatabaseError as exc:
                if not (is_corruption(exc) and self.path.is_file()):
                    raise
                self._move_aside(exc)
                self._conn = self._connect(wait_ms)
        except StoreUnavailable as exc:
            self._unavailable = f"dcp: pruning state will not be saved: {self.path}: {exc}"
            self._say(self._unavailable)
            raise StoreUnavailable(self._unavailable) from exc
        except (sqlite3.Error, OSError) as exc:
            if is_busy(exc):
                # Another process kept the file locked for the whole wait: try again on the next use.
                self.busy = True
                self._say(f"dcp: the state database {self.path} is busy ({exc}); will retry")
                raise StoreUnavailable(str(exc)) from exc
            self._retry_at = self._clock() + RETRY_SECONDS
            self._conn = self._reader()
            if self._conn is not None:
                self._say(
                    f"dcp: the state database {self.path} cannot be written ({reason(exc)}); it is read as it is "
                    f"(pins and sweeps saved earlier apply), nothing new is saved, and writing is retried every "
                    f"{RETRY_SECONDS:.0f} s"
                )
                return self._conn
            self._say(
                f"dcp: the state database {self.path} cannot be opened ({reason(exc)}); it is left as it is, "
                f"pruning goes on and saving is retried every {RETRY_SECONDS:.0f} s"
            )
            raise StoreUnavailable(str(exc)) from exc
        self.read_only = False
        if self._retry_at is not None:
            self._retry_at = None
            log.info("dcp: the state database %s is available again", self.path)
        return self._conn

    def _reader(self) -> sqlite3.Connection | None:
        """A read-only connection to the file when it is a healthy dcp database (SQLite's `mode=ro`), else None."""
        try:
            conn = open_read_only(self.path)
        except (NotAStore, sqlite3.Error, OSError):
            return None
        self.read_only = True
        return conn

    def _recover(self, exc: BaseException) -> None:
        """After an error inside an operation: move a corrupt file aside, reopen on next use."""
        self._close_quietly()
        if is_corruption(exc):
            try:
                if self.path.is_file():
                    self._move_aside(exc)
            except OSError as move_error:
                self._retry_at = self._clock() + RETRY_SECONDS
                self._say(
                    f"dcp: the state database {self.path} is damaged ({exc}) and cannot be moved aside ({move_error}); retrying later"
                )
        else:
            # a missing table (repaired when reopening), a read-only mount, a full disk: the file stays
            self._say(f"dcp: the state database {self.path} failed ({exc}); will retry")

    def _close_quietly(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def close(self) -> None:
        """Close the connection; the next operation reopens it."""
        with self._lock:
            self._close_quietly()

    def _run(self, default: Any, work: Callable[[sqlite3.Connection], Any], wait_ms: int = BUSY_TIMEOUT_MS) -> Any:
        with self._lock:
            self.busy = False
            try:
                conn = self._connection(wait_ms)
                if wait_ms != self._wait_ms:
                    conn.execute(f"PRAGMA busy_timeout={wait_ms}")
                    self._wait_ms = wait_ms
            except StoreUnavailable:
                return default
            except sqlite3.Error as exc:
                self.busy = is_busy(exc)
                self._recover(exc)
                return default
            try:
                return work(conn)
            except sqlite3.Error as exc:
                self.busy = is_busy(exc)
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if self.read_only and getattr(exc, "sqlite_errorname", "") == "SQLITE_READONLY":
                    return default  # a write on the read-only connection: expected, said when it opened
                self._recover(exc)
                return default
            except Exception as exc:  # noqa: BLE001 - never break the host over bookkeeping
                log.exception("dcp: unexpected store failure")
                self._say(f"dcp: the state database {self.path} failed ({exc}); this change was not saved")
                return default

    # -- reading ----------------------------------------------------------------------------
    def load_session(self, session_id: str, wait_ms: int = BUSY_TIMEOUT_MS) -> StoredSession:
        """What the store knows of a session; empty when nothing, and not ``complete`` when the store is unusable."""
        found: StoredSession = self._run(
            StoredSession(complete=False), lambda conn: query_session(conn, session_id), wait_ms
        )
        return found

    def stats(self, session_id: str | None = None, wait_ms: int = BUSY_TIMEOUT_MS) -> Stats | None:
        """Stats of one session, or of all sessions ever seen with None; None when the store is unusable."""
        stats: Stats | None = self._run(None, lambda conn: query_stats(conn, session_id), wait_ms)
        return stats

    def reset_stats(self, now: float | None = None) -> bool:
        """Start the statistics over from zero; True when done.

        Counts of requests and tokens are zeroed and pruned calls decided before now stop
        counting. What pruning needs is kept: the calls already pruned (so a resumed session
        neither counts nor reports them again), `/dcp sweep` decisions and context snapshots.
        """
        when = time.time() if now is None else now

        def work(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (STATS_RESET_KEY, when))
            conn.execute(
                "UPDATE sessions SET requests = 0, tokens_saved_sent = 0, cost_without = 0, cost_with = 0,"
                " rewritten_tokens = 0"
            )
            conn.execute("COMMIT")
            return True

        return bool(self._run(False, work))

    # -- writing ----------------------------------------------------------------------------
    def save(self, batches: Iterable[SessionBatch], now: float | None = None, wait_ms: int = BUSY_TIMEOUT_MS) -> bool:
        """Write several sessions' changes in one transaction; True when committed."""
        batches = [b for b in batches if not b.empty()]
        if not batches:
            return True
        when = time.time() if now is None else now

        def work(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            for batch in batches:
                snapshot = json.dumps(dict(batch.snapshot), separators=(",", ":")) if batch.snapshot else None
                conn.execute(
                    """INSERT INTO sessions (session_id, first_seen, last_seen, requests, tokens_saved_sent, snapshot,
                                             cost_without, cost_with, rewritten_tokens)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT(session_id) DO UPDATE SET
                         last_seen = excluded.last_seen,
                         requests = requests + excluded.requests,
                         tokens_saved_sent = tokens_saved_sent + excluded.tokens_saved_sent,
                         snapshot = COALESCE(excluded.snapshot, snapshot),
                         cost_without = cost_without + excluded.cost_without,
                         cost_with = cost_with + excluded.cost_with,
                         rewritten_tokens = rewritten_tokens + excluded.rewritten_tokens""",
                    (
                        batch.session_id,
                        when,
                        when,
                        batch.requests,
                        batch.tokens_saved_sent,
                        snapshot,
                        batch.cost_without,
                        batch.cost_with,
                        batch.rewritten,
                    ),
                )
                if batch.decisions:
                    conn.executemany(
                        "INSERT OR IGNORE INTO pruned (session_id, call_id, tool, strategy, tokens_saved, decided_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        [
                            (batch.session_id, call_id, tool, strategy, tokens_saved, when)
                            for call_id, tool, strategy, tokens_saved in batch.decisions
                        ],
                    )
                if batch.manual:
                    conn.executemany(
                        "INSERT OR REPLACE INTO manual (session_id, call_id, reason, decided_at) VALUES (?, ?, ?, ?)",
                        [(batch.session_id, call_id, reason, when) for call_id, reason in batch.manual.items()],
                    )
                if batch.restores:
                    conn.executemany(
                        "INSERT OR IGNORE INTO restored (session_id, call_id, outputs, tokens, decided_at) VALUES (?, ?, ?, ?, ?)",
                        [(batch.session_id, r.call_id, r.outputs, r.tokens, when) for r in batch.restores],
                    )
                # After the sweeps: a pin takes back a sweep of the same call, whichever came first.
                for call_id, pinned in batch.pins.items():
                    key = (batch.session_id, call_id)
                    if pinned:
                        conn.execute(
                            "INSERT OR REPLACE INTO pinned (session_id, call_id, decided_at) VALUES (?, ?, ?)",
                            (*key, when),
                        )
                        conn.execute("DELETE FROM manual WHERE session_id = ? AND call_id = ?", key)
                    else:
                        conn.execute("DELETE FROM pinned WHERE session_id = ? AND call_id = ?", key)
            conn.execute("COMMIT")
            return True

        return bool(self._run(False, work, wait_ms))


_SHARED: dict[Path, Store] = {}
_SHARED_LOCK = threading.Lock()


def shared(path: str | os.PathLike[str], warn: Warn | None = None) -> Store:
    """The process-wide store for ``path`` (one connection per file per process)."""
    key = Path(path)
    with _SHARED_LOCK:
        store = _SHARED.get(key)
        if store is None:
            # The path only changes when the environment does (tests): older files are closed
            # (they reopen on demand) so open handles stay bounded.
            for other in _SHARED.values():
                other.close()
            store = _SHARED[key] = Store(key, warn)
        elif warn is not None and store.warn is None:
            store.warn = warn
        return store
