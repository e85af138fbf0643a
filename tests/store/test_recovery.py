"""The store tells a damaged file from an unavailable one, repairs a half-made schema, resets and reads stats safely."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.store import SCHEMA_VERSION, DecisionRow, NotAStore, SessionBatch, Store, read_stats
from dcp_plugin.store import database as store_mod
from tests.support.helpers import PROJECT, call, hook_transform, make_config, user


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty folder of its own (tmp_path also holds the isolated HOME)."""
    path = tmp_path / "db"
    path.mkdir()
    return path


def healthy(path: Path) -> None:
    """A database holding one session with one pruned call and one sweep."""
    store = Store(path)
    assert store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 40)], manual={"c2": "sweep"}, requests=2)])
    store.close()


def files_beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


@pytest.fixture
def failing_connect(monkeypatch: pytest.MonkeyPatch):
    """Make sqlite3.connect raise `error` until `.stop()`; counts the attempts."""

    class Failing:
        def __init__(self) -> None:
            self.error: BaseException | None = None
            self.attempts = 0

        def stop(self) -> None:
            self.error = None

    failing = Failing()
    real = sqlite3.connect

    def connect(*args, **kwargs):
        if failing.error is not None:
            failing.attempts += 1
            raise failing.error
        return real(*args, **kwargs)

    monkeypatch.setattr(store_mod.sqlite3, "connect", connect)
    return failing


# -- unavailable is not corrupt ------------------------------------------------------------------
@pytest.mark.parametrize(
    "error",
    [
        sqlite3.OperationalError("unable to open database file"),
        sqlite3.OperationalError("attempt to write a readonly database"),
        sqlite3.OperationalError("disk I/O error"),
        OSError(24, "Too many open files"),
        PermissionError(13, "Permission denied"),
    ],
    ids=["cantopen", "readonly", "ioerr", "emfile", "eacces"],
)
def test_a_healthy_database_that_cannot_be_opened_is_kept(folder: Path, failing_connect, error: BaseException) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    before = files_beside(path)
    warnings: list[str] = []
    store = Store(path, warnings.append, clock=Clock())
    failing_connect.error = error
    assert store.save([SessionBatch("s", requests=1)]) is False
    assert store.load_session("s").manual == {}
    assert store.moved_aside == [] and files_beside(path) == before
    assert len(warnings) == 1 and "it is left as it is" in warnings[0]
    assert store.available  # callers keep what they could not save


def test_an_unavailable_store_waits_before_trying_again_then_finds_the_old_data(folder: Path, failing_connect) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    clock = Clock()
    warnings: list[str] = []
    store = Store(path, warnings.append, clock=clock)
    failing_connect.error = sqlite3.OperationalError("unable to open database file")
    for _ in range(5):
        store.load_session("s")
    assert failing_connect.attempts == 2  # once for writing, once read-only, then not before the wait
    failing_connect.stop()
    clock.now += store_mod.RETRY_SECONDS
    found = store.load_session("s")
    assert (found.pruned, found.manual, found.requests) == ({"c1"}, {"c2": "sweep"}, 2)
    assert len(warnings) == 1


def test_out_of_file_descriptors_keeps_the_database(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    code = f"""
        import os, resource
        from dcp_plugin.store import SessionBatch, Store
        warnings = []
        store = Store({str(path)!r}, warnings.append)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        used = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 16
        resource.setrlimit(resource.RLIMIT_NOFILE, (used, hard))
        saved = store.save([SessionBatch("s", requests=1)])
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        print(saved, store.moved_aside, len(warnings))
    """
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False [] 1", result.stderr
    assert files_beside(path) == ["dcp.sqlite3"]
    assert read_stats(path).requests == 2


def test_pending_bookkeeping_is_saved_once_the_store_is_back(folder: Path, failing_connect) -> None:
    clock = Clock()
    reports: list[str] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": lambda _s, text: reports.append(text)}))
    store = Store(folder / "dcp.sqlite3", reports.append, clock=clock)
    runtime.use_store(store)
    failing_connect.error = sqlite3.OperationalError("unable to open database file")
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output="A" * 300), user(), call("read", {"filePath": "/p/a.py"}, output="A" * 300)]
    hook_transform(runtime, {}, {"messages": messages})
    runtime.flush()
    failing_connect.stop()
    clock.now += store_mod.RETRY_SECONDS
    runtime.flush()
    stats = store.stats(None)
    assert stats is not None and (stats.requests, stats.calls) == (1, 1)


