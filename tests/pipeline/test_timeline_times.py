"""The timeline's time of the next request: read once per walk, it answers what reading the messages again answers."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.messages import as_messages
from dcp_plugin.pipeline.scheduler import Scheduler
from dcp_plugin.pipeline.timeline import Timeline

_TIMES = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**6),
    st.floats(min_value=0, max_value=1e6),
    st.sampled_from([math.nan, math.inf, -math.inf, True, "12"]),
)


@st.composite
def _message(draw: st.DrawFn) -> object:
    """A message with any role and any times, or a malformed entry."""
    shape = draw(st.sampled_from(["message", "message", "message", "no info", "not a dict"]))
    if shape == "not a dict":
        return draw(st.sampled_from([None, 3, "text", []]))
    if shape == "no info":
        return {"parts": []}
    when: dict[str, Any] = {}
    for key in ("created", "completed"):
        value = draw(_TIMES)
        if value is not None:
            when[key] = value
    info = {"role": draw(st.sampled_from(["user", "assistant", "assistant", None])), "time": when}
    return {"info": info, "parts": []}


def _timeline() -> Timeline:
    config = DcpConfig()
    return Timeline(Scheduler(config.cache.scheduler, config.cache.overdraft), 0, ContextMeter())


@settings(max_examples=200, deadline=None)
@given(first=st.lists(_message(), max_size=6), rest=st.lists(_message(), max_size=12))
def test_next_time_within_a_walk_equals_the_time_read_from_the_messages(first: list[Any], rest: list[Any]) -> None:
    timeline = _timeline()
    # As the runtime hands them on: an item that is not an object stands as an empty one.
    first, rest = list(as_messages(first)), list(as_messages(rest))
    for _ in timeline.requests(first):  # an earlier walk: the next one starts where it ended
        pass
    timeline.end_walk()
    messages = first + rest
    for _ in timeline.requests(messages):
        for end in range(len(messages) + 1):
            assert timeline.next_time(messages, end) == timeline.read_ahead_time(messages, end)
