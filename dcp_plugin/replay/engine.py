"""Replays a recorded session request by request through a real pluggy host, and measures it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pluggy

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.host import hostspec
from dcp_plugin.host.plugin import DcpPlugin
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.host.tracing import trace_hooks
from dcp_plugin.model.messages import info_of, locate, message_time, session_id_of
from dcp_plugin.model.refs import ModelRef, model_ref
from dcp_plugin.model.tokens import estimate_message_tokens, reported_usage
from dcp_plugin.pipeline.modeltools import NAMES as TOOL_NAMES
from dcp_plugin.pipeline.patches import Patches
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.replay.anchors import AnchorIndex, AnchorTotals
from dcp_plugin.replay.pricing import (
    CacheAccountant,
    PatchKey,
    ReplayTotals,
    SentRequest,
    compaction_starts,
)


@dataclass
class RequestRow:
    """One model request of the replayed session, with what it cost under prompt caching."""

    request: int
    messages: int
    tokens_without: int
    tokens_with: int
    pruned_calls: int
    ms: float
    cold: bool = False
    cache_read_without: int = 0
    cache_read_with: int = 0
    cost_without: float = 0.0
    cost_with: float = 0.0
    prefix_break: bool = False
    rewritten: int = 0
    saved_by: dict[str, int] = field(default_factory=dict)  # tokens each strategy's placeholders removed from it


@dataclass
class ReplayReport:
    """Everything `dcp replay` prints."""

    session: str
    messages: int
    tool_calls: int
    pricing: str = "auto"
    scheduler: bool = True
    overhead: int = 0
    requests: list[RequestRow] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)
    saved_final: dict[str, int] = field(default_factory=dict)
    costs: ReplayTotals = field(default_factory=ReplayTotals)
    anchors: AnchorTotals = field(default_factory=AnchorTotals)

    @property
    def total_without(self) -> int:
        return sum(r.tokens_without for r in self.requests)

    @property
    def total_with(self) -> int:
        return sum(r.tokens_with for r in self.requests)

    def timing(self) -> dict[str, float]:
        """Median, p95 and max milliseconds per request."""
        times = sorted(r.ms for r in self.requests) or [0.0]
        return {
            "median_ms": statistics.median(times),
            "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))],
            "max_ms": times[-1],
        }

    def cost_dict(self) -> dict[str, Any]:
        """The cost totals, in base-input-token units (1 = one uncached input token at list price)."""
        c = self.costs
        return {
            "pricing": self.pricing,
            "scheduler": self.scheduler,
            "prompt_overhead_tokens": self.overhead,
            "cost_without_plugin": round(c.cost_without, 1),
            "cost_with_plugin": round(c.cost_with, 1),
            "net_saved": round(c.saved, 1),
            "net_saved_percent": round(c.net_percent or 0.0, 2),
            "cold_requests": c.cold,
            "cache_read_tokens_without_plugin": c.cached_without,
            "cache_read_tokens_with_plugin": c.cached_with,
            "uncached_tokens_without_plugin": c.written_without,
            "uncached_tokens_with_plugin": c.written_with,
            "prefix_breaks_by_plugin": c.prefix_breaks,
            "tokens_rewritten_by_plugin": c.rewritten,
        }

    def to_dict(self) -> dict[str, Any]:
        saved = self.total_without - self.total_with
        return {
            "session": self.session,
            "messages": self.messages,
            "tool_calls": self.tool_calls,
            "requests": len(self.requests),
            "pruned_calls": self.pruned,
            "tokens_saved_last_request": self.saved_final,
            "tokens_sent_without_plugin": self.total_without,
            "tokens_sent_with_plugin": self.total_with,
            "tokens_saved": saved,
            "tokens_saved_percent": round(100 * saved / self.total_without, 2) if self.total_without else 0.0,
            "cost": self.cost_dict(),
            "anchors": self.anchors.to_dict(details=True),
            "timing": self.timing(),
            "per_request": [asdict(r) for r in self.requests],
        }


@dataclass
class SessionsTotal:
    """Several replays added up: tokens, prompt-cache cost, prefix breaks and edit anchors."""

    sessions: int = 0
    tokens_without: int = 0
    tokens_with: int = 0
    costs: ReplayTotals = field(default_factory=ReplayTotals)
    anchors: AnchorTotals = field(default_factory=AnchorTotals)

    @classmethod
    def of(cls, reports: Sequence[ReplayReport]) -> SessionsTotal:
        total = cls()
        for report in reports:
            total.sessions += 1
            total.tokens_without += report.total_without
            total.tokens_with += report.total_with
            total.costs.merge(report.costs)
            total.anchors.add(report.anchors)
        return total

    @property
    def tokens_saved_percent(self) -> float:
        saved = self.tokens_without - self.tokens_with
        return 100 * saved / self.tokens_without if self.tokens_without else 0.0

    def to_dict(self) -> dict[str, Any]:
        costs = self.costs
        return {
            "sessions": self.sessions,
            "requests": costs.requests,
            "tokens_sent_without_plugin": self.tokens_without,
            "tokens_sent_with_plugin": self.tokens_with,
            "tokens_saved_percent": round(self.tokens_saved_percent, 2),
            "cost_without_plugin": round(costs.cost_without, 1),
            "cost_with_plugin": round(costs.cost_with, 1),
            "net_saved_percent": round(costs.net_percent or 0.0, 2),
            "prefix_breaks_by_plugin": costs.prefix_breaks,
            "anchors": self.anchors.to_dict(),
        }


def plugin_host(directory: str, config: DcpConfig | None = None) -> tuple[pluggy.PluginManager, Runtime]:
    """A pluggy host with a plugin instance of its own, started in ``directory``, that saves nothing.

    Replays and benchmarks are what-ifs: they must not add to the user's statistics nor
    create the user's config file, so their runtime has no store and no first-run duties.
    """
    pm = pluggy.PluginManager(hostspec.PROJECT_NAME)
    pm.add_hookspecs(hostspec)
    runtime = Runtime(directory, config, what_if=True)
    pm.register(DcpPlugin(runtime), name="dcp")
    trace_hooks(pm)
    pm.hook.host_startup(context={"directory": directory, "persist": False})
    return pm, runtime


def undo_patches(original: Sequence[dict[str, Any]], patches: Patches, offset: int = 0) -> None:
    """Put back, from the pristine ``original`` messages, every field a request's patches replaced.

    ``offset``: where the request's first message sits in ``original`` (after a compaction).
    """
    for decision, target in patches:
        source = locate(original, decision.record, offset)
        if source is None:
            raise ValueError(f"call {decision.call_id} is not in the original messages where it was patched")
        target[decision.field] = source[decision.field]


def request_points(messages: Sequence[Any]) -> list[int]:
    """Where the recorded requests were made: before each assistant message (it answered everything
    before it), and at the end when the session ends with a request no message answered yet."""
    points = [i for i, m in enumerate(messages) if i > 0 and info_of(m).get("role") == "assistant"]
    if messages and info_of(messages[-1]).get("role") != "assistant" and len(messages) > 1:
        points.append(len(messages))
    return points


@dataclass(frozen=True, slots=True)
class ImpliedRequest:
    """One request a recorded session implies: which messages it sent, when, and to which model."""

    number: int  # 1-based
    begin: int  # first message sent (after an OpenCode compaction, the history from it on)
    end: int  # messages[begin:end] were sent; messages[end], when there, is the answer
    time_ms: int  # the newest timestamp among the messages up to ``end``
    model: ModelRef | None  # the newest model they name


def implied_requests(messages: Sequence[Any]) -> Iterator[ImpliedRequest]:
    """The requests of a recorded session, in order (see :func:`request_points`)."""
    starts = compaction_starts(messages)
    time_ms = 0
    model: ModelRef | None = None
    scanned = 0
    for number, end in enumerate(request_points(messages), 1):
        for message in messages[scanned:end]:
            time_ms = max(time_ms, message_time(message))
            ref = model_ref(info_of(message))
            model = ref if ref is not None and ref.model_id is not None else model
        scanned = end
        yield ImpliedRequest(number, starts[end], end, time_ms, model)


def model_key(model: ModelRef | None) -> tuple[str | None, str | None]:
    """What tells two requests' models apart for the cache."""
    return (model.provider_id, model.model_id) if model is not None else (None, None)


