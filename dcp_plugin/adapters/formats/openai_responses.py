"""OpenAI Responses ``input`` items: to the pipeline's view and back.

Consecutive model-side items (``reasoning``, assistant ``message``, ``function_call``,
``custom_tool_call``) form one assistant view message, the way one response produced them;
``function_call_output`` and ``custom_tool_call_output`` become their calls' results (the format
has no error flag). Items of other types (built-in tool calls, references, compactions) are
unknown to the pipeline and passed through as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.adapters.formats.items import (
    as_dict,
    dump_arguments,
    parse_arguments,
    read_content,
    replaced_content,
    text_blocks,
)
from dcp_plugin.adapters.formats.kinds import Kind, Typed, input_kind, text_kind
from dcp_plugin.adapters.formats.view import SELF, ItemEdit, ViewBuilder, digest

NAME = "openai_responses"
PROVIDER = "openai"
_TEXTS = ("input_text", "output_text", "text", "refusal")
_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_MEDIA = {"input_image": Kind.IMAGE, "input_file": Kind.FILE, "input_audio": Kind.FILE}


def _is_message(item: dict[str, Any]) -> bool:
    return item.get("type", "message") == "message" and isinstance(item.get("role"), str)


def _media_detail(block: dict[str, Any]) -> str:
    name = block.get("filename")
    return " ".join(x for x in (str(block.get("type")), name if isinstance(name, str) else "") if x)


def _output_media(output: Any) -> list[tuple[Kind, str]]:
    if not isinstance(output, list):
        return []
    media = []
    for block in output:
        data = as_dict(block)
        if data is not None and data.get("type") in _MEDIA:
            media.append((_MEDIA[data["type"]], _media_detail(data)))
    return media


def feed(builder: ViewBuilder, items: Sequence[Any], start: int) -> None:
    """Add ``items[start:]`` to a view being built (a response may go on from the last call)."""
    group: list[dict[str, Any]] | None = builder.carry  # parts of the assistant message being built
    for index in range(start, len(items)):
        item = as_dict(items[index])
        if item is None:
            continue
        kind = item.get("type", "message")
        if kind in _OUTPUTS:
            group = None
            output = item.get("output")
            builder.result(
                str(item.get("call_id")), (index, SELF), text_blocks(output, _TEXTS), media=_output_media(output)
            )
            continue
        if _is_message(item) and item["role"] != "assistant":
            group = None
            role = "user" if item["role"] == "user" else "system"
            parts: list[dict[str, Any]] = []
            keys = _message_parts(item.get("content"), parts)
            builder.message(role, index, digest(*keys) if role == "user" else role).extend(parts)
            continue
        if not (_is_message(item) or kind in _CALLS or kind == "reasoning"):
            continue  # unknown items neither join nor end a response
        if group is None:
            group = builder.message("assistant", index, _ident(item))
        _model_item(builder, group, index, item, kind)
    builder.carry = group


def _ident(item: dict[str, Any]) -> str:
    for key in ("call_id", "id"):
        if isinstance(item.get(key), str) and item[key]:
            return str(item[key])
    return digest(text_blocks(item.get("content"), _TEXTS))


def _input_media(block: dict[str, Any]) -> tuple[str, Any] | None:
    kind = block.get("type")
    if kind not in _MEDIA:
        return None
    mime = "image/*" if kind == "input_image" else "application/octet-stream"
    return mime, block.get("image_url") or block.get("file_data") or block.get("file_id")


def _message_parts(content: Any, parts: list[dict[str, Any]]) -> list[str]:
    return read_content(content, parts, _TEXTS, _input_media)


def _model_item(builder: ViewBuilder, parts: list[dict[str, Any]], index: int, item: dict[str, Any], kind: Any) -> None:
    if kind == "reasoning":
        summary = item.get("summary")
        text = "\n".join(
            s.get("text", "") for s in map(as_dict, summary if isinstance(summary, list) else []) if s is not None
        )
        parts.append({"type": "reasoning", "text": text, "metadata": {"signed": bool(item.get("encrypted_content"))}})
    elif kind == "function_call":
        tool_input, _ = parse_arguments(item.get("arguments"))
        builder.call(parts, str(item.get("call_id")), str(item.get("name")), tool_input, (index, SELF))
    elif kind == "custom_tool_call":
        builder.call(parts, str(item.get("call_id")), str(item.get("name")), {"input": item.get("input")}, (index, SELF))
    else:
        text = text_blocks(item.get("content"), _TEXTS)
        if text:
            parts.append({"type": "text", "text": text})


def rebuild(item: Any, edits: list[ItemEdit]) -> dict[str, Any]:
    """A new item with the edits applied."""
    new = dict(as_dict(item) or {})
    for edit in edits:
        if edit.field == "output":
            new["output"] = replaced_content(new.get("output"), edit, lambda t: {"type": "input_text", "text": t})
        elif new.get("type") == "custom_tool_call":
            if isinstance(edit.value.get("input"), str):
                new["input"] = edit.value["input"]
        elif parse_arguments(new.get("arguments"))[1]:
            new["arguments"] = dump_arguments(edit.value)
    return new


def classify(items: Sequence[Any]) -> list[Typed]:
    """The kind of every item of a Responses input list."""
    out: list[Typed] = []
    plain = {"user": Kind.USER_TEXT, "assistant": Kind.ASSISTANT_TEXT, "system": Kind.SYSTEM_TEXT,
             "developer": Kind.SYSTEM_TEXT}
    for index, raw in enumerate(items):
        item = as_dict(raw) or {}
        kind = item.get("type", "message")
        if _is_message(item):
            _classify_content(out, (index, "content"), item.get("content"), plain.get(item["role"], Kind.UNKNOWN))
        elif kind == "reasoning":
            out.append(Typed((index, "reasoning", 0), Kind.REASONING_SIGNED if item.get("encrypted_content") else Kind.REASONING))
        elif kind == "function_call":
            out.append(Typed((index, "call", "input"), input_kind(parse_arguments(item.get("arguments"))[0])))
        elif kind == "custom_tool_call":
            out.append(Typed((index, "call", "input"), input_kind(item.get("input"))))
        elif kind in _OUTPUTS:
            _classify_content(out, (index, "output"), item.get("output"), Kind.TOOL_RESULT)
        elif kind in ("compaction", "compaction_summary"):
            out.append(Typed((index, "item", 0), Kind.COMPACTION_SUMMARY))
        else:
            out.append(Typed((index, "item", 0), Kind.UNKNOWN))
    return out


def _classify_content(out: list[Typed], path: tuple[int, str], content: Any, plain: Kind) -> None:
    if not isinstance(content, list):
        out.append(Typed((*path, 0), text_kind(content, plain)))
        return
    for position, block in enumerate(content):
        data = as_dict(block) or {}
        kind = data.get("type")
        if kind in _TEXTS:
            found = text_kind(data.get("text") if kind != "refusal" else data.get("refusal"), plain)
        else:
            found = _MEDIA.get(str(kind), Kind.UNKNOWN)
        out.append(Typed((*path, position), found))
