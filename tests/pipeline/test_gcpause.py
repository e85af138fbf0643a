"""The collector paused during long walks: pauses nest across threads, and a host's own setting survives them."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline import session as session_module
from dcp_plugin.pipeline.gcpause import gc_paused
from dcp_plugin.pipeline.session import PAUSE_GC_FROM, SessionState
from dcp_plugin.pipeline.walk import Walk
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    """Each test starts with the collector on and leaves it as the suite had it."""
    before = gc.isenabled()
    gc.enable()
    yield
    if not before:
        gc.disable()


def test_a_pause_turns_the_collector_off_and_back_on() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_host_turned_off_stays_off_after_a_pause() -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_comes_back_when_the_last_of_overlapping_pauses_ends() -> None:
    # Two sessions' walks in two threads, ending in the order they did not begin in.
    first_in, second_in, first_may_end, first_out, second_may_end = (threading.Event() for _ in range(5))
    seen: dict[str, bool] = {}

    def first() -> None:
        with gc_paused():
            first_in.set()
            first_may_end.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            second_may_end.wait(5)
            seen["after the first ended"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    second_in.wait(5)
    first_may_end.set()
    first_out.wait(5)
    second_may_end.set()
    for thread in threads:
        thread.join(5)
    assert seen == {"after the first ended": False}
    assert gc.isenabled()


def test_a_pause_ends_when_the_work_raises() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


class _Node:
    """An object the collector tracks."""


def _in_oldest_generation(objects: list[object]) -> bool:
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    return all(id(o) in oldest for o in objects)


def test_what_a_pause_built_is_in_the_oldest_generation_when_it_ends() -> None:
    gc.collect()  # no middle-generation collection due soon, which would move them there anyway
    with gc_paused():
        built = [_Node() for _ in range(5_000)]
    assert _in_oldest_generation(built)


def _collections_at_the_end_of_a_pause() -> list[int]:
    collected: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    with gc_paused():
        built = [_Node() for _ in range(5_000)]
        gc.callbacks.append(seen)
    gc.callbacks.remove(seen)
    del built
    return collected


def test_a_pause_ends_without_a_collection_when_the_host_turned_the_collector_off() -> None:
    gc.disable()
    assert _collections_at_the_end_of_a_pause() == []


def test_a_pause_ends_without_a_collection_when_the_host_set_no_automatic_collections() -> None:
    thresholds = gc.get_threshold()
    gc.set_threshold(0)
    try:
        assert _collections_at_the_end_of_a_pause() == []
    finally:
        gc.set_threshold(*thresholds)


class _PausesWhenFreed:
    """Garbage in a cycle whose finalizer pauses the collector: it runs in the closing collection."""

    def __init__(self) -> None:
        self.cycle = self
        self.freed = threading.Event()

    def __del__(self) -> None:
        with gc_paused():
            self.freed.set()


def test_a_finalizer_that_pauses_during_the_closing_collection_does_not_hang_the_thread() -> None:
    freed: list[threading.Event] = []

    def walk() -> None:
        with gc_paused():
            garbage = _PausesWhenFreed()
            freed.append(garbage.freed)
            del garbage

    thread = threading.Thread(target=walk, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    assert freed[0].is_set()
    assert gc.isenabled()


def test_a_pause_ends_with_one_collection_of_the_young_generations() -> None:
    assert _collections_at_the_end_of_a_pause() == [1]


def _collector_during_walk(monkeypatch: pytest.MonkeyPatch, messages: list[Any], state: SessionState) -> list[bool]:
    seen: list[bool] = []
    walk = SessionState._walk

    def watched(self: SessionState, one: Walk, request: bool) -> None:
        seen.append(gc.isenabled())
        walk(self, one, request)

    monkeypatch.setattr(SessionState, "_walk", watched)
    state.update(messages)
    return seen


@pytest.mark.plain_python  # replaces a compiled function: see tests/conftest.py
def test_a_long_walk_pauses_the_collector_and_a_short_one_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = generate_session(PAUSE_GC_FROM + 200, seed=3)["messages"]
    state = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    assert _collector_during_walk(monkeypatch, messages[:-50], state) == [False]
    assert gc.isenabled()
    assert _collector_during_walk(monkeypatch, messages, state) == [True]


@pytest.mark.plain_python  # replaces a compiled function: see tests/conftest.py
def test_a_walk_decides_the_same_with_and_without_the_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = generate_session(PAUSE_GC_FROM + 200, seed=5, busy=True)["messages"]
    paused = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    paused.update(messages)
    monkeypatch.setattr(session_module, "PAUSE_GC_FROM", 10**9)
    unpaused = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    unpaused.update(messages)
    assert [(d.call_id, d.field, d.value, d.applied_at) for d in paused.decisions] == [
        (d.call_id, d.field, d.value, d.applied_at) for d in unpaused.decisions
    ]
    assert paused.decisions


def test_a_long_walk_leaves_its_records_in_the_oldest_generation() -> None:
    messages = generate_session(PAUSE_GC_FROM + 200, seed=9)["messages"]
    state = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    gc.collect()
    state.update(messages)
    assert state.ledger.records
    assert _in_oldest_generation([*state.ledger.records, *state.decisions])


@pytest.mark.plain_python  # replaces a compiled function: see tests/conftest.py
def test_a_long_walk_lets_go_of_its_reads_before_the_collector_resumes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The collector scans what is alive when it resumes: the walk's per-message reads would be
    # scanned (tens of thousands of objects on a long first sight) only to be dropped right after.
    messages = generate_session(PAUSE_GC_FROM + 200, seed=7)["messages"]
    state = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    held_at_resume: list[int] = []
    paused = session_module.gc_paused

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        with paused():
            yield
            held_at_resume.append(len(state.timeline.walked))

    monkeypatch.setattr(session_module, "gc_paused", watched)
    state.update(messages)
    assert held_at_resume == [0]