def with_pricing(config: DcpConfig, pricing: str | None) -> DcpConfig:
    """``config`` with ``cache.pricing`` set (the plugin then assumes the prices the report uses)."""
    if pricing is None:
        return config
    return config.model_copy(update={"cache": config.cache.model_copy(update={"pricing": pricing})})


def prompt_overhead(messages: Sequence[Any]) -> int:
    """Prompt tokens outside the messages (system prompt, tool definitions), from the first reported usage."""
    before = 0
    for message in messages:
        usage = reported_usage(message) if info_of(message).get("role") == "assistant" else None
        if usage is not None:
            return max(0, usage.prompt - before)
        before += estimate_message_tokens(message)
    return 0


def replay(
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    host: tuple[pluggy.PluginManager, Runtime] | None = None,
    pricing: str | None = None,
) -> ReplayReport:
    """Send every request of the session through the plugin; account tokens, prompt-cache cost and time.

    ``host``: a plugin host from :func:`plugin_host` to use (to inspect its runtime afterwards).
    ``pricing``: the cache prices to assume (``cache.pricing`` values), for the plugin's scheduler and
    for the report alike; None keeps the config's. After an OpenCode compaction only the history
    from the compaction on is sent, as OpenCode does.
    """
    if host is None:
        base = config if config is not None else Runtime(directory).config()
        config = with_pricing(base, pricing)
        host = plugin_host(directory, config)
    pm, runtime = host
    effective = runtime.config()
    session = session_id_of(None, messages)
    if any(p.get("tool") in TOOL_NAMES for m in messages for p in m["parts"]):
        # Recorded with the plugin's tools: the model's own prunes are part of the session.
        pm.hook.tool_definitions()
    # Tool states are copied once so placeholders can be undone from the pristine originals.
    working = [
        {**m, "parts": [{**p, "state": dict(p["state"])} if isinstance(p.get("state"), dict) else p for p in m["parts"]]}
        for m in messages
    ]
    message_tokens = [estimate_message_tokens(m) for m in messages]
    overhead = prompt_overhead(messages)
    accountant = CacheAccountant(message_tokens, overhead)
    anchors = AnchorIndex(messages)
    report = ReplayReport(
        session=session,
        messages=len(messages),
        tool_calls=sum(1 for m in messages for p in m["parts"] if p.get("type") == "tool"),
        pricing=effective.cache.pricing,
        scheduler=effective.cache.scheduler,
        overhead=overhead,
        costs=accountant.totals,
        anchors=anchors.totals,
    )
    hook = pm.hook.chat_messages_transform
    requests = list(implied_requests(messages))
    for request in requests:
        begin, end = request.begin, request.end
        outgoing = working[begin:end]
        clock = time.perf_counter()
        hook(input={"sessionID": session}, output={"messages": outgoing})
        elapsed = (time.perf_counter() - clock) * 1000
        sent = runtime.last_outgoing(session)
        patches: dict[PatchKey, tuple[Any, int]] = {}
        owners: dict[PatchKey, str] = {}
        saved_by: dict[str, int] = {}
        if sent is not None:
            for decision, _ in sent.patches:
                record = decision.record
                key = (begin + record.message_index, record.part_index, decision.field)
                patches[key] = (decision.value, decision.tokens_saved)
                owners[key] = decision.strategy
                saved_by[decision.strategy] = saved_by.get(decision.strategy, 0) + decision.tokens_saved
        saved = sent.saved_tokens if sent is not None else 0
        without = accountant.tokens(begin, end)
        cost = accountant.add(
            SentRequest(
                begin,
                end,
                request.time_ms,
                model_key(request.model),
                pricing_for(request.model, effective.cache),
                without,
                saved,
                patches,
            )
        )
        anchors.check(begin, end, patches, owners)
        report.requests.append(
            RequestRow(
                request.number,
                end,
                without,
                without - saved,
                sent.in_force if sent is not None else 0,
                round(elapsed, 3),
                cost.cold,
                cost.cached_without,
                cost.cached_with,
                round(cost.cost_without, 1),
                round(cost.cost_with, 1),
                cost.broke_prefix,
                cost.rewritten,
                saved_by,
            )
        )
        if sent is not None:
            undo_patches(messages, sent.patches, begin)
        if progress:
            progress(request.number, len(requests))
    view = runtime.view(session)
    totals = view.saved_by_strategy if view is not None else {}
    for name in ALL_REASONS:
        count, tokens = totals.get(name, (0, 0))
        report.pruned[name] = count
        report.saved_final[name] = tokens
    return report
