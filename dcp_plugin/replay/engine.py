"""Replays a recorded session request by request through a real pluggy host, and measures it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pluggy

from dcp_plugin.adapters.pluggy_host import DcpPlugin
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.cost.prices import pricing_for
from dcp_plugin.host import hostspec
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.host.tracing import trace_hooks
from dcp_plugin.model.messages import locate, session_id_of
from dcp_plugin.model.refs import ModelRef
from dcp_plugin.model.tokens import message_prompt_tokens
from dcp_plugin.pipeline.modeltools import NAMES as TOOL_NAMES
from dcp_plugin.pipeline.patches import Patches
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.replay import coverage
from dcp_plugin.replay.anchors import AnchorTotals
from dcp_plugin.replay.coverage import Scored, SessionReports
from dcp_plugin.replay.estimate_error import EstimateError
from dcp_plugin.replay.pricing import CacheAccountant, PatchKey, ReplayTotals, SentRequest
from dcp_plugin.replay.recovery import RecordedWalk, RecoveryTotals, net_after_recovery
from dcp_plugin.replay.requests import ImpliedRequest as ImpliedRequest
from dcp_plugin.replay.requests import implied_requests as implied_requests
from dcp_plugin.replay.requests import request_points as request_points


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
    # The prompt its answer reported, when scored (None: no usage, nothing the replay estimates, or
    # the report its history's overhead was learned from); see :mod:`dcp_plugin.replay.coverage`.
    reported_prompt: int | None = None
    # The replay's estimate of what that report counts (the history's overhead + the messages it counts).
    reported_estimate: int | None = None
    # The report recorded no cache write: it counts the prefix read from the cache, not this request.
    reported_partial: bool = False


class WithRecovery:
    """The recovery figures of one replay or several: the costs without and with forced re-reads."""

    costs: ReplayTotals
    recovery: RecoveryTotals
    recovered: ReplayTotals | None

    @property
    def net_after_recovery_percent(self) -> float | None:
        """Net cost saved once every lost anchor was paid for by a re-read, against the same no-plugin cost."""
        return net_after_recovery(self.costs, self.recovered)

    def recovery_sentence(self) -> str | None:
        """What the forced re-reads came to, in one sentence (None without that replay)."""
        if self.recovered is None:
            return None
        return self.recovery.sentence(self.costs.net_percent, self.net_after_recovery_percent)

    def recovery_dict(self) -> dict[str, Any]:
        """The forced re-reads and what the plugin's side costs with them (empty without that replay)."""
        if self.recovered is None:
            return {}
        net = self.net_after_recovery_percent
        return {
            **self.recovery.to_dict(),
            "cost_with_plugin_after_recovery": round(self.recovered.cost_with, 1),
            "net_saved_percent_after_recovery": round(net, 2) if net is not None else 0.0,
        }


@dataclass
class ReplayReport(WithRecovery):
    """Everything `dcp replay` prints."""

    session: str
    messages: int
    tool_calls: int
    pricing: str = "auto"
    scheduler: bool = True
    overhead: int = 0
    unscored_reports: int = 0  # provider reports the estimator error leaves out (see coverage.SessionReports)
    later_overheads: tuple[int, ...] = ()  # the overhead of each history after a compaction, when it taught one
    requests: list[RequestRow] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)
    saved_final: dict[str, int] = field(default_factory=dict)
    costs: ReplayTotals = field(default_factory=ReplayTotals)
    anchors: AnchorTotals = field(default_factory=AnchorTotals)
    recovery: RecoveryTotals = field(default_factory=RecoveryTotals)
    recovered: ReplayTotals | None = None  # the costs of the replay with forced re-reads, when one was made

    @property
    def total_without(self) -> int:
        return sum(r.tokens_without for r in self.requests)

    @property
    def total_with(self) -> int:
        return sum(r.tokens_with for r in self.requests)

    @property
    def estimate_error(self) -> EstimateError:
        """The estimator's error per request (see :data:`estimate_error.DEFINITION`)."""
        scored = [r for r in self.requests if r.reported_prompt is not None and r.reported_estimate is not None]
        return EstimateError.of(
            ((r.reported_estimate or 0, r.reported_prompt) for r in scored),
            partial=sum(1 for r in scored if r.reported_partial),
            unscored=self.unscored_reports,
        )

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
            "prompt_overhead_tokens_after_compactions": list(self.later_overheads),
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
            **self.recovery_dict(),
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
            "estimate_error": self.estimate_error.to_dict(),
            "anchors": self.anchors.to_dict(details=True),
            **({"recovery": self.recovery.to_dict(details=True)} if self.recovered is not None else {}),
            "timing": self.timing(),
            "per_request": [asdict(r) for r in self.requests],
        }


