"""The allocation-free patch set (an optimization of the hot path) behaves like the list of pairs it replaced."""

from __future__ import annotations

import copy

import pytest

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER, Desync, Patches, apply, plan
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.simulate import DEFAULT_DIRECTORY, generate_session


@pytest.fixture
def planned() -> tuple[list, SessionState, Patches]:
    messages = generate_session(120, seed=3)["messages"]
    state = SessionState("s", DcpConfig(), DEFAULT_DIRECTORY)
    state.update(messages)
    return messages, state, plan(messages, state.decided)


def pairs(messages: list, state: SessionState) -> list:
    return [
        (r, messages[r.message_index]["parts"][r.part_index]["state"]) for r in state.decided if r.field is not None
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
    apply(plan(out, state.decided))
    for record in state.decided:
        if record.field is not None:
            assert out[record.message_index]["parts"][record.part_index]["state"][record.field] == record.value
    assert any(r.value == DUPLICATE_PLACEHOLDER for r in state.decided)


def test_plan_does_not_change_the_messages(planned) -> None:
    messages, state, _ = planned
    before = copy.deepcopy(messages)
    plan(messages, state.decided)
    assert messages == before


def test_plan_raises_desync_when_a_decided_part_moved(planned) -> None:
    messages, state, _ = planned
    record = next(r for r in state.decided if r.field is not None)
    moved = copy.deepcopy(messages)
    moved[record.message_index]["parts"][record.part_index]["callID"] = "someone_else"
    with pytest.raises(Desync):
        plan(moved, state.decided)
