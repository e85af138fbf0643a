"""The prompt overhead of each history a replayed session sent: what its prompts held beyond the messages."""

from __future__ import annotations

import bisect
from collections.abc import Mapping


class HistoryOverheads:
    """Tokens outside the messages (system prompt, tool definitions, what the host adds) per history sent.

    A history is keyed by the index of its first message: 0, then where each compaction starts one.
    A history that taught nothing takes the overhead of the nearest earlier one that did (the first
    known one's when none earlier did); with nothing known at all, the overhead is 0.
    """

    __slots__ = ("_starts", "_values")

    def __init__(self, by_start: Mapping[int, int] | None = None) -> None:
        known = dict(by_start or {})
        self._starts = sorted(known)
        self._values = [known[start] for start in self._starts]

    @property
    def first(self) -> int:
        """The overhead of the earliest history that taught one (0 when none did)."""
        return self._values[0] if self._values else 0

    def at(self, start: int) -> int:
        """The overhead of the history whose first message is ``start``."""
        if not self._values:
            return 0
        return self._values[max(0, bisect.bisect_right(self._starts, start) - 1)]

    def insert(self, index: int) -> None:
        """A message was put in at ``index``: every history from it on starts one message later."""
        self._starts = [start + (start >= index) for start in self._starts]

    def to_dict(self) -> dict[int, int]:
        return dict(zip(self._starts, self._values, strict=True))
