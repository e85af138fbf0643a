"""The canonical message shape ({info, parts}, as OpenCode sends it) and the one definition of each rule over it.

Rules defined here and nowhere else: a tool call's identity (:func:`call_id_of`), where a
recorded call's tool state is (:func:`locate`) and which message holds a call
(:func:`call_message`), the session a request belongs to (:func:`session_id_of`) and whether
the host already cleared an output (:func:`output_is_cleared`). The model a message names is
in :mod:`.refs`, whether a list continues the one seen before in :mod:`.history` and :mod:`.continuity`.

The TypedDicts are the shape OpenCode documents: every function of the pipeline that takes
messages, parts or tool states takes these types, so mypy checks the keys read. Their values are
``object`` (the type OpenCode documents is in a comment): the hot path reads the host's own
dicts in place, with no validation per message, so a host may send anything, and mypy makes
every reader check a value's type before it uses it (an output that is not a string, an id that
is ``null``). The accessors here take ``object`` and return an empty view of malformed input
(tests feed malformed messages through the runtime).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypedDict, TypeGuard

FINAL_STATUSES: frozenset[str] = frozenset({"completed", "error"})


# Anything a host may send. A name of its own, not `object` in the class bodies below, which mypyc
# 2.4 compiles into a lookup of `object` among the module's globals, where it is not.
HostValue = object


class ToolState(TypedDict, total=False):
    """A tool part's state: what the call was given, and its result once finished."""

    status: HostValue  # "pending" | "running" | "completed" | "error"
    input: HostValue  # dict[str, Any]: the call's arguments
    output: HostValue  # str, once completed
    error: HostValue  # str, once failed
    title: HostValue  # str
    metadata: HostValue  # dict[str, Any]
    time: HostValue  # dict[str, int]: start, end, compacted (ms)


class Part(TypedDict, total=False):
    """One part of a message: text, a tool call with its state, a file, reasoning..."""

    id: HostValue  # str
    sessionID: HostValue  # str
    messageID: HostValue  # str
    type: HostValue  # str: "text", "tool", "reasoning", "file", ...
    text: HostValue  # str
    tool: HostValue  # str
    callID: HostValue  # str
    state: HostValue  # ToolState


class ModelInfo(TypedDict, total=False):
    """The model a user message chose for its turn."""

    providerID: HostValue  # str
    modelID: HostValue  # str


class Info(TypedDict, total=False):
    """A message's info: its id, role, time, and the model and usage of an assistant step."""

    id: HostValue  # str
    sessionID: HostValue  # str
    role: HostValue  # "user" | "assistant"
    tokens: HostValue  # dict[str, Any]: input, output, reasoning, cache {read, write}
    modelID: HostValue  # str
    providerID: HostValue  # str
    model: HostValue  # ModelInfo
    time: HostValue  # dict[str, int]: created, completed (ms)
    summary: HostValue  # bool on an assistant step (true: a compaction summary), a dict of diffs on a user message


class Message(TypedDict):
    """One message as the host sends it: ``{info, parts}``."""

    info: HostValue  # Info
    parts: HostValue  # list[Part]


def is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """isinstance(value, Mapping), with the common case (a dict) decided without the ABC machinery.

    Asked several times per message of a history on a cold request, where the ABC's check costs
    ten times a type comparison.
    """
    return type(value) is dict or isinstance(value, Mapping)


def info_of(message: object) -> Info:
    """The message's info dict, or an empty one for malformed input."""
    if isinstance(message, dict):
        # Annotated, not cast: this runs for every message of every request.
        info: Info | None = message.get("info")
        if isinstance(info, dict):
            return info
    return {}


def parts_of(message: object) -> list[object]:
    """The message's parts list, or an empty one for malformed input (its items may still be anything)."""
    if isinstance(message, dict):
        parts: object = message.get("parts")
        if isinstance(parts, list):
            return parts
    return []


def message_id(message: object) -> str | None:
    """The host's id of a message, when it has one."""
    # info_of inlined: asked for several times per message of a cold request's history.
    if isinstance(message, dict):
        info = message.get("info")
        if isinstance(info, dict):
            value = info.get("id")
            return value if isinstance(value, str) and value else None
    return None


def is_user(message: object) -> bool:
    """Whether a message opens a new user turn."""
    return info_of(message).get("role") == "user"


def message_time(message: object) -> int:
    """The newest timestamp a message carries (``info.time.created`` / ``completed``, in ms), 0 when none.

    A value that is no finite number (NaN, ±Infinity, which JSON parsers accept) counts as missing.
    """
    return info_time(info_of(message))


