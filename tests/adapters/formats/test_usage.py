"""The provider's usage from responses: the Pruner and the LangChain middleware anchor the context figure on it."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

import pytest

from dcp_plugin.adapters.formats import Pruner
from dcp_plugin.adapters.formats.usage import usage_tokens
from dcp_plugin.host.runtime import Runtime
from tests.support.helpers import make_config

BIG = "a line of a file, long enough to be worth pruning\n" * 60


def test_openai_chat_usage_counts_cached_tokens_as_cache_reads() -> None:
    usage = {"prompt_tokens": 1_000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 600},
             "completion_tokens_details": {"reasoning_tokens": 20}}
    assert usage_tokens(usage) == {"input": 400, "output": 30, "reasoning": 20, "cache": {"read": 600, "write": 0}}


def test_openai_responses_usage_from_an_sdk_object() -> None:
    usage = SimpleNamespace(input_tokens=900, output_tokens=40, input_tokens_details=SimpleNamespace(cached_tokens=100),
                            output_tokens_details=SimpleNamespace(reasoning_tokens=0))
    assert usage_tokens(SimpleNamespace(usage=usage)) == {"input": 800, "output": 40, "reasoning": 0, "cache": {"read": 100, "write": 0}}


def test_anthropic_usage_adds_its_cache_counts_to_the_uncached_input() -> None:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 300, "output_tokens": 5}
    assert usage_tokens(usage) == {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 700, "write": 300}}


def test_langchain_usage_metadata_holds_cache_details_inside_input_tokens() -> None:
    usage = {"input_tokens": 1_000, "output_tokens": 10, "total_tokens": 1_010,
             "input_token_details": {"cache_read": 200, "cache_creation": 300}, "output_token_details": {"reasoning": 4}}
    assert usage_tokens(usage) == {"input": 500, "output": 6, "reasoning": 4, "cache": {"read": 200, "write": 300}}


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": 0}, SimpleNamespace(), {"input_tokens": "many"}])
def test_no_usable_count_is_no_usage(usage: Any) -> None:
    assert usage_tokens(usage) is None


def chat_read(call_id: str) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": json.dumps({"filePath": "/proj/a.py"})}}
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": BIG},
    ]


def system_row(text: str) -> str:
    return next(line.split()[1] for line in text.splitlines() if line.strip().startswith("System"))


def total(text: str) -> int:
    (found,) = re.findall(r"Context now: ~([\d,]+) tokens", text)
    return int(found.replace(",", ""))


def test_the_pruner_takes_the_previous_responses_usage_and_shows_a_system_row() -> None:
    pruner = Pruner(Runtime("/proj", make_config()))
    messages: list[Any] = [{"role": "user", "content": "read a twice"}, *chat_read("c1")]
    pruner.openai_chat(messages, session_id="s", model="gpt-4o")
    messages += chat_read("c2")  # the response to that request, then its tool result
    response = {"usage": {"prompt_tokens": 5_000, "completion_tokens": 30}}
    pruner.openai_chat(messages, session_id="s", model="gpt-4o", usage=response)
    text = pruner.command("context", session_id="s")
    assert text is not None
    assert system_row(text) != "?"
    assert "the provider's count for the last request (5,000)" in text
    assert total(text) > 5_000 - len(BIG)  # anchored on it, less the duplicate read pruned since


def test_without_usage_the_pruner_still_says_it_has_none() -> None:
    pruner = Pruner(Runtime("/proj", make_config()))
    messages = [{"role": "user", "content": "read a twice"}, *chat_read("c1"), *chat_read("c2")]
    pruner.openai_chat(messages, session_id="s")
    text = pruner.command("context", session_id="s")
    assert text is not None and system_row(text) == "?"


def test_a_command_counts_the_hosts_messages_not_the_views() -> None:
    pruner = Pruner(Runtime("/proj", make_config()))
    messages = [{"role": "user", "content": "read a twice"}, *chat_read("c1"), *chat_read("c2")]
    pruner.openai_chat(messages, session_id="s")
    text = pruner.command("context", session_id="s", messages=messages)
    assert text is not None and text.splitlines()[0].endswith(": 5 messages")


def test_langchain_messages_carry_their_usage_and_are_counted_as_the_host_counts_them() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages: list[Any] = [HumanMessage("read the files")]
    prompt = 2_000
    for n in range(4):
        call_id = f"c{n}"
        messages.append(AIMessage("", tool_calls=[{"id": call_id, "name": "read", "args": {"filePath": "/proj/a.py"}}],
                                  usage_metadata={"input_tokens": prompt, "output_tokens": 20, "total_tokens": prompt + 20}))
        messages.append(ToolMessage(BIG, tool_call_id=call_id))
        prompt += 500
    messages.append(AIMessage("done", usage_metadata={"input_tokens": prompt, "output_tokens": 5, "total_tokens": prompt + 5}))
    assert len(messages) == 10
    pruner = Pruner(Runtime("/proj", make_config()))
    text = pruner.command("context", session_id="lc", messages=messages, format="langchain")
    assert text is not None
    assert text.splitlines()[0].endswith(": 10 messages")
    assert system_row(text) != "?"
    assert f"the provider's count for the last request ({prompt:,})" in text
