"""Persistence in SQLite: per-session pruning decisions, manual sweeps, stats and the last snapshot.

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
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcp_plugin.cost.totals import CostTotals
from dcp_plugin.xdg import PRIVATE_DIR_MODE, base_dir, make_dirs

log = logging.getLogger("dcp_plugin.host.store")

SCHEMA_VERSION = 2
DB_NAME = "dcp.sqlite3"
BUSY_TIMEOUT_MS = 5000
# What a host's request (or a /dcp command) waits at most for a file another process holds locked:
# the work is kept and retried (writes) or answered without the store (reads), never blocking the
# user for seconds. The long wait stays for writes that cannot be retried (at exit) and the CLI.
REQUEST_WAIT_MS = 200
FILE_MODE = 0o600
DIR_MODE = PRIVATE_DIR_MODE

Warn = Callable[[str], None]

_SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        first_seen REAL NOT NULL,
        last_seen REAL NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        tokens_saved_sent INTEGER NOT NULL DEFAULT 0,
        snapshot TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS pruned (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        strategy TEXT NOT NULL,
        tokens_saved INTEGER NOT NULL,
        decided_at REAL NOT NULL,
        PRIMARY KEY (session_id, call_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS manual (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        decided_at REAL NOT NULL,
        PRIMARY KEY (session_id, call_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS meta (
        key TEXT PRIMARY KEY,
        value REAL NOT NULL
    ) WITHOUT ROWID""",
    # Calls of the model's restore tool: how many outputs each brought back, and their tokens. A
    # table added within version 2: older plugins ignore it, and opening creates it when missing.
    """CREATE TABLE IF NOT EXISTS restored (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        outputs INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        decided_at REAL NOT NULL,
        PRIMARY KEY (session_id, call_id)
    ) WITHOUT ROWID""",
    # Outputs the user pinned (`/dcp pin`): nothing prunes them. Added within version 2 like
    # `restored`: older plugins ignore it, and opening creates it when missing.
    """CREATE TABLE IF NOT EXISTS pinned (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        decided_at REAL NOT NULL,
        PRIMARY KEY (session_id, call_id)
    ) WITHOUT ROWID""",
)
_TABLES = ("sessions", "pruned", "manual", "meta", "restored", "pinned")
# Statistics count what happened after this time (`dcp stats --reset`).
STATS_RESET_KEY = "stats_reset_at"

# Version 2: what requests cost with and without the plugin (prompt-cache pricing), and the
# tokens its own placeholders made the provider process again.
_SESSION_COLUMNS_V2: tuple[tuple[str, str], ...] = (
    ("cost_without", "REAL NOT NULL DEFAULT 0"),
    ("cost_with", "REAL NOT NULL DEFAULT 0"),
    ("rewritten_tokens", "INTEGER NOT NULL DEFAULT 0"),
)

# Error names (Python >= 3.11 exposes them) and message fragments meaning the file's content is
# not a database: only then is it moved aside. Everything else is the machine, not the file (out
# of descriptors, permissions, a read-only mount, "unable to open database file", disk full,
# locked): the data is kept and opening is retried later.
_CORRUPT_NAMES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
_CORRUPT_WORDS = ("malformed", "not a database", "file is encrypted")
# After the store could not be opened, how long to answer "nothing known" before trying again.
RETRY_SECONDS = 30.0


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_DATA_HOME/opencode/storage/plugin/dcp, or ~/.local/share/... (a relative XDG value is ignored)."""
    return base_dir("XDG_DATA_HOME", env) / "opencode" / "storage" / "plugin" / "dcp"


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the database lives for this user."""
    return data_dir(env) / DB_NAME


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One pruned call as persisted: never its content."""

    call_id: str
    tool: str
    strategy: str
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class Restore:
    """One call of the model's restore tool as persisted: how many outputs it brought back, and their tokens."""

    call_id: str
    outputs: int
    tokens: int


@dataclass(slots=True)
class SessionBatch(CostTotals):
    """What one flush writes for one session; its totals are deltas added to the stored ones.

    The persistence queue holds one per session until a flush takes it whole.
    """

    session_id: str
    decisions: list[DecisionRow] = field(default_factory=list)
    manual: dict[str, str] = field(default_factory=dict)
    snapshot: Mapping[str, Any] | None = None
    restores: list[Restore] = field(default_factory=list)
    pins: dict[str, bool] = field(default_factory=dict)  # call id -> pinned (True) or unpinned (False)

    def empty(self) -> bool:
        return not (
            self.decisions
            or self.manual
            or self.requests
            or self.tokens_saved_sent
            or self.snapshot
            or self.restores
            or self.pins
        )

    def give_back(self, batch: SessionBatch) -> None:
        """Queue again, before what was queued since, a batch that could not be written."""
        self.decisions[:0] = batch.decisions
        self.manual = {**batch.manual, **self.manual}
        self.requests += batch.requests
        self.tokens_saved_sent += batch.tokens_saved_sent
        self.cost_without += batch.cost_without
        self.cost_with += batch.cost_with
        self.rewritten += batch.rewritten
        self.restores[:0] = batch.restores
        self.pins = {**batch.pins, **self.pins}
        if self.snapshot is None:
            self.snapshot = batch.snapshot


