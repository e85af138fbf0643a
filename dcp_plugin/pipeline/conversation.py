"""Typed views of the host's {info, parts} messages and cheap accessors over them."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

ToolStatus = Literal["pending", "running", "completed", "error"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "error"})


class ToolState(TypedDict, total=False):
    status: ToolStatus
    input: dict[str, Any]
    output: str
    error: str
    title: str
    metadata: dict[str, Any]
    time: dict[str, int]


class Part(TypedDict, total=False):
    id: str
    sessionID: str
    messageID: str
    type: str
    text: str
    tool: str
    callID: str
    state: ToolState


class Info(TypedDict, total=False):
    id: str
    sessionID: str
    role: Literal["user", "assistant"]
    tokens: dict[str, Any]
    modelID: str
    providerID: str


class Message(TypedDict):
    info: Info
    parts: list[Part]


def info_of(message: Any) -> dict[str, Any]:
    """The message's info dict, or an empty one for malformed input."""
    if isinstance(message, dict):
        info = message.get("info")
        if isinstance(info, dict):
            return info
    return {}


def parts_of(message: Any) -> list[Any]:
    """The message's parts list, or an empty one for malformed input."""
    if isinstance(message, dict):
        parts = message.get("parts")
        if isinstance(parts, list):
            return parts
    return []


def message_id(message: Any) -> str | None:
    """The host's id of a message, when it has one."""
    value = info_of(message).get("id")
    return value if isinstance(value, str) else None


def is_user(message: Any) -> bool:
    """Whether a message opens a new user turn."""
    return info_of(message).get("role") == "user"


def session_id_of(input: dict[str, Any] | None, messages: list[Any]) -> str:
    """The session a request belongs to: ``input["sessionID"]``, else the messages' own."""
    if isinstance(input, dict):
        value = input.get("sessionID")
        if isinstance(value, str) and value:
            return value
    for message in messages:
        value = info_of(message).get("sessionID")
        if isinstance(value, str) and value:
            return value
    return "default"
