"""The tool-call ledger: one record per tool call, synced incrementally from the messages."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from mypy_extensions import mypyc_attr

from dcp_plugin.model.continuity import Continuity, judge
from dcp_plugin.model.history import HistoryMark
from dcp_plugin.model.jsontext import CompactJson
from dcp_plugin.model.messages import (
    FINAL_STATUSES,
    Message,
    ToolState,
    call_id_of,
    locate,
    message_id,
)
from dcp_plugin.pipeline.decisions import CallRecord
from dcp_plugin.pipeline.ids import assign_id


def drop_nulls(value: object, depth: int = 0) -> object:
    """The value with None dropped from every mapping, at every depth."""
    if depth > 200:
        return value
    # Only containers recurse: a call per scalar (most of a tool input) would return it as it is.
    if isinstance(value, dict):
        return {
            k: drop_nulls(v, depth + 1) if isinstance(v, (dict, list)) else v
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [drop_nulls(v, depth + 1) if isinstance(v, (dict, list)) else v for v in value]
    return value


# Built once: json.dumps with these arguments would build an encoder again for every signed call.
_SORTED_JSON = CompactJson(sort_keys=True)


def signature(tool: str, tool_input: object) -> bytes:
    """A compact digest identifying tool + input, blind to key order and null values."""
    try:
        text = _SORTED_JSON.encode(drop_nulls(tool_input))
    except (TypeError, ValueError, RecursionError):
        text = repr(tool_input)
    return hashlib.blake2b(f"{tool}\x00{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class SyncResult:
    """Records that appeared or reached a final status in this sync, in conversation order, with their tool states."""

    finished: list[CallRecord] = field(default_factory=list)
    states: list[ToolState] = field(default_factory=list)  # finished[i]'s tool state, as read by this sync
    new_turns: bool = False


@mypyc_attr(allow_interpreted_subclasses=True)
class Ledger:
    """All tool calls of one session, with the mark that makes syncing incremental."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []
        self.by_call: dict[str, CallRecord] = {}
        self.by_ident: dict[str, CallRecord] = {}
        self.unfinished: list[CallRecord] = []
        self.mark = HistoryMark()
        self.message_ids: list[str | None] = []  # per index, to check a resend from an index
        self.turn = 0  # the current user turn (number of user messages seen)
        self.steps = 0  # assistant messages seen (the model's steps)
        self.step_at: list[int] = []  # per message index: assistant messages up to and including it
        self._seq = 0

    def follows(self, messages: Sequence[Message], claim: Continuity | None = None, *, every_id: bool = False) -> Continuity:
        """The continuity verdict on ``messages`` against what this ledger read (:func:`~dcp_plugin.model.continuity.judge`).

        A ``rewritten`` verdict means the caller starts over; any other can be synced incrementally.
        """
        return judge(self.mark, self.message_ids, messages, claim, every_id=every_id)

    def sync(
        self,
        messages: Sequence[Message],
        changed_from: int | None = None,
        end: int | None = None,
        *,
        rescan: bool = True,
    ) -> SyncResult:
        """Record what is new in the first ``end`` messages (default: all) since the last sync.

        The caller asks :meth:`follows` first. ``rescan=False``: the messages seen so far
        were scanned in this very list, unchanged since (the same walk), so the newest of them
        cannot have gained parts and is not read again.
        """
        end = len(messages) if end is None else end
        start = self.mark.count
        result = SyncResult([], [], False)  # positional: built at every request point of a history
        if end < start:
            return result
        # Within one walk (no rescan, no resend) no seen message is read again: a walk syncs at
        # every request point of a history, so the rescan's bounds are not worked out there.
        if rescan or changed_from is not None:
            rescan_from = start - 1 if start and rescan else start
            if changed_from is not None and changed_from < rescan_from:
                rescan_from = changed_from
            # Seen messages may have grown: a host streaming parts, or a resend from an index.
            self._scan(messages, rescan_from, min(start, end), result, new=False)
        if self.unfinished:
            self._recheck_unfinished(messages, result)
        if end > start:
            turn_before = self.turn
            self._scan(messages, start, end, result, new=True)
            result.new_turns = self.turn != turn_before
        if end:
            self.mark.advance(messages, end, same_list=not rescan)
            ids = self.message_ids
            if len(ids) < end:  # usually every id was read with its message's role
                for i in range(len(ids), end):
                    ids.append(message_id(messages[i]))
        return result

    def _scan(self, messages: Sequence[Message], start: int, end: int, result: SyncResult, *, new: bool) -> None:
        """Record the calls of the messages from ``start`` to ``end`` not recorded yet.

        ``new``: the messages were never seen before: their roles (turns and steps) and ids are read too.
        """
        by_call = self.by_call
        ids = self.message_ids
        step_at = self.step_at
        # The ids list nearly always ends where the mark does: each new message's id is then read
        # with its role, from the info dict read once, and is the owner of the message's calls.
        ids_along = new and len(ids) == start
        for index in range(start, end):
            message = messages[index]
            if new:
                info = message.get("info") if isinstance(message, dict) else None
                if isinstance(info, dict):
                    role = info.get("role")
                    if ids_along:
                        value = info.get("id")
                        ids.append(value if isinstance(value, str) and value else None)
                else:
                    role = None
                    if ids_along:
                        ids.append(None)
                if role == "user":
                    self.turn += 1
                elif role == "assistant":
                    self.steps += 1
                step_at.append(self.steps)
            # parts_of inlined: this runs for every message of a history.
            parts = message.get("parts") if isinstance(message, dict) else None
            if not isinstance(parts, list):
                continue
            owner: str | None = None  # the message's id, read at its first new call
            owner_read = False
            for part_index, part in enumerate(parts):
                if not isinstance(part, dict) or part.get("type") != "tool":
                    continue
                state = part.get("state")
                tool = part.get("tool")
                if not isinstance(state, dict) or not isinstance(tool, str):
                    continue
                # call_id_of's first rule inlined: a tool part nearly always has its callID.
                call_id = part.get("callID")
                if not (isinstance(call_id, str) and call_id):
                    call_id = call_id_of(part, message, index, part_index)
                if call_id in by_call:
                    continue
                if not owner_read:
                    owner, owner_read = ids[index] if ids_along else message_id(message), True
                status = state.get("status")
                if not isinstance(status, str):
                    status = "pending"
                part_id = part.get("id")
                ident = assign_id(call_id, self.by_ident)
                # Positional, in the field order: built once per call of a history.
                record = CallRecord(
                    call_id,
                    tool,
                    self._seq,
                    index,
                    part_index,
                    part_id if isinstance(part_id, str) else None,
                    owner,
                    self.turn,
                    status,
                    ident,
                    step_at[index] if index < len(step_at) else self.steps,
                )
                self._seq += 1
                self.records.append(record)
                by_call[call_id] = record
                self.by_ident[ident] = record
                if status in FINAL_STATUSES:
                    result.finished.append(record)
                    result.states.append(cast(ToolState, state))
                else:
                    self.unfinished.append(record)

    def _recheck_unfinished(self, messages: Sequence[Message], result: SyncResult) -> None:
        still: list[CallRecord] = []
        for record in self.unfinished:
            state = self.state_of(messages, record)
            status = state.get("status") if state is not None else None
            if state is not None and isinstance(status, str) and status in FINAL_STATUSES:
                record.status = status
                result.finished.append(record)
                result.states.append(state)
            else:
                still.append(record)
        self.unfinished = still
        if len(result.finished) > 1:
            pairs = sorted(zip(result.finished, result.states, strict=True), key=lambda pair: pair[0].seq)
            result.finished = [record for record, _ in pairs]
            result.states = [state for _, state in pairs]

    @staticmethod
    def state_of(messages: Sequence[Message], record: CallRecord) -> ToolState | None:
        """The record's tool state dict in ``messages``, or None (:func:`~dcp_plugin.model.messages.locate`)."""
        return locate(messages, record)
