"""The cache-aware scheduler: when a pending decision's placeholder is first written, and what each request costs.

Strategies decide *what* is obsolete; writing a placeholder into a part the provider has
already cached makes it process everything after that part again. The scheduler sits
between the two. At every request of the implied request history (see
:meth:`SessionState.update`) it writes the pending decisions whose writing pays:

- parts never sent yet (they lie after the end of the previous request): free;
- everything, when the cache is cold (the gap since the previous request exceeds the
  pricing's TTL, the model or provider changed, or this is the first request);
- the deepest batch of pending decisions that pays back within the requests the session is
  expected to make while the cache stays warm, and whose immediate extra cost is covered by
  what pruning has already saved in this session (the "bank") plus the ``overdraft``: a share
  of what the session has cost so far without the plugin that a rewrite may spend ahead of
  the savings. So a session never costs more than that share above what it would cost without
  the plugin, whenever it ends; with no overdraft, never more at all, and a warm session that
  has saved nothing yet (an autonomous run, no pause past the cache's lifetime) never prunes
  what it has already sent;
- at the auto-compact tier of the budget ladder, any batch the bank covers (pruning is
  cheaper than the compaction the host would otherwise run);
- a user's ``/dcp sweep`` at once (see :meth:`Scheduler.force`).

Removing R tokens whose earliest changed part lies S tokens before the end of the previous
request, at read price r and write price w, costs ``w·(S − R) − r·S`` more now and saves
``r·R`` on every later warm request: it pays after n* = (w·(S − R) − r·S) / (r·R)
requests. The expected number of further warm requests is taken to be the number of warm
requests the current run has already lasted (a run that has lasted k requests is expected to
last about k more), so a batch applies when n* ≤ k.

Everything here derives from the message list (timestamps, model ids, estimated tokens) and
the config, never the wall clock, so a restart or a replay decides exactly the same.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple, cast

from mypy_extensions import mypyc_attr

from dcp_plugin.cost.prices import Pricing
from dcp_plugin.cost.requests import request_cost
from dcp_plugin.cost.totals import CostTotals
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.fenwick import Fenwick

# Batches evaluated per request at most: the shallowest pending positions and an even spread
# of the deeper ones, so a session with thousands of waiting prunes costs the same per request.
MAX_CANDIDATES = 32

ModelKey = tuple[str | None, str | None] | None


# Not frozen: a session keeps one per model and sets its size and time at each request it
# schedules (a first sight schedules thousands); the scheduler copies what it keeps of one.
@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class Point:
    """One request of the implied history: how many messages it held, when, and to which model."""

    count: int
    time_ms: int
    model_key: ModelKey
    pricing: Pricing
    # Whether the context reached the auto-compact threshold: asked only where it decides (a batch
    # that does not pay back), since working out the context there costs a read of the history.
    auto_tier: Callable[[], bool]


class PointCost(NamedTuple):
    """What one request cost, in base-input-token units, with the plugin and without it."""

    count: int  # type: ignore[assignment]  # the messages the request held; shadows tuple.count, never called on it
    time_ms: int
    cold: bool
    tokens_without: int  # prompt tokens without the plugin (messages + fixed overhead)
    tokens_with: int
    cost_without: float
    cost_with: float
    rewritten: int  # tokens processed again because a placeholder changed an already-cached part
    applied: int  # decisions whose placeholders were first written in this request
    rule: str  # why they were written now: cold, tail, pays, auto, sweep, immediate, or "" for none

    @property
    def saved(self) -> float:
        """Net saving of this request (negative: the plugin made it cost more)."""
        return self.cost_without - self.cost_with


# ``_point_cost((count, ...))`` is ``PointCost(count, ...)`` without the named tuple's Python-level
# constructor: one is built at every request of a first sight (see tokens.estimate_of).
_point_cost = cast(
    Callable[[tuple[int, int, bool, int, int, float, float, int, int, str]], PointCost], partial(tuple.__new__, PointCost)
)


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class _Previous:
    count: int
    time_ms: int
    model_key: ModelKey
    sent_with: int
    sent_without: int
    saved: int


_SEQ = operator.attrgetter("record.seq")


def _more_saved(decision: Decision) -> int:
    """What writing a pending decision removes beyond the decision it replaces (a cut grown, a cut made whole)."""
    replaced = decision.replaces
    return decision.tokens_saved - (replaced.tokens_saved if replaced is not None else 0)


@mypyc_attr(allow_interpreted_subclasses=True)
class Scheduler:
    """Pending decisions of one session, the tokens each message sends, and the cost of each request."""

    # Slots: a request of a first sight reads a dozen of these, between which the strategies'
    # work has evicted the instance's dict from the processor's caches.
    __slots__ = (
        "enabled",
        "overdraft",
        "overhead",
        "saved",
        "bank",
        "run",
        "totals",
        "_sent",
        "_waiting",
        "sent_prefix",
        "_pending",
        "_pending_at",
        "_dirty_from",
        "_previous",
        "_latest",
        "_log",
        "_pricing",
        "_caches",
        "_ttl_ms",
    )

    def __init__(self, enabled: bool = True, overdraft: float = 0.0, *, log_costs: bool = False) -> None:
        self.enabled = enabled
        self.overdraft = overdraft  # share of the no-plugin cost so far a rewrite may run ahead of the bank
        self.overhead = 0  # prompt tokens outside the messages (system prompt, tool definitions)
        self.saved = 0  # tokens the applied decisions in force remove from each request
        self.bank = 0.0  # net saving so far: what a rewrite may spend
        self.run = 0  # consecutive warm requests up to the previous one
        self.totals = CostTotals()
        self._sent = Fenwick()  # per message: tokens as sent now
        self._waiting = Fenwick()  # per message: tokens its pending decisions would remove
        # Tokens the first ``end`` messages send now: the tree's own query, asked several times at
        # every request of a first sight (the meter, the context's size), without a call around it.
        self.sent_prefix: Callable[[int], int] = self._sent.prefix
        self._pending: dict[int, list[Decision]] = {}
        self._pending_at: list[int] = []  # sorted message indexes with pending decisions
        self._dirty_from: int | None = None  # earliest message changed outside a request (a sweep)
        self._previous: _Previous | None = None
        # The latest request's cost: the host counts only the request it sends. Every
        # request's cost is kept only when asked (``log_costs``: a chart, a test): a first sight of
        # 20,000 messages schedules 17,000 requests, whose rows would be built, and scanned by the
        # collector, only to be dropped.
        self._latest: PointCost | None = None
        self._log: list[PointCost] | None = [] if log_costs else None
        # The prices of the latest request and what ``at`` reads of them, worked out once per Pricing.
        self._pricing: Pricing | None = None
        self._caches = False
        self._ttl_ms = 0.0

    # -- what the session feeds in -----------------------------------------------------------
    @property
    def messages(self) -> int:
        """How many messages have a token count."""
        return len(self._sent)

    def add_message(self, tokens: int) -> None:
        """The next message's estimated tokens, as stored (no placeholder yet)."""
        self._sent.append(tokens)
        self._waiting.append(0)

    @property
    def pending(self) -> int:
        """Decisions waiting for their placeholder to pay."""
        return sum(len(found) for found in self._pending.values())

    @property
    def pending_tokens(self) -> int:
        """Tokens the waiting decisions would remove from each request."""
        return self._waiting.prefix(len(self._waiting))

    def pend(self, decision: Decision) -> None:
        """A new decision, waiting for its placeholder to be written."""
        index = decision.record.message_index
        found = self._pending.get(index)
        if found is None:
            self._pending[index] = [decision]
            bisect.insort(self._pending_at, index)
        else:
            found.append(decision)
        self._waiting.add(index, _more_saved(decision))

    def unpend(self, decision: Decision) -> None:
        """Drop a waiting decision (a later one on the same field replaced it)."""
        index = decision.record.message_index
        found = self._pending.get(index, [])
        if decision in found:
            found.remove(decision)
            self._waiting.add(index, -_more_saved(decision))
            if not found:
                del self._pending[index]
                self._pending_at.pop(bisect.bisect_left(self._pending_at, index))

    def force(self, decisions: list[Decision], point: int) -> None:
        """Write these pending decisions now, outside any request (a user's sweep)."""
        for decision in decisions:
            self.unpend(decision)
            self._apply(decision, point)
            self._mark_dirty(decision.record.message_index)

    def take_costs(self) -> list[PointCost]:
        """The costs of the requests scheduled since the last call; none unless built with ``log_costs``."""
        out = self._log
        if out is None:
            return []
        self._log = []
        return out

    def take_latest_cost(self) -> PointCost | None:
        """The cost of the latest request scheduled since the last call, once."""
        latest, self._latest = self._latest, None
        return latest

    # -- one request ------------------------------------------------------------------------
    def at(self, point: Point, number: int) -> list[Decision]:
        """Schedule request ``number`` (the ``point``): write what pays, account its cost; the decisions written."""
        previous = self._previous
        pricing = point.pricing
        if pricing is not self._pricing:
            # Asked at every request of a first sight, where the prices are one object throughout.
            self._pricing, self._caches, self._ttl_ms = pricing, pricing.caches, pricing.ttl_seconds * 1000
        cold = (
            previous is None
            or not self._caches
            or point.time_ms - previous.time_ms > self._ttl_ms
            or point.model_key != previous.model_key
        )
        free_from = 0 if (cold or not self.enabled or previous is None) else previous.count
        dirty_from = self._dirty_from
        if dirty_from is not None and dirty_from < free_from:
            free_from = dirty_from
        rule = ("cold" if cold else "immediate") if free_from == 0 else "tail"
        batch_from = free_from
        pending_at = self._pending_at
        if pending_at and pending_at[0] < free_from and not cold and self.enabled and previous is not None:
            chosen, why = self._choose(previous, pricing, point.auto_tier, free_from)
            if chosen is not None:
                batch_from, rule = chosen, why
        applied = self._apply_from(batch_from, number) if pending_at and pending_at[-1] >= batch_from else []
        if not applied:
            rule = ""
        self._account(point, previous, cold, applied, rule)
        return applied

    def _choose(
        self, previous: _Previous, pricing: Pricing, auto_tier: Callable[[], bool], free_from: int
    ) -> tuple[int | None, str]:
        """The deepest-paying batch start among the pending positions before ``free_from``."""
        r, w = pricing.read, pricing.write
        waiting, sent = self._waiting, self._sent
        waiting_before_free = waiting.prefix(free_from)  # every candidate starts before free_from
        tail_tokens = waiting.total - waiting_before_free
        # What this request saves anyway: the prefix already pruned, read cheaper, and free prunes.
        base = r * previous.saved + w * tail_tokens
        horizon = max(1, self.run)
        sent_with = previous.sent_with
        already = sent_with - sent.prefix(free_from) if free_from < previous.count else 0
        own = self.bank + base
        # The overdraft buys only rewrites that pay back: at the auto tier a batch that does not is
        # bought with what the session saved, as the compaction it stands in for would be.
        funds = own + self.overdraft * self.totals.cost_without
        # The best batch that does not pay back, and the best that does (by gain, then depth): one that
        # pays always beats one that does not (its gain is not negative), so the auto tier, which alone
        # buys the latter, is asked only when no batch that pays is affordable.
        found: list[tuple[float, int] | None] = [None, None]
        for start in self._candidates(free_from):
            removed = waiting_before_free - waiting.prefix(start)
            span = sent_with - sent.prefix(start)
            extra = (w - r) * (span - already) - w * removed
            pays = extra <= horizon * r * removed
            if extra > (funds if pays else own):
                continue
            gain = horizon * r * removed - extra
            kept = found[pays]
            if kept is None or gain > kept[0] or (gain == kept[0] and start < kept[1]):
                found[pays] = (gain, start)
        unpaid, paid = found
        if paid is not None:
            return paid[1], "pays"
        if unpaid is not None and auto_tier():
            return unpaid[1], "auto"
        return None, ""

    def _candidates(self, free_from: int) -> list[int]:
        end = bisect.bisect_left(self._pending_at, free_from)
        positions = self._pending_at[:end]
        if len(positions) <= MAX_CANDIDATES:
            return positions
        half = MAX_CANDIDATES // 2
        deep = positions[:-half]
        step = -(-len(deep) // half)
        return deep[::step] + positions[-half:]

    def _apply_from(self, start: int, number: int) -> list[Decision]:
        """Write every pending decision from message ``start`` on (the caller found one there); them, in call order."""
        pending_at = self._pending_at
        cut = bisect.bisect_left(pending_at, start)
        indexes = pending_at[cut:]
        del pending_at[cut:]
        applied: list[Decision] = []
        pending, waiting, apply = self._pending, self._waiting, self._apply
        for index in indexes:
            for decision in pending.pop(index):
                waiting.add(index, -_more_saved(decision))
                apply(decision, number)
                applied.append(decision)
        if len(applied) > 1:
            applied.sort(key=_SEQ)
        return applied

    def _apply(self, decision: Decision, number: int) -> None:
        """Write ``decision`` in request ``number``: its message sends what it saves less."""
        decision.applied_at = number
        removed = decision.tokens_saved
        replaced = decision.replaces
        if replaced is not None and not replaced.superseded:
            # The same field: the new value takes over in this very write, so no extra rewrite.
            replaced.superseded = True
            removed -= replaced.tokens_saved
        self._sent.add(decision.record.message_index, -removed)
        self.saved += removed

    def _mark_dirty(self, index: int) -> None:
        self._dirty_from = index if self._dirty_from is None else min(self._dirty_from, index)

    def _account(self, point: Point, previous: _Previous | None, cold: bool, applied: list[Decision], rule: str) -> None:
        """Price the request with and without the plugin, add it to the totals and remember it as the previous one."""
        pricing = point.pricing
        sent = self._sent
        saved, overhead = self.saved, self.overhead
        sent_with = sent.prefix(point.count)
        sent_without = sent_with + saved
        prompt_with = sent_with + overhead
        prompt_without = sent_without + overhead
        rewritten = 0
        if cold or previous is None:
            cost_with = request_cost(prompt_with, 0, pricing)
            cost_without = request_cost(prompt_without, 0, pricing)
        else:
            # The cache holds the prefix up to the earliest message changed since the previous request.
            before = unchanged = previous.count
            for decision in applied:
                index = decision.record.message_index
                if index < unchanged:
                    unchanged = index
            dirty_from = self._dirty_from
            if dirty_from is not None and dirty_from < unchanged:
                unchanged = dirty_from
            cached = sent.prefix(unchanged)
            if unchanged < before:
                rewritten = sent.prefix(before) - cached
            cost_with = request_cost(prompt_with, overhead + cached, pricing)
            cost_without = request_cost(prompt_without, overhead + previous.sent_without, pricing)
        latest = self._latest = _point_cost(
            (point.count, point.time_ms, cold, prompt_without, prompt_with, cost_without, cost_with, rewritten, len(applied), rule)
        )
        if self._log is not None:
            self._log.append(latest)
        totals = self.totals
        totals.requests += 1
        totals.cost_without += cost_without
        totals.cost_with += cost_with
        totals.rewritten += rewritten
        totals.tokens_saved_sent += saved
        self.bank += cost_without - cost_with  # the request's PointCost.saved
        self.run = 1 if cold else self.run + 1
        if previous is None:
            self._previous = _Previous(point.count, point.time_ms, point.model_key, sent_with, sent_without, saved)
        else:
            # Updated in place: nothing else holds it, and a request of a first sight builds one less object.
            previous.count, previous.time_ms, previous.model_key = point.count, point.time_ms, point.model_key
            previous.sent_with, previous.sent_without, previous.saved = sent_with, sent_without, saved
        self._dirty_from = None

    def describe(self) -> dict[str, float]:
        """The numbers the reports show: pending, bank and totals."""
        totals = self.totals
        return {
            "pending": self.pending,
            "pending_tokens": self.pending_tokens,
            "requests": totals.requests,
            "cost_without": round(totals.cost_without, 1),
            "cost_with": round(totals.cost_with, 1),
            "net_saved": round(totals.saved, 1),
            "rewritten_tokens": totals.rewritten,
        }
