"""The SQLite store: location, schema, transactional writes counted once, recovery from bad files."""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.store import SCHEMA_VERSION, DecisionRow, Restore, SessionBatch, Store, default_path
from dcp_plugin.store import database as store_mod
from tests.support.helpers import PROJECT, call, hook_transform, make_config, user


def store_at(tmp_path: Path, warnings: list[str] | None = None) -> Store:
    sink = warnings if warnings is not None else []
    return Store(tmp_path / "state" / "dcp.sqlite3", sink.append)


def test_default_path_is_under_xdg_data_home(isolated_home: Path) -> None:
    assert default_path() == isolated_home / ".local/share/opencode/storage/plugin/dcp/dcp.sqlite3"


def test_default_path_falls_back_to_home_when_xdg_data_home_is_relative() -> None:
    env = {"HOME": "/home/u", "XDG_DATA_HOME": "relative/dir"}
    assert default_path(env) == Path("/home/u/.local/share/opencode/storage/plugin/dcp/dcp.sqlite3")


def test_new_database_is_private_wal_and_versioned(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    assert store.save([SessionBatch("s1", requests=1)])
    store.close()
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_saved_session_loads_back(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    batch = SessionBatch(
        "s1",
        decisions=[DecisionRow("c1", "read", "deduplication", 120), DecisionRow("c2", "bash", "sweep", 30)],
        manual={"c2": "sweep"},
        requests=3,
        tokens_saved_sent=360,
        snapshot={"estimated_input_tokens": 5},
    )
    assert store.save([batch])
    found = store.load_session("s1")
    assert (found.pruned, found.manual, found.requests, found.tokens_saved_sent, found.snapshot) == (
        {"c1", "c2"},
        {"c2": "sweep"},
        3,
        360,
        {"estimated_input_tokens": 5},
    )


def test_unknown_session_loads_empty(tmp_path: Path) -> None:
    found = store_at(tmp_path).load_session("nobody")
    assert (found.pruned, found.manual, found.requests, found.snapshot) == (set(), {}, 0, None)


def test_a_pruned_call_counts_once_however_often_it_is_written(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    for _ in range(3):
        store.save([SessionBatch("s1", decisions=[DecisionRow("c1", "read", "deduplication", 100)], requests=1)])
    stats = store.stats("s1")
    assert stats is not None
    assert (stats.by_strategy, stats.requests) == ({"deduplication": (1, 100)}, 3)


def test_same_call_id_in_two_sessions_counts_in_each(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.save([SessionBatch(sid, decisions=[DecisionRow("c1", "read", "deduplication", 10)]) for sid in ("a", "b")])
    stats = store.stats(None)
    assert stats is not None
    assert (stats.sessions, stats.by_strategy) == (2, {"deduplication": (2, 20)})


def test_all_time_stats_add_up_every_session(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.save(
        [
            SessionBatch(
                "a",
                [DecisionRow("1", "read", "deduplication", 10), DecisionRow("2", "bash", "purgeErrors", 7)],
                requests=2,
                tokens_saved_sent=17,
                cost_without=1000.0,
                cost_with=950.0,
                rewritten=40,
            ),
            SessionBatch(
                "b",
                [DecisionRow("3", "read", "deduplication", 5)],
                requests=4,
                tokens_saved_sent=20,
                cost_without=1000.0,
                cost_with=1010.0,
                rewritten=300,
                restores=[Restore("r1", 2, 300), Restore("r2", 1, 50)],
            ),
        ]
    )
    stats = store.stats(None)
    assert stats is not None
    assert stats.to_dict() == {
        "sessions": 2,
        "requests": 6,
        "calls_pruned": 3,
        "tokens_saved_per_request": 22,
        "tokens_saved_over_requests": 37,
        "cost_without_plugin": 2000.0,
        "cost_with_plugin": 1960.0,
        "net_saved": 40.0,
        "net_saved_percent": 2.0,
        "rewritten_tokens": 340,
        "restores": {"calls": 2, "outputs": 3, "tokens": 350},
        "by_strategy": {
            "deduplication": {"calls": 2, "tokens_saved_per_request": 15},
            "purgeErrors": {"calls": 1, "tokens_saved_per_request": 7},
        },
    }


def test_a_restore_saved_twice_counts_once(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    for _ in range(2):
        store.save([SessionBatch("s", restores=[Restore("r1", 2, 300)])])
    stats = store.stats("s")
    assert stats is not None
    assert (stats.restores, stats.restored_outputs, stats.restored_tokens) == (1, 2, 300)


def test_a_database_without_the_restores_table_gets_it_and_keeps_its_data(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.save([SessionBatch("s", [DecisionRow("1", "read", "deduplication", 10)])])
    store.close()
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TABLE restored")
    conn.commit()
    conn.close()
    store = store_at(tmp_path)
    store.save([SessionBatch("s", restores=[Restore("r1", 1, 40)])])
    stats = store.stats("s")
    assert stats is not None
    assert (stats.by_strategy, stats.restores) == ({"deduplication": (1, 10)}, 1)


def test_a_snapshot_is_kept_when_a_later_batch_has_none(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.save([SessionBatch("s", snapshot={"n": 1})])
    store.save([SessionBatch("s", requests=1)])
    assert store.load_session("s").snapshot == {"n": 1}


def test_corrupt_file_is_moved_aside_with_one_warning_and_a_fresh_db_works(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = store_at(tmp_path, warnings)
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(b"this is not a database at all" * 100)
    assert store.save([SessionBatch("s", [DecisionRow("c", "read", "deduplication", 4)])])
    store.save([SessionBatch("s", requests=1)])
    assert len(warnings) == 1 and "moved it to" in warnings[0]
    (aside,) = store.moved_aside
    assert aside.name.startswith("dcp.sqlite3.corrupt-")
    assert aside.read_bytes() == b"this is not a database at all" * 100
    assert store.load_session("s").pruned == {"c"}


def test_a_directory_where_the_database_should_be_is_left_alone(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = store_at(tmp_path, warnings)
    (store.path / "inside").mkdir(parents=True)
    assert store.save([SessionBatch("s", requests=1)]) is False
    assert len(warnings) == 1 and "cannot be opened" in warnings[0]
    assert store.moved_aside == [] and (store.path / "inside").is_dir()


def test_database_from_a_newer_version_is_left_alone_and_not_used(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = store_at(tmp_path, warnings)
    store.path.parent.mkdir(parents=True)
    conn = sqlite3.connect(store.path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    assert store.save([SessionBatch("s", requests=1)]) is False
    assert store.stats(None) is None
    assert len(warnings) == 1 and "newer dcp_plugin" in warnings[0]
    assert store.path.exists() and store.moved_aside == []


def test_an_unusable_data_directory_warns_once_and_is_retried_later(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    warnings: list[str] = []
    now = [0.0]
    store = Store(blocker / "sub" / "dcp.sqlite3", warnings.append, clock=lambda: now[0])
    assert store.save([SessionBatch("s", requests=1)]) is False
    assert store.save([SessionBatch("s", requests=1)]) is False
    assert store.load_session("s").pruned == set()
    assert len(warnings) == 1 and store.available
    blocker.unlink()
    blocker.mkdir()
    assert store.save([SessionBatch("s", requests=1)]) is False  # still backing off
    now[0] += store_mod.RETRY_SECONDS
    assert store.save([SessionBatch("s", requests=1)]) is True


def test_requests_are_pruned_while_the_store_is_unusable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    reports: list[str] = []
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": lambda _s, text: reports.append(text)}))
    runtime.use_store(Store(blocker / "dcp.sqlite3", lambda text: reports.append(text)))
    messages = [user(), call("read", {"filePath": "/p/a.py"}, output="A" * 300), user(), call("read", {"filePath": "/p/a.py"}, output="B" * 300)]
    hook_transform(runtime, {}, {"messages": messages})
    runtime.flush()
    assert messages[1]["parts"][0]["state"]["output"] != "A" * 300
    assert len([r for r in reports if "cannot be opened" in r]) == 1


_decisions = st.lists(
    st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(["c1", "c2", "c3", "c4"]), st.sampled_from(["deduplication", "sweep"]), st.integers(0, 500)),
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(writes=_decisions, split=st.integers(1, 5))
def test_each_call_counts_once_per_session_with_its_first_saving(writes: list[tuple[str, str, str, int]], split: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "dcp.sqlite3")
        for start in range(0, len(writes), split):
            chunk = writes[start : start + split]
            store.save([SessionBatch(sid, [DecisionRow(cid, "t", strategy, tokens)]) for sid, cid, strategy, tokens in chunk])
        first: dict[tuple[str, str], tuple[str, int]] = {}
        for sid, cid, strategy, tokens in writes:
            first.setdefault((sid, cid), (strategy, tokens))
        want: dict[str, tuple[int, int]] = {}
        for strategy, tokens in first.values():
            count, total = want.get(strategy, (0, 0))
            want[strategy] = (count + 1, total + tokens)
        stats = store.stats(None)
        store.close()
        assert stats is not None and stats.by_strategy == want



def test_a_database_locked_while_switching_to_wal_is_retried(tmp_path: Path, monkeypatch) -> None:
    """SQLite answers "locked" at once (no busy wait) when two processes open a new file together."""
    from dcp_plugin.store import DecisionRow, SessionBatch
    from dcp_plugin.store import database as store_mod

    real_connect = sqlite3.connect
    failures = {"left": 2}

    class Flaky:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self._conn = conn

        def execute(self, sql: str, *args):
            if "journal_mode=WAL" in sql and failures["left"]:
                failures["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self._conn.execute(sql, *args)

        def __getattr__(self, name: str):
            return getattr(self._conn, name)

    monkeypatch.setattr(store_mod.sqlite3, "connect", lambda *a, **k: Flaky(real_connect(*a, **k)))
    store = Store(tmp_path / "dcp.sqlite3")
    assert store.save([SessionBatch("s", [DecisionRow("c1", "read", "deduplication", 5)], requests=1)])
    assert store.available and failures["left"] == 0
    stats = store.stats("s")
    assert stats is not None and stats.by_strategy == {"deduplication": (1, 5)}