# -- corrupt is moved aside ------------------------------------------------------------------------
def test_a_file_that_is_not_a_database_is_moved_aside(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    path.write_bytes(b"garbage " * 512)
    warnings: list[str] = []
    store = Store(path, warnings.append)
    assert store.save([SessionBatch("s", requests=1)])
    (aside,) = store.moved_aside
    assert aside.read_bytes() == b"garbage " * 512 and "damaged" in warnings[0]


def test_corruption_found_while_reading_moves_the_file_aside(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    store = Store(path)

    def malformed(conn, session_id=None):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(store_mod, "query_stats", malformed)
    assert store.stats(None) is None
    assert len(store.moved_aside) == 1 and not path.exists()


# -- a half-made schema is repaired --------------------------------------------------------------------
def test_a_database_with_the_version_but_no_tables_is_repaired(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    conn.close()
    warnings: list[str] = []
    store = Store(path, warnings.append)
    assert store.save([SessionBatch("s", [DecisionRow("c", "read", "deduplication", 3)], requests=1)])
    assert store.load_session("s").pruned == {"c"} and warnings == [] and store.moved_aside == []


def test_a_table_dropped_while_running_is_recreated_on_the_next_save(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    store = Store(path, lambda _text: None)
    assert store.load_session("s").requests == 2
    other = sqlite3.connect(path)
    other.execute("DROP TABLE manual")
    other.close()
    batch = SessionBatch("s", manual={"c9": "sweep"})
    assert store.save([batch]) is False
    assert store.save([batch]) is True
    assert store.load_session("s").manual == {"c9": "sweep"} and store.moved_aside == []


# -- resetting statistics ----------------------------------------------------------------------------
def test_reset_starts_the_statistics_from_zero_and_keeps_what_pruning_needs(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    store = Store(path)
    store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 40)], manual={"c2": "sweep"}, requests=2, snapshot={"n": 1})], now=100.0)
    assert store.reset_stats(now=200.0)
    stats = store.stats(None)
    assert stats is not None and stats.to_dict()["calls_pruned"] == 0 and (stats.sessions, stats.requests) == (0, 0)
    found = store.load_session("s")
    assert (found.pruned, found.manual, found.snapshot) == ({"c1"}, {"c2": "sweep"}, {"n": 1})


def test_activity_after_a_reset_counts_again(folder: Path) -> None:
    store = Store(folder / "dcp.sqlite3")
    store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 40)], requests=2)], now=100.0)
    store.reset_stats(now=200.0)
    store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 40), DecisionRow("c3", "bash", "purgeErrors", 5)], requests=1)], now=300.0)
    stats = store.stats(None)
    assert stats is not None
    assert (stats.sessions, stats.requests, stats.by_strategy) == (1, 1, {"purgeErrors": (1, 5)})


# -- reading statistics without changing the file ---------------------------------------------------
def test_reading_stats_changes_nothing_on_disk(folder: Path) -> None:
    path = folder / "dcp.sqlite3"
    healthy(path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert read_stats(path).requests == 2
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory, not a dcp state database"),
        (lambda p: p.write_bytes(b"not sqlite " * 100), "is not a dcp state database"),
        (lambda p: p.write_bytes(b""), "is an SQLite database but not a dcp state database"),
    ],
    ids=["missing", "directory", "garbage", "empty"],
)
def test_reading_stats_from_something_else_says_what_it_is_and_leaves_it(folder: Path, make, says: str) -> None:
    path = folder / "dcp.sqlite3"
    make(path)
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(NotAStore) as caught:
        read_stats(path)
    assert says in str(caught.value)
    assert sorted(p.name for p in folder.iterdir()) == before


def test_reading_stats_from_another_applications_database_leaves_it_untouched(folder: Path) -> None:
    path = folder / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(NotAStore, match="not a dcp state database"):
        read_stats(path)
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert (tables, mode, path.read_bytes()) == (["notes"], "delete", before)
    assert os.listdir(folder) == ["app.db"]
