"""What each replayed request costs with a prompt cache, with the plugin and without it.

Independent of the plugin's own scheduler: it looks only at what each request sent. A
request reads from the cache the longest prefix it shares with the previous request, as long
as the cache is warm (the gap since the previous request is within the pricing's TTL, the
model is the same, and the history was not replaced by a compaction); the rest is processed
(and on Anthropic written) again. Token counts are the plugin's estimates (the fixed ratios of
``dcp_plugin.model.tokens``; a step counts at least the output it reported) plus the prompt
overhead of the history sent (system prompt, tool definitions, what the host adds), learned from
the first provider-reported usage of that history (``dcp_plugin.replay.coverage``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dcp_plugin.cost.prices import Pricing
from dcp_plugin.cost.requests import request_cost
from dcp_plugin.cost.totals import CostTotals
from dcp_plugin.model.messages import info_of, parts_of
from dcp_plugin.replay.overheads import HistoryOverheads

PatchKey = tuple[int, int, str]


# How Claude Code opens the history it sends after compacting: a user message holding the summary.
# Exports of its sessions keep every earlier message too, although none was sent again.
CONTINUATION_OPENING = "This session is being continued from a previous conversation"


def compaction_starts(messages: Sequence[Any]) -> list[int]:
    """For each request point p (index into ``messages``), where the history sent at p starts.

    OpenCode sends, once a compaction has finished, only the history from the user message
    that asked for it (it carries a ``compaction`` part) on: its answer is an assistant
    message with ``summary: true`` whose ``parentID`` is that user message. Claude Code sends,
    after compacting, the history from the user message that carries the summary on
    (:data:`CONTINUATION_OPENING`).
    """
    starts: list[int] = []
    asked: dict[str, int] = {}
    start = 0
    for index, message in enumerate(messages):
        starts.append(start)
        info = info_of(message)
        if info.get("role") == "user" and _continues(message):
            start = index
        elif info.get("role") == "user" and any(
            isinstance(p, dict) and p.get("type") == "compaction" for p in parts_of(message)
        ):
            mid = info.get("id")
            if isinstance(mid, str):
                asked[mid] = index
        elif info.get("role") == "assistant" and info.get("summary") is True and info.get("finish"):
            parent = info.get("parentID")
            if isinstance(parent, str) and parent in asked:
                start = asked[parent]
    starts.append(start)
    return starts


def _continues(message: Any) -> bool:
    """Whether a user message is a summary that a compacted history starts from (Claude Code's)."""
    for part in parts_of(message):
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            return isinstance(text, str) and text.lstrip().startswith(CONTINUATION_OPENING)
    return False


@dataclass(frozen=True, slots=True)
class SentRequest:
    """One request as the replay saw it go out."""

    start: int  # first message of the history sent (after a compaction)
    end: int  # messages[start:end] were sent
    time_ms: int
    model_key: tuple[str | None, str | None]
    pricing: Pricing
    tokens_without: int  # the messages' estimate without the plugin
    saved: int  # tokens the plugin's placeholders removed
    patches: dict[PatchKey, tuple[Any, int]]  # (message, part, field) -> (value, tokens it saves)


@dataclass(frozen=True, slots=True)
class RequestCost:
    """The cache-priced cost of one request, with and without the plugin."""

    cold: bool
    prompt_without: int
    prompt_with: int
    cached_without: int
    cached_with: int
    cost_without: float
    cost_with: float
    broke_prefix: bool  # a placeholder changed a part the previous request had sent
    rewritten: int  # tokens processed again because of that

    @property
    def saved(self) -> float:
        return self.cost_without - self.cost_with


@dataclass(slots=True, kw_only=True)
class ReplayTotals(CostTotals):
    """Sums over a replay, priced independently of the scheduler (which claims never to cost more)."""

    cold: int = 0
    cached_without: int = 0
    cached_with: int = 0
    written_without: int = 0
    written_with: int = 0
    prefix_breaks: int = 0
    per_request: list[RequestCost] = field(default_factory=list)

    def add(self, cost: RequestCost) -> None:
        self.requests += 1
        self.cold += cost.cold
        self.cost_without += cost.cost_without
        self.cost_with += cost.cost_with
        self.cached_without += cost.cached_without
        self.cached_with += cost.cached_with
        self.written_without += cost.prompt_without - cost.cached_without
        self.written_with += cost.prompt_with - cost.cached_with
        self.prefix_breaks += cost.broke_prefix
        self.rewritten += cost.rewritten
        self.tokens_saved_sent += cost.prompt_without - cost.prompt_with
        self.per_request.append(cost)

    def merge(self, other: ReplayTotals) -> None:
        """Add another replay's sums (its per-request costs stay with it)."""
        self.requests += other.requests
        self.cold += other.cold
        self.cost_without += other.cost_without
        self.cost_with += other.cost_with
        self.cached_without += other.cached_without
        self.cached_with += other.cached_with
        self.written_without += other.written_without
        self.written_with += other.written_with
        self.prefix_breaks += other.prefix_breaks
        self.rewritten += other.rewritten
        self.tokens_saved_sent += other.tokens_saved_sent


class CacheAccountant:
    """Prices a sequence of sent requests: keeps the previous one to find the shared prefix."""

    def __init__(self, message_tokens: Sequence[int], overhead: int | HistoryOverheads = 0) -> None:
        self._tokens = list(message_tokens)
        self._prefix = [0]
        for tokens in self._tokens:
            self._prefix.append(self._prefix[-1] + tokens)
        # Its own copy: an inserted message shifts the histories of this accountant only.
        known = overhead.to_dict() if isinstance(overhead, HistoryOverheads) else {0: overhead}
        self.overheads = HistoryOverheads(known)
        self._previous: SentRequest | None = None
        self.totals = ReplayTotals()

    @property
    def overhead(self) -> int:
        """The first history's prompt overhead."""
        return self.overheads.first

    def overhead_at(self, start: int) -> int:
        """The prompt overhead of the history sent from message ``start`` on."""
        return self.overheads.at(start)

    def tokens(self, start: int, end: int) -> int:
        """The messages' estimate of ``messages[start:end]`` without the plugin."""
        return self._prefix[end] - self._prefix[start]

    def insert(self, index: int, tokens: int) -> None:
        """A message of ``tokens`` put in at ``index``, where no request priced so far reached."""
        self._tokens.insert(index, tokens)
        self.overheads.insert(index)
        del self._prefix[index + 1 :]
        for value in self._tokens[index:]:
            self._prefix.append(self._prefix[-1] + value)

    def add(self, request: SentRequest) -> RequestCost:
        """Price one request after the previous one."""
        previous = self._previous
        pricing = request.pricing
        overhead = self.overhead_at(request.start)
        prompt_without = overhead + request.tokens_without
        prompt_with = prompt_without - request.saved
        cold = (
            previous is None
            or not pricing.caches
            or request.start != previous.start
            or request.model_key != previous.model_key
            or request.time_ms - previous.time_ms > pricing.ttl_seconds * 1000
        )
        broke, rewritten = False, 0
        if cold or previous is None:
            cached_without = cached_with = 0
        else:
            cached_without = overhead + previous.tokens_without
            changed = _first_change(previous.patches, request.patches)
            previous_with = overhead + previous.tokens_without - previous.saved
            if changed is None or changed >= previous.end:
                cached_with = previous_with
            else:
                saved_before = sum(t for (m, _, _), (_, t) in previous.patches.items() if m < changed)
                cached_with = overhead + self.tokens(request.start, changed) - saved_before
                broke, rewritten = True, previous_with - cached_with
        cost = RequestCost(
            cold,
            prompt_without,
            prompt_with,
            cached_without,
            cached_with,
            request_cost(prompt_without, cached_without, pricing),
            request_cost(prompt_with, cached_with, pricing),
            broke,
            rewritten,
        )
        self.totals.add(cost)
        self._previous = request
        return cost


def _first_change(before: dict[PatchKey, tuple[Any, int]], after: dict[PatchKey, tuple[Any, int]]) -> int | None:
    """The first message whose sent content differs between two requests' patches, None when none does."""
    first: int | None = None
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None and old[0] == new[0]:
            continue
        if first is None or key[0] < first:
            first = key[0]
    return first
