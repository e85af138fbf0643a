"""The persistence queue: what a request's decisions leave waiting for the store."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

from dcp_plugin.host.persistence import Persistence
from dcp_plugin.pipeline.decisions import CallRecord, Decision
from dcp_plugin.store import Store


def _decision(n: int, strategy: str = "deduplication") -> Decision:
    record = CallRecord(f"call-{n}", "read", n, n, 0, None, None, 0, "completed")
    return Decision(record, strategy, "output", "[placeholder]", 10 + n)


def test_queued_rows_leave_the_collectors_watch() -> None:
    # A first sight queues a row for every decision of its history: rows the cyclic collector
    # stops watching at its first pass are not scanned again on every later one.
    persistence = Persistence(None)
    persistence.record("s", [_decision(n) for n in range(3)])
    rows = persistence._pending["s"].decisions  # noqa: SLF001 - the queue itself is what is asserted
    gc.collect()
    assert rows == [(f"call-{n}", "read", "deduplication", 10 + n) for n in range(3)]
    assert not any(gc.is_tracked(row) for row in rows)


def test_queued_rows_reach_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "dcp.sqlite3")
    persistence = Persistence(store)
    fresh = persistence.record("s", [_decision(1), _decision(2, "purgeErrors"), _decision(1)])
    persistence.flush(force=True)
    assert [d.call_id for d in fresh] == ["call-1", "call-2"]
    with sqlite3.connect(tmp_path / "dcp.sqlite3") as conn:
        pruned = conn.execute("SELECT call_id, tool, strategy, tokens_saved FROM pruned WHERE session_id = 's'").fetchall()
    assert sorted(pruned) == [("call-1", "read", "deduplication", 11), ("call-2", "read", "purgeErrors", 12)]
