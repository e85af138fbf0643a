"""Replays a recorded session request by request through a real pluggy host, and measures it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pluggy

from dcp_plugin.config.model import DcpConfig
from dcp_plugin.host import hostspec
from dcp_plugin.host.plugin import DcpPlugin
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.conversation import session_id_of
from dcp_plugin.pipeline.modeltools import NAMES as TOOL_NAMES
from dcp_plugin.pipeline.placeholders import Patches
from dcp_plugin.pipeline.strategies import ALL_REASONS
from dcp_plugin.pipeline.tokens import estimate_message_tokens


@dataclass
class RequestRow:
    """One model request of the replayed session."""

    request: int
    messages: int
    tokens_without: int
    tokens_with: int
    pruned_calls: int
    ms: float


@dataclass
class ReplayReport:
    """Everything `dcp replay` prints."""

    session: str
    messages: int
    tool_calls: int
    requests: list[RequestRow] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)
    saved_final: dict[str, int] = field(default_factory=dict)

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
            "timing": self.timing(),
            "per_request": [asdict(r) for r in self.requests],
        }


def plugin_host(directory: str, config: DcpConfig | None = None) -> tuple[pluggy.PluginManager, Runtime]:
    """A pluggy host with a plugin instance of its own, started in ``directory``, that saves nothing.

    Replays and benchmarks are what-ifs: they must not add to the user's statistics nor
    create the user's config file, so their runtime has no store and no first-run duties.
    """
    pm = pluggy.PluginManager(hostspec.PROJECT_NAME)
    pm.add_hookspecs(hostspec)
    runtime = Runtime(directory, config)
    pm.register(DcpPlugin(runtime), name="dcp")
    pm.hook.host_startup(context={"directory": directory, "persist": False})
    return pm, runtime


def undo_patches(original: Sequence[dict[str, Any]], patches: Patches) -> None:
    """Put back, from the pristine ``original`` messages, every field a request's patches replaced."""
    for decision, target in patches:
        record = decision.record
        target[decision.field] = original[record.message_index]["parts"][record.part_index]["state"][decision.field]


def request_points(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the assistant messages: each one answered a request made with everything before it."""
    return [i for i, m in enumerate(messages) if i > 0 and m["info"].get("role") == "assistant"]


def replay(
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    host: tuple[pluggy.PluginManager, Runtime] | None = None,
) -> ReplayReport:
    """Send every request of the session through the plugin and account tokens and time.

    ``host``: a plugin host from :func:`plugin_host` to use (to inspect its runtime afterwards).
    """
    pm, runtime = host if host is not None else plugin_host(directory, config)
    session = session_id_of(None, messages)
    if any(p.get("tool") in TOOL_NAMES for m in messages for p in m["parts"]):
        # Recorded with the plugin's tools: the model's own prunes are part of the session.
        pm.hook.tool_definitions()
    # Tool states are copied once so placeholders can be undone from the pristine originals.
    working = [
        {**m, "parts": [{**p, "state": dict(p["state"])} if isinstance(p.get("state"), dict) else p for p in m["parts"]]}
        for m in messages
    ]
    prefix_tokens = [0]
    for message in messages:
        prefix_tokens.append(prefix_tokens[-1] + estimate_message_tokens(message))
    points = request_points(messages)
    report = ReplayReport(
        session=session,
        messages=len(messages),
        tool_calls=sum(1 for m in messages for p in m["parts"] if p.get("type") == "tool"),
    )
    hook = pm.hook.chat_messages_transform
    for n, end in enumerate(points, 1):
        outgoing = working[:end]
        start = time.perf_counter()
        hook(input={"sessionID": session}, output={"messages": outgoing})
        elapsed = (time.perf_counter() - start) * 1000
        sent = runtime.last_outgoing(session)
        saved = sent.saved_tokens if sent is not None else 0
        pruned = sent.in_force if sent is not None else 0
        report.requests.append(RequestRow(n, end, prefix_tokens[end], prefix_tokens[end] - saved, pruned, round(elapsed, 3)))
        if sent is not None:
            undo_patches(messages, sent.patches)
        if progress:
            progress(n, len(points))
    view = runtime.view(session)
    totals = view.saved_by_strategy if view is not None else {}
    for name in ALL_REASONS:
        count, tokens = totals.get(name, (0, 0))
        report.pruned[name] = count
        report.saved_final[name] = tokens
    return report
