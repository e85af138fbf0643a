"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as OpenCode-shaped messages.

Each line is ``{timestamp, type, payload}``: ``session_meta`` (the session id, its directory,
the model provider), ``turn_context`` (the model of the turns that follow), ``response_item``
(the Responses API items the model was sent and produced), ``event_msg`` (of which the
``token_count`` events carry each response's usage) and ``compacted`` (a compaction's summary).
Rollouts written before that envelope existed (a first line with the session's ``id``, then
bare response items) are read too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dcp_plugin.adapters.formats.adapter import OPENAI_RESPONSES
from dcp_plugin.replay.importers.records import Record, fill_turn_models, millis, openai_tokens

ENVELOPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
RESPONSE_ITEMS = (
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "web_search_call", "tool_search_call", "tool_search_output", "image_generation_call",
    "compaction", "compaction_summary", "ghost_snapshot",
)
# User-role items Codex injects itself: instructions and environment, not the user's words.
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>")
DEFAULT_PROVIDER = "openai"
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def recognizes(record: dict[str, Any]) -> bool:
    """Whether a JSON line is a Codex rollout line (the envelope, or the older bare shape)."""
    kind = record.get("type")
    if kind in ENVELOPES and "payload" in record:
        return True
    if kind in RESPONSE_ITEMS or record.get("record_type") == "state":
        return True
    return kind is None and isinstance(record.get("id"), str) and "timestamp" in record


accepts = recognizes
WHAT = f"a Codex rollout line: {{timestamp, type, payload}} with type one of {', '.join(ENVELOPES)}"


def _is_context(item: dict[str, Any]) -> bool:
    if item.get("role") != "user":
        return False
    content = item.get("content")
    texts = [b.get("text", "") for b in content if isinstance(b, dict)] if isinstance(content, list) else [content]
    return bool(texts) and all(isinstance(t, str) and t.lstrip().startswith(CONTEXT_PREFIXES) for t in texts)


class _Reader:
    """Walks the lines once, collecting items with their times, models and usage."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.times: list[int | None] = []
        self.models: list[str | None] = []
        self.usage: list[tuple[int, dict[str, Any]]] = []  # (items so far, usage of the response just ended)
        self.summaries: set[int] = set()
        self.info: dict[str, Any] = {}
        self.model: str | None = None
        self.provider = DEFAULT_PROVIDER

    def add(self, item: dict[str, Any], stamp: Any) -> None:
        if item.get("type") == "ghost_snapshot":
            return
        if _is_context(item):
            item = {**item, "role": "developer"}
        self.items.append(item)
        self.times.append(millis(stamp))
        self.models.append(self.model)

    def line(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        stamp = record.get("timestamp")
        if kind not in ENVELOPES:  # the older shape: bare items, a first line describing the session
            if kind in RESPONSE_ITEMS:
                self.add(record, stamp)
            elif kind is None and isinstance(record.get("id"), str):
                self.info.setdefault("id", record["id"])
            return
        if not isinstance(payload, dict):
            return
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        elif kind == "response_item":
            self.add(payload, stamp)
        elif kind == "compacted" and isinstance(payload.get("message"), str):
            self.summaries.add(len(self.items))
            self.add({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": payload["message"]}]}, stamp)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            if isinstance(last, dict):
                self.usage.append((len(self.items), last))

    def _meta(self, payload: dict[str, Any]) -> None:
        nested = payload.get("meta")
        meta: dict[str, Any] = nested if isinstance(nested, dict) else payload
        if isinstance(meta.get("id"), str):
            self.info.setdefault("id", meta["id"])
        if isinstance(meta.get("cwd"), str):
            self.info.setdefault("directory", meta["cwd"])
        if isinstance(meta.get("model_provider"), str) and meta["model_provider"]:
            self.provider = meta["model_provider"]
        if isinstance(meta.get("model"), str):
            self.model = meta["model"]


def build(records: list[Record], where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(session info, messages) of a Codex rollout's lines."""
    reader = _Reader()
    for _, record in records:
        reader.line(record)
    session_id = str(reader.info.get("id") or Path(where).stem)
    view = OPENAI_RESPONSES.to_view(reader.items, session_id)
    ends = [*view.sources[1:], len(reader.items)]
    usage = list(reader.usage)
    for message, start, end in zip(view.messages, view.sources, ends, strict=True):
        info = message["info"]
        created = reader.times[start]
        if created is not None:
            info["time"] = {"created": created}
        if info["role"] != "assistant":
            continue
        if start in reader.summaries:
            info["summary"] = True
        stamps = [
            t for t, item in zip(reader.times[start:end], reader.items[start:end], strict=True)
            if t is not None and item.get("type") not in _OUTPUTS
        ]
        if stamps:
            info.setdefault("time", {})["completed"] = max(stamps)
        if reader.models[start]:
            info["modelID"] = reader.models[start]
            info["providerID"] = reader.provider
        # The usage reported after this response's last item and before the next message.
        while usage and usage[0][0] <= start:
            usage.pop(0)
        if usage and usage[0][0] <= end:
            info["tokens"] = openai_tokens(usage.pop(0)[1])
    fill_turn_models(view.messages)
    info = {"id": session_id, "title": Path(where).stem, **({"directory": reader.info["directory"]} if "directory" in reader.info else {})}
    return info, view.messages
