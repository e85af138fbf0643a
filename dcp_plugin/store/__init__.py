"""Persistence in SQLite: per-session pruning decisions, manual sweeps, pins, stats and the last snapshot."""

from dcp_plugin.store.database import RETRY_SECONDS, Store, Warn, shared
from dcp_plugin.store.errors import NotAStore, StoreUnavailable, is_busy, is_corruption
from dcp_plugin.store.reading import open_read_only, query_session, query_stats, read_session, read_stats
from dcp_plugin.store.rows import DecisionRow, PrunedRow, Restore, SessionBatch, Stats, StoredSession
from dcp_plugin.store.schema import (
    BUSY_TIMEOUT_MS,
    DB_NAME,
    REQUEST_WAIT_MS,
    SCHEMA_VERSION,
    STATS_RESET_KEY,
    data_dir,
    default_path,
)

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DB_NAME",
    "REQUEST_WAIT_MS",
    "RETRY_SECONDS",
    "SCHEMA_VERSION",
    "STATS_RESET_KEY",
    "DecisionRow",
    "NotAStore",
    "PrunedRow",
    "Restore",
    "SessionBatch",
    "Stats",
    "Store",
    "StoreUnavailable",
    "StoredSession",
    "Warn",
    "data_dir",
    "default_path",
    "is_busy",
    "is_corruption",
    "open_read_only",
    "query_session",
    "query_stats",
    "read_session",
    "read_stats",
    "shared",
]
