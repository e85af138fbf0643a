"""Where a recorded call's tool state is, and which message holds a call: one definition over call identity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcp_plugin.model.messages import call_message, locate
from tests.support.helpers import assistant, call, tool_part, user


@dataclass(frozen=True)
class Seen:
    message_index: int
    part_index: int
    call_id: str


def history() -> list[dict[str, Any]]:
    return [user(), call("read", {"filePath": "a.py"}, call_id="call_a"), call("grep", {"pattern": "x"}, call_id="call_b")]


def test_locate_finds_the_state_of_the_call_where_it_was_seen() -> None:
    messages = history()
    assert locate(messages, Seen(1, 0, "call_a")) is messages[1]["parts"][0]["state"]


def test_locate_says_none_when_another_call_is_at_that_position() -> None:
    assert locate(history(), Seen(2, 0, "call_a")) is None


def test_locate_says_none_when_the_position_is_gone() -> None:
    assert locate(history(), Seen(5, 0, "call_a")) is None
    assert locate(history(), Seen(1, 3, "call_a")) is None


def test_locate_says_none_for_a_part_without_a_state_dict() -> None:
    messages = history()
    messages[1]["parts"][0]["state"] = "done"
    assert locate(messages, Seen(1, 0, "call_a")) is None


def test_locate_knows_a_call_by_its_part_id_when_it_has_no_call_id() -> None:
    messages = history()
    part = messages[1]["parts"][0]
    del part["callID"]
    assert locate(messages, Seen(1, 0, part["id"])) is part["state"]


def test_locate_reads_a_list_that_starts_later_at_its_offset() -> None:
    messages = history()
    assert locate([user(), *messages], Seen(1, 0, "call_a"), offset=1) is messages[1]["parts"][0]["state"]


def test_call_message_is_the_newest_message_holding_the_call() -> None:
    messages = [*history(), call("read", {"filePath": "a.py"}, call_id="call_a")]
    assert call_message(messages, "call_a") == 3
    assert call_message(messages, "call_b") == 2
    assert call_message(messages, "call_z") is None


def test_call_message_knows_a_call_by_its_part_id_and_ignores_other_parts() -> None:
    part = tool_part("read", {"filePath": "a.py"})
    del part["callID"]
    text = {"type": "text", "text": "hi", "callID": "call_t"}
    messages = [user(), assistant(part), assistant(text)]
    assert call_message(messages, part["id"]) == 1
    assert call_message(messages, "call_t") is None
