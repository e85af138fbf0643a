"""LangChain chat messages (``SystemMessage``, ``HumanMessage``, ``AIMessage``, ``ToolMessage``): to the view and back.

Read by duck typing (``message.type``, ``tool_calls``, ``tool_call_id``, ``status``), so
this module imports nothing from LangChain. A rewritten message is a ``model_copy`` of the
original with a new content or new tool calls; the original is never modified.
``ToolMessage(status="error")`` is a failed call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dcp_plugin.adapters.formats.items import as_dict, replaced_content, text_blocks
from dcp_plugin.adapters.formats.kinds import Kind, Typed, input_kind, text_kind
from dcp_plugin.adapters.formats.usage import usage_tokens
from dcp_plugin.adapters.formats.view import SELF, ItemEdit, ViewBuilder, digest, media_digest

NAME = "langchain"
PROVIDER = ""  # LangChain wraps every provider: the model id says which
_IMAGES = ("image_url", "image")
_FILES = ("file", "audio", "input_audio", "document")


def _media(content: Any) -> list[tuple[Kind, str]]:
    media = []
    for block in content if isinstance(content, list) else ():
        data = as_dict(block)
        if data is None:
            continue
        if data.get("type") in _IMAGES:
            media.append((Kind.IMAGE, str(data.get("mime_type") or "image")))
        elif data.get("type") in _FILES:
            media.append((Kind.FILE, str(data.get("mime_type") or data.get("type"))))
    return media


def _ident(message: Any, *texts: str) -> str:
    ident = getattr(message, "id", None)
    return ident if isinstance(ident, str) and ident else digest(*texts)


def feed(builder: ViewBuilder, messages: Sequence[Any], start: int) -> None:
    """Add ``messages[start:]`` to a view being built."""
    for index in range(start, len(messages)):
        message = messages[index]
        kind = getattr(message, "type", None)
        content = getattr(message, "content", None)
        if kind == "tool":
            builder.result(
                str(getattr(message, "tool_call_id", "")),
                (index, SELF),
                text_blocks(content),
                error=getattr(message, "status", "success") == "error",
                media=_media(content),
            )
        elif kind in ("human", "system"):
            parts: list[dict[str, Any]] = []
            text = text_blocks(content)
            if text:
                parts.append({"type": "text", "text": text})
            keys = [text]
            for _, detail in _media(content):
                parts.append({"type": "file", "mime": detail, "filename": detail})
                keys.append(media_digest(detail))
            role = "user" if kind == "human" else "system"
            builder.message(role, index, _ident(message, *keys) if role == "user" else "system").extend(parts)
        elif kind == "ai":
            calls = [c for c in getattr(message, "tool_calls", None) or () if isinstance(c, dict)]
            text = text_blocks(content)
            ident = _ident(message, *(str(c.get("id")) for c in calls[:1]), text)
            # The provider's count for the request this message answers: the figure rests on it.
            tokens = usage_tokens(getattr(message, "usage_metadata", None))
            parts = builder.message("assistant", index, ident, {"tokens": tokens} if tokens else None)
            if text:
                parts.append({"type": "text", "text": text})
            for position, call in enumerate(calls):
                args = call.get("args")
                builder.call(
                    parts,
                    str(call.get("id")),
                    str(call.get("name")),
                    args if isinstance(args, dict) else {"args": args},
                    (index, position),
                )


def rebuild(message: Any, edits: list[ItemEdit]) -> Any:
    """A copy of ``message`` with the edits applied (the original is left as it was)."""
    update: dict[str, Any] = {}
    for edit in edits:
        if edit.position == SELF:
            update["content"] = replaced_content(message.content, edit, lambda t: {"type": "text", "text": t})
            continue
        calls = [dict(c) for c in update.get("tool_calls", message.tool_calls)]
        call = calls[edit.position]
        call["args"] = edit.value
        update["tool_calls"] = calls
        update["content"] = _with_tool_use_input(update.get("content", message.content), call)
        update["additional_kwargs"] = _with_raw_arguments(update.get("additional_kwargs", message.additional_kwargs), call)
    return message.model_copy(update=update)


def _with_tool_use_input(content: Any, call: dict[str, Any]) -> Any:
    """Content with the call's ``tool_use`` block (Anthropic-style content) carrying the new input."""
    if not isinstance(content, list):
        return content
    out = list(content)
    for position, block in enumerate(out):
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == call.get("id"):
            out[position] = {**block, "input": call["args"]}
    return out


def _with_raw_arguments(extra: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """``additional_kwargs`` with the call's OpenAI-style raw arguments matching the new input."""
    raw = extra.get("tool_calls") if isinstance(extra, dict) else None
    if not isinstance(raw, list):
        return extra
    calls = []
    for item in raw:
        if isinstance(item, dict) and item.get("id") == call.get("id") and isinstance(item.get("function"), dict):
            item = {**item, "function": {**item["function"], "arguments": json.dumps(call["args"], ensure_ascii=False)}}
        calls.append(item)
    return {**extra, "tool_calls": calls}


def classify(messages: Sequence[Any]) -> list[Typed]:
    """The kind of every item of a LangChain message list."""
    out: list[Typed] = []
    plain = {"human": Kind.USER_TEXT, "system": Kind.SYSTEM_TEXT, "ai": Kind.ASSISTANT_TEXT}
    for index, message in enumerate(messages):
        kind = getattr(message, "type", None)
        content = getattr(message, "content", None)
        if kind == "tool":
            result = Kind.TOOL_ERROR if getattr(message, "status", "success") == "error" else Kind.TOOL_RESULT
            _classify_content(out, index, content, result)
        elif kind in plain:
            _classify_content(out, index, content, plain[kind])
            for position, call in enumerate(getattr(message, "tool_calls", None) or ()):
                out.append(Typed((index, "tool_calls", position, "input"), input_kind(call.get("args"))))
        else:
            out.append(Typed((index, "item", 0), Kind.UNKNOWN))
    return out


def _classify_content(out: list[Typed], index: int, content: Any, plain: Kind) -> None:
    if not isinstance(content, list):
        out.append(Typed((index, "content", 0), text_kind(content, plain)))
        return
    for position, block in enumerate(content):
        data = as_dict(block) if not isinstance(block, str) else {"type": "text", "text": block}
        kind = (data or {}).get("type")
        if kind == "text":
            found = text_kind((data or {}).get("text"), plain)
        elif kind in ("thinking", "reasoning"):
            found = Kind.REASONING_SIGNED if (data or {}).get("signature") else Kind.REASONING
        elif kind == "tool_use":
            continue  # the call itself is classified from tool_calls
        elif kind in _IMAGES:
            found = Kind.IMAGE
        elif kind in _FILES:
            found = Kind.FILE
        else:
            found = Kind.UNKNOWN
        out.append(Typed((index, "content", position), found))
