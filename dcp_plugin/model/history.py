"""Whether a message list continues the one seen before: the fingerprint every rewrite check starts from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from dcp_plugin.model.messages import message_id, parts_of


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class HistoryMark:
    """A fingerprint of the message list seen so far: how many, the first and last ids, the last's parts.

    The fingerprint behind "the history was rewritten": a new list continues the old one when
    it is at least as long, starts with the same message, and still has the last seen message
    (same id, no fewer parts) at the same place. An undo drops or replaces the tail, a host
    compaction replaces the start; either fails this check. The continuity verdict
    (:mod:`.continuity`) starts from it, and also compares the ids of messages resent from an
    index and a full resend with the list held before.
    """

    count: int = 0
    first_id: str | None = None
    last_id: str | None = None
    last_parts: int = 0

    def continues(self, messages: Sequence[object]) -> bool:
        """Whether ``messages`` extends the history marked so far."""
        if self.count == 0:
            return True
        if len(messages) < self.count:
            return False
        if message_id(messages[0]) != self.first_id:
            return False
        last = messages[self.count - 1]
        return message_id(last) == self.last_id and len(parts_of(last)) >= self.last_parts

    def advance(self, messages: Sequence[object], end: int | None = None, *, same_list: bool = False) -> None:
        """Mark the first ``end`` messages (default: all) as seen.

        ``same_list``: the messages marked so far are those of this very list, unchanged since (one
        walk of a history), so its first message's id is the one marked: not read again.
        """
        count = len(messages) if end is None else end
        marked = self.count
        self.count = count
        if not count:
            self.first_id = self.last_id = None
            self.last_parts = 0
            return
        if not (same_list and marked):
            self.first_id = message_id(messages[0])
        last = messages[count - 1]
        self.last_id = message_id(last)
        # parts_of inlined: a walk marks the list at every request point of a history.
        parts = last.get("parts") if isinstance(last, dict) else None
        self.last_parts = len(parts) if isinstance(parts, list) else 0
