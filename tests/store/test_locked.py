"""N10: a state database another process holds locked: requests and /dcp go on, nothing is lost, stats say so."""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest

import dcp_plugin
import dcp_plugin.host.hostspec
from benchmarks.locked_store import run
from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.store import Store
from tests.support.helpers import PROJECT, SESSION, call, make_config, tool_parts, user

BIG = "x" * 900
MESSAGES = [user(), call("read", {"filePath": f"{PROJECT}/a.py"}, output=BIG), call("read", {"filePath": f"{PROJECT}/b.py"}, output=BIG)]


class Host:
    """A host process with the dcp plugin registered through pluggy, saving to ``path``."""

    def __init__(self, path: Path) -> None:
        self.store = Store(path, warn=lambda _text: None)
        self.pm = pluggy.PluginManager(dcp_plugin.PROJECT_NAME)
        self.pm.add_hookspecs(dcp_plugin.host.hostspec)
        self.pm.register(dcp_plugin.DcpPlugin(Runtime(PROJECT, StaticConfig(make_config()), store=self.store)), name="dcp")

    def request(self) -> list[Any]:
        sent = copy.deepcopy(MESSAGES)
        self.pm.hook.chat_messages_transform(input={"sessionID": SESSION}, output={"messages": sent})
        return [p["state"]["output"] for p in tool_parts(sent)]

    def command(self, arguments: str) -> str:
        output: dict[str, Any] = {"parts": []}
        hook_input = {"command": "dcp", "arguments": arguments, "sessionID": SESSION, "messages": copy.deepcopy(MESSAGES)}
        self.pm.hook.command_execute_before(input=hook_input, output=output)
        return str(output["parts"][0]["text"])


@pytest.fixture
def path(tmp_path: Path) -> Path:
    first = Store(tmp_path / "dcp.db")
    first.stats(None)
    first.close()
    return tmp_path / "dcp.db"


@pytest.fixture
def locked(path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's connection holding the database locked until the test releases it."""
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("PRAGMA locking_mode=EXCLUSIVE")
    lock.execute("BEGIN EXCLUSIVE")
    yield lock
    lock.close()  # a no-op once released


def release(lock: sqlite3.Connection) -> None:
    lock.execute("ROLLBACK")
    lock.close()  # in WAL mode an exclusive lock goes only with its connection


def test_stats_while_the_database_is_locked_come_from_memory_and_say_so(path: Path, locked: sqlite3.Connection) -> None:
    host = Host(path)
    host.command("sweep")
    text = host.command("stats")
    assert "busy (another process holds its lock)" in text and "from memory" in text
    assert "2 calls pruned" in text


def test_a_sweep_made_while_the_database_is_locked_is_saved_once_it_is_free(path: Path, locked: sqlite3.Connection) -> None:
    host = Host(path)
    host.request()
    host.command("sweep")
    release(locked)
    host.command("stats")  # the next flush saves what the lock held back
    later = Host(path)
    assert all(output.startswith("[dcp: removed by /dcp sweep") for output in later.request())


def test_the_benchmark_times_every_step_with_the_database_locked() -> None:
    assert [row["step"] for row in run()] == ["first request", "later request", "/dcp sweep", "/dcp stats"]
