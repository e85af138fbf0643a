"""Anthropic Messages ``messages`` (and ``system``): to the pipeline's view and back.

``tool_use`` blocks become tool parts of the assistant's view message; ``tool_result`` blocks
(in user messages) become their results, failed when ``is_error`` is true. A user message that
carries tool results opens no turn: its other blocks (reminders a host appends) go into a view
message of role ``system``. Thinking blocks are never rewritten, whether signed or redacted;
``cache_control`` markers stay on the blocks that carry them (see
:func:`~dcp_plugin.adapters.formats.items.replaced_content` for one inside a rewritten tool result).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.adapters.formats.items import as_dict, replace_at, replaced_content, text_blocks
from dcp_plugin.adapters.formats.kinds import Kind, Typed, input_kind, text_kind
from dcp_plugin.adapters.formats.view import ItemEdit, ViewBuilder, digest, media_digest

NAME = "anthropic"
PROVIDER = "anthropic"
_RESULT_BLOCKS = ("text", "search_result")


def _media(data: dict[str, Any]) -> tuple[Kind, str]:
    """(kind, detail) of an image or document block."""
    source = data.get("source")
    source = source if isinstance(source, dict) else {}
    mime = source.get("media_type") if isinstance(source.get("media_type"), str) else source.get("type", "")
    name = data.get("title") if isinstance(data.get("title"), str) else ""
    kind = Kind.IMAGE if data.get("type") == "image" else Kind.FILE
    return kind, " ".join(x for x in (str(mime or ""), name) if x) or str(data.get("type"))


def _media_key(data: dict[str, Any]) -> str:
    source = data.get("source")
    if isinstance(source, dict):
        return media_digest(source.get("data") or source.get("url") or source.get("file_id"))
    return str(data.get("type"))


def _system_parts(system: Any) -> list[dict[str, Any]]:
    if isinstance(system, str):
        return [{"type": "text", "text": system}] if system else []
    text = text_blocks(system)
    return [{"type": "text", "text": text}] if text else []


def begin(builder: ViewBuilder, system: Any) -> None:
    """Start a view with the request's system prompt."""
    system_parts = _system_parts(system)
    if system_parts:
        builder.message("system", -1, "system").extend(system_parts)


def feed(builder: ViewBuilder, messages: Sequence[Any], start: int) -> None:
    """Add ``messages[start:]`` to a view being built."""
    for index in range(start, len(messages)):
        message = as_dict(messages[index])
        if message is None:
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            _assistant(builder, index, content)
        elif role in ("user", "system"):
            _user(builder, index, content, role)


def _user(builder: ViewBuilder, index: int, content: Any, role: str) -> None:
    if isinstance(content, str):
        builder.message(role, index, "system" if role == "system" else digest(content)).append(
            {"type": "text", "text": content}
        )
        return
    parts: list[dict[str, Any]] = []
    keys: list[str] = []
    results = False
    for position, block in enumerate(content if isinstance(content, list) else ()):
        data = as_dict(block)
        if data is None:
            continue
        kind = data.get("type")
        if kind == "tool_result":
            results = True
            inner = data.get("content")
            media = [_media(b) for b in map(as_dict, inner) if b is not None and b.get("type") in ("image", "document")] if isinstance(inner, list) else []
            builder.result(
                str(data.get("tool_use_id")),
                (index, position),
                text_blocks(inner, _RESULT_BLOCKS),
                error=data.get("is_error") is True,
                media=media,
            )
        elif kind == "text" and isinstance(data.get("text"), str):
            parts.append({"type": "text", "text": data["text"]})
            keys.append(data["text"])
        elif kind in ("image", "document"):
            kind_, detail = _media(data)
            parts.append({"type": "file", "mime": detail.split(" ", 1)[0], "filename": detail})
            keys.append(_media_key(data))
        elif kind == "mid_conv_system":
            parts.append({"type": "text", "text": text_blocks(data.get("content"))})
    if parts or not results:
        view_role = "system" if results or role == "system" else "user"
        builder.message(view_role, index, digest(*keys)).extend(parts)


