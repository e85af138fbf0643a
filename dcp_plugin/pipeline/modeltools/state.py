"""One session's model tools: the judged calls, the loop guard, the prunable outputs and the list's schedule.

Everything here is derived from the history in conversation order (a new epoch starts it
over), so a restart, a replay or a rewritten history arrives at the same verdicts, the same
lists at the same places and the same bytes.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import dcp_plugin.pipeline.modeltools.texts as texts
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.model.messages import Message, ToolState, output_is_cleared
from dcp_plugin.pipeline.decisions import CallRecord
from dcp_plugin.pipeline.labels import call_label
from dcp_plugin.pipeline.ledger import Ledger
from dcp_plugin.pipeline.modeltools.definitions import PRUNING_TOOLS, enabled_tools
from dcp_plugin.pipeline.modeltools.guard import LoopGuard
from dcp_plugin.pipeline.modeltools.judge import Verdict, protected_tools
from dcp_plugin.pipeline.sizes import freed_by_discard, output_size

# What a written list is recorded as: plugin text added to an output, never a prune.
LIST_STRATEGY = "dcp.list"
# The list names at most this many outputs, largest first: about 15 tokens a row, so a full
# list costs about 240 tokens; the rest are summed in one line (any valid id still works).
LIST_LIMIT = 12
# An output that would free fewer tokens than this is not worth a row of the list (a row costs
# about 15 tokens, and a discard call about 40 more).
LIST_MIN_TOKENS = 50
# A list is due before `nudgeFrequency` tool results when the prunable outputs it would not
# repeat hold at least as much as the last list named, and at least this many `minTokens`.
CHANGED_ENOUGH = 10
# Tier levels: a nudge is written when the context first reaches a higher one.
TIER_LEVELS = {"below-warn": 0, "warn": 1, "auto": 2, "hard": 3}


@dataclass(frozen=True, slots=True)
class ListPoint:
    """The request a prunable list may go on: what it holds past the previous one, and how full its context is."""

    seen: int  # messages the previous request held
    count: int  # messages this request holds
    tier: str  # the budget tier its context is in
    tokens: int  # its context, estimated
    window: int  # the model's context window


@dataclass(frozen=True, slots=True)
class PrunableList:
    """A list to write: the output it is appended to, and its text."""

    host: CallRecord
    text: str


@dataclass(frozen=True, slots=True)
class Tally:
    """A tool's judged calls in this session: accepted, refused, outputs pruned or restored, their tokens."""

    accepted: int = 0
    refused: int = 0
    outputs: int = 0
    tokens: int = 0


