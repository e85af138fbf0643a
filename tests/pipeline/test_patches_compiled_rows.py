"""Planning over an epoch's compiled rows (the hot path) gives exactly what the general loop gives."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.pipeline.patches import Applied, Desync, Patches, apply, plan
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import make_config

CLEARED = "[Old tool result content cleared]"
MESSAGES = generate_session(160, seed=5)["messages"]


def session() -> SessionState:
    state = SessionState("s", make_config(strategies={"supersedeWrites": {"enabled": True}}), DEFAULT_DIRECTORY)
    state.update(MESSAGES)
    return state


STATE = session()


def change(state: dict[str, Any], what: str) -> None:
    """What a host may do to a tool state it sends again."""
    output = state.get("output")
    if what == "clear":
        state["output"] = CLEARED
        state["time"] = {"start": 1, "end": 2, "compacted": 1700000000000}
    elif what == "compact-in-place":
        if isinstance(state.get("time"), dict):
            state["time"]["compacted"] = 1
    elif what == "null":
        state["output"] = None
    elif what == "shrink" and isinstance(output, str):
        state["output"] = output[: len(output) // 3]
    elif what == "placeholder":
        state["output"] = "[dcp: something else]" + "x" * 400
    elif what == "not-completed":
        state["status"] = "running"
    elif what == "time-not-a-dict":
        state["time"] = "yesterday"
    elif what == "output-not-a-string":
        state["output"] = {"lines": ["a" * 500]}
    elif what == "input":
        state["input"] = {"filePath": "other.py"}
    elif what == "call-id-only-in-id":
        pass  # handled by the caller: the part loses its callID


CHANGES = st.sampled_from(
    ["clear", "compact-in-place", "null", "shrink", "placeholder", "not-completed", "time-not-a-dict",
     "output-not-a-string", "input", "call-id-only-in-id"]
)


def host_edited(edits: list[tuple[int, str]]) -> list[dict[str, Any]]:
    messages = copy.deepcopy(MESSAGES)
    in_force = STATE.in_force()
    for which, what in edits:
        record = in_force[which % len(in_force)].record
        part = messages[record.message_index]["parts"][record.part_index]
        if what == "call-id-only-in-id":
            part["id"] = part.pop("callID", part.get("id"))
        else:
            change(part["state"], what)
    return messages


def planned_both(messages: list[dict[str, Any]], applied: Applied) -> tuple[Patches | type[Desync], Patches | type[Desync]]:
    results: list[Patches | type[Desync]] = []
    for decisions in (applied, list(applied)):
        try:
            results.append(plan(messages, decisions))
        except Desync:
            results.append(Desync)
    return results[0], results[1]


def test_the_arbiter_keeps_its_applied_decisions_in_a_compiled_list() -> None:
    assert type(STATE.applied) is Applied
    assert len(STATE.applied) > 20


@settings(max_examples=80, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), CHANGES), max_size=12))
def test_compiled_plan_equals_the_general_loop_whatever_the_host_changed(edits: list[tuple[int, str]]) -> None:
    messages = host_edited(edits)
    fast, general = planned_both(messages, STATE.applied)
    assert fast == general
    if isinstance(fast, Patches) and isinstance(general, Patches):
        assert all(a is b for a, b in zip(fast.states, general.states, strict=True))


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), CHANGES), max_size=12))
def test_applying_compiled_patches_writes_what_the_general_loop_writes(edits: list[tuple[int, str]]) -> None:
    fast_messages, general_messages = host_edited(edits), host_edited(edits)
    try:
        fast = plan(fast_messages, STATE.applied)
        general = plan(general_messages, list(STATE.applied))
    except Desync:
        return
    apply(fast)
    apply(general)
    assert fast_messages == general_messages


def test_an_applied_input_is_a_copy_of_the_decided_value() -> None:
    messages = copy.deepcopy(MESSAGES)
    patches = plan(messages, STATE.applied)
    assert patches.writes is not None
    apply(patches)
    inputs = [(d, s) for d, s in patches if isinstance(d.value, dict)]
    assert inputs
    assert all(s[d.field] == d.value and s[d.field] is not d.value for d, s in inputs)


def test_a_decision_superseded_by_a_later_one_leaves_the_compiled_rows() -> None:
    state = session()
    applied = state.applied
    plan(MESSAGES, applied)  # compiles the rows
    first = next(d for d in applied if not d.superseded and d.withdraws is None)
    # Supersession comes with an append: the replacement is applied, and takes the field over.
    replacement = dataclasses.replace(first, replaces=first)
    first.superseded = True
    applied.append(replacement)
    first_patches = plan(MESSAGES, applied)
    assert first not in first_patches.decisions
    assert replacement in first_patches.decisions
    assert first_patches == plan(MESSAGES, list(applied))


def test_patches_handed_out_keep_their_writes_when_later_decisions_are_compiled() -> None:
    state = session()
    applied = state.applied
    before = plan(MESSAGES, applied)
    assert before.writes is not None
    fields, values = list(before.writes.fields), list(before.writes.values)
    first = next(d for d in applied if not d.superseded and d.withdraws is None)
    first.superseded = True
    applied.append(dataclasses.replace(first, replaces=first))
    plan(MESSAGES, applied)
    assert (list(before.writes.fields), list(before.writes.values)) == (fields, values)


def test_a_position_that_is_gone_still_raises_desync() -> None:
    messages = copy.deepcopy(MESSAGES)
    record = STATE.in_force()[-1].record
    del messages[record.message_index]["parts"][record.part_index:]
    with pytest.raises(Desync):
        plan(messages, STATE.applied)


def test_a_checkpoint_pickles_the_decisions_without_the_rows() -> None:
    applied = STATE.applied
    plan(MESSAGES, applied)
    loaded = pickle.loads(pickle.dumps(applied))
    assert type(loaded) is Applied
    assert [d.value for d in loaded] == [d.value for d in applied]
    assert [d.value for d in plan(MESSAGES, loaded).decisions] == [d.value for d in plan(MESSAGES, applied).decisions]


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), CHANGES), max_size=12))
def test_planning_with_write_stores_what_planning_then_applying_stores(edits: list[tuple[int, str]]) -> None:
    written, applied = host_edited(edits), host_edited(edits)
    try:
        expected = plan(applied, STATE.applied)
    except Desync:
        with pytest.raises(Desync):
            plan(written, STATE.applied, write=True)
        assert written == host_edited(edits)  # nothing stays written
        return
    apply(expected)
    assert plan(written, STATE.applied, write=True) == expected
    assert written == applied


def test_a_call_gone_after_others_were_written_leaves_nothing_written() -> None:
    messages = copy.deepcopy(MESSAGES)
    record = STATE.in_force()[-1].record  # the last row: every other one is written before it
    del messages[record.message_index]["parts"][record.part_index:]
    before = copy.deepcopy(messages)
    with pytest.raises(Desync):
        plan(messages, STATE.applied, write=True)
    assert messages == before


class _Unreadable(str):
    """A call id the host built badly: comparing it fails."""

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("host object failed")


def test_an_error_from_the_hosts_objects_midway_puts_back_what_was_written() -> None:
    messages = copy.deepcopy(MESSAGES)
    record = STATE.in_force()[-1].record
    part = messages[record.message_index]["parts"][record.part_index]
    part["callID"] = _Unreadable(part["callID"])
    before = copy.deepcopy(messages)
    with pytest.raises(RuntimeError, match="host object failed"):
        plan(messages, STATE.applied, write=True)
    assert messages == before
