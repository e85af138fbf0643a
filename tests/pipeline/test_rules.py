"""Rules defined once and used everywhere: call identity, tokens saved, placeholders never growing a part."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from dcp_plugin.commands.context import build_breakdown
from dcp_plugin.host.hostspec import HostStartup
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.model.messages import call_id_of, message_time
from dcp_plugin.model.tokens import estimate_part_tokens
from dcp_plugin.pipeline.patches import plan
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from dcp_plugin.pipeline.session import SessionState
from tests.support.helpers import (
    PROJECT,
    SESSION,
    assistant,
    call,
    diagnostics,
    hook_transform,
    make_config,
    named,
    tool_part,
    user,
)

BIG = "x" * 2000


def duplicate_reads(**part: Any) -> list[dict[str, Any]]:
    first = call("read", {"filePath": "/p/a.py"}, output=BIG)
    first["parts"][0].update(part)
    return [user(), first, user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]


def run(messages: list[dict[str, Any]], runtime: Runtime | None = None) -> tuple[list[dict[str, Any]], Runtime]:
    runtime = runtime or Runtime(PROJECT, make_config())
    out = copy.deepcopy(messages)
    hook_transform(runtime, {}, {"messages": out})
    return out, runtime


@pytest.mark.parametrize("falsy", [None, "", 0, False])
def test_a_falsy_call_id_is_pruned_on_every_request_without_starting_over(falsy: Any) -> None:
    messages = duplicate_reads(callID=falsy)
    runtime = Runtime(PROJECT, make_config())
    for _ in range(3):
        out, _ = run(messages, runtime)
        assert out[1]["parts"][0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, messages[1])
    assert runtime.view(SESSION).restarts == 0  # type: ignore[union-attr]


def test_a_part_without_any_id_is_named_by_its_position() -> None:
    message = {"info": {"id": "m7"}, "parts": [{"type": "tool", "callID": "", "id": None}]}
    assert call_id_of(message["parts"][0], message, 3, 0) == "m7#0"


def test_a_duplicate_whose_output_the_host_already_cleared_saves_nothing_and_is_not_counted() -> None:
    messages = duplicate_reads()
    messages[1]["parts"][0]["state"]["time"] = {"start": 1, "end": 2, "compacted": 3}
    notices: list[str] = []
    runtime = Runtime(PROJECT, make_config())
    runtime.startup(HostStartup.read({"directory": PROJECT, "notify": lambda _s, text: notices.append(text)}))
    out, _ = run(messages, runtime)
    assert out == messages
    assert runtime.view(SESSION).in_force == ()  # type: ignore[union-attr]
    assert runtime.wait_for_notices()
    assert notices == []


def test_tokens_saved_equal_what_the_context_breakdown_removes() -> None:
    messages = duplicate_reads()
    _, runtime = run(messages)
    [decision] = runtime.view(SESSION).in_force  # type: ignore[union-attr]
    breakdown = build_breakdown(SESSION, messages, [decision])
    assert breakdown.saved["deduplication"] == (1, decision.tokens_saved)
    part = messages[1]["parts"][0]
    assert decision.tokens_saved == estimate_part_tokens(part) - estimate_part_tokens(
        {**part, "state": {**part["state"], "output": named(DUPLICATE_PLACEHOLDER, part)}}
    )


@pytest.mark.parametrize("output", [None, 12345, ["a", "b"], {"k": "v"}, "short"])
def test_an_output_no_larger_than_the_placeholder_is_left_alone(output: Any) -> None:
    messages = duplicate_reads()
    messages[1]["parts"][0]["state"]["output"] = output
    messages[3]["parts"][0]["state"]["output"] = output
    out, _ = run(messages)
    assert out == messages


def test_a_missing_output_is_never_added() -> None:
    messages = duplicate_reads()
    for index in (1, 3):
        del messages[index]["parts"][0]["state"]["output"]
    out, _ = run(messages)
    assert out == messages


def test_a_large_non_string_output_is_replaced() -> None:
    big = [{"line": i, "text": "y" * 50} for i in range(40)]
    messages = duplicate_reads()
    messages[1]["parts"][0]["state"]["output"] = big
    messages[3]["parts"][0]["state"]["output"] = copy.deepcopy(big)
    out, _ = run(messages)
    assert out[1]["parts"][0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, messages[1])


def test_two_parts_with_the_same_call_id_prune_only_the_first_one_seen() -> None:
    twin = tool_part("read", {"filePath": "/p/a.py"}, output=BIG, call_id="same")
    other = tool_part("read", {"filePath": "/p/a.py"}, output=BIG, call_id="same")
    messages = [user(), assistant(twin), user(), assistant(other), user(), call("read", {"filePath": "/p/a.py"}, output=BIG)]
    out, _ = run(messages)
    assert out[1]["parts"][0]["state"]["output"] == named(DUPLICATE_PLACEHOLDER, "same")
    assert out[3]["parts"][0]["state"]["output"] == BIG


def test_a_message_id_is_never_taken_for_a_model_id() -> None:
    from dcp_plugin.model.refs import model_ref

    assert model_ref({"id": "msg_1", "role": "assistant", "providerID": "anthropic"}) == model_ref({"providerID": "anthropic"})
    assert model_ref({"id": "claude-x", "providerID": "anthropic", "limit": {"context": 9}}).model_id == "claude-x"  # type: ignore[union-attr]


def test_the_model_is_read_from_assistant_user_and_host_shapes_alike() -> None:
    from dcp_plugin.model.refs import ModelRef, model_ref

    assert model_ref({"role": "assistant", "modelID": "m", "providerID": "p"}) == ModelRef("p", "m")
    assert model_ref({"role": "user", "model": {"providerID": "p", "modelID": "m"}}) == ModelRef("p", "m")
    assert model_ref({"id": "m", "providerID": "p", "limit": {"context": 1000}}) == ModelRef("p", "m", 1000)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dcp_plugin.model.tokens import tokens_removed, tool_state_tokens  # noqa: E402
from dcp_plugin.pipeline.fenwick import Fenwick  # noqa: E402

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=80),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["completed", "error", "running"]),
    _json,
    _json,
    st.booleans(),
    st.sampled_from(["input", "output"]),
    _json,
)
def test_tokens_removed_is_the_difference_the_whole_part_shows(status, tool_input, output, compacted, field, value):
    state = {"status": status, "input": tool_input, "output": output, "error": "boom"}
    if compacted:
        state["time"] = {"compacted": 1}
    whole = max(0, tool_state_tokens(state) - tool_state_tokens({**state, field: value}))
    assert tokens_removed(state, field, value) == whole


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(-50, 50)), max_size=60), st.integers(-3, 70))
def test_fenwick_prefix_sums_equal_a_plain_list(operations, end):
    tree, plain = Fenwick(), []
    for kind, a, b in operations:
        if kind == 0 or not plain:
            tree.append(a % 1000)
            plain.append(a % 1000)
        else:
            position = a % len(plain)
            tree.add(position, b)
            plain[position] += b
    assert tree.prefix(end) == sum(plain[: max(end, 0)])
    assert tree.total == sum(plain)


def _timed(
    messages: list[dict[str, Any]], gaps_s: list[int], after: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    clock = after[-1]["info"]["time"]["created"] if after else 1_790_000_000_000
    for message, gap in zip(messages, gaps_s, strict=True):
        clock += gap * 1000
        message["info"]["time"] = {"created": clock}
    return messages


def test_an_applied_cut_stays_written_until_the_cut_that_grows_it_is_written() -> None:
    a, b = f"{PROJECT}/a.py", f"{PROJECT}/b.py"
    blocks = diagnostics(a, "ERROR [1:1] first problem in a")
    blocks += diagnostics(b, "ERROR [2:2] a problem in b", header="other files")
    write = call("write", {"filePath": a, "content": "x = 1\n"}, output="Wrote file successfully." + blocks)
    big = call("read", {"filePath": f"{PROJECT}/big.txt"}, output="y" * 40_000)  # makes rewriting the prefix costly
    edit_a = call("edit", {"filePath": a, "oldString": "x", "newString": "z"}, output="Edit applied successfully.")
    edit_b = call("edit", {"filePath": b, "oldString": "x", "newString": "z"}, output="Edit applied successfully.")
    messages = _timed(
        [user(), write, big, user(), edit_a, user(), edit_b, user(), call("bash", {"command": "ls"}, output="ok")],
        [0, 1, 1, 1, 1, 600, 1, 1, 1],
    )
    state = SessionState(SESSION, make_config(cache={"scheduler": True}), PROJECT)
    state.update(messages)
    (first,) = state.in_force()
    (grown,) = state.waiting()
    assert first.cuts is not None and len(first.cuts) == 1  # a's block, written when the cache was cold
    assert grown.cuts is not None and len(grown.cuts) == 2 and grown.replaces is first
    # The output keeps its first cut meanwhile rather than falling back to the original.
    patches = plan(messages, state.applied)
    assert [d.value for d, _ in patches] == [first.value]
    later = _timed([user(), assistant(tool_part("bash", {"command": "pwd"}, output="ok"))], [600, 1], messages)
    state.update(messages + later)
    assert state.in_force() == [grown] and first.superseded and state.waiting() == []
    assert state.in_force_count == 1


def test_an_output_that_already_is_a_placeholder_is_never_replaced_by_another() -> None:
    long_placeholder = "[dcp: output removed earlier by a rule with a rather long explanation] " + "." * 200
    older = call("read", {"filePath": "/p/a.py"}, output=long_placeholder)
    messages = [user(), older, call("read", {"filePath": "/p/a.py"}, output=BIG)]
    out, runtime = run(messages)
    assert out[1]["parts"][0]["state"]["output"] == long_placeholder
    assert runtime.view(SESSION).in_force == ()  # type: ignore[union-attr]


STAMP = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=3)


@given(STAMP, STAMP)
def test_a_messages_time_is_its_newest_numeric_stamp(created: Any, completed: Any) -> None:
    stamps = [v for v in (created, completed) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    when = {k: v for k, v in (("created", created), ("completed", completed)) if v is not None}
    message = {"info": {"role": "user", "time": when}, "parts": []}
    assert message_time(message) == (int(max(stamps)) if stamps else 0)
