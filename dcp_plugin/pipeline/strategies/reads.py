"""What a `read` call showed of a file: the lines its range covers, and whether the host cut it short."""

from __future__ import annotations

from dcp_plugin.pipeline.placeholders import is_placeholder
from dcp_plugin.pipeline.strategies.scan import holds

READ_TOOLS: frozenset[str] = frozenset({"read"})
WRITE_TOOLS: frozenset[str] = frozenset({"write"})
# OpenCode's read tool (1.18): `offset` is the 1-based first line (0 and a missing offset mean
# line 1) and `limit` the number of lines, 2,000 when not given.
DEFAULT_READ_LIMIT = 2000
# Texts OpenCode's read appends when it showed less than the range asked for: the output reached
# its 50 KB cap, or a line longer than 2,000 characters was cut.
CUT_SHORT_MARKERS: tuple[str, ...] = ("(Output capped at ", "(line truncated to ")
# Looked for together (both start with "(", which most outputs hold a few times at most): see :mod:`.scan`.

Lines = tuple[int, int]  # first and last line shown, 1-based and inclusive


def _whole_number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def read_lines(tool_input: object) -> Lines | None:
    """The lines a read asked for; None when its range cannot be told (then it shows nothing for sure)."""
    if not isinstance(tool_input, dict):
        return None
    offset = tool_input.get("offset")
    limit = tool_input.get("limit")
    first = 1 if offset is None else _whole_number(offset)
    count = DEFAULT_READ_LIMIT if limit is None else _whole_number(limit)
    if first is None or count is None or first < 0 or count < 1:
        return None
    first = max(first, 1)
    return first, first + count - 1


def shows_less(output: object) -> bool:
    """Whether a read's output shows less than its range: the host cut it short, or it is a placeholder already."""
    return isinstance(output, str) and (is_placeholder(output) or holds(output, CUT_SHORT_MARKERS))


def shown_lines(tool_input: object, output: object) -> Lines | None:
    """The lines a completed read is known to have shown in full: its range, unless the host cut it short.

    An output that is already a placeholder (a list pruned before, handed in again) shows nothing.
    """
    return None if shows_less(output) else read_lines(tool_input)


def covers(outer: Lines, inner: Lines) -> bool:
    """Whether the range ``outer`` holds every line of ``inner``."""
    return outer[0] <= inner[0] and outer[1] >= inner[1]


def line_count(content: str) -> int:
    """How many lines a written text has (a final newline does not start another one)."""
    if not content:
        return 0
    return content.count("\n") + (0 if content.endswith("\n") else 1)
