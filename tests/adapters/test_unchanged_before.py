"""A pluggy host's ``unchangedBefore``: its word that a prefix is unchanged, and what the plugin then does not read again."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.host.runtime import Runtime, StaticConfig
from dcp_plugin.pipeline.placeholders import PLACEHOLDER_PREFIX
from dcp_plugin.replay.engine import request_points
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import SESSION, hook_transform, make_config, tool_parts

CLEARED = "[Old tool result content cleared]"
CONFIG = make_config(strategies={"supersedeWrites": {"enabled": True}})


def sent(runtime: Runtime, messages: list[dict[str, Any]], unchanged: object = None) -> list[Any]:
    """Every tool state's output and input after one request through the hook (on a copy of ``messages``)."""
    outgoing = copy.deepcopy(messages)
    hook_input: dict[str, Any] = {"sessionID": SESSION}
    if unchanged is not None:
        hook_input["unchangedBefore"] = unchanged
    hook_transform(runtime, hook_input, {"messages": outgoing})
    return [(p["state"].get("output"), p["state"].get("input")) for p in tool_parts(outgoing)]


def compact(messages: list[dict[str, Any]], index: int) -> bool:
    """Clear the completed outputs of message ``index`` as OpenCode's compaction does; whether one was."""
    cleared = False
    for part in tool_parts([messages[index]]):
        state = part["state"]
        if state.get("status") == "completed" and state.get("output") != CLEARED:
            state["output"] = CLEARED
            state["time"] = {**(state.get("time") or {}), "compacted": 1}
            cleared = True
    return cleared


@pytest.mark.slow  # whole runtimes over generated histories
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=1, max_value=10_000),
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=12),
)
def test_a_host_that_vouches_truthfully_gets_what_a_host_that_says_nothing_gets(
    seed: int, compactions: list[tuple[float, bool]]
) -> None:
    history = generate_session(140, seed=seed)["messages"]
    points = sorted({*request_points(history), len(history)})
    silent, vouching = Runtime(DEFAULT_DIRECTORY, StaticConfig(CONFIG)), Runtime(DEFAULT_DIRECTORY, StaticConfig(CONFIG))
    stored = copy.deepcopy(history)  # the host's storage: compacted now and then, in place
    previous = 0
    for step, count in enumerate(points):
        unchanged = previous
        where, compacting = compactions[step % len(compactions)]
        if compacting and previous:
            index = int(where * (previous - 1))
            if compact(stored, index):
                unchanged = min(unchanged, index)  # the host's word covers only what it did not touch
        expected = sent(silent, stored[:count])
        assert sent(vouching, stored[:count], unchanged if previous else None) == expected
        previous = count


def requests_until_pruned() -> tuple[Runtime, list[dict[str, Any]], int, str]:
    """A runtime that pruned a session's requests, the messages sent, and where it wrote a whole output placeholder."""
    history = generate_session(120, seed=3)["messages"]
    runtime = Runtime(DEFAULT_DIRECTORY, StaticConfig(CONFIG))
    for count in sorted({*request_points(history), len(history)}):
        outputs = sent(runtime, history[:count])
    view = runtime.view(SESSION)
    assert view is not None and view.in_force, outputs
    pruned = next(d for d in view.in_force if d.field == "output" and d.cuts is None)
    return runtime, history, pruned.message_index, pruned.call_id


def output_of(outputs: list[Any], messages: list[dict[str, Any]], call_id: str) -> Any:
    return outputs[[p["callID"] for p in tool_parts(messages)].index(call_id)][0]


def test_a_message_the_host_vouches_for_is_not_checked_again() -> None:
    runtime, history, index, call_id = requests_until_pruned()
    stored = copy.deepcopy(history)
    compact(stored, index)  # changed, yet vouched for: the host's word is taken
    outputs = sent(runtime, stored, len(stored))
    assert str(output_of(outputs, stored, call_id)).startswith(PLACEHOLDER_PREFIX)


def test_a_message_the_host_does_not_vouch_for_is_checked() -> None:
    runtime, history, index, call_id = requests_until_pruned()
    stored = copy.deepcopy(history)
    compact(stored, index)
    outputs = sent(runtime, stored, index)  # the host's word stops before the message it compacted
    assert output_of(outputs, stored, call_id) == CLEARED


@pytest.mark.plain_python  # replaces a compiled function: see tests/conftest.py
def test_after_a_request_that_failed_the_next_one_is_checked_whatever_the_host_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, history, index, call_id = requests_until_pruned()
    stored = copy.deepcopy(history)
    compact(stored, index)

    def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planning failed")

    with monkeypatch.context() as patched:
        patched.setattr("dcp_plugin.pipeline.session.plan", failing)
        sent(runtime, stored, len(stored))  # goes out unpruned; the host compacted before it
    # Against the failed request nothing changed, but what was checked last is older than that.
    outputs = sent(runtime, stored, len(stored))
    assert output_of(outputs, stored, call_id) == CLEARED


@pytest.mark.parametrize("value", [True, -1, 10_000, "3", 2.0, [1]])
def test_an_unusable_unchanged_before_is_ignored_with_a_warning_and_the_request_still_pruned(
    value: object, caplog: pytest.LogCaptureFixture
) -> None:
    runtime, history, index, call_id = requests_until_pruned()
    stored = copy.deepcopy(history)
    compact(stored, index)
    with caplog.at_level(logging.WARNING, logger="dcp_plugin"):
        outputs = sent(runtime, stored, value)
    assert "'unchangedBefore' must be a whole number" in caplog.text and repr(value) in caplog.text
    assert output_of(outputs, stored, call_id) == CLEARED  # checked as if the host had said nothing
    assert any(isinstance(o, str) and o.startswith(PLACEHOLDER_PREFIX) for o, _ in outputs)
