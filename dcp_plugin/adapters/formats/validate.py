"""Validators of provider requests, written from the providers' documented rules; each returns its problems.

An empty list means the provider would accept the conversation as far as these rules go.
The rules checked are the ones a pruning step could break: the shape of every item, every
tool call answered (and every answer matching a call) in the place the provider requires,
ids, thinking blocks and cache breakpoints.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from dcp_plugin.adapters.formats.items import as_dict

_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")


def _objects(items: Sequence[Any], name: str, problems: list[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(index, where, item) of each item that is an object; the others are reported."""
    for index, raw in enumerate(items):
        where = f"{name}[{index}]"
        item = as_dict(raw)
        if item is None:
            problems.append(f"{where}: not an object")
        else:
            yield index, where, item


def openai_chat(messages: Sequence[Any]) -> list[str]:
    """Problems of a Chat Completions ``messages`` list.

    Rules (OpenAI's API reference and its error messages): every message has a known role;
    system, developer and tool content is a string or text parts, user content adds image,
    audio and file parts, assistant content may be null only with ``tool_calls``; a tool call
    has a string ``id``, a ``function`` with a ``name`` and string ``arguments``; "an assistant
    message with 'tool_calls' must be followed by tool messages responding to each
    'tool_call_id'", and "messages with role 'tool' must be a response to a preceding message
    with 'tool_calls'".
    """
    problems: list[str] = []
    if not isinstance(messages, list) or not messages:
        return ["messages: must be a non-empty array"]
    waiting: set[str] = set()
    answered: set[str] = set()
    for _, where, message in _objects(messages, "messages", problems):
        role = message.get("role")
        if role != "tool" and waiting:
            problems.append(f"{where}: tool calls {sorted(waiting)} were not answered before this message")
            waiting = set()
        content = message.get("content")
        if role in ("system", "developer"):
            problems += _chat_parts(where, content, ("text",))
        elif role == "user":
            problems += _chat_parts(where, content, ("text", "image_url", "input_audio", "file"))
        elif role == "assistant":
            calls = message.get("tool_calls")
            if content is None and not calls and message.get("refusal") is None:
                problems.append(f"{where}: assistant content is null without tool_calls")
            elif content is not None:
                problems += _chat_parts(where, content, ("text", "refusal"))
            if calls is not None:
                ids = _chat_calls(where, calls, problems)
                waiting = set(ids)
                answered = set()
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                problems.append(f"{where}: tool message without a string tool_call_id")
            elif call_id not in waiting:
                again = " (answered twice)" if call_id in answered else ""
                problems.append(f"{where}: tool message {call_id!r} answers no preceding tool call{again}")
            else:
                waiting.discard(call_id)
                answered.add(call_id)
            problems += _chat_parts(where, content, ("text",))
        else:
            problems.append(f"{where}: unknown role {role!r}")
    if waiting:
        problems.append(f"messages: tool calls {sorted(waiting)} were never answered")
    return problems


