"""Sessions apart: one session busy inside the runtime (a cold rebuild of a long history) never blocks another."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.session import SessionState
from tests.support.helpers import PROJECT, call, make_config, user

# Only a safety net so a regression fails instead of hanging: nothing here measures time.
GIVE_UP_SECONDS = 60


def session(session_id: str) -> list[dict[str, Any]]:
    read = {"filePath": "/p/a.py"}
    return [user(session=session_id), call("read", read, output="a" * 400), call("read", read, output="a" * 400)]


class Stuck:
    """Holds the session ``slow`` inside its rebuild (SessionState.update) until released."""

    def __init__(self) -> None:
        self.inside = threading.Event()
        self.release = threading.Event()


@pytest.fixture
def stuck(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stuck]:
    hold = Stuck()
    update = SessionState.update

    def held_update(self: SessionState, *args: Any, **kwargs: Any) -> Any:
        if self.session_id == "slow":
            hold.inside.set()
            hold.release.wait(GIVE_UP_SECONDS)
        return update(self, *args, **kwargs)

    monkeypatch.setattr(SessionState, "update", held_update)
    yield hold
    hold.release.set()


def finishes_while_slow_is_stuck(runtime: Runtime, stuck: Stuck, work: Callable[[], object]) -> bool:
    """Whether ``work`` completes while the session ``slow`` is held inside its rebuild."""
    slow = threading.Thread(target=runtime.prepare, args=("slow", session("slow")), daemon=True)
    slow.start()
    assert stuck.inside.wait(GIVE_UP_SECONDS), "the slow session never started its rebuild"
    done = threading.Event()
    other = threading.Thread(target=lambda: (work(), done.set()), daemon=True)
    other.start()
    finished = done.wait(GIVE_UP_SECONDS)
    still_stuck = slow.is_alive()
    stuck.release.set()
    slow.join(GIVE_UP_SECONDS)
    other.join(GIVE_UP_SECONDS)
    return finished and still_stuck


def test_another_sessions_request_is_answered_while_one_session_rebuilds(stuck: Stuck) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    answers: list[Any] = []
    assert finishes_while_slow_is_stuck(runtime, stuck, lambda: answers.append(runtime.prepare("fast", session("fast"))))
    assert answers[0] is not None and answers[0].in_force == 1


def test_another_sessions_view_and_the_session_list_answer_while_one_session_rebuilds(stuck: Stuck) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.prepare("fast", session("fast"))
    seen: list[Any] = []
    assert finishes_while_slow_is_stuck(
        runtime, stuck, lambda: seen.extend([runtime.view("fast"), sorted(runtime.session_ids())])
    )
    assert seen[0] is not None and len(seen[0].in_force) == 1
    assert seen[1] == ["fast", "slow"]


def test_the_host_offering_tools_reaches_a_session_made_before(stuck: Stuck) -> None:
    runtime = Runtime(PROJECT, StaticConfig(make_config()))
    runtime.prepare("fast", session("fast"))
    assert finishes_while_slow_is_stuck(runtime, stuck, runtime.tool_definitions)
    runtime.prepare("fast", session("fast"))
    view = runtime.view("fast")
    assert view is not None and view.restarts == 1  # offering the tools derives the session anew, once