def info_time(info: Info) -> int:
    """:func:`message_time` of a message whose info (:func:`info_of`) the caller holds already."""
    when = info.get("time")
    if not isinstance(when, dict):
        return 0
    created, completed = when.get("created"), when.get("completed")
    if type(created) is int:
        # The common shape (integer times, ``completed`` only once a step ends), decided
        # without the general loop: read for every message of a cold request's history.
        if completed is None:
            return created
        if type(completed) is int:
            return completed if completed > created else created
    # No list and no max() of it: read for every message of a cold request's history.
    newest: int | float | None = None
    for value in (created, completed):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if (isinstance(value, int) or math.isfinite(value)) and (newest is None or value > newest):
            newest = value
    return int(newest) if newest is not None else 0


def is_assistant(message: object) -> bool:
    """Whether a message is a model step (it answered the request made with everything before it)."""
    return info_of(message).get("role") == "assistant"


def output_is_cleared(state: Mapping[str, object]) -> bool:
    """Whether the host already sends a cleared text instead of this output (OpenCode's compaction)."""
    when = state.get("time")
    return isinstance(when, dict) and bool(when.get("compacted"))


def text_id(value: object) -> str | None:
    """``value`` when it is a non-empty string (an id), else None."""
    return value if isinstance(value, str) and value else None


def call_id_of(part: Mapping[str, object], message: object, message_index: int, part_index: int) -> str:
    """The identity of a tool call: its ``callID``, else the part's ``id``, else its position.

    Only a non-empty string counts as an id: OpenCode always sends one, but a host (or a
    fuzzer) may send ``null``, ``""``, ``0`` or ``false``, and every consumer must agree on
    what such a part is called, or a placeholder would be planned for a call that never
    matches its own part again.
    """
    # text_id inlined: asked for every tool part a walk reads and every decision it locates.
    value = part.get("callID")
    if isinstance(value, str) and value:
        return value
    value = part.get("id")
    if isinstance(value, str) and value:
        return value
    return f"{message_id(message) or message_index}#{part_index}"


class Placed(Protocol):
    """Where a tool call was seen: its message and part index, and its identity (a ledger's record)."""

    @property
    def message_index(self) -> int: ...

    @property
    def part_index(self) -> int: ...

    @property
    def call_id(self) -> str: ...


def as_messages(messages: Sequence[object]) -> Sequence[Message]:
    """``messages`` as the pipeline reads them: an item that is not an object stands as an empty one.

    A host may send anything. Such an item has no id and no parts, whichever way it is read: in
    its place an empty dict says the same to code that, compiled, checks each message is a dict.
    The list handed in is never changed; the same list comes back when every item is a dict.
    """
    kinds = set(map(type, messages))  # one pass in C: a request's list is checked at every request
    if all(issubclass(kind, dict) for kind in kinds):
        return messages  # type: ignore[return-value]
    return [message if isinstance(message, dict) else {} for message in messages]  # type: ignore[misc,typeddict-item]


def locate(messages: Sequence[object], record: Placed, offset: int = 0) -> ToolState | None:
    """The tool state of ``record``'s call in ``messages``, or None when the call is not where it was seen.

    ``offset``: where the list the record was seen in starts within ``messages`` (a replay's
    history after a compaction). The part must be a dict with the call's identity
    (:func:`call_id_of`) and its state a dict.
    """
    index = record.message_index
    part_index = record.part_index
    try:
        message = messages[offset + index]
        # parts_of inlined: asked for every decision a walk makes or applies.
        parts: object = message.get("parts") if isinstance(message, dict) else None
        part = (parts if isinstance(parts, list) else [])[part_index]
    except (IndexError, TypeError):
        return None
    if not isinstance(part, dict):
        return None
    # The common case (the call's own callID) decided without call_id_of's fallbacks.
    call_id = part.get("callID")
    if not (isinstance(call_id, str) and call_id):
        call_id = call_id_of(part, message, index, part_index)
    if call_id != record.call_id:
        return None
    # Not cast (a call each in plain Python): asked for every placeholder of a warm request. Not
    # annotated as a ToolState either: compiled, that annotation is checked before the line below.
    state = part.get("state")
    return state if isinstance(state, dict) else None  # type: ignore[return-value]


def call_message(messages: Sequence[object], call_id: str) -> int | None:
    """The index of the newest message holding the tool call ``call_id``, or None."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        for part_index, part in enumerate(parts_of(message)):
            if isinstance(part, dict) and part.get("type") == "tool" and call_id_of(part, message, index, part_index) == call_id:
                return index
    return None


def session_id_of(input: Mapping[str, object] | None, messages: Sequence[object]) -> str:
    """The session a request belongs to: ``input["sessionID"]``, else the messages' own."""
    if isinstance(input, Mapping):
        value = text_id(input.get("sessionID"))
        if value:
            return value
    for message in messages:
        value = text_id(info_of(message).get("sessionID"))
        if value:
            return value
    return "default"
