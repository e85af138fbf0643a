"""Provider formats over generated conversations: validity, identity, kinds, and the same decisions as OpenCode's shape."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcp_plugin.adapters.formats import FORMATS as FORMATS_BY_NAME
from dcp_plugin.adapters.formats import Pruner, validate
from dcp_plugin.adapters.formats import anthropic as anthropic_format
from dcp_plugin.adapters.formats import openai_chat as chat_format
from dcp_plugin.adapters.formats import openai_responses as responses_format
from dcp_plugin.adapters.formats.kinds import kind_changes
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.strategies import REGISTRY
from tests.support import format_scenarios as sc
from tests.support.helpers import hook_transform, make_config

pytestmark = pytest.mark.slow  # generated histories through whole runtimes, in every format

AGGRESSIVE = make_config(strategies={"supersedeWrites": {"enabled": True}, "purgeErrors": {"turns": 1}})
NOTHING = make_config(strategies={spec.name: {"enabled": False} for spec in REGISTRY})
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Format:
    """How a test drives one format: render, prune, validate, classify."""

    def __init__(
        self,
        name: str,
        render: Callable[[sc.Conversation], list[Any]],
        validator: Callable[[list[Any]], list[str]],
        classify: Callable[[list[Any]], list[Any]],
        errors: bool,
    ) -> None:
        self.name = name
        self.render = render
        self.validator = validator
        self.classify = classify
        self.errors = errors  # whether the format can say a call failed

    def prune(self, pruner: Pruner, items: list[Any], session: str) -> list[Any]:
        if self.name == "anthropic":
            return pruner.anthropic(items, session_id=session, system=sc.SYSTEM)
        if self.name == "langchain":
            return pruner.prune(FORMATS_BY_NAME["langchain"], items, session_id=session)
        return getattr(pruner, self.name)(items, session_id=session)


def _langchain_valid(messages: list[Any]) -> list[str]:
    """LangChain's own conversion to Chat Completions, checked by that format's validator."""
    from langchain_core.messages import convert_to_openai_messages

    converted = convert_to_openai_messages(messages)
    for message in converted:
        # LangChain carries images in tool results to the providers that take them (Anthropic's
        # tool_result); the Chat Completions rules do not allow them there, so they are left out.
        if message["role"] == "tool" and isinstance(message["content"], list):
            message["content"] = [p for p in message["content"] if p.get("type") == "text"] or ""
    return validate.openai_chat(converted)


FORMATS = [
    Format("openai_chat", sc.openai_chat, validate.openai_chat, chat_format.classify, errors=False),
    Format("openai_responses", sc.openai_responses, validate.openai_responses, responses_format.classify, errors=False),
    Format("anthropic", sc.anthropic, validate.anthropic, anthropic_format.classify, errors=True),
]
try:
    import langchain_core  # noqa: F401

    from dcp_plugin.adapters.formats import langchain_messages

    FORMATS.append(Format("langchain", sc.langchain, _langchain_valid, langchain_messages.classify, errors=True))
except ImportError:  # the langchain extra is optional; its own tests say they were skipped
    pass
formats = pytest.mark.parametrize("fmt", FORMATS, ids=[f.name for f in FORMATS])


def pruner(config: DcpConfig) -> Pruner:
    return Pruner(Runtime("/proj", config))


def decisions(runtime: Runtime, session: str) -> set[tuple[str, str, str]]:
    view = runtime.view(session)
    assert view is not None
    return {(d.call_id, d.strategy, d.field) for d in view.in_force}


@formats
@SETTINGS
@given(conversation=sc.conversations())
def test_rendered_conversations_are_valid_for_the_provider(fmt: Format, conversation: sc.Conversation) -> None:
    assert fmt.validator(fmt.render(conversation)) == []


@formats
@SETTINGS
@given(conversation=sc.conversations())
def test_round_trip_is_identity_when_nothing_is_pruned(fmt: Format, conversation: sc.Conversation) -> None:
    items = fmt.render(conversation)
    out = fmt.prune(pruner(NOTHING), items, "s")
    assert out == items
    assert all(a is b for a, b in zip(out, items, strict=True))


@formats
@SETTINGS
@given(conversation=sc.conversations())
def test_pruned_requests_stay_valid_and_keep_order_ids_and_kinds(fmt: Format, conversation: sc.Conversation) -> None:
    items = fmt.render(conversation)
    pristine = copy.deepcopy(items)
    out = fmt.prune(pruner(AGGRESSIVE), items, "s")
    assert items == pristine, "the caller's list was modified"
    assert fmt.validator(out) == []
    assert len(out) == len(items)
    for before, after in zip(items, out, strict=True):
        if isinstance(before, dict):
            assert before.get("role") == after.get("role") and before.get("type") == after.get("type")
            assert _ids(before) == _ids(after)
        else:
            assert type(before) is type(after) and before.id == after.id
            assert [c["id"] for c in getattr(before, "tool_calls", [])] == [c["id"] for c in getattr(after, "tool_calls", [])]
    assert kind_changes(fmt.classify(items), fmt.classify(out)) == []


def _ids(item: dict[str, Any]) -> list[Any]:
    """Every id an item carries, in order (tool call ids, result ids, item ids)."""
    found = [item.get(k) for k in ("id", "call_id", "tool_call_id") if k in item]
    for call in item.get("tool_calls") or ():
        found.append(call["id"])
    content = item.get("content")
    for block in content if isinstance(content, list) else ():
        found.extend(block.get(k) for k in ("id", "tool_use_id") if k in block)
    return found


@formats
@SETTINGS
@given(conversation=sc.conversations())
def test_pruning_through_the_format_decides_like_opencode_shape(fmt: Format, conversation: sc.Conversation) -> None:
    through_format = pruner(AGGRESSIVE)
    reference = Runtime("/proj", AGGRESSIVE)
    for request in sc.requests(conversation):
        fmt.prune(through_format, fmt.render(request), "s")
        hook_transform(reference, {"sessionID": "ref"}, {"messages": sc.opencode(request, "ref", errors=fmt.errors)})
    if not sc.requests(conversation):
        return
    assert decisions(through_format.runtime, "s") == decisions(reference, "ref")
    assert through_format.runtime.view("s").restarts == 0  # type: ignore[union-attr]


@SETTINGS
@given(conversation=sc.conversations(), data=st.data())
def test_anthropic_cache_breakpoints_and_thinking_blocks_stay_where_they_were(
    conversation: sc.Conversation, data: st.DataObject
) -> None:
    messages = sc.anthropic(conversation)
    spots = [
        (m, b, n)
        for m, message in enumerate(messages)
        for b, block in enumerate(message["content"])
        if block["type"] not in ("thinking", "redacted_thinking")
        for n in ([None] + (list(range(len(block["content"]))) if isinstance(block.get("content"), list) else []))
    ]
    for m, b, n in data.draw(st.lists(st.sampled_from(spots), max_size=4, unique=True)):
        block = messages[m]["content"][b]
        (block if n is None else block["content"][n])["cache_control"] = {"type": "ephemeral"}
    out = pruner(AGGRESSIVE).anthropic(messages, session_id="s", system=sc.SYSTEM)
    assert validate.anthropic(out) == []
    assert _breakpoints(out) == _breakpoints(messages)
    for before, after in zip(messages, out, strict=True):
        for old, new in zip(before["content"], after["content"], strict=True):
            if old["type"] in ("thinking", "redacted_thinking"):
                assert new is old


def _breakpoints(messages: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(message, block, breakpoints inside the block) for every block that holds one."""
    out = []
    for m, message in enumerate(messages):
        for b, block in enumerate(message["content"]):
            inner = block.get("content") if isinstance(block.get("content"), list) else []
            count = ("cache_control" in block) + sum("cache_control" in x for x in inner)
            if count:
                out.append((m, b, count))
    return out


@formats
@SETTINGS
@given(conversation=sc.conversations())
def test_a_list_the_host_appends_to_gets_the_same_requests_as_fresh_lists(fmt: Format, conversation: sc.Conversation) -> None:
    appended = pruner(AGGRESSIVE)
    fresh = pruner(AGGRESSIVE)
    held: list[Any] = []  # one list object, grown in place like a host's history
    for request in sc.requests(conversation):
        rendered = fmt.render(request)
        held.extend(rendered[len(held):])
        assert fmt.prune(appended, held, "s") == fmt.prune(fresh, fmt.render(request), "s")


@SETTINGS
@given(conversation=sc.conversations())
def test_pruning_opencode_messages_keeps_kinds(conversation: sc.Conversation) -> None:
    from dcp_plugin.adapters.formats import opencode

    messages = sc.opencode(conversation)
    pruned = copy.deepcopy(messages)
    hook_transform(Runtime("/proj", AGGRESSIVE), {}, {"messages": pruned})
    assert kind_changes(opencode.classify(messages), opencode.classify(pruned)) == []
