"""Bookkeeping after each request: what the store counts of the requests the host sends."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path

import pytest

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host import persistence
from dcp_plugin.host.config_slot import StaticConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.messages import is_assistant
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from dcp_plugin.store import Store


def test_each_request_sent_is_counted_once_at_the_cost_the_scheduler_gave_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(persistence, "FLUSH_INTERVAL_SECONDS", 0.0)  # each request's counts go out with it
    messages = generate_session(160, seed=4)["messages"]
    runtime = Runtime(DEFAULT_DIRECTORY, StaticConfig(DcpConfig()), store=Store(tmp_path / "dcp.sqlite3"))
    points = [i for i in range(1, len(messages)) if is_assistant(messages[i])]
    for count in points:
        for _ in range(2):  # the same list sent again schedules no request: nothing more is counted
            runtime.prune("s", copy.deepcopy(messages[:count]))  # a host rebuilds each request from its storage
    view = runtime.view("s")
    assert view is not None
    with sqlite3.connect(tmp_path / "dcp.sqlite3") as conn:
        requests, cost_without, cost_with = conn.execute(
            "SELECT requests, cost_without, cost_with FROM sessions WHERE session_id = 's'"
        ).fetchone()
    assert view.costs["requests"] == len(points)
    assert requests == 2 * len(points)  # every request is counted, its cost only when it was scheduled
    assert round(cost_without, 1) == view.costs["cost_without"]
    assert round(cost_with, 1) == view.costs["cost_with"]
