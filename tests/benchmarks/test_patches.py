"""The allocation-free patch set (an optimization of the hot path) behaves like the list of pairs it replaced."""

from __future__ import annotations

import copy

import pytest

from dcp_plugin.pipeline.patches import Desync, Patches, apply, plan
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, placeholder_for
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session
from tests.support.helpers import make_config

pytestmark = pytest.mark.slow  # a benchmark


@pytest.fixture
def planned() -> tuple[list, SessionState, Patches]:
    messages = generate_session(120, seed=3)["messages"]
    state = SessionState("s", make_config(), DEFAULT_DIRECTORY)
    state.update(messages)
    return messages, state, plan(messages, state.applied)


def pairs(messages: list, state: SessionState) -> list:
    return [
        (d, messages[d.record.message_index]["parts"][d.record.part_index]["state"]) for d in state.in_force()
    ]


def test_iterates_as_record_state_pairs_in_decision_order(planned) -> None:
    messages, state, patches = planned
    assert len(pairs(messages, state)) > 5
    assert list(patches) == pairs(messages, state)
    assert patches == pairs(messages, state)


def test_indexing_and_slicing_work_like_a_list(planned) -> None:
    messages, state, patches = planned
    expected = pairs(messages, state)
    assert (patches[0], patches[-1], len(patches)) == (expected[0], expected[-1], len(expected))
    assert isinstance(patches[2:], Patches)
    assert list(patches[2:]) == expected[2:]
    assert list(patches[len(patches):]) == []


def test_an_empty_patch_set_is_falsy_and_equal_to_an_empty_list() -> None:
    assert not Patches()
    assert Patches() == []


def test_apply_writes_every_placeholder(planned) -> None:
    messages, state, patches = planned
    out = copy.deepcopy(messages)
    apply(plan(out, state.applied))
    for d in state.in_force():
        assert out[d.record.message_index]["parts"][d.record.part_index]["state"][d.field] == d.value
    assert any(d.value == placeholder_for(DUPLICATE_PLACEHOLDER, d.call_id) for d in state.in_force())


def test_plan_does_not_change_the_messages(planned) -> None:
    messages, state, _ = planned
    before = copy.deepcopy(messages)
    plan(messages, state.applied)
    assert messages == before


def test_plan_raises_desync_when_a_decided_part_moved(planned) -> None:
    messages, state, _ = planned
    record = state.in_force()[0].record
    moved = copy.deepcopy(messages)
    moved[record.message_index]["parts"][record.part_index]["callID"] = "someone_else"
    with pytest.raises(Desync):
        plan(moved, state.applied)
