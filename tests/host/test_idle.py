"""R10: a long-running host holds a bounded number of sessions: idle ones and the least recently used go."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dcp_plugin.adapters.formats import Pruner
from dcp_plugin.host.idle import SessionLru
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import PROJECT, call, hook_transform, make_config, user
from tests.support.paths import ROOT


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def conversation(session: str) -> list[dict[str, Any]]:
    read = {"filePath": f"{PROJECT}/a.py"}
    return [user(session=session), call("read", read), call("read", read), user(session=session)]


def chat(n: int) -> list[dict[str, Any]]:
    arguments = json.dumps({"filePath": f"/proj/{n}.py"})
    return [
        {"role": "user", "content": f"task {n}"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 500},
    ]


def send(runtime: Runtime, session: str) -> None:
    hook_transform(runtime, {"sessionID": session}, {"messages": conversation(session)})


def test_the_runtime_holds_at_most_max_sessions_the_least_recently_used_going_first() -> None:
    runtime = Runtime(PROJECT, make_config(), max_sessions=3)
    for n in range(10):
        send(runtime, f"s{n}")
    send(runtime, "s7")  # used again: now the most recent
    send(runtime, "s10")
    assert sorted(runtime.session_ids()) == ["s10", "s7", "s9"]


def test_the_runtime_drops_sessions_idle_for_idle_seconds() -> None:
    clock = Clock()
    runtime = Runtime(PROJECT, make_config(), idle_seconds=7200, clock=clock)
    for n in range(5):
        send(runtime, f"s{n}")
    clock.now += 3600
    send(runtime, "s0")
    clock.now += 3601  # s1..s4 idle for two hours and a second, s0 for one hour
    send(runtime, "new")
    assert sorted(runtime.session_ids()) == ["new", "s0"]


def test_a_dropped_session_is_pruned_the_same_when_it_comes_back() -> None:
    runtime = Runtime(PROJECT, make_config(), max_sessions=1)
    first = conversation("a")
    hook_transform(runtime, {"sessionID": "a"}, {"messages": first})
    send(runtime, "b")  # drops a
    again = conversation("a")
    again[1:3] = first[1:3]
    sent = {"messages": [dict(m) for m in again]}
    hook_transform(runtime, {"sessionID": "a"}, sent)
    assert sent["messages"][1]["parts"][0]["state"]["output"].startswith("[dcp:")


def test_the_pruner_holds_at_most_max_sessions_views() -> None:
    pruner = Pruner(Runtime("/proj", make_config()), max_sessions=4)
    for n in range(50):
        pruner.openai_chat(chat(n), session_id=f"s{n}")
    assert pruner.session_ids() == ["s46", "s47", "s48", "s49"]
    assert sorted(pruner.runtime.session_ids()) == ["s46", "s47", "s48", "s49"]  # the pruner forgets what it drops


def test_the_pruner_drops_views_idle_for_idle_seconds() -> None:
    clock = Clock()
    pruner = Pruner(Runtime("/proj", make_config(), clock=clock), idle_seconds=600, clock=clock)
    for n in range(5):
        pruner.openai_chat(chat(n), session_id=f"s{n}")
    clock.now += 601
    pruner.openai_chat(chat(9), session_id="s9")
    assert pruner.session_ids() == ["s9"]
    assert pruner.runtime.session_ids() == ["s9"]


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SessionLru(0)


def test_the_readme_states_the_bounds_the_runtime_and_the_pruner_use() -> None:

    from dcp_plugin.host.idle import IDLE_SECONDS, MAX_SESSIONS

    text = " ".join((ROOT / "README.md").read_text().split())
    assert IDLE_SECONDS == 2 * 3600 and MAX_SESSIONS == 256
    assert "holds at most 256 sessions in memory and lets go of one unused for two hours" in text
    assert "a session unused for two hours, or the least recently used beyond 256" in text
    assert "`pruner.forget(session_id)`" in text
