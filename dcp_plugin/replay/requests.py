"""The requests a recorded message list implies: where each was made, what it sent, when, and to which model."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dcp_plugin.model.messages import info_of, message_time
from dcp_plugin.model.refs import ModelRef, model_ref
from dcp_plugin.replay.pricing import compaction_starts


def request_points(messages: Sequence[Any]) -> list[int]:
    """Where the recorded requests were made: before each assistant message (it answered everything
    before it), and at the end when the session ends with a request no message answered yet."""
    points = [i for i, m in enumerate(messages) if i > 0 and info_of(m).get("role") == "assistant"]
    if messages and info_of(messages[-1]).get("role") != "assistant" and len(messages) > 1:
        points.append(len(messages))
    return points


@dataclass(frozen=True, slots=True)
class ImpliedRequest:
    """One request a recorded session implies: which messages it sent, when, and to which model."""

    number: int  # 1-based
    begin: int  # first message sent (after an OpenCode compaction, the history from it on)
    end: int  # messages[begin:end] were sent; messages[end], when there, is the answer
    time_ms: int  # the newest timestamp among the messages up to ``end``
    model: ModelRef | None  # the newest model they name


def implied_requests(messages: Sequence[Any]) -> Iterator[ImpliedRequest]:
    """The requests of a recorded session, in order (see :func:`request_points`)."""
    starts = compaction_starts(messages)
    time_ms = 0
    model: ModelRef | None = None
    scanned = 0
    for number, end in enumerate(request_points(messages), 1):
        for message in messages[scanned:end]:
            time_ms = max(time_ms, message_time(message))
            ref = model_ref(info_of(message))
            model = ref if ref is not None and ref.model_id is not None else model
        scanned = end
        yield ImpliedRequest(number, starts[end], end, time_ms, model)