@dataclass(slots=True)
class StoredSession:
    """A session as found in the store on first sight."""

    manual: dict[str, str] = field(default_factory=dict)
    pruned: set[str] = field(default_factory=set)
    pinned: set[str] = field(default_factory=set)
    snapshot: dict[str, Any] | None = None
    requests: int = 0
    tokens_saved_sent: int = 0
    complete: bool = True  # False: the store could not be read, so what it holds is not known yet


@dataclass(slots=True)
class Stats(CostTotals):
    """Pruning statistics of one session or of all of them."""

    by_strategy: dict[str, tuple[int, int]] = field(default_factory=dict)
    sessions: int = 0
    restores: int = 0  # calls of the model's restore tool
    restored_outputs: int = 0
    restored_tokens: int = 0

    @property
    def calls(self) -> int:
        return sum(count for count, _ in self.by_strategy.values())

    @property
    def tokens_saved(self) -> int:
        return sum(tokens for _, tokens in self.by_strategy.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "requests": self.requests,
            "calls_pruned": self.calls,
            "tokens_saved_per_request": self.tokens_saved,
            "tokens_saved_over_requests": self.tokens_saved_sent,
            "cost_without_plugin": round(self.cost_without, 1),
            "cost_with_plugin": round(self.cost_with, 1),
            "net_saved": round(self.saved, 1),
            "net_saved_percent": None if self.net_percent is None else round(self.net_percent, 2),
            "rewritten_tokens": self.rewritten,
            "restores": {"calls": self.restores, "outputs": self.restored_outputs, "tokens": self.restored_tokens},
            "by_strategy": {
                name: {"calls": count, "tokens_saved_per_request": tokens}
                for name, (count, tokens) in sorted(self.by_strategy.items())
            },
        }


class StoreUnavailable(Exception):
    """The store cannot be used right now (reason in the message)."""


class NotAStore(Exception):
    """A file given to read statistics from is missing or is not a dcp state database."""


def is_corruption(exc: BaseException) -> bool:
    """Whether an sqlite3 error is about the file's content (corrupt, not a database).

    Not "unable to open database file" (SQLITE_CANTOPEN): that is what SQLite says when it is
    out of file descriptors, on a read-only mount or without permission, with a healthy file.
    """
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorname", None) in _CORRUPT_NAMES:
        return True
    text = str(exc).lower()
    return any(word in text for word in _CORRUPT_WORDS)


