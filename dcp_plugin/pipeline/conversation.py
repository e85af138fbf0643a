"""Typed views of the host's {info, parts} messages, and the one definition of each rule over them.

Rules defined here and nowhere else: a tool call's identity (:func:`call_id_of`), the model a
message names (:func:`model_ref`, :func:`latest_model`), the session a request belongs to
(:func:`session_id_of`) and whether a message list continues the one seen before
(:class:`HistoryMark`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


class ModelInfo(TypedDict, total=False):
    providerID: str
    modelID: str


class Info(TypedDict, total=False):
    id: str
    sessionID: str
    role: Literal["user", "assistant"]
    tokens: dict[str, Any]
    modelID: str
    providerID: str
    model: ModelInfo
    time: dict[str, int]
    summary: Any


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
    return value if isinstance(value, str) and value else None


def is_user(message: Any) -> bool:
    """Whether a message opens a new user turn."""
    return info_of(message).get("role") == "user"


def message_time(message: Any) -> int:
    """The newest timestamp a message carries (``info.time.created`` / ``completed``, in ms), 0 when none."""
    when = info_of(message).get("time")
    if not isinstance(when, dict):
        return 0
    stamps = [v for k in ("created", "completed") if isinstance(v := when.get(k), (int, float)) and not isinstance(v, bool)]
    return int(max(stamps)) if stamps else 0


def is_assistant(message: Any) -> bool:
    """Whether a message is a model step (it answered the request made with everything before it)."""
    return info_of(message).get("role") == "assistant"


def output_is_cleared(state: dict[str, Any]) -> bool:
    """Whether the host already sends a cleared text instead of this output (OpenCode's compaction)."""
    when = state.get("time")
    return isinstance(when, dict) and bool(when.get("compacted"))


def _text_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def call_id_of(part: Mapping[str, Any], message: Any, message_index: int, part_index: int) -> str:
    """The identity of a tool call: its ``callID``, else the part's ``id``, else its position.

    Only a non-empty string counts as an id: OpenCode always sends one, but a host (or a
    fuzzer) may send ``null``, ``""``, ``0`` or ``false``, and every consumer must agree on
    what such a part is called, or a placeholder would be planned for a call that never
    matches its own part again.
    """
    return (
        _text_id(part.get("callID"))
        or _text_id(part.get("id"))
        or f"{message_id(message) or message_index}#{part_index}"
    )


def session_id_of(input: Mapping[str, Any] | None, messages: Sequence[Any]) -> str:
    """The session a request belongs to: ``input["sessionID"]``, else the messages' own."""
    if isinstance(input, Mapping):
        value = _text_id(input.get("sessionID"))
        if value:
            return value
    for message in messages:
        value = _text_id(info_of(message).get("sessionID"))
        if value:
            return value
    return "default"


@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model a request goes to: provider and model ids, and the context limit the host knows."""

    provider_id: str | None = None
    model_id: str | None = None
    context_limit: int | None = None

    def merged_over(self, other: ModelRef | None) -> ModelRef:
        """This reference with its blanks filled from ``other`` (a limit only carries over for the same model)."""
        if other is None:
            return self
        same_model = self.model_id is None or other.model_id is None or self.model_id == other.model_id
        return ModelRef(
            self.provider_id or other.provider_id,
            self.model_id or other.model_id,
            self.context_limit if self.context_limit is not None else (other.context_limit if same_model else None),
        )


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def model_ref(value: Any) -> ModelRef | None:
    """The model named by a message's info or by a host's model object; None when it names none.

    Shapes understood: an assistant info (``providerID``, ``modelID``), a user info
    (``model: {providerID, modelID}``), and a host model object (``{id | modelID,
    providerID, limit: {context}}``, OpenCode's and the hook input's shape).
    """
    if not isinstance(value, Mapping):
        return None
    nested = value.get("model")
    if isinstance(nested, Mapping) and not _text_id(value.get("modelID")):
        inner = model_ref(nested)
        if inner is not None:
            return inner
    # A host model object names its model `id`; a message's info has an `id` too, its own.
    host_object = "role" not in value and ("limit" in value or "providerID" in value)
    model_id = _text_id(value.get("modelID")) or (_text_id(value.get("id")) if host_object else None)
    provider_id = _text_id(value.get("providerID"))
    limit = value.get("limit")
    context = _positive_int(limit.get("context")) if isinstance(limit, Mapping) else None
    if model_id is None and provider_id is None and context is None:
        return None
    return ModelRef(provider_id, model_id, context)


def latest_model(messages: Sequence[Any]) -> ModelRef | None:
    """The model of the newest message that names one: the one the next request goes to.

    OpenCode records the model chosen for a turn on its user message and the model that
    answered on each assistant message, so the newest of either is the upcoming model.
    """
    for message in reversed(messages):
        ref = model_ref(info_of(message))
        if ref is not None and ref.model_id is not None:
            return ref
    return None


@dataclass(slots=True)
class HistoryMark:
    """A fingerprint of the message list seen so far: how many, the first and last ids, the last's parts.

    The one definition of "the history was rewritten": a new list continues the old one when
    it is at least as long, starts with the same message, and still has the last seen message
    (same id, no fewer parts) at the same place. An undo drops or replaces the tail, a host
    compaction replaces the start; either fails this check.
    """

    count: int = 0
    first_id: str | None = None
    last_id: str | None = None
    last_parts: int = 0

    def continues(self, messages: Sequence[Any]) -> bool:
        """Whether ``messages`` extends the history marked so far."""
        if self.count == 0:
            return True
        if len(messages) < self.count:
            return False
        if message_id(messages[0]) != self.first_id:
            return False
        last = messages[self.count - 1]
        return message_id(last) == self.last_id and len(parts_of(last)) >= self.last_parts

    def advance(self, messages: Sequence[Any], end: int | None = None) -> None:
        """Mark the first ``end`` messages (default: all) as seen."""
        count = len(messages) if end is None else end
        self.count = count
        self.first_id = message_id(messages[0]) if count else None
        last = messages[count - 1] if count else None
        self.last_id = message_id(last)
        self.last_parts = len(parts_of(last))
