"""Reading provider items: plain dicts or SDK objects, JSON-encoded arguments, and rewritten tool-result content."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from dcp_plugin.adapters.formats.view import ItemEdit, markers, media_digest


def as_dict(item: Any) -> dict[str, Any] | None:
    """A provider item as a dict: itself, or an SDK object's dump (pydantic); None for anything else."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            data = dump(exclude_none=True)
        except Exception:  # noqa: BLE001 - an object we cannot read stays unknown
            return None
        return data if isinstance(data, dict) else None
    return None


def parse_arguments(raw: Any) -> tuple[dict[str, Any], bool]:
    """(input, whether it is an object) from a JSON-encoded arguments string.

    A string that is not a JSON object becomes ``{"arguments": raw}`` so that calls with
    different raw arguments never look like duplicates; its input is never rewritten.
    """
    if isinstance(raw, dict):
        return raw, True
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return {"arguments": raw}, False
        if isinstance(value, dict):
            return value, True
    return {"arguments": raw}, False


def dump_arguments(value: Any) -> str:
    """A tool input as the JSON string providers carry in ``arguments``."""
    return json.dumps(value, ensure_ascii=False)


def text_blocks(content: Any, kinds: tuple[str, ...] = ("text",)) -> str:
    """The text of a content value (a string, or a list of blocks whose type is in ``kinds``), joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for block in content:
        if isinstance(block, str):  # LangChain allows bare strings among content blocks
            texts.append(block)
            continue
        data = as_dict(block)
        if data is not None and data.get("type") in kinds and isinstance(data.get("text"), str):
            texts.append(data["text"])
    return "\n".join(texts)


def read_content(
    content: Any,
    parts: list[dict[str, Any]],
    texts: tuple[str, ...],
    media: Callable[[dict[str, Any]], tuple[str, Any] | None],
) -> list[str]:
    """Append the view parts of a message's content (a string or blocks); returns what fingerprints it.

    ``media`` says, for a block that is not text, its media type and its source (a URL,
    data, a file id), or None for a block the view leaves out.
    """
    if isinstance(content, str):
        parts.append({"type": "text", "text": content})
        return [content]
    keys: list[str] = []
    for block in content if isinstance(content, list) else ():
        data = as_dict(block)
        if data is None:
            continue
        text = data.get("text")
        if data.get("type") in texts and isinstance(text, str):
            parts.append({"type": "text", "text": text})
            keys.append(text)
            continue
        found = media(data)
        if found is not None:
            parts.append({"type": "file", "mime": found[0]})
            keys.append(media_digest(found[1]))
    return keys


def replaced_content(
    original: Any, edit: ItemEdit, text_block: Callable[[str], dict[str, Any]]
) -> Any:
    """The new content of a tool result whose output an edit replaces: same shape as before.

    A string stays a string. A list becomes the placeholder block followed by one marker
    block per removed image or file; a cache breakpoint set inside the old content moves to
    the last new block, so it stays in the same tool result.
    """
    text = edit.value if isinstance(edit.value, str) else json.dumps(edit.value, ensure_ascii=False)
    if not isinstance(original, list):
        extra = markers(edit)
        return "\n".join([text, *extra]) if extra else text
    blocks = [text_block(text), *(text_block(marker) for marker in markers(edit))]
    cache = _last_cache_control(original)
    if cache is not None:
        blocks[-1]["cache_control"] = cache
    return blocks


def _last_cache_control(blocks: Sequence[Any]) -> Any:
    found = None
    for block in blocks:
        data = as_dict(block)
        if data is not None and data.get("cache_control") is not None:
            found = data["cache_control"]
    return found


def replace_at(values: Sequence[Any], index: int, value: Any) -> list[Any]:
    """A new list equal to ``values`` with one element replaced; the others are the same objects."""
    out = list(values)
    out[index] = value
    return out