def _assistant(builder: ViewBuilder, index: int, content: Any) -> None:
    if isinstance(content, str):
        builder.message("assistant", index, digest(content)).append({"type": "text", "text": content})
        return
    blocks = [as_dict(b) for b in content] if isinstance(content, list) else []
    first_call = next((b for b in blocks if b is not None and b.get("type") == "tool_use"), None)
    ident = str(first_call.get("id")) if first_call is not None else digest(text_blocks(blocks))
    parts = builder.message("assistant", index, ident)
    for position, data in enumerate(blocks):
        if data is None:
            continue
        kind = data.get("type")
        if kind == "text" and isinstance(data.get("text"), str):
            parts.append({"type": "text", "text": data["text"]})
        elif kind == "thinking":
            signature = data.get("signature")
            parts.append({"type": "reasoning", "text": str(data.get("thinking") or ""), "metadata": {"signed": bool(signature)}})
        elif kind == "redacted_thinking":
            parts.append({"type": "reasoning", "text": "", "metadata": {"signed": True}})
        elif kind == "tool_use" and isinstance(data.get("id"), str):
            tool_input = data.get("input")
            builder.call(
                parts,
                data["id"],
                str(data.get("name")),
                tool_input if isinstance(tool_input, dict) else {"input": tool_input},
                (index, position),
            )


def rebuild(item: Any, edits: list[ItemEdit]) -> dict[str, Any]:
    """A new message with the edits applied; every other block is the same object."""
    message = dict(as_dict(item) or {})
    content = message["content"]
    for edit in edits:
        block = dict(as_dict(content[edit.position]) or {})
        if edit.field == "output":
            block["content"] = replaced_content(block.get("content"), edit, lambda t: {"type": "text", "text": t})
        elif isinstance(block.get("input"), dict):
            block["input"] = edit.value
        content = replace_at(content, edit.position, block)
    message["content"] = content
    return message


def classify(messages: Sequence[Any], system: Any = None) -> list[Typed]:
    """The kind of every item of a Messages API conversation."""
    out: list[Typed] = []
    if isinstance(system, str):
        out.append(Typed(("system", 0, 0), Kind.SYSTEM_TEXT))
    elif isinstance(system, list):
        out.extend(Typed(("system", k, 0), Kind.SYSTEM_TEXT) for k in range(len(system)))
    for index, raw in enumerate(messages):
        message = as_dict(raw) or {}
        role = message.get("role")
        plain = {"user": Kind.USER_TEXT, "assistant": Kind.ASSISTANT_TEXT, "system": Kind.SYSTEM_TEXT}.get(str(role))
        content = message.get("content")
        if plain is None:
            out.append(Typed((index, "item", 0), Kind.UNKNOWN))
        elif isinstance(content, str):
            out.append(Typed((index, 0, 0), text_kind(content, plain)))
        else:
            for position, block in enumerate(content if isinstance(content, list) else ()):
                out.extend(_classify_block(as_dict(block) or {}, (index, position), plain))
    return out


def _classify_block(data: dict[str, Any], path: tuple[int, int], plain: Kind) -> list[Typed]:
    kind = data.get("type")
    if kind == "text":
        return [Typed((*path, 0), text_kind(data.get("text"), plain))]
    if kind == "thinking":
        return [Typed((*path, 0), Kind.REASONING_SIGNED if data.get("signature") else Kind.REASONING)]
    if kind == "redacted_thinking":
        return [Typed((*path, 0), Kind.REASONING_SIGNED)]
    if kind in ("image", "document"):
        return [Typed((*path, 0), _media(data)[0])]
    if kind == "tool_use":
        return [Typed((*path, "input"), input_kind(data.get("input")))]
    if kind == "mid_conv_system":
        return [Typed((*path, 0), Kind.SYSTEM_TEXT)]
    if kind != "tool_result":
        return [Typed((*path, 0), Kind.UNKNOWN)]
    result = Kind.TOOL_ERROR if data.get("is_error") is True else Kind.TOOL_RESULT
    inner = data.get("content")
    if not isinstance(inner, list):
        return [Typed((*path, 0), text_kind(inner, result))]
    out = []
    for position, block in enumerate(inner):
        item = as_dict(block) or {}
        if item.get("type") == "text":
            out.append(Typed((*path, position), text_kind(item.get("text"), result)))
        elif item.get("type") in ("image", "document"):
            out.append(Typed((*path, position), _media(item)[0]))
        elif item.get("type") == "search_result":
            out.append(Typed((*path, position), result))
        else:
            out.append(Typed((*path, position), Kind.UNKNOWN))
    return out or [Typed((*path, 0), result)]
