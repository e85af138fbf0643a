"""Token estimation: per-kind ratios, the prompt estimate's two paths, reported usage."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.budget import compute_thresholds
from dcp_plugin.model.tokens import (
    COMPACTED_OUTPUT_TEXT,
    ZERO,
    ContentEstimate,
    estimate_content_tokens,
    estimate_json_tokens,
    estimate_message_split,
    estimate_message_tokens,
    estimate_of,
    estimate_part_split,
    estimate_part_tokens,
    estimate_prompt_tokens,
    estimate_text_tokens,
    json_chars,
    last_reported_prompt_tokens,
    message_prompt_tokens,
    reported_usage,
)


def user(text: str) -> dict[str, Any]:
    return {"info": {"role": "user", "id": "u"}, "parts": [{"type": "text", "text": text}]}


def tool(input_: Any, output: str = "", status: str = "completed", **state: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"status": status, "input": input_}
    if status == "completed":
        s["output"] = output
    elif status == "error":
        s["error"] = output
    s.update(state)
    return {"type": "tool", "tool": "read", "callID": "c", "state": s}


def assistant(*parts: dict[str, Any], tokens: dict[str, Any] | None = None, **info: Any) -> dict[str, Any]:
    return {"info": {"role": "assistant", "id": "a", **({"tokens": tokens} if tokens else {}), **info}, "parts": list(parts)}


def test_text_is_four_characters_per_token_rounded_up() -> None:
    assert estimate_text_tokens("a" * 400) == 100
    assert estimate_text_tokens("a" * 401) == 101


def test_text_part_uses_the_text_ratio() -> None:
    assert estimate_part_tokens({"type": "text", "text": "x" * 80}) == 20


def test_reasoning_part_uses_the_text_ratio() -> None:
    assert estimate_part_tokens({"type": "reasoning", "text": "x" * 80}) == 20


def test_json_is_three_and_a_half_characters_per_token() -> None:
    assert estimate_json_tokens("y" * 700) == 200
    assert estimate_json_tokens("y" * 701) == 201
    assert json_chars({"a": 1}) == len('{"a":1}')
    assert estimate_json_tokens({"a": 1}) == 2


def test_function_call_input_counts_as_json() -> None:
    call = tool({"filePath": "/p/a.py"}, status="pending")
    assert estimate_part_tokens(call) == -(-len('{"filePath":"/p/a.py"}') * 2 // 7)


def test_a_text_output_counts_three_characters_per_token() -> None:
    call = tool({}, output="z" * 700)
    assert estimate_part_tokens(call) == 1 + 234  # "{}" is 2 chars -> 1 token; 700 / 3 rounded up


def test_a_structured_output_counts_as_json() -> None:
    call = tool({}, output={"rows": ["a" * 50]})
    assert estimate_part_tokens(call) == 1 + -(-len('{"rows":["' + "a" * 50 + '"]}') * 2 // 7)


def test_a_tool_error_counts_like_an_output() -> None:
    call = tool({}, output="e" * 35, status="error")
    assert estimate_part_tokens(call) == 1 + 12


def test_output_the_host_already_compacted_counts_as_its_placeholder() -> None:
    call = tool({}, output="z" * 10_000, time={"compacted": 123})
    assert estimate_part_tokens(call) == 1 + -(-len(COMPACTED_OUTPUT_TEXT) // 3)


def test_image_uses_the_fixed_estimate_default_1600() -> None:
    assert estimate_part_tokens({"type": "file", "mime": "image/png", "url": "data:..."}) == 1600


def test_document_uses_the_configured_media_estimate() -> None:
    part = {"type": "file", "mime": "application/pdf", "url": "file:///r.pdf"}
    assert estimate_part_tokens(part, image_tokens=900) == 900


def test_text_file_inlined_by_the_host_adds_nothing() -> None:
    assert estimate_part_tokens({"type": "file", "mime": "text/plain", "url": "file:///a.txt"}) == 0


def test_ignored_parts_are_not_sent_so_not_counted() -> None:
    assert estimate_part_tokens({"type": "text", "text": "x" * 400, "ignored": True}) == 0


def test_bookkeeping_parts_count_nothing() -> None:
    assert estimate_part_tokens({"type": "step-start"}) == 0
    assert estimate_part_tokens({"type": "step-finish", "tokens": {"input": 5}}) == 0


def test_message_and_content_totals_add_parts() -> None:
    msg = assistant({"type": "text", "text": "x" * 40}, tool({}, output="o" * 21))
    assert estimate_message_tokens(msg) == 10 + 1 + 7
    assert estimate_content_tokens([msg, user("u" * 8)]) == 18 + 2


def test_a_step_counts_at_least_the_output_it_reported_in_later_prompts() -> None:
    # 40 chars of text and a 2-char input: 11 tokens by characters; the step reported 300 output tokens.
    msg = assistant({"type": "text", "text": "x" * 40}, tool({}, output="o" * 21), tokens={"input": 5, "output": 300})
    assert message_prompt_tokens(msg) == 300 + 7


def test_a_step_reporting_less_than_its_characters_counts_its_characters() -> None:
    msg = assistant({"type": "text", "text": "x" * 400}, tokens={"input": 5, "output": 20, "reasoning": 30})
    assert message_prompt_tokens(msg) == 100


def test_a_message_without_usage_counts_its_estimate_in_later_prompts() -> None:
    msg = assistant({"type": "text", "text": "x" * 40}, tool({}, output="o" * 21))
    assert message_prompt_tokens(msg) == estimate_message_tokens(msg)


def test_main_path_adds_the_new_message_to_the_reported_prompt() -> None:
    history = [user("h" * 4_000)]
    assert estimate_prompt_tokens(history, user("n" * 400), 50_000) == 50_100


def test_first_request_path_estimates_the_whole_history() -> None:
    history = [user("h" * 4_000), assistant({"type": "text", "text": "a" * 800})]
    assert estimate_prompt_tokens(history, user("n" * 400), 0) == 1_000 + 200 + 100
    assert estimate_prompt_tokens(history, user("n" * 400), None) == 1_300


def test_new_message_may_be_a_list_or_none() -> None:
    assert estimate_prompt_tokens([], [user("a" * 40), user("b" * 40)], 7) == 27
    assert estimate_prompt_tokens([user("a" * 40)], None, 0) == 10


def test_a_large_new_message_crosses_auto() -> None:
    auto = compute_thresholds(200_000).auto  # 167,000
    last = 160_000
    assert last < auto
    assert estimate_prompt_tokens([], user("p" * 40_000), last) >= auto


def test_a_restored_session_with_a_large_history_crosses_auto_on_its_first_request() -> None:
    auto = compute_thresholds(200_000).auto
    history = [user("h" * 200_000) for _ in range(4)]  # 200,000 estimated tokens
    assert estimate_prompt_tokens(history, user("next"), 0) >= auto


def test_reported_usage_counts_input_and_both_cache_fields() -> None:
    msg = assistant(tokens={"input": 100, "output": 7, "reasoning": 3, "cache": {"read": 900, "write": 50}})
    usage = reported_usage(msg)
    assert usage is not None
    assert (usage.prompt, usage.output, usage.reasoning, usage.carried) == (1_050, 7, 3, 10)


def test_a_host_summary_message_is_not_a_usage_report() -> None:
    msg = assistant(tokens={"input": 100_000, "output": 2_000}, summary=True)
    assert reported_usage(msg) is None


def test_zero_usage_is_not_a_report() -> None:
    assert reported_usage(assistant(tokens={"input": 0, "output": 0, "cache": {"read": 0, "write": 0}})) is None


def test_last_reported_prompt_is_the_newest_step() -> None:
    msgs = [assistant(tokens={"input": 10}), user("x"), assistant(tokens={"input": 30, "cache": {"read": 5}}), user("y")]
    assert last_reported_prompt_tokens(msgs) == 35
    assert last_reported_prompt_tokens([user("x")]) is None


@given(st.text(max_size=500), st.integers(min_value=1, max_value=10**7))
def test_the_estimate_never_goes_below_the_reported_prompt(text: str, last: int) -> None:
    assert estimate_prompt_tokens([], user(text), last) >= last


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=8), _JSON, max_size=5) | st.lists(_JSON, max_size=4))
def test_json_characters_are_those_of_compact_json_dumps(value: Any) -> None:
    assert json_chars(value) == len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def test_json_characters_of_a_value_json_cannot_encode_are_those_of_its_text() -> None:
    value = {1j: "x"}
    assert json_chars(value) == len(str(value))


_PARTS = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, st.text(max_size=40)),
    st.builds(lambda text: {"type": "reasoning", "text": text}, st.text(max_size=40)),
    st.builds(lambda input_, output, status: tool(input_, output, status), _JSON, st.text(max_size=40),
              st.sampled_from(["completed", "error", "running"])),
    st.builds(lambda mime: {"type": "file", "mime": mime, "url": "data:x"}, st.sampled_from(["image/png", "text/x"])),
    st.just({"type": "step-start"}),
    st.just("not a part"),
)
# What the message estimate reads itself (text, reasoning and tool parts) in the odd shapes a host may send.
_ODD_PARTS = st.one_of(
    st.builds(lambda kind, text: {"type": kind, "text": text, "ignored": True}, st.sampled_from(["text", "tool"]), st.text(max_size=9)),
    st.builds(lambda kind, text: {"type": kind, "text": text}, st.sampled_from(["text", "reasoning"]), _JSON),
    st.builds(lambda state: {"type": "tool", "state": state}, _JSON),
    st.builds(
        lambda status, input_, value, compacted: {
            "type": "tool",
            "state": {"status": status, "input": input_, "output": value, "error": value, "time": {"compacted": compacted}},
        },
        st.sampled_from(["completed", "error", "pending", None]),
        _JSON,
        _JSON,
        _JSON,
    ),
    st.builds(lambda text: MappingProxyType({"type": "text", "text": text}), st.text(max_size=9)),
    st.builds(lambda output: MappingProxyType({"type": "tool", "state": MappingProxyType({"status": "completed", "output": output})}), st.text(max_size=9)),
)


@given(st.sampled_from(["user", "assistant", None]), st.lists(_PARTS | _ODD_PARTS, max_size=6), st.integers(0, 5000))
def test_a_message_estimate_is_the_sum_of_its_parts_estimates(role: str | None, parts: list[Any], image: int) -> None:
    message = {"info": {"role": role}, "parts": parts}
    model, incoming = ZERO, ZERO
    for part in parts:
        if isinstance(part, Mapping):
            m, i = estimate_part_split(part, image)
            model, incoming = model.plus(m), incoming.plus(i)
    expected = (model, incoming) if role == "assistant" else (ZERO, model.plus(incoming))
    assert estimate_message_split(message, image) == expected


@given(st.sampled_from(["user", "assistant", None]), st.lists(_PARTS | _ODD_PARTS, max_size=6), st.integers(0, 5000))
def test_a_message_estimate_told_its_role_is_the_estimate_that_reads_it(
    role: str | None, parts: list[Any], image: int
) -> None:
    message = {"info": {"role": role}, "parts": parts}
    assert estimate_message_split(message, image, role == "assistant") == estimate_message_split(message, image)


_COUNT = st.one_of(st.none(), st.integers(-5, 10**6), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3))


@given(st.fixed_dictionaries({}, optional={
    "input": _COUNT, "output": _COUNT, "reasoning": _COUNT,
    "cache": st.fixed_dictionaries({}, optional={"read": _COUNT, "write": _COUNT}),
}))
def test_reported_usage_counts_only_positive_whole_numbers(tokens: dict[str, Any]) -> None:
    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    cache = tokens.get("cache") or {}
    prompt = count(tokens.get("input")) + count(cache.get("read")) + count(cache.get("write"))
    expected = (prompt, count(tokens.get("output")), count(tokens.get("reasoning"))) if prompt > 0 else None
    assert reported_usage({"info": {"role": "assistant", "tokens": tokens}}) == expected


@given(st.integers(), st.integers(), st.integers())
def test_an_estimate_built_from_its_values_is_the_named_estimate(text: int, json_: int, media: int) -> None:
    built = estimate_of((text, json_, media))
    assert type(built) is ContentEstimate
    assert built == ContentEstimate(text, json_, media)
    assert (built.text, built.json, built.media, built.total) == (text, json_, media, text + json_ + media)