def _chat_parts(where: str, content: Any, allowed: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        return []
    if not isinstance(content, list) or not content:
        return [f"{where}.content: must be a string or a non-empty array of parts"]
    problems = []
    for position, raw in enumerate(content):
        part = as_dict(raw) or {}
        kind = part.get("type")
        if kind not in allowed:
            problems.append(f"{where}.content[{position}]: part type {kind!r} is not allowed here")
        elif kind == "text" and not isinstance(part.get("text"), str):
            problems.append(f"{where}.content[{position}]: text part without a string text")
    return problems


def _chat_calls(where: str, calls: Any, problems: list[str]) -> list[str]:
    if not isinstance(calls, list) or not calls:
        problems.append(f"{where}.tool_calls: must be a non-empty array")
        return []
    ids: list[str] = []
    for position, raw in enumerate(calls):
        call = as_dict(raw) or {}
        here = f"{where}.tool_calls[{position}]"
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            problems.append(f"{here}: missing id")
            continue
        if call_id in ids:
            problems.append(f"{here}: id {call_id!r} repeated in one message")
        ids.append(call_id)
        if call.get("type", "function") == "function":
            function = call.get("function")
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                problems.append(f"{here}: function without a name")
            elif not isinstance(function.get("arguments"), str):
                problems.append(f"{here}: function arguments must be a JSON string")
        elif call.get("type") == "custom":
            custom = call.get("custom")
            if not isinstance(custom, dict) or not isinstance(custom.get("input"), str):
                problems.append(f"{here}: custom tool call without a string input")
        else:
            problems.append(f"{here}: unknown tool call type {call.get('type')!r}")
    return ids


_RESPONSES_INPUT_PARTS = ("input_text", "input_image", "input_file", "input_audio")
_RESPONSES_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_MODEL_SIDE = ("reasoning", "function_call", "custom_tool_call")


def openai_responses(items: Sequence[Any]) -> list[str]:
    """Problems of a Responses ``input`` list.

    Rules (OpenAI's API reference and its error messages): a message has a role and content
    of the parts its role allows; a ``function_call`` has ``call_id``, ``name`` and string
    ``arguments`` and needs exactly one later output with its ``call_id`` ("No tool output
    found for function call ..."); an output needs an earlier call; an output is a string
    or input parts; a ``reasoning`` item has a ``summary`` array and must be followed by the
    model item it belongs to ("Item of type 'reasoning' was provided without its required
    following item").
    """
    problems: list[str] = []
    if not isinstance(items, list) or not items:
        return ["input: must be a non-empty array"]
    calls: dict[str, tuple[str, int]] = {}
    outputs: dict[str, int] = {}
    for index, where, item in _objects(items, "input", problems):
        kind = item.get("type", "message")
        if kind == "message":
            problems += _responses_message(where, item)
        elif kind in _RESPONSES_CALLS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                problems.append(f"{where}: {kind} without a call_id")
                continue
            if call_id in calls:
                problems.append(f"{where}: call_id {call_id!r} used by two calls")
            calls[call_id] = (kind, index)
            field = "arguments" if kind == "function_call" else "input"
            if not isinstance(item.get("name"), str) or not isinstance(item.get(field), str):
                problems.append(f"{where}: {kind} needs a name and a string {field}")
        elif kind in _RESPONSES_CALLS.values():
            call_id = item.get("call_id")
            call = calls.get(call_id) if isinstance(call_id, str) else None
            if call is None or _RESPONSES_CALLS[call[0]] != kind:
                problems.append(f"{where}: {kind} {call_id!r} answers no earlier call")
            elif call_id in outputs:
                problems.append(f"{where}: call {call_id!r} answered twice")
            else:
                outputs[call_id] = index  # type: ignore[index]
            problems += _responses_output(where, item.get("output"))
        elif kind == "reasoning":
            if not isinstance(item.get("summary"), list):
                problems.append(f"{where}: reasoning without a summary array")
            following = as_dict(items[index + 1]) if index + 1 < len(items) else None
            if following is None or not (
                following.get("type") in _MODEL_SIDE
                or (following.get("type", "message") == "message" and following.get("role") == "assistant")
            ):
                problems.append(f"{where}: reasoning is not followed by the model item it belongs to")
    for call_id, (kind, index) in calls.items():
        if call_id not in outputs:
            problems.append(f"input[{index}]: no tool output found for {kind} {call_id!r}")
    return problems


def _responses_message(where: str, item: dict[str, Any]) -> list[str]:
    role = item.get("role")
    content = item.get("content")
    if role not in ("user", "system", "developer", "assistant"):
        return [f"{where}: message role {role!r} is not allowed"]
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        return [f"{where}.content: must be a string or an array of parts"]
    allowed = ("output_text", "refusal") if role == "assistant" else _RESPONSES_INPUT_PARTS
    problems = []
    for position, raw in enumerate(content):
        part = as_dict(raw) or {}
        if part.get("type") not in allowed:
            problems.append(f"{where}.content[{position}]: part type {part.get('type')!r} is not allowed for {role}")
    return problems


def _responses_output(where: str, output: Any) -> list[str]:
    if isinstance(output, str):
        return []
    if not isinstance(output, list):
        return [f"{where}.output: must be a string or an array of input parts"]
    problems = []
    for position, raw in enumerate(output):
        part = as_dict(raw) or {}
        if part.get("type") not in _RESPONSES_INPUT_PARTS:
            problems.append(f"{where}.output[{position}]: part type {part.get('type')!r} is not allowed")
    return problems


_ANTHROPIC_USER = ("text", "image", "document", "search_result", "tool_result", "mid_conv_system")
_ANTHROPIC_ASSISTANT = ("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use", "web_search_tool_result")
_ANTHROPIC_RESULT = ("text", "image", "document", "search_result", "tool_reference")
_MAX_BREAKPOINTS = 4


def anthropic(messages: Sequence[Any], system: Any = None) -> list[str]:
    """Problems of a Messages API request's ``messages`` (and ``system``).

    Rules (Anthropic's Messages API reference and tool-use guide): roles are user and
    assistant, the first message is the user's; a content block has a type its role allows;
    text blocks are non-empty; ``tool_use`` ids are unique and match ``^[a-zA-Z0-9_-]+$``,
    their input is an object; "each tool_use block must have a corresponding tool_result
    block in the next message", and "tool_result blocks must come first in the content
    array" of that user message; a ``tool_result`` answers a ``tool_use`` of the message
    right before it; ``thinking`` blocks carry ``thinking`` and ``signature``, and appear in
    assistant messages only; at most four ``cache_control`` breakpoints in a request.
    """
    problems: list[str] = []
    if not isinstance(messages, list) or not messages:
        return ["messages: must be a non-empty array"]
    breakpoints = _count_breakpoints(system)
    seen_ids: set[str] = set()
    previous_calls: list[str] = []
    for index, where, message in _objects(messages, "messages", problems):
        role = message.get("role")
        if index == 0 and role != "user":
            problems.append(f"{where}: the first message must be the user's")
        if role not in ("user", "assistant"):
            problems.append(f"{where}: role {role!r} is not allowed")
            continue
        content = message.get("content")
        blocks = _anthropic_blocks(where, content, problems)
        breakpoints += sum(1 for b in blocks if b.get("cache_control") is not None)
        if role == "assistant":
            if previous_calls:
                problems.append(f"{where}: tool_use {previous_calls} not answered by the next message")
            previous_calls = _anthropic_assistant(where, blocks, seen_ids, problems)
        else:
            answered = _anthropic_user(where, blocks, previous_calls, problems)
            for block in blocks:
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    breakpoints += sum(1 for b in map(as_dict, block["content"]) if b and b.get("cache_control") is not None)
            missing = [c for c in previous_calls if c not in answered]
            if missing:
                problems.append(f"{where}: tool_use {missing} of the message before have no tool_result here")
            previous_calls = []
    if previous_calls:
        problems.append(f"messages: tool_use {previous_calls} of the last message have no tool_result")
    if breakpoints > _MAX_BREAKPOINTS:
        problems.append(f"request: {breakpoints} cache_control breakpoints, at most {_MAX_BREAKPOINTS} are allowed")
    return problems


def _count_breakpoints(system: Any) -> int:
    if not isinstance(system, list):
        return 0
    return sum(1 for b in map(as_dict, system) if b and b.get("cache_control") is not None)


def _anthropic_blocks(where: str, content: Any, problems: list[str]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content:
            problems.append(f"{where}.content: empty text")
        return []
    if not isinstance(content, list) or not content:
        problems.append(f"{where}.content: must be a string or a non-empty array of blocks")
        return []
    blocks = []
    for position, raw in enumerate(content):
        block = as_dict(raw)
        if block is None:
            problems.append(f"{where}.content[{position}]: not an object")
            continue
        if block.get("type") == "text" and (not isinstance(block.get("text"), str) or not block["text"]):
            problems.append(f"{where}.content[{position}]: text blocks must be non-empty")
        blocks.append(block)
    return blocks


def _anthropic_assistant(where: str, blocks: list[dict[str, Any]], seen: set[str], problems: list[str]) -> list[str]:
    calls = []
    for position, block in enumerate(blocks):
        kind = block.get("type")
        here = f"{where}.content[{position}]"
        if kind not in _ANTHROPIC_ASSISTANT:
            problems.append(f"{here}: block type {kind!r} is not allowed in an assistant message")
        elif kind == "thinking":
            if not isinstance(block.get("thinking"), str) or not isinstance(block.get("signature"), str):
                problems.append(f"{here}: thinking blocks need string thinking and signature")
            if "cache_control" in block:
                problems.append(f"{here}: thinking blocks cannot carry cache_control")
        elif kind == "redacted_thinking" and not isinstance(block.get("data"), str):
            problems.append(f"{here}: redacted_thinking needs string data")
        elif kind == "tool_use":
            call_id = block.get("id")
            if not isinstance(call_id, str) or not _ANTHROPIC_ID.fullmatch(call_id):
                problems.append(f"{here}: tool_use id {call_id!r} must match ^[a-zA-Z0-9_-]+$")
                continue
            if call_id in seen:
                problems.append(f"{here}: tool_use id {call_id!r} is not unique")
            seen.add(call_id)
            if not isinstance(block.get("input"), dict) or not isinstance(block.get("name"), str):
                problems.append(f"{here}: tool_use needs a name and an object input")
            calls.append(call_id)
    return calls


def _anthropic_user(where: str, blocks: list[dict[str, Any]], calls: list[str], problems: list[str]) -> set[str]:
    answered: set[str] = set()
    other_seen = False
    for position, block in enumerate(blocks):
        kind = block.get("type")
        here = f"{where}.content[{position}]"
        if kind not in _ANTHROPIC_USER:
            problems.append(f"{here}: block type {kind!r} is not allowed in a user message")
        elif kind != "tool_result":
            other_seen = True
            continue
        else:
            if other_seen:
                problems.append(f"{here}: tool_result blocks must come first in the content")
            call_id = block.get("tool_use_id")
            if call_id not in calls:
                problems.append(f"{here}: tool_result {call_id!r} answers no tool_use of the message before")
            elif call_id in answered:
                problems.append(f"{here}: tool_use {call_id!r} answered twice")
            answered.add(str(call_id))
            inner = block.get("content")
            if inner is not None and not isinstance(inner, str):
                if not isinstance(inner, list):
                    problems.append(f"{here}.content: must be a string or an array of blocks")
                    continue
                for n, raw in enumerate(inner):
                    item = as_dict(raw) or {}
                    if item.get("type") not in _ANTHROPIC_RESULT:
                        problems.append(f"{here}.content[{n}]: block type {item.get('type')!r} is not allowed in a tool_result")
                    elif item.get("type") == "text" and not item.get("text"):
                        problems.append(f"{here}.content[{n}]: text blocks must be non-empty")
    return answered
