"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``) as OpenCode-shaped messages.

Each line is one record: ``user`` and ``assistant`` records carry an Anthropic message
(``message``), with ``uuid``/``parentUuid`` links, a ``timestamp``, and on assistant records
the model and the provider-reported ``usage``. One API response is written as several
assistant records with the same ``message.id`` (one per content block); they are joined
back into one message. The conversation is the chain of records that ends at the last
message (so a rewound branch is left out); sub-agent records (``isSidechain``) and
bookkeeping records (summaries, snapshots, progress) are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dcp_plugin.adapters.formats.adapter import ANTHROPIC
from dcp_plugin.replay.importers.records import Record, anthropic_tokens, fill_turn_models, millis

LINK_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid", "messageId")
MESSAGE_TYPES = ("user", "assistant")
PROVIDER = "anthropic"
SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's own stand-in replies: no model answered


def recognizes(record: dict[str, Any]) -> bool:
    """Whether a JSON line is a Claude Code session record."""
    return isinstance(record.get("type"), str) and any(key in record for key in LINK_KEYS)


def accepts(record: dict[str, Any]) -> bool:
    """Whether a later line fits a Claude Code session (record types it does not know are skipped)."""
    return isinstance(record.get("type"), str)


WHAT = "a Claude Code session record: an object with a string `type`"


def _active_chain(records: list[Record]) -> list[Record]:
    """The records on the branch that ends at the last message, oldest first (file order without links)."""
    messages = [r for r in records if r[1].get("type") in MESSAGE_TYPES and not r[1].get("isSidechain")]
    by_uuid = {r[1]["uuid"]: r for r in records if isinstance(r[1].get("uuid"), str)}
    if not messages or not by_uuid or not isinstance(messages[-1][1].get("uuid"), str):
        return messages
    chain: list[Record] = []
    seen: set[str] = set()
    current: Record | None = messages[-1]
    while current is not None:
        uuid = current[1].get("uuid")
        if not isinstance(uuid, str) or uuid in seen:
            break
        seen.add(uuid)
        chain.append(current)
        parent = current[1].get("parentUuid") or current[1].get("logicalParentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None
    kept = {id(r) for r in chain}
    return [r for r in messages if id(r) in kept]


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


def _results_only(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def build(records: list[Record], where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(session info, messages) of a Claude Code session's records."""
    chain = _active_chain(records)
    conversation: list[dict[str, Any]] = []  # Anthropic messages, as the API received them
    origins: list[list[dict[str, Any]]] = []  # the records each message was joined from
    for _, record in chain:
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        role = record["type"]
        content = message.get("content")
        last = conversation[-1] if conversation else None
        same_response = (
            role == "assistant" and last is not None and last["role"] == "assistant"
            and message.get("id") is not None and origins[-1][-1].get("message", {}).get("id") == message.get("id")
        )
        more_results = (
            role == "user" and last is not None and last["role"] == "user"
            and _results_only(content) and _results_only(last["content"])
        )
        if last is not None and (same_response or more_results):
            last["content"] = [*last["content"], *_as_blocks(content)]
            origins[-1].append(record)
        else:
            conversation.append({"role": role, "content": _as_blocks(content) if role == "assistant" else content})
            origins.append([record])
    first = chain[0][1] if chain else (records[0][1] if records else {})
    session_id = str(first.get("sessionId") or Path(where).stem)
    view = ANTHROPIC.to_view(conversation, session_id)
    for message, source in zip(view.messages, view.sources, strict=True):
        _annotate(message["info"], origins[source])
    fill_turn_models(view.messages)
    info: dict[str, Any] = {"id": session_id, "title": _title(records) or Path(where).stem}
    if isinstance(first.get("cwd"), str):
        info["directory"] = first["cwd"]
    return info, view.messages


def _annotate(info: dict[str, Any], records: list[dict[str, Any]]) -> None:
    created = millis(records[0].get("timestamp"))
    if created is not None:
        info["time"] = {"created": created}
    if info.get("role") != "assistant":
        return
    completed = millis(records[-1].get("timestamp"))
    if completed is not None:
        info.setdefault("time", {})["completed"] = completed
    message = records[-1].get("message") or {}
    model = message.get("model")
    if isinstance(model, str) and model != SYNTHETIC_MODEL:
        info["modelID"] = model
        info["providerID"] = PROVIDER
        usage = message.get("usage")
        if isinstance(usage, dict):
            info["tokens"] = anthropic_tokens(usage)


def _title(records: list[Record]) -> str | None:
    for _, record in reversed(records):
        if record.get("type") == "summary" and isinstance(record.get("summary"), str):
            return str(record["summary"])
    return None
