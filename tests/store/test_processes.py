"""The store across processes: concurrent writers stay consistent; a restarted host continues exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dcp_plugin.store import Store

pytestmark = pytest.mark.slow  # each test runs host processes

WRITER = textwrap.dedent(
    """
    import sys
    from dcp_plugin.store import DecisionRow, SessionBatch, Store

    path, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = Store(path, lambda text: print(text, file=sys.stderr))
    for i in range(rounds):
        batch_shared = SessionBatch("shared", [DecisionRow(f"c{i}", "read", "deduplication", 10)], requests=1, tokens_saved_sent=10)
        batch_own = SessionBatch(name, [DecisionRow(f"{name}-{i}", "bash", "purgeErrors", 3)], requests=1)
        assert store.save([batch_shared, batch_own]), "a write was lost"
    """
)

# Replays the first N requests of a generated session through a runtime with the default store,
# optionally sweeps, then prints the outgoing tool states of one last request and the stats.
HOST = textwrap.dedent(
    """
    import copy, json, sys
    from dcp_plugin.replay.simulate import generate_session
    from dcp_plugin.host.persistence import USER_STORE
    from dcp_plugin.adapters.pluggy_host import DcpPlugin
    from dcp_plugin.host.runtime import Runtime, StaticConfig
    from dcp_plugin.config.model import DcpConfig

    upto, sweep = int(sys.argv[1]), sys.argv[2]
    session = generate_session(240, seed=11)
    messages = session["messages"][:upto]
    sid = messages[0]["info"]["sessionID"]
    runtime = Runtime(session["info"]["directory"], StaticConfig(DcpConfig.model_validate({"cache": {"scheduler": False}})), store=USER_STORE)
    plugin = DcpPlugin(runtime)
    points = [i for i, m in enumerate(messages) if i > 0 and m["info"]["role"] == "assistant"]
    requests = 0
    start = int(sys.argv[3])
    for end in points:
        if end < start:
            continue
        plugin.chat_messages_transform({"sessionID": sid}, {"messages": copy.deepcopy(messages[:end])})
        requests += 1
    swept = ""
    if sweep != "-":
        out = {"parts": []}
        plugin.command_execute_before({"command": "dcp", "arguments": sweep, "sessionID": sid, "messages": copy.deepcopy(messages)}, out)
        swept = out["parts"][0]["text"]
    final = copy.deepcopy(messages)
    plugin.chat_messages_transform({"sessionID": sid}, {"messages": final})
    requests += 1
    view = runtime.view(sid)
    print(json.dumps({
        "tools": [p["state"] for m in final for p in m["parts"] if p.get("type") == "tool"],
        "decided": sorted(d.call_id for d in view.in_force),
        "reasons": {d.call_id: d.strategy for d in view.in_force},
        "requests": requests,
        "swept": swept,
    }))
    """
)


def run_host(env: dict[str, str], upto: int, sweep: str = "-", start: int = 0) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", HOST, str(upto), sweep, str(start)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_processes_writing_the_same_database_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "dcp.sqlite3"
    rounds = 150
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(rounds)], stderr=subprocess.PIPE, text=True)
        for name in ("p1", "p2")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    store = Store(path)
    shared = store.stats("shared")
    everything = store.stats(None)
    assert shared is not None and everything is not None
    # Both wrote c0..c149 to "shared": each call counts once, each request counts.
    assert (shared.by_strategy, shared.requests, shared.tokens_saved_sent) == (
        {"deduplication": (rounds, 10 * rounds)},
        2 * rounds,
        20 * rounds,
    )
    assert everything.sessions == 3
    assert everything.by_strategy["purgeErrors"] == (2 * rounds, 3 * 2 * rounds)


def test_a_restarted_host_makes_the_same_decisions_and_stats_accumulate_once(tmp_path: Path, isolated_home: Path) -> None:
    env = {**os.environ}
    first = run_host(env, 200, sweep="sweep 12")
    assert first["swept"].startswith("dcp sweep: pruned")
    # A new process, same database, same history: the sweep is restored before the first update.
    second = run_host(env, 200, start=10**9)
    assert second["tools"] == first["tools"]
    assert second["reasons"] == first["reasons"]
    store = Store(isolated_home / ".local/share/opencode/storage/plugin/dcp/dcp.sqlite3")
    stats = store.stats(None)
    assert stats is not None
    assert stats.sessions == 1
    assert stats.calls == len(first["decided"])
    assert stats.requests == first["requests"] + second["requests"]
    swept = [cid for cid, reason in first["reasons"].items() if reason == "sweep"]
    assert stats.by_strategy["sweep"][0] == len(swept) > 0


def test_a_restarted_host_on_a_longer_history_adds_only_the_new_prunes(tmp_path: Path, isolated_home: Path) -> None:
    env = {**os.environ}
    first = run_host(env, 120)
    second = run_host(env, 200, start=10**9)
    stats = Store(isolated_home / ".local/share/opencode/storage/plugin/dcp/dcp.sqlite3").stats(None)
    assert stats is not None
    assert set(first["decided"]) <= set(second["decided"])
    assert stats.calls == len(second["decided"])