@dataclass
class SessionsTotal(WithRecovery):
    """Several replays added up: tokens, prompt-cache cost, prefix breaks and edit anchors."""

    sessions: int = 0
    tokens_without: int = 0
    tokens_with: int = 0
    costs: ReplayTotals = field(default_factory=ReplayTotals)
    anchors: AnchorTotals = field(default_factory=AnchorTotals)
    recovery: RecoveryTotals = field(default_factory=RecoveryTotals)
    recovered: ReplayTotals | None = None  # with forced re-reads, when every report has that replay
    estimate_error: EstimateError = field(default_factory=EstimateError)

    @classmethod
    def of(cls, reports: Sequence[ReplayReport]) -> SessionsTotal:
        total = cls()
        if reports and all(report.recovered is not None for report in reports):
            total.recovered = ReplayTotals()
        for report in reports:
            total.sessions += 1
            total.tokens_without += report.total_without
            total.tokens_with += report.total_with
            total.costs.merge(report.costs)
            total.anchors.add(report.anchors)
            total.recovery.add(report.recovery)
            if total.recovered is not None and report.recovered is not None:
                total.recovered.merge(report.recovered)
            total.estimate_error = total.estimate_error.plus(report.estimate_error)
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
            "estimate_error": self.estimate_error.to_dict(),
            "anchors": self.anchors.to_dict(),
            **self.recovery_dict(),
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


def model_key(model: ModelRef | None) -> tuple[str | None, str | None]:
    """What tells two requests' models apart for the cache."""
    return (model.provider_id, model.model_id) if model is not None else (None, None)


def with_pricing(config: DcpConfig, pricing: str | None) -> DcpConfig:
    """``config`` with ``cache.pricing`` set (the plugin then assumes the prices the report uses)."""
    if pricing is None:
        return config
    return config.model_copy(update={"cache": config.cache.model_copy(update={"pricing": pricing})})


def session_reports(messages: Sequence[Any]) -> SessionReports:
    """The session's provider reports as the estimator error scores them, and each history's prompt overhead."""
    return coverage.session_reports(messages, list(implied_requests(messages)),
                                    [message_prompt_tokens(m) for m in messages])


def prompt_overhead(messages: Sequence[Any]) -> int:
    """Prompt tokens outside the messages (system prompt, tool definitions) of the first history sent.

    Learned from the first provider report that counts some of the messages (see :mod:`coverage`).
    """
    return session_reports(messages).overheads.first


def session_estimates(messages: Sequence[Any]) -> list[tuple[ImpliedRequest, Scored | None]]:
    """Per request of a session: the report `dcp replay` scores and the estimate it scores it against.

    The estimate does not depend on what the plugin prunes: it is the prompt without it.
    """
    requests = list(implied_requests(messages))
    reports = coverage.session_reports(messages, requests, [message_prompt_tokens(m) for m in messages])
    return list(zip(requests, reports.scored, strict=True))


def session_estimate_error(messages: Sequence[Any]) -> EstimateError:
    """The estimator's error per request of a session, as `dcp replay` reports it, without running the plugin."""
    return EstimateError.of_reports(session_reports(messages))


def replay(
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    host: tuple[pluggy.PluginManager, Runtime] | None = None,
    pricing: str | None = None,
    recovery: bool = False,
) -> ReplayReport:
    """Send every request of the session through the plugin; account tokens, prompt-cache cost and time.

    ``host``: a plugin host from :func:`plugin_host` to use (to inspect its runtime afterwards).
    ``pricing``: the cache prices to assume (``cache.pricing`` values), for the plugin's scheduler and
    for the report alike; None keeps the config's. After an OpenCode compaction only the history
    from the compaction on is sent, as OpenCode does. ``recovery``: replay the session a second
    time, through a fresh host with the same config, with a forced re-read before every edit whose
    anchor a placeholder hid (:mod:`dcp_plugin.replay.recovery`), and report what that costs.
    """
    if host is None:
        base = config if config is not None else Runtime(directory).config()
        config = with_pricing(base, pricing)
        host = plugin_host(directory, config)
    first = progress if progress is None or not recovery else _share(progress, 0)
    report = _replay_once(messages, directory, host, first, recover=False)
    if recovery:
        second = progress if progress is None else _share(progress, len(report.requests))
        again = _replay_once(messages, directory, plugin_host(directory, host[1].config()), second, recover=True)
        report.recovery = again.recovery
        report.recovered = again.costs
    return report


