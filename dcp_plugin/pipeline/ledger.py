"""The tool-call ledger: one record per tool call, synced incrementally from the messages."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.pipeline.conversation import FINAL_STATUSES, is_user, message_id, parts_of


@dataclass(slots=True, eq=False)
class CallRecord:
    """What the strategies need to know about one tool call; never its content."""

    call_id: str
    tool: str
    seq: int
    message_index: int
    part_index: int
    part_id: str | None
    turn: int
    status: str
    reason: str | None = None
    tokens_saved: int = 0
    field: str | None = None
    value: Any = None


def drop_nulls(value: Any, depth: int = 0) -> Any:
    """The value with None dropped from every mapping, at every depth."""
    if depth > 200:
        return value
    if isinstance(value, dict):
        return {k: drop_nulls(v, depth + 1) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v, depth + 1) for v in value]
    return value


def signature(tool: str, tool_input: Any) -> bytes:
    """A compact digest identifying tool + input, blind to key order and null values."""
    try:
        text = json.dumps(
            drop_nulls(tool_input), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
    except (TypeError, ValueError, RecursionError):
        text = repr(tool_input)
    return hashlib.blake2b(f"{tool}\x00{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(slots=True)
class Cursor:
    """Where the previous sync stopped, and a fingerprint of the prefix it saw."""

    seen: int = 0
    first_id: str | None = None
    last_id: str | None = None
    last_parts: int = 0
    turn: int = 0
    seq: int = 0

    def continues(self, messages: list[Any]) -> bool:
        """Whether ``messages`` extends the history synced so far (no undo, no compaction)."""
        if self.seen == 0:
            return True
        if len(messages) < self.seen:
            return False
        if message_id(messages[0]) != self.first_id:
            return False
        last = messages[self.seen - 1]
        return message_id(last) == self.last_id and len(parts_of(last)) >= self.last_parts


@dataclass(slots=True)
class SyncResult:
    """Records that appeared or reached a final status in this sync, in conversation order."""

    finished: list[CallRecord] = field(default_factory=list)
    new_turns: bool = False


class Ledger:
    """All tool calls of one session, with the cursor that makes syncing incremental."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self.by_call: dict[str, CallRecord] = {}
        self.unfinished: list[CallRecord] = []
        self.cursor = Cursor()

    @property
    def turn(self) -> int:
        """The current user turn (number of user messages seen)."""
        return self.cursor.turn

    def sync(self, messages: list[Any]) -> SyncResult:
        """Record what is new since the last sync; the caller checks ``cursor.continues`` first."""
        result = SyncResult()
        cursor = self.cursor
        start = cursor.seen
        if start:
            # The last seen message may have grown (a host streaming parts into it).
            self._scan_parts(messages, start - 1, cursor.last_parts, result)
        if self.unfinished:
            self._recheck_unfinished(messages, result)
        turn_before = cursor.turn
        for index in range(start, len(messages)):
            message = messages[index]
            if is_user(message):
                cursor.turn += 1
            self._scan_parts(messages, index, 0, result)
        if len(messages) > start:
            cursor.seen = len(messages)
            if start == 0:
                cursor.first_id = message_id(messages[0])
        if cursor.seen:
            last = messages[cursor.seen - 1]
            cursor.last_id = message_id(last)
            cursor.last_parts = len(parts_of(last))
        result.new_turns = cursor.turn != turn_before
        return result

    def _scan_parts(self, messages: list[Any], index: int, first: int, result: SyncResult) -> None:
        parts = parts_of(messages[index])
        for part_index in range(first, len(parts)):
            part = parts[part_index]
            if not isinstance(part, dict) or part.get("type") != "tool":
                continue
            state = part.get("state")
            tool = part.get("tool")
            if not isinstance(state, dict) or not isinstance(tool, str):
                continue
            call_id = part.get("callID") or part.get("id") or f"{message_id(messages[index]) or index}#{part_index}"
            if not isinstance(call_id, str) or call_id in self.by_call:
                continue
            status = state.get("status")
            record = CallRecord(
                call_id=call_id,
                tool=tool,
                seq=self.cursor.seq,
                message_index=index,
                part_index=part_index,
                part_id=part.get("id") if isinstance(part.get("id"), str) else None,
                turn=self.cursor.turn,
                status=status if isinstance(status, str) else "pending",
            )
            self.cursor.seq += 1
            self.records.append(record)
            self.by_call[call_id] = record
            if record.status in FINAL_STATUSES:
                result.finished.append(record)
            else:
                self.unfinished.append(record)

    def _recheck_unfinished(self, messages: list[Any], result: SyncResult) -> None:
        still: list[CallRecord] = []
        for record in self.unfinished:
            state = self.state_of(messages, record)
            status = state.get("status") if state is not None else None
            if isinstance(status, str) and status in FINAL_STATUSES:
                record.status = status
                result.finished.append(record)
            else:
                still.append(record)
        self.unfinished = still
        result.finished.sort(key=lambda r: r.seq)

    @staticmethod
    def part_of(messages: list[Any], record: CallRecord) -> dict[str, Any] | None:
        """The record's part in ``messages``, or None when it is not where it was."""
        try:
            part = messages[record.message_index]["parts"][record.part_index]
        except (IndexError, KeyError, TypeError):
            return None
        if not isinstance(part, dict):
            return None
        if (part.get("callID") or part.get("id") or record.call_id) != record.call_id:
            return None
        return part

    @classmethod
    def state_of(cls, messages: list[Any], record: CallRecord) -> dict[str, Any] | None:
        """The record's tool state dict in ``messages``, or None."""
        part = cls.part_of(messages, record)
        state = part.get("state") if part is not None else None
        return state if isinstance(state, dict) else None
