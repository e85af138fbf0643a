"""The ledger's sync: the calls it finds finished, in order, each with the tool state it read."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.model.messages import locate, message_id
from dcp_plugin.pipeline.ledger import Ledger, SyncResult
from tests.support.helpers import assistant, tool_part, user


def _history(shape: list[list[str]]) -> list[dict[str, Any]]:
    """A user message, then one assistant message per item of ``shape`` holding calls of those statuses."""
    messages = [user()]
    for statuses in shape:
        messages.append(assistant(*(tool_part("read", {"filePath": f"/p/{i}.py"}, status=s) for i, s in enumerate(statuses))))
    return messages


def _assert_states_are_located(messages: list[dict[str, Any]], result: SyncResult) -> None:
    assert len(result.states) == len(result.finished)
    for record, state in zip(result.finished, result.states, strict=True):
        assert state is locate(messages, record)


_STATUSES = st.sampled_from(["completed", "error", "pending", "running"])


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.lists(_STATUSES, min_size=0, max_size=3), min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=1, max_value=9), max_size=4),
    finish=st.lists(st.booleans(), max_size=24),
    grow=st.lists(st.booleans(), max_size=5),
)
def test_every_finished_call_comes_with_the_state_locate_finds(
    shape: list[list[str]], cuts: list[int], finish: list[bool], grow: list[bool]
) -> None:
    messages = _history(shape)
    ledger = Ledger()
    ends = sorted({min(c, len(messages)) for c in cuts}) + [len(messages)]
    for round_, end in enumerate(ends):
        result = ledger.sync(messages, None, end)
        _assert_states_are_located(messages, result)
        assert [r.seq for r in result.finished] == sorted(r.seq for r in result.finished)
        # Some calls still running finish before the next sync, as a host streaming them would show.
        parts = [p for m in messages for p in m["parts"] if p.get("type") == "tool"]
        for part, done in zip(parts, finish[round_::2], strict=False):
            if done and part["state"]["status"] in ("pending", "running"):
                part["state"] = {**part["state"], "status": "completed", "output": "done"}
        if round_ < len(grow) and grow[round_]:
            # The newest message synced streams one more call in.
            messages[end - 1]["parts"].append(tool_part("grep", {"pattern": f"p{round_}"}))
    final = ledger.sync(messages)
    _assert_states_are_located(messages, final)


def test_a_call_that_finishes_later_is_handed_with_its_new_state() -> None:
    messages = _history([["running", "completed"]])
    ledger = Ledger()
    first = ledger.sync(messages)
    assert [r.part_index for r in first.finished] == [1]
    running = messages[1]["parts"][0]
    running["state"] = {**running["state"], "status": "completed", "output": "done"}
    later = ledger.sync(messages)
    assert later.finished == [ledger.records[0]]
    assert later.states == [running["state"]]


def test_a_call_finishing_with_a_new_call_in_the_newest_message_keeps_both_in_order() -> None:
    messages = _history([["running"], ["completed"]])
    ledger = Ledger()
    ledger.sync(messages)
    running = messages[1]["parts"][0]
    running["state"] = {**running["state"], "status": "completed", "output": "done"}
    streamed = tool_part("grep", {"pattern": "x"})
    messages[2]["parts"].append(streamed)
    later = ledger.sync(messages)
    assert [r.call_id for r in later.finished] == [running["callID"], streamed["callID"]]
    assert later.states == [running["state"], streamed["state"]]


@st.composite
def _owned(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Assistant messages with calls, their ids sometimes missing or malformed, after a user message."""
    messages = _history(draw(st.lists(st.lists(_STATUSES, min_size=1, max_size=2), min_size=1, max_size=6)))
    for message in messages:
        message["info"]["id"] = draw(st.sampled_from([message["info"]["id"], None, "", 0]))
    return messages


@settings(max_examples=150, deadline=None)
@given(messages=_owned(), cuts=st.lists(st.integers(min_value=0, max_value=8), max_size=5), resend=st.integers(0, 8))
def test_a_records_owner_is_its_messages_id_however_the_syncs_cut_the_list(
    messages: list[dict[str, Any]], cuts: list[int], resend: int
) -> None:
    ledger = Ledger()
    for end in sorted(min(c, len(messages)) for c in cuts):
        ledger.sync(messages, None, end, rescan=False)
    ledger.sync(messages, min(resend, len(messages)))
    assert [r.message_id for r in ledger.records] == [message_id(messages[r.message_index]) for r in ledger.records]


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.lists(_STATUSES, max_size=3), min_size=1, max_size=8), cuts=st.lists(st.integers(1, 9), max_size=6))
def test_a_walks_syncs_record_the_calls_one_sync_of_the_list_records(shape: list[list[str]], cuts: list[int]) -> None:
    messages = _history(shape)
    whole, walked = Ledger(), Ledger()
    whole.sync(messages)
    rescan = True
    for end in [*sorted({min(c, len(messages)) for c in cuts}), len(messages)]:
        walked.sync(messages, None, end, rescan=rescan)
        rescan = False
    assert [astuple(r) for r in walked.records] == [astuple(r) for r in whole.records]
    assert (walked.turn, walked.steps, walked.step_at, walked.message_ids) == (whole.turn, whole.steps, whole.step_at, whole.message_ids)
