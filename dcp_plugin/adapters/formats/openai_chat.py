"""OpenAI Chat Completions ``messages``: to the pipeline's view and back.

Assistant ``tool_calls`` become tool parts of the assistant's view message; each ``tool``
message becomes that call's result (the format has no error flag, so every result is a
completed output). ``system`` and ``developer`` messages become view messages of role
``system``, which open no turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.adapters.formats.items import (
    as_dict,
    dump_arguments,
    parse_arguments,
    read_content,
    replace_at,
    replaced_content,
    text_blocks,
)
from dcp_plugin.adapters.formats.kinds import Kind, Typed, input_kind, text_kind
from dcp_plugin.adapters.formats.view import SELF, ItemEdit, ViewBuilder, digest

NAME = "openai_chat"
PROVIDER = "openai"
_TEXTS = ("text", "refusal")


def _media(block: dict[str, Any]) -> tuple[str, Any] | None:
    kind = block.get("type")
    if kind == "image_url":
        image = block.get("image_url")
        return "image/*", image.get("url") if isinstance(image, dict) else image
    if kind in ("input_audio", "file"):
        return "application/octet-stream", str(block.get(kind))
    return None


def _user_parts(content: Any, parts: list[dict[str, Any]]) -> list[str]:
    """Append the view parts of a user/system content value; returns the fingerprint pieces."""
    return read_content(content, parts, ("text",), _media)


def feed(builder: ViewBuilder, messages: Sequence[Any], start: int) -> None:
    """Add ``messages[start:]`` to a view being built."""
    for index in range(start, len(messages)):
        message = as_dict(messages[index])
        role = message.get("role") if message is not None else None
        if message is None or not isinstance(role, str):
            continue
        content = message.get("content")
        if role == "tool":
            builder.result(str(message.get("tool_call_id")), (index, SELF), text_blocks(content))
        elif role in ("system", "developer"):
            _user_parts(content, builder.message("system", index, role))
        elif role == "user":
            parts: list[dict[str, Any]] = []
            keys = _user_parts(content, parts)
            builder.message("user", index, digest(*keys)).extend(parts)
        elif role == "assistant":
            _assistant(builder, index, message)


def _assistant(builder: ViewBuilder, index: int, message: dict[str, Any]) -> None:
    calls = message.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    first = as_dict(calls[0]) if calls else None
    text = text_blocks(message.get("content"), _TEXTS)
    ident = str(first.get("id")) if first is not None and first.get("id") else digest(text)
    parts = builder.message("assistant", index, ident)
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "text": reasoning})
    if text:
        parts.append({"type": "text", "text": text})
    for position, raw in enumerate(calls):
        call = as_dict(raw)
        if call is None or not isinstance(call.get("id"), str):
            continue
        if call.get("type") == "custom" and isinstance(call.get("custom"), dict):
            custom = call["custom"]
            builder.call(parts, call["id"], str(custom.get("name")), {"input": custom.get("input")}, (index, position))
            continue
        function = call.get("function")
        if isinstance(function, dict):
            tool_input, _ = parse_arguments(function.get("arguments"))
            builder.call(parts, call["id"], str(function.get("name")), tool_input, (index, position))


def rebuild(item: Any, edits: list[ItemEdit]) -> dict[str, Any]:
    """A new message with the edits applied; untouched fields and tool calls are the same objects."""
    message = dict(as_dict(item) or {})
    for edit in edits:
        if edit.position == SELF:
            message["content"] = replaced_content(message.get("content"), edit, lambda t: {"type": "text", "text": t})
            continue
        calls = message["tool_calls"]
        call = dict(as_dict(calls[edit.position]) or {})
        if call.get("type") == "custom":
            if isinstance(edit.value.get("input"), str):
                call["custom"] = {**call["custom"], "input": edit.value["input"]}
        else:
            function = call["function"]
            if not parse_arguments(function.get("arguments"))[1]:
                continue  # arguments that were not a JSON object are never rewritten
            call["function"] = {**function, "arguments": dump_arguments(edit.value)}
        message["tool_calls"] = replace_at(calls, edit.position, call)
    return message


def classify(messages: Sequence[Any]) -> list[Typed]:
    """The kind of every item of a Chat Completions message list."""
    out: list[Typed] = []
    plain = {"system": Kind.SYSTEM_TEXT, "developer": Kind.SYSTEM_TEXT, "user": Kind.USER_TEXT,
             "assistant": Kind.ASSISTANT_TEXT, "tool": Kind.TOOL_RESULT}
    for index, raw in enumerate(messages):
        message = as_dict(raw) or {}
        role = message.get("role")
        if role not in plain:
            out.append(Typed((index, "item", 0), Kind.UNKNOWN))
            continue
        _classify_content(out, index, message.get("content"), plain[role])
        if role == "assistant":
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                out.append(Typed((index, "reasoning", 0), Kind.REASONING))
            for position, raw_call in enumerate(message.get("tool_calls") or ()):
                call = as_dict(raw_call) or {}
                function = call.get("function")
                if isinstance(function, dict):
                    kind = input_kind(parse_arguments(function.get("arguments"))[0])
                elif isinstance(call.get("custom"), dict):
                    kind = input_kind(call["custom"].get("input"))
                else:
                    kind = Kind.UNKNOWN
                out.append(Typed((index, "tool_calls", position, "input"), kind))
    return out


def _classify_content(out: list[Typed], index: int, content: Any, plain: Kind) -> None:
    if isinstance(content, str):
        out.append(Typed((index, "content", 0), text_kind(content, plain)))
        return
    for position, block in enumerate(content if isinstance(content, list) else ()):
        data = as_dict(block) or {}
        kind = data.get("type")
        if kind in _TEXTS:
            found = text_kind(data.get("text") if kind == "text" else data.get("refusal"), plain)
        elif kind == "image_url":
            found = Kind.IMAGE
        elif kind in ("input_audio", "file"):
            found = Kind.FILE
        else:
            found = Kind.UNKNOWN
        out.append(Typed((index, "content", position), found))