def _replay_once(
    messages: list[dict[str, Any]],
    directory: str,
    host: tuple[pluggy.PluginManager, Runtime],
    progress: Callable[[int, int], None] | None,
    recover: bool,
) -> ReplayReport:
    """One pass over the session's requests (``recover``: with forced re-reads put in as anchors are lost)."""
    pm, runtime = host
    effective = runtime.config()
    session = session_id_of(None, messages)
    if any(p.get("tool") in TOOL_NAMES for m in messages for p in m["parts"]):
        # Recorded with the plugin's tools: the model's own prunes are part of the session.
        pm.hook.tool_definitions()
    # The walk puts re-reads into its own list; tool states are copied once so placeholders can be
    # undone from the pristine originals.
    pristine = list(messages)
    working = [_working_copy(m) for m in messages]
    estimates = [message_prompt_tokens(m) for m in messages]
    reports = coverage.session_reports(messages, list(implied_requests(messages)), estimates)
    # Keyed by the answer message: the recovery pass puts re-reads in, which renumbers the requests.
    scored = {id(messages[r.end]): s for r, s in zip(implied_requests(messages), reports.scored, strict=True)
              if s is not None and r.end < len(messages)}
    accountant = CacheAccountant(estimates, reports.overheads)
    walk = RecordedWalk(pristine, recover, [accountant])
    report = ReplayReport(
        session=session,
        messages=len(messages),
        tool_calls=sum(1 for m in messages for p in m["parts"] if p.get("type") == "tool"),
        pricing=effective.cache.pricing,
        scheduler=effective.cache.scheduler,
        overhead=reports.overheads.first,
        unscored_reports=reports.unscored,
        later_overheads=tuple(v for start, v in sorted(reports.overheads.to_dict().items())[1:]),
        costs=accountant.totals,
        anchors=walk.anchors.totals,
        recovery=walk.recovery,
    )
    hook = pm.hook.chat_messages_transform
    for request in walk:
        begin, end = request.begin, request.end
        score = scored.get(id(pristine[end])) if end < len(pristine) else None
        if len(working) < len(pristine):  # the walk put a re-read in at the end of the last request
            working.insert(end - 1, _working_copy(pristine[end - 1]))
        outgoing = working[begin:end]
        clock = time.perf_counter()
        hook(input={"sessionID": session}, output={"messages": outgoing})
        elapsed = (time.perf_counter() - clock) * 1000
        sent = runtime.last_sent(session)  # None when the plugin failed open: the request went out as sent
        patches: dict[PatchKey, tuple[Any, int]] = {}
        owners: dict[PatchKey, str] = {}
        saved_by: dict[str, int] = {}
        if sent is not None:
            for decision in sent.decisions:
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
        if sent is not None:
            undo_patches(pristine, sent.located(outgoing), begin)
        walk.check(request, patches, owners)
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
                score.reported if score is not None else None,
                score.estimate if score is not None else None,
                score.partial if score is not None else False,
            )
        )
        if progress:
            progress(request.number, len(walk))
    view = runtime.view(session)
    totals = view.saved_by_strategy if view is not None else {}
    for name in ALL_REASONS:
        count, tokens = totals.get(name, (0, 0))
        report.pruned[name] = count
        report.saved_final[name] = tokens
    return report


def _share(progress: Callable[[int, int], None], done_before: int) -> Callable[[int, int], None]:
    """Progress of one of a replay's two passes, on a scale of both (each as long as the first)."""

    def report(done: int, total: int) -> None:
        length = done_before or total
        progress(done_before + min(done, length), 2 * length)

    return report


def _working_copy(message: dict[str, Any]) -> dict[str, Any]:
    """A message whose tool states the plugin's placeholders may be written into."""
    parts = message["parts"]
    return {**message, "parts": [{**p, "state": dict(p["state"])} if isinstance(p.get("state"), dict) else p
                                 for p in parts]}
