"""Reading a state database: statistics and one session, also from a file opened read-only."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcp_plugin.store.errors import NotAStore, is_corruption, reason
from dcp_plugin.store.rows import Stats, StoredSession
from dcp_plugin.store.schema import (
    BUSY_TIMEOUT_MS,
    SCHEMA_VERSION,
    SESSION_COLUMNS_V2,
    STATS_RESET_KEY,
    table_names,
)


def _integers(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> tuple[int, int, int]:
    """The three integers of a one-row query."""
    a, b, c = conn.execute(sql, args).fetchone()
    return int(a), int(b), int(c)


def query_stats(conn: sqlite3.Connection, session_id: str | None = None) -> Stats:
    """Stats of one session (or all with None) since the last reset, from an open database."""
    since = 0.0
    if "meta" in table_names(conn):
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
    if "restored" in table_names(conn):
        stats.restores, stats.restored_outputs, stats.restored_tokens = _integers(
            conn,
            f"SELECT COUNT(*), COALESCE(SUM(outputs), 0), COALESCE(SUM(tokens), 0) FROM restored WHERE decided_at > ? {where}",
            args,
        )
    # A database of version 1 (opened read-only, so not migrated) has no cost columns yet.
    if {name for name, _ in SESSION_COLUMNS_V2} <= {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}:
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
    found.manual = dict(
        conn.execute("SELECT call_id, reason FROM manual WHERE session_id = ?", (session_id,)).fetchall()
    )
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
        raise NotAStore(f"{path}: cannot be read ({reason(exc)})") from None
    if stat.S_ISDIR(st.st_mode):
        raise NotAStore(f"{path} is a directory, not a dcp state database")
    if not stat.S_ISREG(st.st_mode):
        raise NotAStore(f"{path} is not a regular file, so not a dcp state database")
    wal = Path(f"{path}-wal")
    uri = path.resolve().as_uri() + "?mode=ro" + ("" if wal.exists() else "&immutable=1")
    try:
        # Any thread: a Store serializes its operations on its own lock.
        conn = sqlite3.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise NotAStore(f"{path}: cannot be opened ({exc})") from None
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = table_names(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_corruption(exc):
            raise NotAStore(f"{path} is not a dcp state database (SQLite says: {exc})") from None
        raise NotAStore(f"{path}: cannot be read ({exc})") from None
    if version > SCHEMA_VERSION:
        conn.close()
        raise NotAStore(
            f"{path} was written by a newer dcp_plugin (schema version {version}); upgrade dcp_plugin to read it"
        )
    if not {"sessions", "pruned"} <= tables:
        conn.close()
        raise NotAStore(f"{path} is an SQLite database but not a dcp state database (it has no dcp tables)")
    return conn


def read_stats(path: str | os.PathLike[str], session_id: str | None = None) -> Stats:
    """Stats read from a database file without changing it; NotAStore when it cannot be."""
    stats: Stats = _read_only(path, lambda conn: query_stats(conn, session_id))
    return stats
