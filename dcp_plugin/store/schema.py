"""The state database's schema, version, file names and locations, and how long a request waits for it."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from dcp_plugin.xdg import PRIVATE_DIR_MODE, base_dir

SCHEMA_VERSION = 2
DB_NAME = "dcp.sqlite3"
BUSY_TIMEOUT_MS = 5000
# What a host's request (or a /dcp command) waits at most for a file another process holds locked:
# the work is kept and retried (writes) or answered without the store (reads), never blocking the
# user for seconds. The long wait stays for writes that cannot be retried (at exit) and the CLI.
REQUEST_WAIT_MS = 200
FILE_MODE = 0o600
DIR_MODE = PRIVATE_DIR_MODE

SCHEMA: tuple[str, ...] = (
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
TABLES = ("sessions", "pruned", "manual", "meta", "restored", "pinned")
# Statistics count what happened after this time (`dcp stats --reset`).
STATS_RESET_KEY = "stats_reset_at"

# Version 2: what requests cost with and without the plugin (prompt-cache pricing), and the
# tokens its own placeholders made the provider process again.
SESSION_COLUMNS_V2: tuple[tuple[str, str], ...] = (
    ("cost_without", "REAL NOT NULL DEFAULT 0"),
    ("cost_with", "REAL NOT NULL DEFAULT 0"),
    ("rewritten_tokens", "INTEGER NOT NULL DEFAULT 0"),
)


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """$XDG_DATA_HOME/opencode/storage/plugin/dcp, or ~/.local/share/... (a relative XDG value is ignored)."""
    return base_dir("XDG_DATA_HOME", env) / "opencode" / "storage" / "plugin" / "dcp"


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the database lives for this user."""
    return data_dir(env) / DB_NAME


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The tables a database holds."""
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