class ModelTools:
    """The model tools of one session epoch (see the module docstring)."""

    def __init__(self, config: DcpConfig, offered: bool) -> None:
        self.config = config
        self.offered = offered
        self.names = frozenset(enabled_tools(config.tools)) if offered else frozenset()
        # Fixed for the epoch (the names are): asked for every call and every request of a history.
        self._lists = bool(self.names & PRUNING_TOOLS)
        self.protected = protected_tools(config)
        self.guard = LoopGuard()
        self.verdicts: dict[str, Verdict] = {}
        # Verdicts on calls judged where the host ran them (at their request's point), kept until
        # the calls finish and are taken in: call id -> verdict.
        self.pending: dict[str, Verdict] = {}
        self.new_restores: list[Verdict] = []
        # Outputs the model may prune (not protected, not pruned yet): call id -> (record, tokens a
        # discard frees), their count and tokens, and a heap of them, largest first, from which
        # pruned ones are dropped lazily (a list names the largest without sorting them all).
        self._candidates: dict[str, tuple[CallRecord, int]] = {}
        self._heap: list[tuple[int, int, str]] = []
        self._total = 0
        self._results = 0  # completed tool results seen
        self._listed_results: int | None = None  # _results when the last list was written
        self._listed: frozenset[str] = frozenset()  # ids the last list named
        self._covered_seq = -1  # the newest call the last list named or summed up
        self._newest_seq = -1  # the newest candidate so far
        self._covered_tokens = 0
        self._fresh = 0  # tokens of candidates newer than the last list
        self._nudged = 0  # the highest tier level nudged at since the context was below warn

    @property
    def lists(self) -> bool:
        """Whether prunable lists are written: the host offers the tools and discard or extract is on."""
        return self._lists

    def owns(self, record: CallRecord) -> bool:
        """Whether a call is a call of one of this session's tools (judged, never pruned by a strategy)."""
        return record.tool in self.names

    # -- what the session feeds in ----------------------------------------------------------
    def observe(self, record: CallRecord, state: ToolState, kept: bool) -> None:
        """A finished call: count its result and remember it when the model may prune its output.

        ``kept``: a protected path or a pin by the user; never the model's to prune.
        """
        if not self._lists or record.status != "completed":
            return
        self._results += 1
        if kept or record.tool in self.protected or output_is_cleared(state) or state.get("output") is None:
            return
        # What a discard frees (the input stays): the size discard's answer and the toast give it too.
        size = freed_by_discard(state, record.ident)
        if size >= LIST_MIN_TOKENS and record.call_id not in self._candidates:
            self._candidates[record.call_id] = (record, size)
            heapq.heappush(self._heap, (-size, record.seq, record.call_id))
            self._newest_seq = max(self._newest_seq, record.seq)
            self._total += size
            self._fresh += size

    def pruned(self, record: CallRecord) -> None:
        """A decision took a call's output: it is no longer the model's to prune."""
        found = self._candidates.pop(record.call_id, None)
        if found is not None:
            self._total -= found[1]
            if record.seq > self._covered_seq:
                self._fresh -= found[1]

    def record(self, verdicts: Sequence[Verdict], steps: Sequence[int], turns: Sequence[int]) -> None:
        """Take in the verdicts on the calls of one message, in order (the guard and the tallies)."""
        for verdict, step, turn in zip(verdicts, steps, turns, strict=False):
            self.verdicts[verdict.call_id] = verdict
            self.guard.record(self.config.tools, verdict.accepted, verdict.pruned, step, turn, verdict.restored, verdict.part)
            if verdict.accepted and not verdict.prunes:
                self.new_restores.append(verdict)

    def take_new_restores(self) -> list[Verdict]:
        """Restores judged since the last call (statistics)."""
        out, self.new_restores = self.new_restores, []
        return out

    def tallies(self) -> dict[str, Tally]:
        """Per tool: its judged calls in this session."""
        out: dict[str, Tally] = {}
        for verdict in self.verdicts.values():
            t = out.get(verdict.tool, Tally())
            if verdict.accepted:
                out[verdict.tool] = Tally(t.accepted + 1, t.refused, t.outputs + verdict.outputs, t.tokens + verdict.tokens)
            else:
                out[verdict.tool] = Tally(t.accepted, t.refused + 1, t.outputs, t.tokens)
        return out

    # -- what the model may prune -----------------------------------------------------------
    def _may_prune(self, record: CallRecord, before: int, turn: int) -> bool:
        tp = self.config.turn_protection
        return record.message_index < before and not (tp.enabled and turn - record.turn < tp.turns)

    def prunable_ids(self, before: int, turn: int) -> list[str]:
        """The ids of the outputs the model may prune in a request holding the first ``before`` messages, largest first."""
        found = [(r, size) for r, size in self._candidates.values() if self._may_prune(r, before, turn)]
        return [record.ident or record.call_id for record, _ in sorted(found, key=_largest_first)]

    def largest(self, before: int, turn: int, count: int) -> list[tuple[CallRecord, int]]:
        """The ``count`` largest outputs the model may prune in a request holding the first ``before`` messages."""
        heap = self._heap
        found: list[tuple[CallRecord, int]] = []
        kept: list[tuple[int, int, str]] = []
        while heap and len(found) < count:
            item = heapq.heappop(heap)
            entry = self._candidates.get(item[2])
            if entry is None:
                continue  # pruned since: gone for good
            kept.append(item)
            if self._may_prune(entry[0], before, turn):
                found.append(entry)
        for item in kept:
            heapq.heappush(heap, item)
        return found

    def _rest(self, before: int, turn: int, listed: set[str], under: int) -> tuple[int, int, int]:
        """(how many, their tokens, the largest) of the outputs the model may prune that the list leaves out."""
        sizes = [
            size
            for record, size in self._candidates.values()
            if record.call_id not in listed and self._may_prune(record, before, turn)
        ]
        return len(sizes), sum(sizes), max(sizes, default=under)

    # -- the list ---------------------------------------------------------------------------
    def due_list(self, ledger: Ledger, messages: Sequence[Message], directory: str, at: ListPoint) -> PrunableList | None:
        """The list to append to the newest tool result of the request ``at`` names, if one is due.

        The list goes on a result the model has not seen yet and names only outputs it has seen, never on every request:
        after ``nudgeFrequency`` results when the list would change, sooner when enough new
        prunable tokens arrived, and when the context first reaches a higher tier (with a nudge).
        """
        seen, tier = at.seen, at.tier
        level = TIER_LEVELS.get(tier, 0)
        if level == 0:
            self._nudged = 0
        if not self.lists:
            return None
        tools = self.config.tools
        step, turn = ledger.steps + 1, ledger.turn
        if self.guard.paused(turn) or self.guard.cooldown_left(tools, step):
            return None
        # Cheap tests first: this runs before every request, the prunable outputs are only
        # gathered (and sorted) when a list may be due.
        nudge = level > self._nudged
        since = self._results - (self._listed_results or 0)
        changed = self._listed_results is not None and self._fresh >= max(
            self._covered_tokens, CHANGED_ENOUGH * tools.min_tokens
        )
        if not (nudge or changed or since >= tools.nudge_frequency):
            return None
        host = _host(ledger, messages, seen, at.count)
        if host is None:
            return None
        shown = self.largest(seen, turn, LIST_LIMIT)
        ids = frozenset(record.ident or record.call_id for record, _ in shown)
        due = nudge or changed or (since >= tools.nudge_frequency and ids != self._listed)
        if self._total < max(1, tools.min_tokens) or not shown or not due:
            # Nothing worth a list, or the same list again: look again after nudgeFrequency more results.
            if not nudge:
                self._listed_results = self._results
            return None
        # The output the list goes on is new to the model: listed with its id (it may prune it
        # from the next request on) rather than hidden in the rest.
        own = self._candidates.get(host.call_id)
        listed = sorted([*shown, own], key=_largest_first) if own is not None else shown
        rows = []
        for record, _ in listed:
            state = Ledger.state_of(messages, record) or {}
            label = call_label(record.tool, state.get("input"), directory)
            rows.append((record.ident or record.call_id, label, output_size(state)))
        rest = self._rest(seen, turn, {record.call_id for record, _ in listed}, shown[-1][1])
        this = host.ident or host.call_id
        text = texts.prunable_list(rows, rest, texts.nudge(tier, at.tokens, at.window) if nudge else None, this)
        self._listed_results = self._results
        self._listed = ids
        self._covered_seq = self._newest_seq
        self._covered_tokens = self._total
        self._fresh = 0
        if nudge:
            self._nudged = level
        return PrunableList(host, text)


def _largest_first(entry: tuple[CallRecord, int]) -> tuple[int, int]:
    """Largest first; of equal ones the older first (the heap's order too)."""
    return -entry[1], entry[0].seq


def _host(ledger: Ledger, messages: Sequence[Message], seen: int, count: int) -> CallRecord | None:
    """The newest completed tool result the model has not seen yet (between ``seen`` and ``count``), to append to."""
    for record in reversed(ledger.records):
        if record.message_index < seen:
            return None
        if record.message_index >= count or record.status != "completed":
            continue
        if record.output_decision is not None or record.list_decision is not None:
            continue
        state = Ledger.state_of(messages, record)
        if state is not None and isinstance(state.get("output"), str) and not output_is_cleared(state):
            return record
    return None
