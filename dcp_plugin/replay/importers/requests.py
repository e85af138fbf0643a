"""Plain provider requests as OpenCode-shaped messages: OpenAI Chat, OpenAI Responses or Anthropic.

Accepted: one message list in any of the three formats, one request body (``{model,
messages}``, ``{model, system, messages}``, ``{model, input}``), or a list of request bodies
(as a JSON array or one per line), of which the longest conversation is replayed: an agent
resends its whole history with every request, so the longest one holds all the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcp_plugin.adapters.formats import anthropic, openai_chat, openai_responses
from dcp_plugin.adapters.formats.adapter import FORMATS, with_system
from dcp_plugin.adapters.formats.items import as_dict
from dcp_plugin.replay.file_error import SessionFileError
from dcp_plugin.replay.importers.records import fill_turn_models

_RESPONSES_TYPES = frozenset({"function_call", "function_call_output", "reasoning", "custom_tool_call",
                              "custom_tool_call_output", "item_reference", "web_search_call", "compaction"})
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"})
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
PROVIDERS = {openai_chat.NAME: openai_chat.PROVIDER, openai_responses.NAME: openai_responses.PROVIDER,
             anthropic.NAME: anthropic.PROVIDER}


NOT_A_MESSAGE = (
    "not a message of OpenAI Chat, OpenAI Responses or Anthropic"
    " (expected an object with `role` and `content`, or a Responses item with a `type`)"
)


class UnknownItem(SessionFileError):
    """An item of a message list that is a message in none of the formats."""

    def __init__(self, where: str, index: int) -> None:
        super().__init__(f"{where}[{index}]: {NOT_A_MESSAGE}")
        self.index = index


def is_request(value: Any) -> bool:
    """Whether a JSON object is a request body (it holds ``messages`` or ``input`` as a list)."""
    return isinstance(value, dict) and (isinstance(value.get("messages"), list) or isinstance(value.get("input"), list))


def message_format(items: Sequence[Any], where: str) -> str:
    """Which provider format a message list is in; raises naming the first item none of them has."""
    found: str | None = None
    for index, raw in enumerate(items):
        item = as_dict(raw)
        kind = _item_format(item) if item is not None else None
        if kind is None:
            raise UnknownItem(where, index)
        if kind != "any":
            found = found or kind
    return found or openai_chat.NAME  # plain text only: every format reads it the same way


def _item_format(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    if kind in _RESPONSES_TYPES:
        return openai_responses.NAME
    role = item.get("role")
    if role not in _CHAT_ROLES:
        return None
    if role in ("tool", "function") or "tool_calls" in item:
        return openai_chat.NAME
    content = item.get("content")
    if isinstance(content, list):
        types = {b.get("type") for b in content if isinstance(b, dict)}
        if types & _RESPONSES_PARTS:
            return openai_responses.NAME
        if types & _ANTHROPIC_BLOCKS:
            return anthropic.NAME
        if "image_url" in types:
            return openai_chat.NAME
    return "any"


def build(data: Any, where: str, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(session info, messages) of a message list, a request body or a list of request bodies."""
    if isinstance(data, list) and data and all(is_request(r) for r in data):
        data = max(reversed(data), key=lambda r: len(r.get("messages") or r.get("input") or []))
    model: str | None = None
    system: Any = None
    if is_request(data):
        model = data.get("model") if isinstance(data.get("model"), str) else None
        system = data.get("system")
        items = data["input"] if isinstance(data.get("input"), list) else data["messages"]
        where = f"{where}: {'input' if isinstance(data.get('input'), list) else 'messages'}"
        fmt = anthropic.NAME if system is not None and "input" not in data else message_format(items, where)
    elif isinstance(data, list):
        items = data
        fmt = message_format(items, where)
    else:
        raise SessionFileError(f"{where}: expected a message list or a request with `messages` or `input`")
    adapter = with_system(system) if fmt == anthropic.NAME else FORMATS[fmt]
    messages = adapter.to_view(items, session_id).messages
    if model:
        for message in messages:
            if message["info"]["role"] == "assistant":
                message["info"].update(modelID=model, providerID=PROVIDERS[fmt])
        fill_turn_models(messages)
    return {"id": session_id, "title": f"{session_id} ({fmt})", "format": fmt}, messages
