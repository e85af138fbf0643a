"""The provider adapters on hand-written requests: media markers, ids, unknown items, fail-open, commands."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dcp_plugin.adapters.formats import Kind, Pruner, validate
from dcp_plugin.adapters.formats import anthropic as anthropic_format
from dcp_plugin.adapters.formats import openai_chat as chat_format
from dcp_plugin.adapters.formats import openai_responses as responses_format
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.placeholders import DUPLICATE_PLACEHOLDER
from tests.support.helpers import make_config, named

BIG = "line\n" * 200
PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def make_pruner(config: DcpConfig | None = None) -> Pruner:
    return Pruner(Runtime("/proj", config or make_config()))


def chat_read(call_id: str, path: str = "/proj/a.py", output: str = BIG) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": json.dumps({"filePath": path})}}
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def anthropic_read(call_id: str, result_content: Any = BIG) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "read", "input": {"filePath": "/proj/a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result_content}]},
    ]


def test_openai_chat_duplicate_read_becomes_a_placeholder_in_a_new_tool_message() -> None:
    messages = [{"role": "user", "content": "read a twice"}, *chat_read("c1"), *chat_read("c2")]
    pristine = copy.deepcopy(messages)
    out = make_pruner().openai_chat(messages, session_id="s")
    assert messages == pristine
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": named(DUPLICATE_PLACEHOLDER, "c1")}
    assert out[2] is not messages[2] and out[4] is messages[4]


def test_repeated_call_ids_pair_each_result_with_its_own_call() -> None:
    # Some servers number calls per step ("call_0" every time); each result answers the call just before it.
    messages = [{"role": "user", "content": "go"}, *chat_read("call_0"), *chat_read("call_0", "/proj/b.py", "b" * 400),
                *chat_read("call_0")]
    view = make_pruner().view("openai_chat", messages)
    outputs = [p["state"]["output"] for m in view.messages for p in m["parts"] if p["type"] == "tool"]
    assert outputs == [BIG, "b" * 400, BIG]
    out = make_pruner().openai_chat(messages, session_id="s")
    # The view names a repeated call id by its repetition ("call_0#1"); the first is "call_0".
    assert out[2]["content"] == named(DUPLICATE_PLACEHOLDER, "call_0") and out[4] is messages[4] and out[6] is messages[6]


def test_a_pruned_anthropic_result_with_an_image_leaves_a_typed_marker_and_counts_it() -> None:
    with_image = [{"type": "text", "text": BIG}, {"type": "image", "source": PNG}]
    messages = [{"role": "user", "content": "look"}, *anthropic_read("toolu_1", with_image), *anthropic_read("toolu_2")]
    pruner = make_pruner(make_config(**{"contextBudget": {"imageTokenEstimate": 1234}}))
    out = pruner.anthropic(messages, session_id="s")
    assert out[2]["content"][0]["content"] == [
        {"type": "text", "text": named(DUPLICATE_PLACEHOLDER, "toolu_1")},
        {"type": "text", "text": "[image removed: image/png]"},
    ]
    kinds = [t.kind for t in anthropic_format.classify(out) if t.path[:2] == (2, 0)]
    assert kinds == [Kind.PLACEHOLDER_DUPLICATE, Kind.IMAGE_REMOVED]
    assert pruner.media_removed("s").count == 1 and pruner.media_removed("s").tokens == 1234


def test_a_cache_breakpoint_inside_a_pruned_result_moves_to_its_last_block() -> None:
    content = [{"type": "text", "text": BIG, "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": "x"}, *anthropic_read("toolu_1", content), *anthropic_read("toolu_2")]
    out = make_pruner().anthropic(messages, session_id="s")
    assert out[2]["content"][0]["content"] == [
        {"type": "text", "text": named(DUPLICATE_PLACEHOLDER, "toolu_1"), "cache_control": {"type": "ephemeral"}}
    ]


def test_an_anthropic_error_is_purged_like_an_opencode_error() -> None:
    failed = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_e", "name": "bash",
                                           "input": {"command": "x" * 500, "workdir": "/proj"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_e", "is_error": True, "content": "denied"}]},
    ]
    later = [m for t in range(3) for m in ({"role": "assistant", "content": f"ok {t}"}, {"role": "user", "content": f"next {t}"})]
    messages = [{"role": "user", "content": "write x"}, *failed, *later]
    config = make_config(**{"strategies": {"purgeErrors": {"turns": 2}}})
    out = make_pruner(config).anthropic(messages, session_id="s")
    assert out[1]["content"][0]["input"]["command"].startswith("[dcp: input removed")
    assert out[1]["content"][0]["input"]["workdir"] == "/proj"
    assert out[2] is messages[2]


def test_responses_function_call_output_is_pruned_and_reasoning_is_untouched() -> None:
    def step(n: int) -> list[dict[str, Any]]:
        return [
            {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": "gAAA"},
            {"type": "function_call", "call_id": f"call_{n}", "name": "read", "arguments": '{"filePath": "/a"}'},
            {"type": "function_call_output", "call_id": f"call_{n}", "output": BIG},
        ]

    items = [{"role": "user", "content": "hi"}, *step(1), *step(2)]
    out = make_pruner().openai_responses(items, session_id="s")
    assert out[3] == {"type": "function_call_output", "call_id": "call_1", "output": named(DUPLICATE_PLACEHOLDER, "call_1")}
    assert [a is b for a, b in zip(items, out, strict=False)] == [True, True, True, False, True, True, True]
    assert validate.openai_responses(out) == []


def test_unknown_items_pass_through_and_are_classified_unknown() -> None:
    items = [{"role": "user", "content": "search"}, {"type": "web_search_call", "id": "ws_1", "status": "completed"},
             {"type": "item_reference", "id": "msg_9"}, 7]
    out = make_pruner().openai_responses(items, session_id="s")
    assert all(a is b for a, b in zip(items, out, strict=False))
    assert [t.kind for t in responses_format.classify(items)][1:] == [Kind.UNKNOWN] * 3


def test_sdk_objects_are_read_and_only_rebuilt_ones_become_dicts() -> None:
    class Function(BaseModel):
        name: str
        arguments: str

    class ToolCall(BaseModel):
        id: str
        type: str = "function"
        function: Function

    class AssistantMessage(BaseModel):
        role: str = "assistant"
        content: str | None = None
        tool_calls: list[ToolCall]

    def sdk_step(call_id: str) -> list[Any]:
        call = ToolCall(id=call_id, function=Function(name="read", arguments='{"filePath": "/a"}'))
        return [AssistantMessage(tool_calls=[call]), {"role": "tool", "tool_call_id": call_id, "content": BIG}]

    messages = [{"role": "user", "content": "x"}, *sdk_step("c1"), *sdk_step("c2")]
    out = make_pruner().openai_chat(messages, session_id="s")
    assert out[1] is messages[1] and out[2]["content"] == named(DUPLICATE_PLACEHOLDER, "c1")


def test_arguments_that_are_not_a_json_object_are_never_rewritten() -> None:
    bad = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "write", "arguments": "not json " + "x" * 300}}]}
    edit = chat_format.rebuild(bad, [_input_edit(0, {"arguments": "[dcp: input removed]"})])
    assert edit["tool_calls"][0]["function"]["arguments"] == bad["tool_calls"][0]["function"]["arguments"]


def _input_edit(position: int, value: Any) -> Any:
    from dcp_plugin.adapters.formats.view import ItemEdit, Site

    return ItemEdit(position, "input", value, Site((0, position)), True)


def test_a_failure_inside_the_plugin_returns_the_callers_list(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    pruner = make_pruner()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(pruner.runtime, "prepare", broken)
    messages = [{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")]
    with caplog.at_level(logging.ERROR, logger="dcp_plugin"):
        assert pruner.openai_chat(messages, session_id="s") is messages
    assert "sent unchanged" in caplog.text


def test_malformed_lists_are_returned_as_they_are() -> None:
    pruner = make_pruner()
    for junk in ([], [None, 3, "x"], [{"role": "tool"}], [{"role": "assistant", "tool_calls": "nope"}]):
        assert pruner.openai_chat(junk, session_id="s") == junk
        assert pruner.anthropic(junk, session_id="s") == junk
        assert pruner.openai_responses(junk, session_id="s") == junk


def test_a_disabled_plugin_returns_the_list_untouched() -> None:
    messages = [{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")]
    assert make_pruner(DcpConfig(enabled=False)).openai_chat(messages, session_id="s") is messages


def test_an_undone_tail_is_detected_as_a_rewritten_history() -> None:
    pruner = make_pruner()
    first = [{"role": "user", "content": "x"}, *chat_read("c1"), {"role": "user", "content": "more"}, *chat_read("c2")]
    pruner.openai_chat(first, session_id="s")
    pruner.openai_chat([*first, {"role": "user", "content": "again"}], session_id="s")
    assert pruner.runtime.view("s").restarts == 0  # type: ignore[union-attr]
    undone = [*first[:3], {"role": "user", "content": "something else"}, *chat_read("c3", "/proj/b.py")]
    out = pruner.openai_chat(undone, session_id="s")
    assert pruner.runtime.view("s").restarts == 1  # type: ignore[union-attr]
    assert out[2] is undone[2]  # c1 is no longer duplicated by anything


def test_commands_answer_over_the_same_runtime() -> None:
    pruner = make_pruner()
    messages = [{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")]
    pruner.openai_chat(messages, session_id="s")
    text = pruner.command("context", session_id="s", messages=messages)
    assert text is not None and "1 pruned" in text
    assert pruner.command("stats", session_id="s") is not None


def test_a_command_given_the_history_as_a_tuple_continues_the_session() -> None:
    pruner = make_pruner()
    messages = [{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")]
    pruner.openai_chat(messages, session_id="s")
    text = pruner.command("context", session_id="s", messages=tuple(messages))
    assert text is not None and "1 pruned" in text
    assert pruner.runtime.view("s").restarts == 0  # type: ignore[union-attr]


def test_validators_report_an_unanswered_call_in_every_format() -> None:
    chat = [{"role": "user", "content": "x"}, chat_read("c1")[0], {"role": "user", "content": "y"}]
    assert any("not answered" in p for p in validate.openai_chat(chat))
    responses = [{"role": "user", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "r", "arguments": "{}"}]
    assert any("no tool output" in p for p in validate.openai_responses(responses))
    anth = [{"role": "user", "content": "x"}, anthropic_read("toolu_1")[0], {"role": "user", "content": "y"}]
    assert any("no tool_result" in p for p in validate.anthropic(anth))


def test_anthropic_validator_requires_tool_results_first() -> None:
    messages = [{"role": "user", "content": "x"}, anthropic_read("toolu_1")[0],
                {"role": "user", "content": [{"type": "text", "text": "note"},
                                             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]
    assert any("must come first" in p for p in validate.anthropic(messages))


def test_anthropic_validator_limits_cache_breakpoints_to_four() -> None:
    blocks = [{"type": "text", "text": f"t{n}", "cache_control": {"type": "ephemeral"}} for n in range(5)]
    assert any("breakpoints" in p for p in validate.anthropic([{"role": "user", "content": blocks}]))


def test_responses_validator_requires_reasoning_to_be_followed_by_its_item() -> None:
    items = [{"role": "user", "content": "x"}, {"type": "reasoning", "id": "rs", "summary": []},
             {"role": "user", "content": "y"}]
    assert any("reasoning" in p for p in validate.openai_responses(items))


def test_chat_validator_rejects_a_tool_message_that_answers_nothing() -> None:
    assert any("answers no preceding" in p for p in validate.openai_chat(
        [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "zz", "content": "o"}]))


def test_a_new_anthropic_system_prompt_reads_the_conversation_anew_with_the_same_result() -> None:
    pruner = make_pruner()
    messages = [{"role": "user", "content": "x"}, *anthropic_read("toolu_1"), *anthropic_read("toolu_2")]
    first = pruner.anthropic(messages, session_id="s", system="be brief")
    second = pruner.anthropic(messages, session_id="s", system=[{"type": "text", "text": "be thorough"}])
    assert first == second and second[2]["content"][0]["content"] == named(DUPLICATE_PLACEHOLDER, "toolu_1")


def test_a_host_changing_a_returned_item_cannot_change_the_plugins_decision() -> None:
    pruner = make_pruner(make_config(**{"strategies": {"supersedeWrites": {"enabled": True}}}))
    write = [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_w", "name": "write",
                                                "input": {"filePath": "/proj/a.py", "content": "x" * 500}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_w", "content": "ok"}]}]
    messages = [{"role": "user", "content": "x"}, *write, *anthropic_read("toolu_r")]
    out = pruner.anthropic(messages, session_id="s")
    out[1]["content"][0]["input"]["content"] = "host scribbled here"
    (decision,) = pruner.runtime.view("s").in_force  # type: ignore[union-attr]
    assert decision.value["content"].startswith("[dcp: content removed")


def anthropic_session() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "read a twice"}, *anthropic_read("toolu_1"), *anthropic_read("toolu_2")]


def test_a_command_reads_a_session_in_the_format_and_with_the_model_it_was_pruned_with() -> None:
    pruner = make_pruner()
    messages = anthropic_session()
    pruner.anthropic(messages, session_id="s", model="claude-sonnet-4-5")
    text = pruner.command("context", session_id="s", messages=messages)
    assert text is not None
    assert "1 pruned" in text and "waiting" not in text  # the prune that was sent shows as written
    assert "of 200,000 tokens, limit from exact" in text  # claude-sonnet-4-5's window, not the 128,000 default


def test_a_command_for_messages_of_an_unknown_session_asks_for_their_format() -> None:
    text = make_pruner().command("context", session_id="new", messages=anthropic_session())
    assert text is not None and "format='openai_chat' | 'openai_responses' | 'anthropic'" in text


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_pruner_and_the_pluggy_plugin_leave_nothing_behind_for_a_user_without_opencode(isolated_home: Path) -> None:
    from dcp_plugin.adapters.formats import Pruner as DefaultPruner
    from dcp_plugin.adapters.pluggy_host import DcpPlugin

    messages = [{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")]
    pruner = DefaultPruner(directory=str(isolated_home))
    pruner.openai_chat(messages, session_id="s")
    pruner.runtime.flush()
    plugin = DcpPlugin()
    plugin.host_startup({"directory": str(isolated_home)})
    plugin.runtime.flush()
    assert _files_under(isolated_home) == []


def test_pruner_keeps_statistics_where_the_opencode_plugin_keeps_them(isolated_home: Path) -> None:
    from dcp_plugin.adapters.formats import Pruner as DefaultPruner
    from dcp_plugin.store import data_dir

    data_dir().mkdir(parents=True)
    pruner = DefaultPruner(directory=str(isolated_home))
    pruner.openai_chat([{"role": "user", "content": "x"}, *chat_read("c1"), *chat_read("c2")], session_id="s")
    pruner.runtime.flush()
    session, _ = pruner.runtime.stored_stats("s")
    assert session is not None and session.requests == 1