def is_busy(exc: BaseException) -> bool:
    """Whether an sqlite3 error only means another connection holds the lock right now."""
    if getattr(exc, "sqlite_errorname", None) in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return True
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _table_names(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


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
            conn = sqlite3.connect(
                self.path, timeout=wait_ms / 1000, isolation_level=None, check_same_thread=False
            )
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
        if version == SCHEMA_VERSION and set(_TABLES) <= _table_names(conn):
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # CREATE ... IF NOT EXISTS: another process may have done it while we waited for the lock.
            for statement in _SCHEMA:
                conn.execute(statement)
            have = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
            for name, kind in _SESSION_COLUMNS_V2:
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
        self._say(f"dcp: the state database {self.path} is damaged ({why}); moved it to {target} and started a fresh one")

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
                    f"dcp: the state database {self.path} cannot be written ({_reason(exc)}); it is read as it is "
                    f"(pins and sweeps saved earlier apply), nothing new is saved, and writing is retried every "
                    f"{RETRY_SECONDS:.0f} s"
                )
                return self._conn
            self._say(
                f"dcp: the state database {self.path} cannot be opened ({_reason(exc)}); it is left as it is, "
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
                self._say(f"dcp: the state database {self.path} is damaged ({exc}) and cannot be moved aside ({move_error}); retrying later")
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
                        [(batch.session_id, d.call_id, d.tool, d.strategy, d.tokens_saved, when) for d in batch.decisions],
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


def _integers(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> tuple[int, int, int]:
    """The three integers of a one-row query."""
    a, b, c = conn.execute(sql, args).fetchone()
    return int(a), int(b), int(c)


def query_stats(conn: sqlite3.Connection, session_id: str | None = None) -> Stats:
    """Stats of one session (or all with None) since the last reset, from an open database."""
    since = 0.0
    if "meta" in _table_names(conn):
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (STATS_RESET_KEY,)).fetchone()
        since = float(row[0]) if row else 0.0
    where, args = ("AND session_id = ?", (since, session_id)) if session_id is not None else ("", (since,))
    stats = Stats()
    for strategy, count, tokens in conn.execute(
        f"SELECT strategy, COUNT(*), COALESCE(SUM(tokens_saved), 0) FROM pruned WHERE decided_at > ? {where} GROUP BY strategy",
        args,
    ):
        stats.by_strategy[str(strategy)] = (int(count), int(tokens))
    stats.sessions, stats.requests, stats.tokens_saved_sent = _integers(
        conn,
        "SELECT COUNT(CASE WHEN last_seen > ? THEN 1 END), COALESCE(SUM(requests), 0), COALESCE(SUM(tokens_saved_sent), 0)"
        f" FROM sessions WHERE 1 {where}",
        args,
    )
    if "restored" in _table_names(conn):
        stats.restores, stats.restored_outputs, stats.restored_tokens = _integers(
            conn, f"SELECT COUNT(*), COALESCE(SUM(outputs), 0), COALESCE(SUM(tokens), 0) FROM restored WHERE decided_at > ? {where}", args
        )
    # A database of version 1 (opened read-only, so not migrated) has no cost columns yet.
    if {name for name, _ in _SESSION_COLUMNS_V2} <= {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}:
        only = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        costs = conn.execute(
            "SELECT COALESCE(SUM(cost_without), 0), COALESCE(SUM(cost_with), 0), COALESCE(SUM(rewritten_tokens), 0)"
            f" FROM sessions {only[0]}",
            only[1],
        ).fetchone()
        stats.cost_without, stats.cost_with, stats.rewritten = float(costs[0]), float(costs[1]), int(costs[2])
    return stats


def query_session(conn: sqlite3.Connection, session_id: str) -> StoredSession:
    """What a database holds for one session: sweeps, pruned and pinned calls, its latest snapshot."""
    found = StoredSession()
    row = conn.execute(
        "SELECT requests, tokens_saved_sent, snapshot FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return found
    found.requests, found.tokens_saved_sent = int(row[0]), int(row[1])
    if row[2]:
        try:
            snapshot = json.loads(row[2])
            found.snapshot = snapshot if isinstance(snapshot, dict) else None
        except ValueError:
            found.snapshot = None
    found.manual = dict(conn.execute("SELECT call_id, reason FROM manual WHERE session_id = ?", (session_id,)).fetchall())
    found.pruned = {r[0] for r in conn.execute("SELECT call_id FROM pruned WHERE session_id = ?", (session_id,))}
    found.pinned = {r[0] for r in conn.execute("SELECT call_id FROM pinned WHERE session_id = ?", (session_id,))}
    return found


def read_session(path: str | os.PathLike[str], session_id: str) -> StoredSession:
    """One session as a database file holds it, read without changing it; NotAStore when it cannot be."""
    found: StoredSession = _read_only(path, lambda conn: query_session(conn, session_id))
    return found


def _read_only(path: str | os.PathLike[str], work: Callable[[sqlite3.Connection], Any]) -> Any:
    conn = open_read_only(path)
    try:
        return work(conn)
    except sqlite3.Error as exc:
        raise NotAStore(f"{path}: cannot be read ({exc})") from None
    finally:
        conn.close()


def open_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection to a dcp state database; NotAStore saying why when it is not one.

    Nothing is created, renamed or converted: the file is opened with SQLite's `mode=ro`
    (and `immutable=1` when no write-ahead log is present, so no -wal/-shm files appear).
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise NotAStore(f"{path}: no such file") from None
    except OSError as exc:
        raise NotAStore(f"{path}: cannot be read ({_reason(exc)})") from None
    if stat.S_ISDIR(st.st_mode):
        raise NotAStore(f"{path} is a directory, not a dcp state database")
    if not stat.S_ISREG(st.st_mode):
        raise NotAStore(f"{path} is not a regular file, so not a dcp state database")
    wal = Path(f"{path}-wal")
    uri = path.resolve().as_uri() + "?mode=ro" + ("" if wal.exists() else "&immutable=1")
    try:
        # Any thread: a Store serializes its operations on its own lock.
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise NotAStore(f"{path}: cannot be opened ({exc})") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = _table_names(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_corruption(exc):
            raise NotAStore(f"{path} is not a dcp state database (SQLite says: {exc})") from None
        raise NotAStore(f"{path}: cannot be read ({exc})") from None
    if version > SCHEMA_VERSION:
        conn.close()
        raise NotAStore(f"{path} was written by a newer dcp_plugin (schema version {version}); upgrade dcp_plugin to read it")
    if not {"sessions", "pruned"} <= tables:
        conn.close()
        raise NotAStore(f"{path} is an SQLite database but not a dcp state database (it has no dcp tables)")
    return conn


def read_stats(path: str | os.PathLike[str], session_id: str | None = None) -> Stats:
    """Stats read from a database file without changing it; NotAStore when it cannot be."""
    stats: Stats = _read_only(path, lambda conn: query_stats(conn, session_id))
    return stats


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
