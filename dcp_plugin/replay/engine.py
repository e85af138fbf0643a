"""Replays a recorded session request by request through a real pluggy host, and measures it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pluggy

import dcp_plugin.host.hostspec
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.conversation import session_id_of
from dcp_plugin.pipeline.placeholders import Patch
from dcp_plugin.host.runtime import Runtime
from dcp_plugin.pipeline.strategies import STRATEGY_ORDER, SWEEP
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


def load_plugin_host() -> tuple[pluggy.PluginManager, Any]:
    """A pluggy host with the plugin module loaded from its entry point, persistence off.

    Replays and benchmarks are what-ifs: they must not add to the user's persisted statistics.
    """
    pm = pluggy.PluginManager(dcp_plugin.host.hostspec.PROJECT_NAME)
    pm.add_hookspecs(dcp_plugin.host.hostspec)
    pm.load_setuptools_entrypoints(dcp_plugin.host.hostspec.PROJECT_NAME)
    plugin = pm.get_plugin("dcp")
    if plugin is None:
        raise RuntimeError("the `dcp` entry point of group `agent_host` is not installed; run `pip install .`")
    plugin.RUNTIME.use_store(None)
    return pm, plugin


def host_with_plugin(directory: str) -> tuple[pluggy.PluginManager, Runtime]:
    """A pluggy host that loads the plugin from its entry point, as a real host does, started in ``directory``."""
    pm, plugin = load_plugin_host()
    pm.hook.host_startup(context={"directory": directory})
    return pm, plugin.RUNTIME


def undo_patches(original: list[dict[str, Any]], patches: Sequence[Patch]) -> None:
    """Put back, from the pristine ``original`` messages, every field a request's patches replaced."""
    for record, target in patches:
        target[record.field] = original[record.message_index]["parts"][record.part_index]["state"][record.field]  # type: ignore[index]


def request_points(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the assistant messages: each one answered a request made with everything before it."""
    return [i for i, m in enumerate(messages) if i > 0 and m["info"].get("role") == "assistant"]


def replay(
    messages: list[dict[str, Any]],
    directory: str,
    config: DcpConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Send every request of the session through the plugin and account tokens and time."""
    pm, runtime = host_with_plugin(directory)
    runtime.use_config(config)
    session = session_id_of(None, messages)
    runtime.sessions.pop(session, None)
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
        hook(input={}, output={"messages": outgoing})
        elapsed = (time.perf_counter() - start) * 1000
        state = runtime.sessions.get(session)
        saved = sum(r.tokens_saved for r in state.decided) if state else 0
        report.requests.append(
            RequestRow(n, end, prefix_tokens[end], prefix_tokens[end] - saved, len(state.decided) if state else 0, round(elapsed, 3))
        )
        if state:
            undo_patches(messages, state.last_patches)
        if progress:
            progress(n, len(points))
    state = runtime.sessions.get(session)
    totals = state.saved_by_strategy() if state else {}
    for name in (*STRATEGY_ORDER, SWEEP):
        count, tokens = totals.get(name, (0, 0))
        report.pruned[name] = count
        report.saved_final[name] = tokens
    return report
