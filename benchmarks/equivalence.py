"""Decisions of the incremental path (one request per new message) and of a from-scratch run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchmarks.harness import BenchHost
from dcp_plugin.config.model import DcpConfig
from dcp_plugin.pipeline.decisions import Decision
from dcp_plugin.pipeline.session import SessionState
from dcp_plugin.replay.engine import request_points

Verdict = tuple[str, str, Any]


Target = tuple[str, str]  # (call id, field)


def decision_map(decisions: Iterable[Decision]) -> dict[Target, Verdict]:
    """(call id, field) -> (strategy, replaced field, placeholder value) of every decision given, later ones winning."""
    return {(d.call_id, d.field): (d.strategy, d.field, d.value) for d in decisions}


def reasons(decisions: dict[Target, Verdict]) -> dict[Target, str]:
    """(call id, field) -> reason, the shape of the reference implementation's answer."""
    return {target: d[0] for target, d in decisions.items()}


def from_scratch(messages: list[dict[str, Any]], directory: str, config: DcpConfig) -> SessionState:
    """The state after one request carrying the whole history to a fresh session."""
    state = SessionState("scratch", config, directory)
    state.update(messages)
    return state


def incremental(
    messages: list[dict[str, Any]], directory: str, config: DcpConfig, start: int = 1
) -> dict[Target, Verdict]:
    """Decisions after one request per model request of the history (one before each assistant
    message, then the whole list), through the hook, from ``start`` messages on."""
    host = BenchHost(messages, directory, config, "bench-incremental")
    try:
        host.forget()
        for count in [*request_points(messages), len(messages)]:
            if count >= max(1, start):
                host.request(count)
        return decision_map(host.in_force())
    finally:
        host.close()
