"""The message accessors' fast paths answer as their general rules do, for every shape a host may send."""

from __future__ import annotations

import math
from typing import Any, get_type_hints

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcp_plugin.model.messages import (
    Info,
    Message,
    ModelInfo,
    Part,
    ToolState,
    as_messages,
    call_id_of,
    message_id,
    message_time,
)

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
)
_MISSING = object()


def newest_time(message: Any) -> int:
    """message_time's rule, written out: the newest finite number among created and completed, else 0."""
    info = message.get("info") if isinstance(message, dict) else None
    when = info.get("time") if isinstance(info, dict) else None
    if not isinstance(when, dict):
        return 0
    found = [
        value
        for value in (when.get("created"), when.get("completed"))
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ]
    return int(max(found)) if found else 0


def with_time(created: Any, completed: Any) -> dict[str, Any]:
    when = {key: value for key, value in (("created", created), ("completed", completed)) if value is not _MISSING}
    return {"info": {"role": "assistant", "time": when}, "parts": []}


@given(_VALUES | st.just(_MISSING), _VALUES | st.just(_MISSING))
def test_a_message_time_is_its_newest_finite_timestamp(created: Any, completed: Any) -> None:
    message = with_time(created, completed)
    assert message_time(message) == newest_time(message)
    assert type(message_time(message)) is int


@given(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.just({"info": None}), st.just({"info": {"time": 5}})))
def test_a_malformed_message_has_time_zero_and_no_id(message: Any) -> None:
    assert message_time(message) == 0
    assert message_id(message) is None


@given(_VALUES | st.just(_MISSING), _VALUES | st.just(_MISSING), st.one_of(st.none(), st.text(max_size=3)))
def test_a_call_is_named_by_its_first_non_empty_text_id(call: Any, part_id: Any, mid: Any) -> None:
    part = {key: value for key, value in (("callID", call), ("id", part_id)) if value is not _MISSING}
    message = {"info": {"id": mid}, "parts": [part]}
    texts = [value for value in (call, part_id) if isinstance(value, str) and value]
    expected = texts[0] if texts else f"{mid or 7}#2"
    assert call_id_of(part, message, 7, 2) == expected  # type: ignore[arg-type]
    assert message_id(message) == (mid or None)


@pytest.mark.parametrize("shape", [Message, Info, ModelInfo, Part, ToolState], ids=lambda t: t.__name__)
def test_every_value_of_the_hosts_message_shape_is_typed_object(shape: type) -> None:
    # A host may send anything as any value: a narrower type would let a reader skip its check.
    hints = get_type_hints(shape)
    assert hints
    assert {key for key, hint in hints.items() if hint is not object} == set()


def test_as_messages_hands_back_a_list_of_objects_unchanged() -> None:
    messages = [{"info": {}, "parts": []}, {"info": {}, "parts": []}]
    assert as_messages(messages) is messages


@pytest.mark.parametrize("junk", [None, "text", 7, ["a"], True])
def test_as_messages_puts_an_empty_object_in_place_of_an_item_that_is_not_one(junk: object) -> None:
    messages = [{"info": {}, "parts": []}, junk]
    seen = as_messages(messages)
    assert list(seen) == [messages[0], {}]
    assert messages[1] is junk  # the list handed in is left as it was
