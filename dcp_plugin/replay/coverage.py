"""What each provider report measured: the messages its usage counts, and from that each history's overhead.

A prompt cache holds only what earlier requests sent, so a complete report counts what was added
since the previous request as input or as cache write. A report that records no cache write and
far less input than was added has lost its cache writes (some exports drop them): its cache read
is then the prompt of the previous request that reported usage, the prefix the cache held. Such a
report is scored against the estimate of that prefix, not of its own request. A report that counts
no message (the first request of a history, whose cache held only the system prompt) or whose count
fell short of the prefix it should have read (a cache miss) measures nothing the replay estimates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dcp_plugin.model.messages import info_of, is_mapping
from dcp_plugin.model.tokens import reported_usage
from dcp_plugin.replay.overheads import HistoryOverheads
from dcp_plugin.replay.requests import ImpliedRequest

# A report is judged to lack its cache writes only when at least this much was added since the
# previous one: below it, reading it either way changes the estimate by less than that.
MIN_JUDGED_TOKENS = 64


@dataclass(frozen=True, slots=True)
class Measured:
    """The usage one answer reported, and the part of its request that usage counts."""

    reported: int  # input + cache read + cache write
    begin: int
    end: int  # the usage counts the history's overhead + messages[begin:end]
    partial: bool  # no cache write recorded: it counts only the prefix read from the cache


@dataclass(frozen=True, slots=True)
class Scored:
    """One report to score the estimator by: the replay's estimate of what it counts, and what it says."""

    estimate: int
    reported: int
    partial: bool


@dataclass(frozen=True, slots=True)
class SessionReports:
    """Every request's report as the estimator error scores it, and each history's overhead."""

    overheads: HistoryOverheads
    scored: list[Scored | None]  # per request; None: no usage, not measurable, or the overhead's source
    reports: int  # requests whose answer reported usage

    @property
    def unscored(self) -> int:
        """Reports left out: those that counted no message or showed a cache miss, and each overhead's source."""
        return self.reports - sum(1 for s in self.scored if s is not None)


def lacks_cache_writes(answer: Any, added: int) -> bool:
    """Whether an answer's usage lost its cache writes: none recorded, a cache read, input below half of ``added``."""
    tokens = info_of(answer).get("tokens")
    if not is_mapping(tokens) or added < MIN_JUDGED_TOKENS:
        return False
    cache = tokens.get("cache")
    cache = cache if is_mapping(cache) else {}
    return _count(cache.get("write")) == 0 and _count(cache.get("read")) > 0 and _count(tokens.get("input")) < added / 2


def measured_reports(
    messages: Sequence[Any], requests: Sequence[ImpliedRequest], message_tokens: Sequence[int]
) -> list[Measured | None]:
    """Per request, what its answer's reported usage counts (None: no usage, or nothing the replay estimates)."""
    sums = _prefix_sums(message_tokens)
    result: list[Measured | None] = []
    previous: ImpliedRequest | None = None  # the newest request whose answer reported usage
    last: Measured | None = None  # what the previous report counted, measurable or not
    for request in requests:
        usage = reported_usage(messages[request.end]) if request.end < len(messages) else None
        if usage is None:
            result.append(None)
            continue
        # What the cache could hold: the prompt of the previous reported request of this history.
        held = previous.end if previous is not None and previous.begin == request.begin else request.begin
        previous = request
        partial = lacks_cache_writes(messages[request.end], sums[request.end] - sums[held])
        item = Measured(usage.prompt, request.begin, held if partial else request.end, partial)
        missed = partial and _missed(last, item, sums)
        last = item  # a miss is rewritten at once: the next report is judged against it
        result.append(None if item.end <= item.begin or missed else item)
    return result


def session_reports(
    messages: Sequence[Any], requests: Sequence[ImpliedRequest], message_tokens: Sequence[int]
) -> SessionReports:
    """The reports of a session as scored, with each history's overhead learned from its first measured report."""
    sums = _prefix_sums(message_tokens)
    measured = measured_reports(messages, requests, message_tokens)
    learned: dict[int, int] = {}
    scored: list[Scored | None] = []
    for item in measured:
        if item is None:
            scored.append(None)
            continue
        counted = sums[item.end] - sums[item.begin]
        if item.begin not in learned:
            # The overhead is what this report counts beyond the messages: it scores nothing.
            learned[item.begin] = max(0, item.reported - counted)
            scored.append(None)
            continue
        scored.append(Scored(learned[item.begin] + counted, item.reported, item.partial))
    reports = sum(
        1 for r in requests if r.end < len(messages) and reported_usage(messages[r.end]) is not None
    )
    return SessionReports(HistoryOverheads(learned), scored, reports)


def _missed(last: Measured | None, item: Measured, sums: Sequence[int]) -> bool:
    """Whether a report without cache writes read less than the prefix it should have: the cache missed."""
    if last is None or last.begin != item.begin:
        return False
    grew = (sums[item.end] - sums[item.begin]) - (sums[last.end] - sums[last.begin])
    return item.reported - last.reported < grew / 2


def _prefix_sums(values: Sequence[int]) -> list[int]:
    sums = [0]
    for value in values:
        sums.append(sums[-1] + value)
    return sums


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
