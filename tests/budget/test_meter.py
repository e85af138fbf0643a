"""ContextMeter: the figure at a walk's request points, worked out only where asked, as reading every point gives it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcp_plugin.budget.meter import ContextMeter
from dcp_plugin.model.tokens import DEFAULT_IMAGE_TOKENS
from tests.support.meter_reading import meter_reading

IMAGES = DEFAULT_IMAGE_TOKENS


def _history(steps: int, first: str = "u0") -> list[dict[str, Any]]:
    """A user message, then assistant steps each reporting a growing prompt, with a user message every third step."""
    opening = {"info": {"id": first, "role": "user"}, "parts": [{"type": "text", "text": "q" * 3_000}]}
    messages: list[dict[str, Any]] = [opening]
    prompt = 10_000
    for i in range(steps):
        tokens = {"input": prompt, "output": 80, "reasoning": 0, "cache": {"read": 0, "write": 0}}
        info = {"id": f"a{i}", "role": "assistant", "modelID": "claude-sonnet-4", "tokens": tokens}
        state = {"status": "completed", "input": {}, "output": "o" * (600 + 97 * (i % 7))}
        messages.append({"info": info, "parts": [{"type": "tool", "tool": "read", "callID": f"c{i}", "state": state}]})
        prompt += 400 + 31 * (i % 5)
        if i % 3 == 2:
            text = {"type": "text", "text": "q" * 500}
            messages.append({"info": {"id": f"u{i + 1}", "role": "user"}, "parts": [text]})
    return messages


class _Sent:
    """What the first n messages send now: as stored, less what the placeholders written so far remove."""

    def __init__(self, meter: ContextMeter) -> None:
        self.meter = meter
        self.removed: dict[int, int] = {}  # message index -> tokens its placeholder removes

    def prefix(self, count: int) -> int:
        """The scheduler's running sum, recomputed plainly."""
        return self.meter._stored[count] - sum(tokens for index, tokens in self.removed.items() if index < count)


def _fed(messages: list[dict[str, Any]]) -> tuple[ContextMeter, _Sent]:
    """A meter told every message's tokens, and the sums of what they send."""
    meter = ContextMeter()
    for message in messages:
        meter.add_message(len(str(message)) // 4)
    return meter, _Sent(meter)


Walk = Callable[[ContextMeter, _Sent, list[dict[str, Any]], list[int]], list[int | None]]


def _eager(meter: ContextMeter, sent: _Sent, messages: list[dict[str, Any]], points: list[int]) -> list[int | None]:
    """Every point's figure worked out there, then its placeholders written and the request sent."""
    figures: list[int | None] = []
    for number, count in enumerate(points):
        figures.append(meter.tokens_at(messages, sent.prefix, IMAGES, count, number == 0))
        sent.removed[count - 1] = 7 * number  # a placeholder written at this point
        meter.sent(count, sent.prefix)
    return figures


def _lazy(asked: set[int]) -> Walk:
    """A walk asking the figure only at the points numbered in ``asked``."""

    def walk(meter: ContextMeter, sent: _Sent, messages: list[dict[str, Any]], points: list[int]) -> list[int | None]:
        """Each point owed its figure, asked where chosen; the walk settles at its end."""
        figures: list[int | None] = []
        for number, count in enumerate(points):
            meter.owe(messages, sent.prefix, IMAGES, count, number == 0)
            figures.append(meter.owed_tokens() if number in asked else None)
            sent.removed[count - 1] = 7 * number
            meter.sent(count, sent.prefix)
        meter.settle()
        return figures

    return walk


def _points(messages: list[dict[str, Any]], start: int) -> list[int]:
    """The request points from ``start`` on: before each assistant message, and the list's end."""
    ends = range(max(start, 1), len(messages) + 1)
    return [i for i in ends if i == len(messages) or messages[i]["info"]["role"] == "assistant"]


def _two_walks(walk: Walk, changed: int, command_reads: bool) -> tuple[list[int | None], list[tuple[object, ...]]]:
    """A walk over a history, an in-place change of message ``changed``, a command's read, a walk over a longer list."""
    messages = _history(30)
    meter, sent = _fed(messages)
    held = messages[:20]
    figures = walk(meter, sent, held, _points(held, 1))
    readings = [meter_reading(meter)]
    state = held[changed]["parts"][0].get("state")
    if isinstance(state, dict):
        state["output"] = "[cleared]"
    else:
        held[changed]["parts"][0]["text"] = "q"
    held.extend(messages[20:26])
    if command_reads:
        meter.at(held, sent.prefix)
        readings.append(meter_reading(meter))
    held.extend(messages[26:])
    figures += walk(meter, sent, held, _points(held, 21))
    readings.append(meter_reading(meter))
    return figures, readings


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(0, 12)), st.integers(0, 19), st.booleans())
def test_figures_asked_lazily_and_the_meter_after_each_walk_equal_reading_at_every_point(
    asked: set[int], changed: int, command_reads: bool
) -> None:
    eager_figures, eager_readings = _two_walks(_eager, changed, command_reads)
    lazy_figures, lazy_readings = _two_walks(_lazy(asked), changed, command_reads)
    assert lazy_readings == eager_readings
    assert lazy_figures == [figure if figure is None else eager_figures[i] for i, figure in enumerate(lazy_figures)]


def test_a_rescan_due_at_a_first_point_never_asked_is_read_at_that_point() -> None:
    # A command read the whole list; the newest messages then changed in place, and the next walk's
    # first point lies before what the command read: reading there starts the history over.
    messages = _history(12)
    eager, eager_sent = _fed(messages)
    lazy, lazy_sent = _fed(messages)
    for meter, sent in ((eager, eager_sent), (lazy, lazy_sent)):
        meter.at(messages, sent.prefix)
    messages[-2]["parts"][0]["state"]["output"] = "[cleared]"
    points = [len(messages) - 4, len(messages)]
    eager_figures = _eager(eager, eager_sent, messages, points)
    lazy_figures = _lazy({1})(lazy, lazy_sent, messages, points)
    assert (lazy_figures[1], meter_reading(lazy)) == (eager_figures[1], meter_reading(eager))


def test_a_rescan_that_starts_over_forgets_what_was_sent_before_the_later_points_are_sent() -> None:
    messages = _history(12)
    eager, eager_sent = _fed(messages)
    lazy, lazy_sent = _fed(messages)
    _eager(eager, eager_sent, messages, [5, 9])
    _lazy(set())(lazy, lazy_sent, messages, [5, 9])
    rewritten = _history(12, first="other")  # a host compaction replaced the first message
    _eager(eager, eager_sent, rewritten, [7, 12, 15])
    _lazy({2})(lazy, lazy_sent, rewritten, [7, 12, 15])
    assert sorted(lazy.tracker._sent.by_count) == [7, 12, 15]
    assert meter_reading(lazy) == meter_reading(eager)


def test_the_reads_of_points_never_asked_are_made_when_the_walk_settles() -> None:
    messages = _history(12)
    meter, sent = _fed(messages)
    for number, count in enumerate([3, 6, 10]):
        meter.owe(messages, sent.prefix, IMAGES, count, number == 0)
    read_before = meter.tracker.seen
    meter.settle()
    assert (read_before, meter.tracker.seen) == (3, 10)


def test_a_figure_asked_again_at_the_same_point_is_the_first_answer() -> None:
    messages = _history(12)
    meter, sent = _fed(messages)
    meter.owe(messages, sent.prefix, IMAGES, 10, True)
    first = meter.owed_tokens()
    sent.removed[4] = 500  # a prunable list written after the point was scheduled by the figure
    assert meter.owed_tokens() == first
